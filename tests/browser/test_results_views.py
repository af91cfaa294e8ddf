"""The Results page in a real browser: every view renders, with screenshots to look at.

Data: the same real scored results as the AppTest tests (generated samples, responses scored
by the core, a human study answered through the study API), written into this module's
server database before the first page load.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ERRORS, click_until, pick_option
from tests.results_data import build_dataset

READER, READER_PASSWORD = "reader", "reader-password-1"  # a researcher: sees every result


@pytest.fixture(scope="module")
def results_url(app_env, app_server):
    from structext_core.studio import accounts, storage

    build_dataset(Path(app_env["db_path"]).parent)
    accounts.create_user(storage.open_db(app_env["db_path"]), READER, READER_PASSWORD, "researcher")
    return app_server


def settle(page, wait_for_app):
    time.sleep(0.4)  # let the rerun start before waiting for it to finish
    wait_for_app(page)


def no_exception(page):
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]').first.inner_text()


def charts_drawn(page, count: int | None = None):
    """Wait until the page's Vega charts have drawn (a canvas or svg inside each)."""
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    charts.first.wait_for(state="visible")
    n = charts.count()
    for i in range(n):
        charts.nth(i).locator("canvas, svg").first.wait_for(state="attached")
    if count is not None:
        assert n == count
    return n


def heatmap_drawn(page):
    """Wait until the heatmap, a tinted table, has drawn its cells (and no chart library drew it); its cells."""
    cells = page.locator(".sx-hm td[data-cell]")
    cells.first.wait_for(state="visible")
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 0
    return cells


def choose(page, wait_for_app, label: str, option: str):
    pick_option(page, page.get_by_label(label, exact=True), page.get_by_role("option", name=option, exact=True))
    settle(page, wait_for_app)


def open_settings(page, wait_for_app):
    """Open the view's Settings box (its controls are drawn when it opens)."""
    # the closed box's header, clicked again if a run mounting it lost the click
    click_until(page, page.get_by_role("button", name="Settings", exact=True), page.get_by_text("Threshold", exact=True))
    settle(page, wait_for_app)


def shoot(page, screenshot, name):
    """Screenshot the whole page: Streamlit scrolls inside its main block, so the window is
    made as tall as the content first."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], section, div')]"
        ".map(e => e.scrollHeight))")
    page.set_viewport_size({"width": 1400, "height": min(max(900, int(height) + 40), 6000)})
    time.sleep(0.8)  # charts re-render at the new size
    return screenshot(page, name)


def open_results(page, url, wait_for_app):
    """The app's home, log in as a researcher, then Results from the navigation."""
    page.goto(url)
    wait_for_app(page, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill(READER)
    sidebar.get_by_label("Password", exact=True).fill(READER_PASSWORD)
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text(f"Logged in as {READER}").wait_for()
    wait_for_app(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Results", exact=True).click()
    page.get_by_role("heading", name="Results").first.wait_for()
    wait_for_app(page, timeout=60_000)
    no_exception(page)


def main_elements(page) -> list[str]:
    """The kind of each element of the page's main area, in order (Streamlit's test ids)."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')]
        .map((box) => (box.querySelector('[data-testid]') || box).getAttribute('data-testid'))""")


def test_imported_heatmap_and_drill_down(page, results_url, wait_for_app, screenshot):
    open_results(page, results_url, wait_for_app)
    heatmap_drawn(page)
    # the first view: the title, then the page's light elements and notes as one element, and the view's (a
    # fragment of its own) as another (structext_core/ui/light_panel.py; issue 46: each element costs the page)
    assert main_elements(page) == ["stHeading", "stBidiComponentIsolated", "stBidiComponentIsolated"]
    assert page.get_by_text("Samples behind a cell").is_visible()
    for label in ("PNG", "SVG", "CSV"):
        # (the Sources expander, still closed, holds another CSV button)
        assert page.locator("button.sxc-download:visible", has_text=label).count() >= 1, label
    shoot(page, screenshot, "results_heatmap_model_format")
    # the settings wait in a closed box, one line saying what they are
    assert page.get_by_text("Settings: strict ROUGE-L ≥ 0.75 · people pooled as").is_visible()
    assert page.get_by_text("Threshold", exact=True).count() == 0
    open_settings(page, wait_for_app)
    # the paper's ROUGE-L instead of ours: the title says so
    page.get_by_text("paper (the authors': the whole response)", exact=True).click()
    settle(page, wait_for_app)
    heatmap_drawn(page)
    no_exception(page)
    assert page.locator(".sx-hm").get_by_text("paper ROUGE-L ≥ 0.75 (%) by model and format").count()
    shoot(page, screenshot, "results_heatmap_paper_metric")
    page.get_by_text("strict (ours: the extracted answer)", exact=True).click()
    settle(page, wait_for_app)
    choose(page, wait_for_app, "Rows", "task category")
    choose(page, wait_for_app, "Columns", "depth")
    heatmap_drawn(page)
    no_exception(page)
    shoot(page, screenshot, "results_heatmap_task_depth")
    page.get_by_text("Samples behind a cell").click()  # a box drawn when opened (or when a cell is clicked)
    settle(page, wait_for_app)
    page.get_by_text("Full response").click()
    page.get_by_text("Reference (").click()
    time.sleep(0.5)
    shoot(page, screenshot, "results_drill_down")


#: Each view of the heatmap page: (its name in "View", its screenshot, the charts it draws).
VIEWS = [
    ("Depth x width (Fig. 4)", "results_fig4_depth_width", 2),
    ("People vs models (Fig. 7)", "results_fig7_people_vs_models", 1),
    ("Test vs Real-Test (Fig. 6)", "results_fig6_test_vs_real", 1),
    ("Metric correlation (Fig. 5)", "results_fig5_metric_correlation", 1),
    ("Compare two models", "results_compare_two_models", 1),
]
#: Each of the paper's tables and figures: (its name in "Table", its screenshot, its charts: a table is
#: drawn as a tinted table, the figure as a chart).
PAPER_TABLES = [
    ("Table 3: Test, by format", "results_paper_table3_formats", 0),
    ("Table 4: Test-Hard, models and humans", "results_paper_table4", 0),
    ("Table 6: Test-Hard, six metrics", "results_paper_table6", 0),
    ("Figure 5: metric correlation (from Table 6)", "results_paper_figure5", 1),
]


def test_each_view_and_each_paper_table_renders(page, results_url, wait_for_app, screenshot):
    """One researcher's session goes through every view, then every paper table: each draws its
    charts, raises nothing, and is photographed."""
    open_results(page, results_url, wait_for_app)
    for view, name, n_charts in VIEWS:
        choose(page, wait_for_app, "View", view)
        charts_drawn(page, n_charts)
        no_exception(page)
        shoot(page, screenshot, name)
        page.set_viewport_size({"width": 1400, "height": 900})
    page.get_by_text("Paper tables", exact=True).click()
    settle(page, wait_for_app)
    for table, name, n_charts in PAPER_TABLES:
        choose(page, wait_for_app, "Table", table)
        if n_charts:
            charts_drawn(page, n_charts)
        else:  # the printed numbers, each cell tinted
            cell = page.locator(".sx-table td[style*='background']").first
            cell.wait_for()
            assert cell.inner_text().strip().replace(".", "", 1).isdigit()
            assert page.locator('[data-testid="stVegaLiteChart"]').count() == 0
        no_exception(page)
        shoot(page, screenshot, name)
        page.set_viewport_size({"width": 1400, "height": 900})


def test_chart_downloads_are_png_and_svg(page, results_url, wait_for_app, tmp_path):
    """The heatmap is a table on the page and the Vega-Lite chart in its files."""
    open_results(page, results_url, wait_for_app)
    heatmap_drawn(page)
    for label, magic in (("PNG", b"\x89PNG\r\n\x1a\n"), ("SVG", b"<svg")):
        with page.expect_download(timeout=60_000) as info:
            # (not the chart toolbar's own "Download as PNG": our buttons under the chart)
            page.locator("button.sxc-download", has_text=label).first.click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        assert path.read_bytes().lstrip().startswith(magic), label
        assert path.name == f"heatmap_model_format_rouge_l_strict_t0.75.{label.lower()}"  # names its metric


def test_admin_bad_upload_names_the_line_and_imports_nothing(page, app_env, results_url, wait_for_app,
                                                            screenshot):
    from structext_core.studio import storage

    page.goto(results_url)
    wait_for_app(page, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill(app_env["admin_user"])
    sidebar.get_by_label("Password", exact=True).fill(app_env["admin_password"])
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text(f"Logged in as {app_env['admin_user']}").wait_for()
    wait_for_app(page)  # the log-in's run ends before the link is followed (a click during it can be lost)
    sidebar.get_by_role("link", name="Results", exact=True).click()
    page.get_by_role("heading", name="Results").wait_for()
    wait_for_app(page)
    before = storage.open_db(app_env["db_path"]).execute("SELECT COUNT(*) FROM results").fetchone()[0]
    page.get_by_text("Load results (admin)").click()
    bad = b'{"sample_id": "test-hard-t01-d1w1-000", "model": "m", "prompt": "naive", "response": "x"}\n{oops\n'
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": "bad.jsonl", "mimeType": "application/json", "buffer": bad}])
    settle(page, wait_for_app)
    page.get_by_role("button", name="Import uploaded files").click()
    settle(page, wait_for_app)
    alert = page.locator(ERRORS).first
    alert.wait_for()
    assert "bad.jsonl was not imported, nothing was stored" in alert.inner_text()
    assert "line 2: not valid JSON" in alert.inner_text()
    after = storage.open_db(app_env["db_path"]).execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert after == before
    shoot(page, screenshot, "results_admin_bad_upload")


def test_clicking_a_heatmap_cell_drills_into_it(page, results_url, wait_for_app, screenshot):
    open_results(page, results_url, wait_for_app)
    cells = heatmap_drawn(page)
    target = cells.nth(cells.count() - 1)  # the bottom-right cell: not the drill-down's default
    label = target.get_attribute("aria-label")  # each cell describes itself: "model: weak; format: json; ..."
    described = dict(part.split(": ", 1) for part in label.split("; "))
    target.click()
    settle(page, wait_for_app)
    expect(cells.nth(cells.count() - 1)).to_have_class("sx-hm-picked")  # outlined: the cell shown below
    no_exception(page)
    boxes = page.get_by_test_id("stSelectbox")
    row_box = boxes.filter(has=page.get_by_text("model", exact=True)).last
    col_box = boxes.filter(has=page.get_by_text("format", exact=True)).last
    shown = [box.inner_text() + " " + " ".join(i.input_value() for i in box.locator("input").all())
             for box in (row_box, col_box)]
    assert described["model"] in shown[0], shown
    assert described["format"] in shown[1], shown
    sample_box = boxes.filter(has=page.get_by_text("Sample", exact=True)).last
    sample_shown = sample_box.inner_text() + " ".join(i.input_value() for i in sample_box.locator("input").all())
    assert f" · {described['model']} · " in sample_shown, sample_shown  # regression: a stale label stayed
    shoot(page, screenshot, "results_heatmap_cell_clicked")


def test_leaderboard_renders_and_downloads_its_csv(page, results_url, wait_for_app, screenshot, tmp_path):
    open_results(page, results_url, wait_for_app)
    choose(page, wait_for_app, "View", "Leaderboard")
    no_exception(page)
    page.get_by_test_id("stDataFrame").last.wait_for(state="visible")
    assert page.get_by_text("Leaderboard: strict ROUGE-L ≥ 0.75 (%), on the 12 items answered by human").is_visible()
    assert "view=leaderboard" in page.url  # the address carries the view
    shoot(page, screenshot, "results_leaderboard")
    with page.expect_download(timeout=60_000) as info:
        page.locator("button.sxc-download", has_text="CSV").last.click()
    assert info.value.suggested_filename == "leaderboard_rouge_l_strict_t0.75.csv"
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    header = path.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("metric,threshold,on_items,rank,model,prompt,who,mean_rouge_l_strict_t0.75,")


def test_a_shared_address_reopens_the_view_after_logging_in(page, results_url, wait_for_app, screenshot):
    """A visitor opens a researcher's link (leaderboard, exact match, every item, minimum n 20),
    logs in, and gets that view."""
    open_results(page, results_url, wait_for_app)
    base = page.url.split("?")[0]
    page.goto(f"{base}?view=leaderboard&metric=exact_match&items=all&min_n=20&board=n&view_typo=1")
    wait_for_app(page, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    if sidebar.get_by_label("User name", exact=True).count():  # a new session: log in again
        sidebar.get_by_label("User name", exact=True).fill(READER)
        sidebar.get_by_label("Password", exact=True).fill(READER_PASSWORD)
        sidebar.get_by_role("button", name="Log in").click()
        sidebar.get_by_text(f"Logged in as {READER}").wait_for()
        wait_for_app(page, timeout=60_000)
    no_exception(page)
    page.get_by_text("Leaderboard: Exact match (%)", exact=True).wait_for()
    note = page.get_by_text("unknown parameter 'view_typo'")
    note.wait_for()  # in the view's panel, drawn when its run ends: after the leaderboard's heading, maybe
    assert note.count() == 1  # a small note, no crash
    assert "minimum n 20" in page.get_by_text("Settings: Exact match · ").inner_text()
    open_settings(page, wait_for_app)
    expect(page.get_by_label("Minimum n", exact=True)).to_have_value("20")
    assert "min_n=20" in page.url and "view_typo" not in page.url  # the address now holds what was understood
    shoot(page, screenshot, "results_shared_address")
