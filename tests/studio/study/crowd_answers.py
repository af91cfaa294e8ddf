"""A study's questionnaire and people's answers written straight into the tables migration 15 made
(the lead's questionnaire is not a crowd setting; :mod:`structext_core.studio.crowd.questionnaire`
keeps it): what the profile tests and page tests start from."""

import json
import time

from structext_core.studio.storage import write_transaction

#: Expertise (choice), years (number), field of study (text): the issue's own examples.
FIELDS = [
    {"name": "expertise", "label": "How expert are you?", "kind": "choice",
     "options": ["novice", "some", "expert"], "required": True},
    {"name": "years", "label": "Years of experience", "kind": "number", "min": 0, "max": 60, "required": True},
    {"name": "field", "label": "Field of study", "kind": "text", "required": False},
]


def set_questionnaire(db, study_id: int, fields=FIELDS) -> None:
    with write_transaction(db):
        db.execute("INSERT INTO study_crowd (study_id, questionnaire, updated_at) VALUES (?, ?, ?)"
                   " ON CONFLICT (study_id) DO UPDATE SET questionnaire = excluded.questionnaire",
                   [study_id, json.dumps(fields), time.time()])


def answer(db, study_id: int, user_id: int, **values) -> None:
    """``values`` as a person's answers (a number as its decimal text, as the questionnaire keeps it)."""
    with write_transaction(db):
        for field, value in values.items():
            db.execute("INSERT OR REPLACE INTO questionnaire_answers (study_id, user_id, field, value, answered_at)"
                       " VALUES (?, ?, ?, ?, ?)", [study_id, user_id, field, str(value), time.time()])
