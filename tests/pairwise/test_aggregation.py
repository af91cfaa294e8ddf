"""The pairwise aggregation against known solutions and simulated voters with hidden strengths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from structext_core.aibench.pairwise import ranking as pw
from structext_core.aibench.pairwise.ranking import Vote


def _v(first, second, outcome, rater="r1", item="p1"):
    return Vote(rater, item, first, second, outcome)


def test_two_systems_closed_form():
    # A beats B 3 times of 4: p_A / (p_A + p_B) = 3/4, so log p_A - log p_B = ln 3 exactly.
    wins = np.array([[0, 3], [1, 0]], dtype=float)
    strengths = pw.bradley_terry(wins, prior=0)
    assert strengths[0] - strengths[1] == pytest.approx(math.log(3), abs=1e-7)
    assert strengths.sum() == pytest.approx(0, abs=1e-9)


def test_matches_direct_maximum_likelihood():
    rng = np.random.default_rng(3)
    wins = rng.integers(1, 9, size=(5, 5)).astype(float)
    np.fill_diagonal(wins, 0)

    def negative_log_likelihood(theta):
        theta = np.concatenate([[0.0], theta])
        diff = theta[:, None] - theta[None, :]
        return float(-(wins * (diff - np.logaddexp(0, diff))).sum())

    fit = minimize(negative_log_likelihood, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    expected = np.concatenate([[0.0], fit.x])
    expected -= expected.mean()
    assert pw.bradley_terry(wins, prior=0) == pytest.approx(expected, abs=1e-5)


def test_a_perfect_winner_stays_finite_with_the_prior():
    wins = np.array([[0, 5, 5], [0, 0, 3], [0, 2, 0]], dtype=float)
    strengths = pw.bradley_terry(wins)
    assert np.isfinite(strengths).all()
    assert strengths[0] > strengths[1] > strengths[2]


def test_ties_are_half_a_win_and_both_bad_is_left_out():
    votes = [_v("A", "B", "first"), _v("A", "B", "tie"), _v("B", "A", "both_bad"), _v("B", "A", "first")]
    rates = pw.win_rates(votes).set_index("system")
    assert rates.loc["A", "wins"] == 1 and rates.loc["A", "losses"] == 1 and rates.loc["A", "ties"] == 1
    assert rates.loc["A", "win_rate"] == pytest.approx(0.5)
    assert rates.loc["A", "both_bad_share"] == pytest.approx(0.25)
    wins = pw.win_matrix(votes, ["A", "B"])
    assert wins.tolist() == [[1.5, 0], [0, 1.5]] or wins.tolist() == [[0, 1.5], [1.5, 0]]
    only_bad = [_v("A", "B", "both_bad")]
    assert math.isnan(pw.win_rates(only_bad).loc[0, "win_rate"])


def test_a_bad_outcome_is_refused():
    with pytest.raises(ValueError, match="outcome"):
        Vote("r", "p", "A", "B", "left")
    with pytest.raises(ValueError, match="two different"):
        Vote("r", "p", "A", "A", "tie")


def test_agreement_consistency_and_kendall_w():
    votes = [_v("A", "B", "first", "r1"), _v("B", "A", "second", "r2"),  # same verdict: A wins
             _v("A", "C", "first", "r1"), _v("A", "C", "second", "r2"),  # disagree
             _v("B", "C", "first", "r1"), _v("B", "C", "first", "r2"),
             _v("B", "A", "second", "r1")]  # r1's repeat with sides swapped, same verdict
    agreement = pw.pair_agreement(votes)
    assert agreement["pairs"] == 3 and agreement["rater_pairs"] == 3
    assert agreement["agreement"] == pytest.approx(2 / 3)
    assert pw.swap_consistency(votes) == {"repeats": 1, "consistency": 1.0}
    assert len(pw.first_votes(votes)) == 6
    w = pw.kendall_w(pw.first_votes(votes))
    # r1: A > B > C; r2: B and C win one each, A one: all tied -> some agreement, W in (0, 1)
    assert w["raters"] == 2 and 0 <= w["w"] <= 1
    identical = [_v("A", "B", "first", r) for r in ("r1", "r2", "r3")] + \
                [_v("B", "C", "first", r) for r in ("r1", "r2", "r3")] + \
                [_v("A", "C", "first", r) for r in ("r1", "r2", "r3")]
    assert pw.kendall_w(identical)["w"] == pytest.approx(1.0)
    assert pw.kendall_w([_v("A", "B", "first")])["w"] is None


TRUTH = {"S1": 1.2, "S2": 0.8, "S3": 0.4, "S4": 0.0, "S5": -0.4, "S6": -0.9}


def test_ranking_recovers_hidden_order_as_votes_grow(capsys):
    """Simulated voters with hidden strengths and noise (BT draws, 10% ties, 5% both bad): the
    mean Kendall tau with the truth over 20 seeded replications rises with the number of votes."""
    taus = {}
    for n in (50, 200, 1000):
        values = [pw.tau_with_truth(pw.human_ranking(pw.simulate_votes(TRUTH, n, seed=s), n_boot=0), TRUTH)
                  for s in range(20)]
        taus[n] = float(np.mean(values))
    with capsys.disabled():
        print("\nKendall tau with the hidden order (mean of 20 seeds): "
              + ", ".join(f"{n} votes {t:.3f}" for n, t in taus.items()))
    assert taus[50] < taus[200] < taus[1000]
    assert taus[1000] >= 0.85
    assert taus[50] > 0.3  # far better than chance (0) even with 50 votes


def test_bootstrap_intervals_cover_and_shrink():
    few = pw.human_ranking(pw.simulate_votes(TRUTH, 100, seed=1), n_boot=200, seed=4)
    many = pw.human_ranking(pw.simulate_votes(TRUTH, 2000, seed=1), n_boot=200, seed=4)
    width = lambda r: float((r.table["high"] - r.table["low"]).mean())  # noqa: E731
    assert width(many) < width(few) / 2
    assert (many.table["low"] <= many.table["strength"]).all() and (many.table["strength"] <= many.table["high"]).all()
    again = pw.human_ranking(pw.simulate_votes(TRUTH, 100, seed=1), n_boot=200, seed=4)
    assert again.table.equals(few.table)  # seeded: the same intervals


def test_correlation_with_metrics_and_tables():
    ranking = pw.human_ranking(pw.simulate_votes(TRUTH, 3000, seed=2), n_boot=100, seed=0)
    good = dict(TRUTH)
    reversed_metric = {s: -v for s, v in TRUTH.items()}
    frame = pw.correlation_with_rank(ranking, {"good": good, "reversed": reversed_metric,
                                               "short": {"S1": 1, "S2": 0}}).set_index("metric")
    assert frame.loc["good", "spearman_rho"] == pytest.approx(1.0)
    assert frame.loc["good", "p_rho_exact"] == pytest.approx(1 / 720)
    assert frame.loc["reversed", "spearman_rho"] == pytest.approx(-1.0)
    assert frame.loc["good", "rho_low"] <= 1.0 and frame.loc["good", "rho_low"] > 0.5
    assert frame.loc["short", "n"] == 2 and math.isnan(frame.loc["short", "spearman_rho"])
    t2 = pw.table2(ranking, {"UniPercept": good})
    assert list(t2["system"]) == ["S1", "S2", "S3", "S4", "S5", "S6"]
    assert list(t2["human rank"]) == [1, 2, 3, 4, 5, 6]
    f6 = pw.fig6b(ranking, {"AIBench": good}).set_index("metric")
    assert f6.loc["AIBench", "paper_rho"] == pytest.approx(0.886)


def test_all_ties_give_no_correlation_rather_than_an_error():
    votes = [_v(a, b, "tie", r) for r in ("r1", "r2") for a, b in (("A", "B"), ("B", "C"), ("A", "C"))]
    ranking = pw.human_ranking(votes, n_boot=20)
    assert list(ranking.table["rank"]) == [2, 2, 2]
    frame = pw.correlation_with_rank(ranking, {"m": {"A": 1, "B": 2, "C": 3}})
    assert math.isnan(frame.loc[0, "spearman_rho"]) and math.isnan(frame.loc[0, "rho_low"])


def test_the_bootstrap_fits_all_at_once_exactly_as_one_by_one():
    """bradley_terry_many (the bootstrap's fits in one array) gives each fit what it gives alone,
    where fits stop after different numbers of steps and a system is missing from some."""
    rng = np.random.default_rng(5)
    stack = rng.integers(0, 3, (40, 5, 5)).astype(float) * (rng.random((40, 5, 5)) < 0.4)
    for k in range(40):
        np.fill_diagonal(stack[k], 0)
    stack[::7, 2, :] = stack[::7, :, 2] = 0  # system 2 never compared in every seventh fit
    stack[3] = 0  # nothing compared at all
    stack[4, 0, 1], stack[4, 1, 0] = 9, 0  # one lopsided pair: many MM steps
    together = pw.bradley_terry_many(stack)
    alone = np.array([pw.bradley_terry(m) for m in stack])
    assert np.array_equal(np.isnan(together), np.isnan(alone)) and np.isnan(together[::7, 2]).all()
    assert np.isnan(together[3]).all()
    assert np.nanmax(np.abs(together - alone)) < 1e-12
