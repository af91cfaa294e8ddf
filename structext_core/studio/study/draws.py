"""How a study draws its counted items: in proportion to the strata (:func:`stratified_draw`), each
benchmark saying what an item's stratum is. A benchmark's own practice and gold draws live in its
package."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from structext_core.evaluation import draws
from structext_core.studio.errors import StudyError


def stratified_draw(samples: Sequence[dict], n: int, seed: int = 0, *, stratum_of: Callable[[dict], tuple],
                    pool_name: str = "the suite") -> list[dict]:
    """Draw ``n`` samples (each with an ``id``), allocated to strata in proportion to their size.

    Strata are ``stratum_of(sample)`` (the benchmark's: its strata's values, in order), and
    ``pool_name`` names what the samples are in messages. Each stratum gets the floor of its share;
    the remaining places go to the strata with the largest remainders (ties broken at
    random). The result is deterministic for (samples, n, seed), whatever the input order
    (:func:`structext_core.evaluation.draws.stratified_draw`, ``proportional``).
    """
    if not samples:
        raise StudyError(f"{pool_name.capitalize()} has no samples: generate or choose another one.")
    if not 1 <= n <= len(samples):
        raise StudyError(
            f"Number of questions must be between 1 and {len(samples):,} "
            f"(the size of {pool_name}), got {n:,}."
        )
    repeated = [sample_id for sample_id, times in Counter(s["id"] for s in samples).items() if times > 1]
    if repeated:
        raise StudyError(
            f"{pool_name.capitalize()} has {len(repeated)} sample id(s) used more than once (e.g. {repeated[0]!r}): "
            "every sample needs its own id."
        )
    return draws.stratified_draw(
        samples, n, stratum=stratum_of, seed=f"structext-study-draw|{seed}|{n}",
        allocation=draws.PROPORTIONAL, order=lambda key: tuple(str(part) for part in key),
    )
