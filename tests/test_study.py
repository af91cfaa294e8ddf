"""Studies without Streamlit: the draw, the answering clock, the dashboard figures, export."""

import csv
import io
import json
import math
from collections import Counter

import pandas as pd
import pytest

from structext_core import accounts, storage, study, suites

# Task ids chosen to cover several formats and categories.
GRID_TASKS = (1, 5, 8, 10, 18, 21)


def grid_samples(depths=(1, 2), widths=(1, 2), per_cell=2, tasks=GRID_TASKS):
    return [
        suites.generate_sample(task_id, depth, width, suite="test-hard", index=index)
        for task_id in tasks for depth in depths for width in widths for index in range(per_cell)
    ]


@pytest.fixture(scope="module")
def samples():
    return grid_samples()


@pytest.fixture
def db():
    return storage.open_db(":memory:")


@pytest.fixture
def annotators(db):
    return [accounts.create_user(db, f"ann{i}", "password-123", "annotator") for i in (1, 2, 3)]


@pytest.fixture
def admin(db):
    return accounts.create_user(db, "lead", "password-123", "admin")


def make_study(db, samples, annotators, **options):
    options = {"name": "pilot", "suite": "test-hard", "samples": samples, "n_items": 10,
               "annotator_ids": [a["id"] for a in annotators], **options}
    return study.create_study(db, **options)


def count(db, table):
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


# ---------------------------------------------------------------- the draw


def test_draw_is_deterministic_and_independent_of_input_order(samples):
    first = study.stratified_draw(samples, 20, seed=3)
    again = study.stratified_draw(list(reversed(samples)), 20, seed=3)
    other = study.stratified_draw(samples, 20, seed=4)
    assert [s["id"] for s in first] == [s["id"] for s in again]
    assert {s["id"] for s in first} != {s["id"] for s in other}
    assert len({s["id"] for s in first}) == 20


@pytest.mark.parametrize("n", [1, 7, 24, 25, 47, 48])
def test_draw_is_proportional_per_stratum(samples, n):
    drawn = study.stratified_draw(samples, n, seed=0)
    assert len(drawn) == n
    sizes = Counter(study.stratum(s) for s in samples)
    got = Counter(study.stratum(s) for s in drawn)
    for key, size in sizes.items():
        share = n * size / len(samples)
        assert math.floor(share) <= got[key] <= math.ceil(share)


def test_draw_covers_every_stratum_when_n_allows(samples):
    strata = {study.stratum(s) for s in samples}
    drawn = study.stratified_draw(samples, len(strata), seed=0)
    assert {study.stratum(s) for s in drawn} == strata


@pytest.mark.parametrize("n, message", [(0, "between 1 and 48"), (49, "between 1 and 48"), (-3, "between 1")])
def test_draw_refuses_impossible_counts(samples, n, message):
    with pytest.raises(study.StudyError, match=message):
        study.stratified_draw(samples, n)


def test_draw_from_empty_suite_is_an_error():
    with pytest.raises(study.StudyError, match="no samples"):
        study.stratified_draw([], 1)


# ---------------------------------------------------------------- creation


def test_create_study_copies_samples_and_shuffles_per_annotator(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators, created_by=admin["id"], seed=7)
    saved = get_study = study.get_study(db, study_id)
    assert (saved["n_items"], saved["seed"], saved["show_correctness"], saved["status"]) == (10, 7, 0, "open")
    assert get_study["rule_text"] == study.DEFAULT_RULE
    items = list(db.query("SELECT * FROM study_items WHERE study_id = ?", [study_id]))
    by_id = {s["id"]: s for s in samples}
    assert len(items) == 10
    for item in items:
        assert json.loads(item["sample_json"]) == by_id[item["sample_id"]]
        assert item["reference_chars"] == len(by_id[item["sample_id"]]["reference"])
    orders = {}
    for annotator in annotators:
        rows = list(db.query(
            "SELECT item_id FROM assignments WHERE study_id = ? AND user_id = ? ORDER BY seq",
            [study_id, annotator["id"]],
        ))
        orders[annotator["username"]] = [r["item_id"] for r in rows]
    assert all(sorted(order) == sorted(i["id"] for i in items) for order in orders.values())
    assert len({tuple(order) for order in orders.values()}) == 3  # each annotator an own order


def test_annotator_order_is_reproducible():
    assert study.annotator_order(range(50), 1, 2, 3) == study.annotator_order(range(50), 1, 2, 3)
    assert study.annotator_order(range(50), 1, 2, 3) != study.annotator_order(range(50), 1, 2, 4)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"name": "  "}, "Study name is empty"),
        ({"name": "PILOT"}, "already exists"),
        ({"rule_text": ""}, "rule is empty"),
        ({"annotator_ids": []}, "No annotators chosen"),
        ({"n_items": 500}, "between 1 and 48"),
        ({"annotator_ids": [999]}, "no account with id 999"),
    ],
)
def test_bad_study_setup_is_refused_and_changes_nothing(db, samples, annotators, options, message):
    make_study(db, samples, annotators)
    before = (count(db, "studies"), count(db, "study_items"), count(db, "assignments"))
    with pytest.raises(study.StudyError, match=message):
        make_study(db, samples, annotators, **{"name": "second", **options})
    assert (count(db, "studies"), count(db, "study_items"), count(db, "assignments")) == before


def test_admins_cannot_take_part(db, samples, admin):
    with pytest.raises(study.StudyError, match="not an annotator"):
        make_study(db, samples, [admin])
    assert count(db, "studies") == 0


def test_add_annotator_later(db, samples, annotators):
    study_id = make_study(db, samples, annotators[:2])
    assert study.annotator_names(db, study_id) == ["ann1", "ann2"]
    study.add_annotator(db, study_id, annotators[2]["id"])
    assert study.annotator_names(db, study_id) == ["ann1", "ann2", "ann3"]
    assert study.annotator_progress(db, study_id, annotators[2]["id"]) == {"answered": 0, "gave_up": 0, "total": 10, "seconds": 0}
    with pytest.raises(study.StudyError, match="already takes part"):
        study.add_annotator(db, study_id, annotators[2]["id"])


# ---------------------------------------------------------------- answering


@pytest.fixture
def started(db, samples, annotators):
    """A study of 10 items; ann1 has accepted the rule."""
    study_id = make_study(db, samples, annotators)
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id, at=0.0)
    return study_id, user_id


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
    assert (view.question, view.requirement, view.language) == (
        sample["question"], sample["requirement"], sample["language"])
    assert (view.seq, view.total) == (1, 10)


def test_reload_returns_the_same_question_with_the_same_clock(db, started):
    study_id, user_id = started
    first = study.open_question(db, study_id, user_id, at=100.0)
    again = study.open_question(db, study_id, user_id, at=250.0)
    assert again.assignment_id == first.assignment_id
    assert again.first_shown_at == 100.0
    assert again.elapsed(at=250.0) == 150.0


def test_pause_excludes_time_and_keeps_the_draft(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.pause_question(db, user_id, view.assignment_id, draft="half an answer", at=10.0)
    paused = study.open_question(db, study_id, user_id, at=50.0)
    assert paused.paused and paused.draft == "half an answer"
    assert paused.elapsed(at=50.0) == 10.0  # the clock stands still while paused
    study.pause_question(db, user_id, view.assignment_id, draft="still half", at=60.0)  # no second pause
    study.resume_question(db, user_id, view.assignment_id, at=70.0)
    resumed = study.open_question(db, study_id, user_id, at=80.0)
    assert not resumed.paused and resumed.paused_seconds == 60.0 and resumed.draft == "still half"
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
    submission = study.give_up(db, user_id, view.assignment_id, at=25.5)
    assert submission.gave_up and submission.elapsed_seconds == 15.5
    assert db.execute("SELECT response, gave_up FROM responses").fetchone() == ("", 1)
    assert study.annotator_progress(db, study_id, user_id) == {"answered": 1, "gave_up": 1, "total": 10, "seconds": 15.5}


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
    assert [(s["answered"], s["n_items"]) for s in listed] == [(10, 10)]


def answer_of(db, assignment_id):
    return db.execute(
        "SELECT json_extract(i.sample_json, '$.answer') FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [assignment_id]
    ).fetchone()[0]


@pytest.mark.parametrize("show", [False, True])
def test_feedback_only_when_the_study_allows_it(db, samples, annotators, show):
    study_id = make_study(db, samples, annotators, show_correctness=show)
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id)
    view = study.open_question(db, study_id, user_id)
    submission = study.submit_answer(db, user_id, view.assignment_id, answer_of(db, view.assignment_id))
    feedback = study.response_feedback(db, user_id, submission.response_id)
    if show:
        assert feedback == {"correct": True, "rouge_l": 1.0, "exact_match": 1}
    else:
        assert feedback is None
    # Never for someone else's response.
    assert study.response_feedback(db, annotators[1]["id"], submission.response_id) is None


# ---------------------------------------------------------------- dashboard


def run_study(db, samples, annotators, policy, n_items=12):
    """Every annotator answers every item; ``policy(username, index, answer)`` gives the
    response (None = give up). Item k takes 10 * (k + 1) seconds."""
    study_id = make_study(db, samples, annotators, n_items=n_items)
    clock = 1000.0
    for annotator in annotators:
        study.accept_rule(db, study_id, annotator["id"])
        index = 0
        while (view := study.open_question(db, study_id, annotator["id"], at=clock)) is not None:
            clock += 10 * (index + 1)
            response = policy(annotator["username"], index, answer_of(db, view.assignment_id))
            if response is None:
                study.give_up(db, annotator["id"], view.assignment_id, at=clock)
            else:
                study.submit_answer(db, annotator["id"], view.assignment_id, response, at=clock)
            index += 1
    return study_id


def policy_all_half_none(username, index, answer):
    if username == "ann1":
        return answer
    if username == "ann2":
        return answer if index % 2 == 0 else "zzz nothing alike"
    return None


def test_accuracy_by_annotator_with_the_paper_rule(db, samples, annotators):
    study_id = run_study(db, samples, annotators, policy_all_half_none)
    df = study.responses_frame(db, study_id)
    assert len(df) == 36 and df["rouge_l"].notna().all()
    per = study.accuracy_by(df, ["annotator"]).set_index("annotator")
    assert per.loc["ann1", "score"] == 100.0 and per.loc["ann1", "exact_match"] == 100.0
    assert per.loc["ann2", "score"] == 50.0
    assert per.loc["ann3", "score"] == 0.0
    assert (per["n"] == 12).all()
    assert (per["score_low"] <= per["score"]).all() and (per["score"] <= per["score_high"]).all()
    assert per.loc["ann2", "score_low"] < 50 < per.loc["ann2", "score_high"]
    summary = study.annotator_summary(df)
    assert summary["mean_annotator"] == 50.0
    assert (summary["best_annotator"], summary["best_score"]) == ("ann1", 100.0)
    assert summary["pool"]["score"].iloc[0] == 50.0 and summary["pool"]["n"].iloc[0] == 36


@pytest.mark.parametrize("column", ["language", "task", "depth", "width"])
def test_accuracy_by_item_groups_counts_every_response(db, samples, annotators, column):
    study_id = run_study(db, samples, annotators, policy_all_half_none)
    df = study.responses_frame(db, study_id)
    table = study.accuracy_by(df, [column])
    assert table["n"].sum() == 36
    assert set(table[column]) == set(df[column])


def test_scores_below_the_threshold_count_as_zero(db, samples, annotators):
    def almost(username, index, answer):
        return answer + " extra words that lower the overlap a lot indeed"
    study_id = run_study(db, samples, annotators[:1], almost, n_items=4)
    df = study.responses_frame(db, study_id)
    below = df[df["rouge_l"] < study.PASS_THRESHOLD]
    assert len(below) > 0
    assert (below["score"] == 0).all() and (~below["passed"]).all()


def test_progress_table(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=5)
    user_id = annotators[1]["id"]
    study.accept_rule(db, study_id, user_id)
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.give_up(db, user_id, view.assignment_id, at=30.0)
    view = study.open_question(db, study_id, user_id, at=30.0)
    study.submit_answer(db, user_id, view.assignment_id, "x", at=3630.0)
    table = study.progress_table(db, study_id).set_index("annotator")
    assert table.loc["ann2", ["answered", "gave_up", "remaining", "total"]].tolist() == [2, 1, 3, 5]
    assert table.loc["ann2", "done_pct"] == 40.0
    assert table.loc["ann2", "hours_answering"] == round(3630 / 3600, 2)
    assert table.loc["ann1", "answered"] == 0 and not table.loc["ann1", "rule_accepted"]


# ---------------------------------------------------------------- agreement


def test_cohen_kappa_known_values():
    assert study.cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0]) == 1.0
    assert study.cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0
    # 20 units: 10 agree-yes, 5 agree-no, 5 disagree -> po = .75, pe = .5 -> kappa .5
    a = [1] * 10 + [0] * 5 + [1] * 3 + [0] * 2
    b = [1] * 10 + [0] * 5 + [0] * 3 + [1] * 2
    assert study.cohen_kappa(a, b) == pytest.approx((0.75 - (13 * 12 + 7 * 8) / 400) / (1 - (13 * 12 + 7 * 8) / 400))
    assert math.isnan(study.cohen_kappa([1, 1], [1, 1]))


def test_fleiss_kappa_matches_the_textbook_example():
    # Fleiss (1971) example as given on Wikipedia: 10 subjects, 14 raters, 5 categories.
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    assert study.fleiss_kappa(table) == pytest.approx(0.210, abs=0.0005)
    with pytest.raises(ValueError):
        study.fleiss_kappa([[1, 1], [2, 1]])


def test_krippendorff_alpha_matches_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal data
    # with missing values: 4 observers, 12 units, alpha = 0.743.
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [list(column) for column in zip(*observers)]
    assert study.krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=0.0005)
    assert study.krippendorff_alpha_nominal([[1, 1], [1, 1]]) != study.krippendorff_alpha_nominal([[1, 0], [0, 1]])


def test_agreement_summary_on_a_study(db, samples, annotators):
    def policy(username, index, answer):
        wrong = {"ann1": {0}, "ann2": {0, 1}, "ann3": {0, 2}}[username]
        return "zzz nothing alike" if index in wrong else answer
    study_id = run_study(db, samples, annotators, policy, n_items=6)
    df = study.responses_frame(db, study_id)
    result = study.agreement_summary(df)
    assert result["fleiss_items"] == 6 and result["alpha_items"] == 6
    assert -1 <= result["fleiss_kappa"] <= 1 and -1 <= result["krippendorff_alpha"] <= 1
    pairwise = result["pairwise"]
    assert len(pairwise) == 3 and (pairwise["n"] == 6).all()
    # Recompute one pair's agreement from the raw verdicts.
    matrix = study.pass_matrix(df)
    same = (matrix["ann1"].astype(bool) == matrix["ann2"].astype(bool)).mean() * 100
    row = pairwise[(pairwise["annotator_a"] == "ann1") & (pairwise["annotator_b"] == "ann2")].iloc[0]
    assert row["agreement_pct"] == round(same, 1)


def test_agreement_with_one_annotator_is_undefined(db, samples, annotators):
    study_id = run_study(db, samples, annotators[:1], lambda u, i, a: a, n_items=3)
    result = study.agreement_summary(study.responses_frame(db, study_id))
    assert math.isnan(result["fleiss_kappa"]) and result["pairwise"].empty


# ---------------------------------------------------------------- time and flags


def timing_frame(rows):
    return pd.DataFrame(rows, columns=["response_id", "item_id", "annotator", "elapsed_seconds"])


def test_fast_answers_are_flagged_with_a_reason():
    df = timing_frame([
        (1, 1, "a", 2.0), (2, 1, "b", 60.0), (3, 1, "c", 80.0),      # 2 s: both rules
        (4, 2, "a", 10.0), (5, 2, "b", 100.0), (6, 2, "c", 120.0),   # 10 s < 25 % of 110 s
        (7, 3, "a", 50.0), (8, 3, "b", 60.0), (9, 3, "c", 70.0),     # nobody
        (10, 4, "a", 3.0),                                            # alone, under 5 s
    ])
    flagged = study.flag_fast(df).set_index("response_id")
    assert set(flagged.index) == {1, 4, 10}
    assert "under 5 s" in flagged.loc[1, "reason"] and "median" in flagged.loc[1, "reason"]
    assert flagged.loc[4, "reason"] == "under 25% of the others' median (110 s)"
    assert flagged.loc[10, "reason"] == "under 5 s"
    assert set(study.flag_fast(df, min_seconds=1, fraction_of_median=0.01).index) == set()


def test_time_summary(db, samples, annotators):
    study_id = run_study(db, samples, annotators[:2], lambda u, i, a: a, n_items=6)
    df = study.responses_frame(db, study_id)
    summary = study.time_summary(df)
    per = summary["per_annotator"].set_index("annotator")
    assert per.loc["ann1", "n"] == 6
    assert per.loc["ann1", "median_s"] == 35.0  # times 10, 20, ..., 60
    assert per.loc["ann1", "total_h"] == round(210 / 3600, 2)
    assert summary["per_cell"]["n"].sum() == 12
    assert -1 <= summary["spearman_length"] <= 1


# ---------------------------------------------------------------- export


def test_export_rows_csv_and_jsonl(db, samples, annotators):
    study_id = run_study(db, samples, annotators, policy_all_half_none, n_items=4)
    rows = study.export_rows(db, study_id)
    assert len(rows) == 12
    first = rows[0]
    assert list(first) == study.EXPORT_COLUMNS
    assert first["first_shown_at"].endswith("+00:00") and first["elapsed_seconds"] > 0
    parsed = list(csv.DictReader(io.StringIO(study.to_csv(rows))))
    assert len(parsed) == 12 and parsed[0]["sample_id"] == first["sample_id"]
    lines = study.to_jsonl(rows).splitlines()
    assert [json.loads(line) for line in lines] == rows
    gave_up = [r for r in rows if r["annotator"] == "ann3"]
    assert all(r["gave_up"] and r["score"] == 0 for r in gave_up)


def test_human_results_follow_the_model_result_schema(db, samples, annotators):
    study_id = run_study(db, samples, annotators, policy_all_half_none, n_items=4)
    rows = study.human_results(db, study_id)
    models = Counter(r["model"] for r in rows)
    assert models == {"human:ann1": 4, "human:ann2": 4, "human:ann3": 4, "human": 12}
    for row in rows:
        assert {"sample_id", "model", "prompt", "response", "rouge_l", "score", "exact_match"} <= set(row)
        json.dumps(row)
    pool = [r["score"] for r in rows if r["model"] == "human"]
    assert sum(pool) / len(pool) == pytest.approx(0.5)


@pytest.mark.parametrize("seconds, text", [(0, "0:00"), (59.9, "0:59"), (61, "1:01"), (3599, "59:59"),
                                           (3600, "1:00:00"), (36061, "10:01:01"), (-4, "0:00")])
def test_format_duration(seconds, text):
    assert study.format_duration(seconds) == text


def test_available_suites_lists_built_ins_then_stored_files(tmp_path):
    assert study.available_suites(tmp_path / "missing") == ["test-hard", "test"]
    for name in ("zeta", "test-hard", "alpha"):
        (tmp_path / f"{name}.jsonl").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert study.available_suites(tmp_path) == ["test-hard", "test", "alpha", "zeta"]


def test_draw_refuses_a_suite_with_repeated_ids(samples):
    with pytest.raises(study.StudyError, match="used more than once"):
        study.stratified_draw([*samples, samples[0]], 5)
