"""Adjudication: the lead looks at one question at a time and may override a response's score.

The automatic score (ROUGE-L with the paper's threshold) is wrong now and then: an answer
right in substance but worded otherwise, an answer key a flag shows to be broken. The lead
lists a study's items with the questions where the annotators disagree most first
(:func:`adjudication_items`), opens one (:func:`adjudication_item`: the sample with its
answer key, every response with its scores and times) and may set a response's score by
hand with a reason (:func:`override_score`) or send it back to the automatic score
(:func:`clear_override`).

Every override is kept in ``score_overrides`` and in the audit log (who changed what), in
the same write transaction. The newest row of a response counts; one with score NULL (a
clear) returns the response to its automatic score. That *final* score
(:func:`structext_core.studio.study.scores.final_score`) is what the dashboard, the export and
the Results page count; the automatic score is kept beside it.

The answer key is in what :func:`adjudication_item` returns: it is for the lead's page only
(admins; see :mod:`structext_core.studio.access`).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

import pandas as pd
import sqlite_utils

from structext_core.studio import access, changes
from structext_core.studio.storage import write_transaction
from structext_core.studio.study import leads
from structext_core.studio.study.kinds import kind_of
from structext_core.studio.study.scores import OVERRIDE_JOIN, automatic_score, final_score, score_pending
from structext_core.studio.study.store import PASS_THRESHOLD, StudyError, now
from structext_core.text.words import plural

#: The orders of the item list: disagreement first (the default), draw position, lowest mean score first.
ITEM_ORDERS = {
    "disagreement": "most disagreement first",
    "position": "position in the draw",
    "lowest_mean": "lowest mean score first",
}
#: Longest reason for an override (characters): a paragraph, not a document.
MAX_REASON_CHARS = 2_000
#: The page key whose rule says who may adjudicate (the one table decides).
PAGE_KEY = "adjudication"


class AdjudicationError(StudyError):
    """An override that cannot be made as asked; the message says what to fix. Nothing was written."""


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Override:
    """One row of a response's override history: a score set by hand, or a clear (``score`` None)."""

    id: int
    response_id: int
    #: The score set, in [0, 1]; None: cleared, the automatic score counts again.
    score: float | None
    reason: str
    #: The lead's user name (None when the account was deleted).
    by: str | None
    at: float

    @property
    def cleared(self) -> bool:
        """True for a row that sent the response back to its automatic score."""
        return self.score is None


@dataclass(frozen=True)
class ItemSummary:
    """One drawn item as the adjudication list shows it: what it is, and how its responses agree."""

    item_id: int
    study_id: int
    position: int
    sample_id: str
    #: ``study``, ``practice`` or ``gold`` (only ``study`` items count in the baseline).
    kind: str
    n_responses: int
    n_gave_up: int
    #: Mean final score of the responses (None without any).
    mean_score: float | None
    #: Population standard deviation of the final scores (0 to 0.5; 0 with fewer than two).
    spread: float
    #: Share of the minority among "gave up" and "answered" (0 to 0.5; 0 when all did the same).
    gave_up_mix: float
    #: ``spread + gave_up_mix`` (0 to 1): how far the annotators are from one verdict.
    disagreement: float
    #: Responses whose score is set by hand now.
    n_overridden: int
    #: Flags on the question not yet resolved, and all flags.
    open_flags: int
    n_flags: int
    #: Every stratum of the item, in its benchmark's order (``STRATA``): (name, value) pairs.
    strata: tuple = ()
    #: The study's benchmark (its kind says how the item is described and shown).
    benchmark: str = ""
    #: The id the data set gives the item, as the lead reads it (the lab's own; ``sample_id`` when the same).
    name: str = ""

    @property
    def describe(self) -> str:
        """What the item is, in a few words, as its benchmark describes it (its kind's ``describe_item``)."""
        return kind_of(self.benchmark).describe_item(dict(self.strata)) or self.name

    @property
    def label(self) -> str:
        """One line for a chooser: position, format, task, cell, agreement and marks."""
        marks = [plural(self.n_responses, "answer")]
        if self.mean_score is not None:
            marks.append(f"mean {self.mean_score:.2f}, spread {self.spread:.2f}")
        if self.n_gave_up:
            marks.append(f"{self.n_gave_up} gave up")
        if self.n_overridden:
            marks.append(f"{self.n_overridden} overridden")
        if self.open_flags:
            marks.append(f"{self.open_flags} open flag{'s' if self.open_flags > 1 else ''}")
        kind = "" if self.kind == "study" else f" [{self.kind}]"
        return f"#{self.position}{kind} · {self.describe} · " + " · ".join(marks)


@dataclass(frozen=True)
class ResponseDetail:
    """One response to an item, with its automatic scores, the override in force and its times."""

    response_id: int
    user_id: int
    annotator: str
    response: str
    gave_up: bool
    rouge_l: float
    exact_match: int
    #: The paper's rule: ROUGE-L, 0 below the pass threshold.
    score_auto: float
    #: The override in force (None: the automatic score counts).
    override: Override | None
    #: The score that counts.
    score: float
    submitted_at: float
    elapsed_seconds: float  # active
    paused_seconds: float
    idle_seconds: float | None
    away_seconds: float | None
    wall_seconds: float | None

    @property
    def passed(self) -> bool:
        """Whether the final score is at or above the pass threshold."""
        return self.score >= PASS_THRESHOLD


@dataclass(frozen=True)
class ItemDetail:
    """One item in full for the lead: the sample with its answer key, and every response."""

    summary: ItemSummary
    reference: str
    question: str
    requirement: str
    answer: str
    responses: tuple[ResponseDetail, ...]
    #: A multiple-choice item's options (lettered A, B, ...): ``answer`` and each response are letters.
    options: tuple[str, ...] = ()
    #: The item shows an image (:func:`structext_core.studio.study.images.lead_image`).
    has_image: bool = False


# ---------------------------------------------------------------- reading

_RESPONSES_SQL = f"""
    SELECT r.id, r.item_id, r.user_id, u.username, r.response, r.gave_up, r.rouge_l, r.exact_match,
           r.submitted_at, r.elapsed_seconds, r.paused_seconds, r.idle_seconds, r.away_seconds,
           r.wall_seconds, o.id, o.score, o.reason, ou.username, o.at
    FROM responses r
    JOIN users u ON u.id = r.user_id
    {OVERRIDE_JOIN}
"""


def _response(row: Sequence) -> ResponseDetail:
    (response_id, _item, user_id, username, response, gave_up, rouge_l, exact, submitted_at, elapsed,
     paused, idle, away, wall, override_id, override_score, reason, by, at) = row
    rouge_l = float(rouge_l or 0.0)
    override = None if override_id is None else Override(override_id, response_id, override_score, reason, by, at)
    auto = automatic_score(rouge_l)
    return ResponseDetail(
        response_id=response_id, user_id=user_id, annotator=username, response=response or "",
        gave_up=bool(gave_up), rouge_l=rouge_l, exact_match=int(exact or 0), score_auto=auto, override=override,
        score=final_score(auto, None if override is None else override.score), submitted_at=submitted_at,
        elapsed_seconds=float(elapsed or 0.0), paused_seconds=float(paused or 0.0), idle_seconds=idle,
        away_seconds=away, wall_seconds=wall,
    )


def _summary(item: dict, responses: Sequence[ResponseDetail], open_flags: int, n_flags: int) -> ItemSummary:
    scores = [r.score for r in responses]
    n = len(scores)
    gave_up = sum(r.gave_up for r in responses)
    mean = sum(scores) / n if n else None
    spread = math.sqrt(sum((s - mean) ** 2 for s in scores) / n) if n >= 2 else 0.0
    mix = min(gave_up, n - gave_up) / n if n else 0.0
    strata = json.loads(item["strata"])
    return ItemSummary(
        item_id=item["id"], study_id=item["study_id"], position=item["position"], sample_id=item["sample_id"],
        kind=item["kind"], n_responses=n, n_gave_up=gave_up, mean_score=mean,
        spread=spread, gave_up_mix=mix, disagreement=spread + mix,
        n_overridden=sum(r.override is not None for r in responses), open_flags=open_flags, n_flags=n_flags,
        strata=tuple(strata.items()), benchmark=item["benchmark"], name=item["name"] or item["sample_id"],
    )


def _flag_counts(db: sqlite_utils.Database, where: str, params: list) -> dict[int, tuple[int, int]]:
    rows = db.execute(
        f"SELECT item_id, SUM(resolved_at IS NULL), COUNT(*) FROM study_flags WHERE {where} GROUP BY item_id",
        params,
    ).fetchall()
    return {item_id: (int(open_), int(total)) for item_id, open_, total in rows}


_ITEM_COLUMNS = ("id, study_id, position, sample_id, kind, strata,"
                 " COALESCE(json_extract(sample_json, '$.kept.name'), sample_id) AS name,"
                 " (SELECT benchmark FROM studies WHERE studies.id = study_items.study_id) AS benchmark")


def _order_key(order: str):
    if order == "disagreement":
        return lambda s: (-s.disagreement, -s.n_responses, s.position)
    if order == "position":
        return lambda s: s.position
    if order == "lowest_mean":
        return lambda s: (s.mean_score is None, s.mean_score or 0.0, -s.disagreement, s.position)
    raise AdjudicationError(f"Unknown order {order!r}: choose one of {', '.join(ITEM_ORDERS)}.")


def adjudication_items(db: sqlite_utils.Database, study_id: int, order: str = "disagreement",
                       kinds: Iterable[str] | None = None) -> list[ItemSummary]:
    """Every drawn item of the study (or of the given ``kinds``), with its number of responses,
    mean final score, disagreement, overrides and flags, in ``order`` (see :data:`ITEM_ORDERS`):
    by default the items whose annotators disagree most first, then those with more responses.

    Raises :class:`AdjudicationError` for an unknown order, :class:`StudyError` for no such study.
    """
    key = _order_key(order)
    if db.execute("SELECT 1 FROM studies WHERE id = ?", [study_id]).fetchone() is None:
        raise StudyError(f"There is no study with id {study_id}.")
    score_pending(db, study_id)
    items = list(db.query(f"SELECT {_ITEM_COLUMNS} FROM study_items WHERE study_id = ? ORDER BY position",
                          [study_id]))
    if kinds is not None:
        wanted = set(kinds)
        items = [item for item in items if item["kind"] in wanted]
    by_item: dict[int, list[ResponseDetail]] = defaultdict(list)
    for row in db.execute(f"{_RESPONSES_SQL} WHERE r.study_id = ? ORDER BY r.id", [study_id]):
        by_item[row[1]].append(_response(row))
    flags = _flag_counts(db, "study_id = ?", [study_id])
    summaries = [_summary(item, by_item.get(item["id"], []), *flags.get(item["id"], (0, 0))) for item in items]
    return sorted(summaries, key=key)


def adjudication_item(db: sqlite_utils.Database, item_id: int) -> ItemDetail:
    """One item in full: the sample (reference, question, requirement, answer key, rule hint) and
    every response (by annotator name) with its scores, the override in force and its times.
    :class:`StudyError` when there is no such item."""
    items = list(db.query(f"SELECT {_ITEM_COLUMNS}, sample_json FROM study_items WHERE id = ?", [item_id]))
    if not items:
        raise StudyError(f"There is no study item with id {item_id}.")
    item = items[0]
    score_pending(db, item["study_id"])
    responses = [_response(row) for row in db.execute(
        f"{_RESPONSES_SQL} WHERE r.item_id = ? ORDER BY u.username COLLATE NOCASE, r.id", [item_id])]
    flags = _flag_counts(db, "item_id = ?", [item_id]).get(item_id, (0, 0))
    sample = json.loads(item["sample_json"])
    return ItemDetail(
        summary=_summary(item, responses, *flags),
        reference=sample.get("reference", ""), question=sample.get("question", ""),
        requirement=sample.get("requirement", ""), answer=str(sample.get("answer", "")),
        responses=tuple(responses),
        options=tuple(str(option) for option in sample.get("options") or ()),
        has_image=sample.get("image") is not None,
    )


def override_history(db: sqlite_utils.Database, response_id: int) -> list[Override]:
    """Every override of a response, newest first (clears included): who set what, when and why."""
    return override_histories(db, [response_id])[response_id]


def override_histories(db: sqlite_utils.Database, response_ids: Sequence[int]) -> dict[int, list[Override]]:
    """:func:`override_history` of each of ``response_ids`` (a page of answers) in one query: each id's
    list, empty for a score never changed by hand."""
    ids = list(dict.fromkeys(int(i) for i in response_ids))
    histories: dict[int, list[Override]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):  # under SQLite's bound on a statement's parameters
        part = ids[start:start + 500]
        rows = db.execute(
            "SELECT o.id, o.response_id, o.score, o.reason, u.username, o.at FROM score_overrides o"
            f" LEFT JOIN users u ON u.id = o.by_user WHERE o.response_id IN ({', '.join('?' * len(part))})"
            " ORDER BY o.id DESC",
            part,
        ).fetchall()
        for row in rows:
            histories[row[1]].append(Override(*row))
    return histories


def items_table(items: Sequence[ItemSummary]) -> pd.DataFrame:
    """The item list as a table for the page (one row per item, in the given order): what the lead
    adjudicates by first (the item, its answers, scores, overrides and open flags), then its kind and
    its benchmark's strata, so that a table wider than the page shows the first at once."""
    strata = list(dict.fromkeys(key for s in items for key, _ in s.strata))  # its benchmark's, in order
    columns = ["position", "name", "n_responses", "n_gave_up", "mean_score", "spread", "disagreement",
               "n_overridden", "open_flags", "kind", *strata]
    return pd.DataFrame([{c: dict(s.strata).get(c, getattr(s, c, None)) for c in columns} for s in items],
                        columns=columns)


def moment_text(at: float | None) -> str:
    """A moment as the lead's tables write it: ``2025-03-01 14:05 UTC`` ('' for None)."""
    if at is None:
        return ""
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def history_table(history: Sequence[Override]) -> pd.DataFrame:
    """A response's override history as a table, newest first: when, who, the score set, why."""
    rows = [{"when": moment_text(o.at), "by": o.by or "(deleted account)",
             "score": "back to automatic" if o.cleared else f"{o.score:g}", "reason": o.reason} for o in history]
    return pd.DataFrame(rows, columns=["when", "by", "score", "reason"])


# ---------------------------------------------------------------- writing


def _check_runs(db: sqlite_utils.Database, admin: dict | None, response_id: int, what: str) -> None:
    """An admin, or a lead of the response's study (nobody else, a visitor neither)."""
    if not access.can_open(access.role_of(admin), PAGE_KEY):
        raise access.AccessError(f"Only {leads.WHO_MAY} may {what}.")
    row = db.execute("SELECT study_id FROM responses WHERE id = ?", [response_id]).fetchone()
    if row is None:
        raise AdjudicationError(f"There is no response with id {response_id}.")
    leads.check_runs(db, admin, row[0], what)


def _check_reason(reason: str | None) -> str:
    if reason is not None and not isinstance(reason, str):
        raise AdjudicationError("The reason must be text.")
    reason = (reason or "").strip()
    if not reason:
        raise AdjudicationError("Give a reason for the change (e.g. 'right in substance, worded differently').")
    if len(reason) > MAX_REASON_CHARS:
        raise AdjudicationError(f"The reason is {len(reason):,} characters long; keep it under "
                                f"{MAX_REASON_CHARS:,} characters.")
    return reason


def _check_score(score: float) -> float:
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise AdjudicationError(f"The score must be a number from 0 to 1, got {score!r}.")
    score = float(score)
    if math.isnan(score) or not 0.0 <= score <= 1.0:
        raise AdjudicationError(f"The score must be from 0 (wrong) to 1 (fully right), got {score:g}.")
    return score


def _current(db: sqlite_utils.Database, response_id: int) -> ResponseDetail:
    row = db.execute(f"{_RESPONSES_SQL} WHERE r.id = ?", [response_id]).fetchone()
    if row is None:
        raise AdjudicationError(f"There is no response with id {response_id}.")
    return _response(row)


def _write(db: sqlite_utils.Database, response_id: int, score: float | None, reason: str, admin: dict,
           action: str, at: float | None) -> Override:
    stamp = now() if at is None else at
    with write_transaction(db):
        before = _current(db, response_id)  # inside the transaction: "previous" is what was replaced
        if score is None and before.override is None:
            raise AdjudicationError(f"Response {response_id} has no override to clear: its automatic score "
                                    "counts already.")
        override_id = int(db.execute(
            "INSERT INTO score_overrides (response_id, score, reason, by_user, at) VALUES (?, ?, ?, ?, ?)",
            [response_id, score, reason, admin["id"], stamp],
        ).lastrowid)
        item = db.execute("SELECT study_id, item_id FROM responses WHERE id = ?", [response_id]).fetchone()
        changes.record(db, admin["id"], action, f"response:{response_id}", study=item[0], item=item[1],
                       annotator=before.annotator, score=score, previous=before.score,
                       automatic=before.score_auto, reason=reason)
    return Override(override_id, response_id, score, reason, admin.get("username"), stamp)


def override_score(db: sqlite_utils.Database, response_id: int, score: float, reason: str,
                   admin: dict | None, *, at: float | None = None) -> Override:
    """Set a response's score by hand (``score`` from 0 to 1) with a reason; return the new row.

    Recorded in ``score_overrides`` and the audit log (``score.override``) in one transaction.
    Raises :class:`~structext_core.studio.access.AccessError` unless ``admin`` is an admin or a lead
    of the response's study, and
    :class:`AdjudicationError` for a score outside [0, 1], a missing or too long reason, or no
    such response; nothing is written then.
    """
    _check_runs(db, admin, response_id, "override a score")
    score = _check_score(score)
    reason = _check_reason(reason)
    return _write(db, response_id, score, reason, admin, "score.override", at)


def clear_override(db: sqlite_utils.Database, response_id: int, reason: str, admin: dict | None, *,
                   at: float | None = None) -> Override:
    """Send a response back to its automatic score (a row with score NULL), with a reason.

    Same checks as :func:`override_score`, and :class:`AdjudicationError` when no override is
    in force; recorded in the audit log as ``score.clear``.
    """
    _check_runs(db, admin, response_id, "clear an override")
    reason = _check_reason(reason)
    return _write(db, response_id, None, reason, admin, "score.clear", at)
