"""Which AIBench data sets a role may see with their keys (the seal of :mod:`structext_core.studio.access`,
applied to AIBench's stored sets). Reached by the shared layers through the member's ``sealed_datasets``."""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_utils

from structext_core.aibench import seal
from structext_core.aibench import store as aibench_store
from structext_core.studio import data_scope


def open_datasets(db: sqlite_utils.Database) -> set[str]:
    """Data sets that hold any paper (by content: every copy of it, whatever its name) an open
    AIBench study asks questions of (keys show on Results) or an open blind pairwise study compares
    (so do the systems' names beside their images)."""
    rows = db.execute(
        "SELECT DISTINCT s.suite, json_extract(i.strata, '$.paper_id') FROM study_items i JOIN studies s ON s.id = i.study_id"
        " WHERE s.status = 'open' AND s.benchmark = 'aibench' AND json_extract(i.strata, '$.paper_id') IS NOT NULL"
        " UNION SELECT DISTINCT w.dataset, p.paper_id FROM pairwise_pairs p JOIN pairwise_studies w"
        " ON w.id = p.study_id WHERE w.status = 'open'").fetchall()
    names = {row[0] for row in db.execute(
        "SELECT suite FROM studies WHERE status = 'open' AND benchmark = 'aibench'"
        " UNION SELECT dataset FROM pairwise_studies WHERE status = 'open'")}
    sealed = {seal.paper_key(dataset, paper_id) for dataset, paper_id in rows}
    for name in aibench_store.stored_datasets():
        if name not in names and sealed & set(aibench_store.prints_of(name).papers.values()):
            names.add(name)
    return names


def visible_datasets(db: sqlite_utils.Database, user: dict | None, names: Iterable[str]) -> list[str]:
    """Of the stored AIBench data sets ``names``, those whose questions with keys ``user`` may see
    (Results drill-down): all for researchers and admins; for visitors and annotators none, or
    in public read-only mode none that holds a paper (in any copy) an open AIBench study or an open
    pairwise study draws from, as for StrucText's suites. Order kept."""
    return data_scope.visible_datasets(db, user, "aibench", names)
