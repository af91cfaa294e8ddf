"""One SQLite database for the whole app, opened through sqlite-utils.

The database lives at ``annotations/structext.db`` in the project folder unless the
environment variable ``STRUCTEXT_DB`` names another file. :func:`open_db` creates the
folder and the file, switches on WAL, a busy timeout and foreign keys, and brings the
schema up to date by running the numbered migrations in :data:`MIGRATIONS` that the
file has not seen yet (``PRAGMA user_version`` holds the last one applied; the table
``schema_migrations`` keeps a readable history).

Every table of the app is created here. To change the schema, append a
``Migration(version=N + 1, name=..., apply=...)`` to :data:`MIGRATIONS`; never edit a
migration that has shipped.

Writes go through :func:`write_transaction`: a short ``BEGIN IMMEDIATE`` … ``COMMIT``
so that a writer waits for the lock up front (instead of failing half way) and each
submission is durable the moment the call returns.

Connections are not shared between threads: Streamlit runs every session in its own
thread, so open one connection per script run (``structext_core.ui.get_db``). Writers of
one process also queue on a per-file lock before asking SQLite for its write lock: SQLite's
busy handler sleeps in growing steps (up to 100 ms) and is not fair, which under 16 busy
writers let single submissions wait over a second; the in-process lock hands the write
turn over as soon as it is free (writers in other processes still meet the busy timeout).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import sqlite_utils

DB_ENV = "STRUCTEXT_DB"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB_PATH = PROJECT_ROOT / "annotations" / "structext.db"

#: How long a writer waits for another writer's lock before SQLite gives up (ms).
BUSY_TIMEOUT_MS = 15_000
#: Extra attempts when the lock is still busy after the timeout (very long writers).
LOCK_RETRIES = 3


# One lock per database file, shared by the threads of this process (deliberately: it is
# what makes writers of different sessions take turns promptly). Guarded by _LOCKS_GUARD.
_WRITE_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _write_lock_for(path: Path) -> threading.RLock:
    key = str(path.resolve())
    with _LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.RLock())


class SchemaTooNewError(RuntimeError):
    """The database was migrated by a newer version of this code."""


class Migration(NamedTuple):
    """One numbered, append-only schema change."""

    version: int
    name: str
    apply: Callable[[sqlite_utils.Database], None]


def default_db_path() -> Path:
    """The database file: ``$STRUCTEXT_DB`` when set, else ``annotations/structext.db``."""
    configured = os.environ.get(DB_ENV, "").strip()
    return Path(configured).expanduser() if configured else DEFAULT_DB_PATH


def open_db(path: str | Path | None = None) -> sqlite_utils.Database:
    """Open (creating if needed) the app database and migrate it to the latest schema.

    ``path`` defaults to :func:`default_db_path`; ``":memory:"`` gives a private
    in-memory database (tests). The connection belongs to the calling thread.
    """
    if path is None:
        path = default_db_path()
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", timeout=BUSY_TIMEOUT_MS / 1000)
        lock = threading.RLock()
    else:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
        lock = _write_lock_for(path)
    db = sqlite_utils.Database(conn)
    db.structext_write_lock = lock  # used by write_transaction
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        db.enable_wal()
        # FULL: a commit is on disk when it returns (costs ~0.3 ms per commit here).
        db.execute("PRAGMA synchronous = FULL")
    migrate(db)
    return db


def schema_version(db: sqlite_utils.Database) -> int:
    """The number of the last migration applied to ``db`` (0 for a new file)."""
    return db.execute("PRAGMA user_version").fetchone()[0]


def latest_version() -> int:
    """The version the code expects: the number of the last migration."""
    return MIGRATIONS[-1].version


def migrate(db: sqlite_utils.Database) -> list[int]:
    """Apply every migration newer than the database; return the versions applied.

    Safe to call from several processes at once: the check is repeated inside an
    immediate transaction, so each migration runs exactly once.
    """
    if schema_version(db) == latest_version():
        return []
    applied: list[int] = []
    with write_transaction(db):
        current = schema_version(db)
        if current > latest_version():
            raise SchemaTooNewError(
                f"The database schema is at version {current}, but this code only knows "
                f"migrations up to {latest_version()}. Update the code before using this file."
            )
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            migration.apply(db)
            db.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                [migration.version, migration.name, time.time()],
            )
            # user_version lives in the file header and is part of this transaction.
            db.execute(f"PRAGMA user_version = {int(migration.version)}")
            applied.append(migration.version)
    return applied


@contextlib.contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` around a block of writes; rolls back on error.

    Taking the write lock at the start means two writers never deadlock on a lock
    upgrade; the busy timeout makes a writer wait its turn. Must not be nested.
    """
    lock = getattr(db, "structext_write_lock", None) or contextlib.nullcontext()
    with lock:
        _begin_immediate(db.conn)
        try:
            yield db
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise
        else:
            db.conn.execute("COMMIT")


def _begin_immediate(conn: sqlite3.Connection) -> None:
    for attempt in range(LOCK_RETRIES + 1):
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            if attempt == LOCK_RETRIES:
                raise
            time.sleep(0.05 * (attempt + 1))


def _run_script(db: sqlite_utils.Database, script: str) -> None:
    """Run ``;``-separated DDL statements inside the current transaction."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _m001_initial(db: sqlite_utils.Database) -> None:
    _run_script(
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


def _m002_rewrite_campaigns(db: sqlite_utils.Database) -> None:
    """Real-Test rewriting (structext_core.campaign): campaigns, items, drafts, reviews, flags."""
    _run_script(
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


def _m003_sessions_and_login(db: sqlite_utils.Database) -> None:
    """Log-in sessions (tokens) and failed log-in attempts. (Filled in by the log-in work.)"""


def _m004_honest_clock(db: sqlite_utils.Database) -> None:
    """Heartbeats, active tab, idle and away time of study answers. (Filled in by the clock work.)"""


def _m005_access(db: sqlite_utils.Database) -> None:
    """App settings (public read-only mode) and per-study visibility. (Filled in by the access work.)"""


#: The schema, in order. Append new migrations; never edit or renumber shipped ones.
MIGRATIONS: list[Migration] = [
    Migration(1, "users, studies, human-baseline answers, model results", _m001_initial),
    Migration(2, "Real-Test rewrite campaigns, drafts, reviews and flags", _m002_rewrite_campaigns),
    Migration(3, "log-in sessions and failed log-in attempts", _m003_sessions_and_login),
    Migration(4, "the honest clock: heartbeats, active tab, idle and away time", _m004_honest_clock),
    Migration(5, "app settings and per-study visibility on Results", _m005_access),
]
