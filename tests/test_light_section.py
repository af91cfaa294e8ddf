"""A closed section's header as a light element (structext_core/ui/light_section.py, through
``widgets.lazy_section``): on a page that draws light elements, a closed section is its header alone; "open"
sent by it opens the section in Streamlit's expander, anything else is ignored; elsewhere Streamlit's expander
as before. In the browser: tests/browser/test_light_section_browser.py."""

from __future__ import annotations

import json
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.ui import light_section, widgets
from tests.pages.light_choices import _section_elements, open_section, sections, send
from tests.pages.light_parts import run_script

SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_html, widgets

    if st.session_state.get("light"):
        light_html.page_draws_light()
    if box := widgets.lazy_section(st.session_state.get("label", "Each person's rows (3)"), key="rows",
                                   icon=":material/group:", name=st.session_state.get("name", "")):
        box.write("The rows, drawn open")
''')


def run(**state) -> AppTest:
    return run_script(SCRIPT, **state)


def test_closed_it_is_a_header_and_open_streamlits_expander_with_its_content():
    at = run(light=True)
    assert not at.exception and not at.expander and sections(at) == ["Each person's rows (3)"]
    assert not [m for m in at.markdown if m.value == "The rows, drawn open"]  # closed: nothing of its content
    at = open_section(at, "Each person's rows (3)")
    assert not at.exception and not _section_elements(at)
    assert [e.label for e in at.expander] == ["Each person's rows (3)"] and at.expander[0].proto.expanded
    assert [m.value for m in at.expander[0].markdown] == ["The rows, drawn open"]
    at.run()  # it stays open
    assert [e.label for e in at.expander] == ["Each person's rows (3)"]
    at.session_state["rows"] = False  # closed, as a click on the open expander leaves it
    at.run()
    assert not at.expander and sections(at) == ["Each person's rows (3)"]


def test_a_name_is_bold_closed_and_open_and_stays_text():
    # Home's suites: "pilot_a: 29 samples", the name in bold: closed, the header's data names the bold words
    # (drawn with textContent); open, the expander's Markdown with the name escaped
    at = run(light=True, label="Each_person*: rows (3)", name="Each_person*")
    assert sections(at) == ["Each_person*: rows (3)"]
    assert [json.loads(e.proto.json)["bold"] for e in _section_elements(at)] == ["Each_person*"]
    at = open_section(at, "Each_person*: rows (3)")
    assert [e.label for e in at.expander] == ["**Each\\_person\\***: rows (3)"]


def test_a_name_that_is_not_the_start_of_the_label_is_refused():
    with pytest.raises(ValueError, match="is not the start of the label"):
        widgets.lazy_section("rows (3)", key="rows", name="Each person")
    with pytest.raises(ValueError, match="are not the start of the label"):
        light_section.section("rows (3)", key="rows", bold="Each person")


def test_closed_it_stays_closed_on_the_next_runs():
    # Streamlit keeps the open expander's last state under its widget id, and handed it back to the run after
    # the one that drew the header: the section opened again by itself (Results' Settings, in its test)
    at = run(light=True, rows=True)
    assert [e.label for e in at.expander] == ["Each person's rows (3)"]
    at.session_state["rows"] = False
    for _ in range(2):
        at.run()
        assert not at.expander and sections(at) == ["Each person's rows (3)"]


@pytest.mark.parametrize("forged", ["close", True, 1, None, {"open": True}])
def test_anything_but_open_is_ignored(forged):
    at = send(run(light=True), "rows", forged, elements=_section_elements)
    assert not at.exception and not at.expander and sections(at) == ["Each person's rows (3)"]


def test_a_page_that_draws_no_light_element_keeps_streamlits_expander():
    at = run()
    assert not _section_elements(at) and [e.label for e in at.expander] == ["Each person's rows (3)"]
