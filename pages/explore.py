"""Explore: a choice over the benchmark registry opens that benchmark's own view of its data sets
(its ``EXPLORE_VIEW``); who may see which data set is each view's to ask of ``access``.
"""

import streamlit as st

from structext_core import protocol, ui
from structext_core.ui import benchmark_choice, light_html
from structext_core.ui.frame import ensure_frame

ensure_frame()
user = ui.require_page("explore")
db = ui.get_db()
light_html.page_draws_light()  # its choosers are light elements: its HTML blocks are drawn as one too

st.title("Explore samples")

benchmark = benchmark_choice.explore_benchmark()
if not benchmark_choice.own_view(benchmark, "EXPLORE_VIEW", db, user):
    st.info(f"{protocol.display_name(benchmark)} has no Explore view of its own: its items are read by "
            "its studies and by `structext items score`.")
