"""A closed section's header as a light element (structext_core/ui/light_section.py) in Chromium: drawn as
Streamlit's expander is (beside one, for the eye), a click or Enter opens the section in Streamlit's own
expander with its content, closing it draws the header again, and a label from a person stays text. The
pages that use it are AppTest-tested with what it sends; this is the element itself, on a page of its own."""

from __future__ import annotations

import textwrap

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import serving_script

SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_html, widgets

    light_html.page_draws_light()
    st.session_state["page_runs"] = st.session_state.get("page_runs", 0) + 1
    st.expander("Streamlit's own, for the eye", icon=":material/edit:")
    if box := widgets.lazy_section("Change a score", key="change", icon=":material/edit:"):
        box.write(f"The form, drawn open (page runs {st.session_state['page_runs']})")

    @st.fragment
    def part():
        st.session_state["part_runs"] = st.session_state.get("part_runs", 0) + 1
        name = "<img src=x onerror=alert(1)>"
        if box := widgets.lazy_section(f"{name} (3)", key="rows", name=name):
            box.write(f"The rows (page runs {st.session_state['page_runs']}, its runs {st.session_state['part_runs']})")

    part()
''')


@pytest.fixture(scope="module")
def section_page(tmp_path_factory, app_env):
    with serving_script(tmp_path_factory.mktemp("light_section"), "section_page.py", SCRIPT, app_env) as url:
        yield url


@pytest.mark.browser
def test_a_closed_header_opens_its_section_in_streamlits_expander_and_closing_draws_it_again(
        section_page, page, wait_for_app, screenshot):
    page.goto(section_page)
    wait_for_app(page)
    header = page.get_by_role("button", name="Change a score", exact=True)
    expect(header).to_have_attribute("aria-expanded", "false")
    own = page.get_by_test_id("stExpander").filter(has_text="Streamlit's own").locator("summary")
    drawn, theirs = header.bounding_box(), own.bounding_box()
    assert abs(drawn["height"] - theirs["height"]) <= 2 and abs(drawn["width"] - theirs["width"]) <= 2
    screenshot(page, "light-section-closed")
    header.click()
    expect(page.get_by_text("The form, drawn open (page runs 2)")).to_be_visible()
    wait_for_app(page)
    expect(header).to_have_count(0)
    opened = page.get_by_test_id("stExpander").filter(has_text="Change a score")
    expect(opened.locator("details")).to_have_attribute("open", "")
    opened.locator("summary").click()  # closed again: the light header, and no content
    expect(header).to_be_visible()
    expect(page.get_by_text("The form, drawn open")).to_have_count(0)
    wait_for_app(page)

    # in a fragment, by the keyboard: only the fragment runs; a person's label is text, never markup
    rows = page.get_by_role("button", name="<img src=x onerror=alert(1)> (3)")
    assert page.locator("img[src=x]").count() == 0
    expect(rows.locator("strong")).to_have_text("<img src=x onerror=alert(1)>")  # its name in bold, as text
    rows.focus()
    rows.press("Enter")
    expect(page.get_by_text("The rows (page runs 3, its runs 4)")).to_be_visible()
    screenshot(page, "light-section-open")
