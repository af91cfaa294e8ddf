"""Migration 3: log-in sessions and failed log-in attempts.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "log-in sessions and failed log-in attempts"


def migrate(db: sqlite_utils.Database) -> None:
    """Log-in sessions (tokens), failed log-in attempts and the key that signs the tokens.

    ``login_sessions`` keeps only the sha256 of each token (a copy of the database does not
    hold a usable cookie); ``login_failures`` is keyed by the sha256 of the lower-cased user
    name as typed, existing or not, so it neither stores stray passwords typed as a name
    nor tells which names exist (structext_core.studio.accounts).
    """
    run_script(
        db,
        """
        CREATE TABLE login_sessions (
            token_hash TEXT PRIMARY KEY,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            revoked_at REAL,
            revoked_reason TEXT
        );
        CREATE INDEX login_sessions_by_user ON login_sessions (user_id);
        CREATE INDEX login_sessions_by_expiry ON login_sessions (expires_at);
        CREATE TABLE login_failures (
            name_key TEXT PRIMARY KEY,
            failures INTEGER NOT NULL,
            last_failed_at REAL NOT NULL,
            locked_until REAL
        );
        CREATE TABLE login_secret (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            secret TEXT NOT NULL,
            created_at REAL NOT NULL
        )
        """,
    )
