"""Migration 4: the honest clock: heartbeats, active tab, idle and away time.

See :func:`migrate`."""

from __future__ import annotations

import time

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "the honest clock: heartbeats, active tab, idle and away time"


def migrate(db: sqlite_utils.Database) -> None:
    """Heartbeats, active tab, idle and away time of study answers (structext_core.studio.study).

    ``study_annotators.active_tab`` is the one browser tab that may show the annotator's
    question of that study. Each assignment keeps its own clock: ``last_beat_at`` (the last
    heartbeat of the active tab; NULL while paused), the seconds booked so far as active,
    away and idle, the last input and the active total at that input (to re-book the time
    before an idle auto-pause as idle), when the tab was hidden, and how often another tab
    took the question over. A pause records why (``button`` or ``idle``). Responses keep
    the split: ``elapsed_seconds`` is from now on the active time; away, idle and wall time
    (first showing to submission) are new. Answers committed before this migration keep
    NULL there. A question open at migration time carries its old clock over as active time.
    """
    run_script(
        db,
        """
        ALTER TABLE study_annotators ADD COLUMN active_tab TEXT;
        ALTER TABLE study_annotators ADD COLUMN tab_claimed_at REAL;
        ALTER TABLE assignments ADD COLUMN last_beat_at REAL;
        ALTER TABLE assignments ADD COLUMN hidden_at REAL;
        ALTER TABLE assignments ADD COLUMN active_seconds REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN away_seconds REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN idle_seconds REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN last_input_at REAL;
        ALTER TABLE assignments ADD COLUMN active_at_last_input REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN draft_saved_at REAL;
        ALTER TABLE assignments ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pauses ADD COLUMN reason TEXT NOT NULL DEFAULT 'button'
            CHECK (reason IN ('button', 'idle'));
        ALTER TABLE responses ADD COLUMN away_seconds REAL;
        ALTER TABLE responses ADD COLUMN idle_seconds REAL;
        ALTER TABLE responses ADD COLUMN wall_seconds REAL;
        ALTER TABLE responses ADD COLUMN idle_pauses INTEGER;
        ALTER TABLE responses ADD COLUMN takeovers INTEGER;
        CREATE INDEX pauses_by_assignment ON pauses (assignment_id)
        """,
    )
    moment = time.time()
    # Open, shown, unanswered questions: the old clock so far becomes active time.
    db.execute(
        """
        UPDATE assignments SET
            active_seconds = MAX(0, COALESCE(paused_at, :now) - first_shown_at - paused_seconds),
            last_beat_at = CASE WHEN paused_at IS NULL THEN :now END,
            last_input_at = :now,
            active_at_last_input = MAX(0, COALESCE(paused_at, :now) - first_shown_at - paused_seconds)
        WHERE first_shown_at IS NOT NULL
          AND id NOT IN (SELECT assignment_id FROM responses)
        """,
        {"now": moment},
    )
