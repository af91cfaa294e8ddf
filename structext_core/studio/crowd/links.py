"""Study links: how a crowd enrols in a study (issue 45, item 1).

The lead makes a link for a study (:func:`create_link`): its places, an optional expiry, and
optionally the name of the URL parameter that carries a person's external id (``PROLIFIC_PID``;
``STUDY_ID``, ``SESSION_ID`` and the other parameters the link arrives with are kept beside it).
Opening the link (:func:`enrol`) makes an annotator account bound to the study, with no password
(:data:`NO_PASSWORD_HASH` matches no password: the log-in form cannot open it), logged in by the
page with a session cookie; a *resume code* is shown once for another browser (:func:`resume`),
and only its sha256 is kept.

- The token is ``secrets.token_urlsafe(24)`` (192 random bits), found by lookup.
- Places are exact under a race: the count of the link's participants, the new account, its
  participant row and its place in the study (``study.add_annotator``) are one ``BEGIN IMMEDIATE``
  transaction, so 320 people arriving for 300 places make 300 accounts and 20 refusals.
- A person timed out (the study's time-out passed before they finished:
  :func:`structext_core.studio.crowd.outcomes.time_out_overdue`, run first in that transaction) holds
  no place: their place goes to the next person, as on the platform.
- An external id is not a secret: the same id again (another browser) gets no account, only the
  resume form. A refusal (:class:`EnrolmentRefused`) says nothing of anyone but what the person
  brought: the link, their own id.
- Failed resume codes of an external id count on the log-in lock (``login_failures``, the key
  being the hash of the study and the id, never a user name's): from the fifth failure on, the id
  is locked for a minute, doubling, at most an hour. A link without an id parameter finds the
  person by the code alone (10 characters of 31: about 8·10^14 codes; nothing to lock by).

No Streamlit here: the join page (pages/join.py) and the lead's section
(:mod:`structext_core.ui.study_links`) call these.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import sqlite_utils

from structext_core.studio import accounts, changes, durations
from structext_core.studio.accounts import logins
from structext_core.studio.crowd import outcomes
from structext_core.studio.storage import write_transaction
from structext_core.studio.study import leads, store
from structext_core.text.words import plural

#: The password hash of an account made by a link: not of the ``scrypt$...`` form, so no password matches it.
NO_PASSWORD_HASH = "!study-link"
#: The query parameter that carries a link's token.
TOKEN_PARAM = "join"
PROLIFIC_ID_PARAM = "PROLIFIC_PID"
#: The parameters Prolific fills in, in its placeholder syntax.
PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
MAX_PLACES = 100_000
MAX_TOKEN_CHARS = 64
MAX_EXTERNAL_ID_CHARS = 128
#: The other parameters kept with a participant: at most this many, each name and value bounded.
MAX_PARAMS = 20
MAX_PARAM_NAME_CHARS = 64
MAX_PARAM_VALUE_CHARS = 256
ID_PARAM_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
_PARAM_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_TOKEN = re.compile(r"[A-Za-z0-9_\-]{1,64}")
#: Resume codes: no 0/O, 1/I/L, so a code read aloud or copied by hand is the code.
RESUME_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
RESUME_CODE_CHARS = 10
USERNAME_PREFIX = "p-"
_USERNAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

NOT_VALID = "This study link is not valid."
EXPIRED = "This study link has expired."
LINK_CLOSED = "This study link is closed: it takes nobody more."
STUDY_CLOSED = "This study is closed: it takes nobody more."
ID_TAKEN = ("This id already took part in this study from another browser: open the study from that browser, "
            "or enter the resume code you were shown.")
WRONG_CODE = "That resume code is not right: check it and type it again."
#: Refusals of a person who could not take part through nothing of theirs (the link or the study took
#: nobody more when they came): they are sent back to the platform as people screened out are
#: (:func:`structext_core.studio.crowd.outcomes.turned_away`), not left with an error alone.
TURNED_AWAY = ("expired", "link_closed", "study_closed", "full")


class LinkError(ValueError):
    """A link the lead asked for that cannot be made or changed; the message says what and how."""


class EnrolmentRefused(Exception):
    """Opening a link made no account; ``str(error)`` is safe to show the person. ``reason`` is one of
    ``invalid``, ``expired``, ``link_closed``, ``study_closed``, ``full``, ``bad_id``, ``taken`` (the id
    took part already: the resume form helps), ``wrong_code``, ``locked``, ``inactive``."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Link:
    """A study link: ``filled`` of ``places`` taken (a person timed out holds none: ``timed_out`` counts
    them); ``expires_at``/``closed_at`` None when not set."""

    id: int
    study_id: int
    token: str
    places: int
    filled: int
    expires_at: float | None
    id_param: str | None
    closed_at: float | None
    created_at: float
    timed_out: int = 0

    def state(self, now: float | None = None) -> str:
        """``open``, ``closed``, ``expired`` or ``full``."""
        now = time.time() if now is None else now
        if self.closed_at is not None:
            return "closed"
        if self.expires_at is not None and now >= self.expires_at:
            return "expired"
        return "full" if self.filled >= self.places else "open"


@dataclass(frozen=True)
class Enrolment:
    """A new participant: the account (``{id, username, role}``), its study and the resume code (shown once)."""

    user: dict
    study_id: int
    resume_code: str


@dataclass(frozen=True)
class Participant:
    """What is kept of an account made by a link."""

    user_id: int
    study_id: int
    link_id: int
    external_id: str | None
    params: dict = field(default_factory=dict)
    enrolled_at: float = 0.0


_TIMED_OUT = ("EXISTS (SELECT 1 FROM study_annotators sa WHERE sa.study_id = p.study_id AND sa.user_id = p.user_id"
              " AND sa.outcome = 'timed_out')")
_LINK_SQL = ("SELECT l.id, l.study_id, l.token, l.places,"
             f" (SELECT COUNT(*) FROM participants p WHERE p.link_id = l.id AND NOT {_TIMED_OUT}) AS filled,"
             " l.expires_at, l.id_param, l.closed_at, l.created_at,"
             f" (SELECT COUNT(*) FROM participants p WHERE p.link_id = l.id AND {_TIMED_OUT}) AS timed_out"
             " FROM enrolment_links l")


def _link(row) -> Link:
    return Link(*row)


# ---------------------------------------------------------------- the lead's side


def create_link(db: sqlite_utils.Database, study_id: int, *, places: int, expires_at: float | None,
                id_param: str | None, by: int | None) -> Link:
    """A new link for an open study; :class:`LinkError` for places outside 1 to 100,000, an expiry
    already past, or an id parameter that is not a plain name (letters, digits, ``_``)."""
    whole = isinstance(places, int) and not isinstance(places, bool) or isinstance(places, float) and places.is_integer()
    if not whole or not 1 <= places <= MAX_PLACES:
        raise LinkError(f"Places must be a whole number from 1 to {MAX_PLACES:,}; got {places!r}.")
    now = time.time()
    if expires_at is not None:
        if isinstance(expires_at, bool) or not isinstance(expires_at, int | float) or expires_at != expires_at:
            raise LinkError("The expiry must be a date and time.")
        if expires_at <= now:
            raise LinkError("The expiry is already past: choose a later date and time, or no expiry.")
    if id_param is not None:
        id_param = str(id_param).strip() or None
    if id_param is not None and (not ID_PARAM_PATTERN.fullmatch(id_param) or id_param == TOKEN_PARAM):
        raise LinkError(f"The id parameter must be a name of letters, digits and '_' starting with a letter "
                        f"(at most 40, not {TOKEN_PARAM!r}), such as {PROLIFIC_ID_PARAM}; got {id_param[:60]!r}.")
    with write_transaction(db):
        row = db.execute("SELECT status, archived_at FROM studies WHERE id = ?", [study_id]).fetchone()
        if row is None:
            raise LinkError(f"There is no study with id {study_id}.")
        if row[0] != "open" or row[1] is not None:
            raise LinkError("The study is closed or archived: open it again before making a link to it.")
        leads.check_runs(db, by, study_id, "make a study link")  # an admin or a lead of the study
        link_id = db.execute(
            "INSERT INTO enrolment_links (study_id, token, places, expires_at, id_param, created_by, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [study_id, secrets.token_urlsafe(24), int(places), expires_at, id_param, by, now]).lastrowid
        changes.record(db, by, "crowd.link_create", f"study:{study_id}", link_id=link_id, places=int(places),
                       expires_at=expires_at, id_param=id_param)
    return _link(db.execute(f"{_LINK_SQL} WHERE l.id = ?", [link_id]).fetchone())


def close_link(db: sqlite_utils.Database, link_id: int, *, by: int | None) -> None:
    """Close a link: it takes nobody more (those already in stay in; their resume codes still work)."""
    with write_transaction(db):
        row = db.execute("SELECT study_id FROM enrolment_links WHERE id = ?", [link_id]).fetchone()
        if row is None:
            raise LinkError(f"There is no study link with id {link_id}.")
        leads.check_runs(db, by, row[0], "close a study link")  # an admin or a lead of the study
        db.execute("UPDATE enrolment_links SET closed_at = COALESCE(closed_at, ?) WHERE id = ?", [time.time(), link_id])
        changes.record(db, by, "crowd.link_close", f"study:{row[0]}", link_id=link_id)


def links_of(db: sqlite_utils.Database, study_id: int) -> list[Link]:
    """The study's links, newest first."""
    return [_link(row) for row in db.execute(f"{_LINK_SQL} WHERE l.study_id = ? ORDER BY l.id DESC", [study_id])]


def link_url(base_url: str, token: str, id_param: str | None) -> str:
    """The address to give the platform: the app's join page with the token, and the id parameter
    with the platform's placeholder (Prolific's ``{{%PROLIFIC_PID%}}``, with ``STUDY_ID`` and
    ``SESSION_ID``; another name is left for the platform to fill: ``&WORKER=``)."""
    url = f"{base_url.rstrip('/')}/join?{TOKEN_PARAM}={token}"
    if id_param == PROLIFIC_ID_PARAM:
        return url + "".join(f"&{name}={{{{%{name}%}}}}" for name in PROLIFIC_PARAMS)
    return url + (f"&{id_param}=" if id_param else "")


# ---------------------------------------------------------------- the person's side


def _clean_token(token: object) -> str:
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        raise EnrolmentRefused(NOT_VALID, "invalid")
    return token


def _find_link(db: sqlite_utils.Database, token: object) -> Link:
    row = db.execute(f"{_LINK_SQL} WHERE l.token = ?", [_clean_token(token)]).fetchone()
    if row is None:
        raise EnrolmentRefused(NOT_VALID, "invalid")
    return _link(row)


def link_by_token(db: sqlite_utils.Database, token: object) -> Link | None:
    """The link of ``token``, or None (a malformed or unknown token)."""
    try:
        return _find_link(db, token)
    except EnrolmentRefused:
        return None


def _external_id(link: Link, params: Mapping[str, str]) -> str | None:
    """The person's external id from ``params`` (None when the link takes none); refused when missing or unusable."""
    if link.id_param is None:
        return None
    value = params.get(link.id_param)
    if not isinstance(value, str) or not value.strip():
        raise EnrolmentRefused(f"This study link arrived without your participant id ({link.id_param}): open the "
                               "study again from the platform that sent you.", "bad_id")
    value = value.strip()
    if len(value) > MAX_EXTERNAL_ID_CHARS or not value.isprintable():
        raise EnrolmentRefused(f"The participant id in this link ({link.id_param}) is not one this study can take: "
                               f"it must be 1 to {MAX_EXTERNAL_ID_CHARS} printable characters. Open the study again "
                               "from the platform that sent you.", "bad_id")
    return value


def kept_params(params: Mapping[str, str], id_param: str | None) -> dict[str, str]:
    """The platform's other parameters to keep (``STUDY_ID``, ``SESSION_ID``, ...): well-formed names,
    printable values of at most 256 characters, at most 20; the token and the id are not repeated."""
    kept: dict[str, str] = {}
    for name, value in list(params.items())[:200]:
        if len(kept) >= MAX_PARAMS:
            break
        if name in (TOKEN_PARAM, id_param) or not isinstance(name, str) or not _PARAM_NAME.fullmatch(name):
            continue
        if isinstance(value, str) and len(value) <= MAX_PARAM_VALUE_CHARS and value.isprintable():
            kept[name] = value
    return kept


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("ascii")).hexdigest()


def new_resume_code() -> str:
    """10 characters of :data:`RESUME_ALPHABET`, from the system's random source."""
    return "".join(secrets.choice(RESUME_ALPHABET) for _ in range(RESUME_CODE_CHARS))


def normal_resume_code(code: object) -> str | None:
    """The code as typed, in upper case without spaces or dashes; None when it cannot be a code."""
    if not isinstance(code, str) or len(code) > 40:
        return None
    text = re.sub(r"[\s\-]", "", code).upper()
    if len(text) != RESUME_CODE_CHARS or any(ch not in RESUME_ALPHABET for ch in text):
        return None
    return text


def _free_username(db: sqlite_utils.Database) -> str:
    """Inside the write transaction: ``p-`` and 8 random lower-case letters or digits, not yet taken."""
    while True:
        name = USERNAME_PREFIX + "".join(secrets.choice(_USERNAME_ALPHABET) for _ in range(8))
        if db.execute("SELECT 1 FROM users WHERE username = ? COLLATE NOCASE", [name]).fetchone() is None:
            return name


def _check_open(db: sqlite_utils.Database, link_id: int, now: float) -> Link:
    """Inside the write transaction: the link as it is now, refused when closed, expired or its study closed."""
    row = db.execute(f"{_LINK_SQL} WHERE l.id = ?", [link_id]).fetchone()
    if row is None:  # deleted with its study since it was looked up
        raise EnrolmentRefused(NOT_VALID, "invalid")
    link = _link(row)
    if link.closed_at is not None:
        raise EnrolmentRefused(LINK_CLOSED, "link_closed")
    if link.expires_at is not None and now >= link.expires_at:
        raise EnrolmentRefused(EXPIRED, "expired")
    status, archived_at = db.execute("SELECT status, archived_at FROM studies WHERE id = ?", [link.study_id]).fetchone()
    if status != "open" or archived_at is not None:
        raise EnrolmentRefused(STUDY_CLOSED, "study_closed")
    return link


def enrol(db: sqlite_utils.Database, token: object, params: Mapping[str, str], *,
          now: float | None = None) -> Enrolment:
    """Make an annotator account in the link's study for the person who opened it (see the module
    notes); :class:`EnrolmentRefused` with a message to show when the link takes nobody, the study
    is closed or full, or the person's id is missing, unusable or has taken part already."""
    now = time.time() if now is None else now
    link = _find_link(db, token)
    external_id = _external_id(link, params)
    others = kept_params(params, link.id_param)
    code = new_resume_code()
    try:
        with write_transaction(db, enclosing=True):
            outcomes.time_out_overdue(db, link.study_id, now)  # their places go to whoever comes now
            link = _check_open(db, link.id, now)
            if external_id is not None and db.execute(
                    "SELECT 1 FROM participants WHERE study_id = ? AND external_id = ?",
                    [link.study_id, external_id]).fetchone() is not None:
                raise EnrolmentRefused(ID_TAKEN, "taken")
            if link.filled >= link.places:
                taken = "its one place is taken" if link.places == 1 else f"all {link.places:,} places are taken"
                raise EnrolmentRefused(f"This study is full: {taken}.", "full")
            username = _free_username(db)
            user_id = db.execute(
                "INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, 'annotator', ?)",
                [username, NO_PASSWORD_HASH, now]).lastrowid
            db.execute(
                "INSERT INTO participants (user_id, study_id, link_id, external_id, params, resume_hash, enrolled_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [user_id, link.study_id, link.id, external_id, json.dumps(others, sort_keys=True), _code_hash(code), now])
            changes.record(db, None, "crowd.enrol", f"user:{user_id}", study_id=link.study_id, link_id=link.id)
            try:
                store.add_annotator(db, link.study_id, user_id, by_user=None)
            except store.StudyError as error:  # the study cannot take them: nothing is kept
                raise EnrolmentRefused(f"This study cannot take you: {error}", "study_closed") from None
    except sqlite3.IntegrityError as error:  # (study, id) is unique: checked above, kept by the schema too
        if "participants" not in str(error):
            raise
        raise EnrolmentRefused(ID_TAKEN, "taken") from None
    return Enrolment({"id": user_id, "username": username, "role": "annotator"}, link.study_id, code)


def _resume_key(study_id: int, external_id: str) -> str:
    """The ``login_failures`` key of an id's resume attempts (hashed, and never a user name's hash)."""
    return hashlib.sha256(f"resume\0{study_id}\0{external_id}".encode("utf-8", "surrogatepass")).hexdigest()


def resume(db: sqlite_utils.Database, token: object, code: object, params: Mapping[str, str], *,
           now: float | None = None) -> dict:
    """The account ``{id, username, role}`` of the person who enrolled by this link's study with
    ``code`` (and, when the link takes an id, that id); :class:`EnrolmentRefused` otherwise. Works
    after the link closed or expired: the person has their place already."""
    now = time.time() if now is None else now
    link = _find_link(db, token)
    external_id = _external_id(link, params)
    normal = normal_resume_code(code)
    if external_id is not None:
        key = _resume_key(link.study_id, external_id)
        locked, failures, lock = logins._count_attempt(db, key, now)
        if locked:
            raise EnrolmentRefused(f"Too many wrong resume codes for this id: try again in "
                                   f"{durations.words(locked)}.", "locked")
        row = db.execute("SELECT user_id, resume_hash FROM participants WHERE study_id = ? AND external_id = ?",
                         [link.study_id, external_id]).fetchone()
        expected = row[1] if row is not None else _code_hash(new_resume_code())
        if normal is None or not hmac.compare_digest(_code_hash(normal), expected) or row is None:
            message = WRONG_CODE
            if lock:
                message += f" After {failures} wrong codes this id is locked for {durations.words(lock)}."
            elif logins.MAX_FAILED_LOGINS - failures <= 2:
                left = logins.MAX_FAILED_LOGINS - failures
                message += (f" {plural(left, 'more wrong code')} {'locks' if left == 1 else 'lock'} this id for "
                            f"{durations.words(logins.FIRST_LOCK_SECONDS)}.")
            raise EnrolmentRefused(message, "wrong_code")
        with write_transaction(db):
            db.execute("DELETE FROM login_failures WHERE name_key = ?", [key])
        user_id = row[0]
    else:
        row = None if normal is None else db.execute(
            "SELECT user_id FROM participants WHERE study_id = ? AND resume_hash = ?",
            [link.study_id, _code_hash(normal)]).fetchone()
        if row is None:
            raise EnrolmentRefused(WRONG_CODE, "wrong_code")
        user_id = row[0]
    if accounts.account_status(db, user_id) != "active":  # told only to whoever brought the right code
        raise EnrolmentRefused("This account is no longer active: ask the study's lead.", "inactive")
    user = db.execute("SELECT id, username, role FROM users WHERE id = ?", [user_id]).fetchone()
    return {"id": user[0], "username": user[1], "role": user[2]}


def participant(db: sqlite_utils.Database, user_id: int) -> Participant | None:
    """What a link recorded of the account ``user_id``; None for an account not made by a link."""
    row = db.execute("SELECT user_id, study_id, link_id, external_id, params, enrolled_at FROM participants"
                     " WHERE user_id = ?", [user_id]).fetchone()
    if row is None:
        return None
    return Participant(row[0], row[1], row[2], row[3], json.loads(row[4] or "{}"), row[5])
