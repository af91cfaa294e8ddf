"""The payment export: one row per person (external id, status, active time, counted answers,
accuracy, bonus by the lead's rule) and the bulk-bonus lines; never an answer or a key."""

import pytest

from structext_core.studio import study
from structext_core.studio.crowd import consent, outcomes, payments, settings
from structext_core.text.safe_text import frame_csv
from tests.studio.crowd.consent_support import (
    answer_next,
    enrol_by_hand,
    item_kind,
    small_study,
)
from tests.studio.study.support import answer_of

SECRET = "a distinctive response text 7f3a"


@pytest.fixture
def paid(db, annotators, admin):
    """ann1 (PID-AAA) answers 4 counted questions, 3 right, and a gold one; ann2 (PID-BBB) one right;
    ann3, a lab's own person, declines the consent."""
    study_id = small_study(db, annotators, n_items=4, gold_items=1)
    settings.save_settings(db, study_id, admin["id"], bonus_per_correct=0.5, bonus_cap=1.2, currency="USD")
    version = consent.set_consent(db, study_id, "Consent.", by=admin["id"])
    enrol_by_hand(db, study_id, annotators[0]["id"], "PID-AAA")
    enrol_by_hand(db, study_id, annotators[1]["id"], "PID-BBB")
    keys = []
    for person, rights in ((annotators[0]["id"], [True, True, True, False]), (annotators[1]["id"], [True])):
        consent.accept(db, study_id, person, version)
        study.accept_rule(db, study_id, person)
        at, counted = 1000.0, 0
        while counted < len(rights):
            view = study.open_question(db, study_id, person, at=at)
            keys.append(answer_of(db, view.assignment_id))
            gold = item_kind(db, view.assignment_id) == "gold"
            answer_next(db, study_id, person, at=at, seconds=30,
                        right=True if gold else rights[counted], response=None if gold or rights[counted] else SECRET)
            counted += not gold
            at += 60
    consent.decline(db, study_id, annotators[2]["id"])
    return study_id, keys


def test_one_row_per_person_with_counted_answers_once(db, paid):
    study_id, _ = paid
    rows = payments.payment_rows(db, study_id).set_index("user")
    assert list(payments.payment_rows(db, study_id).columns) == payments.PAYMENT_COLUMNS
    assert rows.loc["ann1", "external_id"] == "PID-AAA" and rows.loc["ann3", "external_id"] == "ann3"
    assert (rows.loc["ann1", "answers"], rows.loc["ann1", "correct"]) == (4, 3)  # the gold answer is not counted
    assert rows.loc["ann1", "accuracy_pct"] == 75.0
    assert (rows.loc["ann2", "answers"], rows.loc["ann2", "correct"]) == (1, 1)
    assert rows.loc["ann1", "bonus"] == 1.2  # 3 x 0.50 = 1.50, capped at 1.20
    assert rows.loc["ann2", "bonus"] == 0.5
    assert rows.loc["ann3", "bonus"] == 0 and rows.loc["ann3", "answers"] == 0
    assert rows["currency"].tolist() == ["USD"] * 3
    assert (rows.loc["ann1", "status"], rows.loc["ann2", "status"], rows.loc["ann3", "status"]) == \
        ("answering", "answering", "declined")
    assert rows.loc["ann1", "active_minutes"] >= 2.0  # 4 or 5 questions of 30 s on the clock
    assert rows.loc["ann3", "active_minutes"] == 0


def test_the_status_follows_the_outcome(db, annotators, paid):
    study_id, _ = paid
    outcomes.record_outcome(db, study_id, annotators[1]["id"], "screened_out")
    rows = payments.payment_rows(db, study_id).set_index("user")
    assert rows.loc["ann2", "status"] == "screened out"


def test_the_bonus_lines(db, paid):
    study_id, _ = paid
    assert payments.bonus_lines(db, study_id) == "PID-AAA,1.20\nPID-BBB,0.50\n"


def test_no_cap_no_limit_and_no_bonus_no_line(db, admin, paid):
    study_id, _ = paid
    settings.save_settings(db, study_id, admin["id"], bonus_cap=None)
    assert payments.bonus_lines(db, study_id) == "PID-AAA,1.50\nPID-BBB,0.50\n"
    settings.save_settings(db, study_id, admin["id"], bonus_per_correct=0)
    assert payments.bonus_lines(db, study_id) == ""


def test_an_id_that_could_break_a_line_is_left_out_of_the_lines(db, annotators, admin):
    study_id = small_study(db, annotators)
    settings.save_settings(db, study_id, admin["id"], bonus_per_correct=1)
    enrol_by_hand(db, study_id, annotators[0]["id"], "evil,9999")
    study.accept_rule(db, study_id, annotators[0]["id"])
    answer_next(db, study_id, annotators[0]["id"], at=1000.0)
    assert payments.payment_rows(db, study_id).set_index("user").loc["ann1", "bonus"] == 1.0
    assert payments.bonus_lines(db, study_id) == ""


def test_people_without_an_external_id_get_no_line(db, annotators, admin):
    study_id = small_study(db, annotators)
    settings.save_settings(db, study_id, admin["id"], bonus_per_correct=1)
    study.accept_rule(db, study_id, annotators[0]["id"])
    answer_next(db, study_id, annotators[0]["id"], at=1000.0)
    assert payments.payment_rows(db, study_id).set_index("user").loc["ann1", "bonus"] == 1.0
    assert payments.bonus_lines(db, study_id) == ""


def test_the_export_never_holds_an_answer_or_a_key(db, paid):
    study_id, keys = paid
    text = frame_csv(payments.payment_rows(db, study_id)) + payments.bonus_lines(db, study_id)
    assert SECRET not in text
    for key in keys:
        assert str(key).strip() not in text, key
    for column in ("response", "answer", "question", "reference", "sample_id", "item"):
        assert column not in payments.PAYMENT_COLUMNS


@pytest.mark.parametrize("correct, per, cap, owed", [(0, 0.5, None, 0.0), (3, 0.1, None, 0.3), (3, 0.5, 1.0, 1.0),
                                                     (7, 0.333, None, 2.33), (2, 0.125, None, 0.25)])
def test_the_bonus_rule(correct, per, cap, owed):
    assert payments.bonus_of(correct, per, cap) == owed
