"""A heatmap as a tinted table: what the page draws (:mod:`structext_core.ui.heatmap_table`) in place
of a Vega-Lite chart (Results' heatmaps; StrucText-Eval's keeps its chart for the exported PNG and SVG,
:func:`charts.heatmap_chart`).

The same cells, order, colours and words as the chart: a cell per (row, column) holding its mean and,
under it, n; colour on a fixed 0-100 viridis scale (grey below the minimum n); rows and columns in
:func:`heatmaps.axis_order`'s order; the 95 % interval in the cell's tooltip. Drawn by the browser as a
table (one element, no chart library), it opens the page about 0.1 s sooner than the chart did
(``benchmarks/bench_pages.py``, Results).

:func:`table_data` is plain data for the browser, which writes every label as text (never as markup):
the labels come from imported files and people's names.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from structext_core.views.heatmaps import axis_order

#: The viridis scheme (the chart's: Vega's, as matplotlib's), sampled at 0, 1/9, ..., 1.
VIRIDIS = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b",
           "#fde725")
#: The blues scheme (Vega's, as d3's), in 9 steps from 0 to 1.
BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
GREY, GREY_TEXT = "#e4e4e4", "#555555"  # a cell below the minimum n (as charts.GREY, charts.GREY_TEXT)
DARK_BELOW = 55.0  # white text on cells whose mean is below this (the dark end of viridis), as the chart


def colour(value: float, scheme: tuple[str, ...] = VIRIDIS) -> str:
    """The colour of ``value`` on the 0-100 scale (clipped) in ``scheme`` (its stops evenly spaced), as
    ``#rrggbb``."""
    x = min(max(float(value), 0.0), 100.0) / 100 * (len(scheme) - 1)
    low = min(int(math.floor(x)), len(scheme) - 2)
    t = x - low
    a, b = scheme[low], scheme[low + 1]
    mixed = (round(int(a[i:i + 2], 16) * (1 - t) + int(b[i:i + 2], 16) * t) for i in (1, 3, 5))
    return "#" + "".join(f"{c:02x}" for c in mixed)


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def table_data(cells: pd.DataFrame, row_title: str, col_title: str, *, title: str = "", subtitle: str = "",
               value_title: str = "score (%)", min_n: int = 1, picked: tuple[str, str] | None = None,
               scheme: tuple[str, ...] = VIRIDIS, white_text: Callable[[float], bool] = lambda mean: mean < DARK_BELOW,
               clickable: bool = True, order: tuple[list[str], list[str]] | None = None) -> dict:
    """What the browser needs to draw the heatmap of ``cells`` (``row_label``, ``col_label``, ``mean``,
    ``n``; ``ci_low``, ``ci_high`` and ``below_min`` when it has them; ``row_rank`` and ``col_rank``, the
    order of :func:`heatmaps.axis_order`, unless ``order`` gives the rows and columns in order): the titles,
    the rows and columns in order, and each cell with its words, colours and tooltip. ``picked``: the
    cell outlined (the one whose samples are shown below). ``subtitle``: a line a ``"; "``-separated part,
    as the chart's (:func:`charts.subtitled`). ``scheme`` and ``white_text`` (whether a cell's mean is on
    the scheme's dark end): the colours; ``clickable``: whether a click on a cell picks it."""
    rows, cols = order if order is not None else (axis_order(cells, "row"), axis_order(cells, "col"))
    below = cells["below_min"].astype(bool) if "below_min" in cells.columns else pd.Series(False, index=cells.index)
    out = []
    for record, small in zip(cells.to_dict("records"), below.tolist(), strict=True):
        mean, n = _number(record["mean"]), int(record["n"])
        low, high = _number(record.get("ci_low")), _number(record.get("ci_high"))
        value = "no value" if mean is None else f"{mean:.1f}"
        tip = [f"{row_title}: {record['row_label']}", f"{col_title}: {record['col_label']}",
               f"{value_title}: {value}", f"n: {n:,}"]
        if low is not None and high is not None:
            tip.append(f"95% CI: {low:.1f} to {high:.1f}")
        if small:
            tip.append(f"n below {min_n}")
        out.append({
            "row_label": str(record["row_label"]), "col_label": str(record["col_label"]), "mean": mean, "n": n,
            "ci_low": low, "ci_high": high, "below_min": bool(small),
            "text": "" if mean is None else value, "n_label": f"n={n:,}", "tip": "\n".join(tip),
            "background": GREY if small or mean is None else colour(mean, scheme),
            "colour": GREY_TEXT if small or mean is None else ("white" if white_text(mean) else "black"),
        })
    return {"title": title, "subtitle": [part for part in subtitle.split("; ") if part], "row_title": row_title,
            "col_title": col_title, "value_title": value_title, "rows": rows, "cols": cols, "cells": out,
            "picked": list(picked) if picked else None, "clickable": clickable,
            "legend": [colour(v, scheme) for v in range(0, 101, 10)]}
