"""The AIBench paper's published tables (Tables 2, 3, 4/A1 and Fig. 6b), shipped as package data
in ``structext_core/data/aibench_paper/`` with ``SOURCE.md`` saying where they come from.

Values are kept as printed text (``load_table`` reads every column as text), so a view shows the
paper's own digits; :func:`recomputed_overall` rebuilds an Overall from its five columns the way
the paper rounds (to two decimals).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources

import pandas as pd

#: The five columns whose mean is the Overall (O).
FIVE_COLUMNS = ("C", "T", "P", "S", "A")
AESTHETIC_METRICS = ("Aesthetic Score", "PickScore", "VLM-as-Judge", "UniPercept", "AesR1")


@dataclass(frozen=True)
class PaperTable:
    """One published table: its file and caption."""

    name: str
    filename: str
    title: str
    caption: str


TABLES: dict[str, PaperTable] = {
    "table2": PaperTable("table2", "table2_aesthetic_metrics.csv", "Table 2: aesthetic metrics and the human rank",
                         "Five aesthetic metrics of five systems beside the human experts' rank (1 = best)."),
    "table3": PaperTable("table3", "table3_main.csv", "Table 3: main results",
                         "Accuracy (%) per level (C component, T topology, P phase, S semantics), aesthetics "
                         "(A, UniPercept) and overall (O, the mean of the five)."),
    "table4": PaperTable("table4", "table4_test_time_scaling.csv", "Table 4 / A1: test-time scaling",
                         "The same columns for prompt rewriting, SVG code, best-of-N and editing variants."),
    "fig6b": PaperTable("fig6b", "fig6b_human_rank_correlation.csv", "Fig. 6b: agreement with the human rank",
                        "Spearman's rho of each ranking with the human experts' rank."),
}


def source_note() -> str:
    """The provenance note shipped beside the tables (SOURCE.md)."""
    return resources.files("structext_core").joinpath("data", "aibench_paper", "SOURCE.md").read_text("utf-8")


def load_table(name: str) -> pd.DataFrame:
    """The table ``name`` (a key of :data:`TABLES`) with every value as printed (text)."""
    text = resources.files("structext_core").joinpath("data", "aibench_paper", TABLES[name].filename).read_text(
        "utf-8")
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def recomputed_overall(row: pd.Series | dict) -> str:
    """The mean of a row's five printed columns, rounded to two decimals as the paper prints.

    The mean of five two-decimal numbers has at most three decimals and its third is even, so
    it never falls on a tie: half-up and half-even rounding agree.
    """
    mean = sum(Decimal(row[c]) for c in FIVE_COLUMNS) / 5
    return str(mean.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
