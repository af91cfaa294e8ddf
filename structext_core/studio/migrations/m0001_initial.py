"""Migration 1: users, studies, human-baseline answers, model results."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "users, studies, human-baseline answers, model results"


def migrate(db: sqlite_utils.Database) -> None:
    run_script(
        db,
        """
        CREATE TABLE schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at REAL NOT NULL
        );
        CREATE TABLE users (
            id INTEGER PRIMARY KEY,
            username TEXT NOT NULL UNIQUE COLLATE NOCASE,
            password_hash TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('annotator', 'admin')),
            created_at REAL NOT NULL
        );
        CREATE TABLE studies (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            suite TEXT NOT NULL,
            n_items INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            rule_text TEXT NOT NULL,
            show_correctness INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL
        );
        CREATE TABLE study_items (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            sample_id TEXT NOT NULL,
            language TEXT,
            task TEXT,
            task_id INTEGER,
            depth INTEGER,
            width INTEGER,
            reference_chars INTEGER NOT NULL,
            sample_json TEXT NOT NULL,
            UNIQUE (study_id, sample_id),
            UNIQUE (study_id, position)
        );
        CREATE TABLE study_annotators (
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL REFERENCES users(id),
            added_at REAL NOT NULL,
            rule_accepted_at REAL,
            PRIMARY KEY (study_id, user_id)
        );
        CREATE TABLE assignments (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL,
            user_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL REFERENCES study_items(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            first_shown_at REAL,
            paused_at REAL,
            paused_seconds REAL NOT NULL DEFAULT 0,
            pause_count INTEGER NOT NULL DEFAULT 0,
            draft TEXT,
            FOREIGN KEY (study_id, user_id)
                REFERENCES study_annotators(study_id, user_id) ON DELETE CASCADE,
            UNIQUE (study_id, user_id, seq),
            UNIQUE (study_id, user_id, item_id)
        );
        CREATE TABLE pauses (
            id INTEGER PRIMARY KEY,
            assignment_id INTEGER NOT NULL REFERENCES assignments(id) ON DELETE CASCADE,
            started_at REAL NOT NULL,
            ended_at REAL
        );
        CREATE TABLE responses (
            id INTEGER PRIMARY KEY,
            assignment_id INTEGER NOT NULL UNIQUE REFERENCES assignments(id) ON DELETE CASCADE,
            study_id INTEGER NOT NULL,
            user_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            response TEXT NOT NULL,
            gave_up INTEGER NOT NULL DEFAULT 0,
            submitted_at REAL NOT NULL,
            elapsed_seconds REAL NOT NULL,
            paused_seconds REAL NOT NULL,
            rouge_l REAL,
            exact_match INTEGER,
            scored_at REAL
        );
        CREATE INDEX responses_by_study_user ON responses (study_id, user_id);
        CREATE TABLE uploads (
            id INTEGER PRIMARY KEY,
            filename TEXT,
            source TEXT,
            model TEXT,
            note TEXT,
            n_rows INTEGER,
            uploaded_by INTEGER REFERENCES users(id),
            uploaded_at REAL NOT NULL
        );
        CREATE TABLE results (
            id INTEGER PRIMARY KEY,
            source TEXT,
            sample_id TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt TEXT,
            suite TEXT,
            language TEXT,
            task TEXT,
            task_id INTEGER,
            depth INTEGER,
            width INTEGER,
            response TEXT,
            answer_extracted TEXT,
            rouge_l REAL,
            score REAL,
            exact_match INTEGER,
            bleu REAL,
            imported_at REAL,
            upload_id INTEGER REFERENCES uploads(id) ON DELETE CASCADE
        );
        CREATE INDEX results_by_model ON results (model, prompt);
        CREATE INDEX results_by_sample ON results (sample_id);
        CREATE INDEX results_by_upload ON results (upload_id)
        """,
    )
