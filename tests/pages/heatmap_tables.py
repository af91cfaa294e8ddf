"""The heatmaps a page drew as tinted tables (structext_core/ui/heatmap_table.py): what AppTest sees of them."""

from __future__ import annotations

import json

import pandas as pd

from structext_core.ui import heatmap_table
from tests.pages.light_parts import bidi_elements


def heatmap_tables(at) -> list[tuple[dict, pd.DataFrame]]:
    """Each heatmap table on the page, in order: its data (titles, rows and columns in order, the cells) and
    its cells as a frame (``row_label``, ``col_label``, ``mean``, ``n``, ``text``, ``n_label``, ``tip``, ...)."""
    return [(data, pd.DataFrame(data["cells"])) for data in
            (json.loads(e.proto.json) for e in bidi_elements(at)
             if e.proto.component_name.endswith(heatmap_table.COMPONENT_NAME))]
