"""Log-in sessions: signed session tokens, their check, revocation, and session passes.

A session token is ``v1.<expiry>.<random>.<signature>``: 32 random bytes, the expiry (Unix
seconds, rounded up) and an HMAC-SHA256 of the three over a server key. A token whose
signature does not match is refused before the database is asked about it; a signed one is
then looked up by its sha256 (the only form stored), and must be neither expired nor revoked.
The token carries no password and no user data. A session pass (:func:`session_pass`) lets a
page's script speak for one session about one scope alone.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import time
from dataclasses import dataclass

import sqlite_utils

from structext_core import settings
from structext_core.studio.accounts.credentials import _STATUS_SQL, AccountError
from structext_core.studio.storage import write_transaction

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
