"""Migration 8: AIBench question review: campaigns, drafts, adjudication, flags.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "AIBench question review: campaigns, drafts, adjudication, flags"


def migrate(db: sqlite_utils.Database) -> None:
    """AIBench's expert review of questions (structext_core.studio.question_review, issue 22 item 1).

    - ``qreview_campaigns``: a review campaign over the papers of one stored AIBench data set,
      with the seed and share of papers that two reviewers review independently.
    - ``qreview_items``: one paper for one reviewer (a double-reviewed paper has two items), its
      status as in rewriting campaigns, and the honest clock of the paper (the columns of the
      study clock: active, away, idle and paused seconds, heartbeats, last input).
    - ``qreview_decisions``: the reviewer's draft, saved as typed: per question ``accept``,
      ``edit`` or ``remove`` (edits and additions carry the whole question as JSON), a reason.
    - ``qreview_submissions``: what was submitted (the decisions as JSON) and the clock then;
      ``qreview_reviews``: the lead's approval or return with a comment.
    - ``qreview_adjudications``: the lead's final version of a question two reviewers disagree on.
    - ``qreview_flags``: a reviewer's flag on a paper or question, and its resolution.
    """
    run_script(
        db,
        """
        CREATE TABLE qreview_campaigns (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            dataset TEXT NOT NULL,
            seed INTEGER NOT NULL,
            double_share REAL NOT NULL CHECK (double_share >= 0 AND double_share <= 1),
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL,
            archived_at REAL
        );
        CREATE TABLE qreview_items (
            id INTEGER PRIMARY KEY,
            campaign_id INTEGER NOT NULL REFERENCES qreview_campaigns(id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            reviewer_id INTEGER NOT NULL REFERENCES users(id),
            double INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'todo'
                CHECK (status IN ('todo', 'draft', 'submitted', 'approved', 'returned')),
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
            UNIQUE (campaign_id, paper_id, reviewer_id)
        );
        CREATE INDEX qreview_items_by_reviewer ON qreview_items (reviewer_id, campaign_id);
        CREATE TABLE qreview_decisions (
            item_id INTEGER NOT NULL REFERENCES qreview_items(id) ON DELETE CASCADE,
            question_id TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('accept', 'edit', 'remove', 'add')),
            question_json TEXT,
            reason TEXT NOT NULL DEFAULT '',
            saved_at REAL NOT NULL,
            PRIMARY KEY (item_id, question_id)
        );
        CREATE TABLE qreview_submissions (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES qreview_items(id) ON DELETE CASCADE,
            decisions_json TEXT NOT NULL,
            active_seconds REAL NOT NULL,
            away_seconds REAL NOT NULL,
            idle_seconds REAL NOT NULL,
            paused_seconds REAL NOT NULL,
            submitted_by INTEGER REFERENCES users(id),
            submitted_at REAL NOT NULL
        );
        CREATE INDEX qreview_submissions_by_item ON qreview_submissions (item_id, id);
        CREATE TABLE qreview_reviews (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES qreview_items(id) ON DELETE CASCADE,
            submission_id INTEGER NOT NULL REFERENCES qreview_submissions(id) ON DELETE CASCADE,
            reviewer_id INTEGER REFERENCES users(id),
            decision TEXT NOT NULL CHECK (decision IN ('approved', 'returned')),
            comment TEXT NOT NULL DEFAULT '',
            reviewed_at REAL NOT NULL
        );
        CREATE TABLE qreview_adjudications (
            id INTEGER PRIMARY KEY,
            campaign_id INTEGER NOT NULL REFERENCES qreview_campaigns(id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL,
            question_id TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('accept', 'edit', 'remove')),
            question_json TEXT,
            reason TEXT NOT NULL,
            by_user INTEGER REFERENCES users(id),
            at REAL NOT NULL
        );
        CREATE INDEX qreview_adjudications_by_question ON qreview_adjudications (campaign_id, paper_id, question_id, id);
        CREATE TABLE qreview_flags (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES qreview_items(id) ON DELETE CASCADE,
            question_id TEXT,
            user_id INTEGER REFERENCES users(id),
            reason TEXT NOT NULL,
            created_at REAL NOT NULL,
            resolved_by INTEGER REFERENCES users(id),
            resolved_at REAL,
            resolution TEXT
        )
        """,
    )
