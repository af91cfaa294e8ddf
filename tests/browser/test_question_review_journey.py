"""The AIBench question-review journey in a real browser.

A stored synthetic set of one paper, reviewed twice (rev1 and rev2; rev2 has submitted: accept
all). rev1 opens the paper, accepts most questions, edits a level-2 question (first with an
answer the logic graph disagrees with: the warning shows; then back), removes one with a reason,
adds one, and submits. The lead approves both reviews, adjudicates the disagreements and
exports; the export re-imports as an AIBench data set. Screenshots: tests/screenshots/qreview-*.png.
"""
from __future__ import annotations

import pytest

from structext_core.aibench import dataset, images
from structext_core.aibench import question_review as qr
from structext_core.aibench.model import INSUFFICIENT, LETTERS
from structext_core.studio import accounts, storage
from tests.aibench import review_data
from tests.browser.conftest import pick_option
from tests.browser.test_clock_browser import wait_until
from tests.browser.test_results_views import no_exception, settle, shoot
from tests.browser.test_rewrite_journey import go_to, log_in

pytestmark = pytest.mark.browser
REVIEWER, PASSWORD = "rev1", "reviewer-pw-1"


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    from structext_core.aibench import config as aibench_config

    root = tmp_path_factory.mktemp("qreview")
    app_env["env"][aibench_config.DIR_ENV] = str(root / "aibench")
    app_env["exports"] = root / "exports"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(aibench_config.DIR_ENV, str(root / "aibench"))
        review_data.stored_set(root, papers=1)
        db = storage.open_db(app_env["db_path"])
        lead = accounts.create_user(db, "qlead", "lead-password-1", "admin")
        rev1 = accounts.create_user(db, REVIEWER, PASSWORD, "annotator")
        rev2 = accounts.create_user(db, "rev2", "password-2", "annotator")
        cid = qr.create_campaign(db, "Review journey", review_data.DATASET, [rev1["id"], rev2["id"]], lead,
                                 double_share=1.0)
        other = next(i for i in qr.list_items(db, cid) if i["reviewer_id"] == rev2["id"])
        for q in qr.paper_of(other).questions:
            qr.save_decision(db, other["id"], rev2, q.id, "accept")
        qr.submit(db, other["id"], rev2)
        app_env["paper"] = qr.paper_of(other)
        app_env["cid"] = cid
        app_env["aibench_root"] = root / "aibench"
    return app_env


def card(page, question_id):
    return page.get_by_test_id("stVerticalBlock").filter(
        has=page.get_by_text(f"{question_id} · level", exact=False)).last


def pick(page, wait_for_app, scope, label, option):
    pick_option(page, scope.get_by_label(label, exact=True), page.get_by_role("option", name=option, exact=True))
    settle(page, wait_for_app)


def review_status(app_env, reviewer) -> str:
    db = storage.open_db(app_env["db_path"])
    try:
        return next(item["status"] for item in qr.list_items(db, app_env["cid"]) if item["reviewer"] == reviewer)
    finally:
        db.close()


def approve(page, wait_for_app, app_env, reviewer):
    """Approve ``reviewer``'s submitted paper: open its card if it is closed, press Approve, and
    wait for the database (not the page's "Approved.", which may still be on screen from the other
    approval). A click that a rerun swallowed, on a busy machine, is tried again, twice at most."""
    paper = app_env["paper"]
    for _ in range(3):
        settle(page, wait_for_app)
        if review_status(app_env, reviewer) == "approved":
            return
        box = page.locator('[data-testid="stExpander"]').filter(has_text=f"{paper.id} · {reviewer}")
        button = box.get_by_role("button", name="Approve")
        if not button.is_visible():
            box.locator("summary").click()
        button.click()
        try:
            wait_until(lambda: review_status(app_env, reviewer) == "approved", 20, "")
        except AssertionError:
            continue
        return
    raise AssertionError(f"the approval of {reviewer}'s review was not stored")


def commit_text(page, wait_for_app, box, value):
    box.fill(value)
    box.press("Tab")
    settle(page, wait_for_app)


def test_reviewer_reviews_a_paper_then_the_lead_adjudicates_and_exports(page, app_server, app_env, wait_for_app,
                                                                        screenshot, tmp_path):
    paper = app_env["paper"]
    q_edit = next(q for q in paper.questions if q.level == 2)
    q_remove = paper.questions[0]
    log_in(page, app_server, REVIEWER, PASSWORD, wait_for_app)
    go_to(page, "AIBench question review", wait_for_app)
    page.get_by_role("heading", name="Original figure").wait_for()
    page.locator('[data-testid="stImage"] img').first.wait_for()
    no_exception(page)
    shoot(page, screenshot, "qreview-1-paper")
    for q in paper.questions:
        if q.id in (q_edit.id, q_remove.id):
            continue
        card(page, q.id).get_by_text("Accept", exact=True).click()
        settle(page, wait_for_app)
    # edit: an answer the graph disagrees with shows the warning
    card(page, q_edit.id).get_by_text("Edit", exact=True).click()
    settle(page, wait_for_app)
    wrong = next(L for k, L in enumerate(LETTERS[:len(q_edit.options)])
                 if L != q_edit.answer and q_edit.options[k] != INSUFFICIENT)
    pick(page, wait_for_app, card(page, q_edit.id), "Answer", wrong)
    page.get_by_text("The logic graph answers this question with", exact=False).first.wait_for()
    card(page, q_edit.id).scroll_into_view_if_needed()
    shoot(page, screenshot, "qreview-2-graph-warning")
    pick(page, wait_for_app, card(page, q_edit.id), "Answer", q_edit.answer)
    commit_text(page, wait_for_app, card(page, q_edit.id).get_by_label("Question", exact=True),
                q_edit.question + " (main path)")
    commit_text(page, wait_for_app, card(page, q_edit.id).get_by_label("Reason", exact=True), "clearer wording")
    # remove with a reason
    card(page, q_remove.id).get_by_text("Remove", exact=True).click()
    settle(page, wait_for_app)
    commit_text(page, wait_for_app, card(page, q_remove.id).get_by_label("Reason", exact=True), "label unreadable")
    # add a question
    page.get_by_text("Add a question", exact=True).click()
    form = page.locator('[data-testid="stForm"]').filter(has=page.get_by_role("button", name="Add question"))
    form.get_by_label("Question", exact=True).fill("Which stage runs last?")
    form.get_by_label("Option A", exact=True).fill("Decoding")
    form.get_by_label("Option B", exact=True).fill("Encoding")
    form.get_by_label("Option C", exact=True).fill(INSUFFICIENT)
    level = form.get_by_test_id("stSelectbox").filter(has_text="Level")
    level.click()
    page.keyboard.type("3 Phase")
    page.keyboard.press("Enter")
    form.get_by_label("Reason", exact=True).fill("a harder question")
    form.get_by_role("button", name="Add question").click()
    page.get_by_text("added (a draft until you submit the paper)", exact=False).first.wait_for()
    settle(page, wait_for_app)
    no_exception(page)
    shoot(page, screenshot, "qreview-3-decided")
    submit = page.get_by_role("button", name="Submit paper")
    assert submit.is_enabled()
    submit.click()
    page.get_by_text("Submitted: the review lead will look at it", exact=False).first.wait_for()
    db = storage.open_db(app_env["db_path"])
    mine = next(i for i in qr.list_items(db, app_env["cid"]) if i["reviewer"] == REVIEWER)
    assert mine["status"] == "submitted"
    sub = {d["question_id"]: d for d in qr.latest_submission(db, mine["id"])["decisions"]}
    assert sub[q_remove.id]["action"] == "remove" and sub[q_edit.id]["question"]["question"].endswith("(main path)")
    assert any(d["action"] == "add" for d in sub.values())

    # the lead: approve both, adjudicate, export
    lead_page = page.context.browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    lead_page.set_default_timeout(30_000)
    log_in(lead_page, app_server, "qlead", "lead-password-1", wait_for_app)
    go_to(lead_page, "AIBench review campaigns", wait_for_app)
    lead_page.get_by_role("heading", name="Submitted papers").wait_for()
    for reviewer in ("rev2", REVIEWER):
        approve(lead_page, wait_for_app, app_env, reviewer)
    settle(lead_page, wait_for_app)
    lead_page.get_by_role("heading", name="Disagreements").wait_for()
    shoot(lead_page, screenshot, "qreview-4-lead-disagreements")
    for qid, choice in ((q_remove.id, "Remove it"), (q_edit.id, f"Take {REVIEWER}'s edit")):
        box = lead_page.locator('[data-testid="stExpander"]').filter(has_text=f"{paper.id} {qid} ·")
        box.get_by_text(choice, exact=True).click()
        settle(lead_page, wait_for_app)
        box = lead_page.locator('[data-testid="stExpander"]').filter(has_text=f"{paper.id} {qid} ·")
        commit_text(lead_page, wait_for_app, box.get_by_label("Reason", exact=True), "the reviewer is right")
        box.get_by_role("button", name="Adjudicate").click()
        lead_page.get_by_text(f"{paper.id} {qid} adjudicated.", exact=False).first.wait_for()
        settle(lead_page, wait_for_app)
    folder = tmp_path / "curated"
    commit_text(lead_page, wait_for_app, lead_page.get_by_label("Export folder (new or empty)", exact=True),
                str(folder))
    lead_page.get_by_role("button", name="Export curated set").click()
    lead_page.get_by_text("Exported 1 paper,", exact=False).first.wait_for()
    lead_page.get_by_role("button", name="Download the export (zip)").wait_for()
    no_exception(lead_page)
    shoot(lead_page, screenshot, "qreview-5-lead-exported")
    back = dataset.import_folder(folder, tmp_path / "reimported", images.check_image)
    ids = {q.id for q in back.papers[paper.id].questions}
    assert q_remove.id not in ids and q_edit.id in ids and any(i.startswith(qr.ADDED_PREFIX) for i in ids)
    lead_page.context.close()
