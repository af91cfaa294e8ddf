"""The honest clock: one timed item held in one tab (issue 35).

Study answering (:mod:`structext_core.studio.study.answering`) and a benchmark's own timed work
(a benchmark's package: pairwise voting and question review, say) time their items with this one
clock. Its public interface:

- settings: :class:`ClockSettings`, :func:`clock_settings`, :class:`ActivityReport` (an input
  report of a page, checked);
- the clock's time: :func:`shown_seconds` (active seconds as of now), :func:`advance` (book
  the time since the last sign of life: active within the grace, else away);
- heartbeats: :func:`beat_due` (must this heartbeat be written), :func:`is_idle` (no input for
  the idle limit), :func:`beat_columns`, :func:`activity_columns`, :func:`input_columns`;
- pause: :func:`paused_columns`, :func:`resume_columns`;
- show and claim: :func:`start_columns` (the first showing), :func:`claim_columns`,
  :func:`held_elsewhere`, :func:`shown_elsewhere`, :func:`show_needs_write`;
- one timed item held in one tab, written through a :class:`TimedItems` (where one feature
  keeps its items' clocks): :func:`open_item`, :func:`show`, :func:`claim`, :func:`beat`,
  :func:`report_input`, :func:`pause`, :func:`resume`.

The column functions work on any table with the clock's columns (``first_shown_at``,
``last_beat_at``, ``hidden_at``, ``paused_at``, ``pause_count``, ``paused_seconds``,
``active_seconds``, ``away_seconds``, ``idle_seconds``, ``last_input_at``,
``active_at_last_input``, and for a held item ``takeovers`` and ``active_tab``); each feature
writes them to its own table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlite_utils

from structext_core import settings
from structext_core.studio.errors import StudyError
from structext_core.studio.storage import write_transaction

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


def advance(row: dict, at: float, grace: float, visible: bool = True) -> dict:
    """The clock columns after a sign of life of the active tab at ``at``: the time since the
    last one booked as active (at most ``grace`` seconds, tab visible) or away (see above).
    Nothing for a paused item or one not running."""
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


def paused_columns(row: dict, at: float, reason: str, grace: float) -> dict:
    """The clock columns of ``row`` after booking the time up to ``at`` and pausing there (any
    table with the clock's columns: study assignments, question-review items). An idle pause
    re-books the active time since the last input as idle time."""
    state = {**row, **advance(row, at, grace)}
    changes = {key: state[key] for key in ("active_seconds", "away_seconds", "idle_seconds")}
    if reason == "idle":
        idle = max(0.0, state["active_seconds"] - (row["active_at_last_input"] or 0.0))
        changes["active_seconds"] = state["active_seconds"] - idle
        changes["idle_seconds"] = state["idle_seconds"] + idle
    changes.update(paused_at=at, pause_count=row["pause_count"] + 1, last_beat_at=None, hidden_at=None)
    return changes


def is_idle(row: dict, at: float, settings: ClockSettings, visible: bool) -> bool:
    """Whether a visible tab has had no input for the idle limit (then the item pauses as idle)."""
    limit = settings.idle_pause_seconds
    return bool(limit) and visible and row["last_input_at"] is not None and at - row["last_input_at"] >= limit


def beat_due(row: dict, at: float, settings: ClockSettings, visible: bool) -> bool:
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
    if is_idle(row, at, settings, visible):
        return "paused", paused_columns(row, at, "idle", settings.grace_seconds)
    return ("active" if visible else "hidden"), advance(row, at, settings.grace_seconds, visible)


def activity_columns(row: dict, at: float, settings: ClockSettings, visible: bool = True,
                     input_age: float = 0.0) -> dict:
    """An input report of the tab that holds a running item: the time booked up to ``at`` (away
    while hidden) and, from a visible tab, an input ``input_age`` seconds before ``at``."""
    changes = advance(row, at, settings.grace_seconds, visible)
    if visible:
        changes.update(_input_at({**row, **changes}, at, input_age))
    return changes


def claim_columns(row: dict, at: float, settings: ClockSettings) -> dict:
    """Another tab takes a running item over at ``at``: the gap since the old tab's last sign of
    life booked as any gap, a take-over counted when a tab held it before (``active_tab`` of the
    row), and the claim is an input."""
    changes = {"takeovers": row["takeovers"] + (row["active_tab"] is not None),
               **advance(row, at, settings.grace_seconds)}
    changes.update(input_columns({**row, **changes}, at))
    return changes


def resume_columns(row: dict, at: float) -> dict:
    """Resume a paused item at ``at``: the pause booked as paused time, the clock runs again
    from an input now."""
    return {"paused_seconds": row["paused_seconds"] + max(0.0, at - row["paused_at"]),
            "paused_at": None, "last_beat_at": at, "hidden_at": None, **input_columns(row, at)}


def input_columns(row: dict, at: float) -> dict:
    """The columns that say: the annotator gave input at ``at`` (after booking the time)."""
    return {"last_input_at": at, "active_at_last_input": row["active_seconds"]}


def _input_at(row: dict, at: float, age: float) -> dict:
    """Like :func:`input_columns` for an input ``age`` seconds before ``at`` (time booked up to
    ``at``): never before the previous input, and the active total then at most ``age`` less."""
    age = min(max(0.0, age if math.isfinite(age) else 0.0), MAX_INPUT_AGE)
    previous = row["last_input_at"] if row["last_input_at"] is not None else at - age
    moment = min(at, max(previous, at - age))
    active_then = max(row["active_at_last_input"] or 0.0, row["active_seconds"] - (at - moment))
    return {"last_input_at": moment, "active_at_last_input": min(active_then, row["active_seconds"])}


def start_columns(at: float) -> dict:
    """The first showing of an item at ``at``: its clock starts, and the showing is an input."""
    return {"first_shown_at": at, "last_beat_at": at, "last_input_at": at, "active_at_last_input": 0.0}


def held_elsewhere(row: dict, tab: str | None) -> bool:
    """Whether another tab than ``tab`` holds the item (never without a ``tab``: scripts)."""
    return tab is not None and row["active_tab"] not in (None, tab)


def shown_elsewhere(row: dict, tab: str | None, take_over: bool) -> bool:
    """Whether a showing in ``tab`` must not show the item: another tab holds it, this tab does
    not take it over, and it runs (a paused item is hidden in every tab anyway; the tab that
    resumes it claims it)."""
    return held_elsewhere(row, tab) and not take_over and row["paused_at"] is None


def show_needs_write(row: dict, tab: str | None, at: float, settings: ClockSettings) -> bool:
    """Whether showing the item in ``tab`` at ``at`` writes: its first showing, a claim by a
    new tab, or a heartbeat of a visible tab that is due (a paused item is claimed by the tab
    that resumes it, so showing it writes nothing)."""
    if row["first_shown_at"] is None:
        return True
    if row["paused_at"] is not None:
        return False
    if tab is not None and row["active_tab"] != tab:
        return True
    return beat_due(row, at, settings, True)


# ---------------------------------------------------------------- one timed item held in one tab

@dataclass(frozen=True)
class TimedItems:
    """Where one feature keeps its timed items (study assignments, pairwise tasks): how to read
    an item's clock row again, write its clock columns, and record the tab that holds it.

    A row is a dict with the clock's columns, ``id``, ``active_tab`` and whatever ``refusal``
    and ``done`` read."""

    #: The row of ``row``'s item as stored now (inside the caller's transaction).
    read: Callable[[sqlite_utils.Database, dict], dict]
    #: Write clock columns of the item with this id.
    write: Callable[[sqlite_utils.Database, int, dict], None]
    #: Record that ``tab`` holds the person's items from ``at`` (the row's ``active_tab``).
    hold: Callable[[sqlite_utils.Database, dict, str, float], None]
    #: Why a tab may not run the item's clock now (``paused``, ``elsewhere``, answered, closed,
    #: ...), None when it may.
    refusal: Callable[[dict, "str | None"], "str | None"]
    #: Whether the item is finished (answered, voted): a showing then writes nothing.
    done: Callable[[dict], bool]
    #: Inside the pause's transaction: more columns of a pause (its reason, counts), after any
    #: rows of its own are written.
    on_pause: Callable[[sqlite_utils.Database, dict, float, str], dict] = field(default=lambda db, row, at, why: {})
    #: Inside the resume's transaction: more columns of a resume.
    on_resume: Callable[[sqlite_utils.Database, dict, float], dict] = field(default=lambda db, row, at: {})


def open_item(db: sqlite_utils.Database, items: TimedItems, row: dict, tab: str | None, at: float,
              settings: ClockSettings, *, take_over: bool = True) -> tuple[dict, bool]:
    """The item of ``row`` is on screen in ``tab``: show it (:func:`show`, in a write
    transaction, only when :func:`show_needs_write`). Returns the row as it is now, and whether
    the tab must not show it (:func:`shown_elsewhere`)."""
    elsewhere = shown_elsewhere(row, tab, take_over)
    if not elsewhere and show_needs_write(row, tab, at, settings):
        with write_transaction(db):
            fresh = items.read(db, row)
            if not items.done(fresh):
                show(db, items, fresh, tab, at, settings)
            row = {**row, **items.read(db, row)}
    return row, elsewhere


def show(db: sqlite_utils.Database, items: TimedItems, row: dict, tab: str | None, at: float,
         settings: ClockSettings) -> None:
    """Inside a write transaction: the item is on screen in ``tab`` at ``at``. The first showing
    starts its clock; a tab that does not hold it claims it (:func:`claim`); else a heartbeat.
    A paused item stays paused (the tab that resumes it claims it)."""
    if row["first_shown_at"] is None:
        items.write(db, row["id"], start_columns(at))
        row = items.read(db, row)  # another tab may have been first: its start time counts
    if row["paused_at"] is not None:
        return
    if tab is not None and row["active_tab"] != tab:
        claim(db, items, row, tab, at, settings)
    else:
        items.write(db, row["id"], advance(row, at, settings.grace_seconds))


def claim(db: sqlite_utils.Database, items: TimedItems, row: dict, tab: str, at: float,
          settings: ClockSettings) -> None:
    """Inside a write transaction: ``tab`` takes the person's items over (a sign of life and an
    input; a take-over counted when another tab held them). The tab that held them learns so
    at its next heartbeat (``elsewhere``)."""
    items.hold(db, row, tab, at)
    items.write(db, row["id"], claim_columns(row, at, settings))


def beat(db: sqlite_utils.Database, items: TimedItems, row: dict, tab: str | None, at: float,
         settings: ClockSettings, *, visible: bool = True) -> tuple[str, float]:
    """A heartbeat of ``tab`` for the item of ``row`` (as read by the caller): books the time
    since the last sign of life, written at most once per ``heartbeat_seconds`` (or when the
    tab's visibility changed), and pauses as idle after the idle limit without input. Returns
    the state (``active``, ``hidden``, ``paused`` or the :attr:`TimedItems.refusal`) and the
    active seconds so far."""
    state = items.refusal(row, tab)
    if state is None and not (is_idle(row, at, settings, visible) or beat_due(row, at, settings, visible)):
        state = "active" if visible else "hidden"
    if state is not None:
        return state, shown_seconds(row, settings.grace_seconds, at)
    with write_transaction(db):
        row = items.read(db, row)
        if (state := items.refusal(row, tab)) is not None:
            return state, shown_seconds(row, settings.grace_seconds, at)
        if is_idle(row, at, settings, visible):
            return "paused", pause(db, items, row, at, "idle", settings)["active_seconds"]
        changes = advance(row, at, settings.grace_seconds, visible)
        items.write(db, row["id"], changes)
    return ("active" if visible else "hidden"), {**row, **changes}["active_seconds"]


def report_input(db: sqlite_utils.Database, items: TimedItems, row: dict, tab: str | None, at: float,
                 settings: ClockSettings, *, visible: bool = True, input_age: float = 0.0,
                 also: dict | None = None) -> tuple[str, float, bool]:
    """An input report of ``tab`` (:class:`ActivityReport`): in a write transaction, the time
    booked up to ``at`` and, from a visible tab, an input ``input_age`` seconds before it,
    written with the columns ``also`` (a draft). Nothing is written for a tab that may not run
    the clock. Returns the state, the active seconds and whether it was written."""
    with write_transaction(db):
        row = items.read(db, row)
        if (state := items.refusal(row, tab)) is not None:
            return state, shown_seconds(row, settings.grace_seconds, at), False
        changes = {**activity_columns(row, at, settings, visible, input_age), **(also or {})}
        items.write(db, row["id"], changes)
    return ("active" if visible else "hidden"), {**row, **changes}["active_seconds"], True


def pause(db: sqlite_utils.Database, items: TimedItems, row: dict, at: float, reason: str,
          settings: ClockSettings) -> dict:
    """Inside a write transaction: book the time up to ``at`` and pause the running item of
    ``row`` (an idle pause re-books the active time since the last input as idle). Returns the
    row after."""
    changes = paused_columns(row, at, reason, settings.grace_seconds)
    changes.update(items.on_pause(db, row, at, reason))
    items.write(db, row["id"], changes)
    return {**row, **changes}


def resume(db: sqlite_utils.Database, items: TimedItems, row: dict, tab: str | None, at: float,
           settings: ClockSettings) -> None:
    """Inside a write transaction: run the item's clock again from ``at`` (the pause booked as
    paused time), in ``tab``, which claims the item when it does not hold it."""
    if row["paused_at"] is not None:
        items.write(db, row["id"], {**resume_columns(row, at), **items.on_resume(db, row, at)})
        row = items.read(db, row)
    if tab is not None and row["active_tab"] != tab:
        claim(db, items, row, tab, at, settings)
