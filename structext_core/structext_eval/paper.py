"""The paper's published tables (Tables 3, 4 and 6), shipped as package data.

The CSV files live in ``structext_core/data/paper/`` with ``SOURCE.md`` saying where the
figures come from. Values are kept exactly as printed: every long frame carries the
number (``value``, a float) and the printed text (``label``, e.g. ``"12.80"``), so a view
can show the paper's own digits.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from importlib import resources

import pandas as pd

FORMAT_COLUMNS = ("JSON", "LaTeX", "Markdown", "Org", "CSV", "Tree", "XML", "YAML")
CATEGORY_COLUMNS = (
    "PathCompose", "PathWalk", "Syntax", "TextRetrieval", "Join", "Statistic", "NodeDepth", "TreeHeight",
)
OVERALL_COLUMN = "All"


@dataclass(frozen=True)
class PaperTable:
    """One published table: its file, caption and the columns that identify a row."""

    name: str
    filename: str
    title: str
    caption: str
    id_columns: tuple[str, ...]


TABLES: dict[str, PaperTable] = {
    "table3": PaperTable(
        "table3", "table3_test_rougel.csv", "Table 3: Test, open models",
        "ROUGE-L (%) of open models on StrucText-Eval Test, per prompt setting, format and task category.",
        ("model", "prompt"),
    ),
    "table4": PaperTable(
        "table4", "table4_hard_rougel.csv", "Table 4: Test-Hard, all models and humans",
        "ROUGE-L (%) on StrucText-Eval Test-Hard per prompt setting; humans answered the naive setting only.",
        ("model",),
    ),
    "table6": PaperTable(
        "table6", "table6_hard_metrics.csv", "Table 6: Test-Hard, six metrics",
        "Test-Hard, naive prompt: the same responses judged by six metrics (%).",
        ("model",),
    ),
}


def source_note() -> str:
    """The provenance note shipped beside the tables (SOURCE.md)."""
    return resources.files("structext_core").joinpath("data", "paper", "SOURCE.md").read_text(encoding="utf-8")


def raw_text(name: str) -> str:
    """The CSV text of a table, as shipped."""
    table = TABLES[name]
    return resources.files("structext_core").joinpath("data", "paper", table.filename).read_text(encoding="utf-8")


@functools.cache
def _parsed(name: str) -> pd.DataFrame:
    """The table read once (three files shipped with the package, never changing): callers get copies."""
    return pd.read_csv(io.StringIO(raw_text(name)), dtype=str, keep_default_na=False)


def load_table(name: str) -> pd.DataFrame:
    """A table as printed: every cell a string (empty cells are ``""``)."""
    return _parsed(name).copy()


def column_kind(name: str, column: str) -> str:
    """What a value column of a table measures: ``format``, ``task``, ``overall``,
    ``prompt`` (Table 4's settings) or ``metric`` (Table 6)."""
    if name == "table3":
        if column in FORMAT_COLUMNS:
            return "format"
        if column in CATEGORY_COLUMNS:
            return "task"
        return "overall"
    return "prompt" if name == "table4" else "metric"


def long_table(name: str) -> pd.DataFrame:
    """A table in long format, one row per printed number.

    Columns: ``table``, ``model``, ``prompt`` (Table 3's setting; Table 4's column; empty
    for Table 6), ``kind`` (see :func:`column_kind`), ``column`` (the printed header),
    ``value`` (float) and ``label`` (the printed text). Empty cells are left out.
    """
    return _long(name).copy()


@functools.cache
def _long(name: str) -> pd.DataFrame:
    """:func:`long_table`, made once a table (melting it cost each Results run about 30 ms)."""
    table = TABLES[name]
    wide = load_table(name)
    value_columns = [c for c in wide.columns if c not in table.id_columns]
    long = wide.melt(id_vars=list(table.id_columns), value_vars=value_columns, var_name="column", value_name="label")
    long = long[long["label"].str.strip() != ""].copy()
    long["value"] = long["label"].astype(float)
    long["kind"] = [column_kind(name, c) for c in long["column"]]
    if "prompt" not in long.columns:
        long["prompt"] = long["column"] if name == "table4" else ""
    long["table"] = name
    # Keep the printed order of rows and columns (melt goes column by column).
    long["row_order"] = long.index % len(wide)
    long["col_order"] = [value_columns.index(c) for c in long["column"]]
    long = long.sort_values(["row_order", "col_order"]).reset_index(drop=True)
    return long[["table", "model", "prompt", "kind", "column", "value", "label", "row_order", "col_order"]]


def metric_correlations(method: str = "pearson") -> pd.DataFrame:
    """Figure 5 from Table 6: correlation of the six metrics across the 12 models.

    Long format: ``metric_a``, ``metric_b``, ``r``, ``n`` (models).
    """
    wide = load_table("table6").set_index("model").astype(float)
    corr = wide.corr(method=method)
    long = corr.stack().reset_index()
    long.columns = ["metric_a", "metric_b", "r"]
    long["n"] = len(wide)
    return long


def printed_cut(name: str, kind: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table as printed, with only the value columns of ``kind`` (Table 3's ``format``,
    ``task`` or ``overall`` columns; every value column when None), in the printed order; and
    beside it each printed number's shade, from 0 (the lowest number of the cut) to 1 (the
    highest), missing where the cell is empty: the heatmap the table is."""
    table = TABLES[name]
    wide = load_table(name)
    keep = [c for c in wide.columns
            if c in table.id_columns or kind is None or column_kind(name, c) == kind]
    cut = wide[keep].reset_index(drop=True)
    values = cut.drop(columns=list(table.id_columns)).apply(
        lambda column: pd.to_numeric(column.where(column.str.strip() != ""), errors="raise"))
    low, high = values.min().min(), values.max().max()
    shade = (values - low) / (high - low) if high > low else values * 0 + 1.0
    return cut, shade


def heatmap_cells(name: str, kind: str | None = None) -> pd.DataFrame:
    """A paper table as heatmap cells: ``row_label`` (model, with the prompt for Table 3),
    ``col_label`` (the printed column), ``mean`` (the value), ``label`` (the printed text),
    in the printed order."""
    long = long_table(name)
    if kind is not None:
        long = long[long["kind"] == kind]
    row_label = long["model"] + " / " + long["prompt"] if name == "table3" else long["model"]
    return pd.DataFrame({
        "row_label": row_label, "col_label": long["column"], "mean": long["value"], "label": long["label"],
        "row_rank": long["row_order"], "col_rank": long["col_order"],
    }).reset_index(drop=True)
