"""The screens the question page shows in place of one another: the question (a typed answer beside
its reference or image, or a multiple-choice question), the pause screen, the question taken over by
another tab, and the study finished.
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui.question_screen.choice_answer import image_box, image_question_screen
from structext_core.ui.question_screen.common import (
    Screen,
    idle_time,
    note,
    question_name,
    report,
    show_messages,
    text_key,
)
from structext_core.ui.question_screen.flag import flag_box
from structext_core.ui.question_screen.reference_viewer import reference_panel
from structext_core.ui.question_screen.text_answer import answer_form
from structext_core.ui.question_screen.watches import activity_watch, pause_watch, progress_and_clock


def on_resume(screen: Screen, assignment_id: int) -> None:
    report(screen, study.resume_question, assignment_id, tab=screen.tab)


def on_continue_here(screen: Screen, study_id: int) -> None:
    try:
        study.take_over(ui.get_db(), study_id, screen.user_id, screen.tab)
    except study.StudyError as error:
        note(error)
        return
    carried = st.session_state.pop("hb_carry", None)
    if carried is not None:
        assignment_id, text = carried
        report(screen, study.record_activity, assignment_id, screen.tab, draft=text)
        st.session_state.pop(text_key(assignment_id), None)


def finished_screen(screen: Screen, chosen: study.AnnotatorStudy, studies: list[study.AnnotatorStudy]) -> None:
    progress = study.annotator_progress(ui.get_db(), chosen.id, screen.user_id)
    counts = chosen.counts
    practice = f", after {plural(counts.practice, 'practice question')}" if counts.practice else ""
    st.success(markdown_text(
        f"You have answered all {counts.for_annotator} of {chosen.name}{practice} "
        f"({progress.gave_up:,} given up). Thank you!"
    ))
    st.write(f"Time spent answering, pauses excluded: **{study.format_duration(progress.seconds)}**.")
    waiting = [item.name for item in studies if item.id != chosen.id and not item.finished]
    if waiting:
        st.info(f"Still to answer: {', '.join(waiting)}. Choose it under **Study** above.")


def paused_screen(screen: Screen, view: study.QuestionView) -> None:
    with st.container(border=True):
        st.subheader(f"Paused: {question_name(view)}")
        why = (f"It paused by itself after {idle_time(screen.settings)} without any input. "
               if view.pause_reason == "idle" else "")
        st.write(
            f"{why}The question is hidden, in every tab, and its clock stands at "
            f"**{study.format_duration(view.elapsed())}**. Your draft answer is saved."
        )
        st.button("Resume", type="primary", on_click=on_resume, args=(screen, view.assignment_id))
    pause_watch(screen, view.assignment_id)


def taken_over_screen(screen: Screen, view: study.QuestionView) -> None:
    with st.container(border=True):
        st.subheader("This question is open in another tab")
        st.write(
            f"{question_name(view).capitalize()} was opened in another tab or window, so it is "
            "hidden here and its clock counts there. Carry on in that tab, or continue here: "
            "the other tab then hides it, and your answer as last saved comes with it."
        )
        st.button("Continue here", type="primary", on_click=on_continue_here, args=(screen, view.study_id))


def question_screen(screen: Screen, view: study.QuestionView) -> None:
    if view.options:
        image_question_screen(screen, view)
        return
    progress_and_clock(screen, view)
    show_messages()

    if view.has_reference_panel:  # its benchmark declares a reference panel
        reference_column, answer_column = st.columns([3, 2], gap="medium")
        with reference_column:
            reference_panel(screen, view)
    elif view.has_image:  # a short answer on an image: the image beside the question
        image_column, answer_column = st.columns([3, 2], gap="medium")
        with image_column:
            image_box(screen, view.assignment_id)
    else:  # a short answer with no reference: no empty reference panel
        answer_column = st.container()
    with answer_column:
        answer_form(screen, view)  # the question's texts, the answer box, its buttons and its size
        activity_watch(screen, view.assignment_id)
        flag_box(screen, view)
