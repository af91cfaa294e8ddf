"""User accounts: annotators and admins, with scrypt-hashed passwords.

Passwords are stored as ``scrypt$n$r$p$salt$hash`` (base64 salt and hash, 16-byte
random salt per password), checked in constant time. The first admin comes from the
environment (``STRUCTEXT_ADMIN_USER`` / ``STRUCTEXT_ADMIN_PASSWORD``) or from the
first-run screen.

An account is *active*, *disabled* (``users.disabled_at``: it cannot log in, its sessions
ended, its data stays; an admin enables it again) or *deleted*. A deleted account keeps its
row, because answers, rewrites and reviews point at it: its name becomes ``deleted-user-<id>``
(the old name is free again), its password hash the unusable :data:`DELETED_PASSWORD_HASH`,
and, when the admin chose to, its study answers and unfinished rewrite work are removed
(:func:`deletion_plan` says exactly what). The last enabled admin can be neither disabled nor
deleted. Every change an admin makes here is written to the audit log
(:mod:`structext_core.studio.changes`) in the same transaction as the change.

A user name has one normal form, :func:`normal_username`, used for everything that compares
names: the log-in lock, the lookup, the check that a new name is free and the password check.
It is computed from at most :data:`MAX_NAME_INPUT` characters of what was typed (so padding a
name with 1,000 spaces gives neither another lock nor another account), then NFKC-normalised,
trimmed and case-folded. A new name must be its own trimmed NFKC form with no invisible
character (zero-width, format or control characters: refused with a message naming it), and
match :data:`USERNAME_PATTERN`. Names stored before this rule need no migration: every name
was checked against the same ASCII pattern since the first schema, and for an ASCII name the
normal form is the lower-case name, which is what the ``users.username`` column compares
(``COLLATE NOCASE``), so a lookup by the normal form finds exactly the accounts it found before.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import math
import re
import secrets
import sqlite3
import time
import unicodedata
from dataclasses import dataclass

import sqlite_utils

from structext_core import settings
from structext_core.studio import changes, durations
from structext_core.studio.storage import write_transaction
from structext_core.text.words import plural

ROLES = ("annotator", "researcher", "admin")
ADMIN_USER_ENV = settings.ADMIN_USER_ENV
ADMIN_PASSWORD_ENV = settings.ADMIN_PASSWORD_ENV
MIN_PASSWORD_LENGTH = 8
MAX_USERNAME_LENGTH = 64
#: At most this many characters of a typed name are read (before anything else is done to it).
MAX_NAME_INPUT = 256
USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Names of deleted accounts are this prefix and the account's id; no one else may take one.
DELETED_NAME_PREFIX = "deleted-user-"
#: The password hash of a deleted account: not of the ``scrypt$...`` form, so no password matches.
DELETED_PASSWORD_HASH = "!deleted"
STATUSES = ("active", "disabled", "deleted")

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
    """True when ``password`` matches the stored hash (constant-time comparison); never for a
    password that is not text."""
    if not isinstance(password, str):
        return False
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


def _bounded_text(username: object) -> str:
    """What was typed, as text, cut to :data:`MAX_NAME_INPUT` characters; :class:`AccountError`
    for anything that is not text (a forged widget value)."""
    if username is None:
        return ""
    if not isinstance(username, str):
        raise AccountError(f"The user name must be text, not {type(username).__name__}: type a name such as 'ann1'.")
    return username[:MAX_NAME_INPUT]


def normal_username(username: object) -> str:
    """The one form names are compared in: at most :data:`MAX_NAME_INPUT` characters of
    ``username``, NFKC-normalised, trimmed and case-folded (see the module notes).
    :class:`AccountError` when ``username`` is not text."""
    name = unicodedata.normalize("NFKC", _bounded_text(username)).strip()
    return unicodedata.normalize("NFKC", name.casefold())


def _invisible(name: str) -> tuple[int, str] | None:
    """The first invisible character of ``name`` (format, control, unassigned, zero-width or
    other non-printing): (its position counted from 1, its U+ code and Unicode name)."""
    for position, char in enumerate(name, start=1):
        if unicodedata.category(char) in ("Cf", "Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (
            not char.isprintable() and char != " "
        ):
            label = unicodedata.name(char, "control character" if unicodedata.category(char) == "Cc" else "unnamed character")
            return position, f"U+{ord(char):04X} {label}"
    return None


def validate_username(username: object) -> str:
    """Return the user name to store (trimmed, NFKC-normalised, case kept) or raise
    :class:`AccountError` saying what is wrong. Its :func:`normal_username` is what makes
    it unique."""
    text = _bounded_text(username)
    if len(text) >= MAX_NAME_INPUT:
        raise AccountError(f"User name is too long: at most {MAX_USERNAME_LENGTH} characters.")
    name = unicodedata.normalize("NFKC", text).strip()
    if not name:
        raise AccountError("User name is empty: type a name such as 'ann1'.")
    if (invisible := _invisible(name)) is not None:
        position, label = invisible
        raise AccountError(
            f"User name has an invisible character ({label}) at position {position}: a name must "
            "not differ from another only by characters no one can see. Retype the name."
        )
    if len(name) > MAX_USERNAME_LENGTH:
        raise AccountError(f"User name is too long: at most {MAX_USERNAME_LENGTH} characters.")
    if not USERNAME_PATTERN.match(name):
        raise AccountError(
            f"User name {name!r} has characters that are not allowed: use letters, digits, "
            "'.', '_' and '-', starting with a letter or digit."
        )
    if normal_username(name).startswith(DELETED_NAME_PREFIX):
        raise AccountError(
            f"User names starting with {DELETED_NAME_PREFIX!r} are kept for deleted accounts: choose another."
        )
    return name


def validate_password(password: str) -> None:
    """Raise :class:`AccountError` when ``password`` is not text or too short."""
    if password is not None and not isinstance(password, str):
        raise AccountError(f"The password must be text, not {type(password).__name__}.")
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise AccountError(f"Password is too short: use at least {MIN_PASSWORD_LENGTH} characters.")


def _validate_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"Role {role!r} is unknown: choose one of {', '.join(ROLES)}.")


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


_STATUS_SQL = (
    f"CASE WHEN password_hash = '{DELETED_PASSWORD_HASH}' THEN 'deleted'"
    " WHEN disabled_at IS NOT NULL THEN 'disabled' ELSE 'active' END"
)


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


# ---------------------------------------------------------------- log-in sessions
#
# A session token is ``v1.<expiry>.<random>.<signature>``: 32 random bytes, the expiry (Unix
# seconds, rounded up) and an HMAC-SHA256 of the three over a server key. A token whose
# signature does not match is refused before the database is asked about it; a signed one is
# then looked up by its sha256 (the only form stored), and must be neither expired nor revoked.
# The token carries no password and no user data.

SESSION_HOURS_ENV = settings.SESSION_HOURS_ENV
SESSION_SECRET_ENV = settings.SESSION_SECRET_ENV
DEFAULT_SESSION_HOURS = settings.DEFAULT_SESSION_HOURS
MAX_SESSION_HOURS = settings.MAX_SESSION_HOURS
MIN_SECRET_LENGTH = settings.MIN_SECRET_LENGTH
TOKEN_VERSION = "v1"
#: Ours are about 100 characters; anything much longer is refused before it is parsed.
MAX_TOKEN_LENGTH = 200
#: Expired and revoked sessions are kept this long (for the notice), then deleted.
SESSION_ROWS_KEPT_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class SessionCheck:
    """What a session token is worth: ``user`` (``{id, username, role}``) when it is valid,
    else None and ``reason``: ``"malformed"``, ``"forged"``, ``"expired"``, ``"revoked"``,
    ``"disabled"`` (its account is disabled or deleted) or ``"unknown"`` (signed by us but not
    on record, e.g. its account was deleted)."""

    user: dict | None
    reason: str | None = None
    expires_at: float | None = None


def session_lifetime_seconds() -> float:
    """How long a log-in lasts: ``$STRUCTEXT_SESSION_HOURS`` hours (fractions allowed), 12 by
    default; :class:`AccountError` for a value that is not a number in (0, 720]."""
    try:
        return settings.session_hours() * 3600
    except settings.SettingError as error:
        raise AccountError(str(error)) from None


def _signing_key(db: sqlite_utils.Database) -> bytes:
    """``$STRUCTEXT_SESSION_SECRET`` when set, else a random key made once and kept in the
    database. Changing the secret ends every session."""
    try:
        configured = settings.session_secret()
    except settings.SettingError as error:
        raise AccountError(str(error)) from None
    if configured:
        return hashlib.sha256(b"structext-session-key\0" + configured.encode("utf-8")).digest()
    row = db.execute("SELECT secret FROM login_secret WHERE id = 1").fetchone()
    if row is None:
        with write_transaction(db):  # OR IGNORE: two processes starting together keep one key
            db.execute(
                "INSERT OR IGNORE INTO login_secret (id, secret, created_at) VALUES (1, ?, ?)",
                [secrets.token_hex(32), time.time()],
            )
        row = db.execute("SELECT secret FROM login_secret WHERE id = 1").fetchone()
    return bytes.fromhex(row[0])


def _signature(key: bytes, payload: str) -> str:
    digest = hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def issue_session(
    db: sqlite_utils.Database, user_id: int, *, lifetime: float | None = None, now: float | None = None
) -> str:
    """A new session token for ``user_id``, valid ``lifetime`` seconds (default
    :func:`session_lifetime_seconds`). Only its sha256 is stored."""
    now = time.time() if now is None else now
    lifetime = session_lifetime_seconds() if lifetime is None else lifetime
    expires_at = now + lifetime
    payload = f"{TOKEN_VERSION}.{math.ceil(expires_at)}.{secrets.token_urlsafe(32)}"
    token = f"{payload}.{_signature(_signing_key(db), payload)}"
    with write_transaction(db):
        db.execute("DELETE FROM login_sessions WHERE expires_at < ?", [now - SESSION_ROWS_KEPT_SECONDS])
        db.execute(
            "INSERT INTO login_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
            [_token_hash(token), user_id, now, expires_at],
        )
    return token


def verify_session(db: sqlite_utils.Database, token: str | None, *, now: float | None = None) -> SessionCheck:
    """Check a token from a cookie or the session: the user when it is ours, unexpired and
    not revoked. The signature is checked first, so a made-up or altered token costs no lookup."""
    now = time.time() if now is None else now
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        return SessionCheck(None, "malformed")
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != TOKEN_VERSION or not parts[1].isdigit() or not parts[2]:
        return SessionCheck(None, "malformed")
    if not hmac.compare_digest(parts[3], _signature(_signing_key(db), ".".join(parts[:3]))):
        return SessionCheck(None, "forged")
    if int(parts[1]) <= now:
        return SessionCheck(None, "expired")
    return _session_of(db, _token_hash(token), now)


def _session_of(db: sqlite_utils.Database, token_hash: str, now: float) -> SessionCheck:
    """The check of the stored session whose token has the sha256 ``token_hash``."""
    rows = list(db.query(
        f"SELECT s.expires_at, s.revoked_at, u.id, u.username, u.role, {_STATUS_SQL} AS status"
        " FROM login_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?",
        [token_hash],
    ))
    if not rows:
        return SessionCheck(None, "unknown")
    row = rows[0]
    if row["status"] != "active":  # disabling ends the sessions too; this holds whatever happens
        return SessionCheck(None, "disabled")
    if row["revoked_at"] is not None:
        return SessionCheck(None, "revoked")
    if row["expires_at"] <= now:
        return SessionCheck(None, "expired")
    user = {"id": row["id"], "username": row["username"], "role": row["role"]}
    return SessionCheck(user, None, row["expires_at"])


PASS_VERSION = "p1"


def session_pass(db: sqlite_utils.Database, token: str, scope: str) -> str:
    """A pass that lets a page's script speak for the session of ``token`` about ``scope``
    alone (such as one question's heartbeats in one tab), outside the page's own runs.

    It holds the sha256 of the token (what the database keeps, not the token) and a signature
    over it and ``scope``: it cannot log in, cannot be turned to another scope, and is worth
    nothing once its session ends (log-out, password change, disabled account, expiry)."""
    token_hash = _token_hash(token)
    return f"{PASS_VERSION}.{token_hash}.{_signature(_signing_key(db), f'pass|{token_hash}|{scope}')}"


def check_session_pass(db: sqlite_utils.Database, value: object, scope: str, *,
                       now: float | None = None) -> SessionCheck:
    """The user a pass of :func:`session_pass` speaks for about ``scope``, as
    :func:`verify_session` answers for a token (reasons: malformed, forged, expired, revoked,
    disabled, unknown). The signature is checked first: a made-up pass costs no lookup."""
    now = time.time() if now is None else now
    if not isinstance(value, str) or len(value) > MAX_TOKEN_LENGTH or not value.isascii():
        return SessionCheck(None, "malformed")
    parts = value.split(".")
    if len(parts) != 3 or parts[0] != PASS_VERSION or len(parts[1]) != 64 or not scope.isascii():
        return SessionCheck(None, "malformed")
    expected = _signature(_signing_key(db), f"pass|{parts[1]}|{scope}")
    if not hmac.compare_digest(parts[2], expected):
        return SessionCheck(None, "forged")
    return _session_of(db, parts[1], now)


def revoke_user_sessions(db: sqlite_utils.Database, user_id: int, reason: str) -> int:
    """End every open session of ``user_id`` (log-out, password change); the number ended."""
    with write_transaction(db):
        return _revoke_user_sessions(db, user_id, reason, time.time())


def _revoke_user_sessions(
    db: sqlite_utils.Database, user_id: int, reason: str, now: float, *, keep_token: str | None = None
) -> int:
    """Inside a write transaction: end the open sessions of ``user_id``, all but ``keep_token``'s."""
    cursor = db.execute(
        "UPDATE login_sessions SET revoked_at = ?, revoked_reason = ?"
        " WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? AND token_hash != ?",
        [now, reason, user_id, now, _token_hash(keep_token) if keep_token else ""],
    )
    return cursor.rowcount


# ---------------------------------------------------------------- log-in throttling
#
# Failed attempts are counted per user name in its normal form (the one the lookup uses), for names of accounts and
# made-up names alike, so a lock says nothing about which names exist. An attempt is counted
# before its password is checked and the count is cleared when it succeeds: attempts sent in
# parallel cannot slip past the limit. From the fifth failure on, the name is locked: 1 minute,
# doubling with each further failure, at most an hour; a locked attempt is refused unchecked.

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


# ---------------------------------------------------------------- disable, enable, delete
#
# Each change is one write transaction that re-reads the account and the admins inside it, so
# two admins acting at once cannot disable the last two enabled admins between them.


def _account(db: sqlite_utils.Database, user_id: int) -> dict:
    rows = list(db.query(
        f"SELECT id, username, role, disabled_at, {_STATUS_SQL} AS status FROM users WHERE id = ?", [user_id]
    ))
    if not rows:
        raise AccountError(f"There is no account with id {user_id}.")
    return rows[0]


def _check_may_end(db: sqlite_utils.Database, account: dict, by_user: int | None, verb: str) -> None:
    """Inside a write transaction: refuse to ``verb`` (disable, delete) one's own account or the
    last enabled admin."""
    if by_user is not None and account["id"] == by_user:
        raise AccountError(f"You cannot {verb} your own account: ask another admin to do it.")
    if account["role"] == "admin" and account["status"] == "active":
        others = db.execute(
            f"SELECT COUNT(*) FROM users WHERE role = 'admin' AND id != ? AND {_STATUS_SQL} = 'active'",
            [account["id"]],
        ).fetchone()[0]
        if not others:
            raise AccountError(
                f"{account['username']!r} is the last enabled admin: it cannot be {verb}d. "
                "Create or enable another admin first."
            )


def disable_user(db: sqlite_utils.Database, user_id: int, *, by_user: int | None) -> int:
    """Disable an account: it can no longer log in and every open session of it ends at once;
    its data stays. Returns how many sessions ended. :class:`AccountError` (nothing changed) for
    an unknown, deleted or already disabled account, one's own, or the last enabled admin."""
    now = time.time()
    with write_transaction(db):
        account = _account(db, user_id)
        if account["status"] == "deleted":
            raise AccountError(f"{account['username']!r} is deleted already.")
        if account["status"] == "disabled":
            raise AccountError(f"{account['username']!r} is disabled already.")
        _check_may_end(db, account, by_user, "disable")
        db.execute("UPDATE users SET disabled_at = ? WHERE id = ?", [now, user_id])
        ended = _revoke_user_sessions(db, user_id, "account disabled", now)
        changes.record(db, by_user, "account.disable", f"user:{user_id}", sessions_ended=ended)
    return ended


def enable_user(db: sqlite_utils.Database, user_id: int, *, by_user: int | None) -> None:
    """Let a disabled account log in again (with its old password). :class:`AccountError` for an
    unknown, deleted or active account."""
    with write_transaction(db):
        account = _account(db, user_id)
        if account["status"] == "deleted":
            raise AccountError(f"{account['username']!r} is a deleted account: it cannot be enabled again.")
        if account["status"] == "active":
            raise AccountError(f"{account['username']!r} is not disabled.")
        db.execute("UPDATE users SET disabled_at = NULL WHERE id = ?", [user_id])
        changes.record(db, by_user, "account.enable", f"user:{user_id}")


def _stay(n: int) -> str:
    return "stays" if n == 1 else "stay"


@dataclass(frozen=True)
class DeletionPlan:
    """What deleting an account does, counted: the admin reads it before confirming, and
    :func:`delete_user` returns it as it was carried out.

    Either way the account gets the name ``new_name`` and can no longer log in. With *keep
    their data* everything below stays under that name; with *remove their data* the counts
    in :attr:`removed` are deleted, and what :attr:`kept_anyway` lists stays.
    """

    user_id: int
    username: str
    role: str
    new_name: str
    #: Studies they take part in (or took part in, before being removed from them).
    studies: int
    study_answers: int
    #: Questions of their queues not answered yet (with any draft typed so far).
    unanswered: int
    study_flags: int
    #: Rewrite items dealt to them, approved or not.
    rewrite_items: int
    #: Of those not approved: drafts, and submissions (with their reviews) to delete.
    rewrite_drafts: int
    rewrite_submissions: int
    rewrite_flags: int
    approved_rewrites: int
    #: Reviews and audit-log entries they wrote as an admin (kept: the record of who decided what).
    reviews_written: int

    @property
    def keep(self) -> list[str]:
        """What *keep their data* does, one sentence a line."""
        return [
            f"The account is renamed {self.new_name!r} and can no longer log in; the name "
            f"{self.username!r} is free again. Its open sessions end.",
            f"Their {plural(self.study_answers, 'study answer')} {_stay(self.study_answers)}, under {self.new_name!r}; in the "
            f"{plural(self.studies, 'study')} they take part in they are marked removed (the export says so) "
            "and their unanswered questions are no longer asked.",
            f"Their {plural(self.rewrite_items, 'rewrite item')} ({self.approved_rewrites:,} approved) "
            f"{_stay(self.rewrite_items)} in their "
            f"campaigns under {self.new_name!r}, drafts and submissions included.",
        ]

    @property
    def removed(self) -> list[str]:
        """What *remove their data* deletes, one line per kind of record."""
        return [
            f"{plural(self.study_answers, 'study answer')} with their timing and any score override",
            f"{plural(self.unanswered, 'unanswered question')} of their queues, with any draft typed",
            f"their place in {plural(self.studies, 'study')} (the studies themselves stay)",
            f"{plural(self.study_flags, 'flag')} they raised on study questions",
            f"{plural(self.rewrite_drafts, 'rewrite draft')} and {plural(self.rewrite_submissions, 'submission')} "
            "(with their reviews) of their rewrite items that are not approved; those items go back "
            f"to 'to do' and stay in their campaigns under {self.new_name!r}",
            f"{plural(self.rewrite_flags, 'flag')} they raised on rewrite samples",
        ]

    @property
    def kept_anyway(self) -> list[str]:
        """What *remove their data* cannot remove, and why."""
        return [
            f"{plural(self.approved_rewrites, 'approved rewrite')}: part of the campaign's Real-Test "
            f"export, kept under {self.new_name!r}",
            f"{plural(self.reviews_written, 'review')} they wrote, and the audit log of the changes they made: "
            "the record of who decided what",
            "studies and campaigns they created (they belong to the project)",
        ]


def _new_name(db: sqlite_utils.Database, user_id: int) -> str:
    name = f"{DELETED_NAME_PREFIX}{user_id}"
    suffix = 1
    while db.execute("SELECT 1 FROM users WHERE username = ? COLLATE NOCASE AND id != ?",
                     [name, user_id]).fetchone():
        suffix += 1  # a name taken before the prefix was reserved
        name = f"{DELETED_NAME_PREFIX}{user_id}-{suffix}"
    return name


_UNAPPROVED_ITEMS = "SELECT id FROM rewrite_items WHERE annotator_id = ? AND status != 'approved'"


def deletion_plan(db: sqlite_utils.Database, user_id: int) -> DeletionPlan:
    """Count what deleting ``user_id`` would keep and remove (nothing is written).
    :class:`AccountError` for an unknown or already deleted account."""
    account = _account(db, user_id)
    if account["status"] == "deleted":
        raise AccountError(f"{account['username']!r} is deleted already.")
    return _plan(db, account)


def _plan(db: sqlite_utils.Database, account: dict) -> DeletionPlan:
    user_id = account["id"]

    def one(sql: str) -> int:
        return int(db.execute(sql, [user_id]).fetchone()[0])

    return DeletionPlan(
        user_id=user_id, username=account["username"], role=account["role"], new_name=_new_name(db, user_id),
        studies=one("SELECT COUNT(*) FROM study_annotators WHERE user_id = ?"),
        study_answers=one("SELECT COUNT(*) FROM responses WHERE user_id = ?"),
        unanswered=one("SELECT COUNT(*) FROM assignments a WHERE a.user_id = ?"
                       " AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.assignment_id = a.id)"),
        study_flags=one("SELECT COUNT(*) FROM study_flags WHERE user_id = ?"),
        rewrite_items=one("SELECT COUNT(*) FROM rewrite_items WHERE annotator_id = ?"),
        rewrite_drafts=one(f"SELECT COUNT(*) FROM rewrite_drafts WHERE item_id IN ({_UNAPPROVED_ITEMS})"),
        rewrite_submissions=one(f"SELECT COUNT(*) FROM rewrite_submissions WHERE item_id IN ({_UNAPPROVED_ITEMS})"),
        rewrite_flags=one("SELECT COUNT(*) FROM rewrite_flags WHERE user_id = ?"),
        approved_rewrites=one("SELECT COUNT(*) FROM rewrite_items WHERE annotator_id = ? AND status = 'approved'"),
        reviews_written=one("SELECT COUNT(*) FROM rewrite_reviews WHERE reviewer_id = ?"),
    )


def delete_user(
    db: sqlite_utils.Database, user_id: int, *, remove_data: bool, by_user: int | None
) -> DeletionPlan:
    """Delete an account, keeping its data under an anonymous name or removing what can be
    removed (see :class:`DeletionPlan`, which is returned as carried out). One transaction:
    everything or, on any refusal or error, nothing. :class:`AccountError` for an unknown or
    deleted account, one's own, or the last enabled admin."""
    now = time.time()
    with write_transaction(db):
        account = _account(db, user_id)
        if account["status"] == "deleted":
            raise AccountError(f"{account['username']!r} is deleted already.")
        _check_may_end(db, account, by_user, "delete")
        plan = _plan(db, account)
        if remove_data:
            _remove_data(db, user_id)
        else:
            db.execute("UPDATE study_annotators SET removed_at = ? WHERE user_id = ? AND removed_at IS NULL",
                       [now, user_id])
        db.execute(
            "UPDATE users SET username = ?, password_hash = ?, disabled_at = COALESCE(disabled_at, ?) WHERE id = ?",
            [plan.new_name, DELETED_PASSWORD_HASH, now, user_id],
        )
        db.execute("DELETE FROM login_sessions WHERE user_id = ?", [user_id])
        db.execute("DELETE FROM login_failures WHERE name_key = ?", [_name_key(account["username"])])
        counts = {key: value for key, value in vars(plan).items() if isinstance(value, int) and key != "user_id"}
        changes.record(db, by_user, "account.delete", f"user:{user_id}",
                       data="removed" if remove_data else "kept", new_name=plan.new_name, **counts)
    return plan


def _remove_data(db: sqlite_utils.Database, user_id: int) -> None:
    """Inside :func:`delete_user`'s transaction: the study answers and queues, flags, and the
    unapproved rewrite work of ``user_id`` (children first, so no foreign key is left dangling)."""
    mine = "SELECT id FROM responses WHERE user_id = ?"
    queue = "SELECT id FROM assignments WHERE user_id = ?"
    for sql in (
        f"DELETE FROM score_overrides WHERE response_id IN ({mine})",
        "DELETE FROM responses WHERE user_id = ?",
        f"DELETE FROM pauses WHERE assignment_id IN ({queue})",
        "DELETE FROM assignments WHERE user_id = ?",
        "DELETE FROM study_annotators WHERE user_id = ?",
        "DELETE FROM study_flags WHERE user_id = ?",
        f"DELETE FROM rewrite_reviews WHERE item_id IN ({_UNAPPROVED_ITEMS})",
        f"DELETE FROM rewrite_submissions WHERE item_id IN ({_UNAPPROVED_ITEMS})",
        f"DELETE FROM rewrite_drafts WHERE item_id IN ({_UNAPPROVED_ITEMS})",
        "UPDATE rewrite_items SET status = 'todo' WHERE annotator_id = ? AND status != 'approved'",
        "DELETE FROM rewrite_flags WHERE user_id = ?",
    ):
        db.execute(sql, [user_id])
