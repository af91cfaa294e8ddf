"""AIBench's member module: what the workbench knows of AIBench (:mod:`structext_core.protocol`).

An item is one question about one paper, shown with one system's image of that paper:
``{paper_id, question_id, system, image, question}`` where ``question`` is a
:class:`~structext_core.aibench.model.Question` and ``image`` the image's path in the data set.
"""

from __future__ import annotations

from collections.abc import Mapping

from structext_core.protocol import Place, ShownQuestion, StudyKind

NAME = "aibench"
DISPLAY_NAME = "AIBench"
ORDER = 20
SUMMARY = ("Does a figure drawn from a paper's method text carry the method? Multiple-choice questions about "
           "each paper, at four levels (components, topology, phases, semantics), asked of each system's image "
           "and of the original figure.")
PLACES = (
    Place("explore", "its data sets: each paper's method text, original figure and questions", True),
    Place("results", "the paper's tables, and the scores on the stored data sets", True),
    Place("human_baseline", "an image-only study: answer the questions from the image alone"),
    Place("question_review", "check a paper's questions against its figure and method text"),
    Place("pairwise", "choose the better of two systems' images of a paper"),
)
ITEM_FIELDS = ("paper_id", "question_id", "system", "image", "question")
#: Results break down by these (level first: the paper's columns).
AXES = ("system", "solver", "level", "conference", "paper_id", "question_id")
#: A study item's strata: the (image, question) it is and what its draws balance (level x system x conference).
STRATA = {"paper_id": str, "system": str, "question_id": str, "level": int, "conference": str}
#: Its command-line verbs (``structext aibench ...``: :mod:`structext_core.aibench.cli`).
CLI_COMMANDS = ("aibench",)
#: Its own views on Results and Explore (its Streamlit glue, in ``structext_core/aibench/ui/``).
RESULTS_VIEW = "structext_core.aibench.ui.results_view:aibench_page"
EXPLORE_VIEW = "structext_core.aibench.ui.explore:aibench_view"
#: Its own pages (question review, pairwise comparison, their leads' pages) and their rows of the access table.
PAGES = "structext_core.aibench.pages"
#: What of it the public read-only mode shows only while in no open study (:mod:`structext_core.studio.access`).
PUBLIC_DATA = "AIBench data sets"


def sealed_datasets(db) -> set[str]:
    """Its stored data sets that an open AIBench study or an open pairwise study still seals
    (:func:`structext_core.aibench.visibility.open_datasets`)."""
    from structext_core.aibench import visibility

    return visibility.open_datasets(db)


def register_cli(subparsers, command: str | None = None) -> None:
    """Add ``aibench`` and its verbs (its modules load when a verb runs); left out while another
    benchmark's verb runs (``command``), as :mod:`structext_core.labset.member` does."""
    if command is not None and command not in CLI_COMMANDS:
        return
    from structext_core.aibench import cli
    cli.register(subparsers)


def item_id(item: Mapping) -> str:
    """``paper_id/question_id@system``: one question asked of one system's image."""
    return f"{item['paper_id']}/{item['question_id']}@{item['system']}"


def show_question(item: Mapping) -> ShownQuestion:
    """The paper's prompt: its system prompt, the question with lettered options, the image."""
    from structext_core.aibench import model  # loaded when an item is shown or scored, not for every command

    question: model.Question = item["question"]
    return ShownQuestion(text=model.solver_prompt(question), system=model.SYSTEM_PROMPT,
                         choices=question.options, image=item.get("image"))


def score_answer(item: Mapping, reply: str) -> float:
    """1.0 when the reply's clear letter is the key, else 0.0 (no clear letter counts as wrong)."""
    from structext_core.aibench import model  # loaded when an item is shown or scored, not for every command

    question: model.Question = item["question"]
    return 1.0 if model.parse_letter(reply, len(question.options)) == question.answer else 0.0


def _study_score(answer: str | None, response: str | None, gave_up: bool) -> tuple[float, int]:
    """1 when the chosen letter is the key, else 0 (a give-up scores 0), in both places."""
    from structext_core.aibench import model  # loaded when an item is shown or scored, not for every command

    correct = (not gave_up and bool(answer)
               and model.parse_letter(response or "", len(model.LETTERS)) == str(answer).strip().upper())
    return (1.0, 1) if correct else (0.0, 0)


def _one_letter(response: str, n_options: int) -> str | None:
    """Why ``response`` is no option's letter (None when it is one)."""
    from structext_core.aibench import model  # loaded when an item is shown or scored, not for every command

    if model.parse_letter(response, n_options) is None:
        return f"Choose one of the options ({', '.join(model.LETTERS[:n_options])}) before you submit, or use 'Give up'."
    return None


#: A study (drawn by :mod:`structext_core.aibench.study`): an item is (one system's generated
#: image of a paper, one of the paper's questions);
#: the answer is an option's letter (``responses.response``), scored 1 when it is the key and 0
#: otherwise, in both ``rouge_l`` and ``exact_match``.
STUDY = StudyKind(
    score=_study_score, refuse_response=_one_letter,
    groupings={"Annotator": ["annotator"], "Level": ["level"], "System": ["system"], "Conference": ["conference"],
               "Level x system": ["level", "system"], "System x annotator": ["system", "annotator"]},
    score_note="Score: accuracy, the share of answers whose letter is the key, in percent (a give-up is wrong). "
               "Intervals: 95% bootstrap over answers.",
    time_cells=("level", "system"), source_label="AIBench {suite}",
    how_to_answer="Each question shows an image and options **A** to **D**: click an option or press its letter, "
                  "then **Submit** or **Enter**. Your choice is saved as soon as you make it.",
    setup_label="AIBench (questions on an image)",
    describe_item=lambda strata: (f"level {strata['level']} · {strata['system']} · "
                                  f"{strata['paper_id']}/{strata['question_id']}"),
)
STUDY_SETUP_VIEW = "structext_core.aibench.ui.study_setup:aibench_setup"
#: Its study's draw and creation live in :mod:`structext_core.aibench.study`
#: (``create_aibench_study``); each item is answered from one system's image of its paper, served blinded.
STUDY_IMAGE = "structext_core.aibench.study:study_image"
#: Its own timed work on the honest clock: a pairwise vote, its item the task's token
#: (:func:`structext_core.aibench.pairwise.voting.beat`).
CLOCK_BEATS = {"pairwise": ("structext_core.aibench.pairwise.voting:beat", False)}
#: At the app's start: the synthetic set is made when missing (in a background thread).
AT_START = "structext_core.aibench.store:at_start"
#: Its part of the seal: what is "the same item", and where its keys are shown outside studies.
SEAL = "structext_core.aibench.seal"
#: An uploaded image is checked in a sandbox worker (:mod:`structext_core.aibench.sandboxed_import`).
SANDBOXED = {"aibench_image": "structext_core.aibench.images:check_image"}
