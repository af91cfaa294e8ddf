"""Regression: the first visit of a fresh server on a page's URL ran that page without
app.py (Streamlit's legacy pages/ mode), so the navigation and the log-in were missing."""

import pytest


@pytest.mark.browser
def test_first_visit_on_a_page_url_gets_the_frame(app_server, page, wait_for_app, screenshot):
    page.goto(app_server + "/explore")  # this module's server has served nothing before
    wait_for_app(page)
    page.get_by_text("Benchmark", exact=True).wait_for()  # app.py's navigation section
    # The page's own guard ran inside the frame: Explore is for researchers and admins.
    page.get_by_text("You are not logged in: log in with the form in the sidebar").wait_for()
    assert page.get_by_role("heading", name="Explore samples").count() == 0
    assert page.get_by_text("Log in", exact=True).count() >= 1  # the frame's log-in form
    sidebar = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "app" not in sidebar.split() and "Results" in sidebar and "Explore" not in sidebar
    screenshot(page, "direct-url-explore")
