"""Log-in sessions, log-in throttling and error ids: the core, then the widgets with AppTest.

Browser journeys (cookie across a reload, fresh server) are in tests/browser/test_sessions_browser.py.
"""

import re
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.studio import accounts, storage
from tests.pages.accounts_page import open_sections

ACCOUNTS_PAGE = Path(__file__).resolve().parents[2] / "pages" / "accounts.py"
HOUR = 3600.0


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_ERROR_LOG", str(tmp_path / "errors.log"))
    for name in ("STRUCTEXT_ADMIN_USER", "STRUCTEXT_ADMIN_PASSWORD", "STRUCTEXT_SESSION_HOURS",
                 "STRUCTEXT_SESSION_SECRET"):
        monkeypatch.delenv(name, raising=False)
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator"))}


def session_rows(db):
    return list(db.query("SELECT * FROM login_sessions"))


# ---------------------------------------------------------------- tokens


def test_a_token_logs_its_user_in_and_is_stored_only_as_a_hash(db, people):
    token = accounts.issue_session(db, people["ann1"]["id"])
    check = accounts.verify_session(db, token)
    assert check.user == people["ann1"] and check.reason is None
    assert check.expires_at == pytest.approx(time.time() + 12 * HOUR, abs=5)
    assert "password" not in token and "ann1" not in token
    dumped = repr(session_rows(db)) + repr(list(db.query("SELECT * FROM login_secret")))
    assert token not in dumped and token.split(".")[2] not in dumped
    assert accounts.issue_session(db, people["ann1"]["id"]) != token


def test_a_token_expires_after_its_lifetime(db, people):
    now = time.time()
    token = accounts.issue_session(db, people["ann1"]["id"], lifetime=60, now=now)
    assert accounts.verify_session(db, token, now=now + 59).user == people["ann1"]
    assert accounts.verify_session(db, token, now=now + 61) == accounts.SessionCheck(None, "expired")


def test_the_database_row_decides_expiry_too(db, people):
    token = accounts.issue_session(db, people["ann1"]["id"])
    db.execute("UPDATE login_sessions SET expires_at = ?", [time.time() - 1])
    db.conn.commit()
    assert accounts.verify_session(db, token).reason == "expired"


@pytest.mark.parametrize("change", [
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),    # signature
    lambda t: t.replace(t.split(".")[2], ("y" if t.split(".")[2][0] == "x" else "x") + t.split(".")[2][1:]),  # random part
    lambda t: ".".join([t.split(".")[0], str(int(t.split(".")[1]) + 999), *t.split(".")[2:]]),  # expiry
])
def test_an_altered_token_is_refused_before_any_lookup(db, people, change):
    token = accounts.issue_session(db, people["ann1"]["id"])
    forged = change(token)
    assert forged != token
    statements = []
    db.conn.set_trace_callback(statements.append)
    try:
        assert accounts.verify_session(db, forged) == accounts.SessionCheck(None, "forged")
    finally:
        db.conn.set_trace_callback(None)
    assert not [s for s in statements if "login_sessions" in s], statements


@pytest.mark.parametrize("garbage", [None, "", "abc", "v1.1.2", "v2.9999999999.abc.def", "v1.x.abc.def",
                                     "v1.9999999999.ab.cd.ef", "v1.9999999999.é.sig", "v1." + "a" * 5000])
def test_garbage_is_malformed(db, people, garbage):
    assert accounts.verify_session(db, garbage) == accounts.SessionCheck(None, "malformed")


def test_a_token_signed_with_another_secret_is_forged(db, people, monkeypatch):
    token = accounts.issue_session(db, people["ann1"]["id"])
    monkeypatch.setenv("STRUCTEXT_SESSION_SECRET", "s" * 40)
    assert accounts.verify_session(db, token).reason == "forged"
    own = accounts.issue_session(db, people["ann1"]["id"])
    assert accounts.verify_session(db, own).user == people["ann1"]
    monkeypatch.setenv("STRUCTEXT_SESSION_SECRET", "short")
    with pytest.raises(accounts.AccountError, match="STRUCTEXT_SESSION_SECRET is too short"):
        accounts.verify_session(db, own)


def test_log_out_revokes_every_token_of_that_user_only(db, people):
    laptop = accounts.issue_session(db, people["ann1"]["id"])
    phone = accounts.issue_session(db, people["ann1"]["id"])
    other = accounts.issue_session(db, people["ann2"]["id"])
    assert accounts.revoke_user_sessions(db, people["ann1"]["id"], "logged out") == 2
    assert accounts.verify_session(db, laptop).reason == "revoked"
    assert accounts.verify_session(db, phone).reason == "revoked"
    assert accounts.verify_session(db, other).user == people["ann2"]
    assert {r["revoked_reason"] for r in session_rows(db) if r["revoked_at"]} == {"logged out"}


def test_a_password_change_revokes_every_token_of_that_user(db, people):
    tokens = [accounts.issue_session(db, people["ann1"]["id"]) for _ in range(3)]
    other = accounts.issue_session(db, people["ann2"]["id"])
    accounts.set_password(db, "ann1", "a new password")
    assert [accounts.verify_session(db, t).reason for t in tokens] == ["revoked"] * 3
    assert accounts.verify_session(db, other).user == people["ann2"]
    fresh = accounts.issue_session(db, people["ann1"]["id"])
    assert accounts.verify_session(db, fresh).user == people["ann1"]


def test_a_failed_password_change_revokes_nothing(db, people):
    token = accounts.issue_session(db, people["ann1"]["id"])
    with pytest.raises(accounts.AccountError):
        accounts.set_password(db, "ann1", "short")
    assert accounts.verify_session(db, token).user == people["ann1"]


def test_the_role_is_read_at_every_check(db, people):
    token = accounts.issue_session(db, people["ann1"]["id"])
    db.execute("UPDATE users SET role = 'researcher' WHERE id = ?", [people["ann1"]["id"]])
    db.conn.commit()
    assert accounts.verify_session(db, token).user["role"] == "researcher"


@pytest.mark.parametrize("raw, seconds", [("", 12 * HOUR), ("0.5", 1800.0), (" 24 ", 24 * HOUR)])
def test_session_lifetime_from_the_environment(monkeypatch, raw, seconds):
    monkeypatch.setenv("STRUCTEXT_SESSION_HOURS", raw)
    assert accounts.session_lifetime_seconds() == seconds


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "nan", "inf", "1e9"])
def test_a_bad_session_lifetime_says_what_to_set(monkeypatch, raw):
    monkeypatch.setenv("STRUCTEXT_SESSION_HOURS", raw)
    with pytest.raises(accounts.AccountError, match="STRUCTEXT_SESSION_HOURS=.* number of hours"):
        accounts.session_lifetime_seconds()


def test_old_session_rows_are_purged(db, people):
    now = time.time()
    accounts.issue_session(db, people["ann1"]["id"], lifetime=60, now=now - 8 * 24 * HOUR)
    accounts.issue_session(db, people["ann1"]["id"], now=now)
    assert len(session_rows(db)) == 1


# ---------------------------------------------------------------- throttling


def fail(db, name, times, now):
    return [accounts.log_in(db, name, "wrong password", now=now) for _ in range(times)]


def test_five_failures_lock_the_name_with_the_time_left(db, people):
    now = 1_000_000.0
    outcomes = fail(db, "ann1", 5, now)
    assert [o.message for o in outcomes[:2]] == [accounts.WRONG_LOGIN_MESSAGE] * 2
    assert "2 more failed attempts lock this user name for 1 min" in outcomes[2].message
    assert "1 more failed attempt locks" in outcomes[3].message
    assert "After 5 failed attempts this user name is locked for 1 min" in outcomes[4].message
    assert outcomes[4].locked_seconds == 60
    locked = accounts.log_in(db, "ann1", "password-123", now=now + 15)  # right password: still refused
    assert locked.user is None and locked.locked_seconds == 45
    assert locked.message.startswith("Too many failed log-ins for this user name: it is locked for 45 s more.")
    assert "ask an admin to unlock it" in locked.message
    assert accounts.log_in(db, "ann1", "password-123", now=now + 61).user == people["ann1"]
    assert accounts.login_failures(db, now=now + 61) == []  # a success clears the count


def test_the_lock_grows_with_each_further_failure(db, people):
    now = 1_000_000.0
    fail(db, "ann1", 5, now)
    sixth = accounts.log_in(db, "ann1", "wrong", now=now + 61)
    assert sixth.locked_seconds == 120 and "locked for 2 min" in sixth.message
    seventh = accounts.log_in(db, "ann1", "wrong", now=now + 61 + 121)
    assert seventh.locked_seconds == 240
    assert accounts.lock_seconds(4) == 0 and accounts.lock_seconds(30) == accounts.MAX_LOCK_SECONDS


def test_unknown_names_are_throttled_exactly_like_accounts(db, people):
    now = 1_000_000.0
    real = fail(db, "ann1", 6, now)
    made_up = fail(db, "nobody-here", 6, now)
    assert [(o.message, o.locked_seconds) for o in real] == [(o.message, o.locked_seconds) for o in made_up]


def test_names_count_together_whatever_the_case_and_spaces(db, people):
    now = 1_000_000.0
    for name in ("ann1", "ANN1", " Ann1 ", "aNn1", "ann1 "):
        accounts.log_in(db, name, "wrong", now=now)
    assert accounts.log_in(db, "ann1", "password-123", now=now + 1).locked_seconds > 0


def test_a_success_resets_the_count(db, people):
    now = 1_000_000.0
    fail(db, "ann1", 4, now)
    assert accounts.log_in(db, "ann1", "password-123", now=now).user == people["ann1"]
    assert [o.message for o in fail(db, "ann1", 2, now)] == [accounts.WRONG_LOGIN_MESSAGE] * 2


def test_old_failures_are_forgotten(db, people):
    now = 1_000_000.0
    fail(db, "ann1", 4, now)
    later = now + accounts.FAILURE_MEMORY_SECONDS + 1
    assert accounts.log_in(db, "ann1", "wrong", now=later).message == accounts.WRONG_LOGIN_MESSAGE


def test_the_admin_unlocks_a_name(db, people):
    now = time.time()
    fail(db, "ann1", 5, now)
    fail(db, "ann2", 2, now)
    listed = accounts.login_failures(db, now=now + 1)
    assert [(r["username"], r["failures"]) for r in listed] == [("ann1", 5), ("ann2", 2)]
    assert listed[0]["locked_seconds"] == pytest.approx(59, abs=0.01) and listed[1]["locked_seconds"] == 0
    assert accounts.unlock_login(db, "ann1") is True
    assert accounts.log_in(db, "ann1", "password-123", now=now + 1).user == people["ann1"]
    assert accounts.unlock_login(db, "ann1") is False


def test_parallel_attempts_cannot_slip_past_the_limit(db, people, tmp_path):
    """20 wrong attempts at once over 20 connections: only 5 reach the password check."""
    path = tmp_path / "structext.db"
    outcomes, barrier = [], threading.Barrier(20)

    def attempt():
        conn = storage.open_db(path)
        barrier.wait()
        outcomes.append(accounts.log_in(conn, "ann1", "wrong password"))

    threads = [threading.Thread(target=attempt) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [o for o in outcomes if o.message.startswith("Too many failed log-ins")]
    assert len(outcomes) == 20 and len(refused) == 15


def test_format_duration():
    assert [accounts.format_duration(s) for s in (0.2, 45, 60, 125, 3600, 3725)] == [
        "1 s", "45 s", "1 min", "2 min 5 s", "1 h", "1 h 2 min 5 s"]


# ---------------------------------------------------------------- the widgets (AppTest)


def frame():
    """What app.py does around the pages: restore the session, then log-in or log-out."""
    import streamlit as st

    from structext_core import ui
    from structext_core.studio import accounts

    db = ui.get_db()
    if not accounts.has_admin(db):
        ui.first_run_form()
        st.stop()
    ui.restore_session()
    with st.sidebar:
        if ui.current_user() is None:
            ui.login_form()
        else:
            ui.keep_cookie()
            if st.button("Log out"):  # as the Log out page does (pages/logout.py)
                ui.log_out()
                st.rerun()
    if ui.current_user() is not None:
        st.session_state.setdefault("page_state", "of this user")
        st.write(f"Welcome {ui.current_user()['username']}")


def frame_app() -> AppTest:
    return AppTest.from_function(frame, default_timeout=30).run()


def widget(widgets, label):
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{label!r}: {[w.label for w in widgets]}"
    return found[0]


def log_in(at, username, password) -> AppTest:
    widget(at.sidebar.text_input, "User name").input(username)
    widget(at.sidebar.text_input, "Password").input(password)
    return widget(at.sidebar.button, "Log in").click().run()


def test_log_in_starts_a_session_and_log_out_ends_it(db, people):
    at = log_in(frame_app(), "ann1", "password-123")
    assert not at.exception
    token = at.session_state["session_token"]
    assert accounts.verify_session(db, token).user == people["ann1"]
    assert "structext_session=" + token in at.session_state["session_cookie_write"]
    assert "Max-Age=43200" in at.session_state["session_cookie_write"]
    at = widget(at.sidebar.button, "Log out").click().run()
    assert accounts.verify_session(db, token).reason == "revoked"
    assert "user" not in at.session_state and "page_state" not in at.session_state
    assert at.session_state["session_cookie_write"].startswith("structext_session=; Path=/; Max-Age=0")
    assert not at.info  # a log-out is no surprise: no notice


@pytest.mark.parametrize("end, notice, password", [
    (lambda db, uid: accounts.revoke_user_sessions(db, uid, "logged out"), "Your session was ended", "password-123"),
    (lambda db, uid: accounts.set_password(db, "ann1", "another password"), "Your session was ended",
     "another password"),
    (lambda db, uid: (db.execute("UPDATE login_sessions SET expires_at = 1"), db.conn.commit()),
     "Your session expired, log in again.", "password-123"),
], ids=["logged-out-elsewhere", "password-changed", "expired"])
def test_a_session_ended_elsewhere_shows_the_log_in_form_with_a_notice(db, people, end, notice, password):
    at = log_in(frame_app(), "ann1", "password-123")
    assert any("Welcome ann1" in m.value for m in at.markdown)
    end(db, people["ann1"]["id"])
    at = at.run()
    assert not at.exception and not at.error
    assert "user" not in at.session_state and "page_state" not in at.session_state
    assert notice in at.sidebar.info[0].value
    assert widget(at.sidebar.text_input, "User name")
    at = log_in(at, "ann1", password)  # and logging in again works, without the notice
    assert at.session_state["user"] == people["ann1"] and not at.sidebar.info


def test_a_disabled_account_is_logged_out_with_a_notice(db, people):
    at = log_in(frame_app(), "ann1", "password-123")
    accounts.disable_user(db, people["ann1"]["id"], by_user=people["lead"]["id"])
    at = at.run()
    assert "user" not in at.session_state
    assert accounts.DISABLED_MESSAGE in at.sidebar.info[0].value
    at = log_in(at, "ann1", "password-123")
    assert at.sidebar.error[0].value == accounts.DISABLED_MESSAGE and "user" not in at.session_state


def test_the_log_in_form_shows_the_lock(db, people):
    at = frame_app()
    for _ in range(5):
        at = log_in(at, "ann1", "wrong password")
    assert "After 5 failed attempts this user name is locked for 1 min" in at.sidebar.error[0].value
    at = log_in(at, "ann1", "password-123")
    assert "user" not in at.session_state
    assert at.sidebar.error[0].value.startswith("Too many failed log-ins for this user name: it is locked for")
    assert " s more." in at.sidebar.error[0].value or "1 min more." in at.sidebar.error[0].value


def test_the_first_run_form_starts_a_session(db):
    at = frame_app()
    widget(at.text_input, "Admin user name").input("boss")
    widget(at.text_input, "Password").input("boss password")
    widget(at.text_input, "Repeat the password").input("boss password")
    at = widget(at.button, "Create admin account").click().run()
    assert accounts.verify_session(db, at.session_state["session_token"]).user["username"] == "boss"


def test_the_admin_sees_and_unlocks_a_locked_account(db, people):
    fail(db, "ann1", 5, time.time())
    at = AppTest.from_file(str(ACCOUNTS_PAGE), default_timeout=60)
    at.session_state["user"] = people["lead"]
    at = open_sections(at, "ac_locks_open").run()
    table = [df for df in at.dataframe if "failed attempts" in df.value.columns][0].value
    assert table.to_dict("records")[0]["user name"] == "ann1"
    assert table.to_dict("records")[0]["failed attempts"] == 5
    assert re.fullmatch(r"1 min|[1-5]?\d s", table.to_dict("records")[0]["locked for"])
    widget(at.selectbox, "Account to unlock").select("ann1")
    at = widget(at.button, "Unlock").click().run()
    assert "'ann1' is unlocked" in at.success[0].value
    assert accounts.login_failures(db) == []
    assert accounts.log_in(db, "ann1", "password-123").user == people["ann1"]


# ---------------------------------------------------------------- errors


def failing_app():
    """A navigation whose pages fail, stop or rerun, run through ui.run_page as app.py does."""
    import streamlit as st

    from structext_core import ui

    def broken():
        st.write("before the failure")
        raise KeyError("/srv/secret/path/structext.db")

    def stops():
        st.write("stopped on purpose")
        st.stop()
        st.write("never shown")

    def reruns():
        if not st.session_state.get("reran"):
            st.session_state["reran"] = True
            st.rerun()
        st.write("ran again")

    pages = {"broken": broken, "stops": stops, "reruns": reruns}
    chosen = st.session_state.get("which", "broken")
    ui.run_page(st.navigation([st.Page(pages[chosen], title=chosen, url_path=chosen)]))


def test_an_error_shows_an_id_and_no_traceback(db, tmp_path):
    at = AppTest.from_function(failing_app, default_timeout=30).run()
    assert not at.exception  # nothing reached Streamlit's own handler
    [error] = at.error
    assert error.value.startswith("Something went wrong (error ")
    assert error.value.endswith("). It has been logged; tell the study lead this id.")
    error_id = error.value.split("(error ")[1].split(")")[0]
    assert len(error_id) == 6 and int(error_id, 16) >= 0
    page_text = " ".join(str(e.value) for e in at.markdown) + error.value
    assert "secret" not in page_text and "KeyError" not in page_text and "Traceback" not in page_text
    log = (tmp_path / "errors.log").read_text()
    assert f"error {error_id} on broken for visitor" in log
    assert "KeyError: '/srv/secret/path/structext.db'" in log and "Traceback" in log


def test_st_stop_and_st_rerun_pass_through(db):
    at = AppTest.from_function(failing_app, default_timeout=30)
    at.session_state["which"] = "stops"
    at = at.run()
    assert not at.error and not at.exception
    assert [m.value for m in at.markdown] == ["stopped on purpose"]
    at.session_state["which"] = "reruns"
    at = at.run()
    assert not at.error and not at.exception
    assert [m.value for m in at.markdown] == ["ran again"]


def test_show_error_details_is_off():
    import tomllib

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"


def test_a_bad_session_setting_is_named_on_the_log_in_form(db, people, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_SESSION_HOURS", "twelve")
    at = log_in(frame_app(), "ann1", "password-123")
    assert not at.exception and "user" not in at.session_state
    assert at.sidebar.error[0].value.startswith("Log-in is not possible: STRUCTEXT_SESSION_HOURS='twelve'")
