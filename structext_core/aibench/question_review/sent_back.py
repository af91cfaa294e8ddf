"""Question review: questions sent back from Results to a campaign."""

from __future__ import annotations

import json
import time
from collections import defaultdict

import sqlite_utils

from structext_core.aibench.question_review.campaigns import campaign, list_campaigns, list_items
from structext_core.aibench.question_review.common import ReviewError, _require_lead, _text
from structext_core.aibench.question_review.papers import load_dataset
from structext_core.aibench.question_review.reviewing import latest_submission
from structext_core.studio import changes
from structext_core.studio.storage import write_transaction
from structext_core.text.words import plural

# ---- questions sent back from Results ------------------------------------------------------
#
# Where people answering from the paper's own figure and a VLM solver part (Results, AIBench's
# human side), the question or the solver is wrong: the lead sends the question back to review,
# with the reason and the evidence (the people's letters as counts, never names; the solver's
# letter; the key). It waits for the next campaign of the data set that takes its paper, or goes
# to a chosen open campaign at once; there a paper already submitted or approved is reopened
# (returned, with the lead's reason as the comment), and the reviewer sees the reason and the
# evidence beside the question.

MAX_EVIDENCE_CHARS = 4_000
EVIDENCE_KEYS = ("people", "letters", "majority", "solver", "solver_letter", "key", "category", "why", "system")


def _bounded_evidence(evidence: dict | None) -> str:
    kept = {k: v for k, v in (evidence or {}).items() if k in EVIDENCE_KEYS}
    text = json.dumps(kept, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > MAX_EVIDENCE_CHARS:
        raise ReviewError(f"The evidence has {len(text):,} characters; keep it under {MAX_EVIDENCE_CHARS:,}.")
    return text


def _open_sendback(db: sqlite_utils.Database, dataset: str, paper_id: str, question_id: str) -> dict | None:
    """The question's send-back still waiting: queued, or in a campaign whose paper has not been
    submitted since."""
    for row in sendbacks(db, dataset=dataset):
        if row["paper_id"] == paper_id and row["question_id"] == question_id and row["state"] != "reviewed":
            return row
    return None


def open_campaigns(db: sqlite_utils.Database, dataset: str) -> list[dict]:
    """The unarchived review campaigns of ``dataset``, newest first (where a question can be sent)."""
    return [c for c in list_campaigns(db) if c["dataset"] == dataset and c["archived_at"] is None]


def send_back(db: sqlite_utils.Database, user: dict, dataset: str, paper_id: str, question_id: str, reason: str,
              evidence: dict | None = None, campaign_id: int | None = None) -> int:
    """Send a question of the stored set ``dataset`` back to expert review (the lead only); the
    send-back's id. ``campaign_id`` None: it waits for the next campaign of the data set that
    takes its paper; else that campaign (open, of this data set, with the paper) reviews it now,
    reopening the paper where it was submitted or approved. A question already waiting is refused."""
    _require_lead(user)
    reason = _text("reason", reason)
    if len(reason) < 5:
        raise ReviewError("Say why the question goes back to review (at least a few words).")
    evidence_text = _bounded_evidence(evidence)
    data = load_dataset(dataset)
    paper = data.papers.get(paper_id)
    if paper is None or question_id not in {q.id for q in paper.questions}:
        raise ReviewError(f"The data set {dataset!r} has no question {question_id!r} on paper {paper_id!r}.")
    items = []
    if campaign_id is not None:
        row = campaign(db, campaign_id)
        if row["dataset"] != dataset:
            raise ReviewError(f"Campaign {row['name']!r} reviews the data set {row['dataset']!r}, not {dataset!r}.")
        if row["archived_at"] is not None:
            raise ReviewError(f"Campaign {row['name']!r} is archived: choose an open one, or the next campaign.")
        items = [i for i in list_items(db, campaign_id) if i["paper_id"] == paper_id]
        if not items:
            raise ReviewError(f"Campaign {row['name']!r} does not review paper {paper_id!r}: choose another, "
                              "or send it to the next campaign.")
    waiting = _open_sendback(db, dataset, paper_id, question_id)
    if waiting is not None:
        raise ReviewError(f"Question {question_id!r} of paper {paper_id!r} is already back in review "
                          f"({waiting['where']}).")
    with write_transaction(db):
        at = time.time()
        sendback_id = db.execute(
            "INSERT INTO qreview_sendbacks (dataset, paper_id, question_id, campaign_id, reason, evidence_json, "
            "by_user, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [dataset, paper_id, question_id, campaign_id, reason, evidence_text, user["id"], at]).lastrowid
        reopened = _reopen(db, user, items, question_id, reason, at)
        changes.record(db, user["id"], "qreview.send_back", f"aibench-question:{dataset}/{paper_id}/{question_id}",
                       sendback=sendback_id, campaign=campaign_id, reason=reason, evidence=json.loads(evidence_text),
                       reopened_items=reopened)
    return sendback_id


def _reopen(db: sqlite_utils.Database, user: dict, items: list[dict], question_id: str, reason: str,
            at: float) -> list[int]:
    """Inside a write: the paper's items already submitted or approved go back to their reviewer
    (returned, the lead's reason as the comment); the ids reopened."""
    reopened = []
    for item in items:
        if item["status"] in ("submitted", "approved"):
            sub = latest_submission(db, item["id"])
            db.execute("INSERT INTO qreview_reviews (item_id, submission_id, reviewer_id, decision, comment, "
                       "reviewed_at) VALUES (?, ?, ?, 'returned', ?, ?)",
                       [item["id"], sub["id"], user["id"], f"Question {question_id} sent back from Results: {reason}",
                        at])
            db.execute("UPDATE qreview_items SET status = 'returned' WHERE id = ?", [item["id"]])
            reopened.append(item["id"])
    return reopened


def withdraw_send_back(db: sqlite_utils.Database, user: dict, sendback_id: int) -> None:
    """Take a send-back back (the lead only): it no longer waits nor shows on the review page."""
    _require_lead(user)
    with write_transaction(db):
        row = db.execute("SELECT dataset, paper_id, question_id FROM qreview_sendbacks WHERE id = ? "
                         "AND withdrawn_at IS NULL", [sendback_id]).fetchone()
        if row is None:
            raise ReviewError(f"Send-back {sendback_id} does not exist or was withdrawn already.")
        db.execute("UPDATE qreview_sendbacks SET withdrawn_at = ? WHERE id = ?", [time.time(), sendback_id])
        changes.record(db, user["id"], "qreview.withdraw_send_back", f"aibench-question:{row[0]}/{row[1]}/{row[2]}",
                       sendback=sendback_id)


def move_send_back(db: sqlite_utils.Database, user: dict, sendback_id: int, campaign_id: int) -> None:
    """Put a queued send-back into an open campaign of its data set that reviews its paper now."""
    _require_lead(user)
    rows = [r for r in sendbacks(db) if r["id"] == sendback_id]
    if not rows or rows[0]["state"] != "queued":
        raise ReviewError(f"Send-back {sendback_id} is not waiting for a campaign.")
    row = rows[0]
    target = campaign(db, campaign_id)
    if target["dataset"] != row["dataset"] or target["archived_at"] is not None:
        raise ReviewError(f"Campaign {target['name']!r} is not an open campaign of the data set {row['dataset']!r}.")
    items = [i for i in list_items(db, campaign_id) if i["paper_id"] == row["paper_id"]]
    if not items:
        raise ReviewError(f"Campaign {target['name']!r} does not review paper {row['paper_id']!r}.")
    with write_transaction(db):
        db.execute("UPDATE qreview_sendbacks SET campaign_id = ? WHERE id = ? AND campaign_id IS NULL",
                   [campaign_id, sendback_id])
        reopened = _reopen(db, user, items, row["question_id"], row["reason"], time.time())
        changes.record(db, user["id"], "qreview.move_send_back",
                       f"aibench-question:{row['dataset']}/{row['paper_id']}/{row['question_id']}",
                       sendback=sendback_id, campaign=campaign_id, reopened_items=reopened)


def sendbacks(db: sqlite_utils.Database, *, dataset: str | None = None, campaign_id: int | None = None,
              paper_id: str | None = None) -> list[dict]:
    """Send-backs not withdrawn, newest first, each with its ``evidence`` (a dict), ``lead``,
    ``campaign_name`` and ``state``: ``queued`` (waiting for the next campaign), ``waiting`` (in
    a campaign, its paper not submitted since) or ``reviewed`` (a reviewer submitted the paper
    since; ``decision`` is what they decided on the question), and ``where`` in words."""
    where, args = ["b.withdrawn_at IS NULL"], []
    for column, value in (("b.dataset", dataset), ("b.campaign_id", campaign_id), ("b.paper_id", paper_id)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    rows = list(db.query(
        "SELECT b.*, u.username AS lead, c.name AS campaign_name FROM qreview_sendbacks b "
        "LEFT JOIN users u ON u.id = b.by_user LEFT JOIN qreview_campaigns c ON c.id = b.campaign_id "
        f"WHERE {' AND '.join(where)} ORDER BY b.id DESC", args))
    for row in rows:
        row["evidence"] = json.loads(row.pop("evidence_json") or "{}")
        row["state"], row["decision"] = "queued", None
        row["where"] = f"waiting for the next review campaign of {row['dataset']!r}"
        if row["campaign_id"] is None:
            continue
        row["state"], row["where"] = "waiting", f"in campaign {row['campaign_name']!r}, not reviewed yet"
        for sub in db.query(
                "SELECT s.decisions_json, s.submitted_at FROM qreview_submissions s JOIN qreview_items i ON "
                "i.id = s.item_id WHERE i.campaign_id = ? AND i.paper_id = ? AND s.submitted_at >= ? ORDER BY s.id",
                [row["campaign_id"], row["paper_id"], row["at"]]):
            decided = {d["question_id"]: d["action"] for d in json.loads(sub["decisions_json"])}
            row["state"], row["decision"] = "reviewed", decided.get(row["question_id"])
            row["where"] = f"reviewed in campaign {row['campaign_name']!r}: {row['decision'] or 'no decision'}"
    return rows


def sendbacks_for_item(db: sqlite_utils.Database, item: dict) -> dict[str, list[dict]]:
    """The send-backs of the item's paper in its campaign, by question id (the review page shows
    them beside each question)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for row in sendbacks(db, campaign_id=item["campaign_id"], paper_id=item["paper_id"]):
        out[row["question_id"]].append(row)
    return dict(out)


def describe_evidence(evidence: dict) -> str:
    """The evidence of a send-back in one line of plain text (no names: counts of letters)."""
    parts = []
    if evidence.get("letters"):
        parts.append(f"people chose {evidence['letters']}" + (f" ({plural(evidence['people'], 'person')})"
                                                             if evidence.get("people") else ""))
    if evidence.get("solver"):
        parts.append(f"{evidence['solver']} chose {evidence.get('solver_letter') or 'no clear letter'}")
    if evidence.get("key"):
        parts.append(f"key {evidence['key']}")
    if evidence.get("why"):
        parts.append(str(evidence["why"]))
    return "; ".join(parts)
