"""The annotator's own view: progress over the counted questions, active time, breaks."""

import pytest

from structext_core.studio import study
from structext_core.studio.study.progress import own_progress
from tests.studio.study.support import make_study


def current(db, study_id, user_id, at):
    return study.open_question(db, study_id, user_id, at=at)


def test_a_fresh_annotator_sees_zeros_and_the_count(db, started):
    study_id, user_id = started
    mine = own_progress(db, study_id, user_id, at=50.0)
    assert (mine.answered, mine.gave_up, mine.total) == (0, 0, 10)
    assert (mine.active_seconds, mine.pauses, mine.pause_seconds, mine.idle_pauses) == (0.0, 0, 0.0, 0)
    assert mine.rows == [("Progress", "0 of 10 study questions answered"), ("Active time", "0:00"), ("Pauses", "0 · 0:00"),
                         ("Idle auto-pauses", "0 · 0:00")]


def test_time_and_breaks_add_up_over_answered_open_and_paused_questions(db, started):
    study_id, user_id = started
    first = current(db, study_id, user_id, 100.0)
    study.record_activity(db, user_id, first.assignment_id, None, at=105.0)
    study.submit_answer(db, user_id, first.assignment_id, "one", at=110.0)        # 10 s active
    second = current(db, study_id, user_id, 110.0)
    study.pause_question(db, user_id, second.assignment_id, at=115.0)            # 5 s active
    study.resume_question(db, user_id, second.assignment_id, at=175.0)           # a 60 s pause
    study.pause_question(db, user_id, second.assignment_id, at=180.0, reason="idle")  # 5 s re-booked as idle
    study.resume_question(db, user_id, second.assignment_id, at=200.0)           # a 20 s idle pause
    study.give_up(db, user_id, second.assignment_id, at=205.0)                   # 5 s active
    third = current(db, study_id, user_id, 205.0)
    mine = own_progress(db, study_id, user_id, at=215.0)  # the open question: 10 s so far
    assert (mine.answered, mine.gave_up, mine.total) == (2, 1, 10)
    assert mine.active_seconds == pytest.approx(10 + 10 + 10)
    assert (mine.pauses, mine.pause_seconds) == (1, 60.0)
    assert (mine.idle_pauses, mine.idle_pause_seconds) == (1, 20.0)
    assert mine.rows == [("Progress", "2 of 10 study questions answered · 1 given up"), ("Active time", "0:30"),
                         ("Pauses", "1 · 1:00"), ("Idle auto-pauses", "1 · 0:20")]
    # A pause still running counts up to now; the paused question's clock stands still.
    study.pause_question(db, user_id, third.assignment_id, at=215.0)
    later = own_progress(db, study_id, user_id, at=245.0)
    assert (later.pauses, later.pause_seconds, later.active_seconds) == (2, 90.0, pytest.approx(30.0))


def test_only_the_annotators_own_work_in_this_study_counts(db, samples, annotators, started):
    study_id, user_id = started
    other_user = annotators[1]["id"]
    study.accept_rule(db, study_id, other_user, at=0.0)
    theirs = current(db, study_id, other_user, 10.0)
    study.submit_answer(db, other_user, theirs.assignment_id, "theirs", at=20.0)
    other_study = make_study(db, samples, annotators, name="second")
    study.accept_rule(db, other_study, user_id, at=0.0)
    elsewhere = current(db, other_study, user_id, 10.0)
    study.pause_question(db, user_id, elsewhere.assignment_id, at=12.0)
    mine = own_progress(db, study_id, user_id, at=30.0)
    assert (mine.answered, mine.active_seconds, mine.pauses) == (0, 0.0, 0)
    assert own_progress(db, study_id, other_user, at=30.0).answered == 1


def test_practice_is_counted_apart_and_gold_like_any_question(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=6, practice_items=2, gold_items=2)
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id, at=0.0)
    practice = current(db, study_id, user_id, 10.0)
    assert practice.practice
    study.submit_answer(db, user_id, practice.assignment_id, "try", at=15.0)
    mine = own_progress(db, study_id, user_id, at=20.0)
    assert (mine.answered, mine.total, mine.practice_answered, mine.practice_total) == (0, 8, 1, 2)
    assert mine.rows[0] == ("Progress", "0 of 8 study questions answered · practice 1 of 2")
    assert mine.active_seconds == pytest.approx(5.0)  # practice time is working time
    second = current(db, study_id, user_id, 20.0)
    study.submit_answer(db, user_id, second.assignment_id, "try", at=25.0)
    first_counted = current(db, study_id, user_id, 25.0)
    assert not first_counted.practice and first_counted.total == mine.total  # the page's "of M"


def test_a_user_without_assignments_gets_zeros(db, started, annotators):
    study_id, _ = started
    assert own_progress(db, study_id, 9_999, at=1.0).rows[0] == ("Progress", "0 of 0 study questions answered")
