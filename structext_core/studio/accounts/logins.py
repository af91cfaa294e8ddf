"""Log-in: the password check behind a throttle, locks and their unlocking, and changing one's own password.

Failed attempts are counted per user name in its normal form (the one the lookup uses), for names of accounts and
made-up names alike, so a lock says nothing about which names exist. An attempt is counted
before its password is checked and the count is cleared when it succeeds: attempts sent in
parallel cannot slip past the limit. From the fifth failure on, the name is locked: 1 minute,
doubling with each further failure, at most an hour; a locked attempt is refused unchecked.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import changes, durations
from structext_core.studio.accounts.credentials import (
    _STATUS_SQL,
    AccountError,
    hash_password,
    normal_username,
    validate_password,
    verify_password,
)
from structext_core.studio.accounts.sessions import _revoke_user_sessions
from structext_core.studio.accounts.users import account_status, authenticate, get_user, list_users
from structext_core.studio.storage import write_transaction

MAX_FAILED_LOGINS = 5
FIRST_LOCK_SECONDS = 60
MAX_LOCK_SECONDS = 3600
#: Failures older than this (with no lock running) are forgotten.
FAILURE_MEMORY_SECONDS = 24 * 3600
WRONG_LOGIN_MESSAGE = "Log-in failed: the user name or the password is wrong."
DISABLED_MESSAGE = "This account is disabled: ask an admin to enable it again."
WRONG_CURRENT_PASSWORD = "The current password is wrong: your password was not changed."


@dataclass(frozen=True)
class LoginOutcome:
    """The result of :func:`log_in`: ``user`` on success, else the ``message`` to show and,
    when the name is locked, for how many more seconds (``locked_seconds``)."""

    user: dict | None
    message: str | None = None
    locked_seconds: float = 0.0


def _name_key(username: object) -> str:
    """The lock key of a name: the hash of its :func:`normal_username`, the form the lookup uses."""
    return hashlib.sha256(normal_username(username).encode("utf-8", "surrogatepass")).hexdigest()


def lock_seconds(failures: int) -> float:
    """How long a name is locked after ``failures`` failed attempts (0 below the limit)."""
    if failures < MAX_FAILED_LOGINS:
        return 0.0
    return float(min(FIRST_LOCK_SECONDS * 2 ** min(failures - MAX_FAILED_LOGINS, 16), MAX_LOCK_SECONDS))


format_duration = durations.words


def locked_message(remaining: float) -> str:
    """What a person on a locked user name reads."""
    return (
        f"Too many failed log-ins for this user name: it is locked for {format_duration(remaining)} more. "
        "Try again then, or ask an admin to unlock it (Studies, Accounts)."
    )


def log_in(
    db: sqlite_utils.Database, username: str, password: str, *, now: float | None = None
) -> LoginOutcome:
    """Check a log-in attempt against the throttle and the password (see the notes above)."""
    now = time.time() if now is None else now
    try:
        key = _name_key(username)
    except AccountError as error:  # not text: a forged widget value, nothing to count
        return LoginOutcome(None, f"Log-in failed: {error}")
    locked, failures, lock = _count_attempt(db, key, now)
    if locked:
        return LoginOutcome(None, locked_message(locked), locked)
    user = authenticate(db, username, password)  # slow (scrypt): outside the write lock
    if user is not None:
        with write_transaction(db):
            db.execute("DELETE FROM login_failures WHERE name_key = ?", [key])
        if account_status(db, user["id"]) != "active":  # told only to whoever knows the password
            return LoginOutcome(None, DISABLED_MESSAGE)
        return LoginOutcome(user)
    return LoginOutcome(None, _failure_message(WRONG_LOGIN_MESSAGE, failures, lock), lock)


def _count_attempt(db: sqlite_utils.Database, key: str, now: float) -> tuple[float, int, float]:
    """Count one attempt on the name ``key`` before its password is checked: (seconds of a lock
    already running, then nothing is counted; failures so far with this one; the lock it starts)."""
    with write_transaction(db):
        row = db.execute(
            "SELECT failures, last_failed_at, locked_until FROM login_failures WHERE name_key = ?", [key]
        ).fetchone()
        if row is not None and row[2] is not None and now < row[2]:
            return row[2] - now, 0, 0.0
        failures = row[0] if row is not None and now - row[1] < FAILURE_MEMORY_SECONDS else 0
        failures += 1
        lock = lock_seconds(failures)
        db.execute(
            "INSERT INTO login_failures (name_key, failures, last_failed_at, locked_until) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (name_key) DO UPDATE SET failures = excluded.failures,"
            " last_failed_at = excluded.last_failed_at, locked_until = excluded.locked_until",
            [key, failures, now, now + lock if lock else None],
        )
    return 0.0, failures, lock


def _failure_message(wrong: str, failures: int, lock: float) -> str:
    """``wrong``, and what the failures so far mean: the lock just started, or how many are left."""
    if lock:
        return (f"{wrong} After {failures} failed attempts this user name is locked for "
                f"{format_duration(lock)}: try again then, or ask an admin to unlock it.")
    left = MAX_FAILED_LOGINS - failures
    if left <= 2:
        attempts = "attempt locks" if left == 1 else "attempts lock"
        return f"{wrong} {left} more failed {attempts} this user name for {format_duration(FIRST_LOCK_SECONDS)}."
    return wrong


def change_own_password(
    db: sqlite_utils.Database,
    user_id: int,
    current_password: str,
    new_password: str,
    *,
    keep_token: str | None = None,
    now: float | None = None,
) -> int:
    """A logged-in person changes their own password; returns how many of their other sessions
    ended. The session of ``keep_token`` (the one making the change) stays logged in.

    The current password is checked like a log-in and counts on the same throttle (a wrong one
    is a failed log-in of that user name, and a locked name cannot change its password either),
    so this form is no way round the lock. Raises :class:`AccountError` saying what is wrong
    (short new password, wrong current password, a lock, the same password again); then
    nothing changed but the failure count.
    """
    now = time.time() if now is None else now
    validate_password(new_password)
    row = db.execute(
        f"SELECT username, password_hash, {_STATUS_SQL} FROM users WHERE id = ?", [user_id]
    ).fetchone()
    if row is None or row[2] != "active":
        raise AccountError("This account cannot change its password: it is disabled or deleted. Ask an admin.")
    username, stored = row[0], row[1]
    key = _name_key(username)
    locked, failures, lock = _count_attempt(db, key, now)
    if locked:
        raise AccountError(locked_message(locked))
    if not verify_password(current_password or "", stored):  # slow (scrypt): outside the write lock
        raise AccountError(_failure_message(WRONG_CURRENT_PASSWORD, failures, lock))
    with write_transaction(db):
        db.execute("DELETE FROM login_failures WHERE name_key = ?", [key])
    if hmac.compare_digest((new_password or "").encode("utf-8"), (current_password or "").encode("utf-8")):
        raise AccountError("The new password is the same as the current one: choose another.")
    password_hash = hash_password(new_password)
    with write_transaction(db):
        db.execute("UPDATE users SET password_hash = ? WHERE id = ?", [password_hash, user_id])
        ended = _revoke_user_sessions(db, user_id, "password changed", now, keep_token=keep_token)
        changes.record(db, user_id, "account.password_change", f"user:{user_id}", other_sessions_ended=ended)
    return ended


def unlock_login(db: sqlite_utils.Database, username: str, *, by_user: int | None = None) -> bool:
    """Clear the failed attempts and any lock of ``username`` (admin); True if there were any."""
    user = get_user(db, username)
    with write_transaction(db):
        cursor = db.execute("DELETE FROM login_failures WHERE name_key = ?", [_name_key(username)])
        if cursor.rowcount and user is not None:
            changes.record(db, by_user, "account.unlock", f"user:{user['id']}")
    return cursor.rowcount > 0


def login_failures(db: sqlite_utils.Database, *, now: float | None = None) -> list[dict]:
    """Accounts with failed attempts on record: ``{username, failures, locked_seconds}``
    (seconds of lock left, 0 when not locked), most locked first. Made-up names are not
    listed (only their hash is kept); their locks run out by themselves."""
    now = time.time() if now is None else now
    rows = {
        key: (failures, locked_until)
        for key, failures, locked_until in db.execute(
            "SELECT name_key, failures, locked_until FROM login_failures"
        ).fetchall()
    }
    found = []
    for user in list_users(db, include_inactive=True):
        if (entry := rows.get(_name_key(user["username"]))) is not None:
            failures, locked_until = entry
            remaining = max(0.0, locked_until - now) if locked_until is not None else 0.0
            found.append({"username": user["username"], "failures": failures, "locked_seconds": remaining})
    return sorted(found, key=lambda row: (-row["locked_seconds"], row["username"].lower()))
