"""Agreement statistics against published values (Cohen's kappa, Fleiss' kappa,
Krippendorff's alpha), without a study."""

import math

import numpy as np
import pandas as pd
import pytest

from structext_core.evaluation import agreement
from structext_core.evaluation.agreement import cohen_kappa, pairwise_agreement


def test_cohen_kappa_known_values():
    assert agreement.cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0]) == 1.0
    assert agreement.cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0
    # 20 units: 10 agree-yes, 5 agree-no, 5 disagree -> po = .75, pe = .5 -> kappa .5
    a = [1] * 10 + [0] * 5 + [1] * 3 + [0] * 2
    b = [1] * 10 + [0] * 5 + [0] * 3 + [1] * 2
    assert agreement.cohen_kappa(a, b) == pytest.approx((0.75 - (13 * 12 + 7 * 8) / 400) / (1 - (13 * 12 + 7 * 8) / 400))
    assert math.isnan(agreement.cohen_kappa([1, 1], [1, 1]))


def test_fleiss_kappa_matches_the_textbook_example():
    # Fleiss (1971) example as given on Wikipedia: 10 subjects, 14 raters, 5 categories.
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    assert agreement.fleiss_kappa(table) == pytest.approx(0.210, abs=0.0005)
    with pytest.raises(ValueError):
        agreement.fleiss_kappa([[1, 1], [2, 1]])


def test_krippendorff_alpha_matches_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal data
    # with missing values: 4 observers, 12 units, alpha = 0.743.
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [list(column) for column in zip(*observers)]
    assert agreement.krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=0.0005)
    assert agreement.krippendorff_alpha_nominal([[1, 1], [1, 1]]) != agreement.krippendorff_alpha_nominal([[1, 0], [0, 1]])


def _pairs_one_by_one(matrix: pd.DataFrame, shared_only: bool) -> list[tuple]:
    """The pairs' table as it was made before (a pair at a time, with cohen_kappa): the reference."""
    import itertools
    out = []
    for first, second in itertools.combinations(matrix.columns, 2):
        both = matrix[[first, second]].dropna()
        if shared_only and both.empty:
            continue
        a, b = both[first].astype(bool).tolist(), both[second].astype(bool).tolist()
        agree = 100 * sum(x == y for x, y in zip(a, b)) / len(a) if a else float("nan")
        out.append((first, second, len(a), round(agree, 1), round(cohen_kappa(a, b), 3)))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shared_only", [False, True])
def test_pairwise_agreement_counts_every_pair_at_once_as_one_at_a_time(seed, shared_only):
    rng = np.random.default_rng(seed)
    values = rng.choice([True, False, np.nan], size=(12, 9), p=[0.5, 0.2, 0.3]).astype(object)
    values[:, 3] = True  # one verdict only: a kappa with no room for chance
    values[:, 5] = np.nan  # someone who answered nothing
    matrix = pd.DataFrame(values, columns=[f"p{i}" for i in range(9)])
    found = pairwise_agreement(matrix, shared_only=shared_only)
    expected = _pairs_one_by_one(matrix, shared_only)
    assert len(found) == len(expected) and len(found) <= 36 - (8 if shared_only else 0)
    for got, want in zip(found.itertuples(index=False), expected):
        assert got[:3] == want[:3]
        for x, y in zip(got[3:], want[3:]):
            assert (np.isnan(x) and np.isnan(y)) or x == y, (got, want)


def test_pairwise_agreement_of_three_hundred_people_is_quick():
    import time
    rng = np.random.default_rng(0)
    matrix = pd.DataFrame(rng.choice([True, False, np.nan], size=(20, 300), p=[0.4, 0.1, 0.5]).astype(object))
    started = time.perf_counter()
    table = pairwise_agreement(matrix, shared_only=True)
    assert len(table) > 40_000 and time.perf_counter() - started < 10  # a pair at a time: minutes
