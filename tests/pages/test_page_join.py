"""A study link end to end in AppTest: the join page (pages/join.py) as a visitor arriving by the
link, the same browser coming back, another browser with the same id and the resume code; the
app's frame (navigation, root address, going on to Human baseline); and the lead's *Study link*
section on Studies (structext_core.ui.study_links)."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import ui
from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import access, accounts, storage, study
from structext_core.studio.crowd import links, settings
from tests.pages.html_tables import html_figures
from tests.pages.light_parts import notes

ROOT = Path(__file__).resolve().parents[2]
JOIN = ROOT / "pages" / "join.py"
STUDIES = ROOT / "pages" / "study_admin.py"
PROLIFIC = {"PROLIFIC_PID": "5f1e2d3c4b5a69788796a5b4", "STUDY_ID": "study-77", "SESSION_ID": "sess-1"}


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    for name in ("STRUCTEXT_ADMIN_USER", "STRUCTEXT_ADMIN_PASSWORD", "STRUCTEXT_PUBLIC_URL", "STRUCTEXT_SESSION_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"))}


@pytest.fixture
def study_id(db, people):
    return structext_study.create_study(db, name="crowd pilot", suite="test", samples=suites.generate_cell(
        8, 2, 2, 4, suite="test"), n_items=2, annotator_ids=[people["ann1"]["id"]])


def make_link(db, study_id, people, **changes):
    values = {"places": 3, "expires_at": None, "id_param": "PROLIFIC_PID", **changes}
    return links.create_link(db, study_id, by=people["lead"]["id"], **values)


def open_join(params: dict | None = None, session: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(JOIN), default_timeout=60)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    for key, value in (session or {}).items():
        at.session_state[key] = value
    return at.run()


def the_app(pages_dir):
    """What app.py does: the session, the navigation of the access table, a link at the root, the page."""
    from pathlib import Path

    import streamlit as st

    from structext_core import ui
    from structext_core.studio import access
    from structext_core.ui import study_links

    with ui.run_scope():
        ui.restore_session()
        pages = ui.navigation_pages(Path(pages_dir), access.role_of(ui.current_user()), False)
        page = st.navigation(pages)
        study_links.follow_link_at_root(page, pages)
        ui.run_page(page)


def open_app(params: dict) -> AppTest:
    at = AppTest.from_function(the_app, default_timeout=60, args=(str(ROOT / "pages"),))
    for key, value in params.items():
        at.query_params[key] = value
    return at


def errors(at) -> list[str]:
    return [e.value for e in notes(at, "error")]


def shown_text(at) -> str:
    return "\n".join(str(e.value) for kind in ("title", "markdown", "caption", "code", "error", "info", "warning",
                                               "success") for e in getattr(at, kind))


def button(at, label):
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}: {[b.label for b in at.button]}"
    return found[0]


def count(db, table):
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


# ---------------------------------------------------------------- the table and the navigation


def test_the_join_page_is_open_to_everyone_and_listed_to_nobody():
    assert access.page("join").listed is False and all(access.can_open(role, "join") for role in access.ROLES)
    try:
        for role in access.ROLES:  # the navigation's pages, in the table's order (outside a run st.Page keeps no path)
            shown = [p.visibility for section in ui.navigation_pages(ROOT / "pages", role, False).values()
                     for p in section]
            by_key = dict(zip([p.key for p in access.PAGES], shown, strict=True))
            assert by_key["join"] == "hidden"  # reachable by its URL, not in the menu
            assert by_key["home"] == by_key["results"] == "visible"  # listed as before
    finally:
        ui._navigation_pages.cache_clear()  # pages made outside a run must not serve the app's runs
    assert all(p.listed for p in access.PAGES if p.key != "join")


# ---------------------------------------------------------------- a visitor arrives


def test_a_visitor_by_the_link_gets_an_account_is_logged_in_and_sees_the_code_once(db, people, study_id):
    link = make_link(db, study_id, people)
    at = open_join({"join": link.token, **PROLIFIC})
    assert not at.exception and not errors(at)
    user = at.session_state["user"]
    assert user["role"] == "annotator" and user["username"].startswith("p-")
    assert at.session_state[ui.TOKEN_KEY] and ui.COOKIE_NAME in at.session_state[ui.COOKIE_WRITE_KEY]
    assert dict(at.query_params) == {}  # the address carries no token any more
    code = at.code[0].value
    assert links.resume(db, link.token, code, PROLIFIC) == user  # the code shown is the person's
    assert "crowd pilot" in notes(at, "success")[0].value
    assert any("it is shown only this once" in m.value for m in at.markdown)
    person = links.participant(db, user["id"])
    assert person.external_id == PROLIFIC["PROLIFIC_PID"] and person.params == {"STUDY_ID": "study-77",
                                                                                 "SESSION_ID": "sess-1"}
    button(at, "Go on to the study")
    # the same browser opening the link again: logged in by its session, no second account, no code
    again = open_join({"join": link.token, **PROLIFIC}, {"user": user})
    assert not errors(again) and not again.code and "already" in notes(again, "info")[0].value
    assert dict(again.query_params) == {} and count(db, "participants") == 1


def test_another_browser_with_the_same_id_is_refused_and_goes_on_with_the_code(db, people, study_id):
    link = make_link(db, study_id, people)
    first = links.enrol(db, link.token, PROLIFIC)
    at = open_join({"join": link.token, **PROLIFIC})
    assert errors(at) == [links.ID_TAKEN] and "user" not in at.session_state
    assert first.user["username"] not in shown_text(at) and first.resume_code not in shown_text(at)
    box = next(t for t in at.text_input if t.label == "Resume code")
    box.input("WRONGCODE2")
    at = button(at, "Go on").click().run()
    assert errors(at)[-1].startswith(links.WRONG_CODE) and "user" not in at.session_state
    assert count(db, "participants") == 1
    box = next(t for t in at.text_input if t.label == "Resume code")
    box.input(first.resume_code.lower())
    at = button(at, "Go on").click().run()
    assert not errors(at) and at.session_state["user"] == first.user
    assert dict(at.query_params) == {} and "You are in the study" in notes(at, "info")[0].value
    button(at, "Go on to the study")


@pytest.mark.parametrize("case, expected", [
    ("bad token", links.NOT_VALID),
    ("expired", links.EXPIRED),
    ("closed link", links.LINK_CLOSED),
    ("closed study", links.STUDY_CLOSED),
    ("full", "This study is full: its one place is taken."),
    ("no id", "This study link arrived without your participant id (PROLIFIC_PID)"),
])
def test_every_refusal_is_shown_plainly_and_makes_nothing(db, people, study_id, case, expected):
    link = make_link(db, study_id, people, places=1)
    params = {"join": link.token, **PROLIFIC}
    if case == "bad token":
        params["join"] = "x" * 32
    elif case == "expired":
        db.execute("UPDATE enrolment_links SET expires_at = ? WHERE id = ?", [time.time() - 1, link.id])
        db.conn.commit()
    elif case == "closed link":
        links.close_link(db, link.id, by=people["lead"]["id"])
    elif case == "closed study":
        study.set_study_status(db, study_id, "closed")
    elif case == "full":
        links.enrol(db, link.token, {"PROLIFIC_PID": "someone"})
    elif case == "no id":
        del params["PROLIFIC_PID"]
    before = count(db, "users")
    at = open_join(params)
    assert not at.exception and len(errors(at)) == 1 and errors(at)[0].startswith(expected)
    assert "user" not in at.session_state and count(db, "users") == before
    assert not [t for t in at.text_input if t.label == "Resume code"]  # only a taken id gets the resume form


def test_a_person_the_full_study_turns_away_is_sent_back_to_the_platform(db, people, study_id):
    """Places all taken (or the link closed or expired) when they came: nothing of theirs is kept, and
    they get what a person screened out gets (the study's screen-out code and address), or the words
    to return the study on the platform when the lead set neither."""
    link = make_link(db, study_id, people, places=1)
    links.enrol(db, link.token, {"PROLIFIC_PID": "someone"})
    at = open_join({"join": link.token, **PROLIFIC})
    assert errors(at) == ["This study is full: its one place is taken."]
    assert notes(at, "subheader")[0].value == "You cannot take part in this study"
    assert not html_figures(at) and "Return the study on the platform you came from" in notes(at, "info")[0].value
    settings.save_settings(db, study_id, people["lead"]["id"], screenout_code="SCR33N",
                           screenout_url="https://platform.example/screened-out")
    before = count(db, "users")
    at = open_join({"join": link.token, **PROLIFIC})
    assert [(m.label, m.value) for m in html_figures(at)] == [("Your code", "SCR33N")]
    assert [b.url for b in at.get("link_button")] == ["https://platform.example/screened-out"]
    assert count(db, "users") == before and "user" not in at.session_state
    # An id that took part already is not turned away: it is offered the resume form, and no code.
    taken = open_join({"join": link.token, "PROLIFIC_PID": "someone"})
    assert not html_figures(taken) and [t.label for t in taken.text_input] == ["Resume code"]


def test_a_link_without_an_id_asks_first_start_or_resume(db, people, study_id):
    link = make_link(db, study_id, people, id_param=None)
    at = open_join({"join": link.token})
    assert count(db, "participants") == 0 and "user" not in at.session_state  # nothing made by opening it
    at = button(at, "Start the study").click().run()
    code, user = at.code[0].value, at.session_state["user"]
    assert links.participant(db, user["id"]).external_id is None and dict(at.query_params) == {}
    other = open_join({"join": link.token})  # another device: the code, no new account
    next(t for t in other.text_input if t.label == "Resume code").input(code)
    other = button(other, "Go on").click().run()
    assert other.session_state["user"] == user and count(db, "participants") == 1


def test_someone_logged_in_with_another_account_is_asked_to_log_out_first(db, people, study_id):
    link = make_link(db, study_id, people)
    at = open_join({"join": link.token, **PROLIFIC}, {"user": people["ann1"]})
    assert "You are logged in as ann1" in notes(at, "warning")[0].value and count(db, "participants") == 0


def test_without_a_link_the_page_says_what_it_is_for(db, people, study_id):
    at = open_join()
    assert at.title[0].value == "Join a study" and "opened by a study link" in notes(at, "info")[0].value


# ---------------------------------------------------------------- in the app's frame


def test_a_link_at_the_root_reaches_the_join_page_and_goes_on_to_the_questions(db, people, study_id):
    link = make_link(db, study_id, people)
    at = open_app({"join": link.token, **PROLIFIC}).run()
    assert not at.exception and [t.value for t in at.title] == ["Join a study"]
    user = at.session_state["user"]
    assert at.code[0].value and dict(at.query_params) == {}
    at = button(at, "Go on to the study").click().run()
    assert not at.exception and [t.value for t in at.title] == ["Human baseline"]
    assert dict(at.query_params) == {"study": str(study_id)}
    assert at.session_state["user"] == user and "join_new_code" not in at.session_state  # the code is gone


# ---------------------------------------------------------------- the lead's side


def open_studies(user) -> AppTest:
    at = AppTest.from_file(str(STUDIES), default_timeout=60)
    at.session_state["user"] = user
    at.session_state["sa_section"] = "Crowd"  # the study link leads the study's Crowd tab
    return at.run()


def section_form(at):
    return {w.label: w for w in [*at.number_input, *at.text_input, *at.date_input, *at.time_input]}


def test_the_lead_makes_a_link_copies_it_and_closes_it(db, people, study_id, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_PUBLIC_URL", "https://lab.example.org/studio/")
    at = open_studies(people["lead"])
    widgets = section_form(at)
    assert widgets["Participant id parameter"].value == "PROLIFIC_PID" and widgets["Places"].value == 100
    widgets["Places"].set_value(300)
    widgets["Expires on (UTC; empty: never)"].set_value(dt.date.today() + dt.timedelta(days=2))
    widgets["at (UTC)"].set_value(dt.time(12, 0))
    at = button(at, "Make the link").click().run()
    assert not at.exception and not errors(at)
    made = links.links_of(db, study_id)
    assert len(made) == 1 and made[0].places == 300 and made[0].id_param == "PROLIFIC_PID"
    day = dt.date.today() + dt.timedelta(days=2)
    assert made[0].expires_at == dt.datetime.combine(day, dt.time(12, 0), tzinfo=dt.UTC).timestamp()
    assert "A study link for 300 places is made" in notes(at, "success")[0].value
    shown = [c.value for c in at.code]
    assert links.link_url("https://lab.example.org/studio", made[0].token, "PROLIFIC_PID") in shown
    assert shown[0].startswith("https://lab.example.org/studio/join?join=") and "{{%PROLIFIC_PID%}}" in shown[0]
    links.enrol(db, made[0].token, PROLIFIC)
    at = open_studies(people["lead"])
    assert any("1 of 300 places filled" in m.value and "open" in m.value for m in at.markdown)
    at = button(at, "Close this link").click().run()
    assert links.links_of(db, study_id)[0].closed_at is not None
    assert any("1 of 300 places filled** · closed" in m.value for m in at.markdown)
    assert not [b for b in at.button if b.label == "Close this link"]


def test_a_link_the_lead_gets_wrong_says_why_and_makes_nothing(db, people, study_id):
    at = open_studies(people["lead"])
    widgets = section_form(at)
    widgets["Participant id parameter"].input("PROLIFIC PID")
    at = button(at, "Make the link").click().run()
    assert errors(at) and errors(at)[0].startswith("No link was made: The id parameter must be a name")
    assert links.links_of(db, study_id) == []
    widgets = section_form(at)
    widgets["Participant id parameter"].input("")
    widgets["Expires on (UTC; empty: never)"].set_value(dt.date.today() - dt.timedelta(days=1))
    at = button(at, "Make the link").click().run()
    assert errors(at)[0] == "No link was made: The expiry is already past: choose a later date and time, or no expiry."
    assert links.links_of(db, study_id) == []


def test_without_the_setting_or_a_browser_address_the_lead_is_told(db, people, study_id):
    make_link(db, study_id, people, id_param=None)
    at = open_studies(people["lead"])
    assert any("STRUCTEXT_PUBLIC_URL" in w.value for w in notes(at, "warning"))
    assert at.code[0].value.startswith("http://localhost:8501/join?join=") and "PROLIFIC" not in at.code[0].value
