"""Migration 7: adjudication, practice and gold items, flags, lifecycle, audit log.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "adjudication, practice and gold items, flags, lifecycle, audit log"


def migrate(db: sqlite_utils.Database) -> None:
    """The study lead's and the annotator's day (issue 13): adjudication, practice and gold
    items, flags on questions, and the lifecycle of accounts, studies and campaigns.

    - ``score_overrides``: a lead's score for one response, with the reason, who and when.
      Every override is kept (the record of who changed what); the newest row of a response
      counts, and a row with ``score`` NULL returns the response to its automatic score.
    - ``study_items.kind``: ``study`` (counted), ``practice`` (before the study, not counted,
      feedback shown) or ``gold`` (mixed in, not counted, flags careless work). ``studies``
      keeps how many of each were drawn and the gold pass mark.
    - ``study_flags``: an annotator's flag on a question (``broken``, ``unclear``, ``other``)
      with a note, and how the lead resolved it.
    - ``study_annotators.removed_at`` / ``replaced_by``: an annotator taken off a study (their
      answers kept) and who took their place.
    - ``users.disabled_at``: a disabled account cannot log in; its data stays.
    - ``studies.archived_at`` and ``rewrite_campaigns.archived_at``: hidden from day-to-day
      lists, kept whole.
    - ``audit_log``: one row per change a lead makes (override, removal, rename, archive, …).
    """
    run_script(
        db,
        """
        CREATE TABLE score_overrides (
            id INTEGER PRIMARY KEY,
            response_id INTEGER NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
            score REAL CHECK (score IS NULL OR (score >= 0 AND score <= 1)),
            reason TEXT NOT NULL,
            by_user INTEGER REFERENCES users(id),
            at REAL NOT NULL
        );
        CREATE INDEX score_overrides_by_response ON score_overrides (response_id, id);
        ALTER TABLE study_items ADD COLUMN kind TEXT NOT NULL DEFAULT 'study'
            CHECK (kind IN ('study', 'practice', 'gold'));
        ALTER TABLE studies ADD COLUMN practice_items INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE studies ADD COLUMN gold_items INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE studies ADD COLUMN gold_pass REAL NOT NULL DEFAULT 0.5;
        ALTER TABLE studies ADD COLUMN archived_at REAL;
        CREATE TABLE study_flags (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL REFERENCES study_items(id) ON DELETE CASCADE,
            user_id INTEGER REFERENCES users(id),
            kind TEXT NOT NULL CHECK (kind IN ('broken', 'unclear', 'other')),
            note TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            resolved_by INTEGER REFERENCES users(id),
            resolved_at REAL,
            resolution TEXT
        );
        CREATE INDEX study_flags_by_study ON study_flags (study_id, resolved_at);
        ALTER TABLE study_annotators ADD COLUMN removed_at REAL;
        ALTER TABLE study_annotators ADD COLUMN replaced_by INTEGER REFERENCES users(id);
        ALTER TABLE users ADD COLUMN disabled_at REAL;
        ALTER TABLE rewrite_campaigns ADD COLUMN archived_at REAL;
        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            by_user INTEGER REFERENCES users(id) ON DELETE SET NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX audit_log_by_target ON audit_log (target, id)
        """,
    )
