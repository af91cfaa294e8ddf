"""The annotator's page before and after a study's questions (issue 45): consent accepted or declined,
the questionnaire and its messages, the end screen with its code and the way back to the platform."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from structext_core.studio.crowd import consent, outcomes, questionnaire, settings
from structext_core.ui import crowd_end
from tests.pages.answer_boxes import answer_boxes
from tests.pages.html_tables import html_figures
from tests.studio.study.support import answer_of

PAGE = Path(__file__).resolve().parents[2] / "pages" / "human_baseline.py"
RULE_BUTTON = "I have read the rule: start"
CODES = {"completion_code": "C0MPL3TE", "completion_url": "https://platform.example/done?cc=C0MPL3TE",
         "no_consent_code": "N0C0NSENT", "no_consent_url": "https://platform.example/no-consent"}
EXPERTISE = {"name": "expertise", "label": "How expert are you?", "kind": "choice",
             "options": ["novice", "some", "expert"]}
YEARS = {"name": "years", "label": "Years of experience", "kind": "number", "min": 0, "max": 60}


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    return storage.open_db()


@pytest.fixture
def people(db):
    return {"ann1": accounts.create_user(db, "ann1", "password-123", "annotator"),
            "lead": accounts.create_user(db, "lead", "password-123", "admin")}


@pytest.fixture
def study_id(db, people):
    samples = [suites.generate_sample(task_id, 1, 1, suite="test-hard", index=i)
               for task_id in range(1, 7) for i in range(2)]
    made = structext_study.create_study(db, name="pilot", suite="test-hard", samples=samples, n_items=2,
                                        annotator_ids=[people["ann1"]["id"]], rule_text="No tools. No web.")
    settings.save_settings(db, made, people["lead"]["id"], **CODES)
    return made


def open_page(user) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.session_state["user"] = user
    return at.run()


def labels(at):
    return [b.label for b in at.button]


def click(at, label) -> AppTest:
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}; buttons: {labels(at)}"
    return found[0].click().run()


def person(db, study_id, user_id):
    return db.execute("SELECT consent_version, consent_at, declined_at, questionnaire_at, outcome, rule_accepted_at"
                      " FROM study_annotators WHERE study_id = ? AND user_id = ?", [study_id, user_id]).fetchone()


def redirects(at) -> list[dict]:
    import json
    return [json.loads(e.proto.json) for e in at.get("bidi_component") if "crowd_redirect" in e.proto.component_name]


def test_consent_comes_first_rendered_safely_and_accepting_leads_to_the_rule(db, people, study_id):
    consent.set_consent(db, study_id, "## Taking part\n\nYou **agree**. <b>bold</b> <img src=x onerror=alert(1)>",
                        by=people["lead"]["id"])
    at = open_page(people["ann1"])
    assert not at.exception
    shown = next(m for m in at.markdown if "Taking part" in m.value)
    assert shown.value == "## Taking part\n\nYou **agree**. \\<b>bold\\</b> \\<img src=x onerror=alert(1)>"
    assert not shown.proto.allow_html  # Markdown, with HTML shown as text (escaped), never run
    assert RULE_BUTTON not in labels(at) and not answer_boxes(at)  # no rule, no question before consent
    at = click(at, "I agree: continue")
    assert not at.exception
    assert RULE_BUTTON in labels(at)
    row = person(db, study_id, people["ann1"]["id"])
    assert row[0] == 1 and row[1] > 0 and row[5] is None
    at = click(at, RULE_BUTTON)
    assert [box.label for box in answer_boxes(at)] == ["Your answer"]


def test_declining_ends_the_visit_with_the_no_consent_code_and_address(db, people, study_id):
    consent.set_consent(db, study_id, "Consent.", by=people["lead"]["id"])
    at = click(open_page(people["ann1"]), "I do not agree")
    assert "your part in this study ends here" in at.warning[0].value
    at = click(at, "Back to the consent text")
    assert "I agree: continue" in labels(at) and person(db, study_id, people["ann1"]["id"])[2] is None
    at = click(click(at, "I do not agree"), "Yes, I do not agree")
    assert not at.exception
    row = person(db, study_id, people["ann1"]["id"])
    assert row[2] > 0 and row[4] == "declined" and row[0] is None
    assert at.subheader[0].value == "You did not agree to take part"
    assert [m.value for m in html_figures(at)] == ["N0C0NSENT"]
    assert [c.value for c in at.code] == ["N0C0NSENT"]
    assert redirects(at)[0]["url"] == "https://platform.example/no-consent"
    again = open_page(people["ann1"])  # a later visit: the same end, no way back in
    assert [m.value for m in html_figures(again)] == ["N0C0NSENT"] and RULE_BUTTON not in labels(again)


def test_the_questionnaire_says_what_is_missing_and_keeps_the_answers(db, people, study_id):
    questionnaire.set_questionnaire(db, study_id, [EXPERTISE, YEARS], by=people["lead"]["id"])
    at = open_page(people["ann1"])
    assert RULE_BUTTON not in labels(at)
    at.radio[0].set_value("expert")
    at = at.button[0].click().run()  # Continue, the years left empty
    assert not at.exception
    assert "Please answer “Years of experience”: it is required." in at.error[0].value
    assert questionnaire.answers_of(db, study_id, people["ann1"]["id"]) == {}
    at.number_input[0].set_value(12)
    at = at.button[0].click().run()
    assert not at.exception and RULE_BUTTON in labels(at)
    assert questionnaire.answers_of(db, study_id, people["ann1"]["id"]) == {"expertise": "expert", "years": "12"}


def test_consent_then_questionnaire_then_rule(db, people, study_id):
    consent.set_consent(db, study_id, "Consent.", by=people["lead"]["id"])
    questionnaire.set_questionnaire(db, study_id, [EXPERTISE], by=people["lead"]["id"])
    at = click(open_page(people["ann1"]), "I agree: continue")
    assert [r.label for r in at.radio] == ["How expert are you?"]
    at.radio[0].set_value("some")
    at = at.button[0].click().run()
    assert RULE_BUTTON in labels(at)


def answer_all(db, study_id, user_id):
    study.accept_rule(db, study_id, user_id)
    while (view := study.open_question(db, study_id, user_id)) is not None:
        study.submit_answer(db, user_id, view.assignment_id, answer_of(db, view.assignment_id))


def test_the_end_screen_shows_the_code_and_sends_back_to_the_platform(db, people, study_id):
    answer_all(db, study_id, people["ann1"]["id"])
    at = open_page(people["ann1"])
    assert not at.exception
    assert at.subheader[0].value == "You have finished the study. Thank you!"
    assert [(m.label, m.value) for m in html_figures(at)] == [("Your completion code", "C0MPL3TE")]
    assert [c.value for c in at.code] == ["C0MPL3TE"]
    assert redirects(at) == [{"url": "https://platform.example/done?cc=C0MPL3TE",
                              "seconds": crowd_end.REDIRECT_SECONDS}]
    assert person(db, study_id, people["ann1"]["id"])[4] == "completed"


def test_time_is_up_says_so_and_no_address_means_close_the_tab(db, people, study_id):
    settings.save_settings(db, study_id, people["lead"]["id"], completion_url=None, time_budget_seconds=1)
    user_id = people["ann1"]["id"]
    study.accept_rule(db, study_id, user_id)
    view = study.open_question(db, study_id, user_id, at=1000.0)
    study.heartbeat(db, user_id, view.assignment_id, None, at=1004.0)
    study.submit_answer(db, user_id, view.assignment_id, "x", at=1005.0)
    at = open_page(people["ann1"])
    assert at.subheader[0].value == "Time is up. Thank you!"
    assert [m.value for m in html_figures(at)] == ["C0MPL3TE"] and not redirects(at)
    assert "Enter the code on the study platform" in at.info[0].value
    assert outcomes.end_state(db, study_id, user_id).reason == "time_up"


def test_a_plain_study_finished_keeps_its_own_screen_and_records_the_outcome(db, people, study_id):
    settings.save_settings(db, study_id, people["lead"]["id"], completion_code=None, completion_url=None)
    answer_all(db, study_id, people["ann1"]["id"])
    at = open_page(people["ann1"])
    assert "You have answered all 2 study questions of pilot" in at.success[0].value
    assert not html_figures(at)
    assert person(db, study_id, people["ann1"]["id"])[4] == "completed"


def test_screened_out_by_gold_gets_the_screen_out_code(db, people):
    samples = [suites.generate_sample(task_id, 1, 1, suite="test-hard", index=i)
               for task_id in range(1, 9) for i in range(2)]
    study_id = structext_study.create_study(db, name="gold", suite="test-hard", samples=samples, n_items=2,
                                            annotator_ids=[people["ann1"]["id"]], gold_items=1)
    settings.save_settings(db, study_id, people["lead"]["id"], screenout_code="SCR33N")
    user_id = people["ann1"]["id"]
    study.accept_rule(db, study_id, user_id)
    while outcomes.gold_standing(db, study_id, user_id)[1] == 0:  # answer wrong until the gold one is answered
        view = study.open_question(db, study_id, user_id)
        study.submit_answer(db, user_id, view.assignment_id, "zzz nothing alike")
    at = open_page(people["ann1"])
    assert at.subheader[0].value == "Thank you for your time"
    assert [(m.label, m.value) for m in html_figures(at)] == [("Your code", "SCR33N")]
    assert not answer_boxes(at) and not redirects(at)  # no question; no address, so no redirect
    assert person(db, study_id, user_id)[4] == "screened_out"


def test_a_person_from_a_link_sees_the_time_left_then_the_time_out(db, people, study_id):
    from structext_core.studio.crowd import links

    settings.save_settings(db, study_id, people["lead"]["id"], timeout_seconds=1800)
    made = links.create_link(db, study_id, places=5, expires_at=None, id_param=None, by=people["lead"]["id"])
    arrived = links.enrol(db, made.token, {}).user
    user_id = arrived["id"]
    study.accept_rule(db, study_id, user_id)
    at = open_page(arrived)
    assert not at.exception and answer_boxes(at)  # a question, and under it how long is left
    left = [c.value for c in at.caption if c.value.startswith("Time left in this study")]
    assert len(left) == 1 and "about 30 minutes (until" in left[0] and "your place goes to someone else" in left[0]
    assert not at.warning
    db.execute("UPDATE participants SET enrolled_at = enrolled_at - 1560 WHERE user_id = ?", [user_id])
    db.conn.commit()
    at = open_page(arrived)  # 4 minutes left: a warning
    assert [w.value for w in at.warning if "Time left" in w.value][0].startswith("Time left in this study: about 4 minutes")
    db.execute("UPDATE participants SET enrolled_at = enrolled_at - 300 WHERE user_id = ?", [user_id])
    db.conn.commit()
    at = open_page(arrived)
    assert at.subheader[0].value == "Your time in this study has run out" and not answer_boxes(at) and not html_figures(at)
    assert "your place went to someone else" in " ".join(m.value for m in at.markdown)
    assert person(db, study_id, user_id)[4] == "timed_out"
