"""StrucText-Eval's member module (:mod:`structext_core.protocol`): a thin adapter over its own packages
(:mod:`structext_core.structext_eval` for samples, :mod:`structext_core.evaluation` for prompts and
scoring). Nothing here changes StrucText's behaviour or contracts."""

from __future__ import annotations

from collections.abc import Mapping

from structext_core.protocol import Place, ShownQuestion, StudyKind, free_text
from structext_core.structext_eval import samples
from structext_core.structext_eval.tasks import TASKS

NAME = "structext-eval"
DISPLAY_NAME = "StrucText-Eval"
ORDER = 10
SUMMARY = ("Can language models reason over structure-rich text with the meaning taken out? JSON, YAML, XML, "
           f"CSV, a tree format, Markdown, LaTeX and Org, {len(TASKS)} tasks, difficulty set by depth, width and "
           "columns, every answer computed by rule.")
PLACES = (
    Place("explore", "the generated suites: every sample with its reference, question, answer and rule hint", True),
    Place("results", "heatmaps of model and human scores by format, task, depth and width"),
    Place("human_baseline", "answer Test-Hard questions against the clock"),
    Place("rewrite", "rewrite samples into real-world scenarios (Real-Test)"),
)
#: An item is one sample (the sample schema of DESIGN.md).
ITEM_FIELDS = tuple(samples.FIELDS)
#: The result columns its views break down by (its scored rows' columns, :mod:`structext_core.structext_eval.result_files`).
AXES = ("model", "prompt", "suite", "language", "task", "task_id", "depth", "width")
#: Its command-line verbs (:mod:`structext_core.structext_eval.cli`); the first member's description
#: is the command's (``python -m structext_core --help``).
CLI_COMMANDS = ("generate", "audit", "stats", "score", "prompts", "run", "export-task")
CLI_DESCRIPTION = "Generate, audit and score StrucText-Eval samples."
#: A study item's strata: the sample's cell (format, task, depth, width) and its task's number.
STRATA = {"language": str, "task": str, "task_id": int, "depth": int, "width": int}

#: Its own view on Explore: the generated suites, sample by sample.
EXPLORE_VIEW = "structext_core.structext_eval.ui.explore:explore_view"
#: Its own view on Results: imported model results beside the human baseline, and the paper's tables.
RESULTS_VIEW = "structext_core.structext_eval.ui.results_view:results_page"
#: Its own section on Home: the suites on disk, and generating them.
HOME_VIEW = "structext_core.structext_eval.ui.home:home_view"
#: Its part of the seal: what is "the same item", and where its keys are shown outside studies.
SEAL = "structext_core.structext_eval.seal"

def register_cli(subparsers, command: str | None = None) -> None:
    """Add its verbs (the result verbs, which load pandas, only when ``command`` may be one of them)."""
    from structext_core.structext_eval import cli
    cli.register(subparsers, command)


def item_id(item: Mapping) -> str:
    """The sample's id."""
    return str(item["id"])


def load_items(path) -> list[dict]:
    """The samples of a sample file (``.jsonl``), checked against the schema."""
    return samples.read_jsonl(path)


def show_question(item: Mapping, setting: str = "naive") -> ShownQuestion:
    """The sample's prompt under ``setting`` (one of the six; no demonstrations), as text only."""
    from structext_core.structext_eval import prompts  # not for the command line's `generate`

    return ShownQuestion(text=prompts.build_prompt(item, setting))


def score_answer(item: Mapping, reply: str) -> float:
    """The sample's score for ``reply``: thresholded ROUGE-L on the extracted answer (``score``
    of the result schema)."""
    from structext_core.evaluation import scoring  # numpy, sacrebleu, rapidfuzz: not for `generate`

    return scoring.score_response(item["answer"], reply).score


def _study_score(answer: str | None, response: str | None, gave_up: bool) -> tuple[float, int]:
    """ROUGE-L and exact match of one person's answer (a give-up scores 0)."""
    if gave_up:
        return 0.0, 0
    from structext_core.evaluation import scoring

    return scoring.rouge_l(answer or "", response or ""), scoring.exact_match(answer or "", response or "")


#: A study: an item is a sample; the answer is free text, scored by ROUGE-L F1 (``rouge_l``) and
#: exact match at commit; a pass is ROUGE-L at or above the paper's threshold.
def _reference_view(strata: Mapping) -> tuple[str, str | None]:
    """A reference is named by its format's display name and highlighted as that format."""
    from structext_core.structext_eval.formats import DISPLAY_NAMES, HIGHLIGHT

    language = strata.get("language")
    return DISPLAY_NAMES.get(language, language or ""), HIGHLIGHT.get(language)


def _describe_item(strata: Mapping) -> str:
    """A sample in a few words: its format, task and cell."""
    return f"{strata['language']} · {strata['task']} · d{strata['depth']} w{strata['width']}"


STUDY = StudyKind(
    score=_study_score, refuse_response=free_text,
    item_columns=("language", "task", "task_id", "depth", "width", "reference_chars"),
    groupings={"Annotator": ["annotator"], "Format": ["language"], "Task": ["task"], "Depth": ["depth"],
               "Width": ["width"], "Depth x width": ["depth", "width"], "Format x task": ["language", "task"]},
    model_results=True,
    score_note="Score: mean ROUGE-L F1 with the paper's rule (below 0.75 counts as 0), in percent; "
               "exact match after whitespace normalisation. Intervals: 95% bootstrap over answers.",
    time_cells=("depth", "width"), time_by_length=True, source_label="{suite}",
    how_to_answer="Press **Ctrl+Enter** (⌘+Enter on a Mac) in the answer box to submit.",
    setup_label="StrucText-Eval (text questions)",
    reference_view=_reference_view, describe_item=_describe_item, score_label="ROUGE-L",
)
STUDY_SETUP_VIEW = "structext_core.structext_eval.ui.study_setup:structext_setup"
#: Its own pages (Real-Test rewriting and its campaigns) and their rows of the access table.
PAGES = "structext_core.structext_eval.pages"
#: What of it the public read-only mode shows only while in no open study (:mod:`structext_core.studio.access`).
PUBLIC_DATA = "suites"
#: What the check workers run on text a person typed (:mod:`structext_core.structext_eval.sandboxed`).
SANDBOXED = {"check_rewrite": "structext_core.structext_eval.rewrite:check_rewrite",
             "preview": "structext_core.structext_eval.preview:preview"}
