"""Question review: submit, the lead's review, flags."""

from __future__ import annotations

import json
import time

import sqlite_utils

from structext_core.aibench.question_review.campaigns import _require_not_archived, get_item
from structext_core.aibench.question_review.common import (
    ReviewError,
    _require_access,
    _require_editable,
    _require_lead,
    _text,
)
from structext_core.aibench.question_review.drafts import (
    Decision,
    Row,
    blocking,
    decisions,
    question_from,
    question_json,
    review_rows,
)
from structext_core.aibench.question_review.papers import paper_of
from structext_core.aibench.question_review.timing import _clock_row, _update_clock
from structext_core.studio import changes
from structext_core.studio.clock import (
    ClockSettings,
    advance,
)
from structext_core.studio.storage import write_transaction
from structext_core.text.words import plural

# ---- submit, review, flags ------------------------------------------------------------------

def submit(db: sqlite_utils.Database, item_id: int, user: dict, *, settings: ClockSettings | None = None,
           at: float | None = None) -> int:
    """Submit the reviewer's decisions on a paper; returns the submission id. Refused (nothing
    written) while :func:`blocking` names anything."""
    settings = settings or ClockSettings()
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    found = decisions(db, item_id)
    problems = blocking(review_rows(paper_of(item), found))
    if problems:
        raise ReviewError(f"Not submitted: {plural(len(problems), 'question')} {'needs' if len(problems) == 1 else 'need'} attention: " + " ".join(problems[:8]))
    at = time.time() if at is None else at
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is None:
            clock = {**row, **advance(row, at, settings.grace_seconds)}
            paused = row["paused_seconds"]
        else:
            clock, paused = row, row["paused_seconds"] + max(0.0, at - row["paused_at"])
        payload = [{"question_id": d.question_id, "action": d.action, "reason": d.reason,
                    "question": json.loads(question_json(d.question)) if d.question else None}
                   for d in found.values()]
        submission = db.execute(
            "INSERT INTO qreview_submissions (item_id, decisions_json, active_seconds, away_seconds, idle_seconds, "
            "paused_seconds, submitted_by, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [item_id, json.dumps(payload, ensure_ascii=False), clock["active_seconds"], clock["away_seconds"],
             clock["idle_seconds"], paused, user["id"], at]).lastrowid
        _update_clock(db, item_id, {"active_seconds": clock["active_seconds"], "away_seconds": clock["away_seconds"],
                                    "paused_seconds": paused, "paused_at": None, "last_beat_at": None,
                                    "hidden_at": None})
        db.execute("UPDATE qreview_items SET status = 'submitted' WHERE id = ?", [item_id])
    return submission


def latest_submission(db: sqlite_utils.Database, item_id: int) -> dict | None:
    rows = list(db.query("SELECT s.*, u.username AS submitted_by_name FROM qreview_submissions s LEFT JOIN users u "
                         "ON u.id = s.submitted_by WHERE item_id = ? ORDER BY s.id DESC LIMIT 1", [item_id]))
    if not rows:
        return None
    row = rows[0]
    row["decisions"] = json.loads(row["decisions_json"])
    return row


def submission_rows(db: sqlite_utils.Database, item_id: int) -> list[Row]:
    """The latest submission of an item as :class:`Row` s (with the checks and graph warnings the
    reviewer saw), for the lead's review; empty when nothing was submitted."""
    sub = latest_submission(db, item_id)
    if sub is None:
        return []
    found = {d["question_id"]: Decision(d["question_id"], d["action"],
                                        question_from(d["question"], d["question_id"]) if d["question"] else None,
                                        d["reason"], sub["submitted_at"]) for d in sub["decisions"]}
    return review_rows(paper_of(get_item(db, item_id)), found)


def latest_review(db: sqlite_utils.Database, item_id: int) -> dict | None:
    rows = list(db.query("SELECT r.*, u.username AS lead FROM qreview_reviews r LEFT JOIN users u ON u.id = "
                         "r.reviewer_id WHERE item_id = ? ORDER BY r.id DESC LIMIT 1", [item_id]))
    return rows[0] if rows else None


def review(db: sqlite_utils.Database, item_id: int, user: dict, decision: str, comment: str = "") -> None:
    """The lead approves a submitted paper, or sends it back to its reviewer with a comment."""
    _require_lead(user)
    if decision not in ("approved", "returned"):
        raise ReviewError(f"Unknown decision {decision!r}: approve or send back.")
    comment = _text("comment", comment)
    if decision == "returned" and not comment:
        raise ReviewError("Say what to change: sending a paper back needs a comment for the reviewer.")
    item = get_item(db, item_id)
    _require_not_archived(db, item["campaign_id"])
    if item["status"] != "submitted":
        raise ReviewError(f"Paper {item['paper_id']!r} ({item['reviewer']}) is {item['status']}, "
                          "not waiting for review.")
    submission = latest_submission(db, item_id)
    with write_transaction(db):
        db.execute("INSERT INTO qreview_reviews (item_id, submission_id, reviewer_id, decision, comment, reviewed_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", [item_id, submission["id"], user["id"], decision, comment, time.time()])
        db.execute("UPDATE qreview_items SET status = ? WHERE id = ?", [decision, item_id])
        changes.record(db, user["id"], f"qreview.{decision}", f"qreview:{item['campaign_id']}",
                       item=item_id, paper=item["paper_id"], comment=comment)


def flag(db: sqlite_utils.Database, item_id: int, user: dict, reason: str, question_id: str | None = None) -> int:
    """Flag the paper (or one of its questions) for the lead: a broken figure, a wrong graph ..."""
    reason = _text("flag reason", reason)
    if len(reason) < 5:
        raise ReviewError("Say what is wrong (at least a few words).")
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_not_archived(db, item["campaign_id"])
    with write_transaction(db):
        return db.execute("INSERT INTO qreview_flags (item_id, question_id, user_id, reason, created_at) "
                          "VALUES (?, ?, ?, ?, ?)", [item_id, question_id, user["id"], reason, time.time()]).lastrowid


def list_flags(db: sqlite_utils.Database, campaign_id: int, open_only: bool = False) -> list[dict]:
    return list(db.query(
        "SELECT f.id, i.paper_id, f.question_id, u.username AS flagged_by, f.reason, f.created_at, "
        "r.username AS resolved_by, f.resolution FROM qreview_flags f JOIN qreview_items i ON i.id = f.item_id "
        "LEFT JOIN users u ON u.id = f.user_id LEFT JOIN users r ON r.id = f.resolved_by WHERE i.campaign_id = ?"
        + (" AND f.resolved_at IS NULL" if open_only else "") + " ORDER BY f.id", [campaign_id]))


def resolve_flag(db: sqlite_utils.Database, flag_id: int, user: dict, resolution: str) -> None:
    _require_lead(user)
    resolution = _text("resolution", resolution)
    if not resolution:
        raise ReviewError("Write what was done about the flag.")
    found = db.execute("SELECT i.campaign_id FROM qreview_flags f JOIN qreview_items i ON i.id = f.item_id "
                       "WHERE f.id = ?", [flag_id]).fetchone()
    if found is None:
        raise ReviewError(f"Flag {flag_id} does not exist.")
    _require_not_archived(db, found[0])
    with write_transaction(db):
        done = db.execute("UPDATE qreview_flags SET resolved_by = ?, resolved_at = ?, resolution = ? "
                          "WHERE id = ? AND resolved_at IS NULL", [user["id"], time.time(), resolution, flag_id])
        if done.rowcount == 0:
            raise ReviewError(f"Flag {flag_id} does not exist or is resolved already.")
        changes.record(db, user["id"], "qreview.resolve_flag", f"qreview:{found[0]}", flag=flag_id,
                       resolution=resolution)
