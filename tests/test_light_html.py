"""The light HTML block (structext_core/ui/light_html.py): drawn as one element on a page that says it draws
light elements, ``st.html`` elsewhere; two alike are two elements. What the browser keeps of hostile markup:
tests/browser/test_light_html_browser.py."""

from __future__ import annotations

import json
import textwrap

from streamlit.testing.v1 import AppTest

from structext_core.ui import light_html
from tests.pages.html_tables import html_blocks
from tests.pages.light_parts import run_script

SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.text.safe_text import figures_html
    from structext_core.ui import light_html, widgets

    if st.session_state.get("light"):
        light_html.page_draws_light()
    widgets.figures([("People", "3")])
    widgets.figures([("People", "3")])  # the same block twice: two elements

    @st.fragment
    def part():
        widgets.figures([("People", "3")])

    part()
''')


def run(**state) -> AppTest:
    return run_script(SCRIPT, **state)


def light_blocks(at) -> list[dict]:
    return [json.loads(e.proto.json) for e in at.get("bidi_component")
            if e.proto.component_name.endswith(light_html.COMPONENT_NAME)]


def test_a_page_that_draws_light_elements_draws_its_html_blocks_as_one_each():
    at = run(light=True)
    assert not at.exception and not at.html and len(light_blocks(at)) == 3
    assert html_blocks(at) == [block["html"] for block in light_blocks(at)]
    assert all('data-testid="sxFigure"' in block for block in html_blocks(at))
    at.run()  # again: the same three, no duplicate ids
    assert not at.exception and len(light_blocks(at)) == 3


def test_another_page_keeps_st_html():
    at = run()
    assert not light_blocks(at) and len(at.html) == 3 and html_blocks(at) == [h.value for h in at.html]
    at = run(_light_html_page="another page's hash")  # a page the person saw before said so: not this one
    assert not light_blocks(at) and len(at.html) == 3


def test_the_browser_script_keeps_only_listed_elements_and_attributes_and_never_recurses():
    js = light_html.HTML_JS
    assert '"script"' not in js and '"img"' not in js and '"a"' not in js and '"iframe"' not in js
    assert "createTreeWalker" in js and 'createElement("template")' in js
    assert "function cleaned" in js and js.count("cleaned(") == 2  # defined, called once: no recursion
    assert "on" not in light_html.ATTRIBUTES and "href" not in light_html.ATTRIBUTES and "src" not in light_html.ATTRIBUTES


LINKS = textwrap.dedent('''
    import streamlit as st
    from structext_core.studio import study
    from structext_core.ui import light_html, widgets
    from structext_core.views import your_studies

    light_html.page_draws_light()
    widgets.figures([("People", "3")])
    widgets.html_block(your_studies.studies_html([study.AnnotatorStudy(
        id=7, name="pilot", rule_text="r", show_correctness=False, n_items=4, rule_accepted_at=None, answered=0)],
        "human_baseline"))
''')


def test_a_block_with_a_link_stays_st_html_on_a_page_of_light_blocks():
    """A light block keeps no link (light_html.ATTRIBUTES): a study's *Start* link drawn as one was a dead word."""
    at = run_script(LINKS)
    assert not at.exception and len(light_blocks(at)) == 1  # the figure
    assert [block.value.count('href="human_baseline?study=7"') for block in at.html] == [1]
