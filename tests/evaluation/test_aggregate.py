"""Aggregation: group means, bootstrap intervals, paired comparison and its tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from structext_core.evaluation import aggregate as agg
from structext_core.evaluation.aggregate import (
    aggregate,
    bootstrap_group_means,
    paired_compare,
    paired_t_test,
    regularized_incomplete_beta,
    sign_flip_test,
    student_t_two_sided_p,
    summarise,
)
from structext_core.structext_eval import result_files as results


@pytest.fixture
def scored() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 3000
    return pd.DataFrame({
        "sample_id": [f"s{i % 500}" for i in range(n)],
        "model": np.repeat(["m1", "m2", "m3", "m4", "m5", "m6"], 500),
        "prompt": "naive",
        "language": rng.choice(["json", "xml", "csv"], n),
        "task": rng.choice(["PathWalk", "Syntax"], n),
        "depth": rng.integers(1, 4, n),
        "width": rng.integers(1, 4, n),
        "score": np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.75, 1.0, n)),
    })


def test_aggregate_means_and_counts_match_pandas(scored):
    out = aggregate(scored, ["model", "depth"], n_boot=200)
    expected = scored.groupby(["model", "depth"])["score"].agg(["mean", "size"]).reset_index()
    assert list(out.columns) == ["model", "depth", "mean", "n", "ci_low", "ci_high"]
    assert out[["model", "depth"]].values.tolist() == expected[["model", "depth"]].values.tolist()
    np.testing.assert_allclose(out["mean"], expected["mean"], rtol=0, atol=1e-12)
    assert out["n"].tolist() == expected["size"].tolist()
    assert (out["ci_low"] <= out["mean"]).all() and (out["mean"] <= out["ci_high"]).all()


def test_aggregate_overall_row_and_missing_values():
    df = pd.DataFrame({"score": [1.0, 0.0, np.nan, 0.5]})
    out = aggregate(df, [], n_boot=100)
    assert len(out) == 1
    assert out.loc[0, "n"] == 3
    assert out.loc[0, "mean"] == pytest.approx(0.5)


def test_format_is_an_alias_of_language(scored):
    """A caller's alias: StrucText's scored rows keep the format in ``language``."""
    out = aggregate(scored, ["format"], n_boot=50, aliases=results.COLUMN_ALIASES)
    assert list(out.columns[:1]) == ["format"]
    assert sorted(out["format"]) == ["csv", "json", "xml"]
    assert out["n"].sum() == len(scored)
    with pytest.raises(KeyError, match="format"):  # no alias unless the caller gives it
        aggregate(scored, ["format"], n_boot=50)


def test_unknown_column_is_named(scored):
    with pytest.raises(KeyError, match="colour"):
        aggregate(scored, ["colour"])
    with pytest.raises(KeyError, match="accuracy"):
        aggregate(scored, ["model"], value="accuracy")


def test_same_seed_same_interval_and_other_seed_differs(scored):
    a = aggregate(scored, ["model"], n_boot=300, seed=1)
    b = aggregate(scored, ["model"], n_boot=300, seed=1)
    c = aggregate(scored, ["model"], n_boot=300, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["ci_low"], c["ci_low"])


def test_resamples_never_leave_their_group():
    # Group 0 holds only zeros, group 1 only ones, group 2 only twos: any index that strays
    # into a neighbouring group changes a bootstrap mean.
    values = np.array([0.0] * 3 + [1.0] * 7 + [2.0] * 1)
    starts, sizes = np.array([0, 3, 10]), np.array([3, 7, 1])
    boot = bootstrap_group_means(values, starts, sizes, 500, np.random.default_rng(0))
    assert boot.shape == (500, 3)
    assert (boot[:, 0] == 0).all() and (boot[:, 1] == 1).all() and (boot[:, 2] == 2).all()


def test_bootstrap_resamples_with_replacement():
    values = np.arange(10, dtype=float)
    boot = bootstrap_group_means(values, np.array([0]), np.array([10]), 2000, np.random.default_rng(3))
    # With replacement the means spread around 4.5 with sd about sqrt(8.25 / 10) = 0.908.
    assert boot[:, 0].mean() == pytest.approx(4.5, abs=0.06)
    assert boot[:, 0].std() == pytest.approx(math.sqrt(8.25 / 10), rel=0.06)


def test_bootstrap_interval_covers_a_known_mean():
    # 400 independent experiments (groups) of 150 draws from a distribution shaped like
    # thresholded scores: 0 with probability 0.35, else uniform on [0.75, 1]. True mean:
    true_mean = 0.65 * 0.875
    rng = np.random.default_rng(2024)
    groups, size = 400, 150
    values = np.where(rng.random(groups * size) < 0.35, 0.0, rng.uniform(0.75, 1.0, groups * size))
    df = pd.DataFrame({"experiment": np.repeat(np.arange(groups), size), "score": values})
    out = aggregate(df, ["experiment"], n_boot=1000, seed=5)
    coverage = ((out["ci_low"] <= true_mean) & (true_mean <= out["ci_high"])).mean()
    assert 0.91 <= coverage <= 0.985
    # and the interval has the width normal theory predicts: 2 * 1.96 * sd / sqrt(n)
    sd = math.sqrt(0.65 * (0.875**2 + 0.25**2 / 12) - true_mean**2)
    assert (out["ci_high"] - out["ci_low"]).mean() == pytest.approx(2 * 1.96 * sd / math.sqrt(size), rel=0.05)


def test_narrower_confidence_gives_a_narrower_interval(scored):
    wide = aggregate(scored, ["model"], n_boot=500, confidence=0.99)
    narrow = aggregate(scored, ["model"], n_boot=500, confidence=0.5)
    assert ((wide["ci_high"] - wide["ci_low"]) > (narrow["ci_high"] - narrow["ci_low"])).all()
    with pytest.raises(ValueError):
        aggregate(scored, ["model"], confidence=1.0)


# ---------------------------------------------------------------- the t distribution

@pytest.mark.parametrize("t", [0.0, 0.3, 1.0, 2.5, 12.0])
def test_t_distribution_with_one_and_two_degrees_of_freedom(t):
    # Closed forms: df=1 is the Cauchy distribution; df=2 has CDF 1/2 + t / (2 sqrt(2 + t^2)).
    assert student_t_two_sided_p(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi, abs=1e-12)
    assert student_t_two_sided_p(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-12)


@pytest.mark.parametrize("t, df, p", [
    (2.228139, 10, 0.05),   # printed t tables: t(0.975, 10)
    (2.042272, 30, 0.05),   # t(0.975, 30)
    (2.575829, 1e7, 0.01),  # the normal limit
    (3.169273, 10, 0.01),   # t(0.995, 10)
])
def test_t_distribution_against_tables(t, df, p):
    assert student_t_two_sided_p(t, df) == pytest.approx(p, abs=2e-6)
    assert student_t_two_sided_p(-t, df) == pytest.approx(p, abs=2e-6)


@pytest.mark.parametrize("a, b, x", [(1, 1, 0.3), (2.5, 1, 0.7), (3, 4, 0.2), (0.5, 0.5, 0.9)])
def test_incomplete_beta_identities(a, b, x):
    value = regularized_incomplete_beta(a, b, x)
    if b == 1:
        assert value == pytest.approx(x**a, abs=1e-12)
    if (a, b) == (0.5, 0.5):  # the arcsine distribution
        assert value == pytest.approx(2 / math.pi * math.asin(math.sqrt(x)), abs=1e-12)
    assert value + regularized_incomplete_beta(b, a, 1 - x) == pytest.approx(1.0, abs=1e-12)


def test_paired_t_test_by_hand():
    d = np.array([0.1, 0.3, -0.05, 0.2, 0.15, 0.0, 0.25])
    t = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    assert paired_t_test(d) == pytest.approx(student_t_two_sided_p(t, len(d) - 1))
    assert paired_t_test(np.zeros(5)) == 1.0
    assert math.isnan(paired_t_test(np.array([0.3])))


# ---------------------------------------------------------------- sign-flip test

@pytest.mark.parametrize("d, p", [
    ([1, 1, 1, 1, 1], 2 / 32),           # only all-plus and all-minus reach |sum| = 5
    ([1, 2, 3], 2 / 8),
    ([0, 0], 1.0),
    ([3, -1, 0, 0.5], 12 / 16),          # |3 + x| >= 2.5 for x in {1.5, 0.5, -0.5} of {±1 ± 0.5}; x2 for 0, x2 for ±3
])
def test_sign_flip_exact_p_values(d, p):
    d = np.array(d, dtype=float)
    signs = np.array([[1 if (k >> i) & 1 else -1 for i in range(len(d))] for k in range(2 ** len(d))])
    brute = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    assert brute == pytest.approx(p)  # the expected value itself, enumerated independently
    assert sign_flip_test(d) == pytest.approx(p)


def test_sign_flip_monte_carlo_agrees_with_exact(monkeypatch):
    d = np.random.default_rng(1).normal(0.3, 1.0, 14)
    exact = sign_flip_test(d)
    monkeypatch.setattr(agg, "_EXACT_SIGN_FLIP_MAX_N", 0)
    sampled = sign_flip_test(d, n_perm=40_000, rng=np.random.default_rng(2))
    assert sampled == pytest.approx(exact, abs=0.01)


def test_sign_flip_detects_a_shift_and_not_noise():
    rng = np.random.default_rng(11)
    assert sign_flip_test(rng.normal(0.2, 0.3, 400), rng=np.random.default_rng(0)) < 0.001
    assert sign_flip_test(rng.normal(0.0, 0.3, 400), rng=np.random.default_rng(0)) > 0.01


# ---------------------------------------------------------------- paired_compare

def _two_models(n=300, shift=0.1, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 0.8, n)
    tasks = np.where(np.arange(n) % 2 == 0, "Syntax", "PathWalk")
    rows = []
    for i in range(n):
        rows.append({"sample_id": f"s{i}", "model": "a", "prompt": "naive", "task": tasks[i], "score": base[i] + shift})
        rows.append({"sample_id": f"s{i}", "model": "b", "prompt": "naive", "task": tasks[i], "score": base[i]})
    return pd.DataFrame(rows)


def test_paired_compare_constant_shift():
    df = _two_models()
    out = paired_compare(df, "a", "b", n_boot=300)
    assert len(out) == 1
    row = out.iloc[0]
    assert row["n"] == 300
    assert row["diff"] == pytest.approx(0.1)
    assert row["ci_low"] == pytest.approx(0.1) and row["ci_high"] == pytest.approx(0.1)
    assert row["p_value"] < 0.001
    assert row["mean_a"] - row["mean_b"] == pytest.approx(0.1)


def test_paired_compare_uses_only_samples_both_answered():
    df = _two_models(n=100)
    df = df[~((df["model"] == "b") & df["sample_id"].isin([f"s{i}" for i in range(30)]))]
    df = df[~((df["model"] == "a") & (df["sample_id"] == "s99"))]
    out = paired_compare(df, "a", "b", n_boot=100)
    assert out.loc[0, "n"] == 69
    both = [f"s{i}" for i in range(30, 99)]
    expected_b = df[(df["model"] == "b") & df["sample_id"].isin(both)]["score"].mean()
    assert out.loc[0, "mean_b"] == pytest.approx(expected_b)


def test_paired_compare_by_group_lines_up_with_its_groups():
    df = _two_models(n=200, shift=0.0)
    df["score"] = df["score"] + np.where((df["model"] == "a") & (df["task"] == "Syntax"), 0.3, 0.0)
    out = paired_compare(df, "a", "b", by=["task"], n_boot=200, test="t")
    assert out["task"].tolist() == ["PathWalk", "Syntax"]
    by_task = out.set_index("task")
    assert by_task.loc["Syntax", "diff"] == pytest.approx(0.3)
    assert by_task.loc["PathWalk", "diff"] == pytest.approx(0.0)
    assert by_task.loc["PathWalk", "p_value"] == 1.0
    assert by_task.loc["Syntax", "p_value"] == 0.0  # a constant non-zero difference


def test_paired_compare_pairs_within_a_prompt():
    df = _two_models(n=50)
    other = df.copy()
    other["prompt"] = "hint"
    other.loc[other["model"] == "a", "score"] -= 0.5
    out = paired_compare(pd.concat([df, other]), "a", "b", by=["prompt"], n_boot=100)
    by_prompt = out.set_index("prompt")
    assert by_prompt.loc["naive", "diff"] == pytest.approx(0.1)
    assert by_prompt.loc["hint", "diff"] == pytest.approx(-0.4)
    assert by_prompt["n"].tolist() == [50, 50]


def test_paired_compare_refuses_duplicates_and_bad_arguments():
    df = _two_models(n=10)
    with pytest.raises(ValueError, match="several results"):
        paired_compare(pd.concat([df, df.iloc[:1]]), "a", "b")
    with pytest.raises(ValueError):
        paired_compare(df, "a", "a")
    with pytest.raises(ValueError):
        paired_compare(df, "a", "b", test="wilcoxon")


def test_summarise_reports_every_score(scored):
    scored = scored.assign(rouge_l=scored["score"], exact_match=(scored["score"] == 1).astype(int))
    out = summarise(scored, by=["model"], n_boot=100)
    assert list(out.columns) == ["model", "n", "score", "ci_low", "ci_high", "rouge_l", "exact_match"]
    assert out["rouge_l"].tolist() == pytest.approx(out["score"].tolist())
