"""A study's consent text (the lead's Markdown, versioned) and each person's answer to it.

Every version is kept whole in ``consent_texts``; ``study_crowd.consent_version`` names the one in
force. A person accepts one version (``study_annotators.consent_version`` and ``consent_at``) or
declines (``declined_at``, and the outcome ``declined``: their visit ends there).

Who must (still) consent (:func:`needs_consent`): everyone in a study with a consent text who has
not accepted its current version, except a person who accepted an earlier version and has started
answering (opened a question, practice included): they keep the version they accepted. Someone who
never accepted any version is asked, started or not (a consent text added to a running study).

Nothing starts a clock before consent: :func:`before_questions` is what the study's answering
functions (``accept_rule``, ``open_question``, ``take_over``) ask before they do anything, so a
person who must still consent or answer the questionnaire, or whose visit has ended, gets no
question even from a crafted request.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import changes
from structext_core.studio.crowd import questionnaire
from structext_core.studio.crowd.settings import ensure_row
from structext_core.studio.errors import StudyError
from structext_core.studio.storage import write_transaction

#: Longest consent text a lead may save (characters): a few pages, never a document.
MAX_CONSENT_CHARS = 20_000
#: What :func:`before_questions` says to someone whose visit has ended (completed, screened out, timed
#: out): the study's functions refuse a new question with it, and still say "nothing left" when none is left.
ENDED = "Your part in this study has ended: there are no more questions for you."
#: Characters a consent text may hold besides printable ones.
_ALLOWED_CONTROLS = "\n\t"


class ConsentError(StudyError):
    """A consent text that cannot be kept, or an acceptance or refusal that cannot be recorded;
    the message says what and why (safe to show)."""


@dataclass(frozen=True)
class Consent:
    """One version of a study's consent text."""

    version: int
    text: str
    created_at: float = 0.0


def check_text(markdown: str) -> str:
    """The consent text as it is kept (line ends unified, outer blank space trimmed);
    :class:`ConsentError` when it is empty, too long or holds control characters."""
    if not isinstance(markdown, str):
        raise ConsentError("The consent text must be text.")
    text = markdown.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise ConsentError("The consent text is empty: write what people agree to before they start.")
    if len(text) > MAX_CONSENT_CHARS:
        raise ConsentError(f"The consent text is {len(text):,} characters long; the limit is "
                           f"{MAX_CONSENT_CHARS:,} characters. Shorten it (link to a longer information sheet).")
    bad = next((ch for ch in text if (ord(ch) < 32 and ch not in _ALLOWED_CONTROLS) or 127 <= ord(ch) < 160), None)
    if bad is not None:
        raise ConsentError(f"The consent text holds an invisible control character (code {ord(bad)}); "
                           "remove it (paste the text as plain text).")
    return text


def set_consent(db: sqlite_utils.Database, study_id: int, markdown: str, *, by: int | None) -> int:
    """Keep ``markdown`` as the study's consent text and return its version (the one in force).

    A text equal to the version in force makes no new version (nobody is asked again for nothing);
    any other text is a new version: people who have not started answering accept it again, people
    already answering keep theirs. Raises :class:`ConsentError` (nothing written) for a text that
    cannot be kept or a study that does not exist."""
    text = check_text(markdown)
    if db.execute("SELECT 1 FROM studies WHERE id = ?", [study_id]).fetchone() is None:
        raise ConsentError(f"There is no study with id {study_id}.")
    from structext_core.studio.study import leads  # here: the study package imports this module

    leads.check_runs(db, by, study_id, "change the study's consent text")  # an admin or a lead of the study
    with write_transaction(db):
        current = _current(db, study_id)
        if current is not None and current.text == text:
            return current.version
        version = 1 + db.execute("SELECT COALESCE(MAX(version), 0) FROM consent_texts WHERE study_id = ?",
                                 [study_id]).fetchone()[0]
        at = time.time()
        db.execute("INSERT INTO consent_texts (study_id, version, text, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
                   [study_id, version, text, by, at])
        ensure_row(db, study_id, by)
        db.execute("UPDATE study_crowd SET consent_version = ?, updated_by = ?, updated_at = ? WHERE study_id = ?",
                   [version, by, at, study_id])
        changes.record(db, by, "study.consent", f"study:{study_id}", version=version, chars=len(text))
    return version


def _current(db: sqlite_utils.Database, study_id: int) -> Consent | None:
    row = db.execute(
        "SELECT t.version, t.text, t.created_at FROM study_crowd c"
        " JOIN consent_texts t ON t.study_id = c.study_id AND t.version = c.consent_version"
        " WHERE c.study_id = ?", [study_id]).fetchone()
    return None if row is None else Consent(*row)


def copy_consent(db: sqlite_utils.Database, source_id: int, copy_id: int, by: int | None, at: float) -> None:
    """Give the study ``copy_id`` (a copy being made) the consent text in force of ``source_id``, as its
    version 1; nothing when the source asks for no consent. Inside the caller's transaction."""
    current = _current(db, source_id)
    if current is None:
        return
    db.execute("INSERT INTO consent_texts (study_id, version, text, created_by, created_at) VALUES (?, 1, ?, ?, ?)",
               [copy_id, current.text, by, at])
    ensure_row(db, copy_id, by)
    db.execute("UPDATE study_crowd SET consent_version = 1 WHERE study_id = ?", [copy_id])


def current_consent(db: sqlite_utils.Database, study_id: int) -> Consent | None:
    """The version in force of the study's consent text; None when the study asks for no consent."""
    return _current(db, study_id)


def versions(db: sqlite_utils.Database, study_id: int) -> list[Consent]:
    """Every version of the study's consent text, newest first."""
    return [Consent(*row) for row in db.execute(
        "SELECT version, text, created_at FROM consent_texts WHERE study_id = ? ORDER BY version DESC", [study_id])]


_PERSON_SQL = """
    SELECT sa.consent_version, sa.declined_at, sa.removed_at, sa.outcome, sa.questionnaire_at,
           c.consent_version AS current_version, COALESCE(c.questionnaire, '[]') AS questionnaire,
           EXISTS (SELECT 1 FROM assignments a WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id
                     AND a.first_shown_at IS NOT NULL) AS started
    FROM study_annotators sa LEFT JOIN study_crowd c ON c.study_id = sa.study_id
    WHERE sa.study_id = ? AND sa.user_id = ?
"""


def person_state(db: sqlite_utils.Database, study_id: int, user_id: int) -> dict | None:
    """What the gates read of a person in a study (consent, questionnaire, outcome, started or not);
    None for someone not in it."""
    rows = list(db.query(_PERSON_SQL, [study_id, user_id]))
    return rows[0] if rows else None


def must_consent(person: dict) -> bool:
    """From :func:`person_state`: whether the person must accept the version in force."""
    current = person["current_version"]
    if current is None or person["consent_version"] == current:
        return False
    # Someone who accepted an earlier version and has opened a question keeps theirs.
    return not (person["consent_version"] is not None and person["started"])


def needs_consent(db: sqlite_utils.Database, study_id: int, user_id: int) -> bool:
    """True when the person must accept the study's consent text (the version in force) before
    anything else: the study has one, they have not accepted it, and they have not started
    answering under an earlier version. False for someone not in the study."""
    person = person_state(db, study_id, user_id)
    return person is not None and must_consent(person)


def _member(db: sqlite_utils.Database, study_id: int, user_id: int) -> dict:
    person = person_state(db, study_id, user_id)
    if person is None:
        raise ConsentError("You do not take part in this study.")
    if person["removed_at"] is not None:
        raise ConsentError("The study lead has taken you off this study.")
    if person["declined_at"] is not None:
        raise ConsentError("You declined the consent of this study: your part in it has ended.")
    if person["outcome"] is not None:
        raise ConsentError("Your part in this study has ended.")
    return person


def accept(db: sqlite_utils.Database, study_id: int, user_id: int, version: int) -> None:
    """Record that the person accepts version ``version`` of the study's consent text, now.

    ``version`` must be the version in force (the one the person was shown): a text changed
    meanwhile is refused, so nobody accepts a text they did not read. Accepting the version
    already accepted changes nothing. :class:`ConsentError` for someone not in the study, taken
    off it, who declined or whose visit ended, or when the study asks for no consent."""
    with write_transaction(db):
        person = _member(db, study_id, user_id)
        current = person["current_version"]
        if current is None:
            raise ConsentError("This study asks for no consent.")
        if version != current:
            raise ConsentError("The consent text has changed since it was shown: read the new version and "
                               "accept it.")
        if person["consent_version"] == current:
            return
        db.execute("UPDATE study_annotators SET consent_version = ?, consent_at = ?, declined_at = NULL"
                   " WHERE study_id = ? AND user_id = ?", [version, time.time(), study_id, user_id])


def decline(db: sqlite_utils.Database, study_id: int, user_id: int) -> None:
    """Record that the person declines the study's consent text: ``declined_at`` and the outcome
    ``declined`` (their visit ends; the page shows the platform's no-consent code). Only while
    they must consent (:func:`needs_consent`); :class:`ConsentError` otherwise."""
    with write_transaction(db):
        person = _member(db, study_id, user_id)
        if not must_consent(person):
            raise ConsentError("There is no consent to decline: you have accepted this study's consent text "
                               "and started answering." if person["current_version"] is not None
                               else "This study asks for no consent.")
        at = time.time()
        db.execute("UPDATE study_annotators SET declined_at = ?, outcome = COALESCE(outcome, 'declined'),"
                   " outcome_at = COALESCE(outcome_at, ?) WHERE study_id = ? AND user_id = ?",
                   [at, at, study_id, user_id])


def before_questions(db: sqlite_utils.Database, study_id: int, user_id: int) -> str | None:
    """Why the person may not read the study's rule or open a question yet (a message safe to
    show), or None when they may: they must consent, or answer the questionnaire, or their visit
    has ended (declined, completed, screened out, timed out). Two small reads; no write."""
    person = person_state(db, study_id, user_id)
    if person is None:
        return None  # not a member: the study's own checks say so
    if person["declined_at"] is not None or person["outcome"] == "declined":
        return "You declined the consent of this study: your part in it has ended."
    if must_consent(person):
        return "Read and accept the study's consent text before anything else."
    if person["questionnaire_at"] is None and questionnaire.has_fields(person["questionnaire"]):
        return "Answer the study's short questionnaire before the first question."
    if person["outcome"] is not None:
        return ENDED
    return None
