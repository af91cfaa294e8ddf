"""AppTest of the faster question review (structext_core/aibench/pages/question_review.py, structext_core/aibench/pages/question_review_admin.py):
accept the remaining questions at once, decide by keyboard, and a one-reviewer campaign at the
default share of double review."""
from __future__ import annotations

import json

import pytest

from structext_core.aibench import question_review as qr
from tests.aibench import review_data
from tests.pages import light_forms
from tests.pages.test_page_question_review import ADMIN_PAGE, PAGE, button, run_as


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_EXPORTS_DIR", str(tmp_path / "exports"))
    found = review_data.setup(tmp_path, monkeypatch, papers=2)
    db, lead, r1 = found["db"], found["lead"], found["reviewers"][0]
    found["cid"] = qr.create_campaign(db, "Pilot", review_data.DATASET, [r1["id"]], lead, double_share=0)
    found["item"] = qr.next_item(db, found["cid"], r1["id"])
    return found


def decision_keys(at) -> dict[str, str]:
    """The keys the page's keyboard component reads, and the element each one clicks."""
    (found,) = [json.loads(e.proto.json) for e in at.get("bidi_component")
                if e.proto.component_name.endswith("structext_option_keys")]
    return found["keys"]


def test_accept_the_remaining_questions_at_once_keeps_the_decisions_made(env):
    db, r1, item = env["db"], env["reviewers"][0], env["item"]
    questions = qr.paper_of(item).questions
    at = run_as(PAGE, r1, qr_item=item["id"])
    assert not at.exception
    at.radio(key=f"qr_{item['id']}_{questions[0].id}_action").set_value("remove").run()
    at.text_input(key=f"qr_{item['id']}_{questions[0].id}_reason").set_value("label unreadable").run()
    assert button(at, "Submit paper").disabled
    left = len(questions) - 1
    button(at, f"Accept the {left} remaining questions").click().run()
    assert not at.exception
    assert any(f"Accepted {left} questions" in s.value for s in at.success)
    found = qr.decisions(db, item["id"])
    assert found[questions[0].id].action == "remove" and found[questions[0].id].reason == "label unreadable"
    assert {found[q.id].action for q in questions[1:]} == {"accept"}
    assert [at.radio(key=f"qr_{item['id']}_{q.id}_action").value for q in questions] == ["remove"] + ["accept"] * left
    assert not any(b.label.startswith("Accept the") for b in at.button)
    assert not button(at, "Submit paper").disabled


def test_keys_decide_the_next_question_without_a_decision(env):
    db, r1, item = env["db"], env["reviewers"][0], env["item"]
    questions = qr.paper_of(item).questions
    at = run_as(PAGE, r1, qr_item=item["id"])
    keys = decision_keys(at)
    assert set(keys) == {"A", "E", "R"}
    assert any("**A** accepts" in c.value and "**R** removes" in c.value for c in at.caption)
    # a key clicks the button of its element, as the browser's keydown does
    at.button(key=keys["A"]).click().run()
    assert qr.decisions(db, item["id"])[questions[0].id].action == "accept"
    assert at.radio(key=f"qr_{item['id']}_{questions[0].id}_action").value == "accept"
    keys = decision_keys(at)  # now the next question's
    assert at.button(key=keys["R"]).label == f"Remove {questions[1].id}"
    at.button(key=keys["R"]).click().run()
    assert qr.decisions(db, item["id"])[questions[1].id].action == "remove"
    assert any("needs a reason" in c.value for c in at.caption)  # the removal waits for its reason
    at.button(key=decision_keys(at)["E"]).click().run()
    edited = qr.decisions(db, item["id"])[questions[2].id]
    assert edited.action == "edit" and edited.question == questions[2]
    assert not at.exception


def test_a_campaign_with_one_reviewer_at_the_default_share_is_created(env):
    """Regression: one reviewer at the form's default share (0.2 reviewed twice) failed with 'Double
    review needs at least two reviewers'. The form says so beside the share; one reviewer reviews each
    paper once, and the success says that."""
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    at = run_as(ADMIN_PAGE, lead, qra_new_open=True)  # a campaign exists: the form's box opened, as a click does
    share = light_forms.fields(at, "qra_new")["share"]
    assert share["value"] == qr.DEFAULT_DOUBLE_SHARE and "with one, each paper is reviewed once" in share["help"]
    at = light_forms.submit(at, "qra_new", name="Solo", reviewers=[r1["id"]])
    assert not at.exception and not at.error, [e.value for e in at.error]
    solo = next(c for c in qr.list_campaigns(db) if c["name"] == "Solo")
    assert solo["double_share"] == 0 and not any(i["double"] for i in qr.list_items(db, solo["id"]))
    assert "Campaign 'Solo' created. With one reviewer each paper is reviewed once." in [s.value for s in at.success]
    at = light_forms.submit(run_as(ADMIN_PAGE, lead, qra_new_open=True), "qra_new", name="Pair",
                            reviewers=[r1["id"], r2["id"]], share=0.5)
    pair = next(c for c in qr.list_campaigns(db) if c["name"] == "Pair")
    assert pair["double_share"] == 0.5 and "Campaign 'Pair' created." in [s.value for s in at.success]
