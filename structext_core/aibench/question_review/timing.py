"""Question review: the honest clock of a paper (:mod:`structext_core.studio.clock`'s column functions on ``qreview_items``)."""

from __future__ import annotations

import time

import sqlite_utils

from structext_core.aibench.question_review.campaigns import get_item
from structext_core.aibench.question_review.common import _CLOCK, EDITABLE, _require_access
from structext_core.studio.clock import (
    ClockSettings,
    activity_columns,
    beat_columns,
    paused_columns,
    resume_columns,
    shown_seconds,
)
from structext_core.studio.storage import write_transaction

# ---- the honest clock of a paper ------------------------------------------------------------

def _clock_row(db: sqlite_utils.Database, item_id: int) -> dict:
    return dict(zip(("id", *_CLOCK), db.execute(
        f"SELECT id, {', '.join(_CLOCK)} FROM qreview_items WHERE id = ?", [item_id]).fetchone()))


def _update_clock(db: sqlite_utils.Database, item_id: int, columns: dict) -> None:
    if columns:
        sets = ", ".join(f"{c} = ?" for c in columns)
        db.execute(f"UPDATE qreview_items SET {sets} WHERE id = ?", [*columns.values(), item_id])


def heartbeat(db: sqlite_utils.Database, item_id: int, user: dict, *, visible: bool = True,
              settings: ClockSettings | None = None, at: float | None = None) -> dict:
    """A sign of life of the page showing the item: starts the clock on the first showing, books
    the time since the last one (active, or away after a long gap or while hidden), pauses as
    idle after ``idle_pause_seconds`` without input. Returns :func:`clock_of`."""
    settings = settings or ClockSettings()
    at = time.time() if at is None else at
    item = get_item(db, item_id)
    if item["reviewer_id"] != user["id"] or item["status"] not in EDITABLE or item["archived_at"] is not None:
        return clock_of(item, settings, at)  # a lead looking, or a paper no longer open: no clock runs
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is not None:
            pass
        elif row["last_beat_at"] is None:
            _update_clock(db, item_id, {"first_shown_at": row["first_shown_at"] or at, "last_beat_at": at,
                                        "last_input_at": row["last_input_at"] or at,
                                        "active_at_last_input": row["active_seconds"]})
        else:
            _update_clock(db, item_id, beat_columns(row, at, settings, visible)[1])
    return clock_of(get_item(db, item_id), settings, at)


def record_activity(db: sqlite_utils.Database, item_id: int, user: dict, *, visible: bool = True,
                    input_age: float = 0.0, settings: ClockSettings | None = None, at: float | None = None) -> dict:
    """An input report of the page (the activity component): books the time up to ``at`` (away
    while the tab was hidden) and, from a visible tab, an input ``input_age`` seconds ago, which
    keeps the idle pause away. Returns :func:`clock_of`."""
    settings = settings or ClockSettings()
    at = time.time() if at is None else at
    item = get_item(db, item_id)
    if item["reviewer_id"] != user["id"] or item["status"] not in EDITABLE or item["archived_at"] is not None:
        return clock_of(item, settings, at)
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is None and row["last_beat_at"] is not None:
            _update_clock(db, item_id, activity_columns(row, at, settings, visible, input_age))
    return clock_of(get_item(db, item_id), settings, at)


def pause(db: sqlite_utils.Database, item_id: int, user: dict, *, settings: ClockSettings | None = None,
          at: float | None = None) -> None:
    """Pause the paper's clock (the Pause button)."""
    settings = settings or ClockSettings()
    item = get_item(db, item_id)
    _require_access(item, user)
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is None and row["last_beat_at"] is not None:
            _update_clock(db, item_id, paused_columns(row, time.time() if at is None else at, "button",
                                                      settings.grace_seconds))


def resume(db: sqlite_utils.Database, item_id: int, user: dict, *, at: float | None = None) -> None:
    """Resume after a pause: the paused time is booked as paused, the clock runs again."""
    item = get_item(db, item_id)
    _require_access(item, user)
    at = time.time() if at is None else at
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is not None:
            _update_clock(db, item_id, resume_columns(row, at))


def clock_of(item: dict, settings: ClockSettings | None = None, at: float | None = None) -> dict:
    """The paper's clock: active (so far), away, idle and paused seconds, and whether it is paused."""
    settings = settings or ClockSettings()
    at = time.time() if at is None else at
    paused = item["paused_seconds"] + (at - item["paused_at"] if item["paused_at"] is not None else 0.0)
    return {"active": shown_seconds(item, settings.grace_seconds, at), "away": item["away_seconds"],
            "idle": item["idle_seconds"], "paused": paused, "is_paused": item["paused_at"] is not None,
            "pause_reason": None}
