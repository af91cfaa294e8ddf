"""The small Streamlit glue shared by the pages: database, session user, log-in widgets.

This is the only core module that imports Streamlit. The logged-in user lives in
``st.session_state["user"]`` as ``{id, username, role}``; nothing else about the user is
kept in the session.
"""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from structext_core import accounts, storage

USER_KEY = "user"


def get_db() -> sqlite_utils.Database:
    """A database connection for this script run (or callback, or fragment run).

    Streamlit runs every session, and every run, in its own thread, and a sqlite3
    connection belongs to its thread, so each run opens its own (about a millisecond).
    """
    return storage.open_db()


def current_user() -> dict | None:
    """The logged-in user ``{id, username, role}``, or None."""
    return st.session_state.get(USER_KEY)


def require_role(*roles: str) -> dict:
    """Return the session user when their role is one of ``roles``; otherwise show why
    the page is refused and stop the script (nothing of the page is sent)."""
    user = current_user()
    if user is None:
        st.error("You are not logged in: log in with the form in the sidebar to use this page.")
        st.stop()
    if user["role"] not in roles:
        allowed = " or ".join(f"{role}s" for role in roles)
        st.error(
            f"This page is for {allowed} only. You are logged in as "
            f"{user['username']} ({user['role']})."
        )
        st.stop()
    return user


def login_form() -> None:
    """User name and password; on success the user is stored in the session and the
    app reruns. A failed attempt shows one message and changes nothing."""
    with st.form("login_form"):
        st.markdown("**Log in**")
        username = st.text_input("User name", autocomplete="username")
        password = st.text_input("Password", type="password", autocomplete="current-password")
        submitted = st.form_submit_button("Log in", type="primary")
    if not submitted:
        return
    user = accounts.authenticate(get_db(), username, password)
    if user is None:
        st.error("Log-in failed: the user name or the password is wrong.")
        return
    st.session_state[USER_KEY] = user
    st.rerun()


def first_run_form() -> None:
    """Create the first admin account (shown while no admin exists) and log in as it."""
    st.subheader("Welcome: create the admin account")
    st.write(
        "No admin account exists yet. The admin sets up studies, creates annotator "
        "accounts and sees the results. (To skip this screen, start the app with "
        f"`{accounts.ADMIN_USER_ENV}` and `{accounts.ADMIN_PASSWORD_ENV}` set.)"
    )
    with st.form("first_run_form"):
        username = st.text_input("Admin user name", autocomplete="username")
        password = st.text_input(
            "Password", type="password", autocomplete="new-password",
            help=f"At least {accounts.MIN_PASSWORD_LENGTH} characters.",
        )
        repeat = st.text_input("Repeat the password", type="password", autocomplete="new-password")
        submitted = st.form_submit_button("Create admin account", type="primary")
    if not submitted:
        return
    if password != repeat:
        st.error("The two passwords differ: type the same password in both boxes.")
        return
    try:
        user = accounts.create_first_admin(get_db(), username, password)
    except accounts.AccountError as error:
        st.error(str(error))
        return
    st.session_state[USER_KEY] = user
    st.rerun()


def logout_button() -> None:
    """Who is logged in, and a button that logs out (clearing the whole session)."""
    user = current_user()
    if user is None:
        return
    st.caption(f"Logged in as **{user['username']}** ({user['role']})")
    if st.button("Log out", key="logout_button"):
        # Clear everything: page state of this user must not reach the next one.
        st.session_state.clear()
        st.rerun()
