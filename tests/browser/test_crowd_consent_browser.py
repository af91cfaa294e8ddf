"""A participant's visit in a real browser (issue 45): consent, the questionnaire, the rule, the
questions, and the end screen with the completion code that sends them back to the platform's
address after a few seconds (a stub address on the app's own server: the page asks no other host)."""

from __future__ import annotations

import pytest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage
from structext_core.studio.crowd import consent, questionnaire, settings
from structext_core.ui import crowd_end
from tests.browser.test_human_journey import go_to, log_in

PARTICIPANT, PASSWORD = "crowd-p1", "participant-pw-1"


@pytest.fixture(scope="module")
def crowd_study(app_env, app_server):
    db = storage.open_db(app_env["db_path"])
    person = accounts.create_user(db, PARTICIPANT, PASSWORD, "annotator")
    lead = accounts.get_user(db, app_env["admin_user"])  # made by the server at its start
    lead_id = lead["id"] if lead else None
    samples = [suites.generate_sample(task_id, 1, 1, suite="test-hard", index=i) for task_id in (5, 6) for i in range(2)]
    study_id = structext_study.create_study(db, name="crowd-pilot", suite="test-hard", samples=samples, n_items=2,
                                            annotator_ids=[person["id"]], rule_text="No tools. No web.")
    consent.set_consent(db, study_id, "## Taking part\n\nYou answer **on your own**. <b>not bold</b>", by=lead_id)
    questionnaire.set_questionnaire(db, study_id, [{"name": "expertise", "label": "How expert are you?",
                                                    "kind": "choice", "options": ["novice", "some", "expert"]}],
                                    by=lead_id)
    settings.save_settings(db, study_id, lead_id, completion_code="C0MPL3TE",
                           completion_url=f"{app_server}/_stcore/health?cc=C0MPL3TE")
    db.close()
    return study_id


@pytest.mark.browser
def test_a_participant_consents_answers_and_is_sent_back_with_the_code(app_server, app_env, crowd_study, page,
                                                                        wait_for_app, screenshot):
    log_in(page, app_server, PARTICIPANT, PASSWORD, wait_for_app)
    go_to(page, "Human baseline", wait_for_app)
    page.get_by_text("Before you start: consent to take part in crowd-pilot").wait_for()
    assert page.get_by_text("<b>not bold</b>").count() == 1  # HTML shown as text
    assert page.get_by_role("button", name="I have read the rule: start").count() == 0
    screenshot(page, "crowd-1-consent")
    page.get_by_role("button", name="I agree: continue").click()

    page.get_by_text("A few questions about you").wait_for()
    wait_for_app(page)
    page.get_by_role("button", name="Continue").click()
    page.get_by_text("it is required").wait_for()  # nothing chosen yet
    page.get_by_text("expert", exact=True).click()
    screenshot(page, "crowd-2-questionnaire")
    page.get_by_role("button", name="Continue").click()

    page.get_by_role("button", name="I have read the rule: start").click()
    for number in (1, 2):
        answer = page.get_by_label("Your answer")
        answer.wait_for()
        wait_for_app(page)
        page.get_by_text(f"Question {number} of 2").wait_for()
        answer.fill(f"answer {number}")
        page.get_by_role("button", name="Submit answer").click()

    page.get_by_text("You have finished the study. Thank you!").wait_for()
    assert page.get_by_test_id("stMetricValue").inner_text() == "C0MPL3TE"
    assert page.get_by_role("link", name=crowd_end.RETURN_LABEL).get_attribute("href") == \
        f"{app_server}/_stcore/health?cc=C0MPL3TE"
    screenshot(page, "crowd-3-end")
    page.wait_for_url(f"{app_server}/_stcore/health?cc=C0MPL3TE", timeout=(crowd_end.REDIRECT_SECONDS + 10) * 1000)
    db = storage.open_db(app_env["db_path"])
    row = db.execute("SELECT consent_version, questionnaire_at, outcome FROM study_annotators WHERE study_id = ?",
                     [crowd_study]).fetchone()
    assert row[0] == 1 and row[1] is not None and row[2] == "completed"
    assert questionnaire.answers_of(db, crowd_study, db.execute("SELECT id FROM users WHERE username = ?",
                                                                [PARTICIPANT]).fetchone()[0]) == {"expertise": "expert"}
