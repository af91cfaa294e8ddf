"""Regression (issue 35): a benchmark's own page lives in its package, not in ``pages/``. Streamlit's
legacy pages/ runner knows only that folder, so a fresh server's first visit on such a page's URL (a
bookmark of /pairwise) was "not found" and landed on Home. The served app (server.py) is no legacy
pages/ app: the first visit runs app.py's navigation, which opens the page the URL names."""

import pytest

from structext_core.studio import access


@pytest.mark.browser
def test_first_visit_on_a_benchmarks_page_url_opens_that_page(app_server, page, wait_for_app, screenshot):
    own = next(p for p in access.PAGES if p.file.startswith("/"))  # the first page a benchmark declares
    page.goto(f"{app_server}/{own.url_path}")  # this module's server has served nothing before
    wait_for_app(page)
    page.get_by_text("Benchmark", exact=True).wait_for()  # app.py's navigation section
    # the page's own guard ran, inside the frame, and the URL is still the page's
    page.get_by_text("You are not logged in: log in with the form in the sidebar").wait_for()
    assert page.url.rstrip("/").endswith(f"/{own.url_path}")
    assert page.get_by_text("Page not found").count() == 0
    screenshot(page, "direct-url-member-page")
