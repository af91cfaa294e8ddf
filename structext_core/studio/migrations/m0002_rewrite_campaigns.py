"""Migration 2: Real-Test rewrite campaigns, drafts, reviews and flags.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "Real-Test rewrite campaigns, drafts, reviews and flags"


def migrate(db: sqlite_utils.Database) -> None:
    """Real-Test rewriting campaigns: campaigns, items, drafts, reviews, flags."""
    run_script(
        db,
        """
        CREATE TABLE rewrite_campaigns (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            source_suite TEXT NOT NULL,
            n_items INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL
        );
        CREATE TABLE rewrite_scenarios (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            added_by INTEGER REFERENCES users(id),
            added_at REAL NOT NULL
        );
        CREATE TABLE rewrite_items (
            id INTEGER PRIMARY KEY,
            campaign_id INTEGER NOT NULL REFERENCES rewrite_campaigns(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            sample_id TEXT NOT NULL,
            language TEXT NOT NULL,
            task_id INTEGER NOT NULL,
            depth INTEGER NOT NULL,
            scenario TEXT NOT NULL COLLATE NOCASE,
            sample_json TEXT NOT NULL,
            annotator_id INTEGER NOT NULL REFERENCES users(id),
            status TEXT NOT NULL DEFAULT 'todo'
                CHECK (status IN ('todo', 'draft', 'submitted', 'approved', 'returned')),
            UNIQUE (campaign_id, position),
            UNIQUE (campaign_id, sample_id),
            UNIQUE (campaign_id, scenario)
        );
        CREATE INDEX rewrite_items_by_annotator ON rewrite_items (annotator_id, campaign_id);
        CREATE TABLE rewrite_drafts (
            item_id INTEGER PRIMARY KEY REFERENCES rewrite_items(id) ON DELETE CASCADE,
            reference TEXT NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            mapping_json TEXT NOT NULL DEFAULT '{}',
            saved_by INTEGER REFERENCES users(id),
            saved_at REAL NOT NULL
        );
        CREATE TABLE rewrite_submissions (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES rewrite_items(id) ON DELETE CASCADE,
            reference TEXT NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            mapping_json TEXT NOT NULL DEFAULT '{}',
            structure_ok INTEGER NOT NULL,
            answer_ok INTEGER NOT NULL,
            exception_reason TEXT,
            submitted_by INTEGER REFERENCES users(id),
            submitted_at REAL NOT NULL
        );
        CREATE INDEX rewrite_submissions_by_item ON rewrite_submissions (item_id);
        CREATE TABLE rewrite_reviews (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES rewrite_items(id) ON DELETE CASCADE,
            submission_id INTEGER NOT NULL REFERENCES rewrite_submissions(id) ON DELETE CASCADE,
            reviewer_id INTEGER REFERENCES users(id),
            decision TEXT NOT NULL CHECK (decision IN ('approved', 'returned')),
            comment TEXT NOT NULL DEFAULT '',
            reviewed_at REAL NOT NULL
        );
        CREATE INDEX rewrite_reviews_by_item ON rewrite_reviews (item_id);
        CREATE TABLE rewrite_flags (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES rewrite_items(id) ON DELETE CASCADE,
            sample_id TEXT NOT NULL,
            user_id INTEGER REFERENCES users(id),
            reason TEXT NOT NULL,
            created_at REAL NOT NULL,
            resolved_by INTEGER REFERENCES users(id),
            resolved_at REAL,
            resolution TEXT
        )
        """,
    )
