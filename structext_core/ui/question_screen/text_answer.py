"""The answer box of a typed answer and its buttons (Submit answer, Pause, Give up, and "Add lines"
with its line boxes when the question has a reference), the question's texts above, as one light element
(:mod:`structext_core.ui.light_answer`): the draft as last saved fills a box this session has not
drawn yet, and a box it has drawn keeps its own text until the server writes it ("Add lines").
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.ui import light_answer
from structext_core.ui.question_screen.common import (
    ANSWER_LABEL,
    ANSWER_PLACEHOLDER,
    Screen,
    after_answer,
    answer_text,
    confirm_give_up,
    key,
    note,
    on_give_up_asked,
    question_name,
    report,
    text_key,
    text_version,
)
from structext_core.ui.question_screen.reference_viewer import MAX_LINE, on_add_lines
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


#: What the answer's buttons send (the first is the one Ctrl+Enter presses).
SUBMIT, PAUSE, GIVE_UP, ADD = "submit", "pause", "give_up", "add"
ADD_HELP = ("Adds lines From to To of the reference (set below; choosing a match or a line fills both), exactly as "
            "they are, on a new line at the end of your answer. Saved as your draft.")
#: What a click may carry: the study's own limit (study.MAX_RESPONSE_CHARS) has its own message below this.
MAX_ANSWER_CHARS = 4 * study.MAX_RESPONSE_CHARS
HINT = "Ctrl+Enter (⌘+Enter on a Mac) submits. Your answer is saved as you type."


#: The answer box's height in rows, as the browser grows it.
ROWS = light_answer.Rows(viewer.MIN_BOX_ROWS, viewer.MAX_BOX_ROWS, viewer.BOX_ROW_PX)


def question_blocks(view: study.QuestionView) -> list[tuple[str, str]]:
    """The texts above the answer box: the question, and its requirement when it has one."""
    return [("Question", view.question)] + ([("Requirement", view.requirement)] if view.requirement else [])


def on_action(screen: Screen, view: study.QuestionView, sent: light_answer.Sent) -> None:
    """A button of the answer was clicked: the text as typed (and the line boxes) came with it."""
    aid = view.assignment_id
    st.session_state[text_key(aid)] = sent.text
    if view.has_reference_panel:
        st.session_state[key("from", aid)], st.session_state[key("to", aid)] = sent.first, sent.last
    if sent.action == SUBMIT:
        on_submit(screen, aid, question_name(view, with_total=False))
    elif sent.action == PAUSE:
        on_pause(screen, aid)
    elif sent.action == GIVE_UP:
        on_give_up_asked(screen, aid)
    elif sent.action == ADD and view.has_reference_panel:
        on_add_lines(screen, aid, view.reference)


def answer_form(screen: Screen, view: study.QuestionView) -> None:
    """The question's texts, the answer box and its buttons as one light element (:mod:`light_answer`)."""
    aid = view.assignment_id
    confirming = st.session_state.get("hb_confirm_give_up") == view.assignment_id
    # The draft as last saved fills a box this session has not drawn yet (reload, new tab,
    # after a pause); a box it has drawn keeps its own text.
    st.session_state.setdefault(text_key(aid), view.draft)
    buttons = [light_answer.Button(SUBMIT, "Submit answer", primary=True), light_answer.Button(PAUSE, "Pause"),
               light_answer.Button(GIVE_UP, "Give up")]
    line_range = None
    if view.has_reference_panel:  # lines to take from it
        first, last = (st.session_state.get(key(name, aid)) for name in ("from", "to"))
        buttons.append(light_answer.Button(ADD, light_answer.span_label("Add lines", "to the answer", first, last),
                                           help=ADD_HELP, wide=True))
        line_range = light_answer.LineRange(first, last, st.session_state.get(key("lines_set", aid), 0),
                                            (("From line", "First line"), ("To line", "Last line")), ADD,
                                            "Add lines", "to the answer", max_line=MAX_LINE)
    light_answer.box(
        f"hb_answer_{aid}", label=ANSWER_LABEL, text=answer_text(aid), version=text_version(aid), buttons=buttons,
        on_action=lambda sent: on_action(screen, view, sent), max_chars=MAX_ANSWER_CHARS,
        blocks=question_blocks(view), rows=ROWS, placeholder=ANSWER_PLACEHOLDER, hint="" if confirming else HINT,
        disabled=confirming,
        line_range=line_range,
    )
    if take_error := st.session_state.pop(key("take_error", aid), None):
        st.error(take_error)
    if confirming:
        confirm_give_up(screen, view.assignment_id, question_name(view, with_total=False))
