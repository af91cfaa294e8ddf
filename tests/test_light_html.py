"""The light HTML block (structext_core/ui/light_html.py): drawn as one element on a page that says it draws
light elements, ``st.html`` elsewhere; two alike are two elements. What the browser keeps of hostile markup:
tests/browser/test_light_html_browser.py."""

from __future__ import annotations

import json
import textwrap

import pytest
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
    assert '"script"' not in js and '"img"' not in js and '"iframe"' not in js
    assert "createTreeWalker" in js and 'createElement("template")' in js
    assert "function cleaned" in js and js.count("cleaned(") == 2  # defined, called once: no recursion
    assert "on" not in light_html.ATTRIBUTES and "href" not in light_html.ATTRIBUTES and "src" not in light_html.ATTRIBUTES
    # a link keeps its address only by the page-link pattern, the same in the browser as on the server
    assert 'name === "href" && node.localName === "a" && PAGE_LINK.test(attribute.value)' in js
    assert f"new RegExp({json.dumps(light_html.PAGE_LINK)})" in js


@pytest.mark.parametrize(("href", "kept"), [
    ("results", True), ("human_baseline?study=7", True), ("results?benchmark=aibench&amp;view=paper", True),
    ("/results", False), ("//evil.example/x", False), ("https://evil.example", False), ("javascript:alert(1)", False),
    ("results#top", False), ("results?x=%3Cb", False), ("results\n", False), ("", False), (" results", False),
])
def test_only_links_to_the_apps_own_pages_keep_a_block_light(href, kept):
    assert light_html.keeps_links(f'<p>see <a class="x" href="{href}">there</a></p>') is kept
    assert light_html.keeps_links("<p>no link</p>")
    assert not light_html.keeps_links('<a class="x">no address</a>')  # a link we cannot read: st.html's


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


def test_a_block_whose_links_are_the_apps_pages_is_light_and_one_with_another_stays_st_html():
    """A study's *Start* link is to one of the app's pages: a light block keeps it (light_html.PAGE_LINK). A link
    anywhere else keeps the block ``st.html``."""
    at = run_script(LINKS)
    assert not at.exception and not at.html and len(light_blocks(at)) == 2  # the figure and the studies
    assert [block["html"].count('href="human_baseline?study=7"') for block in light_blocks(at)] == [0, 1]
    at = run_script(LINKS.replace('"human_baseline"))', '"https://elsewhere.example/human_baseline"))'))
    assert not at.exception and len(light_blocks(at)) == 1 and len(at.html) == 1
