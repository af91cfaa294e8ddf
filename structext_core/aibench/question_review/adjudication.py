"""Question review: progress, agreement between two reviewers of a paper, adjudication."""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import replace

import sqlite_utils

from structext_core.aibench.model import LEVELS, Question
from structext_core.aibench.question_review.campaigns import _require_not_archived, campaign, list_items
from structext_core.aibench.question_review.common import ACTIONS, STATUSES, ReviewError, _require_lead, _text
from structext_core.aibench.question_review.drafts import _bounded_question, question_json
from structext_core.aibench.question_review.papers import load_dataset
from structext_core.aibench.question_review.reviewing import latest_submission
from structext_core.aibench.review_checks import check_question
from structext_core.evaluation.agreement import cohen_kappa
from structext_core.studio import changes
from structext_core.studio.storage import write_transaction

# ---- progress, agreement, adjudication ------------------------------------------------------

def progress(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """Per reviewer: papers in each status, and the median active minutes of a submitted paper."""
    counts: dict[str, Counter] = defaultdict(Counter)
    minutes: dict[str, list[float]] = defaultdict(list)
    for item in list_items(db, campaign_id):
        counts[item["reviewer"]][item["status"]] += 1
        if item["status"] in ("submitted", "approved"):
            sub = latest_submission(db, item["id"])
            if sub:
                minutes[item["reviewer"]].append(sub["active_seconds"] / 60)
    out = []
    for name, c in sorted(counts.items()):
        times = sorted(minutes[name])
        median = times[len(times) // 2] if len(times) % 2 else (
            (times[len(times) // 2 - 1] + times[len(times) // 2]) / 2 if times else None)
        out.append({"reviewer": name, **{s: c[s] for s in STATUSES}, "total": sum(c.values()),
                    "median_active_min": None if median is None else round(median, 1)})
    return out


def _submitted(db: sqlite_utils.Database, campaign_id: int) -> dict[str, list[dict]]:
    """Per paper: the latest submission of each of its items that is submitted or approved."""
    out: dict[str, list[dict]] = defaultdict(list)
    for item in list_items(db, campaign_id):
        if item["status"] in ("submitted", "approved"):
            sub = latest_submission(db, item["id"])
            out[item["paper_id"]].append({"item": item, "decisions": {d["question_id"]: d for d in sub["decisions"]},
                                          "at": sub["submitted_at"]})
    return out


def _same(a: dict, b: dict) -> bool:
    return a["action"] == b["action"] and (a["action"] != "edit" or a["question"] == b["question"])


def agreement(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """Cohen's kappa on accept/edit/remove over the generated questions of double-reviewed papers
    both reviewers submitted: one row overall, then one per level (n, agreement %, kappa)."""
    data = load_dataset(campaign(db, campaign_id)["dataset"])
    pairs: list[tuple[int, str, str]] = []
    for paper_id, subs in _submitted(db, campaign_id).items():
        if len(subs) != 2 or paper_id not in data.papers:
            continue
        for q in data.papers[paper_id].questions:
            a, b = subs[0]["decisions"].get(q.id), subs[1]["decisions"].get(q.id)
            if a and b:
                pairs.append((q.level, a["action"], b["action"]))
    rows = []
    for label, chosen in [("all", pairs)] + [(f"{lv} {LEVELS[lv]}", [p for p in pairs if p[0] == lv])
                                              for lv in LEVELS]:
        n = len(chosen)
        kappa = cohen_kappa([p[1] for p in chosen], [p[2] for p in chosen]) if n else float("nan")
        agree = 100 * sum(p[1] == p[2] for p in chosen) / n if n else float("nan")
        rows.append({"level": label, "n": n, "agreement_pct": None if n == 0 else round(agree, 1),
                     "kappa": None if math.isnan(kappa) else round(kappa, 3)})
    return rows


def latest_adjudication(db: sqlite_utils.Database, campaign_id: int, paper_id: str, question_id: str) -> dict | None:
    rows = list(db.query("SELECT a.*, u.username AS lead FROM qreview_adjudications a LEFT JOIN users u ON "
                         "u.id = a.by_user WHERE campaign_id = ? AND paper_id = ? AND question_id = ? "
                         "ORDER BY a.id DESC LIMIT 1", [campaign_id, paper_id, question_id]))
    return rows[0] if rows else None


def disagreements(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """Generated questions of double-reviewed papers whose two submitted decisions differ (another
    action, or two different edits), with both versions and the lead's adjudication if any."""
    data = load_dataset(campaign(db, campaign_id)["dataset"])
    out = []
    for paper_id, subs in sorted(_submitted(db, campaign_id).items()):
        if len(subs) != 2 or paper_id not in data.papers:
            continue
        for q in data.papers[paper_id].questions:
            a, b = subs[0]["decisions"].get(q.id), subs[1]["decisions"].get(q.id)
            if a and b and not _same(a, b):
                out.append({"paper_id": paper_id, "question_id": q.id, "level": q.level, "original": q,
                            "versions": [(s["item"]["reviewer"], s["decisions"][q.id]) for s in subs],
                            "adjudication": latest_adjudication(db, campaign_id, paper_id, q.id)})
    return out


def adjudicate(db: sqlite_utils.Database, campaign_id: int, paper_id: str, question_id: str, user: dict,
               action: str, question: Question | None = None, reason: str = "") -> None:
    """The lead's final decision on a question two reviewers disagree on (a new row each time;
    the newest counts). An edit must pass the checks that block a reviewer's submission."""
    _require_lead(user)
    if action not in ACTIONS:
        raise ReviewError(f"Unknown decision {action!r}: accept, edit or remove.")
    reason = _text("reason", reason)
    if not reason:
        raise ReviewError("Say why: an adjudication needs a reason.")
    _require_not_archived(db, campaign_id)
    data = load_dataset(campaign(db, campaign_id)["dataset"])
    paper = data.papers.get(paper_id)
    if paper is None or question_id not in {q.id for q in paper.questions}:
        raise ReviewError(f"Paper {paper_id!r} has no question {question_id!r}.")
    if action == "edit":
        if question is None:
            raise ReviewError("An edit needs the edited question.")
        question = replace(question, id=question_id)
        _bounded_question(question)
        found = check_question(question, paper.graph)
        if found.problems:
            raise ReviewError(f"Not adjudicated: {'; '.join(found.problems)}.")
    with write_transaction(db):
        db.execute("INSERT INTO qreview_adjudications (campaign_id, paper_id, question_id, action, question_json, "
                   "reason, by_user, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [campaign_id, paper_id, question_id, action,
                    question_json(question) if action == "edit" else None, reason, user["id"], time.time()])
        changes.record(db, user["id"], "qreview.adjudicate", f"qreview:{campaign_id}", paper=paper_id,
                       question=question_id, decision=action, reason=reason)
