"""Regression: the first visit of a fresh server on a page's URL ran that page without
app.py (Streamlit's legacy pages/ mode), so the navigation and the log-in were missing."""

import pytest


@pytest.mark.browser
def test_first_visit_on_a_page_url_gets_the_frame(app_server, page, wait_for_app, screenshot):
    asked = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(app_server + "/explore")  # this module's server has served nothing before
    wait_for_app(page)
    # Told where the server is (structext_core/ui/page_base.py), the page asks the root's health
    # check at once, not /explore/_stcore/health first (a 404, then 0.1 s of Streamlit's retry delay).
    health = [url.removeprefix(app_server) for url in asked if url.endswith("/_stcore/health")]
    assert health == ["/_stcore/health"], health
    assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == app_server + "/"
    page.get_by_text("Benchmark", exact=True).wait_for()  # app.py's navigation section
    # The page's own guard ran inside the frame: Explore is for researchers and admins.
    page.get_by_text("You are not logged in: log in with the form in the sidebar").wait_for()
    assert page.get_by_role("heading", name="Explore samples").count() == 0
    assert page.get_by_text("Log in", exact=True).count() >= 1  # the frame's log-in form
    sidebar = page.locator('[data-testid="sxNav"]').inner_text()
    assert "app" not in sidebar.split() and "Results" in sidebar and "Explore" not in sidebar
    # the menu's links are the pages' addresses under the server's root, not under the page opened (/explore)
    assert page.get_by_test_id("sxNav").get_by_role("link", name="Results", exact=True).get_attribute("href") == "/results"
    screenshot(page, "direct-url-explore")


@pytest.mark.browser
def test_a_refused_page_says_why_to_someone_logged_in(app_server, app_env, page, wait_for_app, screenshot):
    """Issue 45: a researcher opening the study pages must not be sent to Home without a word. Hidden from
    their menu, the page keeps its URL and its guard says who it is for; a lead is refused Accounts alike."""
    from structext_core.studio import access, accounts, storage

    db = storage.open_db(app_env["db_path"])
    for name, role in (("reader", "researcher"), ("pi", "lead")):
        accounts.create_user(db, name, "password-123", role)
    cases = {"reader": ("study_admin", "adjudication"), "pi": ("accounts",)}
    for name, keys in cases.items():
        page.context.clear_cookies()
        page.goto(app_server)
        wait_for_app(page)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_label("User name", exact=True).fill(name)
        sidebar.get_by_label("Password", exact=True).fill("password-123")
        sidebar.get_by_role("button", name="Log in").click()
        sidebar.get_by_text(f"Logged in as {name}").wait_for()
        wait_for_app(page)
        # The log-in reaches a new tab (a typed URL is a new session) by the cookie the page writes.
        for _ in range(100):
            if any(c["name"] == "structext_session" and c["value"] for c in page.context.cookies()):
                break
            page.wait_for_timeout(100)
        for key in keys:
            info = access.page(key)
            page.goto(f"{app_server}/{info.url_path}")
            wait_for_app(page)
            role = "researcher" if name == "reader" else "lead"
            page.get_by_text(access.refusal({"username": name, "role": role}, key)).wait_for()
            assert page.url.rstrip("/").endswith(f"/{info.url_path}")  # not sent to Home
            assert page.get_by_text("Page not found").count() == 0
            assert info.title not in page.get_by_test_id("sxNav").inner_text().split("\n")
        screenshot(page, f"direct-url-refused-{name}")
