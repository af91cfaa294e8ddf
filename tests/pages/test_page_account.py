"""The navigation's *Your account* pages, with AppTest: *Change password* (``pages/account.py``, one's own
password) and *Log out* (``pages/logout.py``: at once from the navigation, asked first at its address; in
Chromium, with a log-in on the page itself: tests/browser/test_sessions_browser.py)."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import settings, ui
from structext_core.aibench import config as aibench_config
from structext_core.studio import access, accounts, storage
from structext_core.studio.crowd import links
from structext_core.ui import light_nav
from tests.pages.light_parts import bidi_elements

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
ACCOUNT, LOGOUT = (str(ROOT / "pages" / access.page(key).file) for key in ("account", "logout"))


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Path:
    """The suites and AIBench folders app.py's runs fill once for the module (never the checkout's)."""
    return tmp_path_factory.mktemp("folders")


@pytest.fixture
def db(tmp_path, monkeypatch, folders):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv(settings.DATA_DIR_ENV, str(folders / "suites"))
    monkeypatch.setenv(aibench_config.DIR_ENV, str(folders / "aibench"))
    monkeypatch.setenv(settings.RESULTS_DIR_ENV, str(folders / "results"))
    for name in ("STRUCTEXT_ADMIN_USER", "STRUCTEXT_ADMIN_PASSWORD", "STRUCTEXT_SESSION_HOURS",
                 "STRUCTEXT_SESSION_SECRET"):
        monkeypatch.delenv(name, raising=False)
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"))}


def widget(widgets, label):
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{label!r}: {[w.label for w in widgets]}"
    return found[0]


def logged_in(db, script, username: str = "ann1") -> AppTest:
    """``script`` (a file, or a function) run as ``username`` with a session token, as a log-in leaves the
    session."""
    user = accounts.get_user(db, username)
    at = AppTest.from_function(script, default_timeout=30) if callable(script) else \
        AppTest.from_file(script, default_timeout=60)
    at.session_state["user"] = {key: user[key] for key in ("id", "username", "role")}
    at.session_state["session_token"] = accounts.issue_session(db, user["id"])
    return at


def change(at, current, new, repeat=None) -> AppTest:
    widget(at.text_input, "Current password").input(current)
    widget(at.text_input, "New password").input(new)
    widget(at.text_input, "Repeat the new password").input(new if repeat is None else repeat)
    return widget(at.button, "Change password").click().run()


def test_changing_the_password_keeps_this_session_and_ends_the_others(db, people):
    elsewhere = accounts.issue_session(db, people["ann1"]["id"])  # another browser
    at = logged_in(db, ACCOUNT).run()
    assert [t.label for t in at.text_input] == ["Current password", "New password", "Repeat the new password"]
    here = at.session_state["session_token"]
    at = change(at, "password-123", "a brand new one")
    assert not at.exception
    assert ("Your password is changed; you stay logged in here. 1 other session of your account ended."
            in at.success[0].value)
    assert accounts.verify_session(db, here).user == people["ann1"]
    assert accounts.verify_session(db, elsewhere).reason == "revoked"
    assert accounts.log_in(db, "ann1", "a brand new one").user == people["ann1"]


@pytest.mark.parametrize("current, new, repeat, message", [
    ("wrong password", "a brand new one", None, "The current password is wrong: your password was not changed."),
    ("password-123", "a brand new one", "a brand new two", "The two new passwords differ"),
    ("password-123", "short", None, "Password is too short"),
])
def test_a_refused_change_says_why_and_changes_nothing(db, people, current, new, repeat, message):
    at = change(logged_in(db, ACCOUNT).run(), current, new, repeat)
    assert message in at.error[0].value
    assert accounts.log_in(db, "ann1", "password-123").user == people["ann1"]
    assert accounts.verify_session(db, at.session_state["session_token"]).user == people["ann1"]


def test_wrong_current_passwords_lock_the_name_like_failed_log_ins(db, people):
    at = logged_in(db, ACCOUNT).run()
    for _ in range(accounts.MAX_FAILED_LOGINS):
        at = change(at, "wrong password", "a brand new one")
    assert "After 5 failed attempts this user name is locked for 1 min" in at.error[0].value
    at = change(at, "password-123", "a brand new one")
    assert at.error[0].value.startswith("Too many failed log-ins for this user name")
    assert accounts.log_in(db, "ann1", "a brand new one").user is None


def test_an_account_with_no_password_is_told_how_to_go_on_and_not_offered_the_page(db, people):
    # A study link's account (and one brought in by CSV before its link is used) has no password: the form
    # could never work, and each try counted towards the log-in lock. The navigation does not list the page.
    assert access.has_work("account", db, people["ann1"])
    db.execute("UPDATE users SET password_hash = ? WHERE username = 'ann1'", [links.NO_PASSWORD_HASH])
    db.conn.commit()
    assert not access.has_work("account", db, people["ann1"]) and access.has_work("account", db, people["lead"])
    at = logged_in(db, ACCOUNT).run()
    assert not at.exception and not at.text_input
    assert "you came in by a link" in at.info[0].value


def test_a_visitor_is_refused_both_pages(db, people):
    for script in (ACCOUNT, LOGOUT):
        at = AppTest.from_file(script, default_timeout=60).run()
        assert at.error[0].value.startswith("You are not logged in") and not at.button and not at.text_input


def through_the_app(db, page: str | None) -> AppTest:
    """app.py, logged in as ann1 with a token (as after a log-in): Home, then ``page`` (None: Home alone).
    AppTest finds a page of the navigation by its address only after a first run."""
    at = logged_in(db, str(APP)).run()
    if page is not None:
        at.switch_page(page)
        at.run()
    return at


def logged_out_at_home(db, at: AppTest, token: str) -> None:
    assert accounts.verify_session(db, token).reason == "revoked"
    assert "user" not in at.session_state and "session_token" not in at.session_state
    assert at.session_state["session_cookie_write"].startswith("structext_session=; Path=/; Max-Age=0")
    assert widget(at.sidebar.text_input, "User name") and not at.sidebar.info  # the log-in form, no notice
    assert not [t for t in at.title if t.value == "Log out"]


def test_log_out_in_the_navigation_logs_out_at_once(db, people):
    at = through_the_app(db, ACCOUNT)
    token = at.session_state["session_token"]
    menu, = [e for e in bidi_elements(at) if e.proto.component_name.endswith(light_nav.COMPONENT_NAME)]
    assert json.loads(menu.proto.json)["who"] == {"name": "ann1", "role": "annotator"}  # under the menu
    at.switch_page(LOGOUT)  # a click on Log out in the navigation
    at = at.run()
    assert not at.exception
    logged_out_at_home(db, at, token)


def test_log_out_opened_at_its_address_asks_first(db, people):
    # A reload, a new tab or another site's link: nothing happens until the person says so.
    at = through_the_app(db, None)
    at.switch_page(LOGOUT)
    for key in (ui.LAST_PAGE_KEY, ui.CAME_FROM_KEY):  # a new tab's session: no page before this one
        del at.session_state[key]
    at.run()
    token = at.session_state["session_token"]
    assert accounts.verify_session(db, token).user == people["ann1"]
    assert [t.value for t in at.title] == ["Log out"]
    at = widget(at.button, "Log out").click().run()
    assert not at.exception
    logged_out_at_home(db, at, token)


def holds():
    """What a fragment's own run asks before it draws (``ui.fragment``): does the log-in still hold?"""
    import streamlit as st

    from structext_core import ui

    st.write(f"holds: {ui.session_holds()}")


@pytest.mark.parametrize("change", ["log out elsewhere", "disabled", "role changed"])
def test_a_fragment_run_sees_a_log_in_ended_or_changed_since_the_full_run(db, people, change):
    # A fragment's own run skips app.py's restore_session: it re-checks the session itself and, when the
    # log-in no longer holds, reruns the whole app (which logs out or re-reads the role).
    at = logged_in(db, ACCOUNT)
    check = AppTest.from_function(holds, default_timeout=30)
    for key in ("user", "session_token"):
        check.session_state[key] = at.session_state[key]
    assert check.run().markdown[0].value == "holds: True"
    if change == "log out elsewhere":
        accounts.revoke_user_sessions(db, people["ann1"]["id"], "logged out")
    elif change == "disabled":
        accounts.disable_user(db, people["ann1"]["id"], by_user=people["lead"]["id"])
    else:
        db.execute("UPDATE users SET role = 'researcher' WHERE id = ?", [people["ann1"]["id"]])
        db.conn.commit()
    assert check.run().markdown[0].value == "holds: False"
