"""The lead's Crowd section of a study on the Studies page (issue 45): codes, addresses, time budget,
time-out and bonus; places a time-out frees; the consent and questionnaire editors; the payment table and its downloads."""

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from structext_core.studio.crowd import consent, links, questionnaire, settings
from tests.pages.light_parts import notes
from tests.studio.study.support import answer_of

PAGE = Path(__file__).resolve().parents[2] / "pages" / "study_admin.py"


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"))}


@pytest.fixture
def study_id(db, people):
    samples = [suites.generate_sample(task_id, 1, 1, suite="test-hard", index=i)
               for task_id in range(1, 7) for i in range(2)]
    return structext_study.create_study(db, name="pilot", suite="test-hard", samples=samples, n_items=2,
                                        annotator_ids=[people["ann1"]["id"]])


def open_crowd(user, payments_open=False) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["user"] = user
    at.session_state["sa_section"] = "Crowd"
    at.session_state["crowd_open_payments"] = payments_open  # the table of each person's bonus: a lazy expander
    return at.run()


def widget(widgets, label):
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{label!r}: {[w.label for w in widgets]}"
    return found[0]


def click(at, label) -> AppTest:
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}; buttons: {[b.label for b in at.button]}"
    return found[0].click().run()


def test_the_crowd_section_is_the_lead_s_only(db, people, study_id):
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["user"] = people["ann1"]
    at.session_state["sa_section"] = "Crowd"
    at.run()
    assert "admins only" in notes(at, "error")[0].value and not at.text_input


def test_the_lead_sets_codes_addresses_budget_and_bonus(db, people, study_id):
    at = open_crowd(people["lead"])
    assert not at.exception
    widget(at.text_input, "Completed: code").input("C0MPL3TE")
    widget(at.text_input, "Completed: address").input("https://app.prolific.com/submissions/complete?cc=C0MPL3TE")
    widget(at.number_input, "Time budget per person (minutes of active time; empty: none)").set_value(30)
    widget(at.number_input, "Time-out for people from a study link (minutes after they arrive; empty: none)").set_value(45)
    widget(at.number_input, "Bonus per correct answer").set_value(0.25)
    widget(at.number_input, "Bonus cap (empty: none)").set_value(2)
    widget(at.selectbox, "Currency").select("USD")
    at = click(at, "Save the settings")
    assert not at.exception and "The crowd settings are saved." in notes(at, "success")[0].value
    saved = settings.crowd_settings(db, study_id)
    assert (saved.completion_code, saved.completion_url, saved.time_budget_seconds, saved.timeout_seconds,
            saved.bonus_per_correct, saved.bonus_cap, saved.currency) == (
        "C0MPL3TE", "https://app.prolific.com/submissions/complete?cc=C0MPL3TE", 1800, 2700, 0.25, 2, "USD")
    at = open_crowd(people["lead"])  # shown as saved, in minutes
    assert widget(at.number_input, "Time-out for people from a study link (minutes after they arrive; "
                                   "empty: none)").value == 45


def test_a_person_past_the_time_out_frees_their_place_when_the_lead_looks(db, people, study_id):
    made = links.create_link(db, study_id, places=3, expires_at=None, id_param="PROLIFIC_PID", by=people["lead"]["id"])
    links.enrol(db, made.token, {"PROLIFIC_PID": "pid-1"}, now=time.time() - 3600)
    links.enrol(db, made.token, {"PROLIFIC_PID": "pid-2"})
    at = open_crowd(people["lead"])
    assert "**2 of 3 places filled** · open" in " ".join(m.value for m in at.markdown)  # no time-out set yet
    settings.save_settings(db, study_id, people["lead"]["id"], timeout_seconds=1800)
    at = AppTest.from_file(str(PAGE), default_timeout=60)  # the study's dashboard, first
    at.session_state["user"] = people["lead"]
    at.run()
    assert [i.value for i in notes(at, "info") if "time-out" in i.value] == [
        "1 person from a study link passed the time-out before finishing: timed out, their place reopened."]
    at.run()  # recorded once: not said again
    assert not [i.value for i in notes(at, "info") if "time-out" in i.value]
    at = open_crowd(people["lead"])
    shown = " ".join(m.value for m in at.markdown)
    assert "**1 of 3 places filled** (1 more timed out: their place reopened) · open" in shown, shown
    assert [row[0] for row in db.execute("SELECT outcome FROM study_annotators sa JOIN participants p"
                                         " USING (study_id, user_id) ORDER BY p.enrolled_at")] == ["timed_out", None]


def test_a_bad_address_is_refused_and_nothing_is_saved(db, people, study_id):
    at = open_crowd(people["lead"])
    widget(at.text_input, "Completed: code").input("C0MPL3TE")
    widget(at.text_input, "Screened out: address").input("javascript:alert(1)")
    at = click(at, "Save the settings")
    assert "Nothing was saved. screenout url must be a web address" in notes(at, "error")[0].value
    assert settings.crowd_settings(db, study_id).completion_code is None


def test_the_lead_writes_the_consent_and_a_change_is_a_new_version(db, people, study_id):
    at = open_crowd(people["lead"])
    widget(at.text_area, "Consent text (Markdown)").input("## Consent\n\nYou agree.")
    at = click(at, "Save the consent text")
    assert not at.exception and "Consent text version 1 is in force." in notes(at, "success")[0].value
    assert "people already answering keep the version they accepted" in " ".join(c.value for c in notes(at, "caption"))
    at = click(at, "Save the consent text")  # unchanged
    assert "unchanged: version 1 stays in force" in notes(at, "info")[0].value
    widget(at.text_area, "Consent text (Markdown)").input("## Consent\n\nYou agree, again.")
    at = click(at, "Save the consent text")
    assert "Consent text version 2 is in force." in notes(at, "success")[0].value
    assert consent.current_consent(db, study_id).text == "## Consent\n\nYou agree, again."


def test_an_empty_consent_is_refused(db, people, study_id):
    at = open_crowd(people["lead"])
    widget(at.text_area, "Consent text (Markdown)").input("   ")
    at = click(at, "Save the consent text")
    assert "The consent text was not saved. The consent text is empty" in notes(at, "error")[0].value
    assert consent.current_consent(db, study_id) is None


def add_question(at, name, label, kind, options="", low="", high="", required=True) -> AppTest:
    widget(at.text_input, "Name (the column in exports)").input(name)
    widget(at.text_input, "Question").input(label)
    widget(at.selectbox, "Kind of answer").select(kind)
    widget(at.text_area, "Options (a choice: one a line)").input(options)
    widget(at.text_input, "Smallest (a number)").input(low)
    widget(at.text_input, "Largest (a number)").input(high)
    widget(at.checkbox, "Required").set_value(required)
    return click(at, "Add the question")


def test_the_lead_builds_the_questionnaire(db, people, study_id):
    at = add_question(open_crowd(people["lead"]), "expertise", "How expert are you?", "choice",
                      options="novice\nsome\nexpert")
    assert not at.exception and "Question expertise added." in notes(at, "success")[0].value
    assert widget(at.text_input, "Name (the column in exports)").value == ""  # a fresh form for the next one
    at = add_question(at, "years", "Years of experience", "number", low="0", high="60", required=False)
    fields = questionnaire.questionnaire(db, study_id)
    assert [(f["name"], f["kind"], f["required"]) for f in fields] == [("expertise", "choice", True),
                                                                       ("years", "number", False)]
    assert fields[0]["options"] == ["novice", "some", "expert"] and (fields[1]["min"], fields[1]["max"]) == (0, 60)
    table = next(d.value for d in at.dataframe if "question" in d.value.columns)
    assert table["answers"].tolist() == ["novice / some / expert", "0 to 60"]
    at = widget(at.selectbox, "Question to remove").select("expertise").run()  # the button is enabled by the choice
    at = click(at, "Remove")
    assert "Question expertise removed; answers already given to it are kept." in notes(at, "success")[0].value
    assert [f["name"] for f in questionnaire.questionnaire(db, study_id)] == ["years"]


@pytest.mark.parametrize("name, label, kind, options, message", [
    ("Years", "Years?", "number", "", "is not usable"),
    ("expertise", "How expert?", "choice", "just one", "a choice needs 2 to 30 options"),
    ("years", "", "number", "", "the question is empty"),
])
def test_a_question_that_cannot_be_kept_says_why(db, people, study_id, name, label, kind, options, message):
    at = add_question(open_crowd(people["lead"]), name, label, kind, options=options)
    assert "The question was not added." in notes(at, "error")[0].value and message in notes(at, "error")[0].value
    assert widget(at.text_input, "Name (the column in exports)").value == name  # kept as typed, to fix
    assert questionnaire.questionnaire(db, study_id) == []


def test_payments_are_listed_with_their_downloads(db, people, study_id):
    settings.save_settings(db, study_id, people["lead"]["id"], bonus_per_correct=0.5)
    user_id = people["ann1"]["id"]
    study.accept_rule(db, study_id, user_id)
    view = study.open_question(db, study_id, user_id)
    study.submit_answer(db, user_id, view.assignment_id, answer_of(db, view.assignment_id))
    at = open_crowd(people["lead"], payments_open=True)
    assert [e.label for e in at.expander if e.label.startswith("Each person's minutes")]
    table = next(d.value for d in at.dataframe if "bonus" in d.value.columns)
    assert table[["external_id", "status", "answers", "correct", "bonus"]].values.tolist() == \
        [["ann1", "answering", 1, 1, 0.5]]
    assert "response" not in table.columns and "answer" not in table.columns
    downloads = [e.proto.label for e in at.get("download_button")]
    assert downloads[-2:] == ["Payments (CSV)", "Bonus lines (id,amount)"]
