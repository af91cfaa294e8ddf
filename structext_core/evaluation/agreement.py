"""Agreement between raters on pass/fail judgements: Cohen's kappa per pair, Fleiss' kappa,
Krippendorff's alpha (nominal). Pure functions over labels and counts."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd


def cohen_kappa(a: Sequence, b: Sequence) -> float:
    """Cohen's kappa of two raters over the same units (NaN when chance agreement is 1)."""
    if len(a) != len(b):
        raise ValueError("both raters need the same number of units")
    n = len(a)
    if n == 0:
        return float("nan")
    observed = sum(x == y for x, y in zip(a, b)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[c] * count_b[c] for c in set(count_a) | set(count_b)) / (n * n)
    if expected == 1:
        return float("nan")
    return (observed - expected) / (1 - expected)


def pairwise_agreement(matrix: pd.DataFrame, *, shared_only: bool = False) -> pd.DataFrame:
    """For each pair of annotators: items both answered, % same verdict, Cohen's kappa. With
    ``shared_only``, only the pairs who answered at least one item in common (where people answer
    different items, most pairs share none: hundreds of people make tens of thousands of pairs).

    Counted for every pair at once (the pairs' 2 x 2 tables as matrix products): 300 people's
    44,850 pairs take a fraction of a second; each figure is the one :func:`cohen_kappa` gives."""
    columns = ["annotator_a", "annotator_b", "n", "agreement_pct", "cohen_kappa"]
    names = list(matrix.columns)
    if len(names) < 2:
        return pd.DataFrame([], columns=columns)
    present = matrix.notna().to_numpy()
    verdict = matrix.where(matrix.notna(), False).astype(bool).to_numpy()
    yes = (present & verdict).astype(np.int64)
    no = (present & ~verdict).astype(np.int64)
    both_yes, both_no, yes_no, no_yes = yes.T @ yes, no.T @ no, yes.T @ no, no.T @ yes
    first, second = np.triu_indices(len(names), k=1)  # the pairs in itertools.combinations' order
    n = (both_yes + both_no + yes_no + no_yes)[first, second]
    if shared_only:
        keep = n > 0
        first, second, n = first[keep], second[keep], n[keep]
    same = (both_yes + both_no)[first, second]
    a_yes, b_yes = (both_yes + yes_no)[first, second], (both_yes + no_yes)[first, second]
    rows = []
    for i, j, count, agreed, ay, by in zip(first.tolist(), second.tolist(), n.tolist(), same.tolist(),
                                           a_yes.tolist(), b_yes.tolist()):
        if count:
            expected = (ay * by + (count - ay) * (count - by)) / (count * count)
            kappa = float("nan") if expected == 1 else (agreed / count - expected) / (1 - expected)
            agree = 100 * agreed / count
        else:
            kappa = agree = float("nan")
        rows.append((names[i], names[j], count, round(agree, 1), round(kappa, 3)))
    return pd.DataFrame(rows, columns=columns)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from a units x categories table of rating counts.

    Every unit must have the same number of ratings (at least 2). NaN when chance
    agreement is 1 (every rating falls in one category).
    """
    table = [list(row) for row in counts]
    if not table:
        return float("nan")
    raters = sum(table[0])
    if raters < 2 or any(sum(row) != raters for row in table):
        raise ValueError("every unit needs the same number of ratings, at least 2")
    units = len(table)
    per_unit = [(sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in table]
    observed = sum(per_unit) / units
    shares = [sum(row[j] for row in table) / (units * raters) for j in range(len(table[0]))]
    expected = sum(p * p for p in shares)
    if expected == 1:
        return float("nan")
    return (observed - expected) / (1 - expected)


def krippendorff_alpha_nominal(units: Iterable[Sequence]) -> float:
    """Krippendorff's alpha for nominal data; each unit is the list of its ratings.

    Missing ratings are simply left out; units with fewer than two ratings do not count.
    NaN when there is no disagreement to expect (one category only).
    """
    coincidences: Counter = Counter()
    for ratings in units:
        values = [v for v in ratings if v is not None and not (isinstance(v, float) and math.isnan(v))]
        m = len(values)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidences[(values[i], values[j])] += 1 / (m - 1)
    totals: Counter = Counter()
    for (c, _), weight in coincidences.items():
        totals[c] += weight
    n = sum(totals.values())
    disagree_observed = sum(w for (c, k), w in coincidences.items() if c != k)
    disagree_expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if n <= 1 or disagree_expected == 0:
        return float("nan")
    return 1 - (n - 1) * disagree_observed / disagree_expected
