"""How a visit ends: queue done, time budget spent, screened out by gold; the first outcome stands,
and a person whose visit ended gets no new question."""

import pytest

from structext_core.studio import study
from structext_core.studio.crowd import outcomes, settings
from structext_core.studio.crowd.outcomes import EndScreen, OutcomeError
from tests.studio.crowd.consent_support import (
    answer_next,
    enrol_by_hand,
    item_kind,
    small_study,
)

CODES = {"completion_code": "C0MPL3TE", "completion_url": "https://platform.example/done?cc=C0MPL3TE",
         "screenout_code": "SCR33N", "screenout_url": "https://platform.example/screened",
         "no_consent_code": "N0C0NSENT"}


def started(db, annotators, admin, **options):
    study_id = small_study(db, annotators, **options)
    settings.save_settings(db, study_id, admin["id"], **CODES)
    ann = annotators[0]["id"]
    study.accept_rule(db, study_id, ann)
    return study_id, ann


def test_the_queue_done_completes_the_visit_with_the_completion_code(db, annotators, admin):
    study_id, ann = started(db, annotators, admin)
    at = 1000.0
    for _ in range(3):
        answer_next(db, study_id, ann, at=at)
        at += 20
        assert outcomes.end_state(db, study_id, ann, at=at) is None
    answer_next(db, study_id, ann, at=at)
    end = outcomes.end_state(db, study_id, ann)
    assert end == EndScreen("completed", "C0MPL3TE", "https://platform.example/done?cc=C0MPL3TE", "done", False)
    assert db.execute("SELECT outcome FROM study_annotators WHERE user_id = ? AND study_id = ?",
                      [ann, study_id]).fetchone()[0] is None  # end_state only reads
    assert outcomes.settle(db, study_id, ann) == end
    assert db.execute("SELECT outcome FROM study_annotators WHERE user_id = ? AND study_id = ?",
                      [ann, study_id]).fetchone()[0] == "completed"
    assert study.open_question(db, study_id, ann) is None  # nothing left: no refusal, nothing to show


def test_nobody_is_done_before_answering(db, annotators, admin):
    study_id, ann = started(db, annotators, admin)
    assert outcomes.end_state(db, study_id, ann) is None
    assert not outcomes.queue_done(db, study_id, ann)


def test_the_time_budget_spent_completes_the_visit_and_no_question_opens_after(db, annotators, admin):
    study_id, ann = started(db, annotators, admin)
    settings.save_settings(db, study_id, admin["id"], time_budget_seconds=60)
    answer_next(db, study_id, ann, at=1000.0, seconds=40)
    assert outcomes.end_state(db, study_id, ann, at=1100.0) is None  # 40 s of 60
    assert outcomes.active_seconds(db, study_id, ann, at=1100.0) == pytest.approx(40, abs=1)
    answer_next(db, study_id, ann, at=1100.0, seconds=25)
    end = outcomes.settle(db, study_id, ann, at=1200.0)
    assert (end.outcome, end.reason, end.code) == ("completed", "time_up", "C0MPL3TE")
    with pytest.raises(study.StudyError, match="has ended"):
        study.open_question(db, study_id, ann, at=1210.0)
    # Recorded, it stands: still "time is up" on a later visit.
    assert outcomes.end_state(db, study_id, ann).reason == "time_up"


def budget_spent_on_an_open_question(db, annotators, admin):
    """A 30 s budget, and one question kept open (heartbeats) from 1000 s to 1035 s: (study, person, view)."""
    study_id, ann = started(db, annotators, admin)
    settings.save_settings(db, study_id, admin["id"], time_budget_seconds=30)
    view = study.open_question(db, study_id, ann, at=1000.0)
    for moment in range(1005, 1040, 5):
        study.heartbeat(db, ann, view.assignment_id, None, at=float(moment))
    return study_id, ann, view


def test_the_open_question_counts_toward_the_budget(db, annotators, admin):
    study_id, ann, _view = budget_spent_on_an_open_question(db, annotators, admin)
    assert outcomes.end_state(db, study_id, ann, at=1036.0).reason == "time_up"


def test_an_answer_sent_after_the_visit_ended_is_not_recorded(db, annotators, admin):
    """The end screen is shown (time is up, with a question open in another tab): an answer or a 'give
    up' sent from that tab, or crafted, changes nothing: the outcome, the answers and the pay stand."""
    study_id, ann, view = budget_spent_on_an_open_question(db, annotators, admin)
    assert outcomes.settle(db, study_id, ann, at=1036.0).reason == "time_up"
    for send in (lambda: study.submit_answer(db, ann, view.assignment_id, "an answer", at=1040.0),
                 lambda: study.give_up(db, ann, view.assignment_id, at=1040.0)):
        with pytest.raises(study.StudyError, match="Your part in this study has ended"):
            send()
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert outcomes.end_state(db, study_id, ann).reason == "time_up"
    # Before the end is recorded, the open question is answered as ever (the page checks on each run).
    other = annotators[1]["id"]
    study.accept_rule(db, study_id, other)
    second = study.open_question(db, study_id, other, at=1000.0)
    study.submit_answer(db, other, second.assignment_id, "an answer", at=1010.0)
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 1


def gold_study(db, annotators, admin, gold_items=3, **codes):
    study_id = small_study(db, annotators, n_items=4, gold_items=gold_items, gold_pass=0.6)
    settings.save_settings(db, study_id, admin["id"], **codes)
    ann = annotators[0]["id"]
    study.accept_rule(db, study_id, ann)
    return study_id, ann


def answer_until_gold(db, study_id, ann, n_gold, *, gold_right):
    """Answer in order (counted ones right) until ``n_gold`` gold questions are answered."""
    at, seen = 1000.0, 0
    while seen < n_gold:
        view = study.open_question(db, study_id, ann, at=at)
        gold = item_kind(db, view.assignment_id) == "gold"
        answer_next(db, study_id, ann, at=at, right=gold_right if gold else True)
        seen += gold
        at += 20
    return at


def test_gold_below_the_pass_mark_screens_out_after_three_gold_answers(db, annotators, admin):
    study_id, ann = gold_study(db, annotators, admin, **CODES)
    at, seen = 1000.0, 0
    while seen < 2:
        view = study.open_question(db, study_id, ann, at=at)
        gold = item_kind(db, view.assignment_id) == "gold"
        answer_next(db, study_id, ann, at=at, right=not gold)
        seen += gold
        at += 20
    assert outcomes.gold_standing(db, study_id, ann) == (3, 2, 0)
    assert outcomes.end_state(db, study_id, ann) is None  # two gold answers: too few to judge
    answer_until_gold(db, study_id, ann, 1, gold_right=False)
    end = outcomes.settle(db, study_id, ann)
    assert (end.outcome, end.reason, end.code, end.url) == ("screened_out", "gold", "SCR33N",
                                                            "https://platform.example/screened")
    with pytest.raises(study.StudyError, match="has ended"):
        study.open_question(db, study_id, ann)


def test_gold_passed_does_not_screen_out(db, annotators, admin):
    study_id, ann = gold_study(db, annotators, admin, **CODES)
    answer_until_gold(db, study_id, ann, 3, gold_right=True)
    assert outcomes.gold_standing(db, study_id, ann) == (3, 3, 3)
    assert not outcomes.screened_out(db, study_id, ann)


def test_one_gold_question_judges_on_that_one(db, annotators, admin):
    study_id, ann = gold_study(db, annotators, admin, gold_items=1, **CODES)
    answer_until_gold(db, study_id, ann, 1, gold_right=False)
    assert outcomes.end_state(db, study_id, ann).outcome == "screened_out"


def test_without_a_screen_out_code_or_address_gold_screens_nobody_out(db, annotators, admin):
    study_id, ann = gold_study(db, annotators, admin, completion_code="C0MPL3TE")
    answer_until_gold(db, study_id, ann, 3, gold_right=False)
    assert not outcomes.screened_out(db, study_id, ann)
    assert outcomes.end_state(db, study_id, ann) is None or outcomes.end_state(db, study_id, ann).outcome == "completed"


def test_the_first_outcome_stands(db, annotators, admin):
    study_id, ann = started(db, annotators, admin)
    assert outcomes.record_outcome(db, study_id, ann, "screened_out", at=5.0) == "screened_out"
    assert outcomes.record_outcome(db, study_id, ann, "completed", at=9.0) == "screened_out"
    row = db.execute("SELECT outcome, outcome_at FROM study_annotators WHERE user_id = ? AND study_id = ?",
                     [ann, study_id]).fetchone()
    assert tuple(row) == ("screened_out", 5.0)
    assert outcomes.end_state(db, study_id, ann).code == "SCR33N"


def test_an_unknown_outcome_or_a_stranger_is_refused(db, annotators, admin):
    study_id, ann = started(db, annotators, admin)
    with pytest.raises(OutcomeError, match="An outcome is one of"):
        outcomes.record_outcome(db, study_id, ann, "paid")
    with pytest.raises(OutcomeError, match="does not take part"):
        outcomes.record_outcome(db, study_id, admin["id"], "completed")
    assert outcomes.end_state(db, study_id, admin["id"]) is None


def test_every_outcome_is_recorded_without_codes_and_a_participant_is_told_so(db, annotators, admin):
    study_id = small_study(db, annotators)
    ann = annotators[1]["id"]
    enrol_by_hand(db, study_id, ann, "PID-123")
    study.accept_rule(db, study_id, ann)
    while answer_next(db, study_id, ann, at=1000.0) is not None:
        pass
    end = outcomes.settle(db, study_id, ann)
    assert end == EndScreen("completed", None, None, "done", True)
    assert outcomes.record_outcome(db, study_id, ann, "timed_out") == "completed"
