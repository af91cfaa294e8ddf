"""A newcomer's first hour, in order, in a real browser (issue 32).

The first admin logs in and creates two annotator accounts on the Accounts page; sets up two
studies (both annotators in the first, one of them in the second too); the annotator in one
study answers a question; the annotator in two studies is given a chooser (nothing opens, no
clock runs, before they choose), answers two questions of the first study; their progress is
read on the sidebar, on Home and in the lead's table, and must say the same thing; the admin
loads model results from the top of Results without saying which suite they answer, and the
view shows them beside the people (each answer counted once); AIBench is found from Home and
its data set on Explore.

Every page's ready time (click to the end of the app's script run) is printed at the end; the
screenshots are tests/screenshots/first-hour-*.png.
"""

import json
import re
import time

import pytest

from structext_core.structext_eval import samples, suites
from tests.browser.conftest import ERRORS, click_until, open_create_account, pick_option, stored_synthetic_aibench

pytestmark = pytest.mark.browser

ANN_A, ANN_B, PASSWORD = "ann-a", "ann-b", "annotator-pw-1"
SUITE = "first-hour"
READY: list[tuple[str, float]] = []


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """A small suite file and the synthetic AIBench set (3 papers), stored before the server starts."""
    rows = [suites.generate_sample(task_id, 1, 1, suite=SUITE, index=index)
            for index, task_id in enumerate((1, 5, 8, 13, 18, 21))]
    samples.write_jsonl(app_env["data_dir"] / f"{SUITE}.jsonl", rows)
    app_env["first_hour_rows"] = rows
    with stored_synthetic_aibench(app_env, tmp_path_factory, 3):
        pass
    return app_env


def sidebar(page):
    return page.get_by_test_id("stSidebar")


def timed(page, name, action, wait_for_app, ready=None):
    """Do ``action`` and wait until the page is ready (``ready`` shown, the script run over); note the time."""
    start = time.perf_counter()
    action()
    if ready is not None:
        ready.wait_for()
    wait_for_app(page)
    READY.append((name, time.perf_counter() - start))


def go_to(page, link, wait_for_app, heading=None):
    """Follow the navigation's ``link`` until the page's own heading shows (a click landing while the last page
    runs again can be lost: ``click_until``; the sidebar's title is a heading too, so the main area's is
    waited for)."""
    heading = page.get_by_test_id("stMain").get_by_role("heading", name=heading or link).first
    timed(page, link, lambda: click_until(page, sidebar(page).get_by_role("link", name=link, exact=True), heading),
          wait_for_app, heading)


def log_in(page, base_url, username, password, wait_for_app):
    if page.url.rstrip("/") != base_url:
        page.goto(base_url)
    wait_for_app(page, timeout=60_000)  # a fresh server's first page reads the suites
    sidebar(page).get_by_label("User name", exact=True).fill(username)
    sidebar(page).get_by_label("Password", exact=True).fill(password)
    timed(page, f"log in ({username})", lambda: sidebar(page).get_by_role("button", name="Log in").click(),
          wait_for_app, sidebar(page).get_by_text(f"Logged in as {username}"))


def log_out(page):
    sidebar(page).get_by_role("link", name="Log out").click()
    sidebar(page).get_by_role("button", name="Log in").wait_for()


def create_account(page, name):
    form = open_create_account(page)  # Accounts draws a section only once it is opened (issue 46)
    form.get_by_label("User name", exact=True).fill(name)
    form.get_by_label("Password", exact=True).fill(PASSWORD)
    form.get_by_role("button", name="Create account").click()
    page.get_by_text(f"Account '{name}' (annotator) created.").wait_for()


def create_study(page, name, n_questions, annotators, wait_for_app):
    page.get_by_role("tab", name="Set up a study").click()
    page.get_by_label("Study name").fill(name)  # the set-up form: one light element (light_form)
    page.get_by_label("Suite", exact=True).select_option(SUITE)
    page.get_by_label("Number of questions").fill(str(n_questions))
    for annotator in annotators:
        page.get_by_role("checkbox", name=annotator, exact=True).check()
    page.get_by_role("button", name="Create study").click()
    page.get_by_text(re.compile(rf"Study '{name}' \(.+\) created for")).wait_for()
    wait_for_app(page)


def answer(page, text, wait_for_app):
    # The next question's box, once the last question's box (kept on screen, faded, until the
    # rerun that replaces it ends) is gone: one box, empty.
    # Both at once, polled together: on a loaded machine the old box came back between two separate
    # waits (CI at d31ca6f and a390fd2: one box, then two again).
    # (The box is drawn in its element's shadow root: looked for in every open one.)
    page.wait_for_function("""() => { const boxes = [...document.querySelectorAll("*")].flatMap((e) => e.shadowRoot
                                        ? [...e.shadowRoot.querySelectorAll('textarea[aria-label="Your answer"]')] : []);
                                      return boxes.length === 1 && boxes[0].value === ""; }""", timeout=30_000)
    wait_for_app(page)
    box = page.get_by_label("Your answer")
    box.fill(text)
    page.get_by_role("button", name="Submit answer").click()
    wait_for_app(page)


def test_a_newcomers_first_hour(app_server, app_env, page, browser, wait_for_app, screenshot):
    base = app_server
    # 1. The first admin, and two accounts
    log_in(page, base, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    screenshot(page, "first-hour-1-home-admin")
    go_to(page, "Accounts", wait_for_app)
    create_account(page, ANN_A)
    create_account(page, ANN_B)
    screenshot(page, "first-hour-2-accounts")

    # 2. Two studies; ann-a takes part in both
    go_to(page, "Studies", wait_for_app, heading="Human-baseline studies")
    create_study(page, "study-one", 3, [ANN_A, ANN_B], wait_for_app)
    create_study(page, "study-two", 2, [ANN_A], wait_for_app)
    screenshot(page, "first-hour-3-studies")
    log_out(page)

    # 3. ann-b, in one study: the rule, then one answer
    log_in(page, base, ANN_B, PASSWORD, wait_for_app)
    go_to(page, "Human baseline", wait_for_app)
    page.get_by_role("button", name="I have read the rule: start").click()
    answer(page, "an answer of ann-b", wait_for_app)
    page.get_by_text("Question 2 of 3").first.wait_for()
    log_out(page)

    # 4. ann-a, in two studies: nothing opens before the choice
    log_in(page, base, ANN_A, PASSWORD, wait_for_app)
    go_to(page, "Human baseline", wait_for_app)
    page.get_by_text("Choose a study", exact=True).wait_for()
    assert page.get_by_label("Your answer").count() == 0
    from structext_core.studio import storage
    db = storage.open_db(app_env["db_path"])
    shown = db.execute("SELECT COUNT(*) FROM assignments a JOIN users u ON u.id = a.user_id"
                       " WHERE u.username = ? AND a.first_shown_at IS NOT NULL", [ANN_A]).fetchone()[0]
    assert shown == 0, "a question of ann-a opened before they chose a study"
    screenshot(page, "first-hour-4-choose-a-study")
    timed(page, "choose study-one", lambda: page.get_by_role("link", name="Start", exact=True).first.click(),
          wait_for_app, page.get_by_text("Before you start: the rule of study-one"))
    page.get_by_role("button", name="I have read the rule: start").click()
    answer(page, "first answer of ann-a", wait_for_app)
    page.get_by_text("Question 2 of 3").first.wait_for()
    answer(page, "second answer of ann-a", wait_for_app)
    page.get_by_text("Question 3 of 3").first.wait_for()
    wait_for_app(page)
    words = "2 of 3 study questions answered"
    assert f"Progress: {words}" in sidebar(page).get_by_test_id("sxBox").inner_text()  # the sidebar's Your progress
    screenshot(page, "first-hour-5-question-3")
    go_to(page, "Home", wait_for_app, heading="StrucText Studio")
    page.get_by_test_id("sxProgress").filter(has_text=words).wait_for()  # Home
    log_out(page)

    # 5. The lead's table says it too
    log_in(page, base, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to(page, "Studies", wait_for_app, heading="Human-baseline studies")
    pick_option(page, page.get_by_role("combobox", name="Study"), page.get_by_role("option", name=re.compile(r"^study-one")))
    wait_for_app(page)
    row = page.get_by_role("row").filter(has_text=ANN_A).first
    click_until(page, page.get_by_text("Study details and annotators"), row)
    assert words in row.inner_text()  # the lead's table
    screenshot(page, "first-hour-6-lead-table")

    # 6. Results: loading comes first; the suite is worked out; the import is in view
    go_to(page, "Results", wait_for_app)
    panel = page.get_by_text("Load results (admin)")
    assert panel.bounding_box()["y"] < page.get_by_text("Imported results (models and people)").bounding_box()["y"]
    panel.click()
    lines = "\n".join(json.dumps({"sample_id": row["id"], "model": "newcomer", "prompt": "naive",
                                   "response": f"### Answer:\n{row['answer']}"})
                       for row in app_env["first_hour_rows"])
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": "newcomer.jsonl", "mimeType": "application/json", "buffer": lines.encode()}])
    wait_for_app(page)
    timed(page, "import results", lambda: page.get_by_role("button", name="Import uploaded files").click(),
          wait_for_app, page.get_by_text("matched to the samples of first-hour.jsonl"))
    assert page.locator(ERRORS).count() == 0
    page.get_by_text("All items:").first.wait_for()
    caption = page.get_by_text("All items:").first.inner_text()
    assert "3 results of people" in caption and "6 of models" in caption  # each answer once
    marks = page.locator(".sx-hm td[data-cell]")  # the heatmap's cells (a tinted table), each describing itself
    marks.first.wait_for()
    labels = [marks.nth(i).get_attribute("aria-label") or "" for i in range(marks.count())]
    assert any("model: newcomer" in label for label in labels) and any("model: human" in label for label in labels)
    screenshot(page, "first-hour-7-results-imported")

    # 7. AIBench, found from Home: its box links to its data sets on Explore, a paper with its figure
    go_to(page, "Home", wait_for_app, heading="StrucText Studio")
    box = page.get_by_test_id("sxBenchmark").filter(has=page.get_by_role("heading", name="AIBench"))  # its card
    box.wait_for()
    box.scroll_into_view_if_needed()
    screenshot(page, "first-hour-8-home-benchmarks")
    start = time.perf_counter()
    box.get_by_role("link", name="Explore").click()  # in the same tab (logged in by the cookie)
    page.get_by_role("combobox", name="Data set").wait_for(timeout=60_000)
    page.get_by_text("Original figure").wait_for()
    page.get_by_text("Method text").wait_for()
    wait_for_app(page)
    READY.append(("Home → AIBench on Explore", time.perf_counter() - start))
    assert page.get_by_test_id("stImage").count() >= 1
    screenshot(page, "first-hour-9-explore-aibench")

    print("\npage ready (click to the end of the script run):")
    for name, seconds in READY:
        print(f"  {name:<28} {seconds:6.2f} s")
