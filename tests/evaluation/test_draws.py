"""The one stratified draw: both callers (studies, Real-Test campaigns) draw exactly what their
own draws drew before they shared it, so stored studies and campaigns are reproduced.

The reference functions below are the two implementations as they were before the merge
(``study.stratified_draw`` and ``campaign.draw_stratified`` at 3cad136), copied verbatim
apart from their input checks."""

import math
import random
from collections import defaultdict

import pytest

from structext_core.evaluation import draws
from structext_core.structext_eval import campaign, study_draws, suites
from structext_core.studio import study

STUDY_KEYS = ("language", "task", "depth", "width")


def old_study_draw(samples, n, seed=0):
    rng = random.Random(f"structext-study-draw|{seed}|{n}")
    groups = defaultdict(list)
    for sample in sorted(samples, key=lambda s: s["id"]):
        groups[tuple(sample[key] for key in STUDY_KEYS)].append(sample)
    keys = sorted(groups, key=lambda k: tuple(str(part) for part in k))
    shares = {key: n * len(groups[key]) / len(samples) for key in keys}
    quota = {key: math.floor(shares[key]) for key in keys}
    left = n - sum(quota.values())
    by_remainder = sorted(keys, key=lambda k: (-(shares[k] - quota[k]), rng.random()))
    for key in by_remainder[:left]:
        quota[key] += 1
    drawn = []
    for key in keys:
        drawn.extend(rng.sample(groups[key], quota[key]))
    return drawn


def old_campaign_draw(samples, n, seed=0):
    rng = random.Random(f"real-test|draw|{seed}")
    strata = defaultdict(list)
    for s in sorted(samples, key=lambda s: s["id"]):
        strata[(s["task_id"], s["depth"])].append(s)
    keys = sorted(strata)
    for key in keys:
        rng.shuffle(strata[key])
    quota = {key: 0 for key in keys}
    remaining = n
    while remaining:
        open_keys = [k for k in keys if quota[k] < len(strata[k])]
        share, extra = divmod(remaining, len(open_keys))
        lucky = set(rng.sample(open_keys, extra))
        for key in open_keys:
            take = min(share + (key in lucky), len(strata[key]) - quota[key])
            quota[key] += take
            remaining -= take
    return [s for key in keys for s in strata[key][:quota[key]]]


def uneven_pool(size=400, seed=11):
    """Samples in strata of very different sizes, with depths 2 and 10 (which sort differently
    as text and as numbers) and task ids past 9, in shuffled order."""
    rng = random.Random(seed)
    pool = []
    for index in range(size):
        task_id = rng.choice([1, 2, 9, 10, 17, 29])
        pool.append({
            "id": f"s{index:04d}-{rng.randrange(10**6)}",
            "language": rng.choice(["json", "yaml", "xml"]),
            "task": f"Task{task_id % 4}",
            "task_id": task_id,
            "depth": rng.choice([1, 2, 2, 2, 10]),
            "width": rng.choice([1, 3, 12]),
        })
    rng.shuffle(pool)
    return pool


@pytest.fixture(scope="module")
def generated():
    """Real samples of a small grid (the study tests' grid)."""
    return [suites.generate_sample(task_id, depth, width, suite="test-hard", index=index)
            for task_id in (1, 5, 8, 10, 18, 21) for depth in (1, 2) for width in (1, 2) for index in range(2)]


def ids(rows):
    return [row["id"] for row in rows]


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 12345])
@pytest.mark.parametrize("n", [1, 5, 37, 100, 399, 400])
def test_study_draw_is_unchanged(seed, n):
    pool = uneven_pool()
    assert ids(study.stratified_draw(pool, n, seed=seed, stratum_of=study_draws.stratum)) == ids(old_study_draw(pool, n, seed))


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 12345])
@pytest.mark.parametrize("n", [1, 5, 37, 100, 399, 400])
def test_campaign_draw_is_unchanged(seed, n):
    pool = uneven_pool()
    assert ids(campaign.draw_stratified(pool, n, seed=seed)) == ids(old_campaign_draw(pool, n, seed))


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("n", [1, 7, 24, 47, 48])
def test_both_draws_are_unchanged_on_generated_samples(generated, seed, n):
    assert ids(study.stratified_draw(generated, n, seed=seed, stratum_of=study_draws.stratum)) == ids(old_study_draw(generated, n, seed))
    assert ids(campaign.draw_stratified(generated, n, seed=seed)) == ids(old_campaign_draw(generated, n, seed))


@pytest.mark.parametrize("allocation", draws.ALLOCATIONS)
def test_the_draw_ignores_input_order(allocation):
    pool = uneven_pool()
    options = {"stratum": lambda s: (s["task_id"], s["depth"]), "seed": "x", "allocation": allocation}
    assert ids(draws.stratified_draw(pool, 50, **options)) == ids(draws.stratified_draw(pool[::-1], 50, **options))


def test_proportional_quota_follows_stratum_size():
    pool = [{"id": f"a{i}", "k": "a"} for i in range(30)] + [{"id": f"b{i}", "k": "b"} for i in range(10)]
    drawn = draws.stratified_draw(pool, 8, stratum=lambda s: s["k"], seed="p")
    assert [s["k"] for s in drawn].count("a") == 6 and len(drawn) == 8


def test_even_quota_passes_a_short_stratum_share_on():
    pool = [{"id": f"a{i}", "k": "a"} for i in range(30)] + [{"id": f"b{i}", "k": "b"} for i in range(2)]
    drawn = draws.stratified_draw(pool, 10, stratum=lambda s: s["k"], seed="e", allocation=draws.EVEN)
    assert [s["k"] for s in drawn].count("b") == 2 and len(drawn) == 10


@pytest.mark.parametrize("n", [0, 41, -1])
def test_impossible_counts_and_allocations_raise(n):
    pool = [{"id": f"a{i}", "k": "a"} for i in range(40)]
    with pytest.raises(ValueError, match="cannot draw"):
        draws.stratified_draw(pool, n, stratum=lambda s: s["k"], seed="x")
    with pytest.raises(ValueError, match="allocation"):
        draws.stratified_draw(pool, 1, stratum=lambda s: s["k"], seed="x", allocation="random")
