"""StrucText's part of "who sees what" on Explore and Results (:mod:`structext_core.studio.access`
decides who is restricted): the samples of open studies a restricted user must not be shown, by id
and by reference text, and their rule hints (one text serves every sample of a task, and some tasks
share it), withheld wherever a sample is still shown."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
import sqlite_utils

from structext_core.studio.access import ANNOTATOR, restricted, role_of

HINT_WITHHELD = ("(withheld: a question of an open study has this same rule hint; a task's rule hint is "
                 "the same for all its samples)")


@dataclass(frozen=True)
class Sealed:
    """Samples whose answers must not be shown (by id and by reference text), and their rule
    hints (one text serves every sample of a task, and some tasks share it)."""

    sample_ids: frozenset[str] = frozenset()
    references: frozenset[str] = frozenset()
    rule_hints: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.sample_ids or self.references or self.rule_hints)

    def covers(self, sample: dict) -> bool:
        """Whether ``sample`` is sealed (same id, or the same reference text)."""
        return sample.get("id") in self.sample_ids or sample.get("reference") in self.references

    def keep(self, rows: Iterable[dict]) -> list[dict]:
        """The rows that are not sealed, with a sealed rule hint withheld."""
        return [dict(row, rule_hint=HINT_WITHHELD) if row.get("rule_hint") in self.rule_hints else row
                for row in rows if not self.covers(row)]


def _sealed_from(db: sqlite_utils.Database, where: str, params: Sequence) -> Sealed:
    rows = db.execute(
        "SELECT i.sample_id, json_extract(i.sample_json, '$.reference'),"
        " json_extract(i.sample_json, '$.rule_hint') FROM study_items i"
        f" JOIN studies s ON s.id = i.study_id WHERE s.status = 'open' {where}", list(params),
    ).fetchall()
    return Sealed(frozenset(r[0] for r in rows), frozenset(r[1] for r in rows if r[1] is not None),
                  frozenset(r[2] for r in rows if r[2] is not None))


def sealed_references(db: sqlite_utils.Database, user: dict | None) -> Sealed:
    """The items of the open studies ``user`` takes part in (empty for anyone else)."""
    if user is None or role_of(user) != ANNOTATOR:
        return Sealed()
    return _sealed_from(db, "AND i.study_id IN (SELECT study_id FROM study_annotators WHERE user_id = ?)",
                        [user["id"]])


def hidden_samples(db: sqlite_utils.Database, user: dict | None) -> Sealed:
    """What Explore and Results must leave out for ``user``: for visitors and annotators,
    every item of every open study; nothing for researchers and admins."""
    return _sealed_from(db, "", []) if restricted(role_of(user)) else Sealed()


def drop_hidden_samples(rows: pd.DataFrame, hidden: Sealed) -> pd.DataFrame:
    """Drill-down rows (``sample_id``, ``reference``) without the hidden samples."""
    if not hidden or rows.empty:
        return rows
    keep = ~rows["sample_id"].astype(str).isin(hidden.sample_ids)
    if "reference" in rows.columns:
        keep &= ~rows["reference"].astype(str).isin(hidden.references)
    return rows[keep.to_numpy()].reset_index(drop=True)
