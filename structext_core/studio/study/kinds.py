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

from structext_core import protocol
from structext_core.protocol import StudyKind, free_text  # noqa: F401 (declared in the protocol)


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
