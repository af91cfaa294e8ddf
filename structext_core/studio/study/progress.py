"""The annotator's own view of their work in one study: how far they are, how long they have
worked, and the breaks they took. Shown beside the questions during hours of answering.

What counts: the questions of the study proper, gold items included (they look like any
other question, and the count must not tell them apart; the page's "Question N of M" counts
them the same way), practice questions apart. Time and breaks cover every question of the
study, practice included: they are the annotator's working day, not the study's figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import durations
from structext_core.studio.clock import DEFAULT_HEARTBEAT_SECONDS, GRACE_FACTOR, shown_seconds
from structext_core.studio.crowd import dealing
from structext_core.studio.study.store import now, practice_items, progress_words


@dataclass(frozen=True)
class OwnProgress:
    """One annotator's day in one study, as they may see it (nothing about the items)."""

    #: Questions of the study proper (gold included, practice apart) answered, given up, in all.
    answered: int
    gave_up: int
    total: int
    practice_answered: int
    practice_total: int
    #: Active time on every question so far: the answered ones and the open one up to now.
    active_seconds: float
    #: Breaks: pauses with the Pause button, and pauses the clock made after no input.
    pauses: int
    pause_seconds: float
    idle_pauses: int
    idle_pause_seconds: float

    @property
    def rows(self) -> list[tuple[str, str]]:
        """``(label, value)`` lines for the page, durations written by :mod:`durations`."""
        done = progress_words(self.answered, self.total, self.practice_answered, self.practice_total)
        if self.gave_up:
            done += f" · {self.gave_up:,} given up"
        rows = [("Progress", done)]
        rows += [
            ("Active time", durations.clock(self.active_seconds)),
            ("Pauses", f"{self.pauses:,} · {durations.clock(self.pause_seconds)}"),
            ("Idle auto-pauses", f"{self.idle_pauses:,} · {durations.clock(self.idle_pause_seconds)}"),
        ]
        return rows


_COUNTS_SQL = f"""
    SELECT a.item_id IN ({practice_items(":study")}) AS practice,
           COUNT(*) AS assigned, COUNT(r.id) AS answered,
           COALESCE(SUM(r.gave_up), 0) AS gave_up, COALESCE(SUM(r.elapsed_seconds), 0) AS answered_seconds
    FROM assignments a
    LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE a.study_id = :study AND a.user_id = :user
    GROUP BY practice
"""

# The open questions (shown, not answered): their clock as it stands.
_OPEN_SQL = """
    SELECT a.active_seconds, a.last_beat_at, a.paused_at, a.hidden_at
    FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE a.study_id = ? AND a.user_id = ? AND r.id IS NULL AND a.first_shown_at IS NOT NULL
"""

_PAUSES_SQL = """
    SELECT p.reason, COUNT(*), COALESCE(SUM(MAX(0, COALESCE(p.ended_at, ?) - p.started_at)), 0)
    FROM pauses p JOIN assignments a ON a.id = p.assignment_id
    WHERE a.study_id = ? AND a.user_id = ?
    GROUP BY p.reason
"""


def own_progress(
    db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None,
    grace_seconds: float = GRACE_FACTOR * DEFAULT_HEARTBEAT_SECONDS,
) -> OwnProgress:
    """The annotator's own progress, time and breaks in one study at ``at`` (default now).

    A pause still running counts up to ``at``; the open question's active time counts as
    its clock shows it (``grace_seconds``: the clock settings' grace). Reads only; a user
    who has no assignments in the study gets zeros.
    """
    at = now() if at is None else at
    counts = {bool(row["practice"]): row for row in db.query(_COUNTS_SQL, {"study": study_id, "user": user_id})}
    main, practice = counts.get(False, {}), counts.get(True, {})
    answered_seconds = sum(row["answered_seconds"] for row in counts.values())
    open_seconds = sum(shown_seconds(row, grace_seconds, at) for row in db.query(_OPEN_SQL, [study_id, user_id]))
    breaks = {reason: (n, seconds) for reason, n, seconds in db.execute(_PAUSES_SQL, [at, study_id, user_id])}
    pauses, pause_seconds = breaks.get("button", (0, 0.0))
    idle_pauses, idle_seconds = breaks.get("idle", (0, 0.0))
    # A study that deals k per item: the questions still to be dealt count, and the active time of
    # questions that went back to the pool stays in the day.
    plan = dealing.plan(db, study_id, user_id)
    released = dealing.released_seconds(db, study_id).get(user_id, {}) if plan is not None else {}
    return OwnProgress(
        answered=main.get("answered", 0), gave_up=main.get("gave_up", 0),
        total=main.get("assigned", 0) + (plan.counted_left if plan is not None else 0),
        practice_answered=practice.get("answered", 0), practice_total=practice.get("assigned", 0),
        active_seconds=float(answered_seconds + open_seconds + released.get("active_seconds", 0.0)),
        pauses=pauses, pause_seconds=float(pause_seconds),
        idle_pauses=idle_pauses, idle_pause_seconds=float(idle_seconds),
    )
