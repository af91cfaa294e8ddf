"""Migration 5: app settings and per-study visibility on Results.

See :func:`migrate`."""

from __future__ import annotations

import re

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "app settings and per-study visibility on Results"


_ROLE_CHECK = re.compile(r"CHECK \(role IN \([^)]*\)\)")


def migrate(db: sqlite_utils.Database) -> None:
    """App settings (public read-only mode), per-study visibility on Results, the researcher role.

    The role list lives in a CHECK constraint of ``users``. SQLite cannot alter a CHECK, and
    rebuilding ``users`` inside the migration's transaction would fire the foreign keys of every
    table that points at it, so the constraint's text is rewritten in the schema, the
    procedure SQLite documents for loosening a CHECK (www.sqlite.org/lang_altertable.html).
    """
    run_script(
        db,
        """
        CREATE TABLE app_settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_by INTEGER REFERENCES users(id),
            updated_at REAL NOT NULL
        );
        ALTER TABLE studies ADD COLUMN results_when_closed INTEGER NOT NULL DEFAULT 0
        """,
    )
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'users'").fetchone()[0]
    new_sql, found = _ROLE_CHECK.subn("CHECK (role IN ('annotator', 'researcher', 'admin'))", sql)
    if found != 1:
        raise RuntimeError(f"migration 5: expected one role CHECK in the users table, found {found}: {sql}")
    schema_version_now = db.execute("PRAGMA schema_version").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'users'", [new_sql])
        # A new schema version makes every connection (this one too) read the changed table.
        db.execute(f"PRAGMA schema_version = {int(schema_version_now) + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
