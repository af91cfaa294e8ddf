"""Change password: the logged-in person's own password (``ui.own_password_form``). The navigation lists
it for whoever has a password; someone who came in by a study link is told they have none.
"""

import streamlit as st

from structext_core import ui
from structext_core.text.safe_text import markdown_text
from structext_core.ui.frame import ensure_frame

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("account")
st.title("Change password")
st.caption(f"Your account: **{markdown_text(user['username'])}** ({user['role']}). Changing the password ends every other "
           "session of your account; you stay logged in here.")
ui.own_password_form()
