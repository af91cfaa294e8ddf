"""People from a CSV, in Chromium (issue 45, item 6): an admin imports two people on *Accounts* and
downloads their ``name,link`` CSV; one of them opens their link in another browser on this fresh
server (its first visit: Streamlit's legacy first run), chooses a password, is logged in and stays
so after a reload; the link then says it cannot be used, and the other link still works once."""

from __future__ import annotations

import csv
import io

import pytest

from structext_core.studio import accounts, storage
from tests.browser.conftest import click_until

pytestmark = pytest.mark.browser


def test_an_imported_person_sets_their_password_by_link_and_is_logged_in(app_server, app_env, browser, page,
                                                                         wait_for_app):
    page.goto(app_server)
    wait_for_app(page, timeout=60_000)  # a fresh server's first page reads the suites
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill(app_env["admin_user"])
    sidebar.get_by_label("Password", exact=True).fill(app_env["admin_password"])
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text(f"Logged in as {app_env['admin_user']}").wait_for(timeout=60_000)
    wait_for_app(page)
    # CI at 70e8703: the click on the link landed while the run after the log-in drew the navigation again and
    # was lost (the server's list of requests had no page change): clicked again when nothing came of it
    click_until(page, sidebar.get_by_role("link", name="Accounts", exact=True),
                page.get_by_text("Import people from CSV").first)
    wait_for_app(page)
    page.get_by_text("Import people from CSV").first.click()  # a section drawn once it is opened (issue 46)
    page.get_by_label("Or paste the CSV here").wait_for(timeout=60_000)
    wait_for_app(page)
    assert page.get_by_text("No email is sent by the workbench").count() >= 1
    page.get_by_label("Or paste the CSV here").fill("name,role\r\nada,annotator\r\n\"bo\",researcher\r\n")
    page.keyboard.press("Control+Enter")
    wait_for_app(page)
    click_until(page, page.get_by_role("button", name="Import 2 people"), page.get_by_text("shown only now").first)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download name,link (CSV)").click()
    with open(download.value.path(), encoding="utf-8") as file:
        links = {row["name"]: row["link"] for row in csv.DictReader(io.StringIO(file.read()))}
    assert set(links) == {"ada", "bo"}
    assert all(link.startswith(f"{app_server}/?set_password=") for link in links.values()), links

    person = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = person.new_page()
        tab.goto(links["ada"])
        tab.get_by_text("Choose your password").first.wait_for(timeout=60_000)
        assert tab.get_by_text("Your account:").count() == 1 and tab.get_by_label("User name").count() == 0
        tab.get_by_label("New password").fill("ada's own password")
        tab.get_by_label("Repeat the password").fill("ada's own password")
        tab.get_by_role("button", name="Set my password and log in").click()
        tab.get_by_text("Logged in as").first.wait_for(timeout=60_000)
        wait_for_app(tab)
        assert "set_password" not in tab.url
        assert tab.get_by_text("Choose your password").count() == 0
        # The session cookie is written by a script in the page once the run is drawn.
        tab.wait_for_function("document.cookie.includes('structext_session=') && "
                              "!document.cookie.includes('structext_session=;')", timeout=15_000)
        tab.reload()
        tab.get_by_text("Logged in as").first.wait_for(timeout=60_000)
        tab.goto(links["ada"])
        tab.get_by_text("This set-password link cannot be used").first.wait_for(timeout=60_000)
        assert tab.get_by_label("New password").count() == 0
    finally:
        person.close()
    db = storage.open_db(app_env["db_path"])
    try:
        assert accounts.log_in(db, "ada", "ada's own password").user["username"] == "ada"
        assert accounts.log_in(db, "bo", "ada's own password").user is None  # bo's link is still to be used
    finally:
        db.conn.close()
