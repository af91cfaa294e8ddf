"""Join a study: the page a study link opens (``/join?join=<token>&PROLIFIC_PID=...``).

UI only: enrolment, resume codes and every refusal are :mod:`structext_core.studio.crowd.links`.
A visitor who opens a link with an id gets an account in its study at once and is logged in (the
session cookie remembers the browser); the resume code is shown once. A link without an id asks
first (start, or go on with a resume code), so another device does not make a second account.
The link's parameters leave the address as soon as the person is in (a copied address carries no
token). The same browser opening the link again is logged in already and goes on; another
browser with the same id is refused and gets the resume form. Not listed in the navigation.
"""

import streamlit as st

from structext_core import ui
from structext_core.studio import accounts, study
from structext_core.studio.crowd import links, outcomes
from structext_core.text.safe_text import markdown_text
from structext_core.ui import crowd_end
from structext_core.ui.frame import ensure_frame

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("join")
db = ui.get_db()
#: The new participant's resume code, kept for this browser tab until they go on: ``{user_id, study_id, code}``.
JOINED_KEY = "join_new_code"
#: Where the participant goes on (an absolute path: the navigation's pages are registered by theirs).
HUMAN_BASELINE = ui.page_file("human_baseline")


def arrived_params() -> dict[str, str]:
    """The link's parameters as they arrived (the last value of a repeated one), a bounded number of them."""
    return {key: st.query_params[key] for key in list(st.query_params)[:200]}


def study_name(study_id: int) -> str:
    try:
        return study.get_study(db, study_id).name
    except study.StudyError:
        return "the study"


def go_on_button(study_id: int) -> None:
    if st.button("Go on to the study", type="primary", key="join_go_on"):
        st.session_state.pop(JOINED_KEY, None)
        st.switch_page(HUMAN_BASELINE, query_params={"study": str(study_id)})


def logged_in_as(person: dict) -> bool:
    """Log ``person`` in on this browser (session and cookie); False, with a message, when log-in is not possible."""
    try:
        ui._start_session(person)  # the log-in form's own way in: a session token, kept in the cookie
    except accounts.AccountError as error:
        st.error(f"Log-in is not possible on this server: {error} Tell the study's lead.")
        return False
    return True


def show_new_code(joined: dict) -> None:
    st.success(f"You are in the study **{markdown_text(study_name(joined['study_id']))}**.")
    st.markdown("**Your resume code**")
    st.code(joined["code"], language=None)
    st.markdown("Keep this code: write it down or copy it now, **it is shown only this once**. This browser "
                "remembers you. To go on from another browser or device, open the study link there and enter "
                "this code.")
    go_on_button(joined["study_id"])


def resume_form(token: str, params: dict[str, str]) -> None:
    with st.form("join_resume"):
        st.markdown("**Go on with your resume code**")
        code = st.text_input("Resume code", max_chars=40, autocomplete="off",
                             help="The 10 characters you were shown when you joined.")
        submitted = st.form_submit_button("Go on", type="primary")
    if not submitted:
        return
    try:
        person = links.resume(db, token, code, params)
    except links.EnrolmentRefused as refusal:
        st.error(str(refusal))
        return
    if logged_in_as(person):
        st.query_params.clear()
        st.rerun()


def enrol(token: str, params: dict[str, str], study_id: int) -> None:
    try:
        joined = links.enrol(db, token, params)
    except links.EnrolmentRefused as refusal:
        st.error(str(refusal))
        if refusal.reason == "taken":
            resume_form(token, params)
        elif refusal.reason in links.TURNED_AWAY:  # the platform is told, as for a person screened out
            crowd_end.end_screen(outcomes.turned_away(db, study_id))
        return
    st.session_state[JOINED_KEY] = {"user_id": joined.user["id"], "study_id": joined.study_id,
                                    "code": joined.resume_code}
    if logged_in_as(joined.user):
        st.query_params.clear()
        st.rerun()
    show_new_code(st.session_state[JOINED_KEY])


def visitor_with_link(token: str, params: dict[str, str]) -> None:
    link = links.link_by_token(db, token)
    if link is None:
        st.error(links.NOT_VALID)
        return
    if link.id_param is not None:
        enrol(token, params, link.study_id)
        return
    st.write("Start the study here, or go on where you left off with the resume code you were shown.")
    if st.button("Start the study", type="primary", key="join_start"):
        enrol(token, params, link.study_id)
        return
    resume_form(token, params)


def member_with_link(token: str) -> None:
    link = links.link_by_token(db, token)
    if link is None:
        st.error(links.NOT_VALID)
        return
    person = links.participant(db, user["id"])
    if person is not None and person.study_id == link.study_id:
        st.query_params.clear()
        st.info(f"You are in the study **{markdown_text(study_name(person.study_id))}** already: "
                "this browser remembers you.")
        go_on_button(person.study_id)
        return
    st.warning(f"You are logged in as {user['username']}. To join this study by its link, log out first "
               "(in the sidebar): this page then takes you in.")


def no_link() -> None:
    person = links.participant(db, user["id"]) if user is not None else None
    if person is not None:
        st.info(f"You are in the study **{markdown_text(study_name(person.study_id))}**.")
        go_on_button(person.study_id)
    else:
        st.info("This page is opened by a study link: open the link you were given (on the study's page of "
                "the platform that sent you).")


st.title("Join a study")
params = arrived_params()
token = params.get(links.TOKEN_PARAM)
joined = st.session_state.get(JOINED_KEY)
if joined is not None and user is not None and user["id"] == joined["user_id"]:
    show_new_code(joined)
elif token is None:
    no_link()
elif user is not None:
    member_with_link(token)
else:
    visitor_with_link(token, params)
