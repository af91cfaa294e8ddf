"""AIBench's human side, core: people beside each VLM solver on the same (image, question) pairs,
their agreement, the ranked disagreements on the original figure, and sending a question back to
expert review (without Streamlit)."""
from __future__ import annotations

import json

import pytest

from structext_core.aibench import human_solver as hs
from structext_core.aibench import people as aibench_people
from structext_core.aibench import question_review as qr
from structext_core.aibench import store as aibench_store
from structext_core.aibench.model import ORIGINAL_SYSTEM
from structext_core.studio import changes, data_scope
from tests.aibench import people_data, review_data

SOLVER = "vlm-test"


@pytest.fixture
def world(tmp_path, monkeypatch):
    """Three people answering questions of one paper's original figure and of a blank image; a
    solver that answers every question right except where the scenario says."""
    w = review_data.setup(tmp_path, monkeypatch, papers=2, reviewers=3)
    data = qr.load_dataset(review_data.DATASET)
    paper = sorted(data.papers)[0]
    qs = [q.id for q in data.papers[paper].questions]
    a, b, c, d = qs[:4]
    key = {q: people_data.question(data, paper, q).answer for q in qs}
    wrong = {q: people_data.other_letter(data, paper, q) for q in qs}
    p1, p2, p3 = w["reviewers"]
    O = ORIGINAL_SYSTEM
    answers = [
        # a: people agree on the key, the solver does not -> solver_differs
        (p1, O, paper, a, key[a]), (p2, O, paper, a, key[a]), (p3, O, paper, a, key[a]),
        # b: people agree on another letter and so does the solver -> key_disputed (first)
        (p1, O, paper, b, wrong[b]), (p2, O, paper, b, wrong[b]), (p3, O, paper, b, wrong[b]),
        # c: two of three people miss the key, the solver has it -> people_wrong
        (p1, O, paper, c, wrong[c]), (p2, O, paper, c, wrong[c]), (p3, O, paper, c, key[c]),
        # d: everyone right -> not listed
        (p1, O, paper, d, key[d]), (p2, O, paper, d, key[d]),
        # the blank image: people miss it; never on the original's list
        (p1, "Blank Image", paper, a, wrong[a]),
        # practice: never counted
        (p2, "Blank Image", paper, b, key[b], "practice"),
    ]
    responses = people_data.aibench_study(w["db"], data, review_data.DATASET, "image study", answers)
    aibench_store.add_predictions(review_data.DATASET, people_data.solver_lines(
        data, SOLVER, {(O, paper, a): wrong[a], (O, paper, b): wrong[b]}), SOLVER)
    return {**w, "data": data, "paper": paper, "qs": (a, b, c, d), "key": key, "wrong": wrong,
            "responses": responses}


def _tables(w):
    people = aibench_people.people_answers(w["db"], w["data"], review_data.DATASET)
    rows = aibench_people.solver_rows(w["data"], review_data.DATASET)
    return people, rows


def test_people_answers_count_study_items_only_with_final_scores(world):
    people, _ = _tables(world)
    assert len(people) == 12  # the practice answer is left out
    assert people["correct"].sum() == 3 + 0 + 1 + 2 + 0
    p1 = world["reviewers"][0]
    a = world["qs"][0]
    blank = world["responses"][(p1["id"], "Blank Image", world["paper"], a)]
    people_data.override(world["db"], blank, 1.0, world["lead"])  # the lead accepts it
    assert aibench_people.people_answers(world["db"], world["data"], review_data.DATASET)["correct"].sum() == 7
    people_data.override(world["db"], blank, None, world["lead"])  # cleared: automatic again
    assert aibench_people.people_answers(world["db"], world["data"], review_data.DATASET)["correct"].sum() == 6


def test_accuracy_beside_solvers_on_the_same_pairs(world):
    people, rows = _tables(world)
    table = hs.accuracy_beside_solvers(people, rows).set_index(["who", "level"])
    overall = table.loc[(hs.PEOPLE, "all")]
    assert (overall["n"], overall["correct"], overall["pairs"]) == (12, 6, 5)
    assert overall["accuracy"] == pytest.approx(50.0) and overall["low"] < 50 < overall["high"]
    solver = table.loc[(SOLVER, "all")]
    # the same five pairs: wrong on a and b (original), right on c, d and the blank image's a
    assert (solver["n"], solver["correct"], solver["pairs"]) == (5, 3, 5)
    per_level = table.xs(hs.PEOPLE, level="who").drop(index="all")
    assert per_level["n"].sum() == 12 and per_level["correct"].sum() == 6


def test_question_table_majority_and_agreement(world):
    people, rows = _tables(world)
    table = hs.question_table(people, rows, aibench_people.answer_keys(world["data"]))
    a, b, c, d = world["qs"]
    by_q = table[table["system"] == ORIGINAL_SYSTEM].set_index("question_id")
    assert by_q.loc[a, "majority"] == world["key"][a] and not by_q.loc[a, "agree"]
    assert by_q.loc[b, "letters"] == f"{world['wrong'][b]}×3" and by_q.loc[b, "agree"]
    assert by_q.loc[c, "majority_share"] == pytest.approx(2 / 3)
    agreement = hs.agreement_with_solvers(table).set_index(["solver", "level"])
    everything = agreement.loc[(SOLVER, "all")]
    # majorities on 5 pairs; the solver has the majority's letter on b and d only
    assert (everything["pairs"], everything["agree"]) == (5, 2)


def test_disagreements_on_the_original_are_ranked(world):
    people, rows = _tables(world)
    table = hs.question_table(people, rows, aibench_people.answer_keys(world["data"]))
    found = hs.disagreements_on_original(table)
    a, b, c, _ = world["qs"]
    assert list(zip(found["question_id"], found["category"])) == [
        (b, "key_disputed"), (c, "people_wrong"), (a, "solver_differs")]
    assert set(found["system"]) == {ORIGINAL_SYSTEM}


def test_visible_studies_only(world):
    data = world["data"]
    assert aibench_people.people_answers(world["db"], data, review_data.DATASET, visible=[]).empty
    world["db"].execute("UPDATE studies SET results_when_closed = 1")
    researcher = {"id": 0, "username": "r", "role": "researcher"}
    visible = data_scope.results_studies(world["db"], researcher)  # open, shown only once closed: not yet
    assert aibench_people.people_answers(world["db"], data, review_data.DATASET, visible).empty
    world["db"].execute("UPDATE studies SET status = 'closed'")
    visible = data_scope.results_studies(world["db"], researcher)
    assert len(aibench_people.people_answers(world["db"], data, review_data.DATASET, visible)) == 12


# ---------------------------------------------------------------- sending a question back

def _evidence(w, question_id):
    people, rows = _tables(w)
    table = hs.question_table(people, rows, aibench_people.answer_keys(w["data"]))
    row = hs.disagreements_on_original(table).set_index("question_id").loc[question_id]
    return aibench_people.evidence_of(row)


def test_send_back_queues_for_the_next_campaign_with_the_evidence(world):
    db, lead, paper = world["db"], world["lead"], world["paper"]
    b = world["qs"][1]
    evidence = _evidence(world, b)
    assert evidence["letters"] == f"{world['wrong'][b]}×3" and evidence["solver"] == SOLVER
    assert not any(isinstance(v, str) and "rev" in v for v in evidence.values())  # no names
    sent = qr.send_back(db, lead, review_data.DATASET, paper, b, "people and the solver dispute the key", evidence)
    (row,) = qr.sendbacks(db, dataset=review_data.DATASET)
    assert row["id"] == sent and row["state"] == "queued" and row["evidence"]["key"] == world["key"][b]
    (audit,) = changes.history(db, f"aibench-question:{review_data.DATASET}/{paper}/{b}")
    assert audit.action == "qreview.send_back" and audit.by == "lead" and audit.detail["evidence"] == evidence
    with pytest.raises(qr.ReviewError, match="already back in review"):
        qr.send_back(db, lead, review_data.DATASET, paper, b, "again, the same question", evidence)
    # the next campaign with that paper takes it; the reviewer sees it beside the question
    cid = qr.create_campaign(db, "second look", review_data.DATASET, [world["reviewers"][0]["id"]], lead,
                             double_share=0)
    item = next(i for i in qr.list_items(db, cid) if i["paper_id"] == paper)
    shown = qr.sendbacks_for_item(db, item)
    assert list(shown) == [b] and shown[b][0]["state"] == "waiting"
    assert "people chose" in qr.describe_evidence(shown[b][0]["evidence"])


def test_send_back_to_a_chosen_campaign_reopens_an_approved_paper(world):
    db, lead, paper = world["db"], world["lead"], world["paper"]
    reviewer = world["reviewers"][0]
    cid = qr.create_campaign(db, "first look", review_data.DATASET, [reviewer["id"]], lead, double_share=0)
    item = next(i for i in qr.list_items(db, cid) if i["paper_id"] == paper)
    for q in world["data"].papers[paper].questions:
        qr.save_decision(db, item["id"], reviewer, q.id, "accept")
    qr.submit(db, item["id"], reviewer)
    qr.review(db, item["id"], lead, "approved")
    c = world["qs"][2]
    qr.send_back(db, lead, review_data.DATASET, paper, c, "people miss the key on the original",
                 _evidence(world, c), campaign_id=cid)
    reopened = qr.get_item(db, item["id"])
    assert reopened["status"] == "returned"
    assert c in qr.latest_review(db, item["id"])["comment"]
    (row,) = qr.sendbacks(db, campaign_id=cid)
    assert row["state"] == "waiting"
    qr.submit(db, item["id"], reviewer)
    (row,) = qr.sendbacks(db, campaign_id=cid)
    assert row["state"] == "reviewed" and row["decision"] == "accept"


@pytest.mark.parametrize("change, message", [
    (dict(reason="no"), "Say why"),
    (dict(question_id="nope"), "has no question"),
    (dict(campaign_id=999), "no review campaign"),
    (dict(evidence={"letters": "A" * 5000}), "evidence has"),
])
def test_send_back_refusals_write_nothing(world, change, message):
    args = dict(dataset=review_data.DATASET, paper_id=world["paper"], question_id=world["qs"][0],
                reason="a good reason", evidence={}, campaign_id=None)
    args.update(change)
    with pytest.raises(qr.ReviewError, match=message):
        qr.send_back(world["db"], world["lead"], **args)
    assert qr.sendbacks(world["db"]) == [] and changes.history(world["db"], prefix="aibench-question:") == []


def test_only_the_lead_sends_back(world):
    with pytest.raises(qr.ReviewError, match="review lead"):
        qr.send_back(world["db"], world["reviewers"][0], review_data.DATASET, world["paper"], world["qs"][0],
                     "a good reason")


def test_withdrawn_send_backs_no_longer_show(world):
    db, lead = world["db"], world["lead"]
    sent = qr.send_back(db, lead, review_data.DATASET, world["paper"], world["qs"][0], "solver misreads")
    qr.withdraw_send_back(db, lead, sent)
    assert qr.sendbacks(db) == []
    assert json.loads(json.dumps([c.action for c in changes.history(db, prefix="aibench-question:")])) == [
        "qreview.withdraw_send_back", "qreview.send_back"]


def test_moving_a_queued_send_back_into_a_campaign_reopens_a_submitted_paper(world):
    db, lead, paper = world["db"], world["lead"], world["paper"]
    reviewer = world["reviewers"][1]
    cid = qr.create_campaign(db, "ongoing", review_data.DATASET, [reviewer["id"]], lead, double_share=0)
    item = next(i for i in qr.list_items(db, cid) if i["paper_id"] == paper)
    for q in world["data"].papers[paper].questions:
        qr.save_decision(db, item["id"], reviewer, q.id, "accept")
    qr.submit(db, item["id"], reviewer)
    sent = qr.send_back(db, lead, review_data.DATASET, paper, world["qs"][0], "the solver misreads it")
    assert qr.sendbacks(db)[0]["state"] == "queued"  # the campaign existed before: not taken by itself
    with pytest.raises(qr.ReviewError, match="not waiting"):
        qr.move_send_back(db, lead, sent + 1, cid)
    qr.move_send_back(db, lead, sent, cid)
    assert qr.get_item(db, item["id"])["status"] == "returned"
    assert changes.history(db, prefix="aibench-question:")[0].detail["reopened_items"] == [item["id"]]
