"""Migration 9: blind pairwise comparison of AIBench images.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "blind pairwise comparison of AIBench images"


def migrate(db: sqlite_utils.Database) -> None:
    """Blind pairwise comparison of AIBench systems' images (issue 22, item 3).

    - ``pairwise_studies``: a study over a stored AIBench data set (``dataset``), its seed, the
      share of pairs each person sees again with the sides swapped (``repeat_share``), practice
      pairs, status and lifecycle.
    - ``pairwise_pairs``: one paper and two systems (``system_a`` < ``system_b``), counted
      (``study``) or ``practice``.
    - ``pairwise_members``: who votes in a study.
    - ``pairwise_tasks``: one showing of a pair to one person: its place in the person's order,
      which system is on the left (drawn per person and pair from the seed, stored), an opaque
      ``token`` (what the page and the image URLs carry instead of any name), ``repeat_of``
      (the task it repeats with the sides swapped) and the honest clock's columns as
      ``assignments`` has them.
    - ``pairwise_votes``: the choice as clicked (``left``, ``right``, ``tie``, ``both_bad``), the
      outcome in system terms (``a``, ``b``, ``tie``, ``both_bad``) and the clock's totals.
    - ``pairwise_flags``: a person's flag on a pair (broken image, cannot judge, other), resolved
      by the lead.
    """
    run_script(
        db,
        """
        CREATE TABLE pairwise_studies (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            dataset TEXT NOT NULL,
            seed INTEGER NOT NULL,
            repeat_share REAL NOT NULL DEFAULT 0.1 CHECK (repeat_share >= 0 AND repeat_share <= 0.5),
            practice_pairs INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL,
            archived_at REAL
        );
        CREATE TABLE pairwise_pairs (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL REFERENCES pairwise_studies(id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL,
            system_a TEXT NOT NULL,
            system_b TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'study' CHECK (kind IN ('study', 'practice')),
            CHECK (system_a < system_b),
            UNIQUE (study_id, paper_id, system_a, system_b)
        );
        CREATE TABLE pairwise_members (
            study_id INTEGER NOT NULL REFERENCES pairwise_studies(id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL REFERENCES users(id),
            added_at REAL NOT NULL,
            PRIMARY KEY (study_id, user_id)
        );
        CREATE TABLE pairwise_tasks (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL REFERENCES pairwise_studies(id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL REFERENCES users(id),
            pair_id INTEGER NOT NULL REFERENCES pairwise_pairs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            left_is_a INTEGER NOT NULL CHECK (left_is_a IN (0, 1)),
            repeat_of INTEGER REFERENCES pairwise_tasks(id),
            token TEXT NOT NULL UNIQUE,
            first_shown_at REAL,
            last_beat_at REAL,
            hidden_at REAL,
            paused_at REAL,
            pause_count INTEGER NOT NULL DEFAULT 0,
            paused_seconds REAL NOT NULL DEFAULT 0,
            active_seconds REAL NOT NULL DEFAULT 0,
            away_seconds REAL NOT NULL DEFAULT 0,
            idle_seconds REAL NOT NULL DEFAULT 0,
            last_input_at REAL,
            active_at_last_input REAL NOT NULL DEFAULT 0,
            UNIQUE (study_id, user_id, position)
        );
        CREATE INDEX pairwise_tasks_by_user ON pairwise_tasks (user_id, study_id, position);
        CREATE TABLE pairwise_votes (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL UNIQUE REFERENCES pairwise_tasks(id) ON DELETE CASCADE,
            choice TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie', 'both_bad')),
            outcome TEXT NOT NULL CHECK (outcome IN ('a', 'b', 'tie', 'both_bad')),
            active_seconds REAL NOT NULL,
            away_seconds REAL NOT NULL,
            idle_seconds REAL NOT NULL,
            paused_seconds REAL NOT NULL,
            wall_seconds REAL NOT NULL,
            at REAL NOT NULL
        );
        CREATE TABLE pairwise_flags (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL REFERENCES pairwise_studies(id) ON DELETE CASCADE,
            task_id INTEGER NOT NULL REFERENCES pairwise_tasks(id) ON DELETE CASCADE,
            user_id INTEGER REFERENCES users(id),
            kind TEXT NOT NULL CHECK (kind IN ('broken', 'unclear', 'other')),
            note TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            resolved_by INTEGER REFERENCES users(id),
            resolved_at REAL,
            resolution TEXT
        )
        """,
    )
