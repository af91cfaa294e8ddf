"""The question page in a real browser (issue 19 items 3, 4, 6 and 11; issue 23's clock).

- Text typed in one burst and then left alone is saved as the draft within a few seconds,
  with no further input, and comes back after a reload, after Pause / Resume, and after a
  pause taken in another tab.
- Log out on the question page logs out at the first click, and a reload stays logged out.
- An annotator in two studies answers in the second one without being sent back to the
  first one's rule screen; the second one's practice feedback shows, and survives a reload.
- An idle question page sends the server its heartbeats and nothing else: no script or
  fragment run per second; the time on screen ticks in the browser all the same.

The server runs with the default 5 s heartbeat. Log-ins are never retried: the module's
server is fresh, so the first log-in of the first test is a fresh server's first log-in.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect
from streamlit.proto.BackMsg_pb2 import BackMsg

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from structext_core.studio.clock_beat import BEAT_PATH
from tests.browser.conftest import clock_seconds

pytestmark = pytest.mark.browser

PASSWORD = "annotator-pw-1"
HEARTBEAT_SECONDS = 5
COOKIE = "structext_session"
NAMES = ("qa1", "qa2", "qa3", "qa4", "qa5", "qa6", "qa7")


@pytest.fixture(scope="module")
def app_env(app_env):
    app_env["env"].update(STRUCTEXT_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS), STRUCTEXT_IDLE_PAUSE_SECONDS="300")
    return app_env


@pytest.fixture(scope="module")
def world(app_env) -> dict:
    """Every annotator in study "first"; qa4 also in "second" (one practice question), whose
    rule qa4 has not read yet, nor the first one's."""
    db = storage.open_db(app_env["db_path"])
    accounts.create_user(db, app_env["admin_user"], app_env["admin_password"], "admin")
    people = {name: accounts.create_user(db, name, PASSWORD, "annotator") for name in NAMES}
    pool = [suites.generate_sample(task_id, 2, 2, suite="qpage", index=index)
            for index, task_id in enumerate((5, 6, 7, 9, 19, 21, 8, 12))]
    first = structext_study.create_study(db, name="first", suite="qpage", samples=pool, n_items=3,
                               annotator_ids=[p["id"] for p in people.values()])
    for name, person in people.items():
        if name != "qa4":
            study.accept_rule(db, first, person["id"])
    second = structext_study.create_study(db, name="second", suite="qpage", samples=pool, n_items=2, practice_items=1,
                                annotator_ids=[people["qa4"]["id"]])
    db.close()
    return {"db_path": app_env["db_path"], "people": people, "first": first, "second": second}


@pytest.fixture
def server(world, app_server) -> str:
    return app_server


# ---------------------------------------------------------------- helpers


def sidebar(page):
    return page.get_by_test_id("stSidebar")


def log_in(page, base_url, username, wait_for_app) -> None:
    """Log in from the sidebar of Home, once (a dropped log-in fails the test)."""
    page.goto(base_url)
    wait_for_app(page, timeout=120_000)
    sidebar(page).get_by_label("User name", exact=True).fill(username)
    sidebar(page).get_by_label("Password", exact=True).fill(PASSWORD)
    sidebar(page).get_by_role("button", name="Log in").click()
    sidebar(page).get_by_text(f"Logged in as {username}").wait_for(timeout=15_000)
    wait_for_app(page)


def open_questions(page, base_url, username, wait_for_app) -> None:
    log_in(page, base_url, username, wait_for_app)
    sidebar(page).get_by_role("link", name="Human baseline", exact=True).click()
    page.get_by_role("heading", name="Human baseline").wait_for()
    wait_for_app(page)


def open_assignment(db_path, user_id, study_id) -> dict:
    db = storage.open_db(db_path)
    try:
        return next(db.query(
            "SELECT a.* FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
            " WHERE a.user_id = ? AND a.study_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1",
            [user_id, study_id]))
    finally:
        db.close()


def wait_until(condition, timeout: float, message: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(message)


def session_cookie(page) -> dict | None:
    return next((c for c in page.context.cookies() if c["name"] == COOKIE), None)


def reload_question_page(page, wait_for_app) -> None:
    page.reload()
    wait_for_app(page)
    page.get_by_label("Your answer").wait_for()
    wait_for_app(page)


# ---------------------------------------------------------------- drafts


def test_a_burst_of_typing_is_saved_without_further_input_and_comes_back_after_a_reload(
    server, world, page, wait_for_app, screenshot
):
    user = world["people"]["qa1"]
    open_questions(page, server, "qa1", wait_for_app)
    box = page.get_by_label("Your answer")
    # One burst of about 4 s (longer than the page's 2.5 s between two text reports), then
    # no blur, no click, no key.
    text = "one burst of typing, longer than the time between two reports: the value is 42, then 43 and 44."
    box.press_sequentially(text, delay=40)
    typed_at = time.monotonic()
    page.wait_for_timeout(7_000)  # no input at all
    assert time.monotonic() - typed_at >= 7
    assert open_assignment(world["db_path"], user["id"], world["first"])["draft"] == text
    page.get_by_text("Your answer: 1 line").wait_for()  # the size note follows the box
    screenshot(page, "qpage-1-typed-burst")
    reload_question_page(page, wait_for_app)
    assert page.get_by_label("Your answer").input_value() == text
    # The box grows with the answer as it is typed, a row a line and one to type on, within bounds.
    box = page.get_by_label("Your answer")
    heights = []
    for lines in (1, 15, 100):
        box.fill("\n".join(["x"] * lines))
        heights.append(box.evaluate("e => e.offsetHeight"))
    assert heights == [26 + 8 * 24, 26 + 16 * 24, 26 + 26 * 24]
    page.get_by_text("Your answer: 100 lines · 199 characters").wait_for()  # the size note as it is typed


def test_the_draft_comes_back_after_pause_and_resume_here_and_after_a_pause_in_another_tab(
    server, world, page, wait_for_app, screenshot
):
    user = world["people"]["qa2"]
    open_questions(page, server, "qa2", wait_for_app)
    box = page.get_by_label("Your answer")
    box.press_sequentially("first part", delay=30)
    page.wait_for_timeout(7_000)
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_label("Your answer")).to_have_value("first part")
    wait_for_app(page)
    # Typed again, saved by the page alone, then paused from a second tab of the same browser.
    page.get_by_label("Your answer").press("End")
    page.get_by_label("Your answer").press_sequentially(", second part", delay=30)
    wait_until(lambda: open_assignment(world["db_path"], user["id"], world["first"])["draft"]
               == "first part, second part", 7, "the typed text was not saved within 7 s")
    second = page.context.new_page()
    second.goto(page.url)
    wait_for_app(second)
    second.get_by_label("Your answer").wait_for()
    expect(second.get_by_label("Your answer")).to_have_value("first part, second part")
    second.get_by_role("button", name="Pause").click()
    second.get_by_text(re.compile(r"Paused: question 1 of 3")).wait_for()
    second.close()
    # The first tab learns at its next heartbeat: taken over (then "Continue here" finds the
    # question paused), or, when that heartbeat came after the pause, paused straight away.
    continue_here = page.get_by_role("button", name="Continue here")
    resume = page.get_by_role("button", name="Resume")
    continue_here.or_(resume).first.wait_for(timeout=15_000)
    if continue_here.count():
        continue_here.click()
    resume.click()
    expect(page.get_by_label("Your answer")).to_have_value("first part, second part")
    wait_for_app(page)
    expect(page.get_by_text("Your answer: 1 line")).to_be_visible()
    screenshot(page, "qpage-2-after-pause-elsewhere-and-resume")


# ---------------------------------------------------------------- log out


def test_log_out_on_the_question_page_works_at_the_first_click(server, world, page, wait_for_app, screenshot):
    db = storage.open_db(world["db_path"])
    for round_ in range(3):
        open_questions(page, server, "qa3", wait_for_app)
        page.get_by_label("Your answer").wait_for()
        cookie = session_cookie(page)
        assert cookie is not None
        page.wait_for_timeout(1_500 + 1_000 * round_)  # somewhere between two heartbeats
        sidebar(page).get_by_role("link", name="Log out").click()  # once
        sidebar(page).get_by_role("button", name="Log in").wait_for(timeout=10_000)
        wait_until(lambda: session_cookie(page) is None, 10, f"round {round_}: the cookie is still there")
        assert accounts.verify_session(db, cookie["value"]).reason == "revoked"
        page.reload()
        wait_for_app(page)
        sidebar(page).get_by_role("button", name="Log in").wait_for()
        assert sidebar(page).get_by_text("Logged in as").count() == 0
        assert page.get_by_label("Your answer").count() == 0
    screenshot(page, "qpage-3-logged-out")
    db.close()


# ---------------------------------------------------------------- two studies side by side


def test_an_annotator_in_two_studies_answers_in_the_second_and_stays_there(
    server, world, page, wait_for_app, screenshot
):
    open_questions(page, server, "qa4", wait_for_app)
    page.get_by_text("Choose a study", exact=True).wait_for()  # in two studies: nothing opens before the choice
    assert page.get_by_label("Your answer").count() == 0
    screenshot(page, "qpage-4-choose-a-study")
    page.get_by_role("link", name="Start", exact=True).nth(1).click()  # a link naming the study: a new page load
    page.get_by_text("Before you start: the rule of second").wait_for()
    page.get_by_role("button", name="I have read the rule: start").click()
    page.get_by_text("Practice question 1 of 1").first.wait_for()
    wait_for_app(page)
    page.get_by_label("Your answer").fill("a practice answer")
    page.get_by_role("button", name="Submit answer").click()
    page.get_by_text("Practice question 1 of 1: how you did").wait_for()
    wait_for_app(page)
    assert page.get_by_text("Before you start: the rule of first").count() == 0
    screenshot(page, "qpage-4-second-study-practice-feedback")
    # A reload keeps the study and the feedback screen (with its "Start the study").
    page.reload()
    wait_for_app(page)
    page.get_by_text("Practice question 1 of 1: how you did").wait_for()
    page.get_by_role("button", name="Start the study").click()
    page.get_by_text("Question 1 of 2").first.wait_for()
    wait_for_app(page)
    page.get_by_label("Your answer").fill("a real answer")
    page.get_by_role("button", name="Submit answer").click()
    page.get_by_text("Question 2 of 2").first.wait_for()
    wait_for_app(page)
    assert page.get_by_text("Before you start: the rule of first").count() == 0
    # the chooser (the browser's own select) shows the study still chosen
    expect(page.get_by_role("combobox", name="Study").locator("option:checked")).to_have_text(re.compile(r"^second"))
    screenshot(page, "qpage-5-second-study-question-2")


# ---------------------------------------------------------------- an idle page


@pytest.mark.parametrize("route", ["posted", "missing"])
def test_an_idle_question_page_sends_only_its_heartbeats_and_its_clock_ticks(
    server, world, page, wait_for_app, screenshot, route
):
    """Served as the README says (server.py), the heartbeats are posted to the clock's route and
    the server runs nothing for an idle page; without the route (``streamlit run app.py``,
    here a 404 in its place) each heartbeat is one run of the clock's fragment, never more."""
    name = "qa5" if route == "posted" else "qa7"
    user = world["people"][name]
    reruns: list[tuple[float, str]] = []
    posts: list[float] = []

    def on_frame(payload) -> None:
        if isinstance(payload, (bytes, bytearray)):
            message = BackMsg()
            message.ParseFromString(bytes(payload))
            if message.WhichOneof("type") == "rerun_script":
                reruns.append((time.monotonic(), message.rerun_script.fragment_id))

    page.on("websocket", lambda socket: socket.on("framesent", on_frame))
    page.on("request", lambda request: posts.append(time.monotonic()) if request.url.endswith(BEAT_PATH) else None)
    if route == "missing":
        page.route(f"**{BEAT_PATH}", lambda r: r.fulfill(status=404, body="Not Found", content_type="text/plain"))
    open_questions(page, server, name, wait_for_app)
    page.get_by_label("Your answer").wait_for()
    page.wait_for_timeout(2_000)
    before = open_assignment(world["db_path"], user["id"], world["first"])
    shown_before, started = clock_seconds(page), time.monotonic()
    seen, posted = len(reruns), len(posts)
    page.wait_for_timeout(11_000)  # no input
    idle = [fragment for at, fragment in reruns[seen:]]
    elapsed = time.monotonic() - started
    beats = len(posts) - posted
    if route == "posted":
        assert idle == [], f"{len(idle)} runs asked by an idle page in {elapsed:.1f} s"
        assert elapsed / HEARTBEAT_SECONDS - 1 <= beats <= elapsed / HEARTBEAT_SECONDS + 1, beats
    else:
        assert 1 <= len(idle) <= elapsed / HEARTBEAT_SECONDS + 1, f"{len(idle)} runs asked in {elapsed:.1f} s: {idle}"
        assert all(idle), "an idle page asked for a full script run"
        assert beats <= 1, "without the route the page stops posting after the first 404"
    shown_after = clock_seconds(page)
    assert elapsed - 2 <= shown_after - shown_before <= elapsed + 2  # ticking in the browser
    after = open_assignment(world["db_path"], user["id"], world["first"])
    assert after["last_beat_at"] > before["last_beat_at"]  # the heartbeats did arrive ...
    assert after["active_seconds"] >= before["active_seconds"] + 5  # ... and count as active time
    screenshot(page, f"qpage-6-idle-clock-{route}")
    page.get_by_text("Logged in as").wait_for()
