"""Question review: campaigns (deal, create, copy, archive, history) and their items."""

from __future__ import annotations

import math
import random
import time
from collections import Counter

import sqlite_utils

from structext_core.aibench import seal
from structext_core.aibench.question_review.common import (
    DEFAULT_DOUBLE_SHARE,
    MAX_NAME_CHARS,
    ReviewError,
    _require_lead,
    _text,
    oversees,
)
from structext_core.aibench.question_review.papers import load_dataset
from structext_core.studio import accounts, changes
from structext_core.studio.storage import write_transaction
from structext_core.text import limits as text_limits

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


def has_campaign(db: sqlite_utils.Database, user: dict) -> bool:
    """Whether the review page lists a campaign for ``user``: one not archived, with papers dealt to them (any
    for a review lead). The navigation lists the page only then."""
    return any(c["archived_at"] is None for c in list_campaigns(db, None if oversees(user) else user["id"]))


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


def _take_queued(db: sqlite_utils.Database, campaign_id: int, dataset: str, paper_ids: list[str]) -> int:
    """Inside a write: the queued send-backs of ``dataset`` on these papers join the campaign."""
    if not paper_ids:
        return 0
    marks = ",".join("?" * len(paper_ids))
    return db.execute(f"UPDATE qreview_sendbacks SET campaign_id = ? WHERE dataset = ? AND campaign_id IS NULL "
                      f"AND withdrawn_at IS NULL AND paper_id IN ({marks})",
                      [campaign_id, dataset, *paper_ids]).rowcount
