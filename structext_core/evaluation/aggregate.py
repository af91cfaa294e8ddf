"""Aggregating scored results: group means with bootstrap confidence intervals, and paired
comparisons of two models.

Everything is vectorised with numpy: the bootstrap draws all resamples of all groups at once
(in memory-bounded chunks of resamples), so 100,000 rows with 1,000 resamples take well under
a second. Randomness comes from a ``numpy.random.Generator`` seeded by the caller, never
from global state: the same data and seed give the same intervals.

A caller may name a column by another name: ``aliases`` maps a name of ``by`` to the column
holding its values when the frame has no column of that name (the copy is named as ``by`` says).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Bound on the number of random draws held in memory at once (8 bytes each).
_CHUNK_ELEMENTS = 4_000_000


def _resolve_columns(df: pd.DataFrame, by: Sequence[str],
                     aliases: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Return a frame in which every name of ``by`` is a column (``aliases``: name -> the column
    copied in under that name when the frame has none of it)."""
    by = list(by)
    aliases = aliases or {}
    missing = [c for c in by if c not in df.columns and aliases.get(c) not in df.columns]
    if missing:
        raise KeyError(f"no column {missing!r} in the results (columns: {list(df.columns)})")
    copied = {c: aliases[c] for c in by if c not in df.columns}
    if copied:
        df = df.assign(**{alias: df[source] for alias, source in copied.items()})
    return df, by


@dataclass(frozen=True)
class _Groups:
    """Rows sorted so that each group is contiguous: values[starts[g]:starts[g] + sizes[g]]."""

    keys: pd.DataFrame
    values: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray


def _contiguous_groups(df: pd.DataFrame, by: list[str], value: str) -> _Groups:
    frame = df[[*by, value]].copy()
    frame[value] = pd.to_numeric(frame[value], errors="raise").astype(float)
    frame = frame[frame[value].notna()]
    if not by:
        n_groups = 1 if len(frame) else 0
        keys = pd.DataFrame(index=range(n_groups))
        codes = np.zeros(len(frame), dtype=np.int64)
    else:
        grouped = frame.groupby(by, sort=True, dropna=False, observed=True)
        codes = grouped.ngroup().to_numpy()
        keys = grouped.size().reset_index()[by]
        n_groups = len(keys)
    order = np.argsort(codes, kind="stable")
    values = frame[value].to_numpy()[order]
    sizes = np.bincount(codes, minlength=n_groups).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if n_groups else sizes
    return _Groups(keys=keys.reset_index(drop=True), values=values, starts=starts, sizes=sizes)


def bootstrap_group_means(
    values: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Bootstrap means of contiguous groups: an array of shape (n_boot, n_groups).

    Group ``g`` is ``values[starts[g]:starts[g] + sizes[g]]`` (every size at least 1). Each
    resample draws ``sizes[g]`` values of group ``g`` uniformly with replacement.
    """
    n_rows = len(values)
    n_groups = len(sizes)
    if n_groups == 0 or n_boot <= 0:
        return np.empty((max(n_boot, 0), n_groups))
    row_start = np.repeat(starts, sizes).astype(np.float64)
    row_size = np.repeat(sizes, sizes).astype(np.float64)
    row_last = np.repeat(starts + sizes - 1, sizes)
    sums = np.empty((n_boot, n_groups))
    chunk = max(1, _CHUNK_ELEMENTS // max(n_rows, 1))
    for first in range(0, n_boot, chunk):
        count = min(chunk, n_boot - first)
        position = rng.random((count, n_rows))
        position *= row_size
        position += row_start
        index = position.astype(np.int64)
        # u * n can round up to n for u just below 1: keep every draw inside its group.
        np.minimum(index, row_last, out=index)
        sums[first:first + count] = np.add.reduceat(values[index], starts, axis=1)
    return sums / sizes


def aggregate(
    df: pd.DataFrame,
    by: Sequence[str],
    value: str = "score",
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    aliases: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Mean of ``value`` per group with n and a percentile bootstrap confidence interval.

    Returns one row per group, sorted by ``by``, with columns ``by + [mean, n, ci_low,
    ci_high]``; the mean and its interval are in the unit of ``value`` (scores in [0, 1]
    stay in [0, 1]). Missing values (NaN) are left out of a group and of its n. ``by`` may
    be empty for one overall row. Which score a view shows is the explicit ``value``:
    ``score`` (thresholded ROUGE-L on the extracted answer), ``score_full``, ``rouge_l``,
    ``exact_match``, ``bleu``... ``aliases``: other names of columns ``by`` may use (see the module).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    df, by = _resolve_columns(df, by, aliases)
    if value not in df.columns:
        raise KeyError(f"no column {value!r} in the results")
    groups = _contiguous_groups(df, by, value)
    sums = np.add.reduceat(groups.values, groups.starts) if len(groups.sizes) else np.empty(0)
    means = sums / groups.sizes if len(groups.sizes) else sums
    boot = bootstrap_group_means(groups.values, groups.starts, groups.sizes, n_boot, np.random.default_rng(seed))
    alpha = (1 - confidence) / 2
    if n_boot > 0 and len(groups.sizes):
        low, high = np.quantile(boot, [alpha, 1 - alpha], axis=0)
    else:
        low = high = np.full(len(groups.sizes), np.nan)
    out = groups.keys.copy()
    out["mean"] = means
    out["n"] = groups.sizes
    out["ci_low"] = low
    out["ci_high"] = high
    return out


# ---------------------------------------------------------------- paired comparison

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            return h
    raise ArithmeticError("incomplete beta continued fraction did not converge")  # pragma: no cover


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must lie in [0, 1], got {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value P(|T| >= |t|) of Student's t distribution with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if math.isinf(t):
        return 0.0
    return regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def paired_t_test(differences: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test (H0: mean difference 0)."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n < 2:
        return float("nan")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    return student_t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1)


_EXACT_SIGN_FLIP_MAX_N = 16


def sign_flip_test(differences: np.ndarray, n_perm: int = 10_000, rng: np.random.Generator | None = None) -> float:
    """Two-sided p-value of the paired sign-flip permutation test (H0: differences symmetric about 0).

    Under H0 each difference is as likely to carry either sign. The statistic is |mean|.
    Up to 16 pairs every one of the 2**n sign patterns is enumerated (exact p-value);
    beyond, ``n_perm`` random patterns are drawn and p = (1 + hits) / (1 + n_perm).
    """
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n == 0:
        return float("nan")
    observed = abs(d.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if n <= _EXACT_SIGN_FLIP_MAX_N:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        stats = np.abs(patterns @ d)
        return float(np.mean(stats >= observed - tolerance))
    rng = rng if rng is not None else np.random.default_rng(0)
    hits = 0
    chunk = max(1, _CHUNK_ELEMENTS // n)
    for first in range(0, n_perm, chunk):
        count = min(chunk, n_perm - first)
        signs = rng.integers(0, 2, size=(count, n), dtype=np.int8) * 2.0 - 1.0
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - tolerance))
    return (1 + hits) / (1 + n_perm)


def pair_results(
    df: pd.DataFrame,
    model_a: str,
    model_b: str,
    value: str = "score",
    pair_on: Sequence[str] = ("sample_id", "prompt"),
) -> pd.DataFrame:
    """The rows both models answered, side by side: ``pair_on`` + other shared keys +
    ``value_a``, ``value_b``, ``diff`` (a minus b).

    Raises ValueError when a model has two rows for the same pair key.
    """
    pair_on = [c for c in pair_on if c in df.columns]
    if "sample_id" not in pair_on:
        raise KeyError("paired comparison needs a sample_id column")
    rows = {}
    for name in (model_a, model_b):
        part = df[(df["model"] == name) & df[value].notna()]
        duplicated = part.duplicated(pair_on, keep=False)
        if duplicated.any():
            example = part.loc[duplicated, pair_on].iloc[0].to_dict()
            raise ValueError(f"model {name!r} has several results for {example}")
        rows[name] = part
    a = rows[model_a].drop(columns=["model"])
    b = rows[model_b][[*pair_on, value]]
    paired = a.merge(b, on=pair_on, suffixes=("_a", "_b"), how="inner")
    paired["diff"] = paired[f"{value}_a"] - paired[f"{value}_b"]
    return paired


def paired_compare(
    df: pd.DataFrame,
    model_a: str,
    model_b: str,
    by: Sequence[str] | None = None,
    value: str = "score",
    n_boot: int = 1000,
    n_perm: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    test: str = "sign-flip",
    pair_on: Sequence[str] = ("sample_id", "prompt"),
    aliases: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Compare two models on the samples both answered (same ``sample_id`` and prompt).

    One row per group of ``by`` (one overall row when None) with ``n`` (pairs), ``mean_a``,
    ``mean_b``, ``diff`` (mean of a minus b), ``ci_low``/``ci_high`` (percentile bootstrap of
    the mean difference over pairs) and ``p_value`` from ``test``: ``"sign-flip"`` (paired
    permutation test, exact up to 16 pairs) or ``"t"`` (paired t-test). ``aliases`` as for
    :func:`aggregate`.
    """
    if test not in ("sign-flip", "t"):
        raise ValueError(f"unknown test {test!r}: use 'sign-flip' or 't'")
    if model_a == model_b:
        raise ValueError("compare two different models")
    df, by = _resolve_columns(df, by or [], aliases)
    paired = pair_results(df, model_a, model_b, value=value, pair_on=pair_on)
    summary = aggregate(paired, by, value="diff", n_boot=n_boot, seed=seed, confidence=confidence)
    means = aggregate(paired, by, value=f"{value}_a", n_boot=0)["mean"].to_numpy()
    means_b = aggregate(paired, by, value=f"{value}_b", n_boot=0)["mean"].to_numpy()
    rng = np.random.default_rng(seed)
    p_values = []
    if by:  # same options and order as aggregate(), so the rows line up with `summary`
        diff_groups = [g["diff"] for _, g in paired.groupby(by, sort=True, dropna=False, observed=True)]
    else:
        diff_groups = [paired["diff"]] if len(paired) else []
    for diffs in diff_groups:
        d = diffs.to_numpy(dtype=float)
        p_values.append(paired_t_test(d) if test == "t" else sign_flip_test(d, n_perm, rng))
    out = summary[by].copy()
    out["n"] = summary["n"]
    out["mean_a"] = means
    out["mean_b"] = means_b
    out["diff"] = summary["mean"]
    out["ci_low"] = summary["ci_low"]
    out["ci_high"] = summary["ci_high"]
    out["p_value"] = p_values
    out.attrs.update(model_a=model_a, model_b=model_b, value=value, test=test)
    return out


SUMMARY_MEANS = ("rouge_l", "exact_match", "bleu", "score_full", "has_marker")
"""The plain means beside ``score`` when it is the strict metric."""
PAPER_SUMMARY_MEANS = ("rouge_l_paper", "score_strict", "exact_match", "bleu", "has_marker")
"""The plain means beside ``score`` when it is the paper's metric: its raw ROUGE-L, and the
strict score under its own name."""


def summarise(
    scored: pd.DataFrame,
    by: Sequence[str] = ("model", "prompt"),
    value: str = "score",
    n_boot: int = 1000,
    seed: int = 0,
    means: Sequence[str] = SUMMARY_MEANS,
    aliases: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The summary of a scored results table: per group, ``n``, ``value`` with its bootstrap
    interval (``ci_low``, ``ci_high``) and the plain means of the other scores present among
    ``means`` (by default ``rouge_l``, ``exact_match``, ``bleu``, ``score_full``,
    ``has_marker``). All in [0, 1]. ``aliases`` as for :func:`aggregate`."""
    table = aggregate(scored, by, value=value, n_boot=n_boot, seed=seed, aliases=aliases).rename(columns={"mean": value})
    others = [c for c in means if c in scored.columns and c != value]
    if others:
        frame, by_columns = _resolve_columns(scored, by, aliases)
        numeric = frame[[*by_columns, *others]].copy()
        for column in others:
            numeric[column] = pd.to_numeric(numeric[column], errors="coerce").astype(float)
        if by_columns:
            means = numeric.groupby(by_columns, sort=True, dropna=False, observed=True)[others].mean().reset_index()
            table = table.merge(means, on=by_columns, how="left")
        else:
            for column in others:
                table[column] = numeric[column].mean()
    return table[[*by, "n", value, "ci_low", "ci_high", *others]]
