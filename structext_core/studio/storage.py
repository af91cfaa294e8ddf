"""One SQLite database for the whole app, opened through sqlite-utils.

The database lives at ``annotations/structext.db`` in the project folder unless the
environment variable ``STRUCTEXT_DB`` names another file. :func:`open_db` creates the
folder and the file, switches on WAL, a busy timeout and foreign keys, and brings the
schema up to date by running the numbered migrations in :data:`MIGRATIONS` that the
file has not seen yet (``PRAGMA user_version`` holds the last one applied; the table
``schema_migrations`` keeps a readable history).

Every table of the app is created by a migration: one module per schema version in
:mod:`structext_core.studio.migrations` (``m0001_initial.py``, ...). To change the schema, add
the next module there; never edit a migration that has shipped.

Writes go through :func:`write_transaction`: a short ``BEGIN IMMEDIATE`` … ``COMMIT``
so that a writer waits for the lock up front (instead of failing half way) and each
submission is durable the moment the call returns.

Connections are not shared between threads: Streamlit runs every session in its own
thread, so open one connection per script run (``structext_core.ui.get_db``). Writers of
one process also queue on a per-file lock before asking SQLite for its write lock: SQLite's
busy handler sleeps in growing steps (up to 100 ms) and is not fair, which under 16 busy
writers let single submissions wait over a second; the in-process lock hands the write
turn over as soon as it is free (writers in other processes still meet the busy timeout).
The lock is for promptness only: correctness between processes (several app processes on one
file) rests on SQLite's lock, each write re-reading what it checks inside its ``BEGIN IMMEDIATE``
transaction, and the schema's unique keys.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from structext_core import settings
from structext_core.studio import migrations
from structext_core.studio.migrations import Migration

DB_ENV = settings.DB_ENV

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


def default_db_path() -> Path:
    """The database file: ``$STRUCTEXT_DB`` when set, else ``annotations/structext.db``."""
    return settings.db_path()


def open_db(path: str | Path | None = None, *, check_same_thread: bool = True) -> sqlite_utils.Database:
    """Open (creating if needed) the app database and migrate it to the latest schema.

    ``path`` defaults to :func:`default_db_path`; ``":memory:"`` gives a private
    in-memory database (tests). The connection belongs to the calling thread;
    ``check_same_thread=False`` lets another thread close it once its own has ended.
    """
    if path is None:
        path = default_db_path()
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread)
        lock = threading.RLock()
    else:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread)
        lock = _write_lock_for(path)
    db = sqlite_utils.Database(conn)
    db.structext_write_lock = lock  # used by write_transaction
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        _enable_wal(db)
        # FULL: a commit is on disk when it returns (costs ~0.3 ms per commit here).
        db.execute("PRAGMA synchronous = FULL")
    migrate(db)
    return db


def _enable_wal(db: sqlite_utils.Database) -> None:
    """Write-ahead logging on ``db``'s file. Switching a new file to WAL takes an exclusive lock, and
    SQLite may answer "database is locked" at once, without waiting the busy timeout, while another
    process switches or migrates the same new file (seen in CI: twelve processes opening one new
    file): tried again every 20 ms until BUSY_TIMEOUT_MS has passed, then the error is raised."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.enable_wal()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@contextlib.contextmanager
def opened(path: str | Path | None = None) -> Iterator[sqlite_utils.Database]:
    """:func:`open_db` for one block: the connection is closed when the block ends (not when the
    garbage collector finds it), so its file handles do not outlive the work."""
    db = open_db(path)
    try:
        yield db
    finally:
        db.conn.close()


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
def write_transaction(db: sqlite_utils.Database, *, enclosing: bool = False) -> Iterator[sqlite_utils.Database]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` around a block of writes; rolls back on error.

    Taking the write lock at the start means two writers never deadlock on a lock
    upgrade; the busy timeout makes a writer wait its turn. Must not be nested, except inside
    one opened with ``enclosing=True``: there a nested ``write_transaction`` (a function that
    writes on its own, called by one that must write more in the same transaction) is a
    savepoint, committed with the enclosing transaction or rolled back with it.
    """
    nesting = getattr(db, "structext_enclosing_depth", 0)
    if nesting:
        name = f"structext_nested_{nesting}"
        db.conn.execute(f"SAVEPOINT {name}")
        db.structext_enclosing_depth = nesting + 1
        try:
            yield db
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute(f"ROLLBACK TO {name}")
                db.conn.execute(f"RELEASE {name}")
            raise
        else:
            db.conn.execute(f"RELEASE {name}")
        finally:
            db.structext_enclosing_depth = nesting
        return
    lock = getattr(db, "structext_write_lock", None) or contextlib.nullcontext()
    with lock:
        _begin_immediate(db.conn)
        if enclosing:
            db.structext_enclosing_depth = 1
        try:
            yield db
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise
        else:
            db.conn.execute("COMMIT")
        finally:
            if enclosing:
                db.structext_enclosing_depth = 0


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


#: The schema, in order (:mod:`structext_core.studio.migrations`, one module per migration).
MIGRATIONS: list[Migration] = migrations.load()
