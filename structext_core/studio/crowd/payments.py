"""The payment export of a study: one row per person, and the ``id,amount`` lines that crowd platforms
take for bulk bonuses. Never an answer, a key or a person's response: counts, time and money only.

- ``external_id``: the id the person arrived with (``participants.external_id``, e.g. a Prolific PID);
  their user name when they have none (a lab's own people, a link without an id parameter).
- ``status``: where the person stands (``invited``, ``consented``, ``answering``, ``done``,
  ``screened out``, ``timed out``, ``declined``; ``taken off`` for someone a lead removed).
- ``active_minutes``: active time on the honest clock in the study (practice included: it is the
  person's working time; :func:`structext_core.studio.crowd.outcomes.active_seconds`).
- ``answers``: answers to the counted questions, each once (gold and practice apart, give-ups in);
  ``correct``: those that passed (the score that counts, a lead's override included);
  ``accuracy_pct``: ``correct`` of ``answers`` in percent (empty without answers).
- ``bonus``: the lead's rule, ``min(cap, per_correct * correct)`` in the study's currency, rounded to
  cents (no cap: no limit).
"""

from __future__ import annotations

import re

import pandas as pd
import sqlite_utils

from structext_core.studio.crowd.outcomes import active_seconds
from structext_core.studio.crowd.settings import crowd_settings
from structext_core.studio.study.dashboard import COUNTED_KINDS, responses_frame

PAYMENT_COLUMNS = ["external_id", "user", "status", "active_minutes", "answers", "correct", "accuracy_pct",
                   "bonus", "currency"]
#: An external id the bonus lines may carry as it is: no comma, quote, space or line break to break a line.
SAFE_ID = re.compile(r"[A-Za-z0-9_.:@+\-]{1,128}")
_STATUS_OF_OUTCOME = {"completed": "done", "screened_out": "screened out", "timed_out": "timed out",
                      "declined": "declined"}

_PEOPLE_SQL = """
    SELECT sa.user_id, u.username, p.external_id, sa.outcome, sa.declined_at, sa.consent_at, sa.removed_at,
           (SELECT COUNT(*) FROM responses r WHERE r.study_id = sa.study_id AND r.user_id = sa.user_id) AS responses
    FROM study_annotators sa
    JOIN users u ON u.id = sa.user_id
    LEFT JOIN participants p ON p.user_id = sa.user_id AND p.study_id = sa.study_id
    WHERE sa.study_id = ?
    ORDER BY u.username COLLATE NOCASE
"""


def _status(person: dict) -> str:
    if person["outcome"] is not None:
        return _STATUS_OF_OUTCOME[person["outcome"]]
    if person["declined_at"] is not None:
        return "declined"
    if person["removed_at"] is not None:
        return "taken off"
    if person["responses"]:
        return "answering"
    return "consented" if person["consent_at"] is not None else "invited"


def bonus_of(correct: int, per_correct: float, cap: float | None) -> float:
    """The lead's bonus rule: ``per_correct`` for each correct answer, at most ``cap``; in cents."""
    amount = max(0.0, float(per_correct) * int(correct))
    if cap is not None:
        amount = min(amount, float(cap))
    return round(amount + 1e-9, 2)


def payment_rows(db: sqlite_utils.Database, study_id: int, at: float | None = None) -> pd.DataFrame:
    """One row per person in the study (columns :data:`PAYMENT_COLUMNS`, described in the module
    notes), ordered by user name. Empty, with these columns, when nobody takes part."""
    settings = crowd_settings(db, study_id)
    people = list(db.query(_PEOPLE_SQL, [study_id]))
    answers = responses_frame(db, study_id, kinds=COUNTED_KINDS)
    per_person = answers.groupby("user_id")["passed"].agg(["size", "sum"]) if not answers.empty else None
    rows = []
    for person in people:
        user_id = person["user_id"]
        n, correct = (0, 0)
        if per_person is not None and user_id in per_person.index:
            n, correct = int(per_person.loc[user_id, "size"]), int(per_person.loc[user_id, "sum"])
        rows.append({
            "external_id": person["external_id"] or person["username"],
            "user": person["username"],
            "status": _status(person),
            "active_minutes": round(active_seconds(db, study_id, user_id, at) / 60, 1),
            "answers": n,
            "correct": correct,
            "accuracy_pct": round(100 * correct / n, 1) if n else None,
            "bonus": bonus_of(correct, settings.bonus_per_correct, settings.bonus_cap),
            "currency": settings.currency,
        })
    frame = pd.DataFrame(rows, columns=PAYMENT_COLUMNS)
    frame["accuracy_pct"] = frame["accuracy_pct"].astype(float)
    return frame


def bonus_lines(db: sqlite_utils.Database, study_id: int) -> str:
    """The bulk-bonus lines crowd platforms take: ``<external id>,<amount>`` one a line (amount with 2
    decimals, in the study's currency), for each person who came with an external id and earned a
    bonus above 0; no header. An id that could break a line (a comma, a space, a quote) is left out
    (:data:`SAFE_ID`; such a person is in the CSV of :func:`payment_rows`). Empty text when nobody
    is owed a bonus."""
    frame = payment_rows(db, study_id)
    came_with = dict(db.execute(  # user name -> the external id they came with
        "SELECT u.username, p.external_id FROM participants p JOIN users u ON u.id = p.user_id"
        " WHERE p.study_id = ? AND p.external_id IS NOT NULL", [study_id]).fetchall())
    lines = [f"{row.external_id},{row.bonus:.2f}" for row in frame.itertuples()
             if row.bonus > 0 and came_with.get(row.user) == row.external_id
             and SAFE_ID.fullmatch(str(row.external_id))]
    return "".join(line + "\n" for line in lines)
