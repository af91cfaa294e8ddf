"""Studies: the draw, creation, annotators and their order, suites to draw from, limits
on stored text, the typed rows the pages read."""

import json
import math
from collections import Counter

import pytest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import study_draws
from structext_core.studio import study
from tests.studio.study.support import count, make_study

# ---------------------------------------------------------------- the draw


def test_draw_is_deterministic_and_independent_of_input_order(samples):
    first = study.stratified_draw(samples, 20, seed=3, stratum_of=study_draws.stratum)
    again = study.stratified_draw(list(reversed(samples)), 20, seed=3, stratum_of=study_draws.stratum)
    other = study.stratified_draw(samples, 20, seed=4, stratum_of=study_draws.stratum)
    assert [s["id"] for s in first] == [s["id"] for s in again]
    assert {s["id"] for s in first} != {s["id"] for s in other}
    assert len({s["id"] for s in first}) == 20


@pytest.mark.parametrize("n", [1, 7, 24, 25, 47, 48])
def test_draw_is_proportional_per_stratum(samples, n):
    drawn = study.stratified_draw(samples, n, seed=0, stratum_of=study_draws.stratum)
    assert len(drawn) == n
    sizes = Counter(study_draws.stratum(s) for s in samples)
    got = Counter(study_draws.stratum(s) for s in drawn)
    for key, size in sizes.items():
        share = n * size / len(samples)
        assert math.floor(share) <= got[key] <= math.ceil(share)


def test_draw_covers_every_stratum_when_n_allows(samples):
    strata = {study_draws.stratum(s) for s in samples}
    drawn = study.stratified_draw(samples, len(strata), seed=0, stratum_of=study_draws.stratum)
    assert {study_draws.stratum(s) for s in drawn} == strata


@pytest.mark.parametrize("n, message", [(0, "between 1 and 48"), (49, "between 1 and 48"), (-3, "between 1")])
def test_draw_refuses_impossible_counts(samples, n, message):
    with pytest.raises(study.StudyError, match=message):
        study.stratified_draw(samples, n, stratum_of=study_draws.stratum)


def test_draw_from_empty_suite_is_an_error():
    with pytest.raises(study.StudyError, match="no samples"):
        study.stratified_draw([], 1, stratum_of=study_draws.stratum)


def test_create_study_copies_samples_and_shuffles_per_annotator(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators, created_by=admin["id"], seed=7)
    saved = study.get_study(db, study_id)
    assert isinstance(saved, study.Study)
    assert (saved.n_items, saved.seed, saved.show_correctness, saved.status) == (10, 7, False, "open")
    assert (saved.rule_text, saved.created_by, saved.n_annotators) == (structext_study.DEFAULT_RULE, admin["id"], 3)
    assert saved.label == "pilot · test-hard · 10 study questions · 3 annotators · open"
    with pytest.raises(TypeError):  # a record, not the row dict it was
        saved["seed"]
    assert study.list_studies(db) == [saved]
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
    assert len({tuple(order) for order in orders.values()}) == 3  # each annotator their own order


def test_annotator_order_is_reproducible():
    assert study.annotator_order(range(50), 1, 2, 3) == study.annotator_order(range(50), 1, 2, 3)
    assert study.annotator_order(range(50), 1, 2, 3) != study.annotator_order(range(50), 1, 2, 4)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"name": "  "}, "Study name is empty"),
        ({"name": "PILOT"}, "already exists"),
        ({"rule_text": ""}, "rule is empty"),
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


def test_a_study_with_nobody_in_it_yet_is_made_for_people_who_come_later(db, samples, annotators):
    """A crowd's study: people come later (a study link, a CSV, the dashboard); its items are there already."""
    study_id = make_study(db, samples, annotators, annotator_ids=[])
    saved = study.get_study(db, study_id)
    assert (saved.n_annotators, count(db, "assignments")) == (0, 0)
    assert count(db, "study_items") == saved.n_items == 10
    study.add_annotator(db, study_id, annotators[0]["id"])
    assert count(db, "assignments") == 10


def _one_item(strata):
    return [({"sample_id": "s1", "reference_chars": 1, "sample_json": "{}", "strata": strata}, "study")]


_STUDY_ROW = {"name": "raw", "suite": "test-hard", "seed": 0, "rule_text": "r", "show_correctness": 0,
              "created_by": None, "gold_pass": 0.5}


@pytest.mark.parametrize(("row", "strata", "message"), [
    ({}, {"language": "json", "task": "T", "task_id": 1, "depth": 1}, r"Study item 1 \(s1\): .*'width' is missing"),
    ({}, {"language": "json", "task": "T", "task_id": 1, "depth": 1, "width": "2"}, "'width' must be an integer"),
    ({}, {"language": "json", "task": "T", "task_id": 1, "depth": 1, "width": 2, "level": 1}, "no stratum 'level'"),
    ({"benchmark": "mmlu"}, {}, "There is no benchmark 'mmlu'; the benchmarks are structext-eval, aibench"),
])
def test_an_item_whose_strata_its_benchmark_does_not_declare_is_refused(db, annotators, row, strata, message):
    with pytest.raises(study.StudyError, match=message):
        study.insert_study(db, {**_STUDY_ROW, **row}, _one_item(strata), [annotators[0]["id"]])
    assert (count(db, "studies"), count(db, "study_items"), count(db, "assignments")) == (0, 0, 0)


def test_admins_cannot_take_part(db, samples, admin):
    with pytest.raises(study.StudyError, match="not an annotator"):
        make_study(db, samples, [admin])
    assert count(db, "studies") == 0


def test_add_annotator_later(db, samples, annotators):
    study_id = make_study(db, samples, annotators[:2])
    assert study.annotator_names(db, study_id) == ["ann1", "ann2"]
    study.add_annotator(db, study_id, annotators[2]["id"])
    assert study.annotator_names(db, study_id) == ["ann1", "ann2", "ann3"]
    assert study.annotator_progress(db, study_id, annotators[2]["id"]) == study.AnnotatorProgress(
        answered=0, gave_up=0, total=10, seconds=0)
    with pytest.raises(study.StudyError, match="already takes part"):
        study.add_annotator(db, study_id, annotators[2]["id"])


def test_available_suites_lists_built_ins_then_stored_files(tmp_path):
    assert structext_study.available_suites(tmp_path / "missing") == ["test-hard", "test"]
    for name in ("zeta", "test-hard", "alpha"):
        (tmp_path / f"{name}.jsonl").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert structext_study.available_suites(tmp_path) == ["test-hard", "test", "alpha", "zeta"]


def test_draw_refuses_a_suite_with_repeated_ids(samples):
    with pytest.raises(study.StudyError, match="used more than once"):
        study.stratified_draw([*samples, samples[0]], 5, stratum_of=study_draws.stratum)


@pytest.mark.parametrize("field, option, limit_name", [
    ("study name", "name", "MAX_NAME_CHARS"),
    ("study rule", "rule_text", "MAX_NOTE_CHARS"),
])
def test_study_name_and_rule_over_the_limit_are_refused_and_at_the_limit_accepted(
        db, samples, annotators, field, option, limit_name):
    from structext_core.text import limits

    limit = getattr(limits, limit_name)
    with pytest.raises(study.StudyError, match=f"The {field} is {limit + 1:,} characters long; the limit is "
                                               f"{limit:,} characters"):
        make_study(db, samples, annotators, **{option: "s" * (limit + 1)})
    assert (count(db, "studies"), count(db, "study_items"), count(db, "assignments")) == (0, 0, 0)
    study_id = make_study(db, samples, annotators, **{option: "s" * limit})
    stored = db.execute(f"SELECT {option} FROM studies WHERE id = ?", [study_id]).fetchone()[0]
    assert stored == "s" * limit


def test_an_annotator_lands_on_the_first_study_they_have_not_finished():
    def listed(answered, n_items):
        return study.AnnotatorStudy(id=answered, name="s", rule_text="r", show_correctness=False,
                                    n_items=n_items, rule_accepted_at=None, answered=answered)
    assert study.first_unfinished([listed(3, 3), listed(1, 3), listed(0, 3)]) == 1
    assert study.first_unfinished([listed(3, 3), listed(2, 2)]) == 0
    assert [item.finished for item in (listed(2, 3), listed(3, 3))] == [False, True]


def test_studies_list_newest_first_with_their_annotators(db, samples, annotators):
    first = make_study(db, samples, annotators[:1], name="first")
    second = make_study(db, samples, annotators, name="second", show_correctness=True)
    listed = study.list_studies(db)
    assert [(s.id, s.n_annotators, s.show_correctness) for s in listed] == [(second, 3, True), (first, 1, False)]
    assert study.get_study(db, first) == listed[1]
    with pytest.raises(study.StudyError, match="no study with id 99"):
        study.get_study(db, 99)
    assert [s.name for s in study.studies_for_annotator(db, annotators[1]["id"])] == ["second"]


def test_one_count_of_a_studys_questions_for_every_page():
    """Issue 19: "4 questions" + 1 gold + 1 practice was told as 5, then "all 6", and 4 beside 5."""
    counts = study.QuestionCounts(counted=4, gold=1, practice=1)
    assert (counts.asked, counts.total) == (5, 6)
    assert counts.for_annotator == "5 study questions"
    assert counts.breakdown == "5 study questions (4 counted + 1 gold) and 1 practice question first"
    assert study.QuestionCounts(1).breakdown == "1 study question"
    # the lead's progress says what its figures and the baseline count, from the same counts
    assert counts.progress_terms("pilot") == (
        "pilot asks each annotator 5 study questions (4 counted + 1 gold) and 1 practice question first. Progress "
        "counts the 5 study questions (gold included, practice apart); the baseline counts the 4 counted ones.")
    assert study.QuestionCounts(20).progress_terms("crowd") == (
        "crowd asks each annotator 20 study questions, all counted in the baseline.")
    assert study.QuestionCounts(1).progress_terms("one") == "one asks each annotator 1 study question, counted in the baseline."
    assert study.QuestionCounts(3, practice=2).progress_terms("p") == (
        "p asks each annotator 3 study questions and 2 practice questions first. Progress counts the 3 study "
        "questions (practice apart); the baseline counts them all.")
    assert study.QuestionCounts(3, gold=2).progress_terms("g") == (
        "g asks each annotator 5 study questions (3 counted + 2 gold). Progress counts the 5 study questions "
        "(gold included); the baseline counts the 3 counted ones.")


def test_a_study_counts_an_answer_right_from_the_result_schemas_threshold():
    from structext_core.evaluation import scoring
    assert study.PASS_THRESHOLD == scoring.DEFAULT_THRESHOLD
