"""The honest clock's public interface (structext_core/studio/clock.py), which study answering,
pairwise voting and question review share: the column rules without a database, and one timed
item held in one tab through :class:`clock.TimedItems` on a table of this test's own. What each
feature makes of it is tested with the feature (tests/studio/study/test_clock.py,
tests/pairwise/test_study.py, tests/aibench/test_question_review.py).

Every moment is injected: no test sleeps."""

import sqlite3

import pytest
import sqlite_utils

from structext_core.studio import clock
from structext_core.studio.storage import write_transaction

SETTINGS = clock.ClockSettings(heartbeat_seconds=5, idle_pause_seconds=60)  # grace 12.5 s
RUNNING = {"first_shown_at": 0.0, "last_beat_at": 100.0, "hidden_at": None, "paused_at": None, "pause_count": 0,
           "paused_seconds": 0.0, "active_seconds": 40.0, "away_seconds": 0.0, "idle_seconds": 0.0,
           "last_input_at": 90.0, "active_at_last_input": 30.0, "takeovers": 0, "active_tab": "A"}


@pytest.mark.parametrize("row, at, visible, expected", [
    ({}, 112.5, True, {"active_seconds": 52.5, "last_beat_at": 112.5, "hidden_at": None}),  # within the grace
    ({}, 113.0, True, {"away_seconds": 13.0, "last_beat_at": 113.0, "hidden_at": None}),  # over it: away
    ({}, 103.0, False, {"active_seconds": 43.0, "last_beat_at": 103.0, "hidden_at": 103.0}),  # it hides now
    ({"hidden_at": 101.0}, 104.0, False, {"away_seconds": 4.0, "last_beat_at": 104.0, "hidden_at": 101.0}),
    ({"paused_at": 100.0}, 104.0, True, {}),  # a paused clock books nothing
    ({}, 99.0, True, {"active_seconds": 40.0, "last_beat_at": 100.0, "hidden_at": None}),  # late: no time back
])
def test_advance_books_the_gap_as_active_within_the_grace_else_away(row, at, visible, expected):
    assert clock.advance({**RUNNING, **row}, at, SETTINGS.grace_seconds, visible) == expected


@pytest.mark.parametrize("row, at, visible, due, idle", [
    ({}, 104.9, True, False, False),
    ({}, 105.0, True, True, False),
    ({}, 101.0, False, True, False),  # the tab's visibility changed: written at once
    ({"hidden_at": 100.0}, 101.0, True, True, False),
    ({}, 150.0, True, True, True),  # 60 s since the last input
    ({}, 150.0, False, True, False),  # a hidden tab is away, never idle
])
def test_a_heartbeat_is_due_each_interval_and_idle_after_the_limit(row, at, visible, due, idle):
    row = {**RUNNING, **row}
    assert clock.beat_due(row, at, SETTINGS, visible) is due
    assert clock.is_idle(row, at, SETTINGS, visible) is idle
    assert clock.beat_columns(row, at, SETTINGS, visible)[0] == ("paused" if idle else
                                                                 "active" if visible else "hidden")


@pytest.mark.parametrize("row, tab, take_over, elsewhere, needs_write", [
    ({"first_shown_at": None, "active_tab": None}, "A", False, False, True),  # the first showing
    ({}, "A", False, False, False),  # the holding tab, no heartbeat due
    ({}, "B", True, False, True),  # a new tab takes it over
    ({}, "B", False, True, True),  # a tab that lost it does not take it back unasked
    ({"paused_at": 100.0}, "B", False, False, False),  # paused: hidden everywhere, claimed on resume
    ({}, None, False, False, False),  # scripts: no tab
])
def test_who_may_show_an_item_held_in_one_tab(row, tab, take_over, elsewhere, needs_write):
    row = {**RUNNING, **row}
    assert clock.shown_elsewhere(row, tab, take_over) is elsewhere
    assert clock.show_needs_write(row, tab, 103.0, SETTINGS) is needs_write


# ---------------------------------------------------------------- one timed item held in one tab

COLUMNS = ", ".join(f"{name} {'TEXT' if name == 'active_tab' else 'REAL'}" for name in RUNNING)


@pytest.fixture
def items():
    """A feature of this test's own: one person's timed items, the tab that holds them, pauses."""
    db = sqlite_utils.Database(sqlite3.connect(":memory:", isolation_level=None))
    db.execute(f"CREATE TABLE items (id INTEGER PRIMARY KEY, done INTEGER DEFAULT 0, pause_reason TEXT, {COLUMNS})")
    db.execute("CREATE TABLE holder (tab TEXT)")
    db.execute("INSERT INTO holder VALUES (NULL)")
    db.execute("INSERT INTO items (id, pause_count, paused_seconds, active_seconds, away_seconds, idle_seconds,"
               " takeovers) VALUES (1, 0, 0, 0, 0, 0, 0)")

    def read(db, row):
        cursor = db.execute("SELECT i.*, h.tab AS active_tab FROM items i, holder h WHERE i.id = ?", [row["id"]])
        return dict(zip([d[0] for d in cursor.description], cursor.fetchone()))

    def write(db, item_id, changes):
        changes = {k: v for k, v in changes.items() if k != "active_tab"}
        if changes:
            db.execute(f"UPDATE items SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ?",
                       [*changes.values(), item_id])

    def refusal(row, tab):
        if row["done"]:
            return "done"
        if row["paused_at"] is not None:
            return "paused"
        return "elsewhere" if clock.held_elsewhere(row, tab) else None

    timed = clock.TimedItems(read=read, write=write, refusal=refusal, done=lambda row: bool(row["done"]),
                             hold=lambda db, row, tab, at: db.execute("UPDATE holder SET tab = ?", [tab]),
                             on_pause=lambda db, row, at, reason: {"pause_reason": reason},
                             on_resume=lambda db, row, at: {"pause_reason": None})
    return db, timed, lambda: read(db, {"id": 1})


def test_show_claim_beat_pause_and_resume_keep_one_timeline(items):
    db, timed, row = items
    shown, elsewhere = clock.open_item(db, timed, row(), "A", 0.0, SETTINGS)
    assert not elsewhere and shown["first_shown_at"] == 0.0 and shown["active_tab"] == "A"
    assert clock.beat(db, timed, row(), "A", 5.0, SETTINGS) == ("active", 5.0)
    assert clock.beat(db, timed, row(), "A", 7.0, SETTINGS) == ("active", 7.0)  # not due: read, not written
    assert row()["last_beat_at"] == 5.0
    # A second tab takes it over (an input, a take-over); the first is told and books nothing.
    assert clock.open_item(db, timed, row(), "B", 8.0, SETTINGS)[0]["takeovers"] == 1
    assert clock.beat(db, timed, row(), "A", 13.0, SETTINGS)[0] == "elsewhere"
    assert clock.report_input(db, timed, row(), "A", 13.0, SETTINGS)[::2] == ("elsewhere", False)
    assert clock.open_item(db, timed, row(), "A", 14.0, SETTINGS, take_over=False)[1]  # not taken back unasked
    assert clock.report_input(db, timed, row(), "B", 14.0, SETTINGS, input_age=2.0,
                              also={"done": 0}) == ("active", 14.0, True)
    assert row()["last_input_at"] == 12.0
    # Pause in any tab; the tab that resumes holds it; the pause is paused time.
    with write_transaction(db):
        clock.pause(db, timed, row(), 20.0, "button", SETTINGS)
    assert clock.beat(db, timed, row(), "B", 25.0, SETTINGS)[0] == "paused"
    with write_transaction(db):
        clock.resume(db, timed, row(), "A", 50.0, SETTINGS)
    got = row()
    assert (got["active_tab"], got["paused_seconds"], got["pause_reason"], got["takeovers"]) == ("A", 30.0, None, 2)
    # No input for the idle limit: an idle pause, the time since the last input re-booked as idle.
    for at in range(55, 110, 5):
        assert clock.beat(db, timed, row(), "A", float(at), SETTINGS)[0] == "active"
    assert clock.beat(db, timed, row(), "A", 110.0, SETTINGS) == ("paused", 20.0)
    got = row()
    assert (got["idle_seconds"], got["pause_reason"], got["pause_count"]) == (60.0, "idle", 2)
    assert got["active_seconds"] + got["idle_seconds"] + got["paused_seconds"] + got["away_seconds"] == 110.0

