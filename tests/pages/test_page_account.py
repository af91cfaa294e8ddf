"""The Account box of the log-in sidebar (``structext_core.ui.account_box``): one's own password, with AppTest."""

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.studio import accounts, storage


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    for name in ("STRUCTEXT_ADMIN_USER", "STRUCTEXT_ADMIN_PASSWORD", "STRUCTEXT_SESSION_HOURS",
                 "STRUCTEXT_SESSION_SECRET"):
        monkeypatch.delenv(name, raising=False)
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"))}


def frame():
    """What app.py does in the sidebar: restore the session, then log-in, or log-out and Account."""
    import streamlit as st

    from structext_core import ui

    ui.restore_session()
    with st.sidebar:
        if ui.current_user() is None:
            ui.login_form()
        else:
            ui.logout_button()
            ui.account_box()
    if ui.current_user() is not None:
        st.write(f"Welcome {ui.current_user()['username']}")


def widget(widgets, label):
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{label!r}: {[w.label for w in widgets]}"
    return found[0]


def logged_in(username="ann1", password="password-123", open_account: bool = True) -> AppTest:
    """Logged in, with the Account box opened (as a click on it does: its form is built only
    while it is open)."""
    at = AppTest.from_function(frame, default_timeout=30).run()
    widget(at.sidebar.text_input, "User name").input(username)
    widget(at.sidebar.text_input, "Password").input(password)
    at = widget(at.sidebar.button, "Log in").click().run()
    if open_account:
        at.session_state["own_account_open"] = True
        at.run()
    return at


def change(at, current, new, repeat=None) -> AppTest:
    widget(at.sidebar.text_input, "Current password").input(current)
    widget(at.sidebar.text_input, "New password").input(new)
    widget(at.sidebar.text_input, "Repeat the new password").input(new if repeat is None else repeat)
    return widget(at.sidebar.button, "Change password").click().run()


def test_the_account_box_is_there_only_when_logged_in(db, people):
    at = AppTest.from_function(frame, default_timeout=30).run()
    assert not [e for e in at.sidebar.expander if e.label == "Account"]
    at = logged_in(open_account=False)
    assert [e.label for e in at.sidebar.expander] == ["Account"]
    # Closed, it builds no form (every run of every page draws it); open, the form is there.
    assert not at.sidebar.text_input and not at.sidebar.get("form")
    at.session_state["own_account_open"] = True
    at.run()
    assert [t.label for t in at.sidebar.text_input] == ["Current password", "New password", "Repeat the new password"]


def test_changing_the_password_keeps_this_session_and_ends_the_others(db, people):
    elsewhere = accounts.issue_session(db, people["ann1"]["id"])  # another browser
    at = logged_in()
    here = at.session_state["session_token"]
    at = change(at, "password-123", "a brand new one")
    assert not at.exception
    assert ("Your password is changed; you stay logged in here. 1 other session of your account ended."
            in at.sidebar.success[0].value)
    assert accounts.verify_session(db, here).user == people["ann1"]
    assert accounts.verify_session(db, elsewhere).reason == "revoked"
    at = at.run()  # the next run still knows this session
    assert at.session_state["user"] == people["ann1"]
    assert any("Welcome ann1" in m.value for m in at.markdown)
    assert accounts.log_in(db, "ann1", "a brand new one").user == people["ann1"]


@pytest.mark.parametrize("current, new, repeat, message", [
    ("wrong password", "a brand new one", None, "The current password is wrong: your password was not changed."),
    ("password-123", "a brand new one", "a brand new two", "The two new passwords differ"),
    ("password-123", "short", None, "Password is too short"),
])
def test_a_refused_change_says_why_and_changes_nothing(db, people, current, new, repeat, message):
    at = change(logged_in(), current, new, repeat)
    assert message in at.sidebar.error[0].value
    assert accounts.log_in(db, "ann1", "password-123").user == people["ann1"]
    assert accounts.verify_session(db, at.session_state["session_token"]).user == people["ann1"]


def test_wrong_current_passwords_lock_the_name_like_failed_log_ins(db, people):
    at = logged_in()
    for _ in range(accounts.MAX_FAILED_LOGINS):
        at = change(at, "wrong password", "a brand new one")
    assert "After 5 failed attempts this user name is locked for 1 min" in at.sidebar.error[0].value
    at = change(at, "password-123", "a brand new one")
    assert at.sidebar.error[0].value.startswith("Too many failed log-ins for this user name")
    assert accounts.log_in(db, "ann1", "a brand new one").user is None


def test_a_disabled_account_is_logged_out_with_a_notice(db, people):
    at = logged_in()
    accounts.disable_user(db, people["ann1"]["id"], by_user=people["lead"]["id"])
    at = at.run()
    assert "user" not in at.session_state
    assert accounts.DISABLED_MESSAGE in at.sidebar.info[0].value
    widget(at.sidebar.text_input, "User name").input("ann1")
    widget(at.sidebar.text_input, "Password").input("password-123")
    at = widget(at.sidebar.button, "Log in").click().run()
    assert at.sidebar.error[0].value == accounts.DISABLED_MESSAGE and "user" not in at.session_state


def test_an_account_with_no_password_is_told_how_to_go_on_not_asked_for_a_password(db, people):
    # A study link's account (and one brought in by CSV before its link is used) has no password: the form
    # could never work, and each try counted towards the log-in lock.
    from structext_core.studio.crowd import links

    db.execute("UPDATE users SET password_hash = ? WHERE username = 'ann1'", [links.NO_PASSWORD_HASH])
    db.conn.commit()
    at = AppTest.from_function(frame, default_timeout=30)
    at.session_state["user"] = accounts.get_user(db, "ann1")
    at.session_state["own_account_open"] = True
    at.run()
    assert not at.exception and not at.sidebar.text_input
    assert "you came in by a link" in at.sidebar.caption[-1].value
    assert accounts.has_password(db, people["lead"]["id"]) and not accounts.has_password(db, people["ann1"]["id"])


def holds():
    """What a fragment's own run asks before it draws (``ui.fragment``): does the log-in still hold?"""
    import streamlit as st

    from structext_core import ui

    st.write(f"holds: {ui.session_holds()}")


@pytest.mark.parametrize("change", ["log out elsewhere", "disabled", "role changed"])
def test_a_fragment_run_sees_a_log_in_ended_or_changed_since_the_full_run(db, people, change):
    # A fragment's own run skips app.py's restore_session: it re-checks the session itself and, when the
    # log-in no longer holds, reruns the whole app (which logs out or re-reads the role).
    at = logged_in(open_account=False)
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
