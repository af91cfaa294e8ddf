"""Who runs which study: an admin every study, a lead the studies they lead (``study_leads``,
migration 15). The roles are in the one table (:mod:`structext_core.studio.access`: ``lead`` and
``admin`` open Studies and Adjudication, capability ``run_studies``); which study a lead may act on is
decided here, and every study action of the core asks :func:`check_runs` before it writes.

- A lead who sets up a study leads it (:func:`add_creator`, in the transaction that writes the study);
  a copy of a study is led by the source's leads and by whoever made it, if a lead.
- An admin gives a study more leads (:func:`add_lead`) or takes one off (:func:`remove_lead`).
- ``by`` (who acts) is a session user ``{id, username, role}``, a user id (the role is read from the
  database), or None: the workbench itself (the command line run on the server, an enrolment by a
  study link), which is not a person's click and is not refused.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import access, accounts, changes
from structext_core.studio.errors import StudyError
from structext_core.studio.storage import write_transaction

#: Who may act on a study, for refusals.
WHO_MAY = "an admin or a lead of the study"


@dataclass(frozen=True)
class Lead:
    """A lead of a study: the account, and who made them a lead when."""

    user_id: int
    username: str
    added_at: float
    added_by: str | None


def _actor(db: sqlite_utils.Database, by: dict | int | None) -> tuple[int, str, str] | None:
    """``(id, name, role)`` of whoever acts; None for the workbench itself."""
    if by is None:
        return None
    if isinstance(by, dict):
        return int(by["id"]), str(by.get("username", by["id"])), access.role_of(by)
    row = db.execute("SELECT id, username, role FROM users WHERE id = ?", [int(by)]).fetchone()
    if row is None:
        raise access.AccessError(f"There is no account with id {int(by)}: nobody may act on a study as it.")
    return int(row[0]), str(row[1]), str(row[2])


def _leads(db: sqlite_utils.Database, study_id: int, user_id: int) -> bool:
    return db.execute("SELECT 1 FROM study_leads WHERE study_id = ? AND user_id = ?",
                      [study_id, user_id]).fetchone() is not None


def can_run(db: sqlite_utils.Database, user: dict | int | None, study_id: int) -> bool:
    """Whether ``user`` may set up, follow, adjudicate, preview and export the study ``study_id``:
    an admin every study, a lead the studies they lead; nobody else (a visitor neither)."""
    actor = _actor(db, user) if user is not None else None
    if actor is None:
        return False
    user_id, _name, role = actor
    if not access.can(role, "run_studies"):
        return False
    return role == access.ADMIN or _leads(db, study_id, user_id)


def check_runs(db: sqlite_utils.Database, by: dict | int | None, study_id: int, what: str) -> None:
    """Raise :class:`~structext_core.studio.access.AccessError` unless ``by`` may ``what`` on the study
    (``what``: the action, e.g. "close the study"); the message names the study and who may.
    ``by=None`` is the workbench itself (see the module notes)."""
    if by is None:
        return
    if can_run(db, by, study_id):
        return
    row = db.execute("SELECT name FROM studies WHERE id = ?", [study_id]).fetchone()
    name = f"the study {row[0]!r}" if row else f"study {study_id}"
    actor = _actor(db, by)
    raise access.AccessError(f"Only {WHO_MAY} may {what}: {actor[1]} ({actor[2]}) does not lead {name}.")


def studies_run_by(db: sqlite_utils.Database, user: dict | int | None) -> list[int] | None:
    """The ids of the studies ``user`` runs: None for an admin (every study), the studies they lead
    for a lead (in id order), none for anyone else."""
    actor = _actor(db, user)
    if actor is None or not access.can(actor[2], "run_studies"):
        return []
    if actor[2] == access.ADMIN:
        return None
    return [row[0] for row in db.execute(
        "SELECT study_id FROM study_leads WHERE user_id = ? ORDER BY study_id", [actor[0]])]


def only_run(db: sqlite_utils.Database, user: dict | int | None, studies: list) -> list:
    """Of ``studies`` (objects with an ``id``), those ``user`` runs, in their order."""
    ids = studies_run_by(db, user)
    return list(studies) if ids is None else [s for s in studies if s.id in set(ids)]


def check_sets_up(db: sqlite_utils.Database, created_by: int | None) -> None:
    """Refuse a new study set up by someone who runs no studies (``created_by`` None: the workbench)."""
    actor = _actor(db, created_by)
    if actor is not None and not access.can(actor[2], "run_studies"):
        raise access.AccessError(f"Only a lead or an admin may set up a study; {actor[1]} is a {actor[2]}.")


def add_creator(db: sqlite_utils.Database, study_id: int, created_by: int | None, at: float) -> None:
    """Inside the write transaction that writes a study: a lead who set it up leads it."""
    if created_by is None:
        return
    row = db.execute("SELECT role FROM users WHERE id = ?", [created_by]).fetchone()
    if row is not None and row[0] == access.LEAD:
        db.execute("INSERT OR IGNORE INTO study_leads (study_id, user_id, added_by, added_at) VALUES (?, ?, ?, ?)",
                   [study_id, created_by, created_by, at])


def copy_leads(db: sqlite_utils.Database, source_id: int, copy_id: int, by: int | None, at: float) -> None:
    """Inside the write transaction that copies a study: the copy is led by the source's leads."""
    db.execute("INSERT OR IGNORE INTO study_leads (study_id, user_id, added_by, added_at)"
               " SELECT ?, user_id, ?, ? FROM study_leads WHERE study_id = ?", [copy_id, by, at, source_id])


def leads_of(db: sqlite_utils.Database, study_id: int) -> list[Lead]:
    """The leads of a study, by name."""
    return [Lead(row[0], row[1], row[2], row[3]) for row in db.execute(
        "SELECT l.user_id, u.username, l.added_at, b.username FROM study_leads l JOIN users u ON u.id = l.user_id"
        " LEFT JOIN users b ON b.id = l.added_by WHERE l.study_id = ? ORDER BY u.username COLLATE NOCASE",
        [study_id])]


def _check_admin(db: sqlite_utils.Database, by: dict | int | None, what: str) -> int | None:
    actor = _actor(db, by)
    if actor is not None and actor[2] != access.ADMIN:
        raise access.AccessError(f"Only an admin may {what}; {actor[1]} is a {actor[2]}.")
    return None if actor is None else actor[0]


def add_lead(db: sqlite_utils.Database, study_id: int, user_id: int, *, by: dict | int | None) -> None:
    """Make the lead account ``user_id`` a lead of the study (by an admin). A :class:`StudyError` says
    why not (no such study, not a lead account, not active, a lead of it already); nothing is written."""
    by_id = _check_admin(db, by, "give a study another lead")
    study = db.execute("SELECT name FROM studies WHERE id = ?", [study_id]).fetchone()
    if study is None:
        raise StudyError(f"There is no study with id {study_id}.")
    person = db.execute("SELECT username, role FROM users WHERE id = ?", [user_id]).fetchone()
    if person is None:
        raise StudyError(f"There is no account with id {user_id}.")
    if person[1] != access.LEAD:
        raise StudyError(f"{person[0]!r} is a {person[1]} account, not a lead: only a lead account leads a study "
                         "(an admin runs every study already).")
    if (status := accounts.account_status(db, user_id)) != "active":
        raise StudyError(f"{person[0]!r} is a {status} account: it cannot lead a study.")
    with write_transaction(db):
        if _leads(db, study_id, user_id):
            raise StudyError(f"{person[0]!r} already leads {study[0]!r}.")
        db.execute("INSERT INTO study_leads (study_id, user_id, added_by, added_at) VALUES (?, ?, ?, ?)",
                   [study_id, user_id, by_id, time.time()])
        changes.record(db, by_id, "study.add_lead", f"study:{study_id}", user_id=user_id)


def remove_lead(db: sqlite_utils.Database, study_id: int, user_id: int, *, by: dict | int | None) -> None:
    """Take a lead off the study (by an admin): they no longer see or run it. Nothing else changes."""
    by_id = _check_admin(db, by, "take a lead off a study")
    with write_transaction(db):
        gone = db.execute("DELETE FROM study_leads WHERE study_id = ? AND user_id = ?", [study_id, user_id]).rowcount
        if not gone:
            raise StudyError("That account does not lead this study.")
        changes.record(db, by_id, "study.remove_lead", f"study:{study_id}", user_id=user_id)
