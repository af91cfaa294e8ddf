"""The small Streamlit glue shared by the pages: database, session user, log-in widgets.

Streamlit is imported here and in the pages, never under ``structext_core``. The logged-in user lives in
``st.session_state["user"]`` as ``{id, username, role}``, beside the log-in's session token
(``structext_core.studio.accounts``), which a cookie keeps across reloads; nothing else about the
user is kept in the session.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import logging
import secrets
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils
import streamlit as st
from streamlit.errors import FragmentHandledException
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

from structext_core import settings
from structext_core.studio import access, accounts, run_gate, storage
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_panel

USER_KEY = "user"
TOKEN_KEY = "session_token"
NOTICE_KEY = "login_notice"
COOKIE_CHECKED_KEY = "session_cookie_checked"
COOKIE_WRITE_KEY = "session_cookie_write"
COOKIE_NAME = "structext_session"
ERROR_LOG_ENV = settings.ERROR_LOG_ENV
SESSION_NOTICES = {
    "expired": "Your session expired, log in again.",
    "revoked": "Your session was ended (logged out elsewhere, or the password was changed): log in again.",
    "disabled": accounts.DISABLED_MESSAGE,
}

# Runs in the app's page itself (components v2 mount no iframe), so it can write the cookie
# that the next websocket handshake of this browser carries (read back with st.context.cookies).
_COOKIE_JS = """
export default function (component) {
  const { data } = component;
  if (data && typeof data.cookie === "string") {
    document.cookie = data.cookie;
  }
}
"""
_cookie_writer = st.components.v2.component("structext_session_cookie", js=_COOKIE_JS)


FLASH_KEY = "ui_flash"


def flash(kind: str, message: str, *, toast: bool = False) -> None:
    """Keep a message of an action (``kind``: success, info, warning, error, or toast for a toast
    alone) for the next run of the page, where :func:`show_flash` shows it. Callbacks run before the page is drawn, so
    this is how they speak. ``toast`` also shows it as a toast (the page top may be out of sight)."""
    st.session_state.setdefault(FLASH_KEY, []).append((kind, message, toast))


def show_flash() -> None:
    """Show the kept messages, once, in a container that is always there, so the elements after
    it keep their place (an open tab or expander stays open); in a panel (``light_panel``), as its notes
    (its parts keep their place by their ids)."""
    box = None if light_panel.drawing() else st.container()
    for kind, message, toast in st.session_state.pop(FLASH_KEY, []):
        message = markdown_text(message)  # it may quote names, notes or file names people gave
        if kind == "toast":
            st.toast(message)
            continue
        if box is None:
            light_panel.note(message, kind)
        else:
            getattr(box, kind)(message)
        if toast:
            st.toast(message, icon=":material/check_circle:" if kind == "success" else ":material/info:")


def built_on_click(make):
    """A download's data, made when the button is clicked (in a server thread, outside any script
    run) on a connection of its own that is closed as soon as the data is made."""
    def build():
        with storage.opened() as db:
            return make(db)
    return build


# The connection of each script run, by thread (a run, its callbacks and its fragments run in the
# script's thread; a parallel fragment worker has a thread, and so a connection, of its own).
# Closed when the run ends (:func:`run_scope` in app.py, :func:`fragment` for a fragment's own
# run), so nothing a session keeps (a widget's callback, a page's old globals) holds a connection
# beyond its run. A connection whose thread has ended without closing it (a page run on its own,
# as AppTest does) is closed by the next :func:`get_db` of any thread.
_RUN_DBS: dict[threading.Thread, sqlite_utils.Database] = {}
_RUN_DBS_GUARD = threading.Lock()


def get_db() -> sqlite_utils.Database:
    """The database connection of this script run (or callback, or fragment run).

    Streamlit runs every session, and every run, in its own thread, and a sqlite3 connection
    belongs to its thread, so each run opens its own (about a millisecond), once: the calls of
    one run share it, and it is closed when the run ends (:func:`close_db`). Outside a script
    run (a download's data made later, a test) the caller gets a connection of its own.
    """
    if get_script_run_ctx(suppress_warning=True) is None:
        return storage.open_db()
    thread = threading.current_thread()
    reap_ended_runs()
    with _RUN_DBS_GUARD:
        db = _RUN_DBS.get(thread)
    if db is None:
        db = storage.open_db(check_same_thread=False)  # closed by another thread once this one ended
        with _RUN_DBS_GUARD:
            _RUN_DBS[thread] = db
    return db


def reap_ended_runs() -> int:
    """Close the connections of runs whose thread ended without closing them (a page run on
    its own, as AppTest does); returns how many."""
    with _RUN_DBS_GUARD:
        stale = [_RUN_DBS.pop(t) for t in [t for t in _RUN_DBS if not t.is_alive()]]
    for old in stale:
        old.conn.close()
    return len(stale)


def close_db() -> None:
    """Close this thread's run connection, if it has one (the end of a run)."""
    with _RUN_DBS_GUARD:
        db = _RUN_DBS.pop(threading.current_thread(), None)
    if db is not None:
        db.conn.close()


def open_run_connections() -> int:
    """How many run connections are open now (tests and benchmarks)."""
    with _RUN_DBS_GUARD:
        return len(_RUN_DBS)


@contextlib.contextmanager
def run_scope() -> Iterator[None]:
    """Around a whole script run (app.py): its connection is closed when the run ends, however
    it ends (``st.rerun``, ``st.stop``, an error), and the records of widgets gone from the page
    are forgotten (:func:`forget_gone_widgets`). The run holds a slot of the process's gate
    (:mod:`structext_core.studio.run_gate`) throughout: a crowd's runs queue instead of all
    crawling at once."""
    with run_gate.process_gate().slot():
        try:
            yield
        finally:
            try:
                forget_gone_widgets()
            finally:
                close_db()


def forget_gone_widgets() -> int:
    """Forget the records of this session's widgets that are gone from the page; returns how many.

    Streamlit (1.67) drops the value of a widget that a full run did not draw, but keeps its
    record (callback, the callback's arguments, and through the callback the globals of the run
    that drew it: the question, its reference, the run's database connection) for the life of
    the session. The question page's widgets are new for every question, so a session kept one
    more run's worth per answer. At the end of a full run, a widget not drawn in it whose value
    Streamlit has already dropped cannot be used again (drawn again, it is registered afresh), so
    its record goes too. Reads Streamlit's internals; if they change, nothing is forgotten.
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or ctx.fragment_ids_this_run:
        return 0
    safe = ctx.session_state
    try:
        with safe._lock:
            state = safe._state
            widgets = state._new_widget_state
            drawn = ctx.shared.widget_ids_this_run
            gone = [wid for wid in widgets.widget_metadata
                    if wid not in drawn and wid not in widgets.states and wid not in state._old_state]
            mapper = state._key_id_mapper
            for wid in gone:
                del widgets.widget_metadata[wid]
                key = mapper.id_key_mapping.get(wid)
                if key is not None and mapper.get_id_from_key(key) == wid:
                    mapper.delete(key)
    except (AttributeError, KeyError, TypeError):  # Streamlit's internals changed: keep everything
        return 0
    return len(gone)


#: The signature every fragment of ours shows: ``st.fragment`` copies the signature of what it
#: wraps, and a page's fragments are wrapped anew on each of its runs (the page's script runs
#: again), so working it out from the function each time cost a submit several inspections.
_FRAGMENT_SIGNATURE = inspect.Signature([
    inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
])


def fragment(func=None, *, run_every=None):
    """``st.fragment`` whose own runs close their connection when they end, and re-check the log-in
    first as app.py's full run does (:func:`session_holds`): a session ended meanwhile (a log-out in
    another tab, a password change, an admin's change of the role) reruns the whole app, which logs
    it out or re-reads the role, before the fragment draws anything. Called inline (in a full run)
    the function leaves the run's connection and the check to the run."""
    def wrap(body):
        @functools.wraps(body)
        def run(*args, **kwargs):
            ctx = get_script_run_ctx(suppress_warning=True)
            own_run = ctx is not None and bool(ctx.fragment_ids_this_run)
            # A fragment's own run takes a slot of the process's gate (run_gate); called inline,
            # its full run holds one already.
            try:
                with run_gate.process_gate().slot():
                    if own_run and not session_holds():
                        st.rerun(scope="app")
                    with light_panel.panel(f"fr-{ThreadState.get().fragment_id}"):  # its light elements: as few
                        return body(*args, **kwargs)
            finally:
                ctx = get_script_run_ctx(suppress_warning=True)
                if ctx is not None and ctx.fragment_ids_this_run:
                    close_db()
        run.__signature__ = _FRAGMENT_SIGNATURE
        return st.fragment(run, run_every=run_every)
    return wrap(func) if func is not None else wrap


@functools.lru_cache(maxsize=64)
def _navigation_pages(pages_dir: Path, role: str, public_mode_on: bool) -> tuple[tuple[str, StreamlitPage], ...]:
    pages = []
    for info in access.PAGES:
        path = pages_dir / info.file
        if not path.exists():  # a page still being written: the app runs without it
            continue
        visible = info.listed and access.can_open(role, info.key, public_mode_on)
        pages.append((info.section, info.key if visible and info.work else None, st.Page(
            str(path), title=info.title, icon=info.icon, default=info.default,
            url_path=info.url_path or None, visibility="visible" if visible else "hidden")))
    return tuple(pages)


def page_file(page_key: str) -> Path:
    """The script of the access table's page ``page_key``, for ``st.switch_page``: a shared page's file in
    ``pages/``; a benchmark's own page is named by its full path in the table already."""
    return settings.PROJECT_ROOT / "pages" / access.page(page_key).file


def navigation_pages(pages_dir: Path, role: str, public_mode_on: bool, user: dict | None = None) -> dict[str, list]:
    """Every page of ``access.PAGES`` by section, for ``st.navigation``; the ones ``role`` may
    not open, those the table does not list (``Page.listed``) and those with no work for ``user`` now
    (:func:`access.has_work`) are hidden from the menu but keep their URL, where the page's own guard
    or message says why. Built once per role and mode (checking each page's icon and path cost every
    run about 1 ms; copies cost 0.07 ms); each run gets copies, as ``st.navigation`` marks the page it
    chose on the object and runs of other sessions go on beside it."""
    sections: dict[str, list] = {}
    for section, work_key, page in _navigation_pages(pages_dir, role, public_mode_on):
        shown = copy.copy(page)
        if work_key is not None and not access.has_work(work_key, get_db(), user):
            shown._visibility = "hidden"
        sections.setdefault(section, []).append(shown)
    return sections


def session_holds() -> bool:
    """Whether this session's log-in is still the one its token says (not ended, expired or
    revoked; the same user and role). A session without a token (a visitor, AppTest) holds."""
    token = st.session_state.get(TOKEN_KEY)
    if not token:
        return True
    return accounts.verify_session(get_db(), token).user == current_user()


def current_user() -> dict | None:
    """The logged-in user ``{id, username, role}``, or None."""
    return st.session_state.get(USER_KEY)


def require_page(page_key: str) -> dict | None:
    """Return the session user (None for a visitor) when ``structext_core.studio.access`` lets them
    open the page ``page_key``; otherwise show why it is refused and stop the script
    (nothing of the page is sent)."""
    user = current_user()
    message = access.refusal(user, page_key, access.public_mode(get_db()))
    if message is not None:
        st.error(message)
        st.stop()
    return user


def login_form() -> None:
    """User name and password; on success the user and a new session token are stored in
    the session (the token also in a cookie) and the app reruns. A failed attempt shows
    one message (with the lock, if the name is now locked) and logs nobody in."""
    _write_cookie()
    if notice := st.session_state.get(NOTICE_KEY):
        st.info(notice)
    with st.form("login_form"):
        st.markdown("**Log in**")
        username = st.text_input("User name", autocomplete="username")
        password = st.text_input("Password", type="password", autocomplete="current-password")
        submitted = st.form_submit_button("Log in", type="primary")
    if not submitted:
        return
    outcome = accounts.log_in(get_db(), username, password)
    if outcome.user is None:
        st.error(outcome.message)
        return
    try:
        _start_session(outcome.user)
    except accounts.AccountError as error:  # a bad session setting: say which
        st.error(f"Log-in is not possible: {error}")
        return
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
    try:
        _start_session(user)
    except accounts.AccountError as error:  # the account exists: log in once the setting is fixed
        st.error(f"The admin account was created, but log-in is not possible: {error}")
        return
    st.rerun()


def logged_in_as() -> dict | None:
    """Who is logged in (``{"name", "role"}``), shown under the navigation's menu (``light_nav.menu``, whose
    last section, *Your account*, holds the pages that change one's password and log out); None for a visitor.
    Drawn by the menu's element: a caption of Streamlit's was a React tree the browser built on every page's
    first view, and a log-out button before it code the browser loaded after the page (issue 46)."""
    user = current_user()
    return None if user is None else {"name": user["username"], "role": user["role"]}


def keep_cookie() -> None:
    """For a logged-in session: mount the cookie writer while a cookie is to be set or deleted
    (:func:`_write_cookie`; the log-in form mounts it for a visitor)."""
    _write_cookie()


def log_out() -> None:
    """Log this person out: every session of theirs ends on the server, the whole Streamlit session
    is cleared and the browser's cookie deleted."""
    user = current_user()
    if user is None:
        return
    accounts.revoke_user_sessions(get_db(), user["id"], "logged out")
    _end_session(notice=None)


#: Session key: the page (its URL path) and the person of this session's last full run (:func:`note_page`).
LAST_PAGE_KEY = "frame_last_page"
#: Session key: the same, of the run before this one.
CAME_FROM_KEY = "frame_came_from"


def note_page(page: StreamlitPage) -> None:
    """Keep which page this full run shows, and to whom (app.py, before the page runs), so a page can
    tell a click in this tab's navigation from an address opened (:func:`arrived_from_another_page`)."""
    user = current_user()
    state = st.session_state
    state[CAME_FROM_KEY] = state.get(LAST_PAGE_KEY)
    state[LAST_PAGE_KEY] = (page.url_path, user["id"] if user else None)


def arrived_from_another_page() -> bool:
    """Whether this run came from another page of this tab, shown to the same person: a click in the
    navigation. False for a page opened at its address (a new tab, a reload, a link from elsewhere)
    and for a log-in on the page itself."""
    came_from, here = st.session_state.get(CAME_FROM_KEY), st.session_state.get(LAST_PAGE_KEY)
    if came_from is None or here is None or here[1] is None:
        return False
    (page_before, person_before), (page_now, person_now) = came_from, here
    return page_before != page_now and person_before == person_now


def own_password_form() -> None:
    """The logged-in person's own password: change it with the current one and the new one twice.
    This session stays logged in (its token is kept); every other session of the account ends. A
    wrong current password counts as a failed log-in of the name (the same lock), so the form is
    no way round it. Someone who came in by a link has no password, and is told so."""
    user = current_user()
    if user is None:
        return
    if not accounts.has_password(get_db(), user["id"]):
        st.info("Your account has no password: you came in by a link. To go on in another browser, open "
                "your link there (a study link asks for the resume code you were shown).")
        return
    with st.form("own_password_form", clear_on_submit=True):
        current = st.text_input("Current password", type="password", key="own_current_password",
                                autocomplete="current-password")
        new = st.text_input("New password", type="password", key="own_new_password",
                            autocomplete="new-password",
                            help=f"At least {accounts.MIN_PASSWORD_LENGTH} characters.")
        repeat = st.text_input("Repeat the new password", type="password", key="own_repeat_password",
                               autocomplete="new-password")
        submitted = st.form_submit_button("Change password", type="primary")
    if not submitted:
        return
    if new != repeat:
        st.error("The two new passwords differ: type the same new password in both boxes. "
                 "Your password was not changed.")
        return
    try:
        ended = accounts.change_own_password(get_db(), user["id"], current, new,
                                             keep_token=st.session_state.get(TOKEN_KEY))
    except accounts.AccountError as error:
        st.error(str(error))
        return
    others = f" {plural(ended, 'other session')} of your account ended." if ended else ""
    st.success(f"Your password is changed; you stay logged in here.{others}")


def restore_session() -> None:
    """Bring back or re-check this browser's log-in; app.py calls it before drawing anything.

    - Logged in with a token: the token is checked on every run, so a log-out elsewhere, a
      password change or the end of its lifetime logs this session out too (with a notice
      above the log-in form); the role is re-read.
    - Not logged in, first run of this Streamlit session (a new tab or a reload): the
      session cookie of the websocket handshake logs in when its token is valid.

    A session user set without a token (AppTest) is left as it is.
    """
    state = st.session_state
    token = state.get(TOKEN_KEY)
    from_cookie = False
    if token is None and current_user() is None and not state.get(COOKIE_CHECKED_KEY):
        state[COOKIE_CHECKED_KEY] = True
        token = st.context.cookies.get(COOKIE_NAME)
        from_cookie = True
    if not token:
        return
    check = accounts.verify_session(get_db(), token)
    if check.user is None:
        if not from_cookie or check.reason in SESSION_NOTICES:
            _end_session(notice=SESSION_NOTICES.get(check.reason))
        else:  # a cookie we never issued, or altered: delete it, say nothing
            state[COOKIE_WRITE_KEY] = _cookie(None, 0)
        return
    state[USER_KEY] = check.user
    state[TOKEN_KEY] = token


def _start_session(user: dict) -> None:
    """Log ``user`` in: a new session token in the session, and in the cookie."""
    lifetime = accounts.session_lifetime_seconds()
    token = accounts.issue_session(get_db(), user["id"], lifetime=lifetime)
    st.session_state.pop(NOTICE_KEY, None)
    st.session_state[USER_KEY] = user
    st.session_state[TOKEN_KEY] = token
    st.session_state[COOKIE_WRITE_KEY] = _cookie(token, lifetime)


def _end_session(notice: str | None) -> None:
    """Clear the whole Streamlit session (page state of this user must not reach the next
    one), delete the cookie, and keep the handshake's old cookie from being tried again."""
    st.session_state.clear()
    st.session_state[COOKIE_CHECKED_KEY] = True
    st.session_state[COOKIE_WRITE_KEY] = _cookie(None, 0)
    if notice:
        st.session_state[NOTICE_KEY] = notice


def _cookie(token: str | None, max_age: float) -> str:
    """The ``document.cookie`` line that stores ``token`` (or, with None, deletes the cookie).
    HttpOnly cannot be set from JavaScript; Secure is added when the app is served over https."""
    secure = "; Secure" if (st.context.url or "").startswith("https:") else ""
    return f"{COOKIE_NAME}={token or ''}; Path=/; Max-Age={max(0, int(max_age))}; SameSite=Strict{secure}"


def _write_cookie() -> None:
    """Mount the cookie writer while this session has a cookie to set or delete. It is
    mounted again on every run (idempotent), so a run cut short by a rerun loses nothing.
    Without a key: known by its cookie line (a new line is a new element, whose script runs),
    and left out of the session state that Streamlit builds for each text or number box
    drawn, which presents every keyed component's state (a third of those presentations on
    the question page, each defining a class; issue 46)."""
    line = st.session_state.get(COOKIE_WRITE_KEY)
    if line:
        _cookie_writer(data={"cookie": line})


# ---------------------------------------------------------------- errors


def run_page(page: StreamlitPage) -> None:
    """Run the navigation's page. An unexpected exception is logged with a short id and the
    page shows that id instead of a traceback. ``st.rerun``/``st.stop`` raise Streamlit's
    ``ScriptControlException`` (a ``BaseException``), which passes untouched, as does a
    fragment's error that Streamlit has already shown and logged."""
    try:
        with light_panel.panel("pg"):  # a page that draws light elements draws them as few (light_panel)
            page.run()
    except StopException:
        drop_undrawn_fragments()
        raise
    except FragmentHandledException:
        raise
    except Exception as error:  # noqa: BLE001 - the point: nothing reaches the user raw
        report_error(error, where=getattr(page, "title", None) or "page")


def drop_undrawn_fragments() -> None:
    """At the ``st.stop()`` of a full run: forget the fragments this run did not draw, as
    Streamlit does when a run ends normally (it skips that when the run stops early).

    Without it, a fragment of the screen before (the question's input reports, its flag box)
    stays runnable: a request for it still on its way (a key pressed with the submit) runs it
    after the run that replaced its screen, its elements go to a place the new screen does not
    have, and the browser's app dies on "Bad delta path index" with a blank page."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or ctx.fragment_ids_this_run:  # not a full run: a fragment's stop changes nothing
        return
    ctx.fragment_storage.clear(new_fragment_ids=ctx.shared.new_fragment_ids.snapshot())


def report_error(error: BaseException, where: str) -> str:
    """Log ``error`` with a new id (server's standard error and the error log file) and
    show the person a short message with that id; returns the id."""
    error_id = secrets.token_hex(3)
    user = current_user()
    who = f"{user['username']} ({user['role']})" if user else "visitor"
    details = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    header = f"error {error_id} on {where} for {who}"
    _error_logger().error("%s\n%s", header, details.rstrip())
    _append_error_log(
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {header}\n{details}\n"
    )
    st.error(f"Something went wrong (error {error_id}). It has been logged; tell the study lead this id.")
    return error_id


def error_log_path() -> Path:
    """``$STRUCTEXT_ERROR_LOG``, else ``errors.log`` beside the database."""
    return settings.error_log_path()


def _append_error_log(text: str) -> None:
    try:
        path = error_log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as log:
            log.write(text)
    except OSError as problem:  # the standard-error copy is still there
        _error_logger().error("could not write the error log: %s", problem)


def _error_logger() -> logging.Logger:
    logger = logging.getLogger("structext.errors")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    return logger
