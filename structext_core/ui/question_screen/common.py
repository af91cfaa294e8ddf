"""What every piece of the question page shares: the :class:`Screen` of one page run, the session
keys of a question's answer box and reference tools, the page's messages, and the actions' way
with a user error (a message on the next drawing of the page).

Callbacks run before the page is drawn, so the page always shows the state after them. They are
given the :class:`Screen` of the run that drew their widget (never a page's globals).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from structext_core import ui
from structext_core.studio import durations, study
from structext_core.ui import widgets

ANSWER_LABEL = "Your answer"
ANSWER_PLACEHOLDER = "Type or paste your answer here"


@dataclass(frozen=True)
class Screen:
    """One run of the question page: who answers (``user_id``), in which browser tab (``tab``: a
    reload or a new tab is a new Streamlit session, so a new tab id), under which clock
    ``settings``, and the page's components, registered as the page runs."""

    user_id: int
    tab: str
    settings: study.ClockSettings
    activity: Callable[..., Any] | None = None
    clock: Callable[..., Any] | None = None
    window: Callable[..., Any] | None = None
    option_keys: Callable[..., Any] | None = None


def text_key(assignment_id: int) -> str:
    return f"hb_text_{assignment_id}"


def answer_text(assignment_id: int) -> str:
    return st.session_state.get(text_key(assignment_id), "") or ""


def _version_key(assignment_id: int) -> str:
    return f"hb_written_{assignment_id}"


def text_version(assignment_id: int) -> int:
    """How many times the server wrote the answer box (:func:`write_answer`): a box the browser drew keeps
    its own text until this changes."""
    return st.session_state.get(_version_key(assignment_id), 0)


def write_answer(assignment_id: int, text: str) -> None:
    """Put ``text`` in the answer box (the box drawn keeps its own text otherwise)."""
    st.session_state[text_key(assignment_id)] = text
    st.session_state[_version_key(assignment_id)] = text_version(assignment_id) + 1


def key(name: str, assignment_id: int) -> str:
    """A page key of one question's reference tools (a new question starts them afresh)."""
    return f"hb_{name}_{assignment_id}"


#: The session key of (assignment, the text "Add lines" appended to): an input report still holding that
#: text was sent before the click and is older than the answer now.
ADDED_FROM_KEY = "hb_added_from"


def forget_box() -> None:
    """The answer box is not on screen (paused, taken over, feedback, finished): forget what
    this session's box held. The draft saved in the database is the text from now on, so the
    box drawn again (Resume, Continue here) shows it, not a text from before the break."""
    for key in [key for key in st.session_state if str(key).startswith(("hb_text_", "hb_written_"))]:
        del st.session_state[key]


def note(error: study.StudyError) -> None:
    """Keep a user error for the next drawing of the page (a stale question is only a notice)."""
    ui.flash("info" if isinstance(error, study.StaleQuestionError) else "error", str(error))


def report(screen: Screen, action, *args, **options) -> study.Submission | None:
    """Run a study action; user errors become a message on the next drawing of the page."""
    try:
        return action(ui.get_db(), screen.user_id, *args, **options)
    except study.StudyError as error:
        note(error)
    return None


def question_name(view: study.QuestionView, with_total: bool = True) -> str:
    """How the page names a question: "practice question 2 of 3", "question 4 of 12"."""
    name = f"{'practice question' if view.practice else 'question'} {view.seq}"
    return f"{name} of {view.total}" if with_total else name


def after_answer(screen: Screen, submission: study.Submission | None, name: str) -> None:
    if submission is None:
        return
    verb = "Gave up on" if submission.gave_up else "Saved your answer to"
    ui.flash("toast", f"{verb} {name} (time {study.format_duration(submission.elapsed_seconds)}).")
    if study.practice_feedback(ui.get_db(), screen.user_id, submission.response_id) is not None:
        return  # a practice answer: its feedback is a screen of its own before the next question
    feedback = study.response_feedback(ui.get_db(), screen.user_id, submission.response_id)
    if feedback is not None:
        st.session_state["hb_feedback"] = feedback


def show_messages() -> None:
    ui.show_flash()
    if feedback := st.session_state.pop("hb_feedback", None):
        if feedback.withheld:
            st.info("Whether your previous answer was correct is not shown: the same question is still open "
                    "for you in another study.")
            return
        verdict = "correct" if feedback.correct else "not correct"
        text = f"Your previous answer was **{verdict}**" + (
            "." if feedback.letter else f" (ROUGE-L {feedback.rouge_l:.2f}).")
        (st.success if feedback.correct else st.warning)(text)


def idle_time(settings: study.ClockSettings) -> str:
    """The idle auto-pause time in words: "5 min", "1 min 30 s"."""
    return durations.words(settings.idle_pause_seconds)


# ---------------------------------------------------------------- Give up (a typed answer's and a choice's)


def on_give_up_asked(screen: Screen, assignment_id: int) -> None:
    st.session_state["hb_confirm_give_up"] = assignment_id
    # An image question has no answer box: its draft (the chosen letter) is saved already.
    typed = st.session_state.get(text_key(assignment_id))
    report(screen, study.record_activity, assignment_id, screen.tab, draft=typed)


def on_give_up_confirmed(screen: Screen, assignment_id: int, name: str) -> None:
    st.session_state.pop("hb_confirm_give_up", None)
    after_answer(screen, report(screen, study.give_up, assignment_id, tab=screen.tab), name)


def on_give_up_cancelled() -> None:
    st.session_state.pop("hb_confirm_give_up", None)


def confirm_give_up(screen: Screen, assignment_id: int, name: str) -> None:
    """The question asked after "Give up", with its two buttons."""
    st.warning("Give up on this question? It is recorded as given up and cannot be answered later.")
    yes, no = st.columns(2)
    yes.button("Yes, give up", type="primary", width="stretch",
               on_click=on_give_up_confirmed, args=(screen, assignment_id, name))
    no.button("No, keep answering", width="stretch", on_click=on_give_up_cancelled)


def progress_label(view) -> tuple[str, float]:
    """Where the question stands: its text ("Question 3 of 20", a practice question named so) and the share
    of questions done before it."""
    return f"{'Practice question' if view.practice else 'Question'} {view.seq} of {view.total}", (view.seq - 1) / view.total


def question_progress(view) -> None:
    """Where the question stands as a bar: one light HTML block (``widgets.progress``), where st.progress made
    the browser load its code, and ``st.html`` its own and DOMPurify (issue 46). The lead's preview draws it so;
    the question page draws it in the clock's element (``watches.progress_and_clock``)."""
    text, fraction = progress_label(view)
    widgets.progress(fraction, text, light=True)
