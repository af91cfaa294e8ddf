"""AIBench on the Results page in a real browser: the paper's tables and a stored set's results
render, with screenshots to look at (tests/screenshots/aibench_*.png)."""
from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.aibench import people_data
from tests.browser.test_results_views import choose, heatmap_drawn, no_exception, settle, shoot

READER, READER_PASSWORD = "aib-reader", "reader-password-1"  # a researcher


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """The shared app environment plus a stored synthetic AIBench set of 2 papers (made here,
    so the server does not make its 20-paper set on first view)."""
    from structext_core.aibench import config as aibench_config
    from structext_core.aibench import store as aibench_store
    from structext_core.studio import accounts, sandbox, storage

    root = tmp_path_factory.mktemp("aibench") / "aibench"
    app_env["env"][aibench_config.DIR_ENV] = str(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(aibench_config.DIR_ENV, str(root))
        patch.setattr(aibench_store, "SYNTHETIC_PAPERS", 2)
        pool = sandbox.WorkerPool(workers=1)
        try:
            aibench_store.add_reference_predictions(pool)
        finally:
            pool.shutdown()
    db = storage.open_db(app_env["db_path"])
    accounts.create_user(db, READER, READER_PASSWORD, "researcher")
    with pytest.MonkeyPatch.context() as patch:  # AIBench's human side: an image study and pairwise votes
        patch.setenv(aibench_config.DIR_ENV, str(root))
        app_env["people"] = people_data.people_and_votes(db, aibench_store.SYNTHETIC)
    db.conn.close()
    return app_env


def open_aibench(page, url, wait_for_app, user=READER, password=READER_PASSWORD):
    page.goto(url)
    wait_for_app(page, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill(user)
    sidebar.get_by_label("Password", exact=True).fill(password)
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text(f"Logged in as {user}").wait_for()
    wait_for_app(page)
    sidebar.get_by_role("link", name="Results", exact=True).click()
    page.get_by_role("heading", name="Results").first.wait_for()
    wait_for_app(page, timeout=60_000)
    choose(page, wait_for_app, "Benchmark", "AIBench")
    no_exception(page)


def test_aibench_results_render(page, app_server, wait_for_app, screenshot):
    open_aibench(page, app_server, wait_for_app)
    page.get_by_role("heading", name="The AIBench paper's tables").wait_for()
    page.get_by_role("heading", name="Results on stored data sets").wait_for()
    heatmap_drawn(page)  # a tinted table
    page.locator('.sx-table table').first.wait_for()  # the paper's table (a few rows: a plain HTML table)
    # Table 3: a plain table too, each short heading's full name as its title (shown on pointing at it)
    expect(page.locator('.sx-table th[title^="C · Component Existence"]')).to_have_text("C")
    expect(page.locator('.sx-table th', has_text="O 95%")).to_have_count(1)
    shoot(page, screenshot, "aibench_results")
    choose(page, wait_for_app, "Heatmap", "system x kind of question")
    expect(page.locator(".sx-hm-title")).to_contain_text("system x kind of question")
    heatmap_drawn(page)
    page.get_by_text("Questions behind a cell").click()  # a box drawn when opened
    wait_for_app(page)
    choose(page, wait_for_app, "System", "Garbled Label")
    page.locator('[data-testid="stImage"] img').first.wait_for()
    no_exception(page)
    shoot(page, screenshot, "aibench_kinds_and_drill_down")


def test_aibench_paper_table2_renders(page, app_server, wait_for_app, screenshot):
    open_aibench(page, app_server, wait_for_app)
    choose(page, wait_for_app, "Table", "Table 2: aesthetic metrics and the human rank")
    page.get_by_text("Spearman's rho takes only 21 values", exact=False).wait_for()
    settle(page, wait_for_app)
    time.sleep(0.5)
    no_exception(page)
    shoot(page, screenshot, "aibench_table2")


def test_the_lead_reads_the_human_side_and_sends_a_question_back(page, app_server, app_env, wait_for_app, screenshot):
    """Admin: people beside the solvers, the disagreement on the original figure, the human rank;
    the question goes back to review."""
    from structext_core.aibench import question_review as qr
    from structext_core.studio import storage

    open_aibench(page, app_server, wait_for_app, app_env["admin_user"], app_env["admin_password"])
    page.get_by_text("Show people beside the solvers and the pairwise human rank").click()
    time.sleep(0.4)
    wait_for_app(page, timeout=120_000)  # the first human rank: 500 bootstrap fits
    page.get_by_role("heading", name="People beside the solvers").wait_for()
    page.get_by_role("heading", name="The human rank (blind pairwise comparison)").wait_for()
    page.get_by_text("Kendall's W").first.wait_for()
    no_exception(page)
    shoot(page, screenshot, "aibench_people")
    page.get_by_label("Reason (the reviewer reads it beside the question)").fill("people and the solver dispute the key")
    page.get_by_role("button", name="Send back to review").click()
    settle(page, wait_for_app)
    page.get_by_text("sent back to expert review", exact=False).wait_for()
    no_exception(page)
    with storage.opened(app_env["db_path"]) as db:
        (sent,) = qr.sendbacks(db)
    assert (sent["paper_id"], sent["question_id"]) == (app_env["people"]["paper"], app_env["people"]["q1"])
