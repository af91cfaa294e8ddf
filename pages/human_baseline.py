"""Human baseline: answer the study's questions one at a time, against the clock.

UI only; the clock, the blinding and every write live in ``structext_core.studio.study``. This page
is the script that composes the pieces of ``structext_core.ui.question_screen``: which screen a run
shows (a study to choose, the study's rule, a practice question's feedback, the question, paused,
taken over, finished) is decided here, and each screen is drawn there.

The honest clock without a server run per second: the time on screen ticks in the browser
(the ``clock`` component, given the server's active time and whether it runs), and the
server hears from the page only when something happens: a heartbeat of the clock component
every ``STRUCTEXT_HEARTBEAT_SECONDS`` (its reply reruns the page when the question was taken
over, paused or answered elsewhere), an input report of the activity component (input, and
the answer as typed: a few seconds after the last keystroke at the latest), or an action
(submit, pause, ...). ``pause_watch`` on the pause screen sends the same heartbeats
(:mod:`structext_core.ui.question_screen.watches`).

A multiple-choice question (:mod:`structext_core.ui.question_screen.choice_answer`) is a question
with lettered options, and an image where its benchmark draws one: the image arrives as blinded
pixels asked for by the assignment's id (nothing that names its maker, source or file), the chosen
option is the draft saved on the server (a reload shows it chosen), the option letters choose and
Enter submits (``structext_core.ui.option_keys``).
"""

import secrets

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.studio.crowd import dealing
from structext_core.text.safe_text import markdown_text
from structext_core.ui import activity, crowd_gate, light_html, option_keys, widgets
from structext_core.ui import clock as clock_widget
from structext_core.ui.frame import ensure_frame
from structext_core.ui.question_screen.common import Screen, forget_box, show_messages
from structext_core.ui.question_screen.practice import practice_feedback_screen
from structext_core.ui.question_screen.reference_viewer import window_component
from structext_core.ui.question_screen.screens import finished_screen, paused_screen, question_screen, taken_over_screen
from structext_core.ui.question_screen.studies import choose_study, own_progress_panel, rule_screen, study_picker

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
light_html.page_draws_light()  # its light elements are drawn as few elements as their order allows
_activity = activity.component()
_clock = clock_widget.component()
_window = window_component()
_option_keys = option_keys.component()
user = ui.require_page("human_baseline")
db = ui.get_db()
# This browser tab: a reload or a new tab is a new Streamlit session, so a new tab id.
tab_id = st.session_state.setdefault("hb_tab", secrets.token_hex(8))


# ---------------------------------------------------------------- the page

st.title("Human baseline")
try:
    settings = study.clock_settings()
except study.StudyError as error:
    st.error(f"The study clock is misconfigured on the server: {error} Tell the study lead.")
    st.stop()
# What every piece of the page is given (its callbacks too): who answers, in which tab, under which clock.
screen = Screen(user["id"], tab_id, settings, activity=_activity, clock=_clock, window=_window,
                option_keys=_option_keys)
studies = study.studies_for_annotator(db, user["id"])
if not studies:
    show_messages()
    if user["role"] == "admin":
        st.info("Admins do not answer in studies: they can see the answers. This is the annotators' page; "
                "set up and follow studies under **Studies** (Admin).")
    else:
        st.info("You do not take part in an open study. The study lead adds you when a study is set up.")
    st.stop()

chosen = choose_study(studies)
if chosen is None:
    show_messages()
    study_picker(studies)
    st.stop()
if crowd_gate.before_questions(screen, chosen):  # the end of the visit, consent, the questionnaire
    st.stop()
if chosen.rule_accepted_at is None:
    show_messages()
    rule_screen(screen, chosen)
    st.stop()

own_progress_panel(screen, chosen.id)  # in the sidebar

practice = study.pending_practice_feedback(db, chosen.id, user["id"])
if practice is not None and practice.response_id != st.session_state.get("hb_practice_seen"):
    forget_box()
    show_messages()
    practice_feedback_screen(screen, practice)
    st.stop()

# Studies this tab has shown: it takes no question of those back from another tab unasked.
seen = st.session_state.setdefault("hb_seen_studies", [])
try:
    current = study.open_question(db, chosen.id, user["id"], tab=tab_id,
                                  take_over=chosen.id not in seen, settings=settings)
except study.StudyError as error:
    st.error(str(error))
    st.stop()

if current is not None and not current.held_elsewhere and chosen.id not in seen:
    seen.append(chosen.id)
if current is None or current.held_elsewhere or current.paused:
    forget_box()
    show_messages()
if current is None or not current.practice:  # their last question went back to the pool while away
    if notice := dealing.release_notice(db, chosen.id, user["id"]):
        st.info(notice, icon=":material/schedule:")
if current is None:
    finished_screen(screen, chosen, studies)
elif current.held_elsewhere:
    taken_over_screen(screen, current)
elif current.paused:
    paused_screen(screen, current)
else:
    # drawn only while open (a light header while closed): the question page's first view sends none of it
    if rule_box := widgets.lazy_section("Study rule", key=f"hb_rule_open_{chosen.id}"):
        rule_box.markdown(markdown_text(chosen.rule_text))
    question_screen(screen, current)
