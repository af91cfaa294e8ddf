"""The human-baseline journey in a real browser.

The admin logs in, creates an annotator account and a three-question study; the annotator
logs in, accepts the rule, answers two questions (one with the button, one with
Ctrl+Enter), reloads the tab mid-question and finds the same question with its clock going
on, pauses, resumes and finishes. Screenshots go to tests/screenshots/journey-*.png.
While the annotator works, every WebSocket frame the browser receives is searched for the
ground truth and the rule hints.
"""

import re

import pytest
from playwright.sync_api import expect

from structext_core.structext_eval import samples, suites
from structext_core.studio import storage
from tests.browser.conftest import clock_seconds, go_to_page, open_create_account, pick_option

pytestmark = pytest.mark.browser

ANNOTATOR, ANNOTATOR_PASSWORD = "ann1", "annotator-pw-1"
STUDY = "journey-study"


@pytest.fixture(scope="module")
def journey_suite(app_env):
    """A small suite file the admin can pick; answers and hints carry sentinels."""
    rows = []
    for index, task_id in enumerate((5, 6, 7, 9, 19, 21)):
        sample = suites.generate_sample(task_id, 2, 1, suite="journey", index=index)
        rows.append({**sample, "answer": f"TRUTHSENTINEL{index}", "rule_hint": f"HINTSENTINEL{index}"})
    samples.write_jsonl(app_env["data_dir"] / "journey.jsonl", rows)
    return rows


def sidebar(page):
    return page.get_by_test_id("stSidebar")


def log_in(page, base_url, username, password, wait_for_app):
    if page.url.rstrip("/") != base_url:
        page.goto(base_url)
    wait_for_app(page, timeout=60_000)  # a fresh server's first page: the home page reads the suites
    # A reload of a page that is only listed after log-in lands on the home page with a
    # "Page not found" dialog; close it (log in, then go to the page again).
    not_found = page.get_by_role("dialog").filter(has_text="Page not found")
    if not_found.count():
        page.keyboard.press("Escape")
        not_found.wait_for(state="detached")
    sidebar(page).get_by_role("button", name="Log in").wait_for()
    sidebar(page).get_by_label("User name", exact=True).fill(username)
    sidebar(page).get_by_label("Password", exact=True).fill(password)
    sidebar(page).get_by_role("button", name="Log in").click()
    sidebar(page).get_by_text(f"Logged in as {username}").wait_for()




def go_to(page, link_name, wait_for_app):
    """One click on the menu's link (the other journeys import this); this journey's own steps use
    ``go_to_page``, which clicks again when a click was lost."""
    sidebar(page).get_by_role("link", name=link_name, exact=True).click()
    wait_for_app(page)


def choose(page, label, option):
    """Pick ``option`` in the box ``label`` (conftest.pick_option: again when the menu closed by itself)."""
    pick_option(page, page.get_by_role("combobox", name=label), page.get_by_role("option", name=option, exact=True))


def question_number(page) -> int:
    text = page.get_by_test_id("sxProgress").inner_text()
    return int(re.search(r"Question\s+(\d+)\s+of", text).group(1))


def recorded_tab(browser):
    """A context and tab of their own, and the list every WebSocket frame the tab receives
    is appended to (as bytes), to search for what must never reach the browser."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    tab = context.new_page()
    received: list[bytes] = []
    tab.on("websocket", lambda ws: ws.on(
        "framereceived", lambda payload: received.append(payload if isinstance(payload, bytes) else payload.encode())
    ))
    return context, tab, received


def admin_sets_up(page, base_url, app_env, wait_for_app, screenshot):
    log_in(page, base_url, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to_page(page, "Accounts", wait_for_app)
    form = open_create_account(page)  # Accounts draws a section only once it is opened (issue 46)
    form.get_by_label("User name", exact=True).fill(ANNOTATOR)
    form.get_by_label("Password", exact=True).fill(ANNOTATOR_PASSWORD)
    form.get_by_role("button", name="Create account").click()
    page.get_by_text(f"Account '{ANNOTATOR}' (annotator) created.").wait_for()
    screenshot(page, "journey-1-admin-accounts")

    go_to_page(page, "Studies", wait_for_app)
    page.get_by_role("tab", name="Set up a study").click()
    page.get_by_label("Study name").fill(STUDY)  # the set-up form: one light element (light_form)
    page.get_by_label("Suite", exact=True).select_option("journey")
    page.get_by_label("Number of questions").fill("3")
    page.get_by_role("checkbox", name=ANNOTATOR, exact=True).check()
    screenshot(page, "journey-2-admin-setup")
    page.get_by_role("button", name="Create study").click()
    page.get_by_text(re.compile(rf"Study '{STUDY}' \(.+\) created for 1 annotator: each answers 3 study questions\.")).wait_for()
    wait_for_app(page)
    screenshot(page, "journey-3-admin-dashboard-empty")
    sidebar(page).get_by_role("link", name="Log out").click()
    sidebar(page).get_by_role("button", name="Log in").wait_for()


def test_admin_creates_a_study_and_an_annotator_finishes_it(
    app_server, app_env, journey_suite, page, browser, wait_for_app, screenshot
):
    admin_sets_up(page, app_server, app_env, wait_for_app, screenshot)

    annotator, tab, received = recorded_tab(browser)
    try:
        annotator_journey(tab, app_server, wait_for_app, screenshot)
    finally:
        annotator.close()

    everything = b"".join(received)
    assert len(everything) > 1000  # the frames were captured
    for index in range(len(journey_suite)):
        assert f"TRUTHSENTINEL{index}".encode() not in everything
        assert f"HINTSENTINEL{index}".encode() not in everything

    db = storage.open_db(app_env["db_path"])
    rows = db.execute(
        "SELECT a.seq, r.response, r.gave_up, r.elapsed_seconds, r.paused_seconds FROM responses r"
        " JOIN assignments a ON a.id = r.assignment_id ORDER BY a.seq"
    ).fetchall()
    assert [(seq, response, gave_up) for seq, response, gave_up, _, _ in rows] == [
        (1, "first answer", 0), (2, "second answer", 0), (3, "third answer", 0)]
    third_elapsed, third_paused = rows[2][3], rows[2][4]
    assert third_paused >= 1.5  # the pause was excluded ...
    assert third_elapsed >= 3  # ... and the clock ran across the reload

    # The admin's dashboard now has figures.
    log_in(page, app_server, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to_page(page, "Studies", wait_for_app)
    page.get_by_role("heading", name="Time per question").wait_for()
    assert page.get_by_text("No answers yet").count() == 0
    wait_for_app(page)
    screenshot(page, "journey-9-admin-dashboard")


def annotator_journey(tab, base_url, wait_for_app, screenshot):
    log_in(tab, base_url, ANNOTATOR, ANNOTATOR_PASSWORD, wait_for_app)
    go_to_page(tab, "Human baseline", wait_for_app)
    tab.get_by_text("Before you start").wait_for()
    screenshot(tab, "journey-4-rule")
    tab.get_by_role("button", name="I have read the rule: start").click()

    answer = tab.get_by_label("Your answer")
    answer.wait_for()
    wait_for_app(tab)  # type into the finished page, not one a script run is still replacing
    assert question_number(tab) == 1
    screenshot(tab, "journey-5-question-1")
    answer.fill("first answer")
    tab.get_by_role("button", name="Submit answer").click()
    tab.get_by_text("Question 2 of").wait_for()
    wait_for_app(tab)
    expect(tab.get_by_label("Your answer")).to_have_count(1)  # the answered question's box gone (CI at 1e92ca0)

    # Ctrl+Enter in the answer box submits the form.
    answer = tab.get_by_label("Your answer")
    answer.fill("second answer")
    answer.press("Control+Enter")
    tab.get_by_text("Question 3 of").wait_for()
    wait_for_app(tab)

    # Reload mid-question: a new session (logged in again if the log-in was not kept), the
    # same question with its clock going on from where it stood.
    question_before = tab.get_by_test_id("sxaText").first.inner_text()
    tab.wait_for_timeout(2000)
    seconds_before = clock_seconds(tab)
    assert seconds_before >= 1
    tab.reload()
    wait_for_app(tab)
    logged_in = sidebar(tab).get_by_text(f"Logged in as {ANNOTATOR}")
    logged_in.or_(sidebar(tab).get_by_role("button", name="Log in")).first.wait_for()
    if not logged_in.count():
        log_in(tab, base_url, ANNOTATOR, ANNOTATOR_PASSWORD, wait_for_app)
        go_to_page(tab, "Human baseline", wait_for_app)
    tab.get_by_text("Question 3 of").wait_for()
    assert tab.get_by_test_id("sxaText").first.inner_text() == question_before
    assert clock_seconds(tab) >= seconds_before
    screenshot(tab, "journey-6-after-reload")

    # The clock ticks on the page without any interaction.
    ticked_from = clock_seconds(tab)
    tab.wait_for_timeout(2500)
    assert clock_seconds(tab) >= ticked_from + 1

    tab.get_by_label("Your answer").fill("third answer")
    tab.get_by_role("button", name="Pause").click()
    tab.get_by_text("Paused: question 3 of 3").wait_for()
    wait_for_app(tab)  # the run has finished: elements of the question page are gone
    assert tab.get_by_label("Your answer").count() == 0  # the question is hidden
    screenshot(tab, "journey-7-paused")
    tab.wait_for_timeout(2000)
    tab.get_by_role("button", name="Resume").click()
    answer = tab.get_by_label("Your answer")
    answer.wait_for()
    wait_for_app(tab)
    assert answer.input_value() == "third answer"  # the draft came back
    tab.get_by_role("button", name="Submit answer").click()
    tab.get_by_text("You have answered all 3 study questions").wait_for()
    wait_for_app(tab)
    screenshot(tab, "journey-8-finished")
