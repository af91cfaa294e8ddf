"""The record of who changed what: one row in ``audit_log`` per change a lead makes.

Overrides, removals, renames, archiving, account changes: each writer calls :func:`record`
inside the same write transaction as the change itself, so a change and its record are
committed together or not at all. :func:`history` reads them back, newest first.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import sqlite_utils


@dataclass(frozen=True)
class Change:
    id: int
    at: float
    by: str | None  # the user name, or None when the account was deleted
    action: str
    target: str
    detail: dict[str, Any]


def record(db: sqlite_utils.Database, by_user: int | None, action: str, target: str, **detail: Any) -> int:
    """Append one change; ``target`` names what changed (``study:3``, ``response:17``, ``user:4``)."""
    cursor = db.execute(
        "INSERT INTO audit_log (at, by_user, action, target, detail_json) VALUES (?, ?, ?, ?, ?)",
        [time.time(), by_user, action, target, json.dumps(detail, sort_keys=True, default=str)],
    )
    return int(cursor.lastrowid)


def history(db: sqlite_utils.Database, target: str | None = None, *, prefix: str | None = None,
            limit: int = 500) -> list[Change]:
    """Changes, newest first: of one ``target``, of every target starting with ``prefix``, or all."""
    where, params = "", []
    if target is not None:
        where, params = "WHERE a.target = ?", [target]
    elif prefix is not None:
        where, params = "WHERE a.target LIKE ? ESCAPE '\\'", [_like_prefix(prefix)]
    rows = db.execute(
        f"""
        SELECT a.id, a.at, u.username, a.action, a.target, a.detail_json
        FROM audit_log a LEFT JOIN users u ON u.id = a.by_user
        {where} ORDER BY a.id DESC LIMIT ?
        """,
        [*params, int(limit)],
    ).fetchall()
    return [Change(id=r[0], at=r[1], by=r[2], action=r[3], target=r[4], detail=json.loads(r[5])) for r in rows]


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"
