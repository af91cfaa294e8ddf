"""Who the people are (issue 45): the questionnaire's answers as a frame and as axes, the dashboard's
accuracy by who answered (numbers worked out by hand), the export's columns and the Inspect log's
metadata read back with Inspect's own reader."""

import csv
import io
import math

import pandas as pd
import pytest

from structext_core.studio import accounts, study
from structext_core.studio.crowd import profiles
from structext_core.studio.storage import write_transaction
from tests.studio.study.crowd_answers import FIELDS, answer, set_questionnaire
from tests.studio.study.support import make_study, policy_all_half_none, run_study


@pytest.fixture
def answered(db, samples, annotators):
    """Four items answered by three people (ann1 all right, ann2 right on half, ann3 gives up on all),
    and a fourth person added who never answered anything; their questionnaire answers: ann1 expert
    with 10 years in physics, ann2 a novice with 1 year, ann3 expert with 2 years, ann4 nothing."""
    study_id = run_study(db, samples, annotators, policy_all_half_none, n_items=4)
    late = accounts.create_user(db, "ann4", "password-123", "annotator")
    study.add_annotator(db, study_id, late["id"])
    set_questionnaire(db, study_id)
    ids = {a["username"]: a["id"] for a in [*annotators, late]}
    answer(db, study_id, ids["ann1"], expertise="expert", years=10, field="physics")
    answer(db, study_id, ids["ann2"], expertise="novice", years="1.0", field="=cmd()")
    answer(db, study_id, ids["ann3"], expertise="expert", years=2)
    return study_id, ids


def test_answers_frame_types_and_order(db, answered):
    study_id, ids = answered
    frame = profiles.answers_frame(db, study_id)
    assert list(frame.columns) == ["user_id", "expertise", "years", "field"]
    assert sorted(frame["user_id"]) == sorted(ids.values())  # everyone of the study, answered or not
    by_user = frame.set_index("user_id")
    assert frame["years"].dtype == float and by_user.loc[ids["ann2"], "years"] == 1.0
    assert math.isnan(by_user.loc[ids["ann4"], "years"])
    expertise = frame["expertise"]
    assert expertise.cat.ordered and list(expertise.cat.categories) == ["novice", "some", "expert"]
    assert pd.isna(by_user.loc[ids["ann4"], "expertise"]) and by_user.loc[ids["ann1"], "expertise"] == "expert"
    assert by_user.loc[ids["ann1"], "field"] == "physics" and pd.isna(by_user.loc[ids["ann3"], "field"])


def test_axes_are_the_choice_and_number_fields(db, answered):
    study_id, _ = answered
    assert profiles.axes(db, study_id) == [profiles.Axis("expertise", "How expert are you?", "choice"),
                                           profiles.Axis("years", "Years of experience", "number")]


def test_a_study_without_questionnaire_has_no_axes_and_one_column(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=2)
    assert profiles.axes(db, study_id) == []
    assert list(profiles.answers_frame(db, study_id).columns) == ["user_id"]


def test_a_malformed_field_is_left_out_and_an_answer_outside_the_options_kept(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=2)
    set_questionnaire(db, study_id, [{"name": "Bad Name", "kind": "choice"}, {"name": "x", "kind": "scale"},
                                     {"name": "level", "kind": "choice", "options": ["low", "high"]}])
    answer(db, study_id, annotators[0]["id"], level="medium")
    frame = profiles.answers_frame(db, study_id)
    assert list(frame.columns) == ["user_id", "level"]
    assert list(frame["level"].cat.categories) == ["low", "high", "medium"]
    assert profiles.axes(db, study_id) == [profiles.Axis("level", "level", "choice")]


@pytest.mark.parametrize("values, labels", [
    ([3, 1, 1, 2], ["1", "2", "3"]),  # four answers or fewer: each its own group
    ([0, 1, 2, 3, 4, 5, 6, 10, 12, 40, 41, 60], ["0-2", "3-5", "6-12", "40-60"]),
    ([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.5, 2, 3, 7], ["0.5-1.5", "2-7"]),  # ties stay in one range
    ([-3, -1, 0, 2, 5, 9], ["-3 to -1", "0", "2", "5-9"]),
])
def test_number_ranges(values, labels):
    ranges = profiles.number_ranges(values)
    assert [label for _, _, label in ranges] == labels
    for value in values:  # each answer in exactly one range
        assert sum(low <= value <= high for low, high, _ in ranges) == 1


def test_dashboard_accuracy_by_who_answered_by_hand(db, answered):
    """expert: ann1 (4 of 4 right) and ann3 (4 given up): 8 answers of 2 people, 50%; novice: ann2,
    2 of 4 right: 50%; nobody answered "some"; ann4 answered nothing, so is in no group."""
    study_id, _ = answered
    frame = study.responses_frame(db, study_id)
    table = profiles.accuracy_by_answers(db, study_id, frame, "expertise", n_boot=200)
    assert table["expertise"].tolist() == ["novice", "expert"]
    assert table["people"].tolist() == [1, 2] and table["n"].tolist() == [4, 8]
    assert table["score"].tolist() == [50.0, 50.0]
    assert table["n"].sum() == len(frame)  # each counted answer once
    years = profiles.accuracy_by_answers(db, study_id, frame, profiles.axes(db, study_id)[1], n_boot=200)
    assert years["years"].tolist() == ["1", "2", "10"]
    assert years["score"].tolist() == [50.0, 0.0, 100.0]


def test_people_who_answered_no_questionnaire_are_a_group_of_their_own(db, answered):
    study_id, ids = answered
    with write_transaction(db):
        db.execute("DELETE FROM questionnaire_answers WHERE user_id = ?", [ids["ann3"]])
    table = profiles.accuracy_by_answers(db, study_id, study.responses_frame(db, study_id), "expertise", n_boot=0)
    assert table["expertise"].tolist() == ["novice", "expert", profiles.NO_ANSWER]
    assert table.set_index("expertise").loc[profiles.NO_ANSWER, "score"] == 0.0


def test_adjudication_counts_in_the_breakdown(db, answered, admin):
    """The final score counts: an override of one of ann3's give-ups to 1 lifts the experts to 5 of 8."""
    study_id, ids = answered
    frame = study.responses_frame(db, study_id)
    given_up = frame[frame["annotator"] == "ann3"]["response_id"].iloc[0]
    study.override_score(db, int(given_up), 1.0, "right after all", admin)
    table = profiles.accuracy_by_answers(db, study_id, study.responses_frame(db, study_id), "expertise", n_boot=0)
    assert table.set_index("expertise").loc["expert", "score"] == 62.5


def test_the_export_has_a_column_per_field(db, answered):
    study_id, ids = answered
    rows = study.export_rows(db, study_id)
    assert list(rows[0])[-3:] == ["q_expertise", "q_years", "q_field"]
    by_person = {r["annotator"]: r for r in rows}
    assert (by_person["ann1"]["q_expertise"], by_person["ann1"]["q_years"], by_person["ann1"]["q_field"]) == \
        ("expert", 10, "physics")
    assert by_person["ann3"]["q_field"] is None
    columns = study.study_export_columns(db, study_id)
    assert columns[-3:] == ["q_expertise", "q_years", "q_field"]
    read = list(csv.DictReader(io.StringIO(study.to_csv(rows, columns))))
    assert {r["annotator"]: r["q_years"] for r in read} == {"ann1": "10", "ann2": "1", "ann3": "2"}
    assert {r["q_field"] for r in read} == {"physics", "'=cmd()", ""}  # a formula is not run by a spreadsheet
    assert "q_expertise" in study.to_jsonl(rows).splitlines()[0]
    results = study.human_results(db, study_id)  # the model-result export: each row, pooled or not
    assert {(r["model"], r["q_expertise"], r["q_years"]) for r in results} == {
        ("human:ann1", "expert", 10), ("human:ann2", "novice", 1), ("human:ann3", "expert", 2),
        ("human", "expert", 10), ("human", "novice", 1), ("human", "expert", 2)}


def test_the_inspect_log_carries_each_persons_answers(db, answered, tmp_path):
    from inspect_ai.log import read_eval_log
    study_id, ids = answered
    path = study.write_inspect_log(db, study_id, tmp_path)
    log = read_eval_log(str(path))
    seen = {}
    for sample in log.samples:
        seen.setdefault(sample.metadata["annotator"], sample.metadata.get("questionnaire"))
    assert seen["ann1"] == {"expertise": "expert", "years": 10, "field": "physics"}
    assert seen["ann3"] == {"expertise": "expert", "years": 2}
    assert log.eval.metadata["questionnaire"]["people"]["ann2"] == {"expertise": "novice", "years": 1,
                                                                     "field": "=cmd()"}
    assert [f["name"] for f in log.eval.metadata["questionnaire"]["fields"]] == [f["name"] for f in FIELDS]


def test_over_two_studies_number_ranges_are_cut_once_and_mixed_kinds_are_no_axis(db, samples, annotators, answered):
    """Results reads several studies at once: a range means the same in each; a field that is a choice
    in one study and a number in the other groups nobody."""
    first, ids = answered
    second = make_study(db, samples, annotators, n_items=2, name="second")
    set_questionnaire(db, second, [{"name": "years", "label": "Years", "kind": "number"},
                                   {"name": "expertise", "label": "Level", "kind": "number"}])
    for user, years in zip(annotators, (20, 30, 40)):
        answer(db, second, user["id"], years=years, expertise=3)
    groups = profiles.people_groups(db, [first, second], "years")
    # answers 10, 1, 2 (first) and 20, 30, 40 (second): quartiles of all six at 4, 15 and 27.5
    assert groups[(first, ids["ann2"])] == groups[(first, ids["ann3"])] == "1-2"
    assert groups[(first, ids["ann1"])] == "10" and groups[(second, ids["ann1"])] == "20"
    assert groups[(second, ids["ann2"])] == groups[(second, ids["ann3"])] == "30-40"
    assert groups[(first, ids["ann4"])] == profiles.NO_ANSWER
    assert profiles.group_order(db, [first, second], "years") == ["1-2", "10", "20", "30-40", profiles.NO_ANSWER]
    assert [a.name for a in profiles.axes_of(db, [first, second])] == ["years"]
    expertise = profiles.people_groups(db, [first, second], "expertise")
    assert expertise[(first, ids["ann1"])] == "expert" and expertise[(second, ids["ann1"])] == profiles.NO_ANSWER
