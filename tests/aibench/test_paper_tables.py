"""The paper's tables shipped as printed; each printed Overall recomputed from its five columns."""
from __future__ import annotations

import pandas as pd
import pytest

from structext_core.aibench import paper


def test_tables_have_the_papers_rows_and_columns():
    assert list(paper.load_table("table3").columns) == ["system", "size", "C", "T", "P", "S", "A", "O"]
    assert len(paper.load_table("table3")) == 15 and len(paper.load_table("table4")) == 10
    table2 = paper.load_table("table2")
    assert list(table2.columns) == ["system", *paper.AESTHETIC_METRICS, "human rank"]
    assert table2.loc[0].tolist() == ["Original Figure", "5.193", "19.423", "8.92", "51.11", "62.39", "3"]
    assert paper.load_table("table3").set_index("system").loc["Qwen-Image", "size"] == "27B"
    assert paper.load_table("table4").loc[1, "P"] == "81.90"  # the printed digits, trailing zero kept
    assert "arXiv 2603.28068" in paper.source_note()


@pytest.mark.parametrize("name", ["table3", "table4"])
def test_every_printed_overall_is_the_mean_of_its_five_columns(name):
    table = paper.load_table(name)
    wrong = [(r["system"], r["O"], paper.recomputed_overall(r)) for _, r in table.iterrows()
             if paper.recomputed_overall(r) != r["O"]]
    assert wrong == []


def test_the_recomputation_would_see_a_misprint():
    row = paper.load_table("table3").iloc[0].to_dict()
    row["C"] = "82.75"  # +0.10 on one column moves the mean by 0.02
    assert paper.recomputed_overall(row) == "70.11" != row["O"]


def test_table2_spearman_with_the_human_rank_as_stated():
    table = paper.load_table("table2")
    human = table["human rank"].astype(int)
    rho = {m: pd.Series(table[m].astype(float)).rank(ascending=False).corr(human, method="spearman")
           for m in paper.AESTHETIC_METRICS}
    assert {m: round(v, 3) for m, v in rho.items()} == {
        "Aesthetic Score": 0.9, "PickScore": -0.5, "VLM-as-Judge": 0.7, "UniPercept": 0.9, "AesR1": 0.9}


def test_metric_correlations_with_their_exact_uncertainty():
    table = paper.metric_rank_correlations().set_index("metric")
    assert table["spearman_rho"].round(3).to_dict() == {
        "Aesthetic Score": 0.9, "PickScore": -0.5, "VLM-as-Judge": 0.7, "UniPercept": 0.9, "AesR1": 0.9}
    assert table.loc["UniPercept", "p_rho_exact"] == 5 / 120  # AIBENCH.md: one-sided p = 0.042
    assert round(table.loc["UniPercept", "kendall_tau"], 3) == 0.8
    assert set(table["n"]) == {5} and set(table["rho_values"]) == {21}


def test_exact_test_on_a_perfect_and_a_reversed_ranking():
    p_rho, p_tau, values = paper.exact_rank_test([1, 2, 3, 4], [1, 2, 3, 4])
    assert (p_rho, p_tau) == (1 / 24, 1 / 24) and values[0] == -1.0 and values[-1] == 1.0
    assert paper.exact_rank_test([4, 3, 2, 1], [1, 2, 3, 4])[:2] == (1.0, 1.0)
    with pytest.raises(ValueError, match="at most 8"):
        paper.exact_rank_test(list(range(9)), list(range(9)))
