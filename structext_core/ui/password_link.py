"""The set-password screen a one-time link opens (``/?set_password=<token>``; issue 45, item 6).

app.py calls :func:`take_over` before its navigation: while the address carries the link's
parameter, this screen is the whole page (no menu, no log-in form; it is listed nowhere). The person
chooses a password (twice); it is set by :func:`~structext_core.studio.accounts.password_links.set_password_with_link`,
and they are logged in at once (a new session, as the log-in form does) and sent on to Home. A link
that cannot be used says so in one message that reveals nothing about the account. UI only.
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import accounts
from structext_core.studio.accounts import password_links

#: Session key: the password was just set (a toast says so on the next page).
DONE_KEY = "spl_done"


def requested() -> bool:
    """Whether this run's address carries a set-password link."""
    return password_links.QUERY_PARAM in st.query_params


def _leave() -> None:
    st.query_params.clear()


def take_over() -> bool:
    """Draw the set-password screen when the address asks for it, and stop the run (True never
    returns); False when it does not."""
    if not requested():
        if name := st.session_state.pop(DONE_KEY, None):
            st.toast(f"Your password is set: you are logged in as {name}.", icon=":material/check_circle:")
        return False
    # Through st.navigation like every other run (its widgets keep their ids from run to run), with
    # this screen as the one page and no menu.
    st.navigation([st.Page(_screen_page, title="Choose your password", default=True)], position="hidden").run()
    st.stop()
    return True  # pragma: no cover - st.stop() raises


def _screen_page() -> None:
    screen(st.query_params.get(password_links.QUERY_PARAM, ""))


def screen(token: str) -> None:
    st.title("Choose your password")
    db = ui.get_db()
    try:
        person = password_links.link_user(db, token)
    except password_links.LinkRefused as refused:
        st.error(str(refused))
        st.button("Go to the log-in page", key="spl_leave", on_click=_leave)
        return
    current = ui.current_user()
    if current is not None and current["id"] != person["id"]:
        st.info(f"This browser is logged in as {current['username']}: setting this password logs you in "
                "as the link's account instead.")
    st.markdown(f"Your account: **{person['username']}**. Choose a password of at least "
                f"{accounts.MIN_PASSWORD_LENGTH} characters; the link works once.")
    with st.form("spl_form"):
        password = st.text_input("New password", type="password", autocomplete="new-password", key="spl_password")
        repeat = st.text_input("Repeat the password", type="password", autocomplete="new-password", key="spl_repeat")
        submitted = st.form_submit_button("Set my password and log in", type="primary")
    if not submitted:
        return
    if password != repeat:
        st.error("The two passwords differ: type the same password in both boxes. Nothing was changed.")
        return
    try:
        user = password_links.set_password_with_link(db, token, password)
    except accounts.AccountError as error:  # a short password, or the link used meanwhile (one message)
        st.error(str(error))
        return
    ui._end_session(notice=None)  # whatever this browser held is gone
    try:
        ui._start_session(user)
    except accounts.AccountError as error:  # a bad session setting: the password is set all the same
        st.error(f"Your password is set, but log-in is not possible now: {error}")
        return
    st.session_state[DONE_KEY] = user["username"]
    st.query_params.clear()
    st.rerun()
