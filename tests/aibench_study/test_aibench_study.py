"""AIBench studies in the core: the draw, answering with letters, scoring, the seal, the blinded
image, the dashboard's frame and the export (no Streamlit)."""
from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from structext_core.aibench import seal
from structext_core.aibench import study as aibench_study
from structext_core.aibench import visibility as aibench_visibility
from structext_core.aibench.model import ORIGINAL_SYSTEM
from structext_core.aibench.pairwise import SIZE_BUCKET
from structext_core.studio import study


@pytest.fixture
def data(world):
    return aibench_study.load("synthetic")


def _create(world, name="img-1", n_items=12, practice=0, gold=0, seed=0, who=("ann1", "ann2"), **options):
    p = world["people"]
    return aibench_study.create_aibench_study(world["db"], name=name, dataset="synthetic", n_items=n_items,
                                      annotator_ids=[p[w]["id"] for w in who], seed=seed,
                                      practice_items=practice, gold_items=gold, created_by=p["lead"]["id"],
                                      **options)


def _items(db, study_id, kind=None):
    rows = db.execute("SELECT sample_json, kind FROM study_items WHERE study_id = ? ORDER BY position",
                      [study_id]).fetchall()
    return [json.loads(r[0]) for r in rows if kind is None or r[1] == kind]


def _key(item, right=True):
    letters = "ABCD"[:len(item["options"])]
    return item["answer"] if right else next(x for x in letters if x != item["answer"])


def _item_of_view(db, view):
    return json.loads(db.execute("SELECT sample_json FROM study_items WHERE id = ?", [view.item_id]).fetchone()[0])


# ---------------------------------------------------------------- the draw

def test_the_draw_is_seeded_one_image_per_paper_and_stratified(world, data):
    pool_systems = aibench_study.deal_systems(data, sorted(data.papers), 0)
    assert len(set(pool_systems.values())) == len(data.papers)  # 3 papers dealt to 3 different systems
    first = _create(world, "a", n_items=20, seed=5)
    again = _create(world, "b", n_items=20, seed=5)
    other = _create(world, "c", n_items=20, seed=6)
    db = world["db"]
    assert [i["id"] for i in _items(db, first)] == [i["id"] for i in _items(db, again)]
    assert [i["id"] for i in _items(db, first)] != [i["id"] for i in _items(db, other)]
    items = _items(db, first)
    assert len(items) == 20 == len({i["id"] for i in items})
    systems_per_paper = {p: {i["system"] for i in items if i["paper_id"] == p} for p in {i["paper_id"] for i in items}}
    assert all(len(s) == 1 for s in systems_per_paper.values()), systems_per_paper
    # proportional: each (level, system, conference) stratum within one of its share of the pool
    dealt = aibench_study.deal_systems(data, aibench_study._papers_in_order(data, 5), 5)
    pool = Counter((q.level, dealt[p.id], p.conference) for p in data.papers.values() for q in p.questions)
    drawn = aibench_study.strata_counts(items)
    total = sum(pool.values())
    for stratum, size in pool.items():
        share = 20 * size / total
        assert math.floor(share) <= drawn.get(stratum, 0) <= math.ceil(share), (stratum, share, drawn)
    # the columns the Results comparison reads
    row = db.execute("SELECT json_extract(strata, '$.paper_id'), json_extract(strata, '$.system'),"
                     " json_extract(strata, '$.question_id'), json_extract(strata, '$.level'),"
                     " json_extract(strata, '$.conference'), sample_id, reference_chars"
                     " FROM study_items WHERE study_id = ? AND position = 1", [first]).fetchone()
    assert row[5] == f"{row[0]}/{row[2]}@{row[1]}" and row[3] in (1, 2, 3, 4) and row[4] and row[6] == 0
    assert study.get_study(db, first).benchmark == "aibench" and study.get_study(db, first).suite == "synthetic"


def test_practice_and_gold_are_on_original_figures_of_papers_of_their_own(world):
    study_id = _create(world, n_items=8, practice=3, gold=2, seed=2)
    db = world["db"]
    counted, gold, practice = (_items(db, study_id, k) for k in ("study", "gold", "practice"))
    assert (len(counted), len(gold), len(practice)) == (8, 2, 3)
    assert all(i["system"] == ORIGINAL_SYSTEM for i in practice + gold)
    assert all(i["level"] == aibench_study.GOLD_LEVEL for i in gold)
    papers = [{i["paper_id"] for i in items} for items in (counted, gold, practice)]
    assert not (papers[0] & papers[1]) and not (papers[0] & papers[2]) and not (papers[1] & papers[2])
    s = study.get_study(db, study_id)
    assert (s.n_items, s.gold_items, s.practice_items) == (8, 2, 3)


@pytest.mark.parametrize("options, message", [
    ({"n_items": 10_000}, "between 1 and"),
    ({"practice": 10_000 // 1000, "n_items": 60}, "Number of questions"),
    ({"gold": 40, "n_items": 50}, "level-1 questions for gold"),
])
def test_setup_errors_say_what_to_change(world, options, message):
    with pytest.raises(study.StudyError, match=message):
        _create(world, **options)
    assert world["db"].execute("SELECT COUNT(*) FROM studies").fetchone()[0] == 0


def test_an_unknown_data_set_is_named(world):
    p = world["people"]
    with pytest.raises(study.StudyError, match="nope"):
        aibench_study.create_aibench_study(world["db"], name="x", dataset="nope", n_items=3, annotator_ids=[p["ann1"]["id"]])


# ---------------------------------------------------------------- answering and scoring

def _start(world, user="ann1", **options):
    study_id = _create(world, **options)
    db, uid = world["db"], world["people"][user]["id"]
    study.accept_rule(db, study_id, uid)
    return study_id, db, uid


def test_the_view_holds_the_question_and_options_only(world):
    study_id, db, uid = _start(world)
    view = study.open_question(db, study_id, uid, tab="t1")
    item = _item_of_view(db, view)
    assert view.benchmark == "aibench" and view.options == tuple(item["options"]) and view.question == item["question"]
    assert view.reference == "" and view.requirement == ""
    shown = repr(view)
    assert item["system"] not in shown and item["paper_id"] not in shown and item["image"] not in shown


def test_a_letter_is_scored_against_the_key_at_submit(world):
    study_id, db, uid = _start(world)
    outcomes = []
    for right in (True, False, True):
        view = study.open_question(db, study_id, uid, tab="t1")
        item = _item_of_view(db, view)
        letter = _key(item, right)
        submission = study.submit_answer(db, uid, view.assignment_id, letter.lower(), tab="t1")
        stored = db.execute("SELECT response, rouge_l, exact_match FROM responses WHERE id = ?",
                            [submission.response_id]).fetchone()
        outcomes.append(stored)
        assert stored[0] == letter  # kept as the key is written
    assert [(o[1], o[2]) for o in outcomes] == [(1.0, 1), (0.0, 0), (1.0, 1)]
    view = study.open_question(db, study_id, uid, tab="t1")
    with pytest.raises(study.StudyError, match="Choose one of the options"):
        study.submit_answer(db, uid, view.assignment_id, "E" if len(view.options) == 4 else "C", tab="t1")
    with pytest.raises(study.StudyError, match="Choose one of the options"):
        study.submit_answer(db, uid, view.assignment_id, "the second", tab="t1")
    gave_up = study.give_up(db, uid, view.assignment_id, tab="t1")
    assert db.execute("SELECT rouge_l, exact_match FROM responses WHERE id = ?",
                      [gave_up.response_id]).fetchone() == (0.0, 0)
    # the dashboard reads correctness as it reads a StrucText pass
    df = study.responses_frame(db, study_id)
    assert list(df["passed"]) == [True, False, True, False] and list(df["score"]) == [1.0, 0.0, 1.0, 0.0]
    by_level = study.accuracy_by(df, ["level"])
    assert set(by_level["level"]) <= {1, 2, 3, 4} and by_level["n"].sum() == 4


def test_the_chosen_letter_is_a_draft_kept_on_the_server(world):
    study_id, db, uid = _start(world)
    view = study.open_question(db, study_id, uid, tab="t1")
    study.record_activity(db, uid, view.assignment_id, "t1", draft="C")
    again = study.open_question(db, study_id, uid, tab="t2")  # a reload is a new tab
    assert again.assignment_id == view.assignment_id and again.draft == "C"


def test_practice_feedback_gives_the_key_after_the_answer_but_not_while_open_elsewhere(world):
    study_id, db, uid = _start(world, practice=2, n_items=4)
    view = study.open_question(db, study_id, uid, tab="t1")
    assert view.practice
    item = _item_of_view(db, view)
    assert study.pending_practice_feedback(db, study_id, uid) is None  # no key before the answer
    sub = study.submit_answer(db, uid, view.assignment_id, _key(item, right=False), tab="t1")
    feedback = study.practice_feedback(db, uid, sub.response_id)
    assert feedback.answer == item["answer"] and not feedback.passed and feedback.options == tuple(item["options"])
    # the same question, on another system's image, open for ann1 in another study: the key is withheld
    view2 = study.open_question(db, study_id, uid, tab="t1")
    item2 = _item_of_view(db, view2)
    other = study.insert_study(
        db, {"name": "other", "suite": "synthetic", "seed": 0, "rule_text": "r", "benchmark": "aibench",
             "show_correctness": 0, "created_by": None, "gold_pass": 0.5},
        [({"sample_id": item2["paper_id"] + "/" + item2["question_id"] + "@Blank Image", "reference_chars": 0,
           "sample_json": json.dumps({**item2, "system": "Blank Image"}),
           "strata": {"paper_id": item2["paper_id"], "system": "Blank Image", "question_id": item2["question_id"],
                      "level": item2["level"], "conference": item2["conference"]}}, "study")], [uid])
    assert other
    sub2 = study.submit_answer(db, uid, view2.assignment_id, _key(item2), tab="t1")
    withheld = study.practice_feedback(db, uid, sub2.response_id)
    assert withheld.key_withheld and withheld.answer == "" and withheld.passed
    assert seal.open_papers(db, uid) >= {seal.paper_key("synthetic", item2["paper_id"])}


def test_the_image_is_blinded_and_only_for_its_annotator(world):
    study_id, db, uid = _start(world)
    view = study.open_question(db, study_id, uid, tab="t1")
    item = _item_of_view(db, view)
    png = study.item_image(db, uid, view.assignment_id)
    assert png.startswith(b"\x89PNG") and len(png) % SIZE_BUCKET == 0
    for secret in (item["system"], item["paper_id"], "images/", "syn0"):
        assert secret.encode() not in png
    with pytest.raises(study.StudyError, match="not one of yours"):
        study.item_image(db, world["people"]["ann2"]["id"], view.assignment_id)


# ---------------------------------------------------------------- the lead's side

def test_export_columns_and_no_structext_results(world):
    study_id, db, uid = _start(world)
    view = study.open_question(db, study_id, uid, tab="t1")
    study.submit_answer(db, uid, view.assignment_id, _key(_item_of_view(db, view)), tab="t1")
    rows = study.export_rows(db, study_id)
    assert len(rows) == 1
    columns = list(rows[0])
    assert columns == study.export_columns("aibench")
    assert {"paper_id", "system", "question_id", "level", "conference"} <= set(columns)
    assert not {"language", "task", "depth", "width", "reference_chars"} & set(columns)
    assert rows[0]["score"] == 1.0 and rows[0]["response"] == rows[0]["answer"]
    assert "paper_id" in study.to_csv(rows).splitlines()[0]
    assert study.human_results(db, study_id) == []  # StrucText's Results rows: not for AIBench
    structext = study.export_columns("structext-eval")  # the same shared columns around its own strata
    assert structext[structext.index("sample_id") + 1:structext.index("answer")] == [
        "language", "task", "task_id", "depth", "width", "reference_chars"]
    assert [c for c in structext if c not in study.kind_of("structext-eval").item_columns] == study.EXPORT_COLUMNS


def test_clone_keeps_the_benchmark_and_the_items(world):
    study_id, db, _uid = _start(world)
    lead = world["people"]["lead"]["id"]
    copy = study.clone_study(db, study_id, name="copy", annotator_ids=[world["people"]["ann2"]["id"]], by_user=lead)
    assert study.get_study(db, copy).benchmark == "aibench"
    assert db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ? AND json_extract(strata, '$.system') IS NOT NULL",
                      [copy]).fetchone()[0] == 12


# ---------------------------------------------------------------- the seal on other services

def test_question_review_gives_no_paper_whose_questions_are_open_for_the_reviewer(world):
    from structext_core.aibench import question_review as qr
    from structext_core.studio import access

    db, p = world["db"], world["people"]
    study_id = _create(world, n_items=1, who=("ann1",))
    data = aibench_study.load("synthetic")
    open_papers = {pid for pid in data.papers if seal.paper_key("synthetic", pid) in seal.open_papers(db, p["ann1"]["id"])}
    assert open_papers and len(open_papers) == len(seal.open_papers(db, p["ann1"]["id"]))
    campaign = qr.create_campaign(db, "review", "synthetic", [p["ann1"]["id"]], p["lead"], double_share=0)
    items = qr.list_items(db, campaign, p["ann1"]["id"])
    sealed = [i for i in items if i["paper_id"] in open_papers]
    free = [i for i in items if i["paper_id"] not in open_papers]
    assert sealed and free
    nxt = qr.next_item(db, campaign, p["ann1"]["id"])
    assert nxt["paper_id"] not in open_papers
    with pytest.raises(qr.ReviewError, match="still have to answer in an open AIBench study"):
        qr.paper_for(db, sealed[0], p["ann1"])
    assert qr.paper_for(db, free[0], p["ann1"]).id == free[0]["paper_id"]
    # Results drill-down with keys, in public read-only mode: not of a data set an open study draws from
    access.set_public_mode(db, True, p["lead"])
    assert aibench_visibility.visible_datasets(db, p["ann1"], ["synthetic", "other"]) == ["other"]
    assert aibench_visibility.visible_datasets(db, p["reader"], ["synthetic", "other"]) == ["synthetic", "other"]
    # once every item is answered, the paper is the reviewer's to see
    study.accept_rule(db, study_id, p["ann1"]["id"])
    while (view := study.open_question(db, study_id, p["ann1"]["id"])) is not None:
        study.give_up(db, p["ann1"]["id"], view.assignment_id)
    assert qr.paper_for(db, sealed[0], p["ann1"]).id == sealed[0]["paper_id"]
    study.set_study_status(db, study_id, "closed")
    assert aibench_visibility.visible_datasets(db, p["ann1"], ["synthetic"]) == ["synthetic"]


def test_papers_practised_in_another_study_are_not_counted_where_it_can_be_avoided(world):
    db = world["db"]
    first = _create(world, "first", n_items=6, practice=2, seed=0)
    practised = {i["paper_id"] for i in _items(db, first, "practice")}
    assert len(practised) == 1
    second = _create(world, "second", n_items=10, practice=1, seed=7)
    assert {i["paper_id"] for i in _items(db, second, "practice")} == practised  # its keys are out already
    assert not practised & {i["paper_id"] for i in _items(db, second, "study")}
    # with no other way to draw 45 questions, the practised paper is counted (its keys stay sealed)
    third = _create(world, "third", n_items=45, seed=1)
    assert practised & {i["paper_id"] for i in _items(db, third, "study")}


def test_papers_a_reviewer_was_shown_with_their_keys_are_in_no_study_of_theirs(world, data):
    from structext_core.aibench import question_review as qr

    db, p = world["db"], world["people"]
    ann1 = p["ann1"]
    campaign = qr.create_campaign(db, "review", "synthetic", [ann1["id"]], p["lead"], double_share=0)
    items = qr.list_items(db, campaign, ann1["id"])
    assert len(items) == len(data.papers) == 3
    shown = items[0]
    qr.paper_for(db, shown, ann1)
    qr.heartbeat(db, shown["id"], ann1)  # the review page shows the paper: its clock starts
    # The papers only dealt to them are not seen: once they are in a study, the review seals those.
    assert seal.seen_keys(db, [ann1["id"]]).papers == {seal.paper_key("synthetic", shown["paper_id"])}
    assert not seal.seen_keys(db, [p["ann2"]["id"]])

    with_ann1 = _create(world, "with-ann1", n_items=12, who=("ann1", "ann2"))
    papers = {i["paper_id"] for i in _items(db, with_ann1)}
    assert papers and shown["paper_id"] not in papers  # left out for both: they share the questions

    # A study of ann2 alone may draw the paper; ann1 may not join it, and nothing is written.
    total = sum(len(paper.questions) for paper in data.papers.values())
    without = _create(world, "ann2-only", n_items=total - 6, who=("ann2",))
    assert shown["paper_id"] in {i["paper_id"] for i in _items(db, without)}
    before = db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0]
    with pytest.raises(study.StudyError, match=r"'ann1' has already seen answers of this study: the question review "
                                               rf"showed them 1 of its papers with their keys \({shown['paper_id']}\)"):
        study.add_annotator(db, without, ann1["id"], by_user=p["lead"]["id"])
    assert "ann1" not in study.annotator_names(db, without)
    assert db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == before

    # Asking for more questions than the papers they have not seen hold says why there are too few.
    with pytest.raises(study.StudyError, match="the papers and questions whose keys the annotators have seen"):
        _create(world, "too-many", n_items=total - 2, who=("ann1",))


def test_questions_answered_as_practice_are_in_no_later_study_of_theirs(world, data):
    db, p = world["db"], world["people"]
    ann1 = p["ann1"]["id"]
    first = _create(world, "first", n_items=4, practice=2, who=("ann1",))
    practised = {(i["paper_id"], i["question_id"]) for i in _items(db, first, "practice")}
    assert len(practised) == 2 and not seal.seen_keys(db, [ann1])  # not answered yet: no key shown
    study.accept_rule(db, first, ann1)
    for _ in practised:  # practice comes first
        view = study.open_question(db, first, ann1)
        assert view.practice
        study.submit_answer(db, ann1, view.assignment_id, "A")
    assert seal.seen_keys(db, [ann1]).practised_questions == {seal.question_key("synthetic", *q) for q in practised}
    total = sum(len(paper.questions) for paper in data.papers.values())
    later = _create(world, "later", n_items=total - 2 - 4, who=("ann1",))
    assert not practised & {(i["paper_id"], i["question_id"]) for i in _items(db, later)}
    everything = _create(world, "ann2-only", n_items=total - 4, who=("ann2",))
    assert practised <= {(i["paper_id"], i["question_id"]) for i in _items(db, everything)}
    with pytest.raises(study.StudyError, match="they answered 2 of its questions as practice in another study"):
        study.add_annotator(db, everything, ann1)
