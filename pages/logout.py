"""Log out: every session of this person ends on the server, this tab's state is cleared and the
browser's cookie deleted; then Home, with the log-in form (``ui.log_out``).

A click on *Log out* in the navigation logs out at once. Opened at its address (a reload, a new tab,
a link from another site) the page asks first, so no other site can log a person out with a link.
"""

import streamlit as st

from structext_core import ui
from structext_core.text.safe_text import markdown_text
from structext_core.ui.frame import ensure_frame

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
HOME = ui.page_file("home")
#: Set by the button's callback once the session is cleared: the run it starts goes to Home.
LOGGED_OUT_KEY = "logout_done"


def log_out_by_button() -> None:
    ui.log_out()
    st.session_state[LOGGED_OUT_KEY] = True


if st.session_state.pop(LOGGED_OUT_KEY, False):
    st.switch_page(HOME)
user = ui.require_page("logout")
if ui.arrived_from_another_page():
    ui.log_out()
    st.switch_page(HOME)
st.title("Log out")
st.write(f"Log out **{markdown_text(user['username'])}**? Logging out ends every session of the account, in this "
         "browser and any other.")
st.button("Log out", type="primary", key="logout_confirm", on_click=log_out_by_button)
