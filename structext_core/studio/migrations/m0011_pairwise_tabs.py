"""Migration 11: pairwise: one tab holds a person's pair, take-overs, idle pauses, removal.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "pairwise: one tab holds a person's pair, take-overs, idle pauses, removal"


def migrate(db: sqlite_utils.Database) -> None:
    """Pairwise studies keep the clock as studies do (issue 22): one tab holds a person's pair,
    and the lead may take a person off a study.

    - ``pairwise_members.active_tab``, ``tab_claimed_at``: the browser tab that holds the person's
      current pair (as ``study_annotators`` has them); ``removed_at``: taken off the study by the
      lead (their votes are kept).
    - ``pairwise_tasks.takeovers``: how often another tab took the pair over; ``pause_reason``:
      why the pair is paused now (``button`` or ``idle``); ``idle_pauses``: idle auto-pauses.
    - ``pairwise_votes.takeovers``, ``idle_pauses``: the task's counts when the vote was given.
    """
    run_script(
        db,
        """
        ALTER TABLE pairwise_members ADD COLUMN active_tab TEXT;
        ALTER TABLE pairwise_members ADD COLUMN tab_claimed_at REAL;
        ALTER TABLE pairwise_members ADD COLUMN removed_at REAL;
        ALTER TABLE pairwise_tasks ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pairwise_tasks ADD COLUMN pause_reason TEXT CHECK (pause_reason IN ('button', 'idle'));
        ALTER TABLE pairwise_tasks ADD COLUMN idle_pauses INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pairwise_votes ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pairwise_votes ADD COLUMN idle_pauses INTEGER NOT NULL DEFAULT 0
        """,
    )
