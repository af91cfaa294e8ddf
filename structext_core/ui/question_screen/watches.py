"""The honest clock of the question page, without a server run per second: fragments that the
browser's components rerun when something happens.

The time on screen ticks in the browser (the ``clock`` component, given the server's active
time and whether it runs), and the server hears from the page only when something happens: a
heartbeat of the clock component every ``STRUCTEXT_HEARTBEAT_SECONDS`` (:func:`clock`: its reply
reruns the page when the question was taken over, paused or answered elsewhere), an input report
of the activity component (:func:`activity_watch`: input, and the answer as typed, a few seconds
after the last keystroke at the latest), or an action (submit, pause, ...). :func:`pause_watch`
on the pause screen sends the same heartbeats.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.ui import clock as clock_widget
from structext_core.ui.question_screen.common import (
    ADDED_FROM_KEY,
    ANSWER_LABEL,
    Screen,
    progress_label,
)

#: The activity component reports typed text at most this often, other input less often.
TEXT_REPORT_MS = 2500
ACTIVITY_REPORT_MS = 10_000
#: A report due at once still waits this long after the input that made it due (see structext_core.ui.activity.ACTIVITY_JS).
SETTLE_MS = 400

CLOCK_LABEL = "Time on this question"
CLOCK_HELP = ("Counts while this question is on screen in this tab. It stops when the tab is closed, "
              "hidden or loses its connection, and while paused.")


def _ignore() -> None:
    """The activity component's state is read in its fragment, not in a callback."""


def _must_leave(state: str) -> bool:
    return state not in ("active", "hidden")


def _check_logged_in() -> None:
    """In a fragment run: when this session was logged out meanwhile (its state cleared by a run
    that came before this one), the whole page reruns, logged out, instead of this fragment."""
    if ui.current_user() is None:
        st.rerun(scope="app")


def _clock_data(screen: Screen, assignment_id: int, status: study.ClockStatus, *, show: bool = True,
                progress: tuple[str, float] | None = None) -> dict:
    """What the clock component is told: the active time as of now, whether it runs, and how
    often to send a heartbeat. ``stamp`` tells a new reply from a redraw of the same one. The
    heartbeats go to the clock's route; the page stays as it is while the clock is active or
    hidden (on the question) or paused (on the pause screen). ``progress``: the bar beside it."""
    stay = ("active", "hidden") if show else ("paused",)
    return clock_widget.data(assignment_id, status.seconds, running=status.state == "active",
                             settings=screen.settings, stamp_key="hb_clock_stamp", show=show, label=CLOCK_LABEL,
                             help=CLOCK_HELP, progress=progress,
                             beat=clock_widget.beat_route(ui.get_db(), "study", assignment_id, screen.tab, stay))


def _beat_visible(key: str) -> bool:
    """Whether the tab is visible, as the clock's latest heartbeat says (else the latest report)."""
    state = st.session_state.get(key)
    beat = state.get("beat") if isinstance(state, dict) else getattr(state, "beat", None)
    if isinstance(beat, dict) and isinstance(beat.get("visible"), bool):
        st.session_state["hb_visible"] = beat["visible"]
    return st.session_state.get("hb_visible", True)


@ui.fragment
def clock(screen: Screen, assignment_id: int, progress: tuple[str, float] | None = None) -> None:
    """The question's active time, ticking in the browser, with where the question stands beside it
    (``progress``: text, share done). The component's heartbeat (every
    ``heartbeat_seconds``) reruns this fragment alone: a heartbeat of this tab (written when
    due); when the question was taken over, paused or answered elsewhere, the whole page
    reruns so that it hides the question. A page run redraws it too (showing the question
    was a heartbeat: nothing more is written)."""
    _check_logged_in()
    key = f"hb_clock_{assignment_id}"
    status = study.heartbeat(ui.get_db(), screen.user_id, assignment_id, screen.tab, visible=_beat_visible(key),
                             settings=screen.settings)
    if _must_leave(status.state):
        st.rerun(scope="app")
    screen.clock(key=key, data=_clock_data(screen, assignment_id, status, progress=progress), default={"beat": None},
                 on_beat_change=_ignore)


def progress_and_clock(screen: Screen, view: study.QuestionView) -> None:
    """Where the question stands (a bar) and its clock, side by side: one element (the clock's), where
    a row of Streamlit's columns held two (issue 46)."""
    clock(screen, view.assignment_id, progress_label(view))


@ui.fragment
def activity_watch(screen: Screen, assignment_id: int) -> None:
    """Input reports from the page: they keep the idle pause away and save the draft."""
    _check_logged_in()
    result = screen.activity(
        key=f"hb_activity_{assignment_id}",
        data={"assignment": assignment_id, "label": ANSWER_LABEL, "text_ms": TEXT_REPORT_MS,
              "activity_ms": ACTIVITY_REPORT_MS, "settle_ms": SETTLE_MS},
        default={"report": None}, on_report_change=_ignore,
    )
    report = study.ActivityReport.parse(result.report, assignment_id)
    # Not this question's, or already handled (this fragment also runs with every page run).
    if report is not None and report.seq != st.session_state.get("hb_report_seq"):
        _take_report(screen, assignment_id, report)


def _take_report(screen: Screen, assignment_id: int, report: study.ActivityReport) -> None:
    st.session_state["hb_report_seq"] = report.seq
    if report.text is not None and st.session_state.get(ADDED_FROM_KEY) == (assignment_id, report.text):
        # the text as it was before "Add lines" appended to it, sent before that click and arriving after
        # it (under load): not the answer now, so it is neither remembered nor saved as the draft
        report = dataclasses.replace(report, text=None)
    elif report.text is not None:
        st.session_state.pop(ADDED_FROM_KEY, None)
    st.session_state["hb_visible"] = report.visible
    status = study.record_activity(ui.get_db(), screen.user_id, assignment_id, screen.tab, draft=report.text,
                                   visible=report.visible, input_age=report.input_age, settings=screen.settings)
    if _must_leave(status.state):
        st.rerun(scope="app")
    if status.draft_saved is False:
        st.warning(f"Your answer is over {study.MAX_RESPONSE_CHARS:,} characters, so the draft is no "
                   "longer saved as you type. Shorten it.")


@ui.fragment
def pause_watch(screen: Screen, assignment_id: int) -> None:
    """On the pause screen: the clock component's heartbeats (nothing shown) rerun this
    fragment, which reruns the page when the question was resumed (or answered) elsewhere."""
    _check_logged_in()
    key = f"hb_pause_clock_{assignment_id}"
    status = study.heartbeat(ui.get_db(), screen.user_id, assignment_id, screen.tab, settings=screen.settings)
    if status.state != "paused":
        st.rerun(scope="app")
    screen.clock(key=key, data=_clock_data(screen, assignment_id, status, show=False), default={"beat": None},
                 on_beat_change=_ignore)
