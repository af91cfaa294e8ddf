"""structext_core/ui/light_answer.py without a browser: what a click may send, what the server hands on, and a
page that draws one (the question page's own journeys are tests/pages/test_page_human_baseline.py)."""

import pytest

from structext_core.ui import light_answer as la
from tests.pages.answer_boxes import answer_box, press
from tests.pages.light_parts import run_script

NAMES = ("submit", "add")


def test_a_click_is_handed_on_checked():
    sent = la.checked({"action": "add", "text": "my answer", "first": 3, "last": 5.0}, NAMES, max_chars=100,
                      max_line=10)
    assert sent == la.Sent("add", "my answer", 3, 5)
    assert la.checked({"action": "submit", "text": ""}, NAMES, max_chars=100, max_line=None) == la.Sent("submit", "")
    # without line boxes, lines sent are not read
    assert la.checked({"action": "submit", "text": "a", "first": "x"}, NAMES, max_chars=100, max_line=None).first is None


@pytest.mark.parametrize("forged", [
    None, "submit", [], {"action": "delete", "text": "a"}, {"action": "submit"}, {"action": "submit", "text": 3},
    {"action": "add", "text": "a", "first": float("nan")}, {"action": "add", "text": "a", "first": 2.5},
    {"action": "add", "text": "a", "first": 0}, {"action": "add", "text": "a", "last": 11},
    {"action": "add", "text": "a", "first": True}, {"action": "add", "text": "a", "first": "3"},
    {"action": "add", "text": "a", "first": float("inf")}, {"action": "add", "text": "a", "first": 10**400},
])
def test_what_the_element_does_not_send_is_ignored(forged):
    assert la.checked(forged, NAMES, max_chars=100, max_line=10) is None


def test_a_text_over_the_bound_is_refused_with_its_message():
    with pytest.raises(ValueError, match=r"^over 100 characters, so nothing was sent\. Shorten it\.$"):
        la.checked({"action": "submit", "text": "x" * 101}, NAMES, max_chars=100, max_line=None)


def test_the_script_writes_text_as_text_and_sends_one_event():
    assert "innerHTML" not in la.ANSWER_JS and "insertAdjacentHTML" not in la.ANSWER_JS
    assert "outerHTML" not in la.ANSWER_JS and "textContent" in la.ANSWER_JS
    assert la.ANSWER_JS.count("setTriggerValue(") == 1  # one event: a button's (or Ctrl+Enter's) action


def test_the_span_label_names_the_lines_set():
    assert la.span_label("Add lines", "to the answer", 3, 1234) == "Add lines 3–1,234 to the answer"
    assert la.span_label("Add lines", "to the answer", None, 4) == "Add lines to the answer"


SCRIPT = """
import streamlit as st
from structext_core.ui import light_answer as la

def took(sent):
    st.session_state["log"] = st.session_state.get("log", []) + [(sent.action, sent.text)]
    if sent.action == "add":
        st.session_state["text"] = sent.text + "\\nadded"
        st.session_state["version"] = st.session_state.get("version", 0) + 1

la.box("answer", label="Your answer", text=st.session_state.get("text", "draft"),
       version=st.session_state.get("version", 0), on_action=took, max_chars=20,
       rows=la.Rows(8, 26, 24), blocks=[("Question", "How many?")],
       buttons=[la.Button("submit", "Submit answer", primary=True), la.Button("add", "Add", wide=True),
                la.Button("pause", "Pause", disabled=True)])
st.write(f"log: {st.session_state.get('log', [])}")
"""


def test_a_page_draws_the_box_and_a_click_runs_its_callback_first():
    at = run_script(SCRIPT)
    box = answer_box(at)
    assert (box.question, box.value, box.buttons) == ("How many?", "draft", ["Submit answer", "Add", "Pause"])
    at = press(at, "Pause")  # a button that takes no click: what a click of it sends is not handed on
    assert at.markdown[-1].value == "log: []"
    box.input("forty-two")
    at = press(at, "Submit answer")
    assert at.markdown[-1].value == "log: [('submit', 'forty-two')]"  # the callback ran before the page
    assert answer_box(at).value == "forty-two"  # the box keeps what was typed: no new version
    at = press(at, "Add")
    assert answer_box(at).value == "forty-two\nadded" and answer_box(at).data["version"] == 1  # the server wrote it
    answer_box(at).input("x" * 21)
    at = press(at, "Submit answer")
    assert at.error[0].value == "Your answer: over 20 characters, so nothing was sent. Shorten it."
    assert at.markdown[-1].value.count("(") == 2  # nothing more handed on
