"""What a study of each benchmark does differently: one small declaration per benchmark, read by
the study machinery (scoring at commit, the answer an annotator may give, the dashboard's
breakdowns, the export's item columns, the Results rows), which branches on no benchmark's name.

A study's ``benchmark`` (``studies.benchmark``, a name of :mod:`structext_core.protocol`) picks
its :class:`StudyKind` (:func:`kind_of`). Both kinds store their scores in the same columns, so the
dashboard, agreement, adjudication and the final score read them alike:

- StrucText-Eval: an item is a sample; the answer is free text, scored by ROUGE-L F1 (``rouge_l``)
  and exact match at commit; a pass is ROUGE-L at or above the paper's threshold.
- AIBench: an item is (one system's generated image of a paper, one of the paper's questions); the
  answer is an option's letter (``responses.response``), scored 1 when it is the key and 0
  otherwise, in both ``rouge_l`` and ``exact_match``: "passed" is "correct".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from structext_core.aibench.model import LETTERS, parse_letter
from structext_core.evaluation import scoring

STRUCTEXT = "structext-eval"
AIBENCH = "aibench"


def _structext_score(answer: str | None, response: str | None, gave_up: bool) -> tuple[float, int]:
    """ROUGE-L and exact match of one answer (a give-up scores 0)."""
    if gave_up:
        return 0.0, 0
    return scoring.rouge_l(answer or "", response or ""), scoring.exact_match(answer or "", response or "")


def _letter_score(answer: str | None, response: str | None, gave_up: bool) -> tuple[float, int]:
    """1 when the chosen letter is the key, else 0 (a give-up scores 0), in both places."""
    correct = not gave_up and bool(answer) and parse_letter(response or "", len(LETTERS)) == str(answer).strip().upper()
    return (1.0, 1) if correct else (0.0, 0)


def _any_text(response: str, n_options: int) -> str | None:
    return None


def _one_letter(response: str, n_options: int) -> str | None:
    """Why ``response`` is no option's letter (None when it is one)."""
    letters = LETTERS[:n_options]
    if parse_letter(response, n_options) is None:
        return f"Choose one of the options ({', '.join(letters)}) before you submit, or use 'Give up'."
    return None


@dataclass(frozen=True)
class StudyKind:
    """How studies of one benchmark differ (see the module notes)."""

    benchmark: str
    #: ``(answer key, response, gave_up) -> (rouge_l column, exact_match column)``.
    score: Callable[[str | None, str | None, bool], tuple[float, int]]
    #: ``(response, number of options) -> why it is no valid answer, or None``.
    refuse_response: Callable[[str, int], str | None]
    #: The item columns of a response row (dashboard frame, export), in order.
    item_columns: tuple[str, ...]
    #: The dashboard's "Group by" choices: label -> columns.
    groupings: dict[str, list[str]]
    #: Whether the study's answers join StrucText's Results as model rows (``human:<annotator>``).
    model_results: bool
    #: How the dashboard names its score, in one line.
    score_note: str
    #: The columns of the dashboard's "time per cell" table.
    time_cells: tuple[str, ...]
    #: Whether time is set against the item's length (``reference_chars``) on the dashboard.
    time_by_length: bool
    #: How a study names what it draws from (``{suite}``: its suite or data set), in choosers.
    source_label: str
    #: The rule screen's line on how to answer and submit.
    how_to_answer: str


KINDS: dict[str, StudyKind] = {
    STRUCTEXT: StudyKind(
        STRUCTEXT, _structext_score, _any_text,
        ("language", "task", "task_id", "depth", "width", "reference_chars"),
        {"Annotator": ["annotator"], "Format": ["language"], "Task": ["task"], "Depth": ["depth"],
         "Width": ["width"], "Depth x width": ["depth", "width"], "Format x task": ["language", "task"]},
        True,
        "Score: mean ROUGE-L F1 with the paper's rule (below 0.75 counts as 0), in percent; "
        "exact match after whitespace normalisation. Intervals: 95% bootstrap over answers.",
        ("depth", "width"), True, "{suite}",
        "Press **Ctrl+Enter** (⌘+Enter on a Mac) in the answer box to submit.",
    ),
    AIBENCH: StudyKind(
        AIBENCH, _letter_score, _one_letter,
        ("paper_id", "system", "question_id", "level", "conference"),
        {"Annotator": ["annotator"], "Level": ["level"], "System": ["system"], "Conference": ["conference"],
         "Level x system": ["level", "system"], "System x annotator": ["system", "annotator"]},
        False,
        "Score: accuracy, the share of answers whose letter is the key, in percent (a give-up is wrong). "
        "Intervals: 95% bootstrap over answers.",
        ("level", "system"), False, "AIBench {suite}",
        "Each question shows an image and options **A** to **D**: click an option or press its letter, then "
        "**Submit** or **Enter**. Your choice is saved as soon as you make it.",
    ),
}


def kind_of(benchmark: str | None) -> StudyKind:
    """The declaration of a study's benchmark (StrucText's for None, as the column's default)."""
    name = benchmark or STRUCTEXT
    if name not in KINDS:
        raise KeyError(f"no study kind for benchmark {name!r}; known: {', '.join(KINDS)}")
    return KINDS[name]
