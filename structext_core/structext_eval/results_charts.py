"""StrucText's Figure 4 on Results: each model's mean per (depth, width) cell, and how much the
per-format and per-task means spread within each cell, as frames and Altair charts (cells
below the minimum n greyed out, as :mod:`structext_core.views.charts` does for every heatmap)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from structext_core.evaluation import aggregate
from structext_core.views.charts import COLOR_SCHEME, _cell_colour, _small_tooltip, _value_and_n, _with_small
from structext_core.views.result_options import DEFAULT_N_BOOT


def depth_width_frame(frame: pd.DataFrame, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per model and (depth, width): mean, n, 95 % interval, and the spread of the per-format
    and per-task means in that cell (``format_std``, ``task_std``: standard deviation across
    formats / task categories; NaN with fewer than two)."""
    if frame.empty:
        return pd.DataFrame(columns=["model", "depth", "width", "mean", "n", "ci_low", "ci_high",
                                     "format_std", "task_std"])
    cells = aggregate.aggregate(frame, ["model", "depth", "width"], value="value", n_boot=n_boot, seed=seed)
    keys = ["model", "depth", "width"]
    for dimension in ("format", "task"):
        per = frame.groupby([*keys, dimension], observed=True, dropna=False)["value"].mean()
        spread = per.groupby(level=keys, observed=True, dropna=False).std(ddof=0).rename(f"{dimension}_std")
        counts = per.groupby(level=keys, observed=True, dropna=False).size()
        spread[counts < 2] = np.nan
        cells = cells.merge(spread.reset_index(), on=keys, how="left")
    return cells



def depth_width_chart(cells: pd.DataFrame, value_title: str = "score (%)", min_n: int = 1) -> alt.FacetChart:
    """Figure 4: a depth (rows) x width (columns) grid per model, mean and n in each cell (grey
    below ``min_n``, see :func:`heatmap_chart`); the tooltip adds the spread."""
    data = cells.assign(
        depth=cells["depth"].astype(int).astype(str), width=cells["width"].astype(int).astype(str),
        model=cells["model"].astype(str), n=cells["n"].astype(int),
    )
    for column in ("mean", "ci_low", "ci_high", "format_std", "task_std"):
        data[column] = data[column].astype(float)
    data = _with_small(data, cells)
    tooltip = [
        "model:N", "depth:N", "width:N", alt.Tooltip("mean:Q", format=".1f", title=value_title), "n:Q",
        alt.Tooltip("ci_low:Q", format=".1f", title="95% CI low"),
        alt.Tooltip("ci_high:Q", format=".1f", title="95% CI high"),
        alt.Tooltip("format_std:Q", format=".1f", title="STD across formats"),
        alt.Tooltip("task_std:Q", format=".1f", title="STD across tasks"), *_small_tooltip(min_n),
    ]
    base = alt.Chart().encode(
        x=alt.X("width:O", title="width", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("depth:O", title="depth", axis=alt.Axis(labelAngle=0)),
    )
    rect = base.mark_rect(stroke="white").encode(
        color=_cell_colour(alt.Color("mean:Q", title=value_title,
                                     scale=alt.Scale(domain=[0, 100], scheme=COLOR_SCHEME))),
        tooltip=tooltip,
    )
    texts = _value_and_n(base, alt.Text("mean:Q", format=".1f"), "datum.mean < 55", tooltip, size=12)
    return alt.layer(rect, *texts, data=data).properties(width=150, height=130).facet(
        facet=alt.Facet("model:N", title=None, header=alt.Header(labelFontSize=12, labelLimit=200)), columns=4,
    ).properties(title=f"Depth x width per model: {value_title}")


def spread_chart(cells: pd.DataFrame, value_title: str = "score (%)") -> alt.FacetChart:
    """Figure 4's spread panels: STD across formats and across tasks per (depth, width) and model,
    in points of ``value_title``."""
    long = cells.melt(id_vars=["model", "depth", "width", "n"], value_vars=["format_std", "task_std"],
                      var_name="spread", value_name="std")
    long["spread"] = long["spread"].map({"format_std": "STD across formats", "task_std": "STD across tasks"})
    long["depth"] = long["depth"].astype(int).astype(str)
    long["width"] = long["width"].astype(int).astype(str)
    long["model"] = long["model"].astype(str)
    long["std"] = long["std"].astype(float)
    long["n"] = long["n"].astype(int)
    long = long[long["std"].notna()]  # one format / task only in the cell: no spread to show
    base = alt.Chart().encode(x=alt.X("width:O", axis=alt.Axis(labelAngle=0)),
                              y=alt.Y("depth:O", axis=alt.Axis(labelAngle=0)))
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("std:Q", title="STD (points)", scale=alt.Scale(domain=[0, 50], scheme="oranges")),
        tooltip=["model:N", "spread:N", "depth:N", "width:N", alt.Tooltip("std:Q", format=".1f"), "n:Q"],
    )
    text = base.mark_text(fontSize=12).encode(text=alt.Text("std:Q", format=".1f"),
                                              color=alt.condition("datum.std > 30", alt.value("white"),
                                                                  alt.value("black")))
    return alt.layer(rect, text, data=long).properties(width=110, height=100).facet(
        row=alt.Row("spread:N", title=None, header=alt.Header(labelFontSize=12, labelLimit=200)),
        column=alt.Column("model:N", title=None, header=alt.Header(labelFontSize=12, labelLimit=200)),
    ).properties(title=f"Spread across formats and tasks: STD of {value_title} in points")
