"""Pairwise comparison: which of two figures of the same paper is better? One pair at a time.

UI only; the draw, the sides, the blinding, the clock and every write live in
``structext_core.aibench.pairwise``. The page knows a pair only by its opaque token and gets the
two images as blinded PNGs: no system name, paper id or file name reaches it, during the study or
after a vote.

The honest clock as on the Human baseline page: the time ticks in the browser (the ``clock``
component, whose heartbeats rerun only its fragment); input anywhere on the page (keys, mouse,
scrolling) goes to the server as the activity component's reports, which keep the idle
auto-pause away; one tab holds the pair: a second tab of the same person takes it over, and the
first then shows a take-over screen ("Continue here") instead of the pair.
"""

import hashlib
import secrets

import streamlit as st

from structext_core import ui
from structext_core.aibench import pairwise as pws
from structext_core.studio import durations
from structext_core.studio.study import ActivityReport, clock_settings
from structext_core.text.safe_text import markdown_text
from structext_core.ui import activity, widgets
from structext_core.ui import clock as clock_widget
from structext_core.ui.frame import ensure_frame

#: The keys of the four choices (Streamlit's button shortcuts) and of Pause.
KEYS = {"left": "Left", "right": "Right", "tie": "Down", "both_bad": "B"}
PAUSE_KEY = "P"
#: The activity component reports input at most this often (as on the Human baseline page).
ACTIVITY_REPORT_MS = 10_000
TEXT_REPORT_MS = 2500
SETTLE_MS = 400
#: The states of a pair in which this tab must not show it (the page is drawn again).
LEAVE = ("paused", "voted", "closed", "elsewhere")

ensure_frame()
_activity = activity.component()
_clock = clock_widget.component()
user = ui.require_page("pairwise")
db = ui.get_db()
try:
    settings = clock_settings()
except pws.StudyError as error:
    st.error(f"The study clock is misconfigured on the server: {error} Tell the study lead.")
    st.stop()
# This browser tab: a reload or a new tab is a new Streamlit session, so a new tab id.
tab_id = st.session_state.setdefault("pw_tab", secrets.token_hex(8))


def _say(kind: str, message: str) -> None:
    ui.flash(kind, message)


def on_vote(token: str, choice: str) -> None:
    try:
        pws.vote(ui.get_db(), user["id"], token, choice, settings=settings, tab=tab_id)
        st.session_state["pw_last"] = pws.CHOICES[choice]
    except pws.StudyError as error:
        _say("info", str(error))


def on_pause(token: str) -> None:
    try:
        pws.pause(ui.get_db(), user["id"], token, settings=settings)
    except pws.StudyError as error:
        _say("info", str(error))


def on_resume(token: str) -> None:
    try:
        pws.resume(ui.get_db(), user["id"], token, tab=tab_id, settings=settings)
    except pws.StudyError as error:
        _say("info", str(error))


def on_continue_here(study_id: int) -> None:
    try:
        pws.take_over(ui.get_db(), study_id, user["id"], tab_id, settings=settings)
    except pws.StudyError as error:
        _say("info", str(error))


def on_flag(token: str) -> None:
    try:
        pws.flag_pair(ui.get_db(), user["id"], token, st.session_state.get("pw_flag_kind", "unclear"),
                      st.session_state.get("pw_flag_note", ""))
        _say("success", "Thank you: the study lead will look at this pair. Vote on it as well as you can.")
    except pws.StudyError as error:
        _say("error", str(error))


def _ignore() -> None:
    """The components' state is read in their fragments, not in a callback."""


def _check_logged_in() -> None:
    """In a fragment run: when this session was logged out meanwhile, the whole page reruns."""
    if ui.current_user() is None:
        st.rerun(scope="app")


def _pair_key(name: str, token: str) -> str:
    """A component key per pair; a token may hold "__", which a component's key may not."""
    return f"pw_{name}_{hashlib.sha256(token.encode()).hexdigest()[:16]}"


def _beat_visible(key: str) -> bool:
    """Whether the tab is visible, as the clock's latest heartbeat says (else the latest report)."""
    kept = st.session_state.get(key)
    beat = kept.get("beat") if isinstance(kept, dict) else getattr(kept, "beat", None)
    if isinstance(beat, dict) and isinstance(beat.get("visible"), bool):
        st.session_state["pw_visible"] = beat["visible"]
    return st.session_state.get("pw_visible", True)


@ui.fragment
def clock(token: str) -> None:
    """The pair's active time, ticking in the browser. The component's heartbeat (every
    ``heartbeat_seconds``) reruns this fragment alone: a heartbeat of this tab, written when due;
    a pause (the idle pause too), a vote, or the pair taken over by another tab found there
    reruns the page. Nothing runs on the server between heartbeats."""
    _check_logged_in()
    key = _pair_key("clock", token)
    state, seconds = pws.heartbeat(ui.get_db(), user["id"], token, settings=settings, tab=tab_id,
                                   visible=_beat_visible(key))
    if state in LEAVE:
        st.rerun(scope="app")
    _clock(key=key, default={"beat": None}, on_beat_change=_ignore,
           data=clock_widget.data(token, seconds, running=state == "active", settings=settings,
                                  stamp_key="pw_clock_stamp", label="Time on this pair",
                                  beat=clock_widget.beat_route(ui.get_db(), "pairwise", token, tab_id,
                                                               ("active", "hidden")),
                                  help="Counts while this pair is on screen in this tab; it stops while "
                                       "paused, while the tab is hidden and when it is closed."))


@ui.fragment
def activity_watch(token: str) -> None:
    """Input reports from the page (keys, mouse, scrolling anywhere): they keep the idle pause
    away and say when the last input was. A report reruns this fragment alone."""
    _check_logged_in()
    result = _activity(key=_pair_key("activity", token),
                       data={"assignment": token, "label": "", "text_ms": TEXT_REPORT_MS,
                             "activity_ms": ACTIVITY_REPORT_MS, "settle_ms": SETTLE_MS},
                       default={"report": None}, on_report_change=_ignore)
    report = ActivityReport.parse(result.report, token)
    # Not this pair's, or already handled (this fragment also runs with every page run).
    if report is None or report.seq == st.session_state.get("pw_report_seq"):
        return
    st.session_state["pw_report_seq"] = report.seq
    st.session_state["pw_visible"] = report.visible
    state, _ = pws.record_activity(ui.get_db(), user["id"], token, tab=tab_id, visible=report.visible,
                                   input_age=report.input_age, settings=settings)
    if state in LEAVE:
        st.rerun(scope="app")


@ui.fragment
def pause_watch(token: str) -> None:
    """On the pause screen: the clock component's heartbeats (nothing shown) rerun this
    fragment, which reruns the page when the pair was resumed (or voted on) in another tab."""
    _check_logged_in()
    state, seconds = pws.heartbeat(ui.get_db(), user["id"], token, settings=settings, tab=tab_id)
    if state != "paused":
        st.rerun(scope="app")
    _clock(key=_pair_key("pause_clock", token), default={"beat": None}, on_beat_change=_ignore,
           data=clock_widget.data(token, seconds, running=False, settings=settings, stamp_key="pw_clock_stamp",
                                  show=False, beat=clock_widget.beat_route(ui.get_db(), "pairwise", token, tab_id,
                                                                           ("paused",))))


st.title("Pairwise comparison")
ui.show_flash()
studies = [s for s in pws.studies_for_annotator(db, user["id"])]
if not studies:
    st.info("You take part in no pairwise study. The study lead adds you to one.")
    st.stop()
open_studies = [s for s in studies if s[4] == "open"]
# Chosen by id: the label's count changes with every vote, and the choice must not (issue 19, item 6).
by_id = {s[0]: s for s in studies}
first = next((s for s in open_studies if s[2] < s[3]), studies[0])[0]
if st.session_state.get("pw_study") not in by_id:
    st.session_state["pw_study"] = first
chosen = by_id[st.selectbox("Study", list(by_id), format_func=lambda i: f"{by_id[i][1]} ({by_id[i][2]} of "
                            f"{by_id[i][3]} judged)", key="pw_study")]
if chosen[4] != "open":
    st.info("This study is closed: votes are no longer taken. Thank you.")
    st.stop()
# Studies this tab has shown: it takes no pair of those back from another tab unasked.
seen = st.session_state.setdefault("pw_seen_studies", [])
try:
    view = pws.current_task(db, chosen[0], user["id"], settings=settings, tab=tab_id,
                            take_over=chosen[0] not in seen)
except pws.StudyError as error:
    st.error(str(error))
    st.stop()
mine = pws.person_counts(db, chosen[0], user["id"])[0]
if view is None:
    st.success(f"You have judged {'the one pair' if mine.pairs == 1 else f'all {mine.pairs:,} pairs'} of this study. "
               "Thank you!")
    st.stop()
st.caption(pws.annotator_summary(mine))
if not view.held_elsewhere and chosen[0] not in seen:
    seen.append(chosen[0])
if view.held_elsewhere:
    with st.container(border=True):
        st.subheader("This pair is open in another tab")
        st.write(f"{pws.progress_text(view, mine)} was opened in another tab or window, so it is hidden "
                 "here and its clock counts there. Carry on in that tab, or continue here: the other tab then "
                 "hides it.")
        st.button("Continue here", type="primary", on_click=on_continue_here, args=(chosen[0],))
    st.stop()

st.progress(view.done / view.total, text=pws.progress_text(view, mine))
if last := st.session_state.pop("pw_last", None):
    st.toast(f"Saved: {last}", icon=":material/check_circle:")
if view.paused:
    why = (f" It paused by itself after {durations.words(settings.idle_pause_seconds)} without any input."
           if view.pause_reason == "idle" else "")
    st.info(f"Paused: the clock is stopped and the pair is hidden, in every tab.{why}")
    st.button("Resume", type="primary", on_click=on_resume, args=(view.token,), key="pw_resume", shortcut=PAUSE_KEY)
    pause_watch(view.token)
    st.stop()

st.markdown("Which figure shows the paper's method better? Judge the figure as a whole: is it correct, "
            "complete, readable and clear? Keys: **← left**, **→ right**, **↓ equally good**, **B both bad**, "
            "**P pause**.")
cols = st.columns(4)
for column, choice in zip(cols, pws.CHOICES):
    with column:
        st.button(pws.CHOICES[choice], key=f"pw_{choice}", width="stretch",
                  type="primary" if choice in ("left", "right") else "secondary", shortcut=KEYS[choice],
                  on_click=on_vote, args=(view.token, choice))
a, b = st.columns([1, 3])
with a:
    activity_watch(view.token)  # first: in a page run, the input it reports comes before the clock's idle check
    clock(view.token)
    st.button("Pause", on_click=on_pause, args=(view.token,), key="pw_pause", shortcut=PAUSE_KEY)
with b:
    # Its form is built only while it is open (opening it reruns the page): every vote draws
    # this page.
    flag_box = widgets.lazy_section("Report a problem with this pair", key="pw_flag_open")
    if flag_box:
        with flag_box, st.form("pw_flag_form", border=False, clear_on_submit=True):
            st.selectbox("What is wrong", list(pws.FLAG_KINDS), format_func=pws.FLAG_KINDS.get, key="pw_flag_kind")
            st.text_area("Note for the study lead (optional)", key="pw_flag_note", height=80, max_chars=2000)
            st.form_submit_button("Send report", on_click=on_flag, args=(view.token,))
left, right = st.columns(2, gap="medium")
for column, side in ((left, "left"), (right, "right")):
    with column:
        with st.container(border=True):
            st.markdown(f"**{side.capitalize()}**")
            # a file of this viewer's own: padding drawn from their session's nonce and the task
            nonce = st.session_state.setdefault("pw_media_nonce", secrets.token_bytes(16)) + view.token.encode()
            st.image(pws.task_image(db, user["id"], view.token, side, nonce), width="stretch",
                     output_format="PNG")

st.caption(markdown_text("The systems' names are never shown here, during or after the study: the lead sees "
                         "them with the results."))
