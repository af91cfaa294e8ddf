"""Comparisons on the Results page: Figure 6 (Test vs Real-Test), Figure 5 (correlation of the
metrics, refused below 3 groups: :func:`correlate`), and the paired comparison of two models on
the items both answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from structext_core.evaluation import aggregate
from structext_core.evaluation.scoring import DEFAULT_THRESHOLD
from structext_core.views.heatmaps import _labels
from structext_core.views.result_options import DEFAULT_N_BOOT, SIGNIFICANCE


def is_real_test(suite: str) -> bool:
    """Whether a suite name means Real-Test (``real-test``, ``real_test``, ``Real-Test``...)."""
    return str(suite).lower().replace("_", "-").replace(" ", "-").startswith("real")


def test_vs_real_frame(frame: pd.DataFrame, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per model: mean on Test and on Real-Test (``set`` column), for models that have both."""
    suites = frame["suite"].astype(str)
    real = suites.map(is_real_test)
    keep = real | (suites.str.lower() == "test")
    part = frame[keep.to_numpy()].assign(set=np.where(real[keep].to_numpy(), "Real-Test", "Test"))
    if part.empty:
        return pd.DataFrame(columns=["model", "set", "mean", "n", "ci_low", "ci_high"])
    both = part.groupby("model", observed=True)["set"].nunique()
    part = part[part["model"].isin(both[both == 2].index)]
    if part.empty:
        return pd.DataFrame(columns=["model", "set", "mean", "n", "ci_low", "ci_high"])
    return aggregate.aggregate(part, ["model", "set"], value="value", n_boot=n_boot, seed=seed)


CORRELATION_METRICS = {
    "rouge_l": "ROUGE-L strict (raw)",
    "score": "ROUGE-L strict (thresholded)",
    "rouge_l_paper": "ROUGE-L paper (raw)",
    "score_paper": "ROUGE-L paper (thresholded)",
    "exact_match": "Exact match",
    "bleu": "BLEU",
    "human_judgement": "Human judgement",
}


def metric_table(
    frame: pd.DataFrame,
    by: Sequence[str] = ("model", "prompt"),
    threshold: float = DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """Per group, the mean of every metric present (percent), for the correlation view: both
    ROUGE-L versions, raw and thresholded, exact match, BLEU.

    The thresholded ROUGE-L is recomputed at ``threshold``. Metrics with no values are dropped.
    """
    data = frame.copy()
    for raw, cut in (("rouge_l", "score"), ("rouge_l_paper", "score_paper")):
        if raw in data.columns:
            data[cut] = np.where(data[raw] >= threshold, data[raw], 0.0)
            data.loc[data[raw].isna(), cut] = np.nan
    metrics = [m for m in CORRELATION_METRICS if m in data.columns and data[m].notna().any()]
    table = data.groupby(list(by), observed=True)[metrics].mean().mul(100).reset_index()
    return table.rename(columns=CORRELATION_METRICS)


MIN_CORRELATION_GROUPS = 3
"""Over 2 groups any two metrics correlate perfectly (r = ±1), over 1 r is undefined: fewer is refused."""
CORRELATION_METHODS = ("pearson", "spearman")


@dataclass(frozen=True)
class Correlation:
    """A correlation matrix (``frame``: long ``metric_a, metric_b, r, n``) over ``n_groups``
    groups that have every metric, or None with the ``reason`` it was refused. ``constant``:
    metrics left out because they do not vary across the groups (their r is undefined)."""

    frame: pd.DataFrame | None
    reason: str | None
    n_groups: int
    constant: tuple[str, ...] = ()


def correlate(
    table: pd.DataFrame,
    metrics: Sequence[str],
    method: str = "pearson",
    min_groups: int = MIN_CORRELATION_GROUPS,
) -> Correlation:
    """Correlation of ``metrics`` over the rows of ``table`` (groups) that have every metric.

    Refused (``frame`` None, ``reason`` says why) with fewer than ``min_groups`` (at least 3)
    complete groups or fewer than 2 metrics that vary across them: a correlation over 2
    groups prints r = 1.000 whatever the metrics are.
    """
    if method not in CORRELATION_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {list(CORRELATION_METHODS)}")
    min_groups = max(int(min_groups), MIN_CORRELATION_GROUPS)
    data = table[list(metrics)].astype(float).dropna()
    n_groups = len(data)
    if len(metrics) < 2:
        return Correlation(None, f"A correlation needs at least 2 metrics; there are {len(metrics)}.", n_groups)
    if n_groups < min_groups:
        without = len(table) - n_groups
        left_out = f" ({without} more lack a metric, e.g. people have no BLEU)" if without else ""
        return Correlation(None, (
            f"A correlation needs at least {min_groups} groups with every metric; there "
            f"{'is' if n_groups == 1 else 'are'} {n_groups}{left_out}. Over 2 groups r is always ±1 and over "
            "1 it is undefined, so none is shown: group by more dimensions or widen the filters."), n_groups)
    spread = data.max() - data.min()
    constant = tuple(m for m in metrics if spread[m] == 0)
    varying = [m for m in metrics if m not in constant]
    if len(varying) < 2:
        return Correlation(None, (
            f"A correlation needs at least 2 metrics that vary across the groups; "
            f"{', '.join(constant)} {'is' if len(constant) == 1 else 'are'} the same in all {n_groups}."),
            n_groups, constant)
    corr = data[varying].corr(method=method)
    long = corr.stack(future_stack=True).reset_index()
    long.columns = ["metric_a", "metric_b", "r"]
    long["n"] = n_groups
    return Correlation(long, None, n_groups, constant)


def correlation_frame(table: pd.DataFrame, metrics: Sequence[str], method: str = "pearson") -> pd.DataFrame | None:
    """Long ``metric_a, metric_b, r, n`` over the rows of ``table`` (groups with every metric),
    or None when :func:`correlate` refuses (it says why)."""
    return correlate(table, metrics, method).frame


ITEM_KEYS = ("sample_id", "prompt", "model")
"""The columns that name one model's result on one item."""


def item_means(frame: pd.DataFrame, models: Sequence[str], columns: Sequence[str] = ITEM_KEYS) -> pd.DataFrame:
    """The rows of ``models`` with one value per (model, sample, prompt): a pool of people
    (``human``) answers an item several times, and its mean on the item is what gets paired.
    ``columns``: those kept of such rows (:data:`ITEM_KEYS` and what the item's rows share,
    such as its strata), those absent from ``frame`` aside."""
    part = frame[frame["model"].isin(list(models))]
    keys = [c for c in dict.fromkeys([*ITEM_KEYS, *columns]) if c in part.columns]
    if not part.duplicated(["model", "sample_id", "prompt"]).any():
        return part
    return part.groupby(keys, observed=True, dropna=False, sort=False)["value"].mean().reset_index()


def shared_rows(frame: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """The rows of both models on the (sample, prompt) pairs both answered: what a paired
    comparison's cell is made of, for its drill-down."""
    keys = ["sample_id", "prompt"]
    a = frame.loc[frame["model"] == model_a, keys].drop_duplicates()
    b = frame.loc[frame["model"] == model_b, keys].drop_duplicates()
    both = a.merge(b, on=keys)
    part = frame[frame["model"].isin([model_a, model_b])]
    return part.merge(both, on=keys, how="inner")


def paired_frame(
    frame: pd.DataFrame,
    model_a: str,
    model_b: str,
    row: str,
    col: str,
    n_boot: int = DEFAULT_N_BOOT,
    n_perm: int = 2000,
    seed: int = 0,
    alpha: float = SIGNIFICANCE,
    item_columns: Sequence[str] = ITEM_KEYS,
) -> pd.DataFrame:
    """Paired difference a - b (points) per (row, col) cell on the samples both answered
    (same sample and prompt), with its 95 % interval, p-value (sign-flip test) and
    ``significant`` (p < ``alpha``, no correction for the number of cells). ``item_columns``: as
    :func:`item_means`' ``columns`` (the cell's dimensions are always kept)."""
    if row == col:
        raise ValueError("choose different dimensions for rows and columns")
    by = [d for d in (row, col) if d != "model"]
    items = item_means(frame, (model_a, model_b), [*item_columns, *by])
    cells = aggregate.paired_compare(items, model_a, model_b, by=by, value="value",
                                     n_boot=n_boot, n_perm=n_perm, seed=seed)
    for axis, name in (("row", row), ("col", col)):
        cells[f"{axis}_label"] = f"{model_a} - {model_b}" if name == "model" else _labels(cells[name])
    cells["significant"] = cells["p_value"] < alpha
    cells["mark"] = np.where(cells["significant"], "*", "")
    for axis in ("row", "col"):
        means = cells.groupby(f"{axis}_label")["diff"].mean().sort_values(ascending=False, kind="stable")
        ranks = {k: i for i, k in enumerate(means.index)}
        cells[f"{axis}_rank"] = cells[f"{axis}_label"].map(ranks).astype(int)
    return cells
