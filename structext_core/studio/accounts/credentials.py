"""What an account is made of: user-name rules, password rules and hashing, roles and statuses.

Passwords are stored as ``scrypt$n$r$p$salt$hash`` (base64 salt and hash, 16-byte
random salt per password), checked in constant time.

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
import re
import secrets
import unicodedata

from structext_core import settings

ROLES = ("annotator", "researcher", "lead", "admin")
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
#: SQL for an account's status (``active``, ``disabled``, ``deleted``) in a query of ``users``.
_STATUS_SQL = (
    f"CASE WHEN password_hash = '{DELETED_PASSWORD_HASH}' THEN 'deleted'"
    " WHEN disabled_at IS NOT NULL THEN 'disabled' ELSE 'active' END"
)

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


def has_password(db, user_id: int) -> bool:
    """Whether the account has a password at all (an account made by a study link, or brought in by CSV
    until its set-password link is used, holds a marker no password matches)."""
    row = db.execute("SELECT password_hash FROM users WHERE id = ?", [user_id]).fetchone()
    return row is not None and str(row[0]).startswith("scrypt$")


def has_own_password(db, user: dict) -> bool:
    """Whether ``user`` has a password to change: the navigation lists *Change password* only then
    (:mod:`structext_core.studio.access`, the page's ``work``); someone who came in by a link has none."""
    return has_password(db, user["id"])


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
