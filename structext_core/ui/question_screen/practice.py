"""The screen after a practice question: the score and the answer key (unless withheld), before the
next question is shown, so reading it counts on no question's clock.
"""

from __future__ import annotations

import streamlit as st

from structext_core.evaluation import choices
from structext_core.studio import study
from structext_core.text.safe_text import markdown_text
from structext_core.ui import widgets
from structext_core.ui.question_screen.choice_answer import image_box
from structext_core.ui.question_screen.common import Screen


def on_practice_seen(response_id: int) -> None:
    """"Next practice question" / "Start the study": this page run shows the next question
    (which is what ends the feedback screen for good, in every tab and after a reload)."""
    st.session_state["hb_practice_seen"] = response_id


def _option_text(options: tuple[str, ...], letter: str) -> str:
    index = choices.LETTERS.find(letter) if letter else -1
    return f"**{letter}** · {markdown_text(options[index])}" if 0 <= index < len(options) else markdown_text(letter)


def _text_feedback(screen: Screen, feedback: study.PracticeFeedback) -> None:
    """A typed answer's practice feedback: its ROUGE-L and exact match, and the answer key."""
    if feedback.gave_up:
        st.warning("You gave up on this one." + ("" if feedback.key_withheld else
                                                 " Here is the answer the study expects."))
    else:
        verdict = "passed" if feedback.passed else "did not pass"
        (st.success if feedback.passed else st.warning)(
            f"Your answer **{verdict}**: ROUGE-L {feedback.rouge_l:.2f} (the pass mark is "
            f"{study.PASS_THRESHOLD:.2f}), exact match {'yes' if feedback.exact_match else 'no'}.")
        st.markdown("**Your answer**")
        widgets.text_block(feedback.response)
    if feedback.key_withheld:
        st.info(study.KEY_WITHHELD, icon=":material/lock:")
    else:
        st.markdown("**The answer key**")
        widgets.text_block(feedback.answer)


def _letter_feedback(screen: Screen, feedback: study.PracticeFeedback) -> None:
    """An image question's practice feedback: correct or not, the chosen option and the key's,
    beside the image and the question again (so the key can be checked against the figure)."""
    image_column, text_column = st.columns([3, 2], gap="medium")
    with text_column:
        if feedback.gave_up:
            st.warning("You gave up on this one.")
        else:
            (st.success if feedback.passed else st.warning)(
                f"Your answer is **{'correct' if feedback.passed else 'not correct'}**.")
        st.markdown("**Question**")
        st.text(feedback.question)
        if not feedback.gave_up:
            st.markdown(f"Your answer: {_option_text(feedback.options, feedback.response)}")
        if feedback.key_withheld:
            st.info(study.KEY_WITHHELD, icon=":material/lock:")
        else:
            st.markdown(f"The answer key: {_option_text(feedback.options, feedback.answer)}")
    with image_column:
        image_box(screen, feedback.assignment_id)


def practice_feedback_screen(screen: Screen, feedback: study.PracticeFeedback) -> None:
    """After a practice question: the score and the answer key, before the next question is
    shown (so reading this counts on no question's clock)."""
    with st.container(border=True):
        st.subheader(f"Practice question {feedback.seq} of {feedback.total}: how you did")
        (_letter_feedback if feedback.options else _text_feedback)(screen, feedback)
        last = feedback.seq >= feedback.total
        st.caption("Practice is not counted. " + ("Next come the study's questions; their answers are not shown."
                                                   if last else ""))
        st.button("Start the study" if last else "Next practice question", type="primary",
                  on_click=on_practice_seen, args=(feedback.response_id,))
