"""Account records: create (the first admin too), look up, authenticate, list, status, reset a password.

The first admin comes from the environment (``STRUCTEXT_ADMIN_USER`` / ``STRUCTEXT_ADMIN_PASSWORD``)
or from the first-run screen. Every change an admin makes here is written to the audit log
(:mod:`structext_core.studio.changes`) in the same transaction as the change.
"""

from __future__ import annotations

import sqlite3
import time

import sqlite_utils

from structext_core import settings
from structext_core.studio import changes
from structext_core.studio.accounts.credentials import (
    _STATUS_SQL,
    ADMIN_PASSWORD_ENV,
    ADMIN_USER_ENV,
    AccountError,
    _dummy_hash,
    _validate_role,
    hash_password,
    normal_username,
    validate_password,
    validate_username,
    verify_password,
)
from structext_core.studio.accounts.sessions import _revoke_user_sessions
from structext_core.studio.storage import write_transaction


def create_user(
    db: sqlite_utils.Database, username: str, password: str, role: str, *, by_user: int | None = None
) -> dict:
    """Create an account and return it as ``{id, username, role}``; ``by_user`` (the admin, None
    for scripts) is who the audit log names.

    Raises :class:`AccountError` for an empty or malformed name, a short password, an
    unknown role or a name already taken (names are case-insensitive).
    """
    name = validate_username(username)
    validate_password(password)
    _validate_role(role)
    password_hash = hash_password(password)  # slow: outside the write lock
    try:
        with write_transaction(db):
            _check_free(db, name)
            cursor = db.execute(
                "INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, ?, ?)",
                [name, password_hash, role, time.time()],
            )
            changes.record(db, by_user, "account.create", f"user:{cursor.lastrowid}", role=role)
    except sqlite3.IntegrityError:
        raise AccountError(f"User name {name!r} is already taken: choose another.") from None
    return {"id": cursor.lastrowid, "username": name, "role": role}


def create_first_admin(db: sqlite_utils.Database, username: str, password: str) -> dict:
    """Create the first admin (first-run screen); refused once any admin exists.

    The check and the insert are one transaction, so two people on the first-run screen
    at the same time cannot both become admin.
    """
    name = validate_username(username)
    validate_password(password)
    password_hash = hash_password(password)
    try:
        with write_transaction(db):
            _check_free(db, name)
            cursor = db.execute(
                "INSERT INTO users (username, password_hash, role, created_at)"
                " SELECT ?, ?, 'admin', ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE role = 'admin')",
                [name, password_hash, time.time()],
            )
    except sqlite3.IntegrityError:
        raise AccountError(f"User name {name!r} is already taken: choose another.") from None
    if cursor.rowcount == 0:
        raise AccountError("An admin account exists already: log in with it instead.")
    return {"id": cursor.lastrowid, "username": name, "role": "admin"}


def _check_free(db: sqlite_utils.Database, name: str) -> None:
    """Inside a write transaction: :class:`AccountError` when an account has the normal form of ``name``."""
    if _find(db, normal_username(name), "id"):
        raise AccountError(f"User name {name!r} is already taken: choose another.")


def _find(db: sqlite_utils.Database, normal: str, columns: str) -> list[dict]:
    """The account rows whose name has the normal form ``normal``. Stored names are ASCII (see the
    module notes), so the column's NOCASE comparison with the case-folded form is exact."""
    if not normal:
        return []
    return list(db.query(f"SELECT {columns} FROM users WHERE username = ? COLLATE NOCASE", [normal]))


def get_user(db: sqlite_utils.Database, username: object) -> dict | None:
    """The account ``{id, username, role}`` whose name has the normal form of ``username``, or None."""
    rows = _find(db, normal_username(username), "id, username, role")
    return rows[0] if rows else None


def authenticate(db: sqlite_utils.Database, username: object, password: object) -> dict | None:
    """The account ``{id, username, role}`` when name and password match, else None."""
    if not isinstance(password, str):
        password = ""
    rows = _find(db, normal_username(username), "id, username, role, password_hash")
    if not rows:
        verify_password(password or "", _dummy_hash())
        return None
    row = rows[0]
    if not verify_password(password or "", row.pop("password_hash")):
        return None
    return row


def has_admin(db: sqlite_utils.Database) -> bool:
    """True when at least one admin account exists."""
    return db.execute("SELECT 1 FROM users WHERE role = 'admin' LIMIT 1").fetchone() is not None


def ensure_admin_from_env(db: sqlite_utils.Database) -> None:
    """Create the admin named by ``STRUCTEXT_ADMIN_USER``/``_PASSWORD`` if it does not exist.

    Does nothing when neither variable is set or the account already exists (an
    existing account's password and role are never changed from the environment).
    Raises :class:`AccountError` when only one of the two is set or a value is invalid.
    """
    username, password = settings.admin_credentials()
    if not username and not password:
        return
    if not username or not password:
        missing = ADMIN_PASSWORD_ENV if username else ADMIN_USER_ENV
        raise AccountError(
            f"{missing} is not set: set both {ADMIN_USER_ENV} and {ADMIN_PASSWORD_ENV}, or neither."
        )
    if get_user(db, username) is not None:
        return
    try:
        validate_username(username)
        validate_password(password)
    except AccountError as error:
        raise AccountError(f"{ADMIN_USER_ENV}/{ADMIN_PASSWORD_ENV}: {error}") from None
    try:
        create_user(db, username, password, "admin")
    except AccountError:
        if get_user(db, username) is None:  # not a race with another session: re-raise
            raise


def list_users(
    db: sqlite_utils.Database, role: str | None = None, *, include_inactive: bool = False
) -> list[dict]:
    """Accounts ``{id, username, role, created_at, status}`` ordered by name, optionally one
    role. Only active ones (those that can log in and be given work) unless ``include_inactive``,
    which adds the disabled and deleted ones (``status`` says which)."""
    clauses, params = [], []
    if role is not None:
        _validate_role(role)
        clauses.append("role = ?")
        params.append(role)
    if not include_inactive:
        clauses.append(f"{_STATUS_SQL} = 'active'")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return list(db.query(
        f"SELECT id, username, role, created_at, {_STATUS_SQL} AS status FROM users {where}"
        " ORDER BY username COLLATE NOCASE",
        params,
    ))


def account_status(db: sqlite_utils.Database, user_id: int) -> str | None:
    """``active``, ``disabled`` or ``deleted`` (None: no such account)."""
    row = db.execute(f"SELECT {_STATUS_SQL} FROM users WHERE id = ?", [user_id]).fetchone()
    return row[0] if row else None


def set_password(
    db: sqlite_utils.Database, username: str, password: str, *, by_user: int | None = None
) -> None:
    """Replace the password of ``username`` and end every log-in session of that account
    (in the same transaction); :class:`AccountError` if unknown, deleted or too short.
    ``by_user`` (the admin) is who the audit log names."""
    validate_password(password)
    user = get_user(db, username)
    if user is None:
        raise AccountError(f"There is no user named {username!r}.")
    if account_status(db, user["id"]) == "deleted":
        raise AccountError(f"{user['username']!r} is a deleted account: it has no password to set.")
    password_hash = hash_password(password)
    with write_transaction(db):
        db.execute("UPDATE users SET password_hash = ? WHERE id = ?", [password_hash, user["id"]])
        ended = _revoke_user_sessions(db, user["id"], "password changed", time.time())
        changes.record(db, by_user, "account.password_reset", f"user:{user['id']}", sessions_ended=ended)
