"""The app as it is served: ``streamlit run server.py``.

``app.py`` is the app (navigation, log-in, the pages); this file serves it with one small
route beside it: the honest clock's heartbeat (``structext_core/studio/clock_beat.py``), which
pages post every few seconds instead of rerunning a fragment on the server. ``streamlit run
app.py`` still works: its pages find no route and send their heartbeats as fragment runs, at
about ten times the server's CPU per heartbeat.
"""

import streamlit as st

from structext_core import settings
from structext_core.studio import clock_beat, run_gate

settings.run_slots()  # a bad STRUCTEXT_RUN_SLOTS stops the start here, with its name and what it must be

run_gate.log_stacks_on_signal()  # `kill -USR1 <pid>`: every thread's stack in the log

app = st.App("app.py", routes=clock_beat.routes())
