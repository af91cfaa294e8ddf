"""The study lead's day in a real browser: practice round, a gold item, a flag, an override.

A study of two questions with one practice question and one gold question is set up in the
database (the set-up form has its own AppTests). The annotator logs in, accepts the rule,
answers the practice question and sees its feedback (their score and the answer key, shown
only once they can no longer answer it), then answers the study's questions, the gold one
among them without knowing which; on the first one they report a problem while text typed
in the answer box is not yet saved, and the text survives. The lead then finds the flag and
the responses on the Adjudication page, overrides one score with a reason, and downloads the
study's responses: the CSV carries the override beside the automatic score.
Screenshots: tests/screenshots/lead-*.png.
"""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from structext_core.structext_eval import samples, suites
from structext_core.structext_eval import study as structext_study
from structext_core.studio import accounts, storage, study
from tests.browser.conftest import click_until
from tests.browser.test_human_journey import go_to, log_in, recorded_tab, sidebar

pytestmark = pytest.mark.browser

ANNOTATOR, ANNOTATOR_PASSWORD = "ann-lead", "annotator-pw-2"
STUDY = "lead-study"
REASON = "right in substance, quoted the whole element"


@pytest.fixture(scope="module")
def lead_study(app_env):
    rows = [suites.generate_sample(task_id, depth, 1, suite="lead", index=index)
            for index, (task_id, depth) in enumerate([(t, d) for t in (5, 6, 7, 9, 19, 21, 22, 24) for d in (1, 2)])]
    samples.write_jsonl(app_env["data_dir"] / "lead.jsonl", rows)
    db = storage.open_db(app_env["db_path"])
    annotator = accounts.create_user(db, ANNOTATOR, ANNOTATOR_PASSWORD, "annotator")
    study_id = structext_study.create_study(db, name=STUDY, suite="lead", samples=rows, n_items=2,
                                  annotator_ids=[annotator["id"]], practice_items=1, gold_items=1, seed=3)
    kinds = dict(db.execute("SELECT sample_id, kind FROM study_items WHERE study_id = ?", [study_id]).fetchall())
    assert sorted(kinds.values()) == ["gold", "practice", "study", "study"]
    answers = {row["id"]: str(row["answer"]) for row in rows}
    return {"id": study_id, "kinds": kinds, "answers": answers}


def test_practice_gold_flag_override_and_export(app_server, app_env, lead_study, page, browser, wait_for_app,
                                                screenshot):
    annotator, tab, received = recorded_tab(browser)
    try:
        annotator_day(tab, app_server, wait_for_app, screenshot, app_env)
    finally:
        annotator.close()

    db = storage.open_db(app_env["db_path"])
    answered = db.execute(
        "SELECT i.kind, i.sample_id, r.response FROM responses r JOIN study_items i ON i.id = r.item_id"
        " WHERE r.study_id = ? ORDER BY r.id", [lead_study["id"]]).fetchall()
    assert sorted(kind for kind, _, _ in answered) == ["gold", "practice", "study", "study"]
    # The answer keys of the questions still to answer never reached the browser; the
    # practice key did, but only after the practice answer was in.
    everything = b"".join(received)
    for kind, sample_id, _ in answered:
        key = lead_study["answers"][sample_id].encode()
        if kind != "practice" and len(key) >= 12:
            assert key not in everything, sample_id
    flags = study.flags(db, lead_study["id"])
    assert len(flags) == 1 and flags[0].kind == "unclear" and "two readings" in flags[0].note

    lead_day(page, app_server, app_env, wait_for_app, screenshot)

    overridden = db.execute(
        "SELECT o.score, o.reason FROM score_overrides o JOIN responses r ON r.id = o.response_id"
        " WHERE r.study_id = ?", [lead_study["id"]]).fetchall()
    assert overridden == [(1.0, REASON)]


def annotator_day(tab, base_url, wait_for_app, screenshot, app_env):
    log_in(tab, base_url, ANNOTATOR, ANNOTATOR_PASSWORD, wait_for_app)
    go_to(tab, "Human baseline", wait_for_app)
    tab.get_by_text("1 practice questions").or_(tab.get_by_text("practice question")).first.wait_for()
    screenshot(tab, "lead-1-rule-with-practice")
    tab.get_by_role("button", name="I have read the rule: start").click()

    # The practice question, then its feedback with the answer key.
    tab.get_by_text("Practice question").first.wait_for()
    wait_for_app(tab)
    tab.get_by_label("Your answer").fill("my practice answer")
    tab.get_by_role("button", name="Submit answer").click()
    tab.get_by_text("how you did").wait_for()
    wait_for_app(tab)
    screenshot(tab, "lead-2-practice-feedback")
    assert tab.get_by_text("my practice answer").count() >= 1
    tab.get_by_role("button", name="Start the study").click()

    # Question 1: type, do not submit, report a problem; the typed text stays.
    tab.get_by_text("Question 1 of").first.wait_for()
    wait_for_app(tab)
    answer = tab.get_by_label("Your answer")
    answer.fill("typed before the report")
    tab.get_by_text("Report a problem with this question").click()
    kind = tab.get_by_role("combobox", name="What is wrong")
    kind.wait_for()
    wait_for_app(tab)
    unclear = tab.get_by_role("option", name="Unclear: the question can be read more than one way")
    for _ in range(3):  # a rerun of the page (the draft being saved) may close the menu as it opens
        kind.click()
        try:
            unclear.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:  # open the menu again
            wait_for_app(tab)
    unclear.click()
    tab.get_by_label("Note for the study lead (optional)").fill("two readings of 'child'")
    said = tab.get_by_text("sent").or_(tab.get_by_text("Thank")).first
    for _ in range(3):  # under load a click on the form while a rerun redraws it (the draft saved) can be lost
        tab.get_by_role("button", name="Send report").click()
        try:
            said.wait_for(timeout=15_000)
            break
        except PlaywrightTimeout:
            wait_for_app(tab)
            sent = storage.open_db(app_env["db_path"]).execute("SELECT COUNT(*) FROM study_flags").fetchone()[0]
            assert not sent, "the report was stored, and the annotator was not told it was sent"
    said.wait_for()
    wait_for_app(tab)
    screenshot(tab, "lead-3-flag-sent")
    assert tab.get_by_label("Your answer").input_value() == "typed before the report"
    tab.get_by_role("button", name="Submit answer").click()

    for number in (2, 3):  # the second study question and the gold one, in the annotator's order
        tab.get_by_text(f"Question {number} of").first.wait_for()
        wait_for_app(tab)
        tab.get_by_label("Your answer").fill(f"answer {number}")
        tab.get_by_role("button", name="Submit answer").click()
    tab.get_by_text("You have answered all").first.wait_for()
    wait_for_app(tab)
    screenshot(tab, "lead-4-finished")
    sidebar(tab).get_by_role("link", name="Log out").click()


def lead_day(page, base_url, app_env, wait_for_app, screenshot):
    log_in(page, base_url, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to(page, "Adjudication", wait_for_app)
    page.get_by_text("Flags on this question").first.wait_for()
    wait_for_app(page)
    # The question chooser says which question holds an open flag.
    chooser = page.get_by_role("combobox", name="Question")
    flagged = chooser.locator("option").filter(has_text="1 open flag")
    assert flagged.count() == 1
    chooser.select_option(value=flagged.get_attribute("value"))
    wait_for_app(page)
    page.get_by_text("two readings of 'child'").wait_for()
    screenshot(page, "lead-5-adjudication-flag")

    # the override form of the first answer (chosen in the box), drawn once its box is open: the closed
    # box's header clicked again if a run mounting it lost the click
    form = page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name="Override the score")).first
    click_until(page, page.get_by_role("button", name="Change a score", exact=True), form)
    wait_for_app(page)
    form.get_by_text("Correct (score 1)").click()
    form.get_by_label("Reason").fill(REASON)
    form.get_by_role("button", name="Override the score").click()
    page.get_by_text(REASON).first.wait_for()
    wait_for_app(page)
    screenshot(page, "lead-6-override")

    go_to(page, "Studies", wait_for_app)
    page.get_by_role("tab", name="Export").click()
    page.get_by_role("button", name="Responses (CSV)").wait_for()
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Responses (CSV)").click()
    text = download_info.value.path().read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    overridden = [row for row in rows if row.get("override_reason") == REASON]
    assert len(overridden) == 1, rows
    row = overridden[0]
    assert float(row["score"]) == 1.0 and row["override_by"] == app_env["admin_user"]
    assert row["score_auto"] != "" and float(row["score_override"]) == 1.0
    screenshot(page, "lead-7-export")
