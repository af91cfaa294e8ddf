"""Stratified draws of samples: the one place that picks a subset of a suite per stratum.

Studies draw in proportion to each stratum's size (format x task x (depth, width)); Real-Test
campaigns draw evenly over (task, depth). Both are deterministic for (samples, n, seed),
whatever the order of ``samples``: samples are sorted by id first, and ``seed`` names the
caller's own random stream (so a stored study or campaign is drawn again exactly as before).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence

from structext_core.text.words import plural

PROPORTIONAL = "proportional"
EVEN = "even"
ALLOCATIONS = (PROPORTIONAL, EVEN)


def stratified_draw(
    samples: Sequence[dict],
    n: int,
    *,
    stratum: Callable[[dict], Hashable],
    seed: str,
    allocation: str = PROPORTIONAL,
    order: Callable[[Hashable], object] | None = None,
) -> list[dict]:
    """``n`` of ``samples``, grouped by ``stratum(sample)``; strata taken in ``order`` (a sort
    key of a stratum; default: the stratum itself).

    ``allocation``:

    - ``proportional``: each stratum gets the floor of its share ``n * size / total``; the
      places left go to the strata with the largest remainders (ties broken at random).
      Within a stratum, a random sample of its quota.
    - ``even``: every stratum gets the same number; the remainder goes to strata chosen at
      random, and a stratum that runs out passes its share on to the others. Within a
      stratum, the first of a random shuffle.

    The result lists the strata in ``order``. ``seed`` seeds ``random.Random``. Raises
    ``ValueError`` when ``n`` is not between 1 and ``len(samples)`` (callers check first and
    say so in their own words) or for an unknown ``allocation``.
    """
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    if not 1 <= n <= len(samples):
        raise ValueError(f"cannot draw {n:,} of {plural(len(samples), 'sample')}")
    rng = random.Random(seed)
    groups: dict[Hashable, list[dict]] = defaultdict(list)
    for sample in sorted(samples, key=lambda s: s["id"]):
        groups[stratum(sample)].append(sample)
    keys = sorted(groups, key=order)
    if allocation == PROPORTIONAL:
        return _proportional(groups, keys, n, len(samples), rng)
    return _even(groups, keys, n, rng)


def _proportional(groups: dict, keys: list, n: int, total: int, rng: random.Random) -> list[dict]:
    shares = {key: n * len(groups[key]) / total for key in keys}
    quota = {key: math.floor(shares[key]) for key in keys}
    left = n - sum(quota.values())
    by_remainder = sorted(keys, key=lambda k: (-(shares[k] - quota[k]), rng.random()))
    for key in by_remainder[:left]:
        quota[key] += 1
    drawn: list[dict] = []
    for key in keys:
        drawn.extend(rng.sample(groups[key], quota[key]))
    return drawn


def _even(groups: dict, keys: list, n: int, rng: random.Random) -> list[dict]:
    for key in keys:
        rng.shuffle(groups[key])
    quota = dict.fromkeys(keys, 0)
    remaining = n
    while remaining:
        open_keys = [k for k in keys if quota[k] < len(groups[k])]
        share, extra = divmod(remaining, len(open_keys))
        lucky = set(rng.sample(open_keys, extra))
        for key in open_keys:
            take = min(share + (key in lucky), len(groups[key]) - quota[key])
            quota[key] += take
            remaining -= take
    return [s for key in keys for s in groups[key][:quota[key]]]
