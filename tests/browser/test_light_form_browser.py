"""The light form (structext_core/ui/light_form.py) in Chromium: every kind of field, what it sends, what
the browser refuses before sending, an error that keeps what was typed, a create that empties it, the
filter over a long list, and labels from people that stay text. The set-up pages that use it
(Rewrite campaigns, Pairwise studies, AIBench review campaigns, a StrucText study on Studies) are AppTest-tested with what it sends;
this is the element itself, on a page of its own."""

from __future__ import annotations

import textwrap

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import serving_script

SCRIPT = textwrap.dedent('''
    import json
    import streamlit as st
    from structext_core.ui import light_form as lf

    people = {i: f"ann{i:03d}" for i in range(1, 13)} | {99: "<img src=x onerror=alert(1)>"}
    # a default that changes while the form is open (as a set brought above a study's form names its strata)
    st.button("Bring a set", on_click=lambda: st.session_state.update(
        strata="Topic" if st.session_state.get("strata") == "Subject" else "Subject"))
    sent = lf.form("demo", [
        lf.Text("name", "Name", placeholder="e.g. Pilot"),
        (lf.Number("count", "Count", 5, min_value=1, max_value=10),
         lf.Number("share", "Share", 0.2, min_value=0.0, max_value=1.0, step=0.05)),
        lf.Choice("suite", "Suite", {"test": "Test", "test-hard": "Test-Hard"}),
        lf.Choices("formats", "Formats", {}, follows="suite",
                   options_by={"test": {"json": "JSON", "yaml": "YAML"}, "test-hard": {"json": "JSON", "xml": "XML"}}),
        lf.Choices("people", "People", people, help="Who answers."),
        lf.Text("rule", "Rule", value="Answer alone.", lines=3),
        lf.Check("tell", "Tell them", help="Off by default."),
        lf.Text("strata", "Strata", value=st.session_state.get("strata", "subject")),
    ], submit="Create")
    if sent is not None:
        if sent["name"] == "refuse":
            st.error("Refused: try another name.")
        else:
            lf.clear("demo")
            st.session_state["last"] = json.dumps(sent)
            st.session_state["creates"] = st.session_state.get("creates", 0) + 1
            st.rerun()
    st.write("Sent:", st.session_state.get("last", "nothing yet"))
    st.write(f"Created {st.session_state.get('creates', 0)} time(s).")
''')


@pytest.fixture(scope="module")
def form_page(tmp_path_factory, app_env):
    with serving_script(tmp_path_factory.mktemp("light_form"), "form_page.py", SCRIPT, app_env) as url:
        yield url


@pytest.mark.browser
def test_the_light_form_sends_once_keeps_after_an_error_and_empties_after_a_create(form_page, page, wait_for_app,
                                                                                  screenshot):
    page.goto(form_page)
    wait_for_app(page)
    name = page.get_by_label("Name", exact=True)
    name.wait_for()
    count = page.get_by_role("spinbutton", name="Count")
    expect(count).to_have_value("5")
    expect(page.get_by_label("Suite")).to_have_value("test")
    expect(page.get_by_text("0 of 13 chosen")).to_be_visible()
    # a label from a person is text, never markup
    expect(page.get_by_role("checkbox", name="<img src=x onerror=alert(1)>")).to_have_count(1)
    assert page.locator("img[src=x]").count() == 0

    # the browser refuses a count out of bounds: nothing is sent
    count.fill("11")
    page.get_by_role("button", name="Create").click()
    assert count.evaluate("input => input.validity.valid") is False
    page.wait_for_timeout(500)
    expect(page.get_by_text("Sent: nothing yet")).to_be_visible()

    # an error from the page: what was typed stays, the button takes a click again
    count.fill("3")
    page.get_by_role("checkbox", name="ann002", exact=True).check()
    name.fill("refuse")
    name.press("Enter")  # Enter in a text field sends the form, as st.form
    expect(page.get_by_text("Refused: try another name.")).to_be_visible()
    wait_for_app(page)
    expect(name).to_have_value("refuse")
    expect(count).to_have_value("3")
    expect(page.get_by_role("checkbox", name="ann002", exact=True)).to_be_checked()
    expect(page.get_by_role("button", name="Create")).to_be_enabled()

    # the filter over a long list: choose all shown, then what is sent is exactly what is checked
    page.get_by_role("searchbox", name="Filter People").fill("ann01")
    expect(page.get_by_role("checkbox", name="ann005", exact=True)).to_be_hidden()
    page.get_by_role("button", name="Choose all shown: People").click()  # each list's buttons named by it
    expect(page.get_by_text("4 of 13 chosen")).to_be_visible()  # ann002 and ann010-ann012
    # a list that follows a select box: filled anew when it changes, what is still offered kept
    page.get_by_role("checkbox", name="JSON", exact=True).check()
    page.get_by_role("checkbox", name="YAML", exact=True).check()
    page.get_by_label("Suite").select_option("test-hard")
    expect(page.get_by_role("checkbox", name="YAML", exact=True)).to_have_count(0)
    expect(page.get_by_role("checkbox", name="JSON", exact=True)).to_be_checked()
    expect(page.get_by_role("checkbox", name="XML", exact=True)).not_to_be_checked()
    name.fill("Pilot")
    # a box of lines takes Enter as a new line (it sends nothing: one create below, with both lines); a
    # check box is sent as yes or no
    rule = page.get_by_label("Rule", exact=True)
    rule.fill("Answer alone.")
    rule.press("End")
    rule.press("Enter")
    rule.type("No tools.")
    page.get_by_role("checkbox", name="Tell them", exact=True).check()
    screenshot(page, "light-form-filled")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_text('"name": "Pilot"')).to_be_visible()
    wait_for_app(page)
    said = page.locator('[data-testid="stMarkdownContainer"]', has_text='"name": "Pilot"').inner_text()
    assert '"count": 3' in said and '"share": 0.2' in said and '"suite": "test-hard"' in said
    assert '"formats": ["json"]' in said
    assert '"people": [2, 10, 11, 12]' in said  # the options' own values (numbers), in the options' order
    assert '"rule": "Answer alone.\\nNo tools."' in said and '"tell": true' in said
    expect(page.get_by_text("Created 1 time(s).")).to_be_visible()  # once: the rerun after it sends nothing
    # the create emptied the form for the next one
    expect(name).to_have_value("")
    expect(count).to_have_value("5")
    expect(page.get_by_text("0 of 13 chosen")).to_be_visible()
    expect(page.get_by_label("Rule", exact=True)).to_have_value("Answer alone.")
    expect(page.get_by_role("checkbox", name="Tell them", exact=True)).not_to_be_checked()


@pytest.mark.browser
def test_a_changed_default_replaces_a_field_left_alone_and_never_what_was_typed(form_page, page, wait_for_app):
    """A set brought above a study's form changes its fields' defaults (its strata, its rule): a field left
    at its old default takes the new one, a field typed in keeps what was typed."""
    page.goto(form_page)
    wait_for_app(page)
    name, strata = page.get_by_label("Name", exact=True), page.get_by_label("Strata", exact=True)
    expect(strata).to_have_value("subject")
    name.fill("kept")
    page.get_by_role("button", name="Bring a set").click()
    expect(strata).to_have_value("Subject")  # left alone: the new default
    expect(name).to_have_value("kept")  # typed: kept
    wait_for_app(page)
    strata.fill("mine")
    page.get_by_role("button", name="Bring a set").click()  # the default becomes "Topic"
    wait_for_app(page)
    expect(page.get_by_role("button", name="Bring a set")).to_be_enabled()
    page.wait_for_timeout(300)
    expect(strata).to_have_value("mine")
    expect(name).to_have_value("kept")
