"""The navigation's menu as a light element (structext_core/ui/light_nav.py): what it lists, and a click."""

import json

from streamlit.testing.v1 import AppTest

from structext_core.ui import light_nav
from tests.pages.light_parts import bidi_elements, send_event

APP = '''
import streamlit as st
from structext_core.ui import light_nav

def one():
    st.title("Page one")

def two():
    st.title("Page two")

def secret():
    st.title("Page hidden")

sections = {"First": [st.Page(one, title="One", icon=":material/home:", default=True),
                      st.Page(two, title="Two", url_path="two")],
            "Empty": [st.Page(secret, title="Hidden", url_path="hidden", visibility="hidden")]}
page = st.navigation(sections, position="hidden")
with st.sidebar:
    light_nav.menu(sections, page, app="The app", who=st.session_state.get("who"))
page.run()
'''


def _menu(at):
    found = [e for e in bidi_elements(at) if e.proto.component_name.endswith(light_nav.COMPONENT_NAME)]
    assert len(found) == 1, found
    return found[0], json.loads(found[0].proto.json)


def _headings(at) -> list[str]:
    return [t.value for t in at.title]


def test_the_menu_lists_the_shown_pages_by_section_and_marks_the_current_one():
    at = AppTest.from_string(APP, default_timeout=30).run()
    _, data = _menu(at)
    assert data == {"sections": [{"title": "First", "links": [{"label": "One", "path": "", "icon": "home"},
                                                              {"label": "Two", "path": "two", "icon": ""}]}],
                    "current": "", "app": "The app", "who": None}  # the hidden page is not listed; its section, left empty, neither
    assert _headings(at) == ["Page one"]


def test_a_click_switches_to_the_page_named_and_nothing_else_is_followed():
    at = AppTest.from_string(APP, default_timeout=30).run()
    element, _ = _menu(at)
    at = send_event(at, element, "go", "two")
    assert _headings(at) == ["Page two"]
    assert _menu(at)[1]["current"] == "two"
    for forged in ("hidden", "nowhere", 7, None, ["two"], "two/../hidden"):  # a page not listed, or not a path
        element, _ = _menu(at)
        at = send_event(at, element, "go", forged)
        assert not at.exception
        assert _headings(at) == ["Page two"], forged
    element, _ = _menu(at)
    at = send_event(at, element, "go", "")  # the default page, by its empty path
    assert _headings(at) == ["Page one"]


def test_under_the_menu_the_app_and_who_is_logged_in_as_plain_strings():
    at = AppTest.from_string(APP, default_timeout=30)
    at.session_state["who"] = {"name": "<b>ann</b>", "role": "annotator", "password_hash": "never sent"}
    at.run()
    _, data = _menu(at)
    assert data["app"] == "The app"
    assert data["who"] == {"name": "<b>ann</b>", "role": "annotator"}  # written as text in the browser; nothing else sent


def test_icon_names():
    assert light_nav.icon_name(":material/manage_accounts:") == "manage_accounts"
    assert light_nav.icon_name("🌳") == "🌳"
    assert light_nav.icon_name(None) == ""
