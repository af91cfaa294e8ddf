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
thread, so open one connection per script run (``pages.ui.get_db``). Writers of
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
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import sqlite_utils

from structext_core import settings

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


class Migration(NamedTuple):
    """One numbered, append-only schema change."""

    version: int
    name: str
    apply: Callable[[sqlite_utils.Database], None]


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
        db.enable_wal()
        # FULL: a commit is on disk when it returns (costs ~0.3 ms per commit here).
        db.execute("PRAGMA synchronous = FULL")
    migrate(db)
    return db


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
    """Real-Test rewriting (structext_core.studio.campaign): campaigns, items, drafts, reviews, flags."""
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
    """Log-in sessions (tokens), failed log-in attempts and the key that signs the tokens.

    ``login_sessions`` keeps only the sha256 of each token (a copy of the database does not
    hold a usable cookie); ``login_failures`` is keyed by the sha256 of the lower-cased user
    name as typed, existing or not, so it neither stores stray passwords typed as a name
    nor tells which names exist (structext_core.studio.accounts).
    """
    _run_script(
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


def _m004_honest_clock(db: sqlite_utils.Database) -> None:
    """Heartbeats, active tab, idle and away time of study answers (structext_core.studio.study).

    ``study_annotators.active_tab`` is the one browser tab that may show the annotator's
    question of that study. Each assignment keeps its own clock: ``last_beat_at`` (the last
    heartbeat of the active tab; NULL while paused), the seconds booked so far as active,
    away and idle, the last input and the active total at that input (to re-book the time
    before an idle auto-pause as idle), when the tab was hidden, and how often another tab
    took the question over. A pause records why (``button`` or ``idle``). Responses keep
    the split: ``elapsed_seconds`` is from now on the active time; away, idle and wall time
    (first showing to submission) are new. Answers committed before this migration keep
    NULL there. A question open at migration time carries its old clock over as active time.
    """
    _run_script(
        db,
        """
        ALTER TABLE study_annotators ADD COLUMN active_tab TEXT;
        ALTER TABLE study_annotators ADD COLUMN tab_claimed_at REAL;
        ALTER TABLE assignments ADD COLUMN last_beat_at REAL;
        ALTER TABLE assignments ADD COLUMN hidden_at REAL;
        ALTER TABLE assignments ADD COLUMN active_seconds REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN away_seconds REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN idle_seconds REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN last_input_at REAL;
        ALTER TABLE assignments ADD COLUMN active_at_last_input REAL NOT NULL DEFAULT 0;
        ALTER TABLE assignments ADD COLUMN draft_saved_at REAL;
        ALTER TABLE assignments ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pauses ADD COLUMN reason TEXT NOT NULL DEFAULT 'button'
            CHECK (reason IN ('button', 'idle'));
        ALTER TABLE responses ADD COLUMN away_seconds REAL;
        ALTER TABLE responses ADD COLUMN idle_seconds REAL;
        ALTER TABLE responses ADD COLUMN wall_seconds REAL;
        ALTER TABLE responses ADD COLUMN idle_pauses INTEGER;
        ALTER TABLE responses ADD COLUMN takeovers INTEGER;
        CREATE INDEX pauses_by_assignment ON pauses (assignment_id)
        """,
    )
    moment = time.time()
    # Open, shown, unanswered questions: the old clock so far becomes active time.
    db.execute(
        """
        UPDATE assignments SET
            active_seconds = MAX(0, COALESCE(paused_at, :now) - first_shown_at - paused_seconds),
            last_beat_at = CASE WHEN paused_at IS NULL THEN :now END,
            last_input_at = :now,
            active_at_last_input = MAX(0, COALESCE(paused_at, :now) - first_shown_at - paused_seconds)
        WHERE first_shown_at IS NOT NULL
          AND id NOT IN (SELECT assignment_id FROM responses)
        """,
        {"now": moment},
    )


_ROLE_CHECK = re.compile(r"CHECK \(role IN \([^)]*\)\)")


def _m005_access(db: sqlite_utils.Database) -> None:
    """App settings (public read-only mode), per-study visibility on Results, the researcher role.

    The role list lives in a CHECK constraint of ``users``. SQLite cannot alter a CHECK, and
    rebuilding ``users`` inside the migration's transaction would fire the foreign keys of every
    table that points at it, so the constraint's text is rewritten in the schema, the
    procedure SQLite documents for loosening a CHECK (www.sqlite.org/lang_altertable.html).
    """
    _run_script(
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


def _m006_paper_rouge(db: sqlite_utils.Database) -> None:
    """The paper's metric beside ours on every stored model result: ``rouge_l_paper`` (the
    authors' ROUGE-L on the whole response) and ``score_paper`` (thresholded). Rows imported
    before keep NULL there (their files are not kept; re-import them to get the paper's metric)."""
    _run_script(
        db,
        """
        ALTER TABLE results ADD COLUMN rouge_l_paper REAL;
        ALTER TABLE results ADD COLUMN score_paper REAL
        """,
    )


def _m007_study_lead(db: sqlite_utils.Database) -> None:
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
    _run_script(
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


def _m008_aibench_question_review(db: sqlite_utils.Database) -> None:
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
    _run_script(
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


def _m009_pairwise(db: sqlite_utils.Database) -> None:
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
    _run_script(
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


def _m010_aibench_studies(db: sqlite_utils.Database) -> None:
    """People answering AIBench questions from a generated image alone (issue 22, item 2): a
    study is StrucText's or AIBench's, and an AIBench study's items are (image, question) pairs.

    - ``studies.benchmark``: the registry name (:mod:`structext_core.protocol`), StrucText's by
      default; an AIBench study's ``suite`` is the name of its stored data set.
    - ``study_items.paper_id``, ``system``, ``question_id``, ``level``, ``conference``: an AIBench
      item's (image, question) and its strata (NULL on StrucText items, whose strata are
      ``language``, ``task``, ``depth`` and ``width``). ``sample_id`` is the item's stable key
      and ``sample_json`` the item, as for StrucText; neither is ever sent to an annotator's
      browser for an AIBench item (they name the system).
    - ``responses.response`` of an AIBench item holds the chosen option's letter; ``rouge_l`` and
      ``exact_match`` hold its correctness (1 or 0), so the dashboard, agreement, adjudication and
      the final score read AIBench answers as they read StrucText's.
    """
    _run_script(
        db,
        """
        ALTER TABLE studies ADD COLUMN benchmark TEXT NOT NULL DEFAULT 'structext-eval'
            CHECK (benchmark IN ('structext-eval', 'aibench'));
        ALTER TABLE study_items ADD COLUMN paper_id TEXT;
        ALTER TABLE study_items ADD COLUMN system TEXT;
        ALTER TABLE study_items ADD COLUMN question_id TEXT;
        ALTER TABLE study_items ADD COLUMN level INTEGER;
        ALTER TABLE study_items ADD COLUMN conference TEXT;
        CREATE INDEX study_items_by_aibench_question ON study_items (paper_id, question_id, system)
        """,
    )


def _m011_pairwise_tabs(db: sqlite_utils.Database) -> None:
    """Pairwise studies keep the clock as studies do (issue 22): one tab holds a person's pair,
    and the lead may take a person off a study.

    - ``pairwise_members.active_tab``, ``tab_claimed_at``: the browser tab that holds the person's
      current pair (as ``study_annotators`` has them); ``removed_at``: taken off the study by the
      lead (their votes are kept).
    - ``pairwise_tasks.takeovers``: how often another tab took the pair over; ``pause_reason``:
      why the pair is paused now (``button`` or ``idle``); ``idle_pauses``: idle auto-pauses.
    - ``pairwise_votes.takeovers``, ``idle_pauses``: the task's counts when the vote was given.
    """
    _run_script(
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


def _m012_question_sendbacks(db: sqlite_utils.Database) -> None:
    """Questions the lead sends back to expert review from Results (issue 22, item 2): where people
    answering from the paper's own figure and a VLM solver part, the question (or the solver) is
    wrong, and the question goes back to AIBench's question review.

    - ``qreview_sendbacks``: one question of a stored data set (``dataset``, ``paper_id``,
      ``question_id``), the lead's ``reason`` and the evidence (``evidence_json``: the people's
      letters as counts, without names, the solver and its letter, the key, why it was listed);
      ``campaign_id`` NULL while it waits for the next review campaign of the data set (which takes
      it when it is created with that paper), else the campaign that reviews it; ``withdrawn_at``
      when the lead takes it back.
    """
    _run_script(
        db,
        """
        CREATE TABLE qreview_sendbacks (
            id INTEGER PRIMARY KEY,
            dataset TEXT NOT NULL,
            paper_id TEXT NOT NULL,
            question_id TEXT NOT NULL,
            campaign_id INTEGER REFERENCES qreview_campaigns(id) ON DELETE SET NULL,
            reason TEXT NOT NULL,
            evidence_json TEXT NOT NULL DEFAULT '{}',
            by_user INTEGER REFERENCES users(id),
            at REAL NOT NULL,
            withdrawn_at REAL
        );
        CREATE INDEX qreview_sendbacks_by_question ON qreview_sendbacks (dataset, paper_id, question_id);
        CREATE INDEX qreview_sendbacks_by_campaign ON qreview_sendbacks (campaign_id, paper_id)
        """,
    )


def _m013_item_kind_index(db: sqlite_utils.Database) -> None:
    """An index of study items by study and kind. ``kind`` was added after ``sample_json`` (a
    whole sample, often tens of kilobytes), so reading it from the row walks the sample's pages:
    counting an annotator's practice questions that way read every item of the study, three
    times on each submit and once more after a practice answer (about 5 ms each at 500
    Test-Hard items). With the index those counts read the index alone
    (``tests/studio/study/test_hot_queries.py``)."""
    _run_script(db, "CREATE INDEX study_items_by_kind ON study_items (study_id, kind)")


#: The schema, in order. Append new migrations; never edit or renumber shipped ones.
MIGRATIONS: list[Migration] = [
    Migration(1, "users, studies, human-baseline answers, model results", _m001_initial),
    Migration(2, "Real-Test rewrite campaigns, drafts, reviews and flags", _m002_rewrite_campaigns),
    Migration(3, "log-in sessions and failed log-in attempts", _m003_sessions_and_login),
    Migration(4, "the honest clock: heartbeats, active tab, idle and away time", _m004_honest_clock),
    Migration(5, "app settings and per-study visibility on Results", _m005_access),
    Migration(6, "the paper's ROUGE-L beside ours on stored model results", _m006_paper_rouge),
    Migration(7, "adjudication, practice and gold items, flags, lifecycle, audit log", _m007_study_lead),
    Migration(8, "AIBench question review: campaigns, drafts, adjudication, flags", _m008_aibench_question_review),
    Migration(9, "blind pairwise comparison of AIBench images", _m009_pairwise),
    Migration(10, "AIBench studies: people answer questions from a generated image", _m010_aibench_studies),
    Migration(11, "pairwise: one tab holds a person's pair, take-overs, idle pauses, removal", _m011_pairwise_tabs),
    Migration(12, "AIBench questions sent back to review from Results", _m012_question_sendbacks),
    Migration(13, "study items indexed by kind (counting practice questions reads no sample)", _m013_item_kind_index),
]
