"""What the annotator's page shows before (and after) a study's questions: the end of the visit when it
has ended, the consent text to accept or decline, the short questionnaire. One call from the page,
before the study's rule: :func:`before_questions`.

Everything decided here is the core's (:mod:`structext_core.studio.crowd`); the study's answering
functions refuse a question to anyone who must still consent or answer the questionnaire, so these
screens are the way through, not the lock.
"""

from __future__ import annotations

import datetime as dt
import math
import time

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.studio.crowd import consent, outcomes, questionnaire
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import crowd_end
from structext_core.ui.question_screen.common import Screen, show_messages

CONFIRM_DECLINE_KEY = "crowd_confirm_decline"


def before_questions(screen: Screen, chosen: study.AnnotatorStudy) -> bool:
    """Draw the screen that comes before the study's rule and questions, if one does: the end of the
    visit (recorded now when newly reached), the consent text, the questionnaire. True when one was
    drawn (the page then stops); False: the page goes on as before. A study's own end (every
    question answered, no platform code or address, not a link's participant) is left to the page's
    own finished screen."""
    db = ui.get_db()
    end = outcomes.settle(db, chosen.id, screen.user_id)
    if end is not None and (end.reason != "done" or end.code or end.url or end.participant):
        show_messages()
        crowd_end.end_screen(end)
        return True
    if consent.needs_consent(db, chosen.id, screen.user_id):
        show_messages()
        consent_screen(screen, chosen, consent.current_consent(db, chosen.id))
        return True
    if questionnaire.needs_questionnaire(db, chosen.id, screen.user_id):
        show_messages()
        questionnaire_screen(screen, chosen, questionnaire.questionnaire(db, chosen.id))
        return True
    time_out_notice(outcomes.deadline(db, chosen.id, screen.user_id))
    return False


#: Minutes before the time-out from which its notice is a warning.
WARN_MINUTES = 5


def time_out_notice(deadline: float | None, now: float | None = None) -> None:
    """The time the person has left before the study's time-out (none: nothing drawn)."""
    if deadline is None:
        return
    now = time.time() if now is None else now
    minutes = max(0, math.ceil((deadline - now) / 60))
    left = f"about {plural(minutes, 'minute')}" if minutes > 1 else "less than a minute"
    at = dt.datetime.fromtimestamp(deadline, dt.UTC).strftime("%H:%M UTC")
    words = (f"Time left in this study: {left} (until {at}). After that no new question is shown and your "
             "place goes to someone else; your answers so far are kept.")
    if minutes <= WARN_MINUTES:
        st.warning(words, icon=":material/timer:")
    else:
        st.caption(words)


# ---------------------------------------------------------------- consent


def on_accept(screen: Screen, study_id: int, version: int) -> None:
    try:
        consent.accept(ui.get_db(), study_id, screen.user_id, version)
    except study.StudyError as error:
        ui.flash("error", str(error))


def on_decline_asked() -> None:
    st.session_state[CONFIRM_DECLINE_KEY] = True


def on_decline_cancelled() -> None:
    st.session_state.pop(CONFIRM_DECLINE_KEY, None)


def on_decline(screen: Screen, study_id: int) -> None:
    st.session_state.pop(CONFIRM_DECLINE_KEY, None)
    try:
        consent.decline(ui.get_db(), study_id, screen.user_id)
    except study.StudyError as error:
        ui.flash("error", str(error))


def consent_screen(screen: Screen, chosen: study.AnnotatorStudy, text: consent.Consent) -> None:
    """The study's consent text (Markdown, rendered with no HTML and nothing fetched) and the two answers."""
    st.subheader(markdown_text(f"Before you start: consent to take part in {chosen.name}"))
    with st.container(border=True):
        st.markdown(markdown_text(text.text))  # no unsafe_allow_html: HTML shows as text
    st.caption("Nothing is timed yet: the study's questions and their clock start only after this.")
    if st.session_state.get(CONFIRM_DECLINE_KEY):
        st.warning("If you do not agree, your part in this study ends here: no question will be shown.")
        yes, back = st.columns(2)
        yes.button("Yes, I do not agree", width="stretch", on_click=on_decline, args=(screen, chosen.id))
        back.button("Back to the consent text", width="stretch", on_click=on_decline_cancelled)
        return
    agree, decline = st.columns(2)
    agree.button("I agree: continue", type="primary", width="stretch", on_click=on_accept,
                 args=(screen, chosen.id, text.version))
    decline.button("I do not agree", width="stretch", on_click=on_decline_asked)


# ---------------------------------------------------------------- questionnaire


def _key(name: str) -> str:
    return f"crowd_q_{name}"


def _bound(value) -> float | None:
    return None if value is None else float(value)


def _field_widget(field: dict):
    label = markdown_text(field["label"]) + ("" if field.get("required", True) else " (optional)")
    if field["kind"] == "choice":
        return st.radio(label, field["options"], index=None, key=_key(field["name"]))
    if field["kind"] == "number":
        return st.number_input(label, value=None, min_value=_bound(field.get("min")),
                               max_value=_bound(field.get("max")), step=1.0, format="%g", key=_key(field["name"]))
    return st.text_input(label, max_chars=questionnaire.MAX_TEXT_CHARS, key=_key(field["name"]))


def questionnaire_screen(screen: Screen, chosen: study.AnnotatorStudy, fields: list[dict]) -> None:
    """The study's questionnaire as a form; its answers are checked and kept by the core."""
    st.subheader(markdown_text(f"A few questions about you, for {chosen.name}"))
    st.caption("Your answers describe who took part; they are not scored. Nothing is timed yet.")
    with st.form("crowd_questionnaire"):
        values = {field["name"]: _field_widget(field) for field in fields}
        sent = st.form_submit_button("Continue", type="primary")
    if not sent:
        return
    try:
        questionnaire.submit(ui.get_db(), chosen.id, screen.user_id, values)
    except study.StudyError as error:
        st.error(markdown_text(str(error)))  # it quotes the lead's question
        return
    st.rerun()
