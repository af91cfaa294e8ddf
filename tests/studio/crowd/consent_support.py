"""What the crowd's consent, questionnaire, outcome and payment tests share: a study of a few
questions and its people, answering as the page does, and a participant row as a study link makes one."""

import json
import time

from structext_core.studio import study
from tests.studio.study.support import answer_of, grid_samples, make_study, on_screen

SAMPLES = grid_samples()


EXPERTISE = {"name": "expertise", "label": "How expert are you?", "kind": "choice",
             "options": ["novice", "some", "expert"], "required": True}
YEARS = {"name": "years", "label": "Years of experience", "kind": "number", "min": 0, "max": 60, "required": True}
FIELD = {"name": "field", "label": "Your field of study", "kind": "text", "required": False}


def small_study(db, annotators, n_items=4, **options):
    return make_study(db, SAMPLES, annotators, n_items=n_items, **options)


def answer_next(db, study_id, user_id, *, right=True, at=None, seconds=10.0, response=None):
    """Open the person's next question, keep it on screen ``seconds`` and answer it (the key when
    ``right``, else a wrong text); return the view (None when nothing was left)."""
    at = time.time() if at is None else at
    view = study.open_question(db, study_id, user_id, at=at)
    if view is None:
        return None
    on_screen(db, user_id, view.assignment_id, at, at + seconds)
    text = response if response is not None else (answer_of(db, view.assignment_id) if right else "zzz nothing alike")
    study.submit_answer(db, user_id, view.assignment_id, text, at=at + seconds)
    return view


def item_kind(db, assignment_id):
    return db.execute("SELECT i.kind FROM assignments a JOIN study_items i ON i.id = a.item_id WHERE a.id = ?",
                      [assignment_id]).fetchone()[0]


def enrol_by_hand(db, study_id, user_id, external_id):
    """A participants row as a study link makes one (the links are another module's)."""
    link = db.execute("SELECT id FROM enrolment_links WHERE study_id = ?", [study_id]).fetchone()
    if link is None:
        link_id = db.execute("INSERT INTO enrolment_links (study_id, token, places, created_at) VALUES (?, ?, ?, ?)",
                             [study_id, f"token-{study_id}", 10, time.time()]).lastrowid
    else:
        link_id = link[0]
    db.execute("INSERT INTO participants (user_id, study_id, link_id, external_id, params, resume_hash, enrolled_at)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)",
               [user_id, study_id, link_id, external_id, json.dumps({}), "x" * 64, time.time()])
    db.conn.commit()
