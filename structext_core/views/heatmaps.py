"""Heatmap cells of the Results page: any two dimensions (mean, 95 % interval and n a cell),
their axis order, cells below the minimum n flagged (the charts grey them out), the paper's printed tables as
cells, and cells as a tidy table.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd

from structext_core.evaluation import aggregate
from structext_core.views.result_options import (
    DEFAULT_MIN_N,
    DEFAULT_N_BOOT,
    HEATMAP_SORTS,
    check_min_n,
)


def _labels(series: pd.Series) -> pd.Series:
    return series.astype("string").fillna("(none)")


def heatmap_frame(
    frame: pd.DataFrame,
    row: str,
    col: str,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    sort: str = "auto",
    ordered: Collection[str] = (),
) -> pd.DataFrame:
    """One cell per (row, col) value with ``mean``, ``n``, ``ci_low``, ``ci_high`` (percent).

    The row and column values become text labels (``row_label``, ``col_label``);
    ``row_rank`` / ``col_rank`` order them by their overall mean, best first (``sort="mean"``,
    ties alphabetical) or by the values themselves (``sort="name"``: depth 1, 2, 3...);
    ``sort="auto"`` (the default) keeps the values' order for the dimensions in ``ordered``
    (those whose values have an order of their own, as the benchmark's view says) and sorts the
    others by mean.
    ``frame`` needs a ``value`` column (:func:`with_value`).
    """
    if row == col:
        raise ValueError("choose different dimensions for rows and columns")
    if frame.empty:
        return pd.DataFrame(columns=[row, col, "mean", "n", "ci_low", "ci_high", "row_label", "col_label",
                                     "row_rank", "col_rank"])
    cells = aggregate.aggregate(frame, [row, col], value="value", n_boot=n_boot, seed=seed)
    cells = cells[cells["n"] > 0].copy()
    cells["row_label"] = _labels(cells[row])
    cells["col_label"] = _labels(cells[col])
    if sort not in HEATMAP_SORTS:
        raise ValueError(f"unknown sort {sort!r}: use one of {', '.join(map(repr, HEATMAP_SORTS))}")
    for axis, name in (("row", row), ("col", col)):
        means = frame.groupby(name, dropna=False, observed=True)["value"].mean()
        by_mean = sort == "mean" or (sort == "auto" and name not in ordered)
        order = means.sort_values(ascending=False, kind="stable") if by_mean else means.sort_index()
        ranks = {str(k): i for i, k in enumerate(order.index)}
        cells[f"{axis}_rank"] = cells[f"{axis}_label"].map(ranks).fillna(len(ranks)).astype(int)
    return cells.reset_index(drop=True)


def axis_order(cells: pd.DataFrame, axis: str) -> list[str]:
    """Labels of ``axis`` (``row`` or ``col``) in rank order."""
    pairs = cells[[f"{axis}_label", f"{axis}_rank"]].drop_duplicates().sort_values(f"{axis}_rank")
    return pairs[f"{axis}_label"].astype(str).tolist()


def flag_small_cells(cells: pd.DataFrame, min_n: int = DEFAULT_MIN_N) -> pd.DataFrame:
    """``cells`` with ``below_min``: whether a cell's ``n`` is below ``min_n``. Such cells stay
    (greyed out by the charts, flagged in the tables): hiding them would hide that they are thin."""
    min_n = check_min_n(min_n)
    out = cells.copy()
    out["below_min"] = out["n"].astype(int) < min_n if len(out) else pd.Series(dtype=bool)
    return out


def min_n_note(min_n: int, cells: pd.DataFrame | None = None, rows: bool = False) -> str:
    """The caption's sentence about the minimum n: what is greyed out (a table's ``rows``:
    flagged), and how many of ``cells`` (flagged by :func:`flag_small_cells`)."""
    things, done = ("rows", "ticked under “n below minimum” (below_min_n)") if rows else ("cells", "greyed out")
    if min_n <= 1:
        return f"Raise “Minimum n” (in Settings) to grey out {things} with few results." if not rows else \
            f"Raise “Minimum n” (in Settings) to flag {things} with few results."
    count = "" if cells is None or "below_min" not in cells else f" ({int(cells['below_min'].sum())} of {len(cells)})"
    return (f"{things.capitalize()} with n below {min_n} are {done}{count}, not hidden: their means rest on "
            "few results.")


def cells_table(cells: pd.DataFrame, row: str, col: str) -> pd.DataFrame:
    """Heatmap cells as a tidy table for display and CSV: row, column, mean, n, 95 % interval."""
    table = pd.DataFrame({
        row: cells["row_label"].astype(str), col: cells["col_label"].astype(str),
        "mean": cells["mean"].astype(float).round(2), "n": cells["n"].astype(int),
        "ci_low": cells["ci_low"].astype(float).round(2), "ci_high": cells["ci_high"].astype(float).round(2),
    })
    if "below_min" in cells.columns:
        table["below_min_n"] = cells["below_min"].astype(bool).to_numpy()
    order = cells[["row_rank", "col_rank"]].to_numpy()
    return table.iloc[np.lexsort((order[:, 1], order[:, 0]))].reset_index(drop=True)
