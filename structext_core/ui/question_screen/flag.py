""""Report a problem with this question": a report to the study lead (what is wrong, and a note),
sent without pausing or submitting anything; the question's clock and draft stay as they were.
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.ui import widgets
from structext_core.ui.question_screen.common import Screen


def _flag_keys(assignment_id: int) -> tuple[str, str, str]:
    return f"hb_flag_kind_{assignment_id}", f"hb_flag_note_{assignment_id}", f"hb_flag_said_{assignment_id}"


def on_flag(screen: Screen, study_id: int, item_id: int, assignment_id: int) -> None:
    """Send the report; nothing else changes (no pause, no submission, the draft stays)."""
    kind_key, note_key, said_key = _flag_keys(assignment_id)
    try:
        study.flag_question(ui.get_db(), study_id, screen.user_id, item_id, st.session_state.get(kind_key),
                            st.session_state.get(note_key, ""))
    except study.StudyError as error:
        st.session_state[said_key] = ("error", f"The report was not sent. {error}")
    else:
        st.session_state[note_key] = ""
        st.session_state[said_key] = ("success", "Thank you: the study lead will look at this question. "
                                                 "Carry on answering it; its clock and your answer are as they were.")


@ui.fragment
def flag_box(screen: Screen, view: study.QuestionView) -> None:
    """"Report a problem with this question". A fragment: sending a report reruns only this
    box, so the answer box (and what is typed in it) and the clock are left alone."""
    kind_key, note_key, said_key = _flag_keys(view.assignment_id)
    # Its form is built only while it is open (opening it reruns this fragment): every submit
    # draws the question page (benchmarks/bench_annotators.py: with the sidebar's Account box as it
    # was then, 6% less CPU per answer).
    box = widgets.lazy_section("Report a problem with this question", key=f"hb_flag_open_{view.assignment_id}")
    if not box:
        return
    with box:
        with st.form(f"hb_flag_form_{view.assignment_id}", border=False):
            st.selectbox("What is wrong", list(study.FLAG_KINDS), format_func=study.FLAG_KINDS.get, key=kind_key)
            st.text_area("Note for the study lead (optional)", key=note_key, height=80,
                         max_chars=study.MAX_FLAG_NOTE_CHARS, placeholder="What looks wrong, and where")
            st.form_submit_button("Send report", on_click=on_flag,
                                  args=(screen, view.study_id, view.item_id, view.assignment_id))
        if said := st.session_state.get(said_key):
            (st.success if said[0] == "success" else st.error)(said[1])
