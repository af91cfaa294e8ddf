"""User accounts: annotators and admins, with scrypt-hashed passwords.

Passwords are stored as ``scrypt$n$r$p$salt$hash`` (base64 salt and hash, 16-byte
random salt per password), checked in constant time. The first admin comes from the
environment (``STRUCTEXT_ADMIN_USER`` / ``STRUCTEXT_ADMIN_PASSWORD``) or from the
first-run screen.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import time

import sqlite_utils

from structext_core.storage import write_transaction

ROLES = ("annotator", "admin")
ADMIN_USER_ENV = "STRUCTEXT_ADMIN_USER"
ADMIN_PASSWORD_ENV = "STRUCTEXT_ADMIN_PASSWORD"
MIN_PASSWORD_LENGTH = 8
MAX_USERNAME_LENGTH = 64
USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# scrypt cost: n=2**14, r=8 needs 16 MiB and ~50 ms per hash, which makes guessing slow.
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_DKLEN = 2**14, 8, 1, 32


class AccountError(ValueError):
    """A user-caused account problem (bad name, short password, duplicate, ...)."""


def hash_password(password: str) -> str:
    """A salted scrypt hash of ``password`` in the ``scrypt$n$r$p$salt$hash`` format."""
    salt = secrets.token_bytes(16)
    digest = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_DKLEN)
    return "$".join(
        [
            "scrypt",
            str(SCRYPT_N),
            str(SCRYPT_R),
            str(SCRYPT_P),
            base64.b64encode(salt).decode(),
            base64.b64encode(digest).decode(),
        ]
    )


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` matches the stored hash (constant-time comparison)."""
    try:
        scheme, n, r, p, salt_b64, digest_b64 = stored.split("$")
        if scheme != "scrypt":
            return False
        salt, expected = base64.b64decode(salt_b64), base64.b64decode(digest_b64)
        actual = _scrypt(password, salt, int(n), int(r), int(p), len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=dklen, maxmem=64 * 1024 * 1024
    )


@functools.cache
def _dummy_hash() -> str:
    """A hash to check when the user does not exist, so a wrong name takes as long
    as a wrong password (no user enumeration by timing)."""
    return hash_password(secrets.token_hex(8))


def validate_username(username: str) -> str:
    """Return the cleaned user name or raise :class:`AccountError` saying what is wrong."""
    name = (username or "").strip()
    if not name:
        raise AccountError("User name is empty: type a name such as 'ann1'.")
    if len(name) > MAX_USERNAME_LENGTH:
        raise AccountError(f"User name is too long: at most {MAX_USERNAME_LENGTH} characters.")
    if not USERNAME_PATTERN.match(name):
        raise AccountError(
            f"User name {name!r} has characters that are not allowed: use letters, digits, "
            "'.', '_' and '-', starting with a letter or digit."
        )
    return name


def validate_password(password: str) -> None:
    """Raise :class:`AccountError` when ``password`` is too short."""
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise AccountError(f"Password is too short: use at least {MIN_PASSWORD_LENGTH} characters.")


def _validate_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"Role {role!r} is unknown: choose one of {', '.join(ROLES)}.")


def create_user(db: sqlite_utils.Database, username: str, password: str, role: str) -> dict:
    """Create an account and return it as ``{id, username, role}``.

    Raises :class:`AccountError` for an empty or malformed name, a short password, an
    unknown role or a name already taken (names are case-insensitive).
    """
    name = validate_username(username)
    validate_password(password)
    _validate_role(role)
    password_hash = hash_password(password)  # slow: outside the write lock
    try:
        with write_transaction(db):
            cursor = db.execute(
                "INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, ?, ?)",
                [name, password_hash, role, time.time()],
            )
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


def get_user(db: sqlite_utils.Database, username: str) -> dict | None:
    """The account ``{id, username, role}`` with this name (any case), or None."""
    rows = list(
        db.query(
            "SELECT id, username, role FROM users WHERE username = ? COLLATE NOCASE",
            [(username or "").strip()],
        )
    )
    return rows[0] if rows else None


def authenticate(db: sqlite_utils.Database, username: str, password: str) -> dict | None:
    """The account ``{id, username, role}`` when name and password match, else None."""
    rows = list(
        db.query(
            "SELECT id, username, role, password_hash FROM users WHERE username = ? COLLATE NOCASE",
            [(username or "").strip()],
        )
    )
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
    username = os.environ.get(ADMIN_USER_ENV, "").strip()
    password = os.environ.get(ADMIN_PASSWORD_ENV, "")
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


def list_users(db: sqlite_utils.Database, role: str | None = None) -> list[dict]:
    """Accounts ``{id, username, role, created_at}`` ordered by name, optionally one role."""
    if role is not None:
        _validate_role(role)
        return list(
            db.query(
                "SELECT id, username, role, created_at FROM users WHERE role = ? "
                "ORDER BY username COLLATE NOCASE",
                [role],
            )
        )
    return list(
        db.query("SELECT id, username, role, created_at FROM users ORDER BY username COLLATE NOCASE")
    )


def set_password(db: sqlite_utils.Database, username: str, password: str) -> None:
    """Replace the password of ``username``; :class:`AccountError` if unknown or too short."""
    validate_password(password)
    user = get_user(db, username)
    if user is None:
        raise AccountError(f"There is no user named {username!r}.")
    password_hash = hash_password(password)
    with write_transaction(db):
        db.execute("UPDATE users SET password_hash = ? WHERE id = ?", [password_hash, user["id"]])
