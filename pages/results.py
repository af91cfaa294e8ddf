"""Results: each benchmark's results, people beside models.

UI only. A choice at the top picks the benchmark (a pasted link chooses it with ``benchmark=``); the
page shows that benchmark's own view, its ``RESULTS_VIEW`` (``structext_core.protocol``), which
decides what each role sees through ``structext_core.studio.access``.
"""

import streamlit as st

from structext_core import protocol, ui
from structext_core.ui import benchmark_choice, light_html
from structext_core.ui.frame import ensure_frame

ensure_frame()
user = ui.require_page("results")
light_html.page_draws_light()  # its choosers are light elements: its HTML blocks are drawn as one too
st.title("Results")
db = ui.get_db()
benchmark = benchmark_choice.results_benchmark()
if not benchmark_choice.own_view(benchmark, "RESULTS_VIEW", db, user):
    st.info(f"{protocol.display_name(benchmark)} has no Results view.")
