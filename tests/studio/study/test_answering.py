"""Answering: the rule first, the blinded question, pause and resume, submit and give up,
scores on commit, feedback."""

import pytest

from structext_core.studio import study
from tests.studio.study.support import answer_of, count, make_study, on_screen


def test_rule_must_be_accepted_first(db, samples, annotators):
    study_id = make_study(db, samples, annotators)
    with pytest.raises(study.StudyError, match="accept the study rule"):
        study.open_question(db, study_id, annotators[0]["id"])
    assert db.execute("SELECT COUNT(*) FROM assignments WHERE first_shown_at IS NOT NULL").fetchone()[0] == 0


def test_question_view_carries_no_answer_and_no_hint(db, started, samples):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=100.0)
    fields = set(vars(view))
    assert "answer" not in fields and "rule_hint" not in fields and "params" not in fields
    sample = next(s for s in samples if s["reference"] == view.reference)
    from structext_core.structext_eval.formats import DISPLAY_NAMES
    assert (view.question, view.requirement, view.reference_label) == (
        sample["question"], sample["requirement"], DISPLAY_NAMES[sample["language"]])
    assert view.has_reference_panel
    assert (view.seq, view.total) == (1, 10)


def test_reload_returns_the_same_question_with_the_same_clock(db, started):
    study_id, user_id = started
    first = study.open_question(db, study_id, user_id, at=100.0, tab="tab-1")
    on_screen(db, user_id, first.assignment_id, 100.0, 250.0, tab="tab-1")
    again = study.open_question(db, study_id, user_id, at=250.0, tab="tab-2")  # a reload: a new tab
    assert again.assignment_id == first.assignment_id and not again.held_elsewhere
    assert again.first_shown_at == 100.0
    assert again.elapsed(at=250.0) == 150.0


def test_pause_excludes_time_and_keeps_the_draft(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.heartbeat(db, user_id, view.assignment_id, None, at=5.0)
    study.pause_question(db, user_id, view.assignment_id, draft="half an answer", at=10.0)
    paused = study.open_question(db, study_id, user_id, at=50.0)
    assert paused.paused and paused.draft == "half an answer" and paused.pause_reason == "button"
    assert paused.elapsed(at=50.0) == 10.0  # the clock stands still while paused
    study.pause_question(db, user_id, view.assignment_id, draft="still half", at=60.0)  # no second pause
    study.resume_question(db, user_id, view.assignment_id, at=70.0)
    resumed = study.open_question(db, study_id, user_id, at=80.0)
    assert not resumed.paused and resumed.paused_seconds == 60.0 and resumed.draft == "still half"
    on_screen(db, user_id, view.assignment_id, 80.0, 100.0)
    submission = study.submit_answer(db, user_id, view.assignment_id, "42", at=100.0)
    assert submission.elapsed_seconds == 40.0
    row = db.execute("SELECT elapsed_seconds, paused_seconds FROM responses").fetchone()
    assert row == (40.0, 60.0)
    pauses = db.execute("SELECT started_at, ended_at FROM pauses").fetchall()
    assert pauses == [(10.0, 70.0)]
    assert db.execute("SELECT pause_count FROM assignments WHERE id = ?", [view.assignment_id]).fetchone()[0] == 1


def test_resume_without_pause_changes_nothing(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.resume_question(db, user_id, view.assignment_id, at=5.0)
    assert study.open_question(db, study_id, user_id, at=9.0).elapsed(at=9.0) == 9.0


def test_submit_while_paused_is_refused(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.pause_question(db, user_id, view.assignment_id, at=5.0)
    with pytest.raises(study.StudyError, match="paused"):
        study.submit_answer(db, user_id, view.assignment_id, "42", at=6.0)
    with pytest.raises(study.StudyError, match="paused"):
        study.give_up(db, user_id, view.assignment_id, at=6.0)
    assert count(db, "responses") == 0


@pytest.mark.parametrize("answer, message", [("", "answer is empty"), ("  \n\t", "answer is empty"),
                                             ("x" * (study.MAX_RESPONSE_CHARS + 1), "the limit is")])
def test_bad_answers_are_refused_and_change_nothing(db, started, answer, message):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    with pytest.raises(study.StudyError, match=message):
        study.submit_answer(db, user_id, view.assignment_id, answer, at=3.0)
    assert count(db, "responses") == 0
    assert study.open_question(db, study_id, user_id, at=4.0).assignment_id == view.assignment_id


def test_second_submission_of_the_same_question_is_refused(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.submit_answer(db, user_id, view.assignment_id, "first", at=3.0)
    with pytest.raises(study.StaleQuestionError, match="already submitted"):
        study.submit_answer(db, user_id, view.assignment_id, "second", at=4.0)
    assert db.execute("SELECT response FROM responses").fetchall() == [("first",)]
    assert study.open_question(db, study_id, user_id, at=5.0).seq == 2


def test_questions_not_yet_shown_cannot_be_answered(db, started):
    study_id, user_id = started
    study.open_question(db, study_id, user_id, at=0.0)
    later = db.execute("SELECT id FROM assignments WHERE user_id = ? AND seq = 5", [user_id]).fetchone()[0]
    with pytest.raises(study.StaleQuestionError, match="not been shown"):
        study.submit_answer(db, user_id, later, "guess", at=1.0)
    assert count(db, "responses") == 0


def test_someone_elses_question_cannot_be_answered(db, started, annotators):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    with pytest.raises(study.StudyError, match="not one of yours"):
        study.submit_answer(db, annotators[1]["id"], view.assignment_id, "42", at=1.0)
    assert count(db, "responses") == 0


def test_give_up_is_recorded_with_its_time(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=10.0)
    study.heartbeat(db, user_id, view.assignment_id, None, at=20.0)
    submission = study.give_up(db, user_id, view.assignment_id, at=25.5)
    assert submission.gave_up and submission.elapsed_seconds == 15.5
    assert db.execute("SELECT response, gave_up FROM responses").fetchone() == ("", 1)
    assert study.annotator_progress(db, study_id, user_id) == study.AnnotatorProgress(
        answered=1, gave_up=1, total=10, seconds=15.5)


def test_closed_study_takes_no_answers(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.set_study_status(db, study_id, "closed")
    with pytest.raises(study.StudyError, match="closed"):
        study.submit_answer(db, user_id, view.assignment_id, "42", at=1.0)
    with pytest.raises(study.StudyError, match="closed"):
        study.open_question(db, study_id, user_id)
    assert study.studies_for_annotator(db, user_id) == []
    with pytest.raises(study.StudyError, match="'open' or 'closed'"):
        study.set_study_status(db, study_id, "archived")


def test_non_member_cannot_open_questions(db, samples, annotators):
    study_id = make_study(db, samples, annotators[:1])
    with pytest.raises(study.StudyError, match="do not take part"):
        study.open_question(db, study_id, annotators[1]["id"])


def test_answering_everything_finishes(db, started):
    study_id, user_id = started
    seen = []
    for step in range(10):
        view = study.open_question(db, study_id, user_id, at=float(step * 10))
        seen.append(view.assignment_id)
        study.submit_answer(db, user_id, view.assignment_id, "x", at=float(step * 10 + 5))
    assert study.open_question(db, study_id, user_id) is None
    assert len(set(seen)) == 10
    listed = study.studies_for_annotator(db, user_id)
    assert [(s.answered, s.n_items, s.finished) for s in listed] == [(10, 10, True)]
    assert listed[0].label == "pilot · 10 of 10 study questions answered"


def test_an_answer_is_scored_in_the_transaction_that_commits_it(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.submit_answer(db, user_id, view.assignment_id, answer_of(db, view.assignment_id), at=3.0)
    assert db.execute("SELECT rouge_l, exact_match, scored_at, submitted_at FROM responses").fetchone() == (
        1.0, 1, 3.0, 3.0)


@pytest.mark.parametrize("show", [False, True])
def test_feedback_only_when_the_study_allows_it(db, samples, annotators, show):
    study_id = make_study(db, samples, annotators, show_correctness=show)
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id)
    view = study.open_question(db, study_id, user_id)
    submission = study.submit_answer(db, user_id, view.assignment_id, answer_of(db, view.assignment_id))
    feedback = study.response_feedback(db, user_id, submission.response_id)
    if show:
        assert feedback == study.Feedback(correct=True, rouge_l=1.0, exact_match=1)
    else:
        assert feedback is None
    # Never for someone else's response.
    assert study.response_feedback(db, annotators[1]["id"], submission.response_id) is None
