"""Accounts' *Import people from CSV* and *New set-password link*, and the set-password screen a link
opens (``/?set_password=<token>`` through app.py), with AppTest (issue 45, item 6)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.studio import accounts, storage
from structext_core.studio.accounts import password_links
from structext_core.ui import people_import
from tests.pages.accounts_page import open_sections
from tests.pages.first_view import heavy

ROOT = Path(__file__).resolve().parents[2]
ACCOUNTS_PAGE = ROOT / "pages" / "accounts.py"
APP = ROOT / "app.py"
URL = "https://lab.example.org/studio/accounts"


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("STRUCTEXT_AIBENCH_SYNTHETIC", "off")
    for name in ("STRUCTEXT_ADMIN_USER", "STRUCTEXT_ADMIN_PASSWORD", "STRUCTEXT_PASSWORD_LINK_DAYS",
                 "STRUCTEXT_PUBLIC_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return storage.open_db()


@pytest.fixture
def boss(db):
    return accounts.create_user(db, "boss", "password-123", "admin")


def open_accounts(user) -> AppTest:
    at = AppTest.from_file(str(ACCOUNTS_PAGE), default_timeout=60)
    at.session_state["user"] = user
    at.context["url"] = URL
    return open_sections(at).run()  # every section open, as an admin who clicked them


def paste(at: AppTest, text: str) -> AppTest:
    [box] = [t for t in at.text_area if t.label == "Or paste the CSV here"]
    return box.input(text).run()


def buttons(at: AppTest) -> list[str]:
    return [b.label for b in at.button]


def click(at: AppTest, label: str) -> AppTest:
    [button] = [b for b in at.button if b.label == label]
    return button.click().run()


def user_count(db) -> int:
    return db.execute("SELECT COUNT(*) FROM users").fetchone()[0]


def test_a_file_with_problems_lists_them_and_offers_no_import(db, boss):
    at = open_accounts(boss)
    assert any("No email is sent by the workbench" in c.value for c in at.caption)
    at = paste(at, "name,role\nada,annotator\nAda,chief\nboss,\n")
    assert not at.exception
    [error] = at.error
    assert "Nothing can be imported from this file" in error.value
    assert "line 3, name: 'Ada' is on line 2 already" in error.value.replace("\\", "")
    assert "line 3, role: 'chief' is no role" in error.value.replace("\\", "")
    assert "line 4, name: 'boss' is already taken by an account" in error.value.replace("\\", "")
    assert not [b for b in buttons(at) if b.startswith("Import")]
    assert user_count(db) == 1


def test_preview_then_import_shows_each_link_once_with_a_csv_to_hand_out(db, boss):
    at = paste(open_accounts(boss), "name,role,studies\r\nada,annotator,\r\n\"bob\",researcher,\r\n")
    assert any("2 accounts would be made" in m.value for m in at.markdown)
    preview = at.dataframe[-1].value
    assert list(preview["name"]) == ["ada", "bob"] and list(preview["role"]) == ["annotator", "researcher"]
    assert user_count(db) == 1  # a preview writes nothing
    at = click(at, "Import 2 people")
    assert not at.exception and not at.error
    assert any("2 accounts made" in s.value for s in at.success)
    shown = at.dataframe[-1].value
    assert list(shown.columns) == ["name", "role", "studies", "link"]
    links = dict(zip(shown["name"], shown["link"]))
    for name, link in links.items():
        parts = urlsplit(link)
        assert (parts.scheme, parts.netloc, parts.path) == ("https", "lab.example.org", "/studio/")
        token = parse_qs(parts.query)["set_password"][0]
        assert password_links.link_user(db, token)["username"] == name
    # The download is the same name,link pairs (built from what the page shows).
    assert [d.label for d in at.get("download_button")] == ["Download name,link (CSV)"]
    rows = list(csv.reader(io.StringIO(people_import._links_csv(
        [{"name": n, "link": k} for n, k in links.items()]).decode())))
    assert rows == [["name", "link"], *[[n, k] for n, k in links.items()]]
    assert user_count(db) == 3
    # "Done" hides the links for good; the input boxes are empty again.
    at = click(at, "Done: hide the links")
    assert not [d for d in at.get("download_button")]
    assert [t.value for t in at.text_area if t.label == "Or paste the CSV here"] == [""]


def test_a_new_link_for_an_account_replaces_its_old_one(db, boss):
    ann = accounts.create_user(db, "ann1", "password-123", "annotator")
    old = password_links.new_password_link(db, ann["id"], by=boss)
    at = open_accounts(boss)
    at.selectbox(key="pi_link_user").set_value(ann["id"])
    at = [b for b in at.button if b.label == "Make a link"][0].click().run()
    [code] = at.code
    token = parse_qs(urlsplit(code.value).query)["set_password"][0]
    assert code.value.startswith("https://lab.example.org/studio/?set_password=")
    assert password_links.link_user(db, token)["id"] == ann["id"]
    with pytest.raises(password_links.LinkRefused):
        password_links.link_user(db, old)


# ------------------------------------------------------------------------------ the set-password screen
def imported(db, boss, name="ada") -> str:
    from structext_core.studio.accounts import bulk
    report = bulk.import_people(db, f"name\n{name}\n", by=boss, allowed_roles=bulk.IMPORT_ROLES)
    assert report.ok
    return report.created[0].token


def frame():
    """What app.py does before its navigation: restore the session, then the set-password screen when
    the address asks for it; else the sidebar's log-in, and a page. (app.py itself, run by AppTest,
    starts every run in Streamlit's legacy mode, whose rerun drops a form's submission: its first
    screen is checked through app.py below, the clicks here.)"""
    import streamlit as st

    from structext_core import ui
    from structext_core.ui import password_link

    ui.restore_session()
    password_link.take_over()
    with st.sidebar:
        if ui.current_user() is None:
            ui.login_form()
        else:
            ui.keep_cookie()
    st.write(f"Home of {ui.current_user()['username']}" if ui.current_user() else "Home")


def open_link(token: str) -> AppTest:
    at = AppTest.from_function(frame, default_timeout=60)
    at.query_params["set_password"] = token
    return at.run()


def test_app_py_shows_the_screen_alone_before_its_navigation(db, boss):
    token = imported(db, boss)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["set_password"] = token
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Choose your password"]
    assert [t.label for t in at.text_input] == ["New password", "Repeat the password"]
    assert not at.sidebar.text_input and not at.sidebar.button  # no log-in form, no menu
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["set_password"] = "made-up"
    at.run()
    assert [e.value for e in at.error] == [password_links.LINK_REFUSED] and not at.text_input


def test_the_link_sets_the_password_and_logs_the_person_in(db, boss):
    token = imported(db, boss)
    at = open_link(token)
    assert not at.exception
    assert [t.value for t in at.title] == ["Choose your password"]
    assert any("Your account: **ada**" in m.value for m in at.markdown)
    assert not at.sidebar.text_input  # no log-in form, no menu: the screen alone
    [new, repeat] = at.text_input
    new.input("a fine password")
    repeat.input("a fine password")
    at = click(at, "Set my password and log in")
    assert not at.exception
    assert at.session_state["user"]["username"] == "ada"
    assert "set_password" not in at.query_params
    assert "Choose your password" not in [t.value for t in at.title]
    assert accounts.log_in(db, "ada", "a fine password").user is not None
    assert accounts.verify_session(db, at.session_state["session_token"]).user["username"] == "ada"
    # The link is used: opened again, it says so and shows no form.
    again = open_link(token)
    assert [e.value for e in again.error] == [password_links.LINK_REFUSED]
    assert not again.text_input


def test_two_different_passwords_or_a_short_one_change_nothing(db, boss):
    token = imported(db, boss)
    at = open_link(token)
    [new, repeat] = at.text_input
    new.input("a fine password")
    repeat.input("another password")
    at = click(at, "Set my password and log in")
    assert "The two passwords differ" in at.error[0].value
    [new, repeat] = at.text_input
    new.input("short")
    repeat.input("short")
    at = click(at, "Set my password and log in")
    assert "Password is too short" in at.error[0].value
    assert "user" not in at.session_state
    assert password_links.link_user(db, token)["username"] == "ada"  # still usable


def test_an_unknown_link_says_one_thing_and_leads_to_the_log_in(db, boss):
    imported(db, boss)
    at = open_link("not-a-real-token")
    assert [e.value for e in at.error] == [password_links.LINK_REFUSED]
    assert "ada" not in at.error[0].value
    at = click(at, "Go to the log-in page")
    assert "set_password" not in at.query_params
    assert not at.exception
    assert [b.label for b in at.sidebar.button if b.label == "Log in"] == ["Log in"]


def test_links_start_with_the_public_address_when_one_is_set(db, boss, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_PUBLIC_URL", "https://people.example.org/lab/")
    at = click(paste(open_accounts(boss), "name\nada\n"), "Import 1 person")
    [link] = list(at.dataframe[-1].value["link"])
    assert link.startswith("https://people.example.org/lab/?set_password=")
    monkeypatch.setenv("STRUCTEXT_PUBLIC_URL", "not an address")
    at = click(at, "Done: hide the links")
    at = paste(at, "name\nbo\n")
    assert any("STRUCTEXT_PUBLIC_URL='not an address' must be a web address" in w.value for w in at.warning)
    at = click(at, "Import 1 person")
    [link] = list(at.dataframe[-1].value["link"])
    assert link.startswith("https://lab.example.org/studio/?set_password=")  # this browser's address


def test_accounts_first_view_is_one_line_and_its_sections_named_with_their_counts(db, boss):
    """Issue 46: Accounts drew the table of every account and every form on each visit (1.9 s in the
    browser with 300 people). Now it sends one line and closed sections, each named with what it holds;
    a section's content appears once it is opened, and the import's links, once made, keep theirs open."""
    for i in range(3):
        accounts.create_user(db, f"ann{i}", "password-123", "annotator")
    for _ in range(accounts.MAX_FAILED_LOGINS):
        accounts.log_in(db, "ann0", "a wrong password")
    at = AppTest.from_file(str(ACCOUNTS_PAGE), default_timeout=60)
    at.session_state["user"] = boss
    at.context["url"] = URL
    at.run()
    assert not at.exception and heavy(at) == {}
    assert at.markdown[0].value == "**4 active accounts: 3 annotators, 1 admin**"
    assert [e.label for e in at.expander] == [
        "Every account, with its role and status (4)", "Create an account", "Set a new password",
        "New set-password link", "Import people from CSV", "Disable, enable or delete an account",
        "Failed log-ins and locks: 1 account, 1 locked now", "Public read-only mode: off"]
    at.session_state["ac_list_open"] = True
    at.run()
    assert at.dataframe[0].value["username"].tolist() == ["ann0", "ann1", "ann2", "boss"]
    assert set(heavy(at)) == {"dataframe"}  # that section's table alone
    at.session_state["ac_import_open"] = True
    at = click(paste(at.run(), "name\nada\n"), "Import 1 person")
    at.session_state["ac_import_open"] = False  # closed by the admin before the links were handed out
    at.run()
    label = next(e.label for e in at.expander if e.label.startswith("Import people"))
    assert label == "Import people from CSV: links to hand out" and "?set_password=" in at.dataframe[-1].value["link"][0]
