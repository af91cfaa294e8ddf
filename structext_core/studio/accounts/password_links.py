"""One-time set-password links: how people brought in from a CSV (:mod:`.bulk`) choose their password.

An account made that way has no usable password: its hash is :data:`LINK_ONLY_HASH`, which is not
of the ``scrypt$...`` form, so no password ever matches it (the log-in form cannot open it). Its
person gets a link instead, ``<app>/?set_password=<token>`` (:func:`link_url`), handed out by the
admin or lead (the workbench sends no email):

- the token is ``secrets.token_urlsafe(32)`` (256 random bits); only its sha256 is kept
  (``password_links``, migration 15), so the database alone opens no account;
- it can be used once, until it expires (``STRUCTEXT_PASSWORD_LINK_DAYS``, 7 days by default);
- :func:`set_password_with_link` sets the password (the accounts' length rule), marks the link used,
  ends the user's other links and open sessions, in one transaction: two tabs using the same link
  at once set one password, the other is refused;
- every refusal (unknown, used or expired token, an account disabled or deleted since) is the one
  message :data:`LINK_REFUSED`, which says nothing about the account;
- :func:`new_password_link` issues a new link for an account (an admin, e.g. when one was lost);
  the account's earlier links stop working.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from urllib.parse import urlencode, urlsplit, urlunsplit

import sqlite_utils

from structext_core import settings
from structext_core.studio import changes
from structext_core.studio.accounts.credentials import AccountError, hash_password, validate_password
from structext_core.studio.accounts.sessions import _revoke_user_sessions
from structext_core.studio.accounts.users import account_status
from structext_core.studio.storage import write_transaction

#: The password hash of an account that has no password yet: no password matches it.
LINK_ONLY_HASH = "!set-password-link"
#: The query parameter of the app's address that carries a link's token.
QUERY_PARAM = "set_password"
#: The one answer to a link that cannot be used, whatever the reason.
LINK_REFUSED = ("This set-password link cannot be used: it is unknown, already used or expired. "
                "Ask the person who gave it to you for a new link.")
#: Longest token read (a real one is 43 characters).
MAX_TOKEN_CHARS = 128


class LinkRefused(AccountError):
    """A set-password link that cannot be used; its message is :data:`LINK_REFUSED` (nothing about the account)."""


def link_lifetime_seconds() -> float:
    """How long a new link lasts (``STRUCTEXT_PASSWORD_LINK_DAYS``); :class:`AccountError` for a bad setting."""
    try:
        return settings.password_link_days() * 86400
    except settings.SettingError as error:
        raise AccountError(str(error)) from None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _issue(db: sqlite_utils.Database, user_id: int, by_user: int | None, now: float, lifetime: float) -> str:
    """Inside a write transaction: a new link for ``user_id`` (earlier unused ones of the account end); its token."""
    db.execute("UPDATE password_links SET expires_at = ? WHERE user_id = ? AND used_at IS NULL AND expires_at > ?",
               [now, user_id, now])
    token = secrets.token_urlsafe(32)
    db.execute("INSERT INTO password_links (user_id, token_hash, created_by, created_at, expires_at)"
               " VALUES (?, ?, ?, ?, ?)", [user_id, token_hash(token), by_user, now, now + lifetime])
    return token


def new_password_link(db: sqlite_utils.Database, user_id: int, *, by: dict | None,
                      now: float | None = None) -> str:
    """A new one-time link's token for the account ``user_id`` (its earlier links end); ``by`` (the
    admin) is who the audit log names. :class:`AccountError` for no such account, or one disabled or deleted."""
    now = time.time() if now is None else now
    lifetime = link_lifetime_seconds()
    by_user = by["id"] if by else None
    with write_transaction(db):
        status = account_status(db, user_id)
        if status is None:
            raise AccountError(f"There is no account with id {user_id}.")
        if status != "active":
            raise AccountError(f"This account is {status}: it gets no set-password link.")
        token = _issue(db, user_id, by_user, now, lifetime)
        changes.record(db, by_user, "account.password_link", f"user:{user_id}", days=lifetime / 86400)
    return token


def link_user(db: sqlite_utils.Database, token: object, *, now: float | None = None) -> dict:
    """The account ``{id, username, role}`` a usable link is for; :class:`LinkRefused` otherwise."""
    now = time.time() if now is None else now
    row = _usable(db, token, now)
    return {"id": row[1], "username": row[2], "role": row[3]}


def _usable(db: sqlite_utils.Database, token: object, now: float) -> tuple:
    """(link id, user id, user name, role) of a usable link; :class:`LinkRefused` otherwise."""
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
        raise LinkRefused(LINK_REFUSED)
    row = db.execute(
        "SELECT l.id, u.id, u.username, u.role, l.used_at, l.expires_at FROM password_links l"
        " JOIN users u ON u.id = l.user_id WHERE l.token_hash = ?", [token_hash(token)]).fetchone()
    if row is None or row[4] is not None or row[5] <= now or account_status(db, row[1]) != "active":
        raise LinkRefused(LINK_REFUSED)
    return row[:4]


def set_password_with_link(db: sqlite_utils.Database, token: object, new_password: str, *,
                           now: float | None = None) -> dict:
    """Set the password of the link's account, mark the link used, end the account's other links
    and sessions; returns the account ``{id, username, role}`` (the page logs it in).

    :class:`LinkRefused` (:data:`LINK_REFUSED`) for a link that cannot be used; :class:`AccountError`
    for a password the accounts' rule refuses (then the link stays usable)."""
    now = time.time() if now is None else now
    _usable(db, token, now)  # a refused link is said before the password is judged
    validate_password(new_password)
    password_hash = hash_password(new_password)  # slow (scrypt): outside the write lock
    with write_transaction(db):
        link_id, user_id, username, role = _usable(db, token, now)  # again: another tab may have used it
        db.execute("UPDATE password_links SET used_at = ? WHERE id = ?", [now, link_id])
        db.execute("UPDATE password_links SET expires_at = ? WHERE user_id = ? AND id != ? AND used_at IS NULL"
                   " AND expires_at > ?", [now, user_id, link_id, now])
        db.execute("UPDATE users SET password_hash = ? WHERE id = ?", [password_hash, user_id])
        ended = _revoke_user_sessions(db, user_id, "password changed", now)
        changes.record(db, user_id, "account.password_set_by_link", f"user:{user_id}", sessions_ended=ended)
    return {"id": user_id, "username": username, "role": role}


def app_root(page_url: str, page_slug: str = "") -> str:
    """The app's own address from the address of one of its pages (``st.context.url``): the query
    and fragment dropped, and the page's slug (``accounts``) when the address ends with it."""
    parts = urlsplit(page_url or "")
    path = parts.path
    if page_slug and path.rstrip("/").endswith("/" + page_slug):
        path = path.rstrip("/")[: -len(page_slug)]
    if not path.endswith("/"):
        path += "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def link_url(base_url: str, token: str) -> str:
    """The link a person opens: ``base_url`` (the app's address, :func:`app_root`) with ``?set_password=<token>``."""
    parts = urlsplit(base_url)
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode({QUERY_PARAM: token}), ""))
