"""Every setting the project reads from the environment, and every default path, in one place.

This module is the bottom layer: it imports nothing from the project, so every other layer
may read it. Each setting is read when asked for (never cached at import), so a test or a
server restart with another environment sees the new value.

A value that is set but unusable raises :class:`SettingError` (a ``ValueError``) whose message
names the variable, the value and what it should be; callers wrap it into their own error
type where a page shows it.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

#: The project folder (the one holding app.py, pages/ and structext_core/).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: Data shipped inside the package: the authors' released samples, the paper's tables, the
#: scenario catalogue.
PACKAGE_DATA_DIR = Path(__file__).resolve().parent / "data"
#: Where the app keeps what it writes unless told otherwise.
ANNOTATIONS_DIR = PROJECT_ROOT / "annotations"

# The variables, each named once.
DB_ENV = "STRUCTEXT_DB"
DATA_DIR_ENV = "STRUCTEXT_DATA_DIR"
RESULTS_DIR_ENV = "STRUCTEXT_RESULTS_DIR"
ERROR_LOG_ENV = "STRUCTEXT_ERROR_LOG"
ADMIN_USER_ENV = "STRUCTEXT_ADMIN_USER"
ADMIN_PASSWORD_ENV = "STRUCTEXT_ADMIN_PASSWORD"
SESSION_HOURS_ENV = "STRUCTEXT_SESSION_HOURS"
SESSION_SECRET_ENV = "STRUCTEXT_SESSION_SECRET"
HEARTBEAT_ENV = "STRUCTEXT_HEARTBEAT_SECONDS"
IDLE_PAUSE_ENV = "STRUCTEXT_IDLE_PAUSE_SECONDS"
SANDBOX_WORKERS_ENV = "STRUCTEXT_SANDBOX_WORKERS"
SANDBOX_TIMEOUT_ENV = "STRUCTEXT_SANDBOX_TIMEOUT"
SANDBOX_MEMORY_ENV = "STRUCTEXT_SANDBOX_MEMORY_MB"
SANDBOX_TEST_FUNCTIONS_ENV = "STRUCTEXT_SANDBOX_TEST_FUNCTIONS"
LIMIT_PREFIX = "STRUCTEXT_LIMIT_"
HOME_ENV = "STRUCTEXT_HOME"
RUN_SLOTS_ENV = "STRUCTEXT_RUN_SLOTS"
PUBLIC_URL_ENV = "STRUCTEXT_PUBLIC_URL"
PASSWORD_LINK_DAYS_ENV = "STRUCTEXT_PASSWORD_LINK_DAYS"


class SettingError(ValueError):
    """An environment variable is set to a value that cannot be used."""


def raw(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The variable's value with surrounding white space removed ('' when unset)."""
    return ((os.environ if environ is None else environ).get(name) or "").strip()


def _positive(name: str, default, kind: type, environ: Mapping[str, str] | None):
    text = raw(name, environ)
    if not text:
        return default
    noun = "whole number" if kind is int else "number"
    try:
        value = kind(text)
    except ValueError:
        raise SettingError(f"{name}={text!r} is not a {noun}") from None
    if not value > 0:  # also refuses nan
        raise SettingError(f"{name}={text!r} must be {'a positive whole number' if kind is int else 'positive'}")
    return value


def whole_number(name: str, default: int, environ: Mapping[str, str] | None = None) -> int:
    """A positive whole number, ``default`` when unset or empty."""
    return _positive(name, default, int, environ)


def positive_number(name: str, default: float, environ: Mapping[str, str] | None = None) -> float:
    """A number above zero (fractions allowed), ``default`` when unset or empty."""
    return _positive(name, default, float, environ)


def seconds(name: str, default: float, low: float, high: float, *, zero_ok: bool = False,
            environ: Mapping[str, str] | None = None) -> float:
    """A number of seconds from ``low`` to ``high`` (or 0 when ``zero_ok``)."""
    text = raw(name, environ)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if (zero_ok and value == 0) or low <= value <= high:
        return value
    also = " (or 0 for never)" if zero_ok else ""
    raise SettingError(f"{name}={text!r} must be a number of seconds from {low:g} to {high:g}{also}.")


def path(name: str, default: Path, environ: Mapping[str, str] | None = None) -> Path:
    """A path (``~`` expanded), ``default`` when unset or empty."""
    text = raw(name, environ)
    return Path(text).expanduser() if text else default


# ---------------------------------------------------------------- limits

_LIMIT_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def limit(name: str, default: int) -> int:
    """The size limit ``name`` (such as ``MAX_DEPTH``): ``STRUCTEXT_LIMIT_<name>`` or ``default``."""
    if not _LIMIT_NAME.fullmatch(name):
        raise ValueError(f"not a limit name: {name!r}")
    return whole_number(LIMIT_PREFIX + name, default)


# ---------------------------------------------------------------- paths

def db_path() -> Path:
    """The database file: ``$STRUCTEXT_DB`` when set, else ``annotations/structext.db``."""
    return path(DB_ENV, ANNOTATIONS_DIR / "structext.db")


def suites_dir() -> Path:
    """Where generated suites live: ``$STRUCTEXT_DATA_DIR`` or ``annotations/suites``."""
    return path(DATA_DIR_ENV, ANNOTATIONS_DIR / "suites")


def results_dir() -> Path:
    """The folder the Results page imports from: ``$STRUCTEXT_RESULTS_DIR`` or ``annotations/results``."""
    return path(RESULTS_DIR_ENV, ANNOTATIONS_DIR / "results")


def error_log_path() -> Path:
    """``$STRUCTEXT_ERROR_LOG``, else ``errors.log`` beside the database."""
    return path(ERROR_LOG_ENV, db_path().parent / "errors.log")


def exports_dir() -> Path:
    """Where campaign exports go unless the admin names another folder: ``exports/`` beside
    the database."""
    return db_path().parent / "exports"


def official_dir() -> Path:
    """The authors' 116 released samples, shipped with the package."""
    return PACKAGE_DATA_DIR / "official"


def scenario_file() -> Path:
    """The catalogue of real-world scenarios for Real-Test campaigns."""
    return PACKAGE_DATA_DIR / "scenarios.txt"


def paper_dir() -> Path:
    """The paper's result tables as CSV."""
    return PACKAGE_DATA_DIR / "paper"


# ---------------------------------------------------------------- accounts and sessions

DEFAULT_SESSION_HOURS = 12.0
MAX_SESSION_HOURS = 720.0
MIN_SECRET_LENGTH = 32


def admin_credentials() -> tuple[str, str]:
    """``($STRUCTEXT_ADMIN_USER, $STRUCTEXT_ADMIN_PASSWORD)``; empty strings when unset."""
    return raw(ADMIN_USER_ENV), (os.environ.get(ADMIN_PASSWORD_ENV) or "")


def session_hours() -> float:
    """How long a log-in lasts, in hours: ``$STRUCTEXT_SESSION_HOURS`` (fractions allowed,
    above 0 and at most 720), 12 by default."""
    text = raw(SESSION_HOURS_ENV)
    if not text:
        return DEFAULT_SESSION_HOURS
    try:
        hours = float(text)
    except ValueError:
        hours = float("nan")
    if not 0 < hours <= MAX_SESSION_HOURS:  # also refuses nan
        raise SettingError(
            f"{SESSION_HOURS_ENV}={text!r} is not a session lifetime: give a number of hours "
            f"above 0 and at most {MAX_SESSION_HOURS:g} (default {DEFAULT_SESSION_HOURS:g})."
        )
    return hours


def session_secret() -> str:
    """``$STRUCTEXT_SESSION_SECRET`` ('' when unset); refused when shorter than 32 characters."""
    secret = os.environ.get(SESSION_SECRET_ENV) or ""
    if secret and len(secret) < MIN_SECRET_LENGTH:
        raise SettingError(f"{SESSION_SECRET_ENV} is too short: use {MIN_SECRET_LENGTH} characters or more.")
    return secret


DEFAULT_PASSWORD_LINK_DAYS = 7.0
MAX_PASSWORD_LINK_DAYS = 90.0


def password_link_days() -> float:
    """How long a one-time set-password link lasts, in days: ``$STRUCTEXT_PASSWORD_LINK_DAYS``
    (fractions allowed, above 0 and at most 90), 7 by default."""
    text = raw(PASSWORD_LINK_DAYS_ENV)
    if not text:
        return DEFAULT_PASSWORD_LINK_DAYS
    try:
        days = float(text)
    except ValueError:
        days = float("nan")
    if not 0 < days <= MAX_PASSWORD_LINK_DAYS:  # also refuses nan
        raise SettingError(
            f"{PASSWORD_LINK_DAYS_ENV}={text!r} is not a link lifetime: give a number of days above 0 and "
            f"at most {MAX_PASSWORD_LINK_DAYS:g} (default {DEFAULT_PASSWORD_LINK_DAYS:g})."
        )
    return days


# ---------------------------------------------------------------- the human-baseline clock

DEFAULT_HEARTBEAT_SECONDS = 5.0
DEFAULT_IDLE_PAUSE_SECONDS = 300.0


def heartbeat_seconds(environ: Mapping[str, str] | None = None) -> float:
    """How often the question page sends a heartbeat (1 to 60 s, default 5)."""
    return seconds(HEARTBEAT_ENV, DEFAULT_HEARTBEAT_SECONDS, 1, 60, environ=environ)


def idle_pause_seconds(environ: Mapping[str, str] | None = None) -> float:
    """After how long without input a question pauses (10 to 86400 s, 0 for never; default 300)."""
    return seconds(IDLE_PAUSE_ENV, DEFAULT_IDLE_PAUSE_SECONDS, 10, 86_400, zero_ok=True, environ=environ)


# ---------------------------------------------------------------- the sandbox

DEFAULT_SANDBOX_WORKERS = 2
DEFAULT_SANDBOX_TIMEOUT = 5.0
DEFAULT_SANDBOX_MEMORY_MB = 1024


def sandbox_workers() -> int:
    return whole_number(SANDBOX_WORKERS_ENV, DEFAULT_SANDBOX_WORKERS)


def sandbox_timeout() -> float:
    return positive_number(SANDBOX_TIMEOUT_ENV, DEFAULT_SANDBOX_TIMEOUT)


def sandbox_memory_mb() -> int:
    return whole_number(SANDBOX_MEMORY_ENV, DEFAULT_SANDBOX_MEMORY_MB)


def sandbox_test_functions() -> bool:
    """True when the sandbox workers may run the test-only functions (the test suite sets it)."""
    return os.environ.get(SANDBOX_TEST_FUNCTIONS_ENV) == "1"


# ---------------------------------------------------------------- page runs at once (run_gate)

DEFAULT_RUN_SLOTS = 3
MAX_RUN_SLOTS = 256


def run_slots(environ: Mapping[str, str] | None = None) -> int:
    """Page runs one server process lets proceed at once (0: no limit)."""
    text = raw(RUN_SLOTS_ENV, environ)
    if not text:
        return DEFAULT_RUN_SLOTS
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_RUN_SLOTS:
        raise SettingError(f"{RUN_SLOTS_ENV}={text!r} must be a whole number from 0 (no limit) to {MAX_RUN_SLOTS}")
    return int(text)


# ---------------------------------------------------------------- the address people reach the app at

_PUBLIC_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")


def public_url(environ: Mapping[str, str] | None = None) -> str:
    """The app's address as people reach it, for the study links a lead hands out: ``$STRUCTEXT_PUBLIC_URL``
    without a trailing ``/``; '' when unset (the address in the lead's own browser is used)."""
    text = raw(PUBLIC_URL_ENV, environ)
    if not text:
        return ""
    if len(text) > 500 or not _PUBLIC_URL.fullmatch(text):
        raise SettingError(f"{PUBLIC_URL_ENV}={text[:80]!r} must be a web address starting with https:// (or "
                           "http://), without spaces, '?' or '#', such as https://lab.example.org/studio")
    return text.rstrip("/")
