"""AppTest of structext_core/aibench/pages/question_review.py (a reviewer's paper) and structext_core/aibench/pages/question_review_admin.py (the lead)."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.aibench import question_review as qr
from structext_core.aibench.model import INSUFFICIENT, LETTERS
from tests.aibench import review_data
from tests.pages import light_forms
from tests.pages.test_screens_say_true_things import raw_missing

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "structext_core" / "aibench" / "pages" / "question_review.py")
ADMIN_PAGE = str(ROOT / "structext_core" / "aibench" / "pages" / "question_review_admin.py")


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_EXPORTS_DIR", str(tmp_path / "exports"))
    found = review_data.setup(tmp_path, monkeypatch, papers=2)
    db, lead, (r1, r2) = found["db"], found["lead"], found["reviewers"]
    found["cid"] = qr.create_campaign(db, "Pilot", review_data.DATASET, [r1["id"], r2["id"]], lead, double_share=0.5)
    return found


def run_as(page, user, **state):
    at = AppTest.from_file(page, default_timeout=60)
    at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def key_of(item_id, qid, what):
    return f"qr_{item_id}_{qid}_{what}"


def button(at, label):
    return next(b for b in at.button if b.label == label)


def double_items(env):
    items = [i for i in qr.list_items(env["db"], env["cid"]) if i["double"]]
    return {i["reviewer_id"]: i for i in items}


def test_visitor_is_refused_and_a_reviewer_without_papers_is_told(env, monkeypatch):
    assert "not logged in" in AppTest.from_file(PAGE, default_timeout=60).run().error[0].value
    from structext_core.studio import accounts
    other = accounts.create_user(env["db"], "solo", "password1", "annotator")
    at = run_as(PAGE, other)
    assert not at.exception and "No AIBench review campaign has papers for you" in at.info[0].value
    at = run_as(ADMIN_PAGE, env["reviewers"][0])
    assert "only" in at.error[0].value


def test_reviewer_accepts_edits_removes_adds_sees_a_graph_warning_and_submits(env):
    db, r1 = env["db"], env["reviewers"][0]
    item = double_items(env)[r1["id"]]
    at = run_as(PAGE, r1, qr_item=item["id"])
    assert not at.exception
    paper = qr.paper_of(item)
    assert at.subheader[0].value.startswith(paper.id)
    assert len(at.dataframe) >= 2  # nodes and edges of the logic graph
    # the figure fills its column; a button opens it at its own size
    assert len(at.get("image")) == 1
    button(at, "Open the figure at full size").click().run()
    assert not at.exception and len(at.get("image")) == 2
    assert button(at, "Submit paper").disabled
    # accept every question but three
    q_edit = next(q for q in paper.questions if q.level == 2)
    q_remove = paper.questions[0]
    for q in paper.questions:
        if q.id not in (q_edit.id, q_remove.id):
            at.radio(key=key_of(item["id"], q.id, "action")).set_value("accept")
    at.run()
    # edit: choose another answer than the graph's -> a warning, saved as a draft
    at.radio(key=key_of(item["id"], q_edit.id, "action")).set_value("edit").run()
    wrong = next(L for k, L in enumerate(LETTERS[:len(q_edit.options)])
                 if L != q_edit.answer and q_edit.options[k] != INSUFFICIENT)
    at.selectbox(key=key_of(item["id"], q_edit.id, "answer")).set_value(wrong).run()
    assert any("logic graph answers" in w.value for w in at.warning)
    assert qr.decisions(db, item["id"])[q_edit.id].question.answer == wrong
    at.selectbox(key=key_of(item["id"], q_edit.id, "answer")).set_value(q_edit.answer).run()
    at.text_area(key=key_of(item["id"], q_edit.id, "text")).set_value(q_edit.question + " (main path)").run()
    at.text_input(key=key_of(item["id"], q_edit.id, "reason")).set_value("clearer wording").run()
    assert not any("logic graph answers" in w.value for w in at.warning)
    # remove with a reason
    at.radio(key=key_of(item["id"], q_remove.id, "action")).set_value("remove").run()
    assert button(at, "Submit paper").disabled  # the removal has no reason yet
    at.text_input(key=key_of(item["id"], q_remove.id, "reason")).set_value("label unreadable").run()
    # add a question
    at.text_area(key=key_of(item["id"], "new", "text")).set_value("Which stage runs last?")
    at.text_input(key=key_of(item["id"], "new", "opt0")).set_value("Decoding")
    at.text_input(key=key_of(item["id"], "new", "opt1")).set_value("Encoding")
    at.text_input(key=key_of(item["id"], "new", "opt2")).set_value(INSUFFICIENT)
    at.selectbox(key=key_of(item["id"], "new", "level")).set_value(3)
    at.text_input(key=key_of(item["id"], "new", "reason")).set_value("harder question")
    next(b for b in at.button if b.label == "Add question").click().run()
    assert not at.exception
    found = qr.decisions(db, item["id"])
    added = [d for d in found.values() if d.action == "add"]
    assert len(added) == 1 and added[0].question.options == ("Decoding", "Encoding", INSUFFICIENT)
    assert found[q_remove.id].action == "remove" and found[q_remove.id].reason == "label unreadable"
    assert found[q_edit.id].question.question.endswith("(main path)")
    assert not button(at, "Submit paper").disabled
    button(at, "Submit paper").click().run()
    assert not at.exception
    assert qr.get_item(db, item["id"])["status"] == "submitted"
    assert any("Submitted" in s.value for s in at.success)


def test_a_double_reviewer_never_sees_the_other_reviewers_decisions(env):
    db, (r1, r2) = env["db"], env["reviewers"]
    items = double_items(env)
    paper = qr.paper_of(items[r1["id"]])
    qr.save_decision(db, items[r1["id"]]["id"], r1, paper.questions[0].id, "remove",
                     reason="SECRET-REASON-OF-REV1")
    at = run_as(PAGE, r2, qr_item=items[r2["id"]]["id"])
    assert not at.exception
    text = " ".join(str(e.value) for e in at.markdown) + " ".join(str(e.value) for e in at.caption)
    assert "SECRET-REASON-OF-REV1" not in text
    assert at.radio(key=key_of(items[r2["id"]]["id"], paper.questions[0].id, "action")).value is None
    # and the other reviewer's paper cannot be opened by passing its id
    at = run_as(PAGE, r2, qr_item=items[r1["id"]]["id"])
    assert at.selectbox(key="qr_item").value == items[r2["id"]]["id"]


def test_with_no_campaign_the_lead_finds_the_form_at_once_and_after_the_first_a_closed_box(tmp_path, monkeypatch):
    """With no campaign the page is the new campaign's form, drawn at once under one line saying so (not
    in a box to open, nor with a note pointing "above"); once one exists, the form waits in a closed box."""
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    found = review_data.setup(tmp_path, monkeypatch, papers=2)
    db, lead, (r1, _) = found["db"], found["lead"], found["reviewers"]
    at = run_as(ADMIN_PAGE, lead)
    assert not at.exception
    assert not at.expander and not at.info
    assert [c.value for c in at.caption] == ["No review campaign yet: create the first one here."]
    assert light_forms.light_forms(at)
    at = light_forms.submit(at, "qra_new", name="First", reviewers=[r1["id"]])
    assert not at.exception
    assert [c["name"] for c in qr.list_campaigns(db)] == ["First"]
    at = run_as(ADMIN_PAGE, lead)
    assert "New review campaign" in [e.label for e in at.expander] and not light_forms.light_forms(at)


def test_lead_creates_approves_adjudicates_and_exports(env, tmp_path):
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    at = run_as(ADMIN_PAGE, lead)
    assert not at.exception
    # a campaign exists: the new campaign's form is drawn once its box is opened (issue 46)
    assert "New review campaign" in [e.label for e in at.expander]
    assert not light_forms.light_forms(at)
    at = run_as(ADMIN_PAGE, lead, qra_new_open=True)  # as a click on the box does
    at = light_forms.submit(at, "qra_new", name="Second", reviewers=[r1["id"]])
    assert not at.exception
    assert [c["name"] for c in qr.list_campaigns(db)][0] == "Second"
    # everyone submits the Pilot; the double paper has one disagreement
    for item in qr.list_items(db, env["cid"]):
        who = r1 if item["reviewer_id"] == r1["id"] else r2
        paper = qr.paper_of(item)
        for q in paper.questions:
            remove = item["double"] and who is r1 and q.id == paper.questions[0].id
            qr.save_decision(db, item["id"], who, q.id, "remove" if remove else "accept",
                             reason="not legible" if remove else "")
        qr.submit(db, item["id"], who)
    at = run_as(ADMIN_PAGE, lead, qra_campaign=env["cid"])
    assert not at.exception
    while any(b.label == "Approve" for b in at.button):
        next(b for b in at.button if b.label == "Approve").click().run()
        assert not at.exception
    assert all(i["status"] == "approved" for i in qr.list_items(db, env["cid"]))
    assert button(at, "Export curated set").disabled is False  # the single paper is ready
    assert "disagreements not adjudicated" in " ".join(str(d.value.to_dict()) for d in at.dataframe)
    # the agreement's levels both reviewers decided alike have no kappa: a dash, never None (issue 46)
    agreement = next(d.value for d in at.dataframe if "kappa" in d.value.columns)
    assert "—" in set(agreement["kappa"]) and raw_missing(at) == []
    double = next(i for i in qr.list_items(db, env["cid"]) if i["double"])
    qid = qr.paper_of(double).questions[0].id
    key = f"qra_adj_{double['paper_id']}_{qid}"
    at.radio(key=key).set_value("Remove it")
    at.text_input(key=f"{key}_reason").set_value("rev1 is right")
    at.button(key=f"{key}_go").click().run()
    assert not at.exception
    assert qr.latest_adjudication(db, env["cid"], double["paper_id"], qid)["action"] == "remove"
    folder = tmp_path / "out"
    at.text_input(key=f"qra_folder_{env['cid']}").set_value(str(folder))
    button(at, "Export curated set").click().run()
    assert not at.exception
    assert (folder / "papers").is_dir() and (folder / "review" / "provenance.jsonl").is_file()
    assert any(b.label == "Download the export (zip)" for b in at.get("download_button"))


def test_send_back_shows_the_comment_and_flags_reach_the_lead(env):
    db, lead, (r1, _) = env["db"], env["lead"], env["reviewers"]
    item = double_items(env)[r1["id"]]
    for q in qr.paper_of(item).questions:
        qr.save_decision(db, item["id"], r1, q.id, "accept")
    qr.submit(db, item["id"], r1)
    at = run_as(ADMIN_PAGE, lead, qra_campaign=env["cid"])
    decided = next(d.value for d in at.dataframe if "graph warning" in d.value.columns)
    assert set(decided["decision"]) == {"accept"} and len(decided) == len(qr.paper_of(item).questions)
    at.text_input(key=f"qra_comment_{item['id']}").set_value("L2-1 reads badly: reword it")
    at.button(key=f"qra_return_{item['id']}").click().run()
    assert not at.exception and qr.get_item(db, item["id"])["status"] == "returned"
    at = run_as(PAGE, r1, qr_item=item["id"])
    assert any("L2-1 reads badly" in w.value for w in at.warning)
    assert not button(at, "Submit paper").disabled  # the decisions are kept
    at.selectbox(key=f"qr_flag_q_{item['id']}").set_value("L1-1")
    at.text_input(key=f"qr_flag_reason_{item['id']}").set_value("the label is cut off in the figure")
    button(at, "Send flag").click().run()
    assert any("Flag sent" in s.value for s in at.success)
    flag = qr.list_flags(db, env["cid"], open_only=True)[0]
    assert flag["question_id"] == "L1-1"
    at = run_as(ADMIN_PAGE, lead, qra_campaign=env["cid"])
    assert any("the label is cut off" in m.value for m in at.markdown)
    at.text_input(key=f"qra_resolve_{flag['id']}").set_value("figure re-cropped")
    at.button(key=f"qra_resolve_go_{flag['id']}").click().run()
    assert not at.exception and not qr.list_flags(db, env["cid"], open_only=True)


def test_a_question_sent_back_from_results_reaches_its_reviewer_with_the_evidence(env):
    """Queued from Results (no campaign), taken into this campaign by the lead on the admin page,
    shown to the paper's reviewer beside the question; withdrawn, it is gone."""
    db, lead = env["db"], env["lead"]
    item = qr.list_items(db, env["cid"])[0]
    q = qr.paper_of(item).questions[1]
    evidence = {"people": 3, "letters": "C×3", "solver": "vlm-x", "solver_letter": "C", "key": q.answer,
                "why": "people and the solver agree on another letter than the key"}
    qr.send_back(db, lead, review_data.DATASET, item["paper_id"], q.id, "the key looks wrong", evidence)
    at = run_as(ADMIN_PAGE, lead, qra_campaign=env["cid"])
    assert not at.exception
    assert any("the key looks wrong" in m.value for m in at.markdown)
    button(at, "Review it in this campaign").click().run()
    assert not at.exception and any("in this campaign now" in s.value for s in at.success)
    (sent,) = qr.sendbacks(db, campaign_id=env["cid"])
    assert sent["state"] == "waiting"
    reviewer = next(r for r in env["reviewers"] if r["id"] == item["reviewer_id"])
    at = run_as(PAGE, reviewer, qr_item=item["id"])
    assert not at.exception
    (shown,) = [w.value for w in at.warning if "Sent back to review" in w.value]
    assert "the key looks wrong" in shown and "people chose C×3" in shown and "vlm-x chose C" in shown
    at = run_as(ADMIN_PAGE, lead, qra_campaign=env["cid"])
    button(at, "Withdraw").click().run()
    assert qr.sendbacks(db) == []
    at = run_as(PAGE, reviewer, qr_item=item["id"])
    assert not [w for w in at.warning if "Sent back to review" in w.value]


def test_lead_archives_brings_back_and_copies_a_campaign(env):
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    at = run_as(ADMIN_PAGE, lead, qra_campaign=env["cid"])
    button(at, "Archive the campaign").click().run()
    assert not at.exception and qr.campaign(db, env["cid"])["archived_at"] is not None
    assert any(s.value.startswith("Archived: hidden from its reviewers") for s in at.success)
    assert any("This campaign is archived" in i.value for i in at.info)
    assert at.toggle(key="qra_show_archived").value is True  # still chosen, shown as archived
    assert at.selectbox(key="qra_campaign").value == env["cid"]
    # the reviewer no longer sees it
    reviewer = run_as(PAGE, r1)
    assert "No AIBench review campaign has papers for you" in reviewer.info[0].value
    # the lead's list hides it unless asked: a fresh session sees no campaign to choose
    fresh = run_as(ADMIN_PAGE, lead)
    assert any("Every review campaign is archived" in i.value for i in fresh.info)
    button(at, "Bring back from the archive").click().run()
    assert not at.exception and qr.campaign(db, env["cid"])["archived_at"] is None
    # the copy form: the reviewers of the source are chosen already
    assert sorted(at.multiselect(key=f"qra_copy_people_{env['cid']}").value) == sorted([r1["id"], r2["id"]])
    at.text_input(key=f"qra_copy_name_{env['cid']}").set_value("Pilot")
    button(at, "Create the copy").click().run()
    assert any("No copy was made" in e.value and "exists already" in e.value for e in at.error)
    at.text_input(key=f"qra_copy_name_{env['cid']}").set_value("Pilot again")
    button(at, "Create the copy").click().run()
    assert not at.exception and any("created as a copy" in s.value for s in at.success)
    copy = next(c for c in qr.list_campaigns(db) if c["name"] == "Pilot again")
    assert at.selectbox(key="qra_campaign").value == copy["id"]
    assert len(qr.list_items(db, copy["id"])) == len(qr.list_items(db, env["cid"]))
    history = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert list(history["action"]) == ["qreview.copy"] and list(history["by"]) == ["lead"]
    at.selectbox(key="qra_campaign").set_value(env["cid"]).run()
    history = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert list(history["action"]) == ["qreview.unarchive", "qreview.archive", "qreview.create"]
