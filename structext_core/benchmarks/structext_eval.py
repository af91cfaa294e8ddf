"""StrucText-Eval as a member of the benchmark registry: a thin adapter over its own packages
(:mod:`structext_core.benchmark` for samples, :mod:`structext_core.evaluation` for prompts and
scoring). Nothing here changes StrucText's behaviour or contracts."""

from __future__ import annotations

from collections.abc import Mapping

from structext_core.benchmark import samples
from structext_core.benchmark.tasks import TASKS
from structext_core.benchmarks import Place, ShownQuestion
from structext_core.evaluation import prompts, scoring

NAME = "structext-eval"
DISPLAY_NAME = "StrucText-Eval"
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
#: The result columns its views break down by (those of :mod:`structext_core.evaluation.aggregate`).
AXES = ("model", "prompt", "suite", "language", "task", "task_id", "depth", "width")
#: A study item's strata: the sample's cell (format, task, depth, width) and its task's number.
STRATA = {"language": str, "task": str, "task_id": int, "depth": int, "width": int}


def item_id(item: Mapping) -> str:
    """The sample's id."""
    return str(item["id"])


def show_question(item: Mapping, setting: str = "naive") -> ShownQuestion:
    """The sample's prompt under ``setting`` (one of the six; no demonstrations), as text only."""
    return ShownQuestion(text=prompts.build_prompt(item, setting))


def score_answer(item: Mapping, reply: str) -> float:
    """The sample's score for ``reply``: thresholded ROUGE-L on the extracted answer (``score``
    of the result schema)."""
    return scoring.score_response(item["answer"], reply).score
