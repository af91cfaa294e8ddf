"""Blind pairwise comparisons of systems, aggregated: pure functions, no Streamlit, no database.

A vote is one person's choice between two systems' images of one paper (:class:`Vote`), in
system terms (the page's left/right already undone): ``first``, ``second``, ``tie`` or
``both_bad``.

How votes count (the method, named):

- **Ties** follow the *half a win each* rule (the convention of chess ratings and of Hunter's
  2004 treatment of ties as split outcomes): a tie adds 0.5 to each side's wins in the win
  rate and in the Bradley-Terry fit. It is not the Rao-Kupper or Davidson model (no tie
  parameter is fitted); with few ties the difference is small, and it is what "aggregated win
  rates" in the AIBench paper can mean at most.
- **Both bad** says nothing about which of the two is better, so it is left out of the win
  rates and of the strengths, and reported on its own: each system's share of "both bad"
  verdicts (a system often called bad beside anything is a finding of its own).
- **Bradley-Terry strengths**: P(i beats j) = p_i / (p_i + p_j), fitted by the MM algorithm of
  Hunter (2004, Ann. Statist. 32:384) with a weak symmetric prior: every compared pair gets
  ``prior`` extra comparisons split evenly, so a system that won every comparison keeps a
  finite strength (the unregularised maximum likelihood does not exist then). Strengths are
  reported as log-strengths centred on their mean; the human rank is their order (1 = best).
  The app carries no Bradley-Terry library, hence this implementation; it is tested against the
  closed form for two systems, a direct maximisation of the likelihood with SciPy, and ``choix``
  0.4.1 (a test dependency: the same log-strengths with no prior, the same rank with this prior).
- **Uncertainty**: a seeded bootstrap over votes (resampled with replacement, the whole fit
  repeated): percentile intervals of each log-strength and of each system's rank.
- **Agreement between people**: per-pair agreement (of the people who judged the same pair
  of images, the share of pairs of people who chose the same outcome) and Kendall's W over the
  people who compared every system (each person's own win rates ranked; W is undefined, None,
  with fewer than two such people or fewer than two systems).
- **Consistency**: a pair shown to the same person again with its sides swapped; the share of
  repeats with the same verdict in system terms.
- **Correlation with metrics**: Spearman's rho and Kendall's tau between each metric's order
  and the human rank, the exact one-sided p over all orderings (n <= 8), and a bootstrap
  interval of rho that carries the human rank's own uncertainty.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from structext_core.aibench import paper as aibench_paper

OUTCOMES = ("first", "second", "tie", "both_bad")
DEFAULT_PRIOR = 0.1
DEFAULT_BOOT = 500
MAX_ITERATIONS = 10_000
TOLERANCE = 1e-10


@dataclass(frozen=True)
class Vote:
    """One person's verdict on ``first`` vs ``second`` (two systems' images of paper ``item``)."""

    rater: str
    item: str
    first: str
    second: str
    outcome: str

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome {self.outcome!r} is not one of {', '.join(OUTCOMES)}")
        if self.first == self.second:
            raise ValueError(f"a vote compares two different systems, not {self.first!r} with itself")

    @property
    def key(self) -> tuple[str, str, str]:
        """(item, system, system) with the systems sorted: the same pair whichever side each was on."""
        a, b = sorted((self.first, self.second))
        return self.item, a, b

    @property
    def verdict(self) -> str:
        """The outcome named by system (``"winner:<system>"``, ``tie``, ``both_bad``), side-free."""
        if self.outcome == "first":
            return f"winner:{self.first}"
        if self.outcome == "second":
            return f"winner:{self.second}"
        return self.outcome


def systems_of(votes: Sequence[Vote]) -> list[str]:
    """Every system in ``votes``, sorted."""
    return sorted({s for v in votes for s in (v.first, v.second)})


def win_matrix(votes: Sequence[Vote], systems: Sequence[str]) -> np.ndarray:
    """``W[i, j]`` = wins of system i over system j, a tie counting 0.5 to each; both bad left out."""
    index = {s: i for i, s in enumerate(systems)}
    wins = np.zeros((len(systems), len(systems)))
    for v in votes:
        i, j = index[v.first], index[v.second]
        if v.outcome == "first":
            wins[i, j] += 1
        elif v.outcome == "second":
            wins[j, i] += 1
        elif v.outcome == "tie":
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    return wins


def win_rates(votes: Sequence[Vote]) -> pd.DataFrame:
    """Per system: comparisons, wins, losses, ties, both bad, win rate ((wins + ties / 2) /
    (wins + losses + ties), NaN without such a vote) and the share of its comparisons called both bad."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for v in votes:
        for side, other in ((v.first, "second"), (v.second, "first")):
            c = counts[side]
            c["comparisons"] += 1
            if v.outcome in ("tie", "both_bad"):
                c[v.outcome] += 1
            elif v.outcome == other:
                c["losses"] += 1
            else:
                c["wins"] += 1
    rows = []
    for system in sorted(counts):
        c = counts[system]
        decided = c["wins"] + c["losses"] + c["tie"]
        rows.append({"system": system, "comparisons": c["comparisons"], "wins": c["wins"], "losses": c["losses"],
                     "ties": c["tie"], "both_bad": c["both_bad"],
                     "win_rate": (c["wins"] + 0.5 * c["tie"]) / decided if decided else math.nan,
                     "both_bad_share": c["both_bad"] / c["comparisons"] if c["comparisons"] else math.nan})
    columns = ["system", "comparisons", "wins", "losses", "ties", "both_bad", "win_rate", "both_bad_share"]
    return pd.DataFrame(rows, columns=columns)


def bradley_terry(wins: np.ndarray, prior: float = DEFAULT_PRIOR) -> np.ndarray:
    """Log-strengths (mean 0) of the Bradley-Terry model for the win matrix ``wins`` by Hunter's
    MM iteration; ``prior`` extra comparisons per compared pair, split evenly. A system never
    compared gets NaN. With ``prior`` 0 the comparison graph must be strongly connected."""
    return bradley_terry_many(np.asarray(wins, dtype=float)[None], prior)[0]


def bradley_terry_many(wins: np.ndarray, prior: float = DEFAULT_PRIOR) -> np.ndarray:
    """:func:`bradley_terry` of each win matrix of the stack ``wins`` (fits, systems, systems), all
    iterated at once (a bootstrap's hundreds of fits in one array: the MM iteration may need
    hundreds of steps on sparse votes, and one step for each fit apart costs as much as one for
    all). Each fit stops when its own change is below the tolerance, as it would alone; the
    systems a fit never saw compared are left out of it and get NaN."""
    wins = np.asarray(wins, dtype=float)
    games = wins + wins.transpose(0, 2, 1)
    compared = games > 0
    if prior > 0:
        wins = wins + np.where(compared, prior / 2, 0.0)
        games = wins + wins.transpose(0, 2, 1)
    present = compared.any(axis=2)
    count = np.maximum(present.sum(axis=1), 1)
    total_wins = wins.sum(axis=2)
    p = np.ones(present.shape)
    running = present.any(axis=1)
    for _ in range(MAX_ITERATIONS):
        if not running.any():
            break
        denominator = (games / (p[:, :, None] + p[:, None, :])).sum(axis=2)
        new = np.where(denominator > 0, total_wins / np.where(denominator > 0, denominator, 1), p)
        new = np.where(present, np.maximum(new, 1e-300), 1.0)
        new = new / np.exp(np.where(present, np.log(new), 0.0).sum(axis=1) / count)[:, None]
        change = np.where(present, np.abs(np.log(new) - np.log(p)), 0.0).max(axis=1)
        p = np.where(running[:, None], new, p)
        running &= ~(change < TOLERANCE)
    logs = np.log(p)
    mean = np.where(present, logs, 0.0).sum(axis=1) / count
    return np.where(present, logs - mean[:, None], math.nan)


def ranks_of(strengths: Sequence[float]) -> list[float]:
    """Rank 1 for the strongest; equal strengths share their mean rank; NaN stays NaN (last)."""
    ranks = aibench_paper._ranks_descending([-math.inf if math.isnan(s) else float(s) for s in strengths])
    return [math.nan if math.isnan(s) else r for s, r in zip(strengths, ranks)]


@dataclass(frozen=True)
class Ranking:
    """The human rank with its uncertainty."""

    table: pd.DataFrame  # system, comparisons, wins, ..., strength, low, high, rank, rank_low, rank_high
    boot_strengths: np.ndarray  # (n_boot, systems): the bootstrap fits, for correlations' intervals
    systems: tuple[str, ...]
    votes: int
    n_boot: int
    seed: int


def human_ranking(votes: Sequence[Vote], *, prior: float = DEFAULT_PRIOR, n_boot: int = DEFAULT_BOOT,
                  seed: int = 0) -> Ranking:
    """Win rates, Bradley-Terry strengths with 95% bootstrap intervals (seeded) and the rank
    (1 = best) with its 95% interval, one row per system, strongest first."""
    systems = systems_of(votes)
    rates = win_rates(votes).set_index("system").reindex(systems)
    strengths = bradley_terry(win_matrix(votes, systems), prior)
    rng = np.random.default_rng(seed)
    votes = list(votes)
    samples = np.zeros((n_boot, len(systems), len(systems)))
    for b in range(n_boot):
        sample = [votes[k] for k in rng.integers(0, len(votes), len(votes))] if votes else []
        samples[b] = win_matrix(sample, systems)
    boot = bradley_terry_many(samples, prior) if n_boot else np.full((0, len(systems)), math.nan)
    table = rates.reset_index()
    table["strength"] = strengths
    with np.errstate(all="ignore"):
        table["low"] = np.nanpercentile(boot, 2.5, axis=0) if n_boot else math.nan
        table["high"] = np.nanpercentile(boot, 97.5, axis=0) if n_boot else math.nan
        boot_ranks = np.array([ranks_of(list(row)) for row in boot]) if n_boot else np.empty((0, len(systems)))
        table["rank"] = ranks_of(list(strengths))
        table["rank_low"] = np.nanpercentile(boot_ranks, 2.5, axis=0) if n_boot else math.nan
        table["rank_high"] = np.nanpercentile(boot_ranks, 97.5, axis=0) if n_boot else math.nan
    table = table.sort_values(["rank", "system"]).reset_index(drop=True)
    order = [systems.index(s) for s in table["system"]]
    return Ranking(table, boot[:, order], tuple(table["system"]), len(votes), n_boot, seed)


# ---------------------------------------------------------------- agreement and consistency

def pair_agreement(votes: Sequence[Vote]) -> dict:
    """Of the pairs of images judged by two or more people (first votes only): how many, and the
    share of pairs of people who gave the same verdict (NaN without such a pair)."""
    by_pair: dict[tuple, dict[str, str]] = defaultdict(dict)
    for v in votes:
        by_pair[v.key].setdefault(v.rater, v.verdict)
    agree = total = pairs = 0
    for verdicts in by_pair.values():
        values = list(verdicts.values())
        if len(values) < 2:
            continue
        pairs += 1
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                total += 1
                agree += values[i] == values[j]
    return {"pairs": pairs, "rater_pairs": total, "agreement": agree / total if total else math.nan}


def kendall_w(votes: Sequence[Vote]) -> dict:
    """Kendall's W (with the tie correction) over the people who compared every system, each
    person's systems ranked by their own win rate; ``w`` None where undefined."""
    systems = systems_of(votes)
    by_rater: dict[str, list[Vote]] = defaultdict(list)
    for v in votes:
        by_rater[v.rater].append(v)
    rankings = []
    for rater_votes in by_rater.values():
        rates = win_rates(rater_votes).set_index("system")["win_rate"].reindex(systems)
        if rates.isna().any():
            continue
        rankings.append(ranks_of(list(rates)))
    m, n = len(rankings), len(systems)
    if m < 2 or n < 2:
        return {"w": None, "raters": m, "systems": n}
    ranks = np.array(rankings)
    totals = ranks.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    ties = 0.0
    for row in rankings:
        for count in Counter(row).values():
            ties += count ** 3 - count
    denominator = m * m * (n ** 3 - n) - m * ties
    return {"w": s * 12 / denominator if denominator > 0 else None, "raters": m, "systems": n}


def swap_consistency(votes: Sequence[Vote]) -> dict:
    """Of the pairs a person judged twice (the repeat with the sides swapped): how many, and the
    share with the same verdict in system terms."""
    seen: dict[tuple, list[str]] = defaultdict(list)
    for v in votes:
        seen[(v.rater, *v.key)].append(v.verdict)
    repeats = [verdicts for verdicts in seen.values() if len(verdicts) >= 2]
    same = sum(verdicts[0] == verdicts[1] for verdicts in repeats)
    return {"repeats": len(repeats), "consistency": same / len(repeats) if repeats else math.nan}


def first_votes(votes: Sequence[Vote]) -> list[Vote]:
    """Each person's first vote on each pair (the swapped repeats checked by
    :func:`swap_consistency` are not counted twice in the ranking)."""
    seen, out = set(), []
    for v in votes:
        key = (v.rater, *v.key)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


# ---------------------------------------------------------------- metrics against the human rank

def _spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rho, NaN when either ranking is constant (all tied: no order to correlate)."""
    return math.nan if len(set(a)) < 2 or len(set(b)) < 2 else aibench_paper.spearman(a, b)


def _kendall(a: list[float], b: list[float]) -> float:
    return math.nan if len(set(a)) < 2 or len(set(b)) < 2 else aibench_paper.kendall(a, b)


def correlation_with_rank(ranking: Ranking, metrics: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """For each metric (``{name: {system: value}}``, higher is better): n systems, Spearman's rho
    and Kendall's tau with the human rank, the exact one-sided p of each (n from 3 to 8), and the
    95% bootstrap interval of rho (the metric fixed, the human rank from each bootstrap fit)."""
    rows = []
    for name, values in metrics.items():
        systems = [s for s in ranking.systems if s in values and values[s] is not None
                   and not math.isnan(float(values[s]))]
        n = len(systems)
        row = {"metric": name, "n": n, "spearman_rho": math.nan, "kendall_tau": math.nan,
               "p_rho_exact": math.nan, "p_tau_exact": math.nan, "rho_low": math.nan, "rho_high": math.nan}
        if n >= 3:
            human = list(ranking.table.set_index("system").loc[systems, "rank"])
            metric_ranks = aibench_paper._ranks_descending([float(values[s]) for s in systems])
            row["spearman_rho"] = _spearman(metric_ranks, human)
            row["kendall_tau"] = _kendall(metric_ranks, human)
            if n <= aibench_paper.MAX_EXACT_SYSTEMS and not math.isnan(row["spearman_rho"]):
                row["p_rho_exact"], row["p_tau_exact"], _ = aibench_paper.exact_rank_test(metric_ranks, human)
            columns = [ranking.systems.index(s) for s in systems]
            rhos = []
            for fit in ranking.boot_strengths[:, columns]:
                if np.isnan(fit).any():
                    continue
                rho = _spearman(metric_ranks, ranks_of(list(fit)))
                if not math.isnan(rho):
                    rhos.append(rho)
            if rhos:
                row["rho_low"], row["rho_high"] = float(np.percentile(rhos, 2.5)), float(np.percentile(rhos, 97.5))
        rows.append(row)
    return pd.DataFrame(rows, columns=["metric", "n", "spearman_rho", "kendall_tau", "p_rho_exact", "p_tau_exact",
                                       "rho_low", "rho_high"])


def table2(ranking: Ranking, metric_means: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """The paper's Table 2 from our data: one row per ranked system, each aesthetic metric's mean
    over the system's images, and the human rank (1 = best) with its interval."""
    rows = []
    for r in ranking.table.itertuples():
        row = {"system": r.system}
        for metric, values in metric_means.items():
            row[metric] = values.get(r.system, math.nan)
        row["human rank"] = r.rank
        row["rank 95% interval"] = f"{r.rank_low:g}-{r.rank_high:g}" if not math.isnan(r.rank_low) else ""
        rows.append(row)
    return pd.DataFrame(rows)


def fig6b(ranking: Ranking, judges: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """The paper's Fig. 6b as a table: each judge's (AIBench's overall, a metric, ...) Spearman
    rho with the human rank and its interval; the paper's values beside where it printed one."""
    frame = correlation_with_rank(ranking, judges)
    printed = {"AIBench": 0.886, "VLM direct score": 0.600, "VLM arena": 0.714}
    frame["paper_rho"] = [printed.get(m, math.nan) for m in frame["metric"]]
    return frame


# ---------------------------------------------------------------- simulated voters (known truth)

def simulate_votes(strengths: Mapping[str, float], n_votes: int, *, raters: int = 10, papers: int = 20,
                   tie_share: float = 0.1, both_bad_share: float = 0.05, seed: int = 0) -> list[Vote]:
    """Votes of simulated people under the Bradley-Terry model with hidden log-strengths: each vote
    a random pair on a random paper, by a random person; with ``tie_share`` a tie, ``both_bad_share``
    both bad, else the winner drawn with P = p_i / (p_i + p_j) (the noise)."""
    rng = random.Random(seed)
    names = sorted(strengths)
    out = []
    for _ in range(n_votes):
        a, b = rng.sample(names, 2)
        draw = rng.random()
        if draw < both_bad_share:
            outcome = "both_bad"
        elif draw < both_bad_share + tie_share:
            outcome = "tie"
        else:
            p_first = 1 / (1 + math.exp(strengths[b] - strengths[a]))
            outcome = "first" if rng.random() < p_first else "second"
        out.append(Vote(f"rater{rng.randrange(raters)}", f"paper{rng.randrange(papers)}", a, b, outcome))
    return out


def tau_with_truth(ranking: Ranking, strengths: Mapping[str, float]) -> float:
    """Kendall's tau-b between the recovered rank and the hidden strengths' order."""
    systems = list(ranking.systems)
    truth = aibench_paper._ranks_descending([strengths[s] for s in systems])
    return _kendall(list(ranking.table["rank"]), truth)
