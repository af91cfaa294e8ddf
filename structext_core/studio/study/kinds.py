"""What a study of each benchmark does differently: one small declaration per benchmark (its
member module's ``STUDY``, a :class:`~structext_core.protocol.StudyKind` of keyword arguments, every
one defaulted), read by the study machinery (scoring at commit, the answer an annotator may give,
the dashboard's breakdowns, the export's item columns, the Results rows), which branches on no
benchmark's name and reads no benchmark's strata by name.

A study's ``benchmark`` (``studies.benchmark``, a name of :mod:`structext_core.protocol`) picks
its kind (:func:`kind_of`), with every ``None`` of the declaration filled from the member module.
Every kind stores its scores in the same columns (``rouge_l`` holds the score, ``exact_match``
whether it is exact), so the dashboard, agreement, adjudication and the final score read them
alike: a benchmark scored right-or-wrong writes 1 or 0 in both, so "passed" is "correct".
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping

from structext_core import protocol
from structext_core.evaluation.choices import LETTERS, parse_letter
from structext_core.protocol import StudyKind, StudyScore, describe_strata, stratum_label

#: The ``STUDY`` a member declares, or its default (:func:`structext_core.protocol.declared_study`).
study_declaration = protocol.declared_study


#: The longest text answer the default check (:func:`choice_or_text`) takes.
MAX_TEXT_ANSWER_CHARS = 1_000


def choice_or_text(response: str, n_options: int) -> str | None:
    """The default answer check: one clear option letter when there are options, else a text."""
    if n_options:
        if parse_letter(response, n_options) is None:
            return f"Choose one of the options ({', '.join(LETTERS[:n_options])}) before you submit, or use 'Give up'."
        return None
    if not response.strip():
        return "Type your answer before you submit, or use 'Give up'."
    if len(response) > MAX_TEXT_ANSWER_CHARS:
        return f"An answer here is at most {MAX_TEXT_ANSWER_CHARS} characters."
    return None


@functools.lru_cache(maxsize=64)
def _resolved(name: str, member) -> StudyKind:
    kind = study_declaration(member)
    if kind is None:
        raise KeyError(f"benchmark {name!r} declares no studies (STUDY, or load_items for the default study)")
    strata = tuple(member.STRATA)
    groupings = kind.groupings
    if groupings is None:
        groupings = {"Annotator": ["annotator"], **{stratum_label(key): [key] for key in strata}}
        if len(strata) >= 2:
            groupings[f"{stratum_label(strata[0])} x {strata[1].replace('_', ' ')}"] = list(strata[:2])
    how = kind.how_to_answer or ("A question with options: click an option or press its letter, then **Submit**. "
                                 "A question without: type your answer, then **Submit**.")
    return dataclasses.replace(
        kind, benchmark=name, refuse_response=kind.refuse_response or choice_or_text,
        item_columns=strata if kind.item_columns is None else tuple(kind.item_columns),
        groupings=dict(groupings), time_cells=strata[:2] if kind.time_cells is None else tuple(kind.time_cells),
        how_to_answer=how, setup_label=kind.setup_label or member.DISPLAY_NAME,
        describe_item=kind.describe_item or describe_strata,
        source_label=kind.source_label.replace("{benchmark}", member.DISPLAY_NAME),
    )


def kind_of(benchmark: str | None) -> StudyKind:
    """The declaration of a study's benchmark, every default filled in (the first member's for
    None, as the column's default)."""
    name = benchmark or protocol.names()[0]
    return _resolved(name, protocol.get_module(name))


def scores_by_item(benchmark: str | None) -> bool:
    """Whether the benchmark's study answers are scored on the whole item (its ``score_answer``),
    so that a study keeps the item (``kept.item`` of the stored sample) to score them."""
    return kind_of(benchmark).score is None


def score_one(benchmark: str | None, answer: str | None, response: str | None, gave_up: bool,
              item: Mapping | str | None = None) -> tuple[float, int]:
    """``(score, exact)`` of one answer by its study's benchmark: the kind's ``score`` on the key,
    or the member's ``score_answer`` on the kept ``item`` (a mapping, or its JSON); a give-up scores 0."""
    kind = kind_of(benchmark)
    if kind.score is not None:
        result = kind.score(answer, response, gave_up)
    elif gave_up:
        result = 0.0
    else:
        if isinstance(item, str):
            item = json.loads(item)
        if not isinstance(item, Mapping):
            raise ValueError(f"a study item of {kind.benchmark!r} keeps no item to score the answer on")
        result = protocol.get_module(kind.benchmark).score_answer(item, response or "")
    if isinstance(result, tuple):
        return StudyScore(*result)
    return StudyScore(float(result), float(result) >= 1.0)


def study_benchmarks() -> list[str]:
    """The benchmarks a lead may open a study of, in the app's order."""
    return [name for name, member in protocol.members().items() if study_declaration(member) is not None]
