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


#: The tables in the order the page offers them (the main results first).
TABLES: dict[str, PaperTable] = {
    "table3": PaperTable("table3", "table3_main.csv", "Table 3: main results",
                         "Accuracy (%) per level (C component, T topology, P phase, S semantics), aesthetics "
                         "(A, UniPercept) and overall (O, the mean of the five)."),
    "table2": PaperTable("table2", "table2_aesthetic_metrics.csv", "Table 2: aesthetic metrics and the human rank",
                         "Five aesthetic metrics of five systems beside the human experts' rank (1 = best)."),
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


#: Exact permutation distributions are enumerated up to this many ranked systems (8! = 40,320).
MAX_EXACT_SYSTEMS = 8


def _ranks_descending(values: list[float]) -> list[float]:
    """Rank 1 for the largest value; ties share their mean rank."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rho of two rankings (Pearson's r of the ranks)."""
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    return cov / (va * vb) ** 0.5


def kendall(a: list[float], b: list[float]) -> float:
    """Kendall's tau-b of two rankings."""
    concordant = discordant = ties_a = ties_b = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            da, db = a[i] - a[j], b[i] - b[j]
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif da * db > 0:
                concordant += 1
            else:
                discordant += 1
    denominator = ((concordant + discordant + ties_a) * (concordant + discordant + ties_b)) ** 0.5
    return (concordant - discordant) / denominator if denominator else float("nan")


def exact_rank_test(metric_ranks: list[float], human_ranks: list[float]) -> tuple[float, float, tuple[float, ...]]:
    """(one-sided p of rho, of tau, the values rho can take), all over the n! orderings of the
    metric's ranks: the uncertainty a correlation of so few systems carries."""
    import itertools
    n = len(metric_ranks)
    if n > MAX_EXACT_SYSTEMS:
        raise ValueError(f"{n} systems; the exact distribution is enumerated for at most {MAX_EXACT_SYSTEMS}")
    rho, tau = spearman(metric_ranks, human_ranks), kendall(metric_ranks, human_ranks)
    rhos, taus = [], []
    for perm in itertools.permutations(metric_ranks):
        rhos.append(round(spearman(list(perm), human_ranks), 12))
        taus.append(round(kendall(list(perm), human_ranks), 12))
    p_rho = sum(r >= round(rho, 12) for r in rhos) / len(rhos)
    p_tau = sum(t >= round(tau, 12) for t in taus) / len(taus)
    return p_rho, p_tau, tuple(sorted(set(rhos)))


def metric_rank_correlations(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 2's metrics against the human rank: Spearman's rho, Kendall's tau, their exact
    one-sided p (all orderings of the systems), n, and how many values rho can take with n
    systems (with 5 there are 21: 0.9 and 1.0 are neighbours)."""
    table = load_table("table2") if table is None else table
    human = [float(v) for v in table["human rank"]]
    rows = []
    for metric in AESTHETIC_METRICS:
        ranks = _ranks_descending([float(v) for v in table[metric]])
        p_rho, p_tau, values = exact_rank_test(ranks, human)
        # ranks: 1 = best for both, so agreement is a positive correlation
        rows.append({"metric": metric, "spearman_rho": spearman(ranks, human), "kendall_tau": kendall(ranks, human),
                     "p_rho_exact": p_rho, "p_tau_exact": p_tau, "n": len(human), "rho_values": len(values)})
    return pd.DataFrame(rows)
