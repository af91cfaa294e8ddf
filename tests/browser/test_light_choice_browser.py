"""The light chooser (structext_core/ui/light_choice.py) in Chromium: a choice reruns the page at once (only
its fragment, inside one), a long list narrows as one types and Enter takes the first found, a row of
radio buttons, a number box whose bounds the browser checks, a label from a person that stays text, a
download made on its click (the row alone runs) and saved on each click. The pages that use it are AppTest-tested with what
it sends; this is the element itself, on a page of its own."""

from __future__ import annotations

import textwrap

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import serving_script

SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_choice as lc

    st.session_state["page_runs"] = st.session_state.get("page_runs", 0) + 1
    names = [f"question {i:03d}" for i in range(1, 41)] + ["<img src=x onerror=alert(1)>"]
    picked = lc.choose("Question", names, key="question", help="Forty of them.")
    order = lc.choose("Order", ["most disagreement first", "position"], key="order", buttons=True)
    number = lc.number("Sample (1 to 40)", key="number", min_value=1, max_value=40)
    st.write(f"Chosen: {picked} · {order} · sample {number}")

    @st.fragment
    def part():
        view = lc.choose("View", ["heatmap", "leaderboard"], key="view")
        st.write(f"View: {view} · page runs {st.session_state['page_runs']}")
        st.session_state["part_runs"] = st.session_state.get("part_runs", 0) + 1
        st.write(f"Its runs: {st.session_state['part_runs']}")
        lc.downloads("files", [lc.Download("CSV", f"{view}.csv", lambda: f"view\\n{view}\\n", "text/csv")])

    part()
''')


@pytest.fixture(scope="module")
def choice_page(tmp_path_factory, app_env):
    with serving_script(tmp_path_factory.mktemp("light_choice"), "choice_page.py", SCRIPT, app_env) as url:
        yield url


@pytest.mark.browser
def test_a_choice_reruns_a_long_list_narrows_as_one_types_and_labels_stay_text(choice_page, page, wait_for_app,
                                                                               screenshot):
    page.goto(choice_page)
    wait_for_app(page)
    question = page.get_by_role("combobox", name="Question")
    expect(question).to_have_value("question 001")
    help_id = question.get_attribute("aria-describedby")  # its help under it, read out with it
    expect(page.locator(f"[id='{help_id}']")).to_have_text("Forty of them.")
    expect(page.get_by_text("Chosen: question 001 · most disagreement first · sample 1")).to_be_visible()
    # a label from a person is text, never markup
    expect(question.locator("option", has_text="<img src=x onerror=alert(1)>")).to_have_count(1)
    assert page.locator("img[src=x]").count() == 0

    question.select_option(label="question 007")
    expect(page.get_by_text("Chosen: question 007 · most disagreement first · sample 1")).to_be_visible()
    page.get_by_role("radio", name="position").check()
    expect(page.get_by_text("Chosen: question 007 · position · sample 1")).to_be_visible()
    wait_for_app(page)
    expect(page.get_by_role("radio", name="position")).to_be_checked()

    # typing narrows the list; Enter takes the first one found
    find = page.get_by_role("searchbox", name="Find: Question")
    find.fill("03")
    expect(page.get_by_text("11 found")).to_be_visible()  # 003, 013, 023, 030-039
    find.press("Enter")
    expect(page.get_by_text("Chosen: question 003 · position · sample 1")).to_be_visible()
    wait_for_app(page)
    expect(question).to_have_value("question 003")
    # a number: a step of the arrows, a number typed, one out of bounds the browser refuses
    sample = page.get_by_role("spinbutton", name="Sample (1 to 40)")
    sample.press("ArrowUp")
    expect(page.get_by_text("Chosen: question 003 · position · sample 2")).to_be_visible()
    wait_for_app(page)
    sample.fill("41")
    sample.press("Tab")
    assert sample.evaluate("input => input.validity.valid") is False
    sample.fill("12")
    sample.press("Tab")
    expect(page.get_by_text("Chosen: question 003 · position · sample 12")).to_be_visible()
    wait_for_app(page)
    screenshot(page, "light-choice")

    # inside a fragment, a choice reruns the fragment only
    runs = page.get_by_text("page runs", exact=False).inner_text().rsplit(" ", 1)[1]
    page.get_by_role("combobox", name="View").select_option("leaderboard")
    expect(page.get_by_text(f"View: leaderboard · page runs {runs}")).to_be_visible()
    expect(page.get_by_text("Chosen: question 003 · position · sample 12", exact=True)).to_be_visible()


@pytest.mark.browser
def test_a_download_is_made_on_the_click_and_saved_each_time(choice_page, page, wait_for_app, tmp_path):
    page.goto(choice_page)
    wait_for_app(page)
    runs = page.get_by_text("View: heatmap · page runs").inner_text()
    part_runs = page.get_by_text("Its runs:").inner_text()
    button = page.get_by_role("button", name="CSV", exact=True)  # the arrow before it is not read out
    for _ in range(2):  # each click saves the file again
        with page.expect_download(timeout=30_000) as info:
            button.click()
        assert info.value.suggested_filename == "heatmap.csv"
        info.value.save_as(tmp_path / "heatmap.csv")
        assert (tmp_path / "heatmap.csv").read_text(encoding="utf-8") == "view\nheatmap\n"
    wait_for_app(page)
    expect(page.get_by_text(runs, exact=True)).to_be_visible()  # neither the page
    expect(page.get_by_text(part_runs, exact=True)).to_be_visible()  # nor the fragment it is in ran: the row alone
