"""Faster question review (structext_core.aibench.question_review), without Streamlit: accepting the
remaining questions at once, and a campaign's default share of double review with one reviewer."""
from __future__ import annotations

from dataclasses import replace

import pytest

from structext_core.aibench import question_review as qr
from structext_core.aibench.question_review import drafts as qr_drafts
from structext_core.studio import storage
from tests.aibench import review_data


@pytest.fixture
def env(tmp_path, monkeypatch):
    return review_data.setup(tmp_path, monkeypatch)


def one_reviewer_item(env):
    db, lead, r1 = env["db"], env["lead"], env["reviewers"][0]
    cid = qr.create_campaign(db, "Solo", review_data.DATASET, [r1["id"]], lead, double_share=0)
    return qr.next_item(db, cid, r1["id"])


def test_accept_remaining_accepts_only_the_undecided_questions_in_one_transaction(env, monkeypatch):
    db, r1, r2 = env["db"], env["reviewers"][0], env["reviewers"][1]
    item = one_reviewer_item(env)
    questions = qr.paper_of(item).questions
    edited = replace(questions[1], question=questions[1].question + " (reworded)")
    qr.save_decision(db, item["id"], r1, questions[0].id, "remove", reason="unreadable label")
    qr.save_decision(db, item["id"], r1, questions[1].id, "edit", edited, "clearer")
    before = qr.decisions(db, item["id"])
    transactions = []
    real = storage.write_transaction

    def counted(conn):
        transactions.append(1)
        return real(conn)

    monkeypatch.setattr(qr_drafts, "write_transaction", counted)
    with pytest.raises(qr.ReviewError, match="another reviewer"):
        qr.accept_remaining(db, item["id"], r2)
    assert qr.decisions(db, item["id"]) == before  # nothing written for the wrong reviewer
    assert qr.accept_remaining(db, item["id"], r1, at=1000.0) == len(questions) - 2
    assert len(transactions) == 1
    after = qr.decisions(db, item["id"])
    assert after[questions[0].id] == before[questions[0].id]  # the removal stays, reason and all
    assert after[questions[1].id].question == edited and after[questions[1].id].reason == "clearer"
    assert {after[q.id].action for q in questions[2:]} == {"accept"}
    assert not qr.undecided(qr.review_rows(qr.paper_of(item), after))
    # nothing left: 0, and nothing is written
    assert qr.accept_remaining(db, item["id"], r1) == 0
    assert qr.decisions(db, item["id"]) == after
    qr.submit(db, item["id"], r1)
    with pytest.raises(qr.ReviewError, match="submitted"):
        qr.accept_remaining(db, item["id"], r1)


def test_accept_remaining_starts_a_paper_still_to_do(env):
    db, r1 = env["db"], env["reviewers"][0]
    item = one_reviewer_item(env)
    assert item["status"] == "todo"
    assert qr.accept_remaining(db, item["id"], r1) == len(qr.paper_of(item).questions)
    assert qr.get_item(db, item["id"])["status"] == "draft"
    qr.submit(db, item["id"], r1)  # every question decided: it may be submitted
    assert qr.get_item(db, item["id"])["status"] == "submitted"


def test_the_default_double_share_works_with_one_reviewer(env):
    """Regression: creating a campaign with one reviewer at the default share failed with
    'Double review needs at least two reviewers'."""
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    solo = qr.create_campaign(db, "Solo", review_data.DATASET, [r1["id"]], lead)
    assert qr.campaign(db, solo)["double_share"] == 0
    assert not any(i["double"] for i in qr.list_items(db, solo))
    pair = qr.create_campaign(db, "Pair", review_data.DATASET, [r1["id"], r2["id"]], lead)
    assert qr.campaign(db, pair)["double_share"] == qr.DEFAULT_DOUBLE_SHARE
    assert any(i["double"] for i in qr.list_items(db, pair))
    # a share asked for explicitly with one reviewer is still refused, and nothing is written
    with pytest.raises(qr.ReviewError, match="at least two reviewers"):
        qr.create_campaign(db, "Solo twice", review_data.DATASET, [r1["id"]], lead, double_share=0.2)
    assert [c["name"] for c in qr.list_campaigns(db)].count("Solo twice") == 0
