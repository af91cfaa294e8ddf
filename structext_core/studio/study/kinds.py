"""What a study of each benchmark does differently: one small declaration per benchmark (its
member module's ``STUDY``, :mod:`structext_core.protocol`), read by the study machinery (scoring at
commit, the answer an annotator may give, the dashboard's breakdowns, the export's item columns,
the Results rows), which branches on no benchmark's name.

A study's ``benchmark`` (``studies.benchmark``, a name of :mod:`structext_core.protocol`) picks
its :class:`StudyKind` (:func:`kind_of`). Every kind stores its scores in the same columns
(``rouge_l``, ``exact_match``), so the dashboard, agreement, adjudication and the final score read
them alike: a benchmark scored right-or-wrong writes 1 or 0 in both, so "passed" is "correct".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from structext_core import protocol


def free_text(response: str, n_options: int) -> str | None:
    """Any text is an answer (``refuse_response`` of a free-text kind)."""
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
    #: How the lead's "Benchmark" choice names a study of this kind.
    setup_label: str = ""


def kind_of(benchmark: str | None) -> StudyKind:
    """The declaration of a study's benchmark (the first member's for None, as the column's default)."""
    name = benchmark or protocol.names()[0]
    kind = protocol.option(protocol.get_module(name), "STUDY")
    if kind is None:
        raise KeyError(f"benchmark {name!r} declares no studies (STUDY)")
    return kind


def study_benchmarks() -> list[str]:
    """The benchmarks a lead may open a study of, in the app's order."""
    return [name for name, member in protocol.members().items() if protocol.option(member, "STUDY") is not None]
