"""The last screen of a person's visit to a study (:class:`structext_core.studio.crowd.outcomes.EndScreen`):
what happened in plain words, the platform's code in large text with a box to copy it from, and, when
the lead gave the platform's address, a button back to it and a redirect after a few seconds.

The address is the lead's, exactly as written: nothing of the person (no id, no answer) is added. A
visit without a code or an address ends with "you can close this tab".
"""

from __future__ import annotations

import streamlit as st

from structext_core.studio.crowd.outcomes import EndScreen
from structext_core.ui import widgets

#: Seconds the end screen waits before it sends the person back to the platform.
REDIRECT_SECONDS = 5
RETURN_LABEL = "Return to the study platform"

# Runs in the page itself (components v2 mount no iframe): after ``seconds``, the tab goes to the
# lead's address (a web address only; anything else is ignored). A new drawing restarts the wait.
_REDIRECT_JS = """
export default function (component) {
  const { data } = component;
  const url = data && typeof data.url === "string" ? data.url : "";
  if (!/^https?:\\/\\//i.test(url)) return;
  const wait = Math.max(1, Math.min(60, Number(data.seconds) || 5)) * 1000;
  const timer = window.setTimeout(() => { window.location.assign(url); }, wait);
  return () => window.clearTimeout(timer);
}
"""

#: (title, what happened) by reason of the end.
WORDS = {
    "done": ("You have finished the study. Thank you!", "Every question is answered, and your answers are saved."),
    "time_up": ("Time is up. Thank you!", "The time set for this study is used up. Your answers so far are saved; "
                                          "there are no more questions for you."),
    "gold": ("Thank you for your time", "You cannot continue with this study. Your answers so far are saved."),
    "declined": ("You did not agree to take part", "No question will be shown, and nothing more is asked of you."),
    "timed_out": ("Your time in this study has run out", "The study's time limit passed before you finished, so "
                                                         "there are no more questions for you and your place "
                                                         "went to someone else. Your answers so far are kept."),
    "turned_away": ("You cannot take part in this study", "Nothing about you was recorded."),
}
#: The last words of a visit that ends with no code and no address, where "you are done" is not true.
CLOSING = {"turned_away": "Return the study on the platform you came from, so that your place goes to someone "
                          "else; then you can close this tab."}
CODE_LABELS = {"completed": "Your completion code", "screened_out": "Your code", "declined": "Your code"}


def redirect(url: str, seconds: int = REDIRECT_SECONDS) -> None:
    """Send the tab to ``url`` after ``seconds`` (a component drawn in the page)."""
    component = st.components.v2.component("structext_crowd_redirect", js=_REDIRECT_JS)
    component(data={"url": url, "seconds": seconds}, key="crowd_redirect")


def end_screen(end: EndScreen) -> None:
    """Draw the end of the visit: words, the code to copy, the way back to the platform."""
    title, words = WORDS.get(end.reason, WORDS["done"])
    st.subheader(title)
    st.write(words)
    if end.code:
        label = CODE_LABELS.get(end.outcome, "Your code")
        widgets.figures([(label, end.code)])
        st.caption("Copy the code into the study platform:")
        st.code(end.code, language=None)
    if end.url:
        st.link_button(RETURN_LABEL, end.url, type="primary")
        st.caption(f"You are taken back to the study platform in {REDIRECT_SECONDS} seconds.")
        redirect(end.url)
    elif end.code:
        st.info("Enter the code on the study platform; then you are done and can close this tab.")
    else:
        st.info(CLOSING.get(end.reason, "You are done: you can close this tab."))
