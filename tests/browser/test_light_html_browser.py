"""The light HTML block (structext_core/ui/light_html.py) in Chromium: a builder's block drawn as it is (a figure
with its style), and hostile markup handed to it directly (the builders escape every text; this is the second
check) loses every element and attribute outside the lists: nothing runs, nothing loads."""

from __future__ import annotations

import textwrap

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import serving_script

SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_html, widgets

    light_html.page_draws_light()
    widgets.figures([("Answered of 6,000", "3,000", "Answers stored")])
    light_html.draw(
        '<div class="kept" title="a tip" onclick="window.__ran = 1">kept <strong>bold</strong>'
        '<img src="/x-image" onerror="window.__ran = 2"><script>window.__ran = 3</script>'
        '<a href="javascript:window.__ran = 4">link text</a><iframe src="/x-frame"></iframe>'
        '<a class="page" href="results?benchmark=aibench" onclick="window.__ran = 6">a page</a>'
        '<a class="far" href="//x-elsewhere.example/">far</a>'
        '<svg><script>window.__ran = 5</script></svg>'
        '<span style="background: url(/x-style)">styled</span></div>'
        '<style>@import url(/x-import); .kept { color: red; }</style>')
    st.write("drawn")
''')


@pytest.fixture(scope="module")
def html_page(tmp_path_factory, app_env):
    with serving_script(tmp_path_factory.mktemp("light_html"), "html_page.py", SCRIPT, app_env) as url:
        yield url


@pytest.mark.browser
def test_a_block_is_drawn_and_hostile_markup_loses_what_could_run_or_load(html_page, page, wait_for_app):
    asked = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(html_page)
    wait_for_app(page)
    figure = page.get_by_test_id("sxFigure")
    expect(figure).to_contain_text("Answered of 6,000")
    expect(figure).to_contain_text("3,000")
    assert figure.evaluate("node => getComputedStyle(node).display") != "inline"  # its style sheet applies
    kept = page.locator("div.kept")
    expect(kept).to_contain_text("kept bold")
    expect(kept).to_have_attribute("title", "a tip")
    assert kept.get_attribute("onclick") is None
    for tag in ("img", "script", "iframe", "svg"):
        assert kept.locator(tag).count() == 0, tag
    # a link keeps its address only when it is one of the app's pages; its text stays, its handler goes
    assert [(link.inner_text(), link.get_attribute("href"), link.get_attribute("onclick"))
            for link in kept.locator("a").all()] == [("link text", None, None), ("a page", "results?benchmark=aibench", None),
                                                     ("far", None, None)]
    assert page.locator("span", has_text="styled").get_attribute("style") is None
    kept.locator("strong").click()
    kept.locator("a.far").click()  # no address: goes nowhere
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__ran") is None
    assert not [url for url in asked if "/x-" in url], asked
