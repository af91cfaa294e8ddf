"""The app as it is served: ``streamlit run server.py``.

``app.py`` is the app (navigation, log-in, the pages); this file serves it with one small
route beside it: the honest clock's heartbeat (``structext_core/studio/clock_beat.py``), which
pages post every few seconds instead of rerunning a fragment on the server. ``streamlit run
app.py`` still works: its pages find no route and send their heartbeats as fragment runs, at
about ten times the server's CPU per heartbeat.
"""

import streamlit as st
from starlette.middleware import Middleware
from streamlit.runtime.pages_manager import PagesManager

from structext_core import settings
from structext_core.studio import clock_beat, run_gate
from structext_core.ui import compiled_pages, lost_clicks, page_base

# Not a legacy pages/ app: app.py's st.navigation lists every page. Left on, a fresh server's first
# runs go through Streamlit's legacy runner, which knows only the files in pages/: a first visit to
# the URL of a benchmark's own page (in its package, such as a bookmark of /pairwise) was "not found"
# and landed on Home. (`streamlit run app.py` still starts in legacy mode: ui/frame.py's ensure_frame.)
PagesManager.uses_pages_directory = False

settings.run_slots()  # a bad STRUCTEXT_RUN_SLOTS stops the start here, with its name and what it must be

lost_clicks.install()  # a click in a fragment Streamlit no longer holds runs the whole app, not nothing

compiled_pages.install()  # a page is compiled again when its file changes, not on every visit of a lone lead

run_gate.log_stacks_on_signal()  # `kill -USR1 <pid>`: every thread's stack in the log

# A page opened at its own address (/explore) is told where the server is, and connects at once:
# structext_core/ui/page_base.py.
app = st.App("app.py", routes=clock_beat.routes(), middleware=[Middleware(page_base.PageBase)])
