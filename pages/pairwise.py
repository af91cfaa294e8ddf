"""Pairwise comparison: which of two figures of the same paper is better? One pair at a time.

UI only; the draw, the sides, the blinding, the clock and every write live in
``structext_core.studio.pairwise``. The page knows a pair only by its opaque token and gets the
two images as blinded PNGs: no system name, paper id or file name reaches it, during the study or
after a vote.
"""

import hashlib

import streamlit as st

from pages import ui
from pages.ui import clock as clock_widget
from pages.ui.frame import ensure_frame
from structext_core.benchmark.safe_text import markdown_text
from structext_core.studio import pairwise as pws
from structext_core.studio.study import clock_settings

#: The keys of the four choices (Streamlit's button shortcuts) and of Pause.
KEYS = {"left": "Left", "right": "Right", "tie": "Down", "both_bad": "B"}
PAUSE_KEY = "P"

ensure_frame()
_clock = clock_widget.component()
user = ui.require_page("pairwise")
db = ui.get_db()
settings = clock_settings()


def _say(kind: str, message: str) -> None:
    ui.flash(kind, message)


def on_vote(token: str, choice: str) -> None:
    try:
        pws.vote(ui.get_db(), user["id"], token, choice, settings=settings)
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
        pws.resume(ui.get_db(), user["id"], token)
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
    """The clock component's state is read in its fragment, not in a callback."""


@ui.fragment
def clock(token: str) -> None:
    """The pair's active time, ticking in the browser. The component's heartbeat (every
    ``heartbeat_seconds``) reruns this fragment alone: a heartbeat, written when due; a pause
    (the idle pause too) or a vote found there reruns the page. Nothing runs on the server
    between heartbeats."""
    # Keyed per pair; a token may hold "__", which a component's key may not.
    key = f"pw_clock_{hashlib.sha256(token.encode()).hexdigest()[:16]}"
    kept = st.session_state.get(key)
    beat = kept.get("beat") if isinstance(kept, dict) else getattr(kept, "beat", None)
    visible = beat.get("visible") if isinstance(beat, dict) else None
    state, seconds = pws.heartbeat(ui.get_db(), user["id"], token, settings=settings,
                                   visible=visible if isinstance(visible, bool) else True)
    if state in ("paused", "voted"):
        st.rerun(scope="app")
    _clock(key=key, default={"beat": None}, on_beat_change=_ignore,
           data=clock_widget.data(token, seconds, running=state == "active", settings=settings,
                                  stamp_key="pw_clock_stamp", label="Time on this pair",
                                  beat=clock_widget.beat_route(ui.get_db(), "pairwise", token, "page",
                                                               ("active", "hidden")),
                                  help="Counts while this pair is on screen; it stops while paused, "
                                       "while the tab is hidden and when it is closed."))


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
                            f"{by_id[i][3]} done)", key="pw_study")]
if chosen[4] != "open":
    st.info("This study is closed: votes are no longer taken. Thank you.")
    st.stop()
try:
    view = pws.current_task(db, chosen[0], user["id"], settings=settings)
except pws.StudyError as error:
    st.error(str(error))
    st.stop()
if view is None:
    st.success(f"You have judged all {chosen[3]} pairs of this study. Thank you!")
    st.stop()

st.progress(view.done / view.total, text=f"Pair {view.position} of {view.total}"
            + (" · practice (not counted)" if view.practice else ""))
if last := st.session_state.pop("pw_last", None):
    st.toast(f"Saved: {last}", icon=":material/check_circle:")
if view.paused:
    st.info("Paused: the clock is stopped and the pair is hidden.")
    st.button("Resume", type="primary", on_click=on_resume, args=(view.token,), key="pw_resume", shortcut=PAUSE_KEY)
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
    clock(view.token)
    st.button("Pause", on_click=on_pause, args=(view.token,), key="pw_pause", shortcut=PAUSE_KEY)
with b:
    with st.expander("Report a problem with this pair"):
        with st.form("pw_flag_form", border=False, clear_on_submit=True):
            st.selectbox("What is wrong", list(pws.FLAG_KINDS), format_func=pws.FLAG_KINDS.get, key="pw_flag_kind")
            st.text_area("Note for the study lead (optional)", key="pw_flag_note", height=80, max_chars=2000)
            st.form_submit_button("Send report", on_click=on_flag, args=(view.token,))
left, right = st.columns(2, gap="medium")
for column, side in ((left, "left"), (right, "right")):
    with column:
        with st.container(border=True):
            st.markdown(f"**{side.capitalize()}**")
            st.image(pws.task_image(db, user["id"], view.token, side), width="stretch",
                     output_format="PNG")

st.caption(markdown_text("The systems' names are never shown here, during or after the study: the lead sees "
                         "them with the results."))
