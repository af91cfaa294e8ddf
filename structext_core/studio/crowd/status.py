"""Where each person of a study stands, and how far its items are covered (issue 45).

- :func:`statuses`: one row per person with their status, one of :data:`STATUSES`:
  ``invited`` (the study asks for consent and they have not given it), ``consented``, ``answering``
  (at least one answer, not ended), ``done`` (their outcome is *completed*, or their queue is done:
  :func:`structext_core.studio.crowd.dealing.queue_done`), ``screened out``, ``timed out``,
  ``declined`` (their recorded outcome). People taken off the study are left out.
- :func:`coverage`: one row per counted item: its answers, the questions held now, and k.

Every answer counts once; practice and gold answers are not counted (they are no item's coverage).
No Streamlit here.
"""

from __future__ import annotations

import pandas as pd
import sqlite_utils

from structext_core.studio.crowd import dealing

STATUSES = ("invited", "consented", "answering", "done", "screened out", "timed out", "declined")
_OUTCOMES = {"completed": "done", "screened_out": "screened out", "timed_out": "timed out", "declined": "declined"}


def person_status(consent_required: bool, consent_at: float | None, outcome: str | None, answers: int,
                  queue_done: bool) -> str:
    """One person's status from what is recorded of them (see the module notes)."""
    if outcome in _OUTCOMES:
        return _OUTCOMES[outcome]
    if consent_required and consent_at is None and not answers:
        return "invited"
    if queue_done:
        return "done"
    return "answering" if answers else "consented"


def statuses(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """Each person in the study (not taken off it), by name: ``user_id``, ``username``, ``status``
    and ``answers`` (their study questions answered, practice apart)."""
    row = db.execute("SELECT consent_version FROM study_crowd WHERE study_id = ?", [study_id]).fetchone()
    consent_required = row is not None and row[0] is not None
    rows = db.execute(
        """
        SELECT sa.user_id, u.username, sa.consent_at, sa.outcome,
               (SELECT COUNT(*) FROM responses r WHERE r.study_id = sa.study_id AND r.user_id = sa.user_id
                  AND r.item_id NOT IN (SELECT id FROM study_items WHERE study_id = sa.study_id
                                        AND kind = 'practice')) AS answers
        FROM study_annotators sa JOIN users u ON u.id = sa.user_id
        WHERE sa.study_id = ? AND sa.removed_at IS NULL
        ORDER BY u.username COLLATE NOCASE
        """,
        [study_id],
    ).fetchall()
    done = dealing.queues_done(db, study_id, [row[0] for row in rows])
    out = [{"user_id": user_id, "username": username,
            "status": person_status(consent_required, consent_at, outcome, answers, done.get(user_id, False)),
            "answers": answers}
           for user_id, username, consent_at, outcome, answers in rows]
    return pd.DataFrame(out, columns=["user_id", "username", "status", "answers"])


def coverage(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """Per counted item, in the order of the draw: ``item_id``, ``position``, ``answers`` (each answer
    once), ``held`` (dealt or given, shown, not answered yet, by someone still in the study with no
    outcome) and ``k`` (the study's k; with none set, the number of people in the study)."""
    found = dealing.places(db, study_id)
    k = found.per_item if found is not None else db.execute(
        "SELECT COUNT(*) FROM study_annotators WHERE study_id = ? AND removed_at IS NULL", [study_id]).fetchone()[0]
    items = db.execute("SELECT id, position FROM study_items WHERE study_id = ? AND kind = 'study' ORDER BY position",
                       [study_id]).fetchall()
    answers = dict(db.execute("SELECT item_id, COUNT(*) FROM responses WHERE study_id = ? GROUP BY item_id",
                              [study_id]).fetchall())
    held = dict(db.execute(
        """
        SELECT a.item_id, COUNT(*) FROM assignments a
        JOIN study_annotators sa ON sa.study_id = a.study_id AND sa.user_id = a.user_id
        LEFT JOIN responses r ON r.assignment_id = a.id
        WHERE a.study_id = ? AND r.id IS NULL AND a.first_shown_at IS NOT NULL
          AND sa.removed_at IS NULL AND sa.outcome IS NULL
        GROUP BY a.item_id
        """, [study_id]).fetchall())
    frame = pd.DataFrame([(item_id, position, answers.get(item_id, 0), held.get(item_id, 0))
                          for item_id, position in items], columns=["item_id", "position", "answers", "held"])
    frame["k"] = int(k)
    return frame


def coverage_words(frame: pd.DataFrame) -> str:
    """"items with k answers: 34 of 50" (k the study's)."""
    if frame.empty:
        return "The study has no counted items."
    k = int(frame["k"].iloc[0])
    full = int((frame["answers"] >= k).sum())
    return f"Items with {k:,} answer{'s' if k != 1 else ''}: {full:,} of {len(frame):,}"
