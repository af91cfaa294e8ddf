"""The lead's *Places and people* block on the Studies page (issue 45): k, the cap per person and the
hold time set from the page, the items' coverage and each person's status, with AppTest."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from structext_core.studio.crowd import dealing, settings
from tests.pages.html_tables import html_figures
from tests.pages.light_parts import notes

PAGE = Path(__file__).resolve().parents[2] / "pages" / "study_admin.py"


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.delenv("STRUCTEXT_ADMIN_USER", raising=False)
    monkeypatch.delenv("STRUCTEXT_ADMIN_PASSWORD", raising=False)
    return storage.open_db()


@pytest.fixture
def people(db):
    found = {"lead": accounts.create_user(db, "lead", "password-123", "admin")}
    for name in ("ann1", "ann2", "ann3"):
        found[name] = accounts.create_user(db, name, "password-123", "annotator")
    return found


@pytest.fixture
def study_id(db, people):
    rows = [suites.generate_sample(t, d, w, suite="mini", index=0) for t in range(1, 12) for d in (1, 2) for w in (1, 2)]
    found = structext_study.create_study(db, name="crowd", suite="mini", samples=rows, n_items=4,
                                         annotator_ids=[people["ann1"]["id"]])
    return found


def open_page(user) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["user"] = user
    at.session_state["sa_section"] = "Dashboard"
    for key in ("sa_open_places", "sa_open_statuses"):  # the block's lazy expanders: settings, each person
        at.session_state[key] = True
    return at.run()


def one(widgets, label):
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{label!r}: {[w.label for w in widgets]}"
    return found[0]


def people_table(at):
    return next(d.value for d in at.dataframe if list(d.value.columns) == ["username", "status", "answers"])


def answer(db, study_id, user_id, at):
    study.accept_rule(db, study_id, user_id, at=0.0)
    view = study.open_question(db, study_id, user_id, at=at)
    study.submit_answer(db, user_id, view.assignment_id, "an answer", at=at + 1)


def test_a_study_without_k_shows_everyone_answering_every_item(db, people, study_id):
    at = open_page(people["lead"])
    assert not at.exception
    assert any("Everyone answers every item" in c.value for c in notes(at, "caption"))
    assert one(html_figures(at), "Items with 1 answer").value == "0 of 4"
    assert people_table(at).to_dict("records") == [{"username": "ann1", "status": "consented", "answers": 0}]


def test_the_lead_sets_k_and_people_are_dealt_and_counted(db, people, study_id):
    at = open_page(people["lead"])
    one(at.number_input, "People per item (k)").set_value(2)
    one(at.number_input, "Questions per person").set_value(3)
    one(at.number_input, "Hold time (minutes)").set_value(30)
    at = one(at.button, "Save places").click().run()
    assert not at.exception and not notes(at, "error")
    found = settings.crowd_settings(db, study_id)
    assert (found.per_item, found.per_person, found.hold_seconds) == (2, 3, 1800.0)
    assert any("Places saved: 2 people per item." in s.value for s in notes(at, "success"))
    for name in ("ann2", "ann3"):
        study.add_annotator(db, study_id, people[name]["id"])
    for moment, name in enumerate(("ann1", "ann2", "ann2", "ann3"), 1):
        answer(db, study_id, people[name]["id"], 10.0 * moment)
    at = open_page(people["lead"])
    # Four answers over four items at k = 2, dealt to the fewest answered first: one each.
    assert one(html_figures(at), "Items with 2 answers").value == "0 of 4"
    assert one(html_figures(at), "Answers").value == "4 of 8"
    statuses = people_table(at).set_index("username")["status"].to_dict()
    assert statuses == {"ann1": "answering", "ann2": "answering", "ann3": "answering"}
    assert one(at.number_input, "People per item (k)").value == 2


def test_switching_k_off_after_dealing_is_refused_with_a_message(db, people, study_id):
    settings.save_settings(db, study_id, None, per_item=1)
    study.add_annotator(db, study_id, people["ann2"]["id"])
    answer(db, study_id, people["ann2"]["id"], 10.0)
    at = open_page(people["lead"])
    one(at.number_input, "People per item (k)").set_value(0)
    at = one(at.button, "Save places").click().run()
    assert "k cannot be switched off" in notes(at, "error")[0].value
    assert settings.crowd_settings(db, study_id).per_item == 1


def test_lowering_k_says_what_it_does(db, people, study_id):
    settings.save_settings(db, study_id, None, per_item=3)
    at = open_page(people["lead"])
    one(at.number_input, "People per item (k)").set_value(2)
    at = one(at.button, "Save places").click().run()
    assert any("items that already have more than 2 answers keep them" in s.value for s in notes(at, "success"))


def test_opening_the_dashboard_sends_questions_held_too_long_back(db, people, study_id):
    settings.save_settings(db, study_id, None, per_item=1, hold_seconds=60)
    study.add_annotator(db, study_id, people["ann2"]["id"])
    study.accept_rule(db, study_id, people["ann2"]["id"], at=0.0)
    study.open_question(db, study_id, people["ann2"]["id"], at=1.0)  # held since 1970, long past the hold
    at = open_page(people["lead"])
    assert "1 question held past the hold time went back to the pool." in notes(at, "info")[0].value
    assert one(html_figures(at), "Questions held now").value == "0"
    assert dealing.release_notice(db, study_id, people["ann2"]["id"]) is not None


ANSWER_PAGE = Path(__file__).resolve().parents[2] / "pages" / "human_baseline.py"


def test_a_person_whose_question_went_back_to_the_pool_is_told_and_gets_another(db, people, study_id):
    settings.save_settings(db, study_id, None, per_item=1, hold_seconds=600)
    ann1, ann2 = people["ann1"]["id"], people["ann2"]["id"]
    study.add_annotator(db, study_id, ann2)
    study.accept_rule(db, study_id, ann1, at=0.0)
    study.accept_rule(db, study_id, ann2, at=0.0)
    held = study.open_question(db, study_id, ann1, at=1.0)  # then the tab closed, long ago
    study.open_question(db, study_id, ann2)  # ann2 needs a question now: ann1's goes back to the pool
    page = AppTest.from_file(str(ANSWER_PAGE), default_timeout=60)
    page.session_state["user"] = people["ann1"]
    page = page.run()
    assert not page.exception
    assert any(i.value.startswith("Your previous question went back to the pool after ") for i in page.info)
    now_held = db.execute("SELECT a.item_id FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                          " WHERE a.user_id = ? AND r.id IS NULL", [ann1]).fetchall()
    assert len(now_held) == 1 and now_held[0][0] != held.item_id
