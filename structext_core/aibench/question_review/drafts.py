"""Question review: a reviewer's decisions on a paper's questions, each a draft saved as it is made."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace

import sqlite_utils

from structext_core.aibench import limits
from structext_core.aibench.model import LETTERS, Paper, Question
from structext_core.aibench.question_review.campaigns import get_item
from structext_core.aibench.question_review.common import (
    ACTIONS,
    ADDED_PREFIX,
    MAX_ADDED,
    ReviewError,
    _require_access,
    _require_editable,
    _text,
)
from structext_core.aibench.question_review.papers import paper_of
from structext_core.aibench.question_review.timing import _clock_row, _update_clock
from structext_core.aibench.review_checks import Check, check_question
from structext_core.studio.clock import (
    ClockSettings,
    advance,
    input_columns,
)
from structext_core.studio.storage import write_transaction

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
    booked = advance(row, at, settings.grace_seconds)
    _update_clock(db, item["id"], {**booked, **input_columns({**row, **booked}, at)})


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
