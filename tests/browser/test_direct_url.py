"""Regression: the first visit of a fresh server on a page's URL ran that page without
app.py (Streamlit's legacy pages/ mode), so the navigation and the log-in were missing."""

import pytest


@pytest.mark.browser
def test_first_visit_on_a_page_url_gets_the_frame(app_server, page, wait_for_app, screenshot):
    page.goto(app_server + "/explore")  # this module's server has served nothing before
    wait_for_app(page)
    page.get_by_text("Benchmark", exact=True).wait_for()  # app.py's navigation section
    assert page.get_by_role("heading", name="Explore samples").count() == 1
    assert page.get_by_text("Log in", exact=True).count() >= 1  # the frame's log-in form
    sidebar = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "app" not in sidebar.split() and "Explore" in sidebar
    screenshot(page, "direct-url-explore")
