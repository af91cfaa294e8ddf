"""The leaderboard: models and people ranked by their mean with a 95 % interval (Wilson for exact
match, a proportion; percentile bootstrap otherwise), its sorts, and its table for display and CSV.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from structext_core.evaluation import aggregate
from structext_core.views.people_vs_models import is_human, people_without_prompt
from structext_core.views.result_options import DEFAULT_MIN_N, ValueChoice, check_min_n

Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95 % interval."""
LEADERBOARD_N_BOOT = 1000
LEADERBOARD_SORTS = {
    "mean": "mean, best first",
    "ci_low": "lower 95% bound, best first",
    "n": "n, largest first",
    "name": "name",
}


CI_METHODS = {"wilson": "Wilson score", "bootstrap": "percentile bootstrap"}
"""The leaderboard's ``ci95_method`` column: which 95 % interval a row has."""
CI_DESCRIPTIONS = {
    "wilson": "Wilson score interval (exact match is a proportion: right or wrong)",
    "bootstrap": f"percentile bootstrap over responses ({LEADERBOARD_N_BOOT:,} resamples, seed 0)",
}


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (in [0, 1]); (nan, nan) for n = 0.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or n successes.
    """
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n], got {successes} of {n}")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def who_is(model: str) -> str:
    """``model``, ``person`` or ``people (pool)``: what a leaderboard row ranks."""
    if model == "human":
        return "people (pool)"
    return "person" if is_human(model) else "model"


def leaderboard(
    frame: pd.DataFrame,
    choice: ValueChoice,
    by: Sequence[str] = ("model", "prompt"),
    sort: str = "mean",
    min_n: int = DEFAULT_MIN_N,
    n_boot: int = LEADERBOARD_N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per model or person and prompt setting: ``rank`` (by mean, ties share it), ``who``,
    ``mean`` (percent), ``n`` (responses with a value), ``ci_low``, ``ci_high`` (95 %),
    ``ci_method`` and ``below_min`` (n below ``min_n``), sorted as ``sort`` says.

    ``frame`` has a ``value`` column made with ``choice`` (:func:`with_choice`). Exact match is a
    proportion: its interval is Wilson's. Other metrics are means of continuous scores (a
    thresholded ROUGE-L keeps its value above the threshold, so it is no proportion): their
    interval is the percentile bootstrap over responses. Rows without a value (people's BLEU)
    are left out.
    """
    if sort not in LEADERBOARD_SORTS:
        raise ValueError(f"unknown sort {sort!r}; choose one of {list(LEADERBOARD_SORTS)}")
    min_n = check_min_n(min_n)
    by = list(by)
    columns = ["rank", *by, "who", "mean", "n", "ci_low", "ci_high", "ci_method", "below_min"]
    data = frame[frame["value"].notna()]
    if data.empty:
        return pd.DataFrame(columns=columns)
    wilson = choice.metric == "exact_match"
    board = aggregate.aggregate(data, by, value="value", n_boot=0 if wilson else n_boot, seed=seed)
    board["ci_method"] = "bootstrap"
    if wilson:
        counts = data.groupby(by, observed=True, dropna=False, sort=True)["value"].agg(
            successes=lambda v: int((v >= 50).sum()), size="size").reset_index()
        board = board.merge(counts, on=by, how="left")
        bounds = [wilson_interval(int(k), int(n)) for k, n in zip(board["successes"], board["size"])]
        board["ci_low"] = [100 * low for low, _ in bounds]
        board["ci_high"] = [100 * high for _, high in bounds]
        board["ci_method"] = "wilson"
        board = board.drop(columns=["successes", "size"])
    board["who"] = board["model"].astype(str).map(who_is)
    board["rank"] = board["mean"].rank(method="min", ascending=False).astype(int)
    board["below_min"] = False
    return arrange_leaderboard(board[columns], sort, min_n)


def arrange_leaderboard(board: pd.DataFrame, sort: str = "mean", min_n: int = DEFAULT_MIN_N) -> pd.DataFrame:
    """A :func:`leaderboard` sorted again and flagged for another minimum n, without recomputing
    its intervals (the page keeps the computed board and only rearranges it)."""
    if sort not in LEADERBOARD_SORTS:
        raise ValueError(f"unknown sort {sort!r}; choose one of {list(LEADERBOARD_SORTS)}")
    min_n = check_min_n(min_n)
    board = board.copy()
    board["below_min"] = board["n"].astype(int) < min_n
    names = [c for c in board.columns if c not in ("rank", "who", "mean", "n", "ci_low", "ci_high", "ci_method",
                                                   "below_min")]
    if sort == "name":
        board = board.sort_values(names, kind="stable")
    else:
        board = board.sort_values([sort, *names], ascending=[False] + [True] * len(names), kind="stable")
    return board.reset_index(drop=True)


def leaderboard_table(board: pd.DataFrame, choice: ValueChoice) -> pd.DataFrame:
    """The leaderboard for display and CSV: the mean and interval columns name the metric
    (``mean_rouge_l_strict_t0.75``), the interval's method is spelt out, numbers rounded."""
    table = board.copy()
    for column in ("mean", "ci_low", "ci_high"):
        table[column] = table[column].astype(float).round(2)
    table["ci_method"] = table["ci_method"].map(CI_METHODS)
    table = table.rename(columns={
        "mean": choice.file_name("mean"), "ci_low": choice.file_name("ci95_low"),
        "ci_high": choice.file_name("ci95_high"), "ci_method": "ci95_method", "below_min": "below_min_n"})
    return people_without_prompt(table)
