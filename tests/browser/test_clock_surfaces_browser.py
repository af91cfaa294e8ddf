"""The one honest clock (structext_core/studio/clock.py) on its three surfaces, in a real browser
against a real server: study answering, pairwise voting and question review. The same checks on
each: it runs, a hidden tab stops it (that time is away), a reload keeps it, a second tab never
counts twice (where one tab holds the item, the first tab is told and stops showing it), and no
input pauses it by itself. Screenshots: tests/screenshots/clock-surface-*.png.

The server runs with test_clock_browser.py's fast clock (1 s heartbeat, 15 s idle pause); that
module goes deeper into study answering. This one has a server of its own: a stored AIBench set
beside a study.
"""

from __future__ import annotations

import re
import time

import pytest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from tests.browser.conftest import clock_seconds, stored_synthetic_aibench
from tests.browser.test_clock_browser import (
    GRACE,
    HEARTBEAT_SECONDS,
    IDLE_PAUSE_SECONDS,
    PASSWORD,
    set_tab_visibility,
    sidebar,
    wait_until,
)
from tests.browser.test_results_views import no_exception

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """conftest's server environment with a fast clock, and one person per surface: ann1 in a study
    of three questions, pw1 in a pairwise study over a stored synthetic AIBench set, qr1 reviewing
    that set's papers (lead qlead)."""
    from structext_core.aibench import pairwise
    from structext_core.aibench import question_review as qr

    app_env["env"].update(STRUCTEXT_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
                          STRUCTEXT_IDLE_PAUSE_SECONDS=str(IDLE_PAUSE_SECONDS))
    with stored_synthetic_aibench(app_env, tmp_path_factory, 3, predictions=True):
        db = storage.open_db(app_env["db_path"])
        accounts.create_user(db, app_env["admin_user"], app_env["admin_password"], "admin")
        annotator = accounts.create_user(db, "ann1", PASSWORD, "annotator")
        samples = [suites.generate_sample(task_id, 2, 2, suite="clock", index=index)
                   for index, task_id in enumerate((5, 6, 7))]
        study_id = structext_study.create_study(db, name="clock-study", suite="clock", samples=samples, n_items=3,
                                      annotator_ids=[annotator["id"]])
        study.accept_rule(db, study_id, annotator["id"])
        voter = accounts.create_user(db, "pw1", PASSWORD, "annotator")
        pairwise.create_study(db, "clock pairs", "synthetic", [voter["id"]], n_pairs=4, practice=0,
                              repeat_share=0.0, seed=2)
        lead = accounts.create_user(db, "qlead", "lead-password-1", "admin")
        reviewer = accounts.create_user(db, "qr1", PASSWORD, "annotator")
        qr.create_campaign(db, "clock review", "synthetic", [reviewer["id"]], lead, double_share=0)
        app_env["users"] = {"study": annotator["id"], "pairwise": voter["id"], "question_review": reviewer["id"]}
        db.close()
    return app_env


# ---------------------------------------------------------------- the same clock on three surfaces

#: Per surface: who uses it, the page's link and heading, the clock row of the person's open item,
#: whether one tab holds the item (a second tab takes it over), whether its time ticks in the browser
#: (the clock component; question review shows the time of its last heartbeat) and what a paused page says.
SURFACES = {
    "study": dict(user="ann1", link="Human baseline", heading="Human baseline", held=True, ticks=True,
                  paused=re.compile(r"Paused: question \d+ of 3"),
                  row="SELECT a.* FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                      " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1"),
    "pairwise": dict(user="pw1", link="Pairwise comparison", heading="Pairwise comparison", held=True, ticks=True,
                     paused=re.compile(r"Paused: the clock is stopped"),
                     row="SELECT t.* FROM pairwise_tasks t WHERE t.user_id = ? AND NOT EXISTS"
                         " (SELECT 1 FROM pairwise_votes v WHERE v.task_id = t.id) ORDER BY t.position LIMIT 1"),
    "question_review": dict(user="qr1", link="AIBench question review", heading="AIBench question review",
                            held=False, ticks=False, paused=re.compile(r"Paused\. The paper is hidden"),
                            row="SELECT * FROM qreview_items WHERE reviewer_id = ? ORDER BY id LIMIT 1"),
}
TAKEN_OVER = re.compile(r"(question|pair) is open in another tab")


def open_surface(page, base_url, surface: dict, wait_for_app) -> None:
    """Log in as the surface's person (unless the session is kept) and open its page."""
    page.goto(base_url)
    wait_for_app(page, timeout=60_000)
    logged_in = sidebar(page).get_by_text(f"Logged in as {surface['user']}")
    logged_in.or_(sidebar(page).get_by_role("button", name="Log in")).first.wait_for()
    if not logged_in.count():
        sidebar(page).get_by_label("User name", exact=True).fill(surface["user"])
        sidebar(page).get_by_label("Password", exact=True).fill(PASSWORD)
        sidebar(page).get_by_role("button", name="Log in").click()
        logged_in.wait_for()
        wait_for_app(page)
    sidebar(page).get_by_role("link", name=surface["link"], exact=True).click()
    page.get_by_role("heading", name=surface["heading"]).wait_for()
    wait_for_app(page)


def no_error(page) -> None:
    """Neither a Streamlit exception nor the app's own error box ('Something went wrong (error ...)')."""
    no_exception(page)
    main = page.get_by_test_id("stMain").inner_text()
    assert "Something went wrong" not in main, main


def surface_row(db_path, surface: dict, user_id: int) -> dict:
    db = storage.open_db(db_path)
    row = next(db.query(surface["row"], [user_id]))
    db.close()
    return row


@pytest.mark.parametrize("name", list(SURFACES))
def test_the_clock_on_each_surface(name, app_server, app_env, page, wait_for_app, screenshot):
    surface, server, user_id = SURFACES[name], app_server, app_env["users"][name]

    def row():
        return surface_row(app_env["db_path"], surface, user_id)

    open_surface(page, server, surface, wait_for_app)
    # It runs while the item is on screen.
    wait_until(lambda: (row()["active_seconds"] or 0) >= 3, 20, f"{name}: the clock did not run")
    first_shown = row()["first_shown_at"]
    no_error(page)
    screenshot(page, f"clock-surface-{name}")
    # A hidden tab stops it: the hidden time is away time.
    set_tab_visibility(page, hidden=True)
    wait_until(lambda: row()["hidden_at"] is not None, 10, f"{name}: the page did not report that it was hidden")
    active = row()["active_seconds"]
    on_screen = clock_seconds(page) if surface["ticks"] else None
    time.sleep(5)
    assert row()["active_seconds"] <= active + GRACE  # nothing counted while hidden
    if surface["ticks"]:  # and the time on screen (it ticks in the browser) stands too
        assert clock_seconds(page) <= on_screen + 1
    set_tab_visibility(page, hidden=False)
    wait_until(lambda: row()["hidden_at"] is None, 10, f"{name}: the page did not report that it was visible")
    assert row()["away_seconds"] >= 4
    wait_until(lambda: row()["active_seconds"] >= active + 2, 10, f"{name}: the clock did not run on")
    # A reload keeps the clock: the same item, the same start, the time so far.
    before = row()["active_seconds"]
    page.reload()
    open_surface(page, server, surface, wait_for_app)
    wait_until(lambda: row()["active_seconds"] >= before + 1, 15, f"{name}: the clock did not run after the reload")
    assert row()["first_shown_at"] == first_shown
    # A second tab: one timeline, never counted twice; where one tab holds the item, the first
    # tab is told and stops showing it.
    second = page.context.new_page()
    start, wall = row()["active_seconds"], time.monotonic()
    open_surface(second, server, surface, wait_for_app)
    if surface["held"]:
        page.get_by_text(TAKEN_OVER).first.wait_for(timeout=10_000)
        wait_for_app(page)
        screenshot(page, f"clock-surface-{name}-taken-over")
    time.sleep(3)
    assert row()["active_seconds"] - start <= time.monotonic() - wall + GRACE
    page.close()
    # No input pauses it by itself, and the time since the last input is booked as idle (less any
    # gap over the grace a loaded machine left between heartbeats: that is away).
    second.get_by_text(surface["paused"]).wait_for(timeout=(IDLE_PAUSE_SECONDS + 20) * 1000)
    wait_for_app(second)
    no_error(second)
    screenshot(second, f"clock-surface-{name}-idle-paused")
    paused = row()
    assert paused["paused_at"] is not None and paused["idle_seconds"] > 0  # only an idle pause books idle time
