"""The human rank's Bradley-Terry fit against ``choix`` (a maintained implementation, a test
dependency only) on simulated votes: the same log-strengths with no prior, the same rank with our
default prior (choix regularises otherwise, so strengths then differ a little by design)."""
from __future__ import annotations

import choix
import numpy as np
import pytest

from structext_core.aibench.pairwise import ranking as pw

HIDDEN = {"A": 1.2, "B": 0.6, "C": 0.1, "D": -0.3, "E": -0.9, "F": -1.5}


def comparisons(votes, systems) -> list[tuple[int, int]]:
    """choix's data: (winner, loser) per decided vote, twice, and a tie as one win each way (our fit
    counts a tie as half a win each; doubling every count leaves the maximum-likelihood fit as it is)."""
    index = {s: i for i, s in enumerate(systems)}
    data = []
    for v in votes:
        i, j = index[v.first], index[v.second]
        if v.outcome == "first":
            data += [(i, j), (i, j)]
        elif v.outcome == "second":
            data += [(j, i), (j, i)]
        elif v.outcome == "tie":
            data += [(i, j), (j, i)]
    return data


@pytest.mark.parametrize("seed, n_votes, tie_share", [(0, 300, 0.0), (1, 600, 0.1), (2, 1500, 0.2), (3, 120, 0.1)])
def test_strengths_equal_choix_without_a_prior(seed, n_votes, tie_share):
    votes = pw.simulate_votes(HIDDEN, n_votes, tie_share=tie_share, seed=seed)
    systems = pw.systems_of(votes)
    ours = pw.bradley_terry(pw.win_matrix(votes, systems), prior=0.0)
    theirs = choix.ilsr_pairwise(len(systems), comparisons(votes, systems), alpha=0.0, tol=1e-12)
    theirs = theirs - theirs.mean()
    assert np.allclose(ours, theirs, atol=1e-6), (ours, theirs)


@pytest.mark.parametrize("seed, n_votes", [(4, 200), (5, 800), (6, 2000)])
def test_rank_equals_choix_with_the_default_prior(seed, n_votes):
    votes = pw.simulate_votes(HIDDEN, n_votes, seed=seed)
    systems = pw.systems_of(votes)
    ranking = pw.human_ranking(votes, n_boot=0)
    theirs = choix.ilsr_pairwise(len(systems), comparisons(votes, systems), alpha=0.01)
    by_choix = [systems[i] for i in np.argsort(-theirs)]
    assert list(ranking.table["system"]) == by_choix
