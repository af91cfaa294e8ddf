"""Widgets AIBench's Results sections share (Streamlit; the numbers come from ``structext_core.aibench.views``)."""

from __future__ import annotations

import pandas as pd

from structext_core.aibench import views as aibench_views
from structext_core.ui import heatmap_table as heatmap_widget
from structext_core.ui import light_choice
from structext_core.views import page_tables


def heatmap(cells: pd.DataFrame, row_axis: str, column_axis: str, file_name: str) -> None:
    """One heatmap (a tinted table) of its long cells (``aibench.views.heatmap``: computed by the caller, who
    may keep them between reruns), with the cells (value and n) as a CSV."""
    heatmap_widget.draw(aibench_views.heatmap_data(cells, row_axis, column_axis), key=f"rs_aib_table_{file_name}")
    light_choice.downloads(f"rs_aib_files_{file_name}", [light_choice.Download(
        "CSV", f"{file_name}.csv", lambda: page_tables.csv_bytes(aibench_views.heatmap_table(cells, row_axis, column_axis)),
        "text/csv", "The heatmap's cells (value and n) as a CSV table")], label=f"Download {file_name}")
