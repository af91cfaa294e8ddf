"""Ending an account: disable, enable again, and delete (with the :class:`DeletionPlan` read before).

A disabled account (``users.disabled_at``) cannot log in, its sessions ended, its data stays;
an admin enables it again. A deleted account keeps its row, because answers, rewrites and
reviews point at it: its name becomes ``deleted-user-<id>`` (the old name is free again), its
password hash the unusable :data:`~structext_core.studio.accounts.credentials.DELETED_PASSWORD_HASH`,
and, when the admin chose to, its study answers and unfinished rewrite work are removed
(:func:`deletion_plan` says exactly what). The last enabled admin can be neither disabled nor
deleted.

Each change is one write transaction that re-reads the account and the admins inside it, so
two admins acting at once cannot disable the last two enabled admins between them; each is
written to the audit log in the same transaction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import changes
from structext_core.studio.accounts.credentials import (
    _STATUS_SQL,
    DELETED_NAME_PREFIX,
    DELETED_PASSWORD_HASH,
    AccountError,
)
from structext_core.studio.accounts.logins import _name_key
from structext_core.studio.accounts.sessions import _revoke_user_sessions
from structext_core.studio.storage import write_transaction
from structext_core.text.words import plural


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
