"""Scores of human answers, computed at commit and for any row left unscored, and the score
that counts: a lead's override when one is in force, else the automatic score."""


from collections.abc import Sequence

import sqlite_utils

from structext_core.studio.storage import write_transaction
from structext_core.studio.study.kinds import score_one
from structext_core.studio.study.store import PASS_THRESHOLD, now

# ---------------------------------------------------------------- scoring


def _score(answer: str | None, response: str | None, gave_up: bool,
           benchmark: str | None = None, item: str | None = None) -> tuple[float, int]:
    """The ``rouge_l`` (the score) and ``exact_match`` columns of one answer by its study's
    benchmark (:func:`structext_core.studio.study.kinds.score_one`; ``item``: the kept item's JSON,
    for a benchmark scored on the whole item). A give-up scores 0."""
    return score_one(benchmark, answer, response, gave_up, item)


def _score_rows(db: sqlite_utils.Database, response_ids: Sequence[int]) -> dict[int, tuple[float, int]]:
    """Score the given responses against their items' answers and store the scores
    (responses committed before scoring moved into the commit)."""
    scores: dict[int, tuple[float, int]] = {}
    for chunk_start in range(0, len(response_ids), 200):
        chunk = list(response_ids[chunk_start:chunk_start + 200])
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            "SELECT r.id, r.response, r.gave_up, json_extract(i.sample_json, '$.answer'), s.benchmark,"
            " json_extract(i.sample_json, '$.kept.item')"
            " FROM responses r JOIN study_items i ON i.id = r.item_id JOIN studies s ON s.id = r.study_id"
            f" WHERE r.id IN ({marks})",
            chunk,
        ).fetchall()
        computed = []
        for response_id, response, gave_up_flag, answer, benchmark, item in rows:
            scores[response_id] = _score(answer, response, bool(gave_up_flag), benchmark, item)
            computed.append((*scores[response_id], response_id))
        stamp = now()
        with write_transaction(db):
            for rouge, exact, response_id in computed:
                db.execute(
                    "UPDATE responses SET rouge_l = ?, exact_match = ?, scored_at = ?"
                    " WHERE id = ? AND rouge_l IS NULL",
                    [rouge, exact, stamp, response_id],
                )
    return scores


def score_pending(db: sqlite_utils.Database, study_id: int) -> int:
    """Score every response of the study that has no score yet; return how many."""
    pending = [row[0] for row in db.execute(
        "SELECT id FROM responses WHERE study_id = ? AND rouge_l IS NULL ORDER BY id", [study_id]
    )]
    _score_rows(db, pending)
    return len(pending)


# ---------------------------------------------------------------- the score that counts

#: SQL joining, to the responses ``r`` of a query, the override in force ``o`` (the newest
#: ``score_overrides`` row of the response, unless its score is NULL: cleared, the automatic
#: score counts again) and its author ``ou``. One place, so every reader agrees on "newest".
OVERRIDE_JOIN = (
    " LEFT JOIN score_overrides o ON o.id = (SELECT MAX(so.id) FROM score_overrides so"
    " WHERE so.response_id = r.id) AND o.score IS NOT NULL"
    " LEFT JOIN users ou ON ou.id = o.by_user"
)


def automatic_score(rouge_l: float) -> float:
    """The paper's rule: the ROUGE-L F1, or 0 below the pass threshold."""
    return rouge_l if rouge_l >= PASS_THRESHOLD else 0.0


def final_score(automatic: float, override: float | None) -> float:
    """The score that counts: the lead's override when one is in force, else the automatic score."""
    return automatic if override is None else override
