"""Long answers in a real browser: on the largest Test-Hard item (157,000 characters), the
annotator types, searches, chooses a match, sets the lines and adds them to the answer; what
was typed (and not yet sent) survives every rerun, the added lines land verbatim in the box
and in the saved draft, a late input report does not overwrite that draft, and Ctrl+Enter
still submits. Screenshots: tests/screenshots/long-answers-*.png.
"""

import pytest
from playwright.sync_api import expect

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage
from tests.browser.conftest import pick_option
from tests.browser.test_human_journey import go_to, log_in

pytestmark = pytest.mark.browser

ANNOTATOR, PASSWORD = "longann", "annotator-pw-1"


@pytest.fixture(scope="module")
def long_study(app_env):
    """A two-question study whose first question is the largest Test-Hard reference."""
    largest = suites.generate_sample(9, 3, 3, suite="test-hard", index=3)
    other = suites.generate_sample(8, 2, 2, suite="test-hard", index=0)
    db = storage.open_db(app_env["db_path"])
    user = accounts.create_user(db, ANNOTATOR, PASSWORD, "annotator")
    study_id = structext_study.create_study(db, name="long", suite="test-hard", samples=[largest, other], n_items=2,
                                  annotator_ids=[user["id"]])
    order = db.execute("SELECT json_extract(i.sample_json, '$.reference') FROM assignments a JOIN study_items i"
                       " ON i.id = a.item_id WHERE a.user_id = ? ORDER BY a.seq", [user["id"]]).fetchall()
    return {"db": db, "user": user, "study_id": study_id, "first_reference": order[0][0]}


def draft(db, user_id):
    return db.execute("SELECT a.draft FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                      " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1", [user_id]).fetchone()[0]


def test_search_choose_and_add_lines_on_the_largest_item(long_study, app_server, page, wait_for_app, screenshot):
    log_in(page, app_server, ANNOTATOR, PASSWORD, wait_for_app)
    go_to(page, "Human baseline", wait_for_app)
    page.get_by_role("button", name="I have read the rule: start").click()
    wait_for_app(page)
    ref = long_study["first_reference"]
    box = page.get_by_label("Your answer", exact=True)
    box.wait_for()
    box.fill("My answer:")  # typed, not sent: the answer box is in a form

    search = page.get_by_label("Search the reference", exact=True)
    search.fill('"id":"')
    search.press("Enter")
    wait_for_app(page)
    total = ref.lower().count('"id":"')
    page.get_by_text(f"{total:,} matches").first.wait_for()
    assert box.input_value() == "My answer:"  # a rerun outside the form keeps what is typed

    pick_option(page, page.get_by_role("combobox", name=f"{total:,} matches"), page.get_by_role("option").nth(4))
    wait_for_app(page)
    line = [n for n, text in enumerate(ref.split("\n"), 1) if '"id":"' in text][4]
    page.get_by_text(f"around line {line:,}").wait_for()
    assert page.locator("mark").first.inner_text() == '"id":"'
    # The window is drawn by the page's own script (no raw HTML), with its style sheet applied.
    assert "monospace" in page.locator(".hb-window").evaluate("e => getComputedStyle(e).fontFamily")
    to_line = page.get_by_label("To line", exact=True)
    to_line.fill(str(line + 4))
    to_line.press("Enter")
    wait_for_app(page)
    screenshot(page, "long-answers-1-match-chosen")

    box.press("End")
    box.type(" first part")  # typed just before the click: the click must send it
    page.get_by_role("button", name=f"Add lines {line:,}–{line + 4:,} to the answer").click()
    wait_for_app(page)
    expected = "My answer: first part\n" + "\n".join(ref.split("\n")[line - 1:line + 4])
    expect(box).to_have_value(expected)  # the click's rerun may start after wait_for_app looked
    for _ in range(100):  # the draft is saved by the click's run, which may end after the box shows it
        if draft(long_study["db"], long_study["user"]["id"]) == expected:
            break
        page.wait_for_timeout(100)
    assert draft(long_study["db"], long_study["user"]["id"]) == expected
    page.wait_for_timeout(4_000)  # past the input report's throttle: no older text comes back
    assert draft(long_study["db"], long_study["user"]["id"]) == expected
    page.get_by_text("Your answer: 6 lines").wait_for()
    screenshot(page, "long-answers-2-lines-added")

    # Issue 19: "Go to line" showed 7626 as 762 (the box too narrow for four digits and more).
    n_lines = ref.count("\n") + 1
    go = page.get_by_label("Go to line", exact=True)
    go.fill("76260")  # five digits, past the end of this reference: the box still shows them whole
    go.press("Enter")
    wait_for_app(page)
    page.get_by_text(f"'Go to line' is 76,260, past the end: the reference has {n_lines:,} lines.").wait_for()
    assert go.input_value() == "76260"
    fits = go.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert fits, "the line number is cut in its box"
    screenshot(page, "long-answers-3-go-to-line")

    box.press("Control+Enter")  # Ctrl+Enter still presses Submit, not "Add lines"
    page.get_by_text("Question 2 of 2").first.wait_for()
    wait_for_app(page)
    saved = long_study["db"].execute("SELECT response FROM responses").fetchall()
    assert saved == [(expected,)]
    assert "Progress: 1 of 2 study questions answered" in page.get_by_test_id("stSidebar").get_by_test_id("sxBox").inner_text()
    screenshot(page, "long-answers-3-next-question")
