"""Make sure every page runs inside app.py's frame (navigation, log-in, page config).

Streamlit treats an app with a ``pages/`` folder as a legacy multipage app until
``st.navigation`` has run once in the server process. Until then, a script run goes
through Streamlit's legacy runner (``_mpa_v1``): a visit to ``/`` runs app.py as a page
of that legacy navigation, a first visit to a page's URL (``/explore``) runs that page
file alone, without app.py. Either way the run's widgets get other ids than in every
later run (the ids include the running page's hash), so a form submitted from what that
run drew is lost: its values go to ids the next run no longer has. The project's layout
keeps the ``pages/`` name, so each page (and app.py) calls :func:`ensure_frame` first: it
leaves legacy mode and reruns, which runs app.py and its navigation, which then opens
the page the URL asked for.

Whether a run is a legacy one is decided by the run itself (is the legacy runner among
its callers?), not only by Streamlit's process-wide flag: on a fresh server the first
runs of several sessions start at once, all read the flag while it still says "legacy",
and the first of them to get here turns it off. The others must rerun too, or their
log-in form is drawn with legacy ids and the first log-in is dropped (issue 19, item 5).
"""

from __future__ import annotations

import sys

import streamlit as st

_LEGACY_RUNNER = ("_mpa_v1", "streamlit.runtime.scriptrunner.script_runner")
#: How far up the call stack the legacy runner can be (script runner -> exec -> app.py -> here).
_MAX_DEPTH = 64


def in_legacy_run() -> bool:
    """True when this script run was started by Streamlit's legacy pages/ runner."""
    frame = sys._getframe(1)
    for _ in range(_MAX_DEPTH):
        if frame is None:
            return False
        if (frame.f_code.co_name, frame.f_globals.get("__name__")) == _LEGACY_RUNNER:
            return True
        frame = frame.f_back
    return False


def ensure_frame() -> None:
    """Rerun through app.py when this run was started without it (legacy pages/ mode)."""
    from streamlit.runtime.pages_manager import PagesManager

    legacy = in_legacy_run()
    if PagesManager.uses_pages_directory or legacy:
        PagesManager.uses_pages_directory = False
        st.rerun()
