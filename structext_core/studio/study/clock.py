"""The honest clock: settings, the timeline of one shown question, pauses, the page's input
reports."""

from __future__ import annotations

import math
from dataclasses import dataclass

import sqlite_utils

from structext_core import settings
from structext_core.studio.study.store import StudyError

# ---------------------------------------------------------------- the honest clock
#
# Each question has its own clock, kept by the server from signs of life of the one tab
# that holds the annotator's study (``study_annotators.active_tab``): the page's showing of
# the question, its heartbeats (every ``heartbeat_seconds``), input reports and the
# Pause / Resume / Submit actions. Every such moment books the time since the previous one
# (``assignments.last_beat_at``) to exactly one account:
#
# - active: the gap was at most ``grace_seconds`` and the tab was visible;
# - away: a longer gap (tab closed, connection lost, machine asleep: the clock stopped at
#   the last heartbeat), or the tab was hidden;
# - paused: from a pause to its resume (Pause button, or the idle auto-pause);
# - idle: the active time between the last input and an idle auto-pause, re-booked.
#
# So active + away + idle + paused = the wall time from the first showing to submission.

HEARTBEAT_ENV = settings.HEARTBEAT_ENV
IDLE_PAUSE_ENV = settings.IDLE_PAUSE_ENV
DEFAULT_HEARTBEAT_SECONDS = settings.DEFAULT_HEARTBEAT_SECONDS
DEFAULT_IDLE_PAUSE_SECONDS = settings.DEFAULT_IDLE_PAUSE_SECONDS
#: A gap between two signs of life counts as active time up to this many heartbeats.
GRACE_FACTOR = 2.5
PAUSE_REASONS = ("button", "idle")
#: The oldest input an input report may date back to (the page reports at least this often).
MAX_INPUT_AGE = 30.0


class TakenOverError(StudyError):
    """The question is held by another tab of the same annotator."""


@dataclass(frozen=True)
class ClockSettings:
    """How often the page sends a heartbeat, and after how long without input it pauses."""

    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS
    #: 0 switches the idle auto-pause off.
    idle_pause_seconds: float = DEFAULT_IDLE_PAUSE_SECONDS

    @property
    def grace_seconds(self) -> float:
        """The longest gap between two heartbeats that still counts as active time."""
        return GRACE_FACTOR * self.heartbeat_seconds


@dataclass(frozen=True)
class ActivityReport:
    """An input report of the answering page (its activity component), as far as it can be
    trusted: the browser sends whatever it likes, so every field is checked."""

    #: The report's number in its page (a report already handled comes again with every rerun).
    seq: object
    #: False only when the page said its tab is hidden.
    visible: bool
    #: The answer as typed, when the report carries it.
    text: str | None
    #: Seconds since the last input, as the page says (0 when it says nothing usable).
    input_age: float

    @classmethod
    def parse(cls, report: object, assignment_id: int) -> ActivityReport | None:
        """The report when it is a dict about ``assignment_id``; None otherwise."""
        if not isinstance(report, dict) or report.get("assignment") != assignment_id:
            return None
        text = report.get("text")
        idle_ms = report.get("idle_ms")
        number = isinstance(idle_ms, (int, float)) and not isinstance(idle_ms, bool)
        return cls(seq=report.get("seq"), visible=report.get("visible") is not False,
                   text=text if isinstance(text, str) else None,
                   input_age=idle_ms / 1000 if number else 0.0)


def clock_settings(environ: dict | None = None) -> ClockSettings:
    """The clock settings from ``STRUCTEXT_HEARTBEAT_SECONDS`` (default 5, from 1 to 60) and
    ``STRUCTEXT_IDLE_PAUSE_SECONDS`` (default 300, from 10 to 86400, 0 for never).

    Raises :class:`StudyError` naming the variable when one is not a number in range.
    """
    try:
        return ClockSettings(heartbeat_seconds=settings.heartbeat_seconds(environ),
                             idle_pause_seconds=settings.idle_pause_seconds(environ))
    except settings.SettingError as error:
        raise StudyError(str(error)) from None


def shown_seconds(row: dict, grace: float, at: float) -> float:
    """Active seconds of an open question at ``at``: the booked active time plus the gap
    since the last heartbeat while that gap is still within the grace."""
    seconds = row["active_seconds"] or 0.0
    last = row["last_beat_at"]
    if last is None or row["paused_at"] is not None or row["hidden_at"] is not None:
        return seconds
    gap = at - last
    return seconds + gap if 0 < gap <= grace else seconds


def _advance(row: dict, at: float, grace: float, visible: bool = True) -> dict:
    """The clock columns after a sign of life of the active tab at ``at`` (see above)."""
    if row["last_beat_at"] is None or row["paused_at"] is not None:
        return {}
    gap = max(0.0, at - row["last_beat_at"])
    changes = {"last_beat_at": max(row["last_beat_at"], at), "hidden_at": None if visible else at}
    if row["hidden_at"] is not None or gap > grace:
        changes["away_seconds"] = row["away_seconds"] + gap
    else:
        changes["active_seconds"] = row["active_seconds"] + gap
    if not visible and row["hidden_at"] is not None:
        changes["hidden_at"] = row["hidden_at"]
    return changes


def _update_assignment(db: sqlite_utils.Database, assignment_id: int, changes: dict) -> None:
    if changes:
        columns = ", ".join(f"{column} = ?" for column in changes)
        db.execute(f"UPDATE assignments SET {columns} WHERE id = ?", [*changes.values(), assignment_id])


def paused_columns(row: dict, at: float, reason: str, grace: float) -> dict:
    """The clock columns of ``row`` after booking the time up to ``at`` and pausing there (any
    table with the clock's columns: study assignments, question-review items). An idle pause
    re-books the active time since the last input as idle time."""
    state = {**row, **_advance(row, at, grace)}
    changes = {key: state[key] for key in ("active_seconds", "away_seconds", "idle_seconds")}
    if reason == "idle":
        idle = max(0.0, state["active_seconds"] - (row["active_at_last_input"] or 0.0))
        changes["active_seconds"] = state["active_seconds"] - idle
        changes["idle_seconds"] = state["idle_seconds"] + idle
    changes.update(paused_at=at, pause_count=row["pause_count"] + 1, last_beat_at=None, hidden_at=None)
    return changes


def _start_pause(db: sqlite_utils.Database, row: dict, at: float, reason: str, grace: float) -> dict:
    """Inside a write transaction: book the time up to ``at`` and pause the question.

    An idle pause re-books the active time since the last input as idle time.
    """
    changes = paused_columns(row, at, reason, grace)
    _update_assignment(db, row["id"], changes)
    db.execute("INSERT INTO pauses (assignment_id, started_at, reason) VALUES (?, ?, ?)", [row["id"], at, reason])
    return {**row, **changes}


def _is_idle(row: dict, at: float, settings: ClockSettings, visible: bool) -> bool:
    """Whether a visible tab has had no input for the idle limit (then the item pauses as idle)."""
    limit = settings.idle_pause_seconds
    return bool(limit) and visible and row["last_input_at"] is not None and at - row["last_input_at"] >= limit


def _beat_due(row: dict, at: float, settings: ClockSettings, visible: bool) -> bool:
    """Whether a heartbeat at ``at`` must be written (else it only reads the clock)."""
    if row["last_beat_at"] is None or visible != (row["hidden_at"] is None):
        return True
    return at - row["last_beat_at"] >= settings.heartbeat_seconds


# The moments of a running item's clock as column changes, for any table with the clock's
# columns (study assignments, pairwise tasks): each caller writes them to its own table.

def beat_columns(row: dict, at: float, settings: ClockSettings, visible: bool = True) -> tuple[str, dict]:
    """A heartbeat of the tab that holds a running item: ``("paused", columns)`` of an idle
    pause when the idle limit has passed without input, else ``("active" | "hidden", columns)``
    with the time since the last sign of life booked."""
    if _is_idle(row, at, settings, visible):
        return "paused", paused_columns(row, at, "idle", settings.grace_seconds)
    return ("active" if visible else "hidden"), _advance(row, at, settings.grace_seconds, visible)


def activity_columns(row: dict, at: float, settings: ClockSettings, visible: bool = True,
                     input_age: float = 0.0) -> dict:
    """An input report of the tab that holds a running item: the time booked up to ``at`` (away
    while hidden) and, from a visible tab, an input ``input_age`` seconds before ``at``."""
    changes = _advance(row, at, settings.grace_seconds, visible)
    if visible:
        changes.update(_input_at({**row, **changes}, at, input_age))
    return changes


def claim_columns(row: dict, at: float, settings: ClockSettings) -> dict:
    """Another tab takes a running item over at ``at``: the gap since the old tab's last sign of
    life booked as any gap, a take-over counted when a tab held it before (``active_tab`` of the
    row), and the claim is an input."""
    changes = {"takeovers": row["takeovers"] + (row["active_tab"] is not None),
               **_advance(row, at, settings.grace_seconds)}
    changes.update(_input_now({**row, **changes}, at))
    return changes


def resume_columns(row: dict, at: float) -> dict:
    """Resume a paused item at ``at``: the pause booked as paused time, the clock runs again
    from an input now."""
    return {"paused_seconds": row["paused_seconds"] + max(0.0, at - row["paused_at"]),
            "paused_at": None, "last_beat_at": at, "hidden_at": None, **_input_now(row, at)}


def _input_now(row: dict, at: float) -> dict:
    """The columns that say: the annotator gave input at ``at`` (after booking the time)."""
    return {"last_input_at": at, "active_at_last_input": row["active_seconds"]}


def _input_at(row: dict, at: float, age: float) -> dict:
    """Like :func:`_input_now` for an input ``age`` seconds before ``at`` (time booked up to
    ``at``): never before the previous input, and the active total then at most ``age`` less."""
    age = min(max(0.0, age if math.isfinite(age) else 0.0), MAX_INPUT_AGE)
    previous = row["last_input_at"] if row["last_input_at"] is not None else at - age
    moment = min(at, max(previous, at - age))
    active_then = max(row["active_at_last_input"] or 0.0, row["active_seconds"] - (at - moment))
    return {"last_input_at": moment, "active_at_last_input": min(active_then, row["active_seconds"])}
