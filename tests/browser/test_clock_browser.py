"""The honest clock and nothing lost, in a real browser against a real server.

The server runs with a 1 s heartbeat (so a gap of more than 2.5 s counts as away) and a
15 s idle auto-pause. Each test is one annotator of one study, set up in the database
before the server starts. What the browser shows is checked on the page (and in
screenshots, tests/screenshots/clock-*.png); what the clock counted is read from the
database.
"""

from __future__ import annotations

import re
import time

import pytest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from tests.browser.conftest import clock_seconds

pytestmark = pytest.mark.browser

PASSWORD = "annotator-pw-1"
HEARTBEAT_SECONDS = 1
# Input is reported at most every 10 s (watches.ACTIVITY_REPORT_MS): 15 s left 5 s for a report to reach the
# server, which a loaded CI machine once missed (the question paused under a moving mouse); 300 s in use.
IDLE_PAUSE_SECONDS = 25
GRACE = study.GRACE_FACTOR * HEARTBEAT_SECONDS


@pytest.fixture(scope="module")
def app_env(app_env):
    """conftest's server environment, with a fast clock."""
    app_env["env"].update(STRUCTEXT_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
                          STRUCTEXT_IDLE_PAUSE_SECONDS=str(IDLE_PAUSE_SECONDS))
    return app_env


@pytest.fixture(scope="module")
def world(app_env) -> dict:
    """Annotators ann1..ann7 in one open study of three questions (written before the server starts)."""
    db = storage.open_db(app_env["db_path"])
    accounts.create_user(db, app_env["admin_user"], app_env["admin_password"], "admin")
    annotators = {f"ann{i}": accounts.create_user(db, f"ann{i}", PASSWORD, "annotator") for i in range(1, 8)}
    samples = [suites.generate_sample(task_id, 2, 2, suite="clock", index=index)
               for index, task_id in enumerate((5, 6, 7, 9, 19, 21))]
    study_id = structext_study.create_study(db, name="clock-study", suite="clock", samples=samples, n_items=3,
                                  annotator_ids=[a["id"] for a in annotators.values()])
    for annotator in annotators.values():
        study.accept_rule(db, study_id, annotator["id"])
    return {"db_path": app_env["db_path"], "study_id": study_id, "annotators": annotators}


@pytest.fixture
def server(world, app_server) -> str:
    return app_server


# ---------------------------------------------------------------- helpers


def sidebar(page):
    return page.get_by_test_id("stSidebar")


def open_question_page(page, base_url, username, wait_for_app) -> None:
    """Go to Human baseline as ``username``, logging in when the session is not kept."""
    page.goto(f"{base_url}/human_baseline")
    wait_for_app(page)
    not_found = page.get_by_role("dialog").filter(has_text="Page not found")
    if not_found.count():
        page.keyboard.press("Escape")
        not_found.wait_for(state="detached")
    logged_in = sidebar(page).get_by_text(f"Logged in as {username}")
    logged_in.or_(sidebar(page).get_by_role("button", name="Log in")).first.wait_for()
    if not logged_in.count():
        sidebar(page).get_by_label("User name", exact=True).fill(username)
        sidebar(page).get_by_label("Password", exact=True).fill(PASSWORD)
        sidebar(page).get_by_role("button", name="Log in").click()
        logged_in.wait_for()
        sidebar(page).get_by_role("link", name="Human baseline", exact=True).click()
    page.get_by_role("heading", name="Human baseline").wait_for()
    wait_for_app(page)


def shown_question(page) -> str:
    return page.get_by_test_id("sxaText").first.inner_text()


def current(db_path, user_id) -> dict:
    db = storage.open_db(db_path)
    row = next(db.query(
        "SELECT a.*, json_extract(i.sample_json, '$.question') AS question FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id LEFT JOIN responses r ON r.assignment_id = a.id"
        " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1", [user_id]))
    db.close()
    return row


def wait_until(condition, timeout: float, message: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(message)


def reads_the_question(page, question: str) -> bool:
    """The reference or the question is on the page."""
    return page.get_by_test_id("sxPreformatted").count() > 0 or question in page.get_by_test_id("stMain").inner_text()


# ---------------------------------------------------------------- tests


def test_reload_mid_answer_keeps_the_question_the_clock_and_the_typed_text(
    server, world, page, wait_for_app, screenshot
):
    user_id = world["annotators"]["ann1"]["id"]
    open_question_page(page, server, "ann1", wait_for_app)
    question = shown_question(page)
    answer = page.get_by_label("Your answer")
    # Typed key by key, never leaving the box (no blur, no Ctrl+Enter): Streamlit itself
    # has not seen a character of it.
    answer.press_sequentially("The path is q->w->z", delay=40)
    wait_until(lambda: current(world["db_path"], user_id)["draft"] == "The path is q->w->z", 10,
               "the text typed so far was not saved as a draft within 10 s")
    wait_until(lambda: clock_seconds(page) >= 6, 15, "the clock did not run")
    screenshot(page, "clock-1-typed-before-reload")
    before = clock_seconds(page)
    booked = current(world["db_path"], user_id)["active_seconds"]  # what the server holds at the reload
    reloaded_at = time.monotonic()
    page.reload()
    open_question_page(page, server, "ann1", wait_for_app)
    page.get_by_label("Your answer").wait_for()
    assert shown_question(page) == question
    assert page.get_by_label("Your answer").input_value() == "The path is q->w->z"
    after = clock_seconds(page)
    # The same clock, not restarted: what was booked stays. The seconds the page showed beyond it
    # (up to the grace after the last heartbeat) are active only if the reloaded page is heard from
    # within the grace; a slower reload (a loaded machine) books that gap as away.
    assert booked >= 3 and int(booked) <= after <= before + (time.monotonic() - reloaded_at) + 2, (booked, before, after)
    screenshot(page, "clock-2-after-reload")
    # And it still ticks.
    wait_until(lambda: clock_seconds(page) >= after + 2, 10, "the clock stopped after the reload")


def test_a_second_tab_takes_over_and_the_first_stops_showing_the_question(
    server, world, page, wait_for_app, screenshot
):
    open_question_page(page, server, "ann2", wait_for_app)
    question = shown_question(page)
    assert reads_the_question(page, question)
    second = page.context.new_page()  # the same browser: another tab of the same annotator
    open_question_page(second, server, "ann2", wait_for_app)
    second.get_by_test_id("sxPreformatted").wait_for()  # the reference may land a moment after the question
    assert shown_question(second) == question and second.get_by_test_id("sxPreformatted").count() == 1
    page.get_by_text("This question is open in another tab").wait_for(timeout=10_000)
    wait_for_app(page)
    assert not reads_the_question(page, question)
    screenshot(page, "clock-3-first-tab-taken-over")
    screenshot(second, "clock-4-second-tab-reading")
    # "Continue here" takes it back; now the second tab hides it.
    page.get_by_role("button", name="Continue here").click()
    page.get_by_label("Your answer").wait_for()
    assert shown_question(page) == question
    second.get_by_text("This question is open in another tab").wait_for(timeout=10_000)
    wait_for_app(second)
    assert not reads_the_question(second, question)
    second.close()


def test_pause_hides_the_question_in_both_tabs(server, world, page, wait_for_app, screenshot):
    """The exploit of the issue: pause in one tab, keep reading in another. Not any more."""
    user_id = world["annotators"]["ann3"]["id"]
    open_question_page(page, server, "ann3", wait_for_app)
    question = shown_question(page)
    second = page.context.new_page()
    open_question_page(second, server, "ann3", wait_for_app)
    page.get_by_text("This question is open in another tab").wait_for(timeout=10_000)
    second.get_by_role("button", name="Pause").click()
    second.get_by_text(re.compile(r"Paused: question 1 of 3")).wait_for()
    paused_at = current(world["db_path"], user_id)["paused_at"]
    assert paused_at is not None
    # The first tab asks for the question back: it is paused, so there is nothing to read.
    page.get_by_role("button", name="Continue here").click()
    page.get_by_text(re.compile(r"Paused: question 1 of 3")).wait_for()
    wait_for_app(page)
    for tab in (page, second):
        assert not reads_the_question(tab, question)
    third = page.context.new_page()
    open_question_page(third, server, "ann3", wait_for_app)
    third.get_by_text(re.compile(r"Paused: question 1 of 3")).wait_for()
    assert not reads_the_question(third, question)
    screenshot(page, "clock-5-paused-first-tab")
    screenshot(second, "clock-6-paused-second-tab")
    time.sleep(3)
    row = current(world["db_path"], user_id)
    assert row["paused_at"] == paused_at  # nothing restarted the clock
    # Resuming in one tab moves the question there; the others hide it.
    third.get_by_role("button", name="Resume").click()
    third.get_by_label("Your answer").wait_for()
    assert shown_question(third) == question
    for tab in (page, second):
        tab.get_by_text("This question is open in another tab").wait_for(timeout=10_000)
        wait_for_app(tab)
        assert not reads_the_question(tab, question)
    assert current(world["db_path"], user_id)["paused_seconds"] >= 3
    second.close()
    third.close()


def test_closing_the_tab_stops_the_clock(server, world, browser, wait_for_app):
    user_id = world["annotators"]["ann4"]["id"]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    open_question_page(tab, server, "ann4", wait_for_app)
    wait_until(lambda: clock_seconds(tab) >= 4, 15, "the clock did not run")
    shown = clock_seconds(tab)
    context.close()  # the tab (and the browser window) closed
    closed_at = study.now()
    time.sleep(10)
    row = current(world["db_path"], user_id)
    assert row["last_beat_at"] <= closed_at + 0.5  # no heartbeat after the close
    clock_now = study.shown_seconds(row, GRACE, study.now())
    assert clock_now == row["active_seconds"]  # stopped at the last heartbeat ...
    # ... with the time it was open: what the screen showed, less at most the grace (the screen
    # runs on from the server's last reply for up to that long, as the server would count a
    # heartbeat arriving within it) and the time a heartbeat takes to arrive.
    assert shown - GRACE - 0.5 <= clock_now <= closed_at - row["first_shown_at"] + 0.5
    # Reopened: the same clock, and the 10 s away are not in it.
    # (The clock runs again from the moment the question is back on screen: on a loaded machine,
    # seconds before open_question_page returns.)
    reopening = time.monotonic()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    open_question_page(tab, server, "ann4", wait_for_app)
    assert clock_seconds(tab) <= clock_now + (time.monotonic() - reopening) + 1
    row = current(world["db_path"], user_id)
    assert row["away_seconds"] >= 9
    context.close()


def test_no_input_pauses_the_question_by_itself(server, world, page, wait_for_app, screenshot):
    user_id = world["annotators"]["ann5"]["id"]
    open_question_page(page, server, "ann5", wait_for_app)
    # Input (mouse, scrolling, keys) keeps it running past the idle time ...
    started = time.monotonic()
    while time.monotonic() - started < IDLE_PAUSE_SECONDS + 6:
        page.mouse.move(300 + (time.monotonic() % 7) * 20, 400)
        page.mouse.wheel(0, 40)
        time.sleep(2)
    assert page.get_by_label("Your answer").count() == 1
    assert current(world["db_path"], user_id)["paused_at"] is None
    # ... and none pauses it, with the reason recorded.
    page.get_by_text(re.compile(r"Paused: question 1 of 3")).wait_for(timeout=(IDLE_PAUSE_SECONDS + 20) * 1000)
    page.get_by_text("It paused by itself").wait_for()
    wait_for_app(page)
    screenshot(page, "clock-7-idle-paused")
    row = current(world["db_path"], user_id)
    db = storage.open_db(world["db_path"])
    assert db.execute("SELECT reason FROM pauses WHERE assignment_id = ?", [row["id"]]).fetchall() == [("idle",)]
    assert row["idle_seconds"] >= IDLE_PAUSE_SECONDS - 1
    db.close()


def set_tab_visibility(page, hidden: bool) -> None:
    """What the browser does when another tab or window comes in front (or goes away)."""
    page.evaluate(
        """hidden => {
            Object.defineProperty(document, "hidden", {value: hidden, configurable: true});
            Object.defineProperty(document, "visibilityState",
                                  {value: hidden ? "hidden" : "visible", configurable: true});
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        hidden,
    )


# What Streamlit does when it runs a component drawing's cleanup with no newer drawing to take
# its place (seen on fresh clones: the clock and activity hubs lost their setStateValue while
# their elements stayed on the page, so a taken-over tab never changed).
CLEANUP_WITHOUT_REDRAW = """() => {
    for (const hub of [window.__structextClock, window.__structextActivity]) hub.detach(hub.owner);
    return [window.__structextClock.send, window.__structextActivity.send];
}"""


def test_a_cleanup_without_a_new_drawing_does_not_silence_the_page(server, world, page, wait_for_app):
    """After Streamlit dropped both components' setStateValue, the page still saves what is
    typed and still hides the question when another tab takes it."""
    user_id = world["annotators"]["ann7"]["id"]
    open_question_page(page, server, "ann7", wait_for_app)
    question = shown_question(page)
    page.get_by_label("Your answer").wait_for()
    assert page.evaluate(CLEANUP_WITHOUT_REDRAW) == [None, None]
    page.get_by_label("Your answer").fill("q->w->z")
    wait_until(lambda: current(world["db_path"], user_id)["draft"] == "q->w->z", 15,
               "the typed answer was not saved after the cleanup")
    second = page.context.new_page()
    open_question_page(second, server, "ann7", wait_for_app)
    page.get_by_text("This question is open in another tab").wait_for(timeout=10_000)
    wait_for_app(page)
    assert not reads_the_question(page, question)
    second.close()
