"""Quality control of a study: practice feedback, gold items and annotators' flags on questions.

*Practice items* come before an annotator's first question and are not counted anywhere.
After answering one, the annotator sees their score and the answer key
(:func:`practice_feedback`): only for their own committed answer, so no answer of an item
they may still answer (another practice item included) ever leaves the server.

*Flags.* An annotator who finds a question broken (the answer key cannot be right, the
reference is garbled) or unclear reports it from the question page; the lead sees the open
flags on the study dashboard and on the Adjudication page and resolves each with a note.
Flagging changes nothing else: the question stays open, the draft and the clock run on.

*Gold items* (:func:`gold_report`) are mixed among the study items and are not counted in
the baseline; an annotator's accuracy on them tells the lead whose work to check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import sqlite_utils

from structext_core.studio import access, changes, seal
from structext_core.studio.storage import write_transaction
from structext_core.studio.study import leads
from structext_core.studio.study.dashboard import responses_frame
from structext_core.studio.study.scores import _score
from structext_core.studio.study.store import PASS_THRESHOLD, StudyError, get_study, now, practice_items, seal_view

#: What an annotator can report about a question, with the label the page shows.
FLAG_KINDS = {
    "broken": "Broken: the answer key or the reference looks wrong",
    "unclear": "Unclear: the question can be read more than one way",
    "other": "Other (say what in the note)",
}
#: Longest note on a flag or on its resolution (characters): a paragraph, not a document.
MAX_FLAG_NOTE_CHARS = 2_000


@dataclass(frozen=True)
class Flag:
    """One annotator's flag on a study question, and how the lead resolved it."""

    id: int
    study_id: int
    item_id: int
    #: The item's position in the study's draw (the number the lead's tables show).
    position: int
    sample_id: str
    #: Who flagged it (None when the account was deleted).
    username: str | None
    kind: str
    note: str
    created_at: float
    #: The user name of the lead who resolved it; None while open.
    resolved_by: str | None
    resolved_at: float | None
    resolution: str | None
    #: The item's id as its data set gives it (the lab's own id where ours is a content hash).
    name: str | None = None

    @property
    def is_open(self) -> bool:
        """True until a lead resolves the flag."""
        return self.resolved_at is None


def _bounded_note(what: str, text: str | None) -> str:
    text = (text or "").strip()
    if len(text) > MAX_FLAG_NOTE_CHARS:
        raise StudyError(f"The {what} is {len(text):,} characters long; keep it under "
                         f"{MAX_FLAG_NOTE_CHARS:,} characters.")
    return text


def flag_question(db: sqlite_utils.Database, study_id: int, user_id: int, item_id: int,
                  kind: str, note: str = "") -> int:
    """Record an annotator's flag on one of their items; return the flag's id.

    Only an annotator taking part in the study may flag, and only an item assigned to them
    (a flag is not a way to learn about other items). ``kind`` is one of :data:`FLAG_KINDS`;
    the note is optional except for ``other``. Raises :class:`StudyError` saying what is
    wrong, and writes nothing then. Nothing else changes: no pause, no submission.
    """
    if kind not in FLAG_KINDS:
        raise StudyError(f"Unknown kind of problem {kind!r}: choose one of {', '.join(FLAG_KINDS)}.")
    note = _bounded_note("note", note)
    if kind == "other" and not note:
        raise StudyError("Say in the note what the problem is (the kind is 'other').")
    assigned = db.execute(
        """
        SELECT 1 FROM assignments a
        JOIN study_annotators sa ON sa.study_id = a.study_id AND sa.user_id = a.user_id
        WHERE a.study_id = ? AND a.user_id = ? AND a.item_id = ? AND sa.removed_at IS NULL
        """,
        [study_id, user_id, item_id],
    ).fetchone()
    if assigned is None:
        raise StudyError("You can only flag a question of a study you take part in, from your own list.")
    with write_transaction(db):
        cursor = db.execute(
            "INSERT INTO study_flags (study_id, item_id, user_id, kind, note, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [study_id, item_id, user_id, kind, note, now()],
        )
    return int(cursor.lastrowid)


def flags(db: sqlite_utils.Database, study_id: int, item_id: int | None = None,
          open_only: bool = False) -> list[Flag]:
    """The study's flags, oldest first: all, of one item, or only those not yet resolved."""
    where, params = ["f.study_id = ?"], [study_id]
    if item_id is not None:
        where.append("f.item_id = ?")
        params.append(item_id)
    if open_only:
        where.append("f.resolved_at IS NULL")
    rows = db.execute(
        f"""
        SELECT f.id, f.study_id, f.item_id, i.position, i.sample_id, u.username, f.kind, f.note,
               f.created_at, r.username, f.resolved_at, f.resolution,
               COALESCE(json_extract(i.sample_json, '$.kept.name'), i.sample_id)
        FROM study_flags f
        JOIN study_items i ON i.id = f.item_id
        LEFT JOIN users u ON u.id = f.user_id
        LEFT JOIN users r ON r.id = f.resolved_by
        WHERE {' AND '.join(where)}
        ORDER BY f.created_at, f.id
        """,
        params,
    ).fetchall()
    return [Flag(*row) for row in rows]


def resolve_flag(db: sqlite_utils.Database, flag_id: int, admin: dict | None, resolution: str) -> None:
    """Close an open flag with what was done about it (an admin or a lead of the flag's study;
    recorded in the audit log).

    Raises :class:`~structext_core.studio.access.AccessError` for anyone else and
    :class:`StudyError` for an empty or too long resolution, or a flag that does not exist or
    is resolved already; nothing is written then.
    """
    if not access.can_open(access.role_of(admin), "study_admin"):
        raise access.AccessError(f"Only {leads.WHO_MAY} may resolve a flag on a study question.")
    flagged = db.execute("SELECT study_id FROM study_flags WHERE id = ?", [flag_id]).fetchone()
    if flagged is not None:  # no such flag: said below
        leads.check_runs(db, admin, flagged[0], "resolve a flag on a study question")
    resolution = _bounded_note("resolution", resolution)
    if not resolution:
        raise StudyError("Write what was done about the flag (e.g. 'answer key fixed', 'question is fine').")
    with write_transaction(db):
        row = db.execute("SELECT study_id, item_id FROM study_flags WHERE id = ? AND resolved_at IS NULL",
                         [flag_id]).fetchone()
        if row is None:
            raise StudyError(f"Flag {flag_id} does not exist or is resolved already.")
        db.execute("UPDATE study_flags SET resolved_by = ?, resolved_at = ?, resolution = ? WHERE id = ?",
                   [admin["id"], now(), resolution, flag_id])
        changes.record(db, admin["id"], "flag.resolve", f"study:{row[0]}", flag=flag_id, item=row[1],
                       resolution=resolution)


# ---------------------------------------------------------------- practice


@dataclass(frozen=True)
class PracticeFeedback:
    """What an annotator learns after answering a practice item: their score and the key."""

    study_id: int
    response_id: int
    #: The item's place in the practice round (1 to ``total``).
    seq: int
    total: int
    response: str
    gave_up: bool
    #: The answer key of this item (committed answers only: it can no longer be answered);
    #: empty when ``key_withheld``.
    answer: str
    rouge_l: float
    exact_match: int
    #: True when the same question is still open for the annotator in another study: the key
    #: is not given (:mod:`structext_core.studio.seal`); the score is.
    key_withheld: bool = False
    #: A multiple-choice item's options (lettered A, B, ...): ``response`` and ``answer`` are letters;
    #: its question, and its assignment (whose image, if it has one, the page shows again beside the key).
    options: tuple[str, ...] = ()
    question: str = ""
    assignment_id: int = 0

    @property
    def passed(self) -> bool:
        """Whether the answer reached the pass mark (ROUGE-L at or above the threshold)."""
        return self.rouge_l >= PASS_THRESHOLD


def practice_feedback(db: sqlite_utils.Database, user_id: int, response_id: int) -> PracticeFeedback | None:
    """Score and answer key of the annotator's own committed answer to a practice item.

    None for anyone else's response and for any item that is not a practice item, so a study
    or gold item's answer never reaches an annotator this way. The key is withheld
    (``key_withheld``) while the same sample is an open item of the annotator in any study
    (:func:`structext_core.studio.seal.key_withheld`).
    """
    row = db.execute(
        f"""
        SELECT r.study_id, r.id, a.seq, r.response, r.gave_up, json_extract(i.sample_json, '$.answer'),
               r.rouge_l, r.exact_match, i.sample_id, json_extract(i.sample_json, '$.reference'),
               (SELECT COUNT(*) FROM assignments p
                 WHERE p.study_id = r.study_id AND p.user_id = r.user_id
                   AND p.item_id IN ({practice_items("r.study_id")})),
               i.strata, json_extract(i.sample_json, '$.options'), s.benchmark,
               json_extract(i.sample_json, '$.question'), a.id, s.suite, json_extract(i.sample_json, '$.kept.item'),
               i.sample_json
        FROM responses r
        JOIN assignments a ON a.id = r.assignment_id
        JOIN study_items i ON i.id = r.item_id
        JOIN studies s ON s.id = r.study_id
        WHERE r.id = ? AND r.user_id = ? AND i.kind = 'practice'
        """,
        [response_id, user_id],
    ).fetchone()
    if row is None:
        return None
    (study_id, response_id, seq, response, gave_up, answer, rouge, exact, sample_id, reference, total,
     strata, options, benchmark, question, assignment_id, suite, item, stored) = row
    if rouge is None or exact is None:  # committed before answers were scored on commit
        rouge, exact = _score(answer, response, bool(gave_up), benchmark, item)
    withheld = seal.key_withheld(db, user_id, seal_view({"strata": strata, "sample_id": sample_id, "suite": suite,
                                                         "reference": reference, "question": question,
                                                         "options": options, "sample_json": stored}), benchmark)
    return PracticeFeedback(study_id=study_id, response_id=response_id, seq=seq, total=total,
                            response=response or "", gave_up=bool(gave_up), answer="" if withheld else answer or "",
                            rouge_l=float(rouge), exact_match=int(exact), key_withheld=withheld,
                            options=tuple(json.loads(options)) if options else (),
                            question=question if options and isinstance(question, str) else "",
                            assignment_id=assignment_id)



def pending_practice_feedback(db: sqlite_utils.Database, study_id: int, user_id: int) -> PracticeFeedback | None:
    """The feedback the annotator has not moved on from: their latest answer in the study is a
    practice one and the next question has not been shown yet (moving on shows it). Kept in
    the database, so a reload (a new page session) shows the same screen with the same button.
    None otherwise; what :func:`practice_feedback` returns when there is one."""
    row = db.execute(
        f"""
        SELECT r.id,
               r.item_id IN ({practice_items("r.study_id")}) AS practice,
               (SELECT a.first_shown_at FROM assignments a LEFT JOIN responses n ON n.assignment_id = a.id
                 WHERE a.study_id = r.study_id AND a.user_id = r.user_id AND n.id IS NULL
                 ORDER BY a.seq LIMIT 1) AS next_shown,
               (SELECT COUNT(*) FROM assignments a LEFT JOIN responses n ON n.assignment_id = a.id
                 WHERE a.study_id = r.study_id AND a.user_id = r.user_id AND n.id IS NULL) AS open_items
        FROM responses r
        WHERE r.study_id = ? AND r.user_id = ?
        ORDER BY r.id DESC LIMIT 1
        """,
        [study_id, user_id],
    ).fetchone()
    if row is None:
        return None
    response_id, practice, next_shown, open_items = row
    if not practice or not open_items or next_shown is not None:
        return None
    return practice_feedback(db, user_id, response_id)


# ---------------------------------------------------------------- gold

GOLD_REPORT_COLUMNS = ["annotator", "gold_answered", "gold_passed", "gold_accuracy", "check"]


def gold_report(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """Per annotator with a gold answer: how many gold items they answered and passed, the
    accuracy in percent, and ``check`` (True when the accuracy is below the study's gold pass
    mark: "check this person's work"). A lead's score override counts, as everywhere.
    Empty (with these columns) when the study has no gold items or none is answered yet.
    """
    gold_pass = get_study(db, study_id).gold_pass
    df = responses_frame(db, study_id, kinds=("gold",))
    if df.empty:
        return pd.DataFrame(columns=GOLD_REPORT_COLUMNS)
    out = df.groupby("annotator").agg(gold_answered=("passed", "size"), gold_passed=("passed", "sum"))
    out = out.reset_index()
    out["gold_passed"] = out["gold_passed"].astype(int)
    accuracy = out["gold_passed"] / out["gold_answered"]
    out["gold_accuracy"] = (100 * accuracy).round(1)
    out["check"] = accuracy < gold_pass
    return out[GOLD_REPORT_COLUMNS]
