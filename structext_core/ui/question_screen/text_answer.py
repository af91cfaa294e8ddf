"""The answer box of a typed answer and its buttons (Submit answer, Pause, Give up, and "Add lines"
when the question has a reference): the draft as last saved fills a box this session has not
drawn yet, and a box it has drawn keeps its own text.
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.ui.question_screen.common import (
    ANSWER_LABEL,
    Screen,
    after_answer,
    answer_text,
    confirm_give_up,
    key,
    known_answer,
    note,
    on_give_up_asked,
    question_name,
    remember_answer,
    report,
    text_key,
)
from structext_core.ui.question_screen.reference_viewer import line_range, on_add_lines
from structext_core.views import reference as viewer


def on_submit(screen: Screen, assignment_id: int, name: str) -> None:
    text = answer_text(assignment_id)
    try:
        submission = study.submit_answer(ui.get_db(), screen.user_id, assignment_id, text, tab=screen.tab)
    except study.StudyError as error:
        if isinstance(error, study.TakenOverError):
            # Kept for "Continue here": the answer box is not drawn while another tab holds it.
            st.session_state["hb_carry"] = (assignment_id, text)
        note(error)
    else:
        after_answer(screen, submission, name)


def on_pause(screen: Screen, assignment_id: int) -> None:
    report(screen, study.pause_question, assignment_id, answer_text(assignment_id), tab=screen.tab)


def answer_form(screen: Screen, view: study.QuestionView) -> None:
    aid = view.assignment_id
    confirming = st.session_state.get("hb_confirm_give_up") == view.assignment_id
    # The draft as last saved fills a box this session has not drawn yet (reload, new tab,
    # after a pause); a box it has drawn keeps its own text.
    st.session_state.setdefault(text_key(view.assignment_id), view.draft)
    if st.session_state.get("hb_answer_drawn") != (aid, answer_text(aid)):
        remember_answer(aid)  # the form sent this text (or the box is new): the newest known
    st.session_state["hb_answer_drawn"] = (aid, answer_text(aid))
    with st.form(f"hb_form_{view.assignment_id}", border=False):
        # Never disabled: Streamlit drops the value a disabled widget receives, which is how
        # "Give up" (it submits the form) used to lose the text typed so far. Its height
        # follows the answer's lines (within bounds) each time the page is drawn.
        st.text_area(
            ANSWER_LABEL, height=viewer.answer_box_height(known_answer(aid)), key=text_key(view.assignment_id),
            placeholder="Type or paste your answer here",
        )
        buttons = st.container(horizontal=True)
        # The first submit button is the one Ctrl+Enter presses.
        buttons.form_submit_button(
            "Submit answer", type="primary", width="stretch", disabled=confirming,
            on_click=on_submit, args=(screen, view.assignment_id, question_name(view, with_total=False)),
        )
        buttons.form_submit_button("Pause", width="stretch", disabled=confirming,
                                   on_click=on_pause, args=(screen, view.assignment_id))
        buttons.form_submit_button("Give up", width="stretch", disabled=confirming,
                                   on_click=on_give_up_asked, args=(screen, view.assignment_id))
        # A button of the form, so the text typed so far comes with the click; after the
        # first one (Ctrl+Enter presses Submit). Keyed: a new label keeps the same button.
        first, last = (st.session_state.get(key(name, aid)) for name in ("from", "to"))
        span = f" {first:,.0f}–{last:,.0f}" if first is not None and last is not None else ""
        if view.has_reference_panel:  # lines to take from it
            st.form_submit_button(
                f"Add lines{span} to the answer", key=key("add", aid), width="stretch", disabled=confirming,
                on_click=on_add_lines, args=(screen, aid, view.reference),
                help="Adds lines From to To of the reference (set below; choosing a match or a line fills "
                     "both), exactly as they are, on a new line at the end of your answer. Saved as your draft.",
            )
    if view.has_reference_panel:
        line_range(aid)
    if take_error := st.session_state.pop(key("take_error", aid), None):
        st.error(take_error)
    if confirming:
        confirm_give_up(screen, view.assignment_id, question_name(view, with_total=False))
    else:
        st.caption("Ctrl+Enter (⌘+Enter on a Mac) submits. Your answer is saved as you type.")
