"""Submitting a rewrite, reviewing it, and flags on source samples.

A submission is refused unless the rewrite passes the structure and answer checks of
:mod:`structext_core.structext_eval.rewrite` (an admin may accept a structure exception with a written
reason; the answer check is never waived, so every exported sample audits). Admins approve or
return submissions with a comment; anyone may flag a source sample.
"""

from __future__ import annotations

import json
import time

import sqlite_utils

from structext_core.structext_eval import rewrite, sandboxed, seal
from structext_core.structext_eval.campaign.drafts import _write_draft
from structext_core.structext_eval.campaign.items import get_item
from structext_core.structext_eval.campaign.rules import (
    CampaignError,
    SubmissionRefused,
    _require_access,
    _require_admin,
    _require_draft_sizes,
    _require_editable,
    _require_length,
    _require_open_campaign,
    oversees,
)
from structext_core.studio import sandbox
from structext_core.studio.storage import write_transaction

#: Why an untouched original is no rewrite: said before Submit (the workspace) and by a refused Submit.
NOT_REWRITTEN = ("the reference is still the abstract original. Rewrite its values into the scenario first "
                 "(Map values, or Edit the result).")


def not_rewritten(sample: dict, texts: rewrite.Texts) -> bool:
    """Whether ``texts`` leave the reference of ``sample`` as it is: nothing to check yet (the
    original passes its own checks trivially) and nothing :func:`submit` accepts."""
    return texts.reference == sample["reference"]


def answer_mode(db: sqlite_utils.Database, user: dict | None, language: str,
                category: str | None = None) -> tuple[str, str]:
    """When the answer check of a rewrite in ``language`` (of the task category ``category``)
    runs for ``user`` (and, when it is withheld, why): always for an overseer (they review, and
    may accept a structure exception); never while the user has an open study question in that
    format or category (:mod:`structext_core.studio.seal`); otherwise once the structure check passes."""
    if oversees(user):
        return rewrite.ANSWER_ALWAYS, ""
    why = seal.answer_check_withheld(db, user, language, category)
    return (rewrite.ANSWER_WITHHELD, why) if why else (rewrite.ANSWER_AFTER_STRUCTURE, "")


def live_check(db: sqlite_utils.Database, item: dict, user: dict | None,
               texts: rewrite.Texts) -> rewrite.CheckReport | sandbox.Unchecked:
    """The live checks of ``texts`` as ``user`` may see them (:func:`answer_mode`), run in a
    check worker: a withheld answer check is not run at all."""
    mode, why = answer_mode(db, user, item["sample"]["language"], item["sample"].get("task"))
    return sandboxed.check_rewrite(item["sample"], texts.reference, texts.question, texts.answer, mode, why)


def submit(db: sqlite_utils.Database, item_id: int, user: dict, texts: rewrite.Texts,
           mapping: dict[str, str | None], exception_reason: str | None = None) -> rewrite.CheckReport:
    """Submit a rewrite for review; refused (:class:`SubmissionRefused`) unless both checks pass
    and the reference differs from the abstract original.

    An admin may submit a rewrite whose structure check fails with a written
    ``exception_reason``; the answer check is never waived (the export must audit).

    The refusal says only what the submitter may see (:func:`answer_mode`): a rewrite whose
    answer check is withheld from them is accepted on its structure, its answer check is
    stored for the reviewer, and approving it needs that check to pass (:func:`review`).
    The returned report is the submitter's view.
    """
    _require_draft_sizes(texts, mapping)
    _require_length("exception reason", exception_reason or "", "MAX_NOTE_CHARS")
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    _require_open_campaign(db, item)
    full = sandboxed.check_rewrite(item["sample"], texts.reference, texts.question, texts.answer)
    if isinstance(full, sandbox.Unchecked):  # a check that cannot complete never lets a text through
        raise CampaignError(f"Submission refused: {full.message} Nothing was submitted; the saved draft stays as it is.")
    mode, why = answer_mode(db, user, item["sample"]["language"], item["sample"].get("task"))
    report = full
    if mode == rewrite.ANSWER_WITHHELD:
        report = full.without_answer(why)
    elif mode == rewrite.ANSWER_AFTER_STRUCTURE and not full.structure_ok:
        report = full.without_answer(rewrite.ANSWER_AFTER_STRUCTURE_NOTE)
    reason = (exception_reason or "").strip()
    if not_rewritten(item["sample"], texts):
        raise SubmissionRefused(f"Submission refused: {NOT_REWRITTEN}", report)
    if not report.answer_ok:
        raise SubmissionRefused("Submission refused: the answer check fails (" +
                                "; ".join(str(p) for p in report.answer) + "). The answer check cannot be waived.",
                                report)
    if not report.structure_ok:
        if not reason:
            raise SubmissionRefused("Submission refused: the structure check fails (" +
                                    "; ".join(str(p) for p in report.parse + report.structure) + ").", report)
        if not oversees(user):
            raise SubmissionRefused("Submission refused: only an admin can accept an exception to the structure "
                                    "check.", report)
    elif reason:
        reason = ""  # nothing to except
    now = time.time()
    with write_transaction(db):
        _write_draft(db, item_id, user, texts, mapping, now)
        db.execute(
            "INSERT INTO rewrite_submissions (item_id, reference, question, answer, mapping_json, structure_ok, "
            "answer_ok, exception_reason, submitted_by, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [item_id, texts.reference, texts.question, texts.answer,
             json.dumps(rewrite.clean_mapping(mapping), ensure_ascii=False), int(full.structure_ok),
             int(full.answer_ok), reason or None, user["id"], now])
        db.execute("UPDATE rewrite_items SET status = 'submitted' WHERE id = ?", [item_id])
    return report


def latest_submission(db: sqlite_utils.Database, item_id: int) -> dict | None:
    rows = list(db.query("SELECT s.*, u.username AS submitted_by_name FROM rewrite_submissions s "
                         "LEFT JOIN users u ON u.id = s.submitted_by WHERE item_id = ? ORDER BY s.id DESC LIMIT 1",
                         [item_id]))
    return rows[0] if rows else None


def submitted_texts(submission: dict) -> rewrite.Texts:
    """The reference, question and answer of a submission (a row of :func:`latest_submission`)."""
    return rewrite.Texts(submission["reference"], submission["question"], submission["answer"])


def check_submission(item: dict, submission: dict) -> rewrite.CheckReport | sandbox.Unchecked:
    """The checks of a submitted rewrite, run again for the reviewer (the sandbox's answer when
    they cannot complete). The checks are deterministic, so their warnings (abstract tokens left,
    contact details) are the ones the annotator saw when submitting these texts: nothing more
    is stored for them."""
    texts = submitted_texts(submission)
    return sandboxed.check_rewrite(item["sample"], texts.reference, texts.question, texts.answer)


def submission_diff(item: dict, submission: dict) -> list[rewrite.TextDiff]:
    """What the submitted rewrite changed in the original's reference, question and answer
    (:func:`structext_core.structext_eval.rewrite.diff_texts`, bounded)."""
    return rewrite.diff_texts(rewrite.original_texts(item["sample"]), submitted_texts(submission))


def latest_review(db: sqlite_utils.Database, item_id: int) -> dict | None:
    rows = list(db.query("SELECT r.*, u.username AS reviewer FROM rewrite_reviews r LEFT JOIN users u "
                         "ON u.id = r.reviewer_id WHERE item_id = ? ORDER BY r.id DESC LIMIT 1", [item_id]))
    return rows[0] if rows else None


def review(db: sqlite_utils.Database, item_id: int, user: dict, decision: str, comment: str = "") -> None:
    """Approve a submitted rewrite, or return it to its annotator with a comment."""
    _require_admin(user)
    if decision not in ("approved", "returned"):
        raise CampaignError(f"Unknown decision {decision!r}: approve or return.")
    comment = (comment or "").strip()
    _require_length("review comment", comment, "MAX_NOTE_CHARS")
    if decision == "returned" and not comment:
        raise CampaignError("Say what to change: returning a rewrite needs a comment for the annotator.")
    item = get_item(db, item_id)
    _require_open_campaign(db, item)
    if item["status"] != "submitted":
        raise CampaignError(f"Item {item['position']} is {item['status']}, not waiting for review.")
    submission = latest_submission(db, item_id)
    if decision == "approved":  # the answer check is never waived, also where the annotator could not see it
        report = check_submission(item, submission)
        if isinstance(report, sandbox.Unchecked):
            raise CampaignError(f"Not approved: {report.message}")
        if not report.answer_ok:
            raise CampaignError("Not approved: the answer check fails (" + "; ".join(str(p) for p in report.answer)
                                + "). Send it back; say that the answer does not follow from the reference, "
                                  "without giving the answer.")
    with write_transaction(db):
        db.execute("INSERT INTO rewrite_reviews (item_id, submission_id, reviewer_id, decision, comment, reviewed_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", [item_id, submission["id"], user["id"], decision, comment,
                                                 time.time()])
        db.execute("UPDATE rewrite_items SET status = ? WHERE id = ?", [decision, item_id])


def flag_sample(db: sqlite_utils.Database, item_id: int, user: dict, reason: str) -> int:
    """Flag the source sample of an item as wrong; the admin sees it in the flag list."""
    reason = (reason or "").strip()
    _require_length("flag reason", reason, "MAX_NOTE_CHARS")
    if len(reason) < 5:
        raise CampaignError("Say what is wrong with the source sample (at least a few words).")
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_open_campaign(db, item)
    with write_transaction(db):
        cursor = db.execute("INSERT INTO rewrite_flags (item_id, sample_id, user_id, reason, created_at) "
                            "VALUES (?, ?, ?, ?, ?)", [item_id, item["sample_id"], user["id"], reason, time.time()])
    return cursor.lastrowid


def list_flags(db: sqlite_utils.Database, campaign_id: int | None = None, open_only: bool = False) -> list[dict]:
    clauses, args = [], []
    if campaign_id is not None:
        clauses.append("i.campaign_id = ?")
        args.append(campaign_id)
    if open_only:
        clauses.append("f.resolved_at IS NULL")
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    return list(db.query(
        "SELECT f.id, f.item_id, i.position, f.sample_id, u.username AS flagged_by, f.reason, f.created_at, "
        "r.username AS resolved_by, f.resolved_at, f.resolution FROM rewrite_flags f "
        "JOIN rewrite_items i ON i.id = f.item_id LEFT JOIN users u ON u.id = f.user_id "
        f"LEFT JOIN users r ON r.id = f.resolved_by {where} ORDER BY f.id", args))


def resolve_flag(db: sqlite_utils.Database, flag_id: int, user: dict, resolution: str) -> None:
    _require_admin(user)
    resolution = (resolution or "").strip()
    _require_length("flag resolution", resolution, "MAX_NOTE_CHARS")
    if not resolution:
        raise CampaignError("Write what was done about the flag.")
    with write_transaction(db):
        cursor = db.execute("UPDATE rewrite_flags SET resolved_by = ?, resolved_at = ?, resolution = ? "
                            "WHERE id = ? AND resolved_at IS NULL", [user["id"], time.time(), resolution, flag_id])
    if cursor.rowcount == 0:
        raise CampaignError(f"Flag {flag_id} does not exist or is resolved already.")
