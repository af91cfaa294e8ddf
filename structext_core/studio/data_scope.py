"""What of the stored data each person may read, by the roles of the access table
(:mod:`structext_core.studio.access`): the items of open studies kept back from visitors and
annotators, the suites and data sets whose keys they may browse (none, or in the public read-only
mode those no open study seals), the studies whose human results Results shows, and the part of
Results one person sees (:class:`ResultsScope`, a cache key). Tested as plain Python, with the
table, in tests/studio/test_access.py."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd
import sqlite_utils

from structext_core import protocol
from structext_core.studio.access import ANNOTATOR, HUMAN_SOURCE_PREFIX, can, public_mode, restricted, role_of


def hidden_sample_ids(db: sqlite_utils.Database, user: dict | None) -> frozenset[str]:
    """The ids of the items Results must leave out for ``user``: for visitors and annotators,
    every item of every open study; none for researchers, leads and admins."""
    if not restricted(role_of(user)):
        return frozenset()
    return frozenset(row[0] for row in db.execute(
        "SELECT i.sample_id FROM study_items i JOIN studies s ON s.id = i.study_id WHERE s.status = 'open'"))


def open_study_suites(db: sqlite_utils.Database) -> set[str]:
    """Suite names of the open studies: the suite each was drawn from and its samples' ``suite``."""
    names = {row[0] for row in db.execute("SELECT suite FROM studies WHERE status = 'open'")}
    names |= {row[0] for row in db.execute(
        "SELECT DISTINCT json_extract(i.sample_json, '$.suite') FROM study_items i"
        " JOIN studies s ON s.id = i.study_id WHERE s.status = 'open'") if row[0] is not None}
    return names


def visible(db: sqlite_utils.Database, user: dict | None, names: Iterable[str],
            sealed: Callable[[sqlite_utils.Database], set[str]]) -> list[str]:
    """``names`` for researchers, leads and admins; for visitors and annotators none, or in public
    read-only mode those not in ``sealed(db)``. Order kept."""
    names = list(names)
    role = role_of(user)
    if not restricted(role):
        return names
    if not can(role, "answers", public_mode(db)):
        return []
    taken = sealed(db)
    return [name for name in names if name not in taken]


def visible_suites(db: sqlite_utils.Database, user: dict | None, names: Iterable[str]) -> list[str]:
    """Of the suites ``names``, those whose samples (with answers) ``user`` may browse:
    all for researchers, leads and admins; for visitors and annotators none, or in public
    read-only mode those in no open study. Order kept."""
    return visible(db, user, names, open_study_suites)


def visible_datasets(db: sqlite_utils.Database, user: dict | None, benchmark: str, names: Iterable[str]) -> list[str]:
    """Of the stored data sets ``names`` of ``benchmark``, those whose items with keys ``user`` may see:
    all for researchers, leads and admins; for visitors and annotators none, or in public read-only mode
    none that the benchmark says open work still seals (its member's ``sealed_datasets(db)``; by
    default the data sets of its open studies). Order kept."""
    member = protocol.get_module(benchmark)
    sealed = protocol.option(member, "sealed_datasets")
    if sealed is None:  # the default: the data sets of its open studies
        def sealed(db):
            return {row[0] for row in db.execute(
                "SELECT DISTINCT suite FROM studies WHERE benchmark = ? AND status = 'open'", [benchmark])}
    return visible(db, user, names, sealed)


def results_studies(db: sqlite_utils.Database, user: dict | None) -> list[str]:
    """Names of the studies whose human results ``user`` sees on Results: none for visitors
    and annotators; for researchers, leads and admins every study except an open one set to
    show only once closed."""
    if not can(role_of(user), "human_results"):
        return []
    return [row[0] for row in db.execute(
        "SELECT name FROM studies WHERE NOT (results_when_closed = 1 AND status = 'open') ORDER BY id")]


@dataclass(frozen=True)
class ResultsScope:
    """What of the stored and human results one user sees (hashable: a cache key)."""

    everything: bool = False
    models: bool = False
    suites: tuple[str, ...] = ()
    human_sources: tuple[str, ...] = ()
    per_person: bool = False
    hidden_ids: tuple[str, ...] = ()


def results_scope(db: sqlite_utils.Database, user: dict | None, suites: Iterable[str]) -> ResultsScope:
    """The part of Results ``user`` sees, given the suites that have results."""
    role = role_of(user)
    studies = results_studies(db, user)
    all_studies = [row[0] for row in db.execute("SELECT name FROM studies ORDER BY id")]
    if not restricted(role):
        per_person = can(role, "per_person_results")
        if studies == all_studies and per_person:
            return ResultsScope(everything=True)
        return ResultsScope(models=True, suites=tuple(sorted(set(suites))),
                            human_sources=tuple(HUMAN_SOURCE_PREFIX + s for s in studies), per_person=per_person)
    if not can(role, "model_results", public_mode(db)):
        return ResultsScope()
    return ResultsScope(models=True, suites=tuple(sorted(visible_suites(db, user, set(suites)))),
                        hidden_ids=tuple(sorted(hidden_sample_ids(db, user))))


def filter_results(frame: pd.DataFrame, scope: ResultsScope) -> pd.DataFrame:
    """The rows of a Results frame (``source``, ``suite``, ``sample_id``) that ``scope`` allows."""
    if scope.everything:
        return frame
    source = frame["source"].astype(str)
    human = source.str.startswith(HUMAN_SOURCE_PREFIX)
    models = ~human & frame["suite"].astype(str).isin(scope.suites) & ~frame["sample_id"].astype(str).isin(
        scope.hidden_ids) if scope.models else pd.Series(False, index=frame.index)
    people = human & source.isin(scope.human_sources)
    kept = frame[(models | people).to_numpy()]
    if scope.per_person:
        return kept
    # without per-person results, every person's answer is shown once, in the pool `human`
    return kept.assign(model=kept["model"].astype(str).where(~kept["model"].astype(str).str.startswith("human:"),
                                                           "human"))


def rewrite_answer_refusal(db: sqlite_utils.Database, user: dict | None, sample: dict) -> str | None:
    """Why the Real-Test rewriting page must not show this sample's answer to ``user``
    (it is also an item of an open study they take part in), or None when it may."""
    if user is None or role_of(user) != ANNOTATOR:
        return None
    rows = db.execute(
        "SELECT DISTINCT s.name FROM study_items i JOIN studies s ON s.id = i.study_id"
        " JOIN study_annotators sa ON sa.study_id = s.id AND sa.user_id = ?"
        " WHERE s.status = 'open' AND (i.sample_id = ? OR json_extract(i.sample_json, '$.reference') = ?)"
        " ORDER BY s.name",
        [user["id"], sample.get("id"), sample.get("reference")],
    ).fetchall()
    if not rows:
        return None
    studies = ", ".join(repr(r[0]) for r in rows)
    return (f"This item's sample is also a question of the open study {studies}, in which you take part, so "
            "its answer stays hidden from you until that study is closed. Work on another item, or ask the "
            "admin to give this one to someone else.")
