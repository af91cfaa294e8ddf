"""AIBench's expert review of questions: a review campaign over the papers of a stored data set.

What the paper did by hand (seven experts, about 20 minutes a paper), with what the Real-Test
rewriting campaigns (:mod:`structext_core.studio.campaign`) have: the lead creates a campaign over
a stored AIBench set and its reviewers; each paper goes to one reviewer, a seeded share of the
papers to two (independently: neither sees the other's work). A reviewer takes one paper at a
time and decides per question: ``accept``, ``edit`` (text, options, answer, level; with a
reason) or ``remove`` (with a reason), and may add questions. Every decision is a draft saved as
it is made; submitting needs a decision on every question and every edited or added question to
pass :func:`structext_core.aibench.review_checks.check_question` (warnings where the logic graph
disagrees do not block). The lead approves or sends back with a comment, resolves flags,
adjudicates the questions two reviewers disagree on, and exports the curated set in the import
format with each question's provenance and the review log.

Agreement: Cohen's kappa (:func:`structext_core.evaluation.agreement.cohen_kappa`) on
accept / edit / remove over the generated questions of double-reviewed papers that both
reviewers submitted, overall and per level, with n.

Time per paper: the honest clock of the studies (:mod:`structext_core.studio.study.clock`), kept
per item in the same columns: active, away, idle (re-booked before an idle auto-pause) and paused
seconds, from the heartbeats of the page.

Who is the lead is read from the one role table: whoever may open the review-campaign admin page
(:data:`LEAD_PAGE`). Every write is one transaction; a refused action raises
:class:`ReviewError` saying what and where, and writes nothing. Lead actions go to the audit log.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import random
import shutil
import time
import uuid
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import limits
from structext_core.aibench import store as aibench_store
from structext_core.aibench.model import LETTERS, LEVELS, ORIGINAL_SYSTEM, Paper, Question
from structext_core.aibench.papers import paper_to_dict
from structext_core.aibench.review_checks import Check, check_question
from structext_core.evaluation.agreement import cohen_kappa
from structext_core.studio import access, accounts, changes, seal
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.clock import (
    ClockSettings,
    _advance,
    _input_now,
    activity_columns,
    beat_columns,
    paused_columns,
    resume_columns,
    shown_seconds,
)
from structext_core.text import limits as text_limits
from structext_core.text.words import plural

LEAD_PAGE = "question_review_admin"
REVIEW_PAGE = "question_review"
ACTIONS = ("accept", "edit", "remove")
EDITABLE = ("todo", "draft", "returned")
STATUSES = ("todo", "draft", "submitted", "returned", "approved")
MAX_REASON_CHARS = 2_000
MAX_NAME_CHARS = 200
MAX_ADDED = 50
#: The share of papers reviewed twice when the lead says nothing (and there are two reviewers or more).
DEFAULT_DOUBLE_SHARE = 0.2
ADDED_PREFIX = "added-"
#: What a question becomes in the curated set (provenance).
GENERATED, REVISED, ADDED, REMOVED = "generated", "revised", "added", "removed"
_CLOCK = ("first_shown_at", "last_beat_at", "hidden_at", "paused_at", "pause_count", "paused_seconds",
          "active_seconds", "away_seconds", "idle_seconds", "last_input_at", "active_at_last_input")


class ReviewError(ValueError):
    """A user-caused problem of a review campaign; nothing was written."""


def oversees(user: dict | None) -> bool:
    """Whether ``user`` leads review campaigns (may open the lead's page)."""
    return user is not None and access.can_open(access.role_of(user), LEAD_PAGE)


def _require_lead(user: dict | None) -> None:
    if not oversees(user):
        raise ReviewError("Only a review lead (admin) may do this.")


def _text(what: str, value: str | None, limit: int = MAX_REASON_CHARS) -> str:
    value = (value or "").strip()
    if len(value) > limit:
        raise ReviewError(f"The {what} has {len(value):,} characters; keep it under {limit:,}.")
    return value


# ---- the papers of a stored data set ----------------------------------------------------

@functools.lru_cache(maxsize=4)
def _dataset(folder: str, stamp: float) -> aibench_dataset.Dataset:
    return aibench_dataset.load_dataset(folder)


def load_dataset(name: str) -> aibench_dataset.Dataset:
    """The stored AIBench data set ``name`` (read once per version of its files)."""
    folder = aibench_store.dataset_path(name)
    marker = folder / aibench_dataset.STORED_MARKER
    if not marker.is_file():
        raise ReviewError(f"There is no stored AIBench data set {name[:60]!r}.")
    papers = folder / "papers"
    return _dataset(str(folder), max(marker.stat().st_mtime, papers.stat().st_mtime if papers.is_dir() else 0))


def paper_of(item: dict) -> Paper:
    """The paper an item reviews, as stored in its campaign's data set."""
    data = load_dataset(item["dataset"])
    if item["paper_id"] not in data.papers:
        raise ReviewError(f"Paper {item['paper_id']!r} is no longer in the data set {item['dataset']!r}.")
    return data.papers[item["paper_id"]]


#: What a reviewer is told instead of a paper whose questions they still answer in a study.
SEALED_PAPER = ("This paper's questions are also questions you still have to answer in an open AIBench study, or "
                "its images are in pairs you still have to judge in an open blind comparison, so its questions, "
                "answer keys and original figure stay hidden from you here until you have answered or judged them "
                "there (or the study is closed). Review another paper, or ask the review lead to give this one to "
                "someone else.")


def sealed_for(db: sqlite_utils.Database, item: dict, user: dict) -> str | None:
    """Why ``user`` may not be shown the item's paper (its questions and keys), or None when they
    may: the paper, in any copy, has an open AIBench study item of theirs or a pair they still vote
    on (:func:`structext_core.studio.seal.open_papers`)."""
    if seal.paper_key(item["dataset"], item["paper_id"]) in seal.open_papers(db, user.get("id")):
        return SEALED_PAPER
    return None


def paper_for(db: sqlite_utils.Database, item: dict, user: dict) -> Paper:
    """The item's paper for ``user`` to review: :func:`paper_of`, or :class:`ReviewError` saying why
    not (another reviewer's, or sealed by a study, see :func:`sealed_for`)."""
    _require_access(item, user)
    if (why := sealed_for(db, item, user)) is not None:
        raise ReviewError(why)
    return paper_of(item)


def figure_path(item: dict) -> Path | None:
    """The stored original figure of the item's paper (a PNG), or None when it has none."""
    record = load_dataset(item["dataset"]).images.get((ORIGINAL_SYSTEM, item["paper_id"]))
    return aibench_store.dataset_path(item["dataset"]) / record.path if record else None


# ---- setup -------------------------------------------------------------------------------

def _check_reviewers(db: sqlite_utils.Database, ids: list[int]) -> list[int]:
    reviewers = sorted(set(ids))
    if not reviewers:
        raise ReviewError("Choose at least one reviewer.")
    inactive = [r for r in reviewers if accounts.account_status(db, r) != "active"]
    if inactive:
        raise ReviewError(f"User id(s) {inactive} are unknown, disabled or deleted: choose active accounts.")
    return reviewers


def deal(paper_ids: list[str], reviewers: list[int], double_share: float, seed: int) -> list[tuple[str, int, bool]]:
    """(paper, reviewer, double?) for every review: papers in a seeded order, the first
    ``round(double_share * n)`` of them (at least one when the share is above 0) to two
    different reviewers, dealt in turn so that the load is even."""
    if not 0 <= double_share <= 1 or math.isnan(double_share):
        raise ReviewError(f"The share of double-reviewed papers must be between 0 and 1, not {double_share}.")
    order = sorted(paper_ids)
    random.Random(f"aibench-review|{seed}").shuffle(order)
    n_double = min(len(order), max(1, round(double_share * len(order)))) if double_share > 0 else 0
    if n_double and len(reviewers) < 2:
        raise ReviewError("Double review needs at least two reviewers: add one, or set the share to 0.")
    out, turn = [], 0
    for k, paper in enumerate(order):
        first = reviewers[turn % len(reviewers)]
        turn += 1
        out.append((paper, first, k < n_double))
        if k < n_double:
            out.append((paper, reviewers[turn % len(reviewers)], True))
            turn += 1
    return out


def default_double_share(reviewer_count: int) -> float:
    """The share of papers reviewed twice when none is given: :data:`DEFAULT_DOUBLE_SHARE` with two
    reviewers or more, 0 with one (double review needs two different reviewers)."""
    return DEFAULT_DOUBLE_SHARE if reviewer_count >= 2 else 0.0


def create_campaign(db: sqlite_utils.Database, name: str, dataset: str, reviewer_ids: list[int], user: dict, *,
                    double_share: float | None = None, seed: int = 0, paper_ids: list[str] | None = None) -> int:
    """Create a review campaign over the papers of the stored set ``dataset`` (or the chosen
    ``paper_ids``); returns its id. Without ``double_share`` the share is
    :func:`default_double_share` of the reviewers; a share above 0 with one reviewer is refused."""
    if double_share is None:
        double_share = default_double_share(len(set(reviewer_ids)))
    return _create(db, name, dataset, reviewer_ids, user, double_share=double_share, seed=seed, paper_ids=paper_ids)


def _create(db: sqlite_utils.Database, name: str, dataset: str, reviewer_ids: list[int], user: dict, *,
            double_share: float, seed: int, paper_ids: list[str] | None, copy_of: int | None = None) -> int:
    _require_lead(user)
    name = _text("campaign name", name, MAX_NAME_CHARS)
    try:
        text_limits.check_name("campaign name", name)
    except text_limits.LimitError as error:
        raise ReviewError(str(error)) from None
    if not name:
        raise ReviewError("The campaign needs a name, like 'AIBench review 2026'.")
    papers = load_dataset(dataset).papers
    chosen = sorted(papers) if paper_ids is None else list(dict.fromkeys(paper_ids))
    unknown = [p for p in chosen if p not in papers]
    if unknown:
        raise ReviewError(f"Paper(s) {unknown[:5]} are not in the data set {dataset!r}.")
    if not chosen:
        raise ReviewError(f"The data set {dataset!r} has no papers to review.")
    reviewers = _check_reviewers(db, reviewer_ids)
    dealt = deal(chosen, reviewers, double_share, seed)
    with write_transaction(db):
        if db.execute("SELECT 1 FROM qreview_campaigns WHERE name = ? COLLATE NOCASE", [name]).fetchone():
            raise ReviewError(f"A review campaign named {name!r} exists already: choose another name.")
        campaign_id = db.execute(
            "INSERT INTO qreview_campaigns (name, dataset, seed, double_share, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)", [name, dataset, seed, double_share, user["id"], time.time()]).lastrowid
        positions: Counter = Counter()
        for paper, reviewer, double in dealt:
            positions[reviewer] += 1
            db.execute("INSERT INTO qreview_items (campaign_id, paper_id, position, reviewer_id, double) "
                       "VALUES (?, ?, ?, ?, ?)", [campaign_id, paper, positions[reviewer], reviewer, int(double)])
        taken = _take_queued(db, campaign_id, dataset, chosen)
        detail = {"dataset": dataset, "papers": len(chosen), "reviews": len(dealt), "double_share": double_share,
                  "seed": seed, "reviewers": reviewers, "sent_back_questions": taken}
        if copy_of is None:
            changes.record(db, user["id"], "qreview.create", f"qreview:{campaign_id}", **detail)
        else:
            changes.record(db, user["id"], "qreview.copy", f"qreview:{campaign_id}", source=copy_of, **detail)
    return campaign_id


def campaign_reviewers(db: sqlite_utils.Database, campaign_id: int) -> list[int]:
    """The ids of the campaign's reviewers."""
    return [r[0] for r in db.execute("SELECT DISTINCT reviewer_id FROM qreview_items WHERE campaign_id = ? "
                                     "ORDER BY reviewer_id", [campaign_id])]


def copy_campaign(db: sqlite_utils.Database, campaign_id: int, name: str, reviewer_ids: list[int],
                  user: dict) -> int:
    """A new campaign under a new ``name`` over the same data set and papers with the same settings
    (share of double reviews, seed), dealt afresh to the reviewers chosen here (the same ones deal
    the same way), every paper to do: no decisions, submissions, reviews, adjudications or flags
    are copied. Returns its id."""
    _require_lead(user)
    source = campaign(db, campaign_id)
    papers = [r[0] for r in db.execute("SELECT DISTINCT paper_id FROM qreview_items WHERE campaign_id = ? "
                                       "ORDER BY paper_id", [campaign_id])]
    return _create(db, name, source["dataset"], reviewer_ids, user, double_share=source["double_share"],
                   seed=source["seed"], paper_ids=papers, copy_of=campaign_id)


def set_archived(db: sqlite_utils.Database, campaign_id: int, archived: bool, user: dict) -> None:
    """Archive a campaign (hidden from its reviewers; nothing in it can be changed: no drafts,
    submissions, reviews, adjudications or flags; kept whole and still exported) or bring it back."""
    _require_lead(user)
    with write_transaction(db):
        row = campaign(db, campaign_id)
        if (row["archived_at"] is not None) == archived:
            raise ReviewError(f"Campaign {row['name']!r} is {'archived' if archived else 'not archived'} already.")
        db.execute("UPDATE qreview_campaigns SET archived_at = ? WHERE id = ?",
                   [time.time() if archived else None, campaign_id])
        changes.record(db, user["id"], "qreview.archive" if archived else "qreview.unarchive", f"qreview:{campaign_id}")


def history(db: sqlite_utils.Database, campaign_id: int) -> list[changes.Change]:
    """The lead's changes to the campaign, newest first (the audit log)."""
    return changes.history(db, f"qreview:{campaign_id}")


def _require_not_archived(db: sqlite_utils.Database, campaign_id: int) -> None:
    row = campaign(db, campaign_id)
    if row["archived_at"] is not None:
        raise ReviewError(f"Campaign {row['name']!r} is archived: nothing in it can be changed until the lead "
                          "brings it back.")


def list_campaigns(db: sqlite_utils.Database, reviewer_id: int | None = None) -> list[dict]:
    """Campaigns, newest first (only those with items for ``reviewer_id`` if given)."""
    where, args = "", []
    if reviewer_id is not None:
        where, args = "WHERE c.id IN (SELECT campaign_id FROM qreview_items WHERE reviewer_id = ?)", [reviewer_id]
    return list(db.query(
        "SELECT c.*, (SELECT COUNT(DISTINCT paper_id) FROM qreview_items i WHERE i.campaign_id = c.id) AS papers "
        f"FROM qreview_campaigns c {where} ORDER BY c.id DESC", args))


def campaign(db: sqlite_utils.Database, campaign_id: int) -> dict:
    rows = list(db.query("SELECT * FROM qreview_campaigns WHERE id = ?", [campaign_id]))
    if not rows:
        raise ReviewError(f"There is no review campaign with id {campaign_id}.")
    return rows[0]


_ITEM_SQL = ("SELECT i.*, c.dataset, c.name AS campaign_name, c.archived_at, u.username AS reviewer "
             "FROM qreview_items i JOIN qreview_campaigns c ON c.id = i.campaign_id "
             "LEFT JOIN users u ON u.id = i.reviewer_id")


def list_items(db: sqlite_utils.Database, campaign_id: int, reviewer_id: int | None = None) -> list[dict]:
    """The items of a campaign (a reviewer's own, in their queue order, if given)."""
    where, args = "WHERE i.campaign_id = ?", [campaign_id]
    if reviewer_id is not None:
        where += " AND i.reviewer_id = ?"
        args.append(reviewer_id)
    return list(db.query(f"{_ITEM_SQL} {where} ORDER BY i.reviewer_id, i.position", args))


def get_item(db: sqlite_utils.Database, item_id: int) -> dict:
    rows = list(db.query(f"{_ITEM_SQL} WHERE i.id = ?", [item_id]))
    if not rows:
        raise ReviewError(f"There is no review item with id {item_id}.")
    return rows[0]


def _require_access(item: dict, user: dict) -> None:
    if item["reviewer_id"] != user["id"] and not oversees(user):
        raise ReviewError(f"Paper {item['paper_id']!r} of this campaign is another reviewer's.")


def _require_editable(item: dict) -> None:
    if item["archived_at"] is not None:
        raise ReviewError(f"Campaign {item['campaign_name']!r} is archived: nothing can be changed.")
    if item["status"] not in EDITABLE:
        raise ReviewError(f"Paper {item['paper_id']!r} is {item['status']}: it can no longer be changed.")


def next_item(db: sqlite_utils.Database, campaign_id: int, reviewer_id: int) -> dict | None:
    """The reviewer's next paper: one sent back first, then a draft, then the first to do; never
    one sealed for them by an open study (:func:`sealed_for`)."""
    sealed = seal.open_papers(db, reviewer_id)
    items = [item for item in list_items(db, campaign_id, reviewer_id)
             if seal.paper_key(item["dataset"], item["paper_id"]) not in sealed]
    for wanted in ("returned", "draft", "todo"):
        for item in items:
            if item["status"] == wanted:
                return item
    return None


# ---- decisions (the draft) -----------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    question_id: str
    action: str  # accept, edit, remove, add
    question: Question | None  # the edited or added question
    reason: str
    saved_at: float


def question_from(data: dict, question_id: str) -> Question:
    """A question from its JSON form (as stored for edits and additions); :class:`ReviewError`
    for a malformed one."""
    try:
        options = tuple(str(o) for o in data["options"])[: len(LETTERS) + 1]
        return Question(question_id, int(data["level"]), str(data["question"]), options, str(data["answer"]),
                        str(data.get("rationale", "")))
    except (KeyError, TypeError, ValueError) as error:
        raise ReviewError(f"Question {question_id!r}: malformed ({error}).") from None


def question_json(question: Question) -> str:
    return json.dumps({"level": question.level, "question": question.question, "options": list(question.options),
                       "answer": question.answer, "rationale": question.rationale}, ensure_ascii=False)


def decisions(db: sqlite_utils.Database, item_id: int) -> dict[str, Decision]:
    """The draft decisions of an item, by question id."""
    out = {}
    for r in db.query("SELECT * FROM qreview_decisions WHERE item_id = ? ORDER BY saved_at, question_id",
                      [item_id]):
        q = question_from(json.loads(r["question_json"]), r["question_id"]) if r["question_json"] else None
        out[r["question_id"]] = Decision(r["question_id"], r["action"], q, r["reason"], r["saved_at"])
    return out


def _bounded_question(question: Question) -> None:
    if len(question.question) > limits.MAX_QUESTION_CHARS or len(question.options) > len(LETTERS) or any(
            len(o) > limits.MAX_LABEL_CHARS for o in question.options):
        raise ReviewError(f"Question {question.id!r} is too long: at most {limits.MAX_QUESTION_CHARS:,} "
                          f"characters, {len(LETTERS)} options of {limits.MAX_LABEL_CHARS:,}.")


def _note_input(db: sqlite_utils.Database, item: dict, at: float, settings: ClockSettings) -> None:
    """Book the clock up to ``at`` and mark an input there (inside a write transaction)."""
    row = _clock_row(db, item["id"])
    booked = _advance(row, at, settings.grace_seconds)
    _update_clock(db, item["id"], {**booked, **_input_now({**row, **booked}, at)})


def save_decision(db: sqlite_utils.Database, item_id: int, user: dict, question_id: str, action: str,
                  question: Question | None = None, reason: str = "", *, settings: ClockSettings | None = None,
                  at: float | None = None) -> None:
    """Save one decision as the draft of a generated question (or an added one's new text)."""
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    reason = _text("reason", reason)
    original = {q.id: q for q in paper_of(item).questions}
    if question_id.startswith(ADDED_PREFIX):
        if action != "add" or question is None:
            raise ReviewError(f"Question {question_id!r} was added: change its text, or delete it.")
    elif question_id not in original:
        raise ReviewError(f"Paper {item['paper_id']!r} has no question {question_id!r}.")
    elif action not in ACTIONS:
        raise ReviewError(f"Unknown decision {action!r}: accept, edit or remove.")
    if action in ("edit", "add"):
        if question is None:
            raise ReviewError(f"Question {question_id!r}: an edit needs the edited question.")
        question = replace(question, id=question_id)
        _bounded_question(question)
    else:
        question = None
    at = time.time() if at is None else at
    with write_transaction(db):
        db.execute("INSERT INTO qreview_decisions (item_id, question_id, action, question_json, reason, saved_at) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, question_id) DO UPDATE SET "
                   "action = excluded.action, question_json = excluded.question_json, reason = excluded.reason, "
                   "saved_at = excluded.saved_at",
                   [item_id, question_id, action, question_json(question) if question else None, reason, at])
        if item["status"] == "todo":
            db.execute("UPDATE qreview_items SET status = 'draft' WHERE id = ?", [item_id])
        _note_input(db, item, at, settings or ClockSettings())


def accept_remaining(db: sqlite_utils.Database, item_id: int, user: dict, *, settings: ClockSettings | None = None,
                     at: float | None = None) -> int:
    """Accept every generated question of the item that has no decision yet, in one transaction;
    decisions already made (accepted, edited, removed) stay as they are. Returns how many were
    accepted (0 when none was left, and then nothing is written)."""
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    generated = [q.id for q in paper_of(item).questions]
    at = time.time() if at is None else at
    with write_transaction(db):
        # the status again, inside: a paper submitted since the check above takes nothing
        _require_editable({**item, "status": db.execute("SELECT status FROM qreview_items WHERE id = ?",
                                                        [item_id]).fetchone()[0]})
        accepted = 0
        for question_id in generated:
            accepted += db.execute(
                "INSERT INTO qreview_decisions (item_id, question_id, action, question_json, reason, saved_at) "
                "VALUES (?, ?, 'accept', NULL, '', ?) ON CONFLICT (item_id, question_id) DO NOTHING",
                [item_id, question_id, at]).rowcount
        if accepted:
            if item["status"] == "todo":
                db.execute("UPDATE qreview_items SET status = 'draft' WHERE id = ?", [item_id])
            _note_input(db, item, at, settings or ClockSettings())
    return accepted


def add_question(db: sqlite_utils.Database, item_id: int, user: dict, question: Question, reason: str = "", *,
                 settings: ClockSettings | None = None) -> str:
    """Add a new question to the item's paper (a draft); returns its id (``added-<item>-<n>``)."""
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    taken = [d for d in decisions(db, item_id) if d.startswith(ADDED_PREFIX)]
    if len(taken) >= MAX_ADDED:
        raise ReviewError(f"At most {MAX_ADDED} questions can be added to one paper.")
    number = 1 + max((int(d.rsplit("-", 1)[1]) for d in taken), default=0)
    question_id = f"{ADDED_PREFIX}{item_id}-{number}"
    save_decision(db, item_id, user, question_id, "add", question, reason, settings=settings)
    return question_id


def delete_added(db: sqlite_utils.Database, item_id: int, user: dict, question_id: str) -> None:
    """Take back a question the reviewer added (a draft)."""
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    if not question_id.startswith(ADDED_PREFIX):
        raise ReviewError(f"Question {question_id!r} was generated: remove it with a reason instead.")
    with write_transaction(db):
        db.execute("DELETE FROM qreview_decisions WHERE item_id = ? AND question_id = ?", [item_id, question_id])


@dataclass(frozen=True)
class Row:
    """One question of a paper under review: the generated one, the decision, the result, its checks."""

    question_id: str
    original: Question | None
    action: str | None  # None: not decided yet
    current: Question | None  # as it stands: the original, the edit, or the addition
    reason: str
    check: Check


def review_rows(paper: Paper, found: dict[str, Decision]) -> list[Row]:
    """Every question of ``paper`` with the reviewer's decision, then the added ones."""
    rows = []
    for q in paper.questions:
        d = found.get(q.id)
        current = d.question if d and d.action == "edit" else q
        rows.append(Row(q.id, q, d.action if d else None, current, d.reason if d else "",
                        check_question(current, paper.graph)))
    for d in found.values():
        if d.action == "add":
            rows.append(Row(d.question_id, None, "add", d.question, d.reason, check_question(d.question, paper.graph)))
    return rows


def undecided(rows: list[Row]) -> list[Row]:
    """The generated questions that have no decision yet, in the paper's order."""
    return [r for r in rows if r.original is not None and r.action is None]


def blocking(rows: list[Row]) -> list[str]:
    """What keeps a paper from being submitted, one sentence each (empty: it may be submitted)."""
    out = []
    for r in rows:
        if r.action is None:
            out.append(f"{r.question_id}: no decision yet (accept, edit or remove).")
        elif r.action in ("edit", "remove") and not r.reason:
            out.append(f"{r.question_id}: say why ({'edit' if r.action == 'edit' else 'removal'} needs a reason).")
        if r.action in ("edit", "add") and r.check.problems:
            out.append(f"{r.question_id}: " + "; ".join(r.check.problems) + ".")
    return out


# ---- the honest clock of a paper ------------------------------------------------------------

def _clock_row(db: sqlite_utils.Database, item_id: int) -> dict:
    return dict(zip(("id", *_CLOCK), db.execute(
        f"SELECT id, {', '.join(_CLOCK)} FROM qreview_items WHERE id = ?", [item_id]).fetchone()))


def _update_clock(db: sqlite_utils.Database, item_id: int, columns: dict) -> None:
    if columns:
        sets = ", ".join(f"{c} = ?" for c in columns)
        db.execute(f"UPDATE qreview_items SET {sets} WHERE id = ?", [*columns.values(), item_id])


def heartbeat(db: sqlite_utils.Database, item_id: int, user: dict, *, visible: bool = True,
              settings: ClockSettings | None = None, at: float | None = None) -> dict:
    """A sign of life of the page showing the item: starts the clock on the first showing, books
    the time since the last one (active, or away after a long gap or while hidden), pauses as
    idle after ``idle_pause_seconds`` without input. Returns :func:`clock_of`."""
    settings = settings or ClockSettings()
    at = time.time() if at is None else at
    item = get_item(db, item_id)
    if item["reviewer_id"] != user["id"] or item["status"] not in EDITABLE or item["archived_at"] is not None:
        return clock_of(item, settings, at)  # a lead looking, or a paper no longer open: no clock runs
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is not None:
            pass
        elif row["last_beat_at"] is None:
            _update_clock(db, item_id, {"first_shown_at": row["first_shown_at"] or at, "last_beat_at": at,
                                        "last_input_at": row["last_input_at"] or at,
                                        "active_at_last_input": row["active_seconds"]})
        else:
            _update_clock(db, item_id, beat_columns(row, at, settings, visible)[1])
    return clock_of(get_item(db, item_id), settings, at)


def record_activity(db: sqlite_utils.Database, item_id: int, user: dict, *, visible: bool = True,
                    input_age: float = 0.0, settings: ClockSettings | None = None, at: float | None = None) -> dict:
    """An input report of the page (the activity component): books the time up to ``at`` (away
    while the tab was hidden) and, from a visible tab, an input ``input_age`` seconds ago, which
    keeps the idle pause away. Returns :func:`clock_of`."""
    settings = settings or ClockSettings()
    at = time.time() if at is None else at
    item = get_item(db, item_id)
    if item["reviewer_id"] != user["id"] or item["status"] not in EDITABLE or item["archived_at"] is not None:
        return clock_of(item, settings, at)
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is None and row["last_beat_at"] is not None:
            _update_clock(db, item_id, activity_columns(row, at, settings, visible, input_age))
    return clock_of(get_item(db, item_id), settings, at)


def pause(db: sqlite_utils.Database, item_id: int, user: dict, *, settings: ClockSettings | None = None,
          at: float | None = None) -> None:
    """Pause the paper's clock (the Pause button)."""
    settings = settings or ClockSettings()
    item = get_item(db, item_id)
    _require_access(item, user)
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is None and row["last_beat_at"] is not None:
            _update_clock(db, item_id, paused_columns(row, time.time() if at is None else at, "button",
                                                      settings.grace_seconds))


def resume(db: sqlite_utils.Database, item_id: int, user: dict, *, at: float | None = None) -> None:
    """Resume after a pause: the paused time is booked as paused, the clock runs again."""
    item = get_item(db, item_id)
    _require_access(item, user)
    at = time.time() if at is None else at
    with write_transaction(db):
        row = _clock_row(db, item_id)
        if row["paused_at"] is not None:
            _update_clock(db, item_id, resume_columns(row, at))


def clock_of(item: dict, settings: ClockSettings | None = None, at: float | None = None) -> dict:
    """The paper's clock: active (so far), away, idle and paused seconds, and whether it is paused."""
    settings = settings or ClockSettings()
    at = time.time() if at is None else at
    paused = item["paused_seconds"] + (at - item["paused_at"] if item["paused_at"] is not None else 0.0)
    return {"active": shown_seconds(item, settings.grace_seconds, at), "away": item["away_seconds"],
            "idle": item["idle_seconds"], "paused": paused, "is_paused": item["paused_at"] is not None,
            "pause_reason": None}


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
            clock = {**row, **_advance(row, at, settings.grace_seconds)}
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


# ---- the curated set and its export -----------------------------------------------------------

@dataclass
class Curated:
    papers: list[Paper]
    provenance: list[dict]
    left_out: dict[str, str]  # paper id -> why it is not (yet) in the curated set


def curated(db: sqlite_utils.Database, campaign_id: int) -> Curated:
    """The curated questions of every paper whose reviews are all approved and whose disagreements
    are all adjudicated, with one provenance row per question (removed ones too)."""
    row = campaign(db, campaign_id)
    data = load_dataset(row["dataset"])
    items: dict[str, list[dict]] = defaultdict(list)
    for item in list_items(db, campaign_id):
        items[item["paper_id"]].append(item)
    papers, provenance, left_out = [], [], {}
    for paper_id in sorted(items):
        paper = data.papers.get(paper_id)
        if paper is None:
            left_out[paper_id] = "no longer in the data set"
            continue
        waiting = [i["reviewer"] for i in items[paper_id] if i["status"] != "approved"]
        if waiting:
            left_out[paper_id] = f"not approved yet ({', '.join(waiting)})"
            continue
        subs = [(i, latest_submission(db, i["id"])) for i in items[paper_id]]
        kept, rows, open_questions = [], [], []
        for q in paper.questions:
            votes = [(i, s, next((d for d in s["decisions"] if d["question_id"] == q.id), None)) for i, s in subs]
            first = votes[0][2]
            if all(v[2] is not None and _same(first, v[2]) for v in votes):
                action, qdata = first["action"], first["question"]
                by = ", ".join(v[0]["reviewer"] for v in votes)
                at = max(v[1]["submitted_at"] for v in votes)
                reason = " | ".join(v[2]["reason"] for v in votes if v[2]["reason"])
            else:
                adj = latest_adjudication(db, campaign_id, paper_id, q.id)
                if adj is None:
                    open_questions.append(q.id)
                    continue
                action, by, at, reason = adj["action"], f"{adj['lead']} (adjudicated)", adj["at"], adj["reason"]
                qdata = json.loads(adj["question_json"]) if adj["question_json"] else None
            final = question_from(qdata, q.id) if action == "edit" else q
            status = {"accept": GENERATED, "edit": REVISED, "remove": REMOVED}[action]
            if action != "remove":
                kept.append(final)
            rows.append({"paper_id": paper_id, "question_id": q.id, "status": status, "by": by, "at": at,
                         "reason": reason, "level": final.level,
                         "original": json.loads(question_json(q)) if action != "accept" else None})
        if open_questions:
            left_out[paper_id] = f"disagreements not adjudicated yet: {', '.join(open_questions)}"
            continue
        for item, sub in subs:
            for d in sub["decisions"]:
                if d["action"] == "add":
                    added = question_from(d["question"], d["question_id"])
                    kept.append(added)
                    rows.append({"paper_id": paper_id, "question_id": added.id, "status": ADDED,
                                 "by": item["reviewer"], "at": sub["submitted_at"], "reason": d["reason"],
                                 "level": added.level, "original": None})
        papers.append(replace(paper, questions=tuple(kept)))
        provenance.extend(rows)
    return Curated(papers, provenance, left_out)


def review_log(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """Every submission, review, adjudication, flag and lead action of the campaign, oldest first."""
    log = []
    for item in list_items(db, campaign_id):
        for s in db.query("SELECT s.*, u.username FROM qreview_submissions s LEFT JOIN users u ON u.id = "
                          "s.submitted_by WHERE item_id = ? ORDER BY id", [item["id"]]):
            log.append({"at": s["submitted_at"], "event": "submitted", "by": s["username"], "paper_id": item["paper_id"],
                        "active_seconds": round(s["active_seconds"], 1), "away_seconds": round(s["away_seconds"], 1),
                        "idle_seconds": round(s["idle_seconds"], 1), "paused_seconds": round(s["paused_seconds"], 1),
                        "decisions": json.loads(s["decisions_json"])})
        for r in db.query("SELECT r.*, u.username FROM qreview_reviews r LEFT JOIN users u ON u.id = r.reviewer_id "
                          "WHERE item_id = ? ORDER BY id", [item["id"]]):
            log.append({"at": r["reviewed_at"], "event": r["decision"], "by": r["username"],
                        "paper_id": item["paper_id"], "reviewer": item["reviewer"], "comment": r["comment"]})
    for a in db.query("SELECT a.*, u.username FROM qreview_adjudications a LEFT JOIN users u ON u.id = a.by_user "
                      "WHERE campaign_id = ? ORDER BY id", [campaign_id]):
        log.append({"at": a["at"], "event": "adjudicated", "by": a["username"], "paper_id": a["paper_id"],
                    "question_id": a["question_id"], "action": a["action"], "reason": a["reason"]})
    for f in list_flags(db, campaign_id):
        log.append({"at": f["created_at"], "event": "flagged", "by": f["flagged_by"], "paper_id": f["paper_id"],
                    "question_id": f["question_id"], "reason": f["reason"], "resolution": f["resolution"]})
    return sorted(log, key=lambda r: r["at"])


@dataclass
class ExportResult:
    folder: Path
    papers: int
    questions: int
    left_out: dict[str, str]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def export(db: sqlite_utils.Database, campaign_id: int, directory: str | Path, user: dict) -> ExportResult:
    """Write the curated set in the AIBench import format under ``directory`` (new or empty):
    ``papers/<id>.json``, ``figures/<id>.png`` (the original figures), ``images/<system>/<id>.png``,
    ``aesthetics.jsonl``, and ``review/provenance.jsonl``, ``review/review_log.jsonl``,
    ``review/agreement.json``. Written into a staging folder renamed into place: all or nothing."""
    _require_lead(user)
    row = campaign(db, campaign_id)
    result = curated(db, campaign_id)
    if not result.papers:
        raise ReviewError("Nothing to export yet: no paper has all its reviews approved and adjudicated.")
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ReviewError(f"{directory} exists and is not an empty folder: choose a new folder.")
    data = load_dataset(row["dataset"])
    source = aibench_store.dataset_path(row["dataset"])
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.parent / f".{directory.name}.exporting-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        keep = {p.id for p in result.papers}
        (staging / "papers").mkdir()
        (staging / "review").mkdir()
        for paper in result.papers:
            doc = paper_to_dict(replace(paper, original_figure=""))
            record = data.images.get((ORIGINAL_SYSTEM, paper.id))
            if record:
                doc["original_figure"] = f"figures/{paper.id}.png"
                (staging / "figures").mkdir(exist_ok=True)
                shutil.copyfile(source / record.path, staging / doc["original_figure"])
            (staging / "papers" / f"{paper.id}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                                                 "utf-8")
        for (system, paper_id), record in sorted(data.images.items()):
            if system != ORIGINAL_SYSTEM and paper_id in keep:
                (staging / "images" / system).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / record.path, staging / "images" / system / f"{paper_id}.png")
        scores = [{"system": s, "paper_id": p, "metric": m, "score": v}
                  for (s, p, m), v in sorted(data.aesthetics.items()) if p in keep]
        if scores:
            (staging / "aesthetics.jsonl").write_text(_jsonl(scores), "utf-8")
        (staging / "review" / "provenance.jsonl").write_text(_jsonl(result.provenance), "utf-8")
        (staging / "review" / "review_log.jsonl").write_text(_jsonl(review_log(db, campaign_id)), "utf-8")
        (staging / "review" / "agreement.json").write_text(json.dumps(
            {"campaign": row["name"], "dataset": row["dataset"], "agreement": agreement(db, campaign_id),
             "left_out": result.left_out}, ensure_ascii=False, indent=1) + "\n", "utf-8")
        if directory.exists():
            directory.rmdir()
        os.rename(staging, directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    with write_transaction(db):
        changes.record(db, user["id"], "qreview.export", f"qreview:{campaign_id}", folder=str(directory),
                       papers=len(result.papers))
    return ExportResult(directory, len(result.papers), sum(len(p.questions) for p in result.papers),
                        result.left_out)


def zip_folder(folder: str | Path) -> bytes:
    """An exported folder as one zip (for the download button)."""
    folder = Path(folder)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return out.getvalue()


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


def _take_queued(db: sqlite_utils.Database, campaign_id: int, dataset: str, paper_ids: list[str]) -> int:
    """Inside a write: the queued send-backs of ``dataset`` on these papers join the campaign."""
    if not paper_ids:
        return 0
    marks = ",".join("?" * len(paper_ids))
    return db.execute(f"UPDATE qreview_sendbacks SET campaign_id = ? WHERE dataset = ? AND campaign_id IS NULL "
                      f"AND withdrawn_at IS NULL AND paper_id IN ({marks})",
                      [campaign_id, dataset, *paper_ids]).rowcount


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
