"""StrucText-Eval's draws beside the shared stratified one
(:func:`structext_core.studio.study.draws.stratified_draw`): a sample's stratum is its cell (format,
task, depth, width); gold items with short, clear answers (:func:`gold_draw`), practice items among
the shortest samples (:func:`practice_draw`), and the samples other studies of the same suite use,
kept apart (the seal withholds keys otherwise)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import sqlite_utils

from structext_core.evaluation import draws
from structext_core.studio.errors import StudyError

STRATUM_KEYS = ("language", "task", "depth", "width")
#: A gold answer at most this long, on one line, counts as short (see :func:`gold_draw`).
GOLD_SHORT_ANSWER_CHARS = 40
#: Answers a careless person guesses right half the time: never preferred as gold.
_GUESSABLE_ANSWERS = frozenset({"true", "false", "yes", "no", "0", "1"})
#: A practice question is a warm-up: drawn from samples whose reference and answer are at most
#: this long (characters). Test-Hard has such samples of every task; a suite with too few
#: gets the shortest samples it has (see :func:`practice_draw`).
PRACTICE_MAX_REFERENCE_CHARS = 3_000
PRACTICE_MAX_ANSWER_CHARS = 300


def stratum(sample: dict) -> tuple:
    """The stratum of a sample: (format, task, depth, width)."""
    return tuple(sample[key] for key in STRATUM_KEYS)


def _rest(samples: Sequence[dict], taken: Sequence[dict]) -> list[dict]:
    """The samples that share neither an id nor a reference text with ``taken``."""
    ids = {s["id"] for s in taken}
    references = {s["reference"] for s in taken}
    return [s for s in samples if s["id"] not in ids and s["reference"] not in references]


def _gold_rank(sample: dict) -> tuple[int, int]:
    """Sort key of gold candidates: short one-line answers that cannot be guessed first, then
    the rest by the length of their answer."""
    answer = str(sample.get("answer") or "").strip()
    short = (0 < len(answer) <= GOLD_SHORT_ANSWER_CHARS and "\n" not in answer
             and answer.lower() not in _GUESSABLE_ANSWERS)
    return (0 if short else 1, len(answer))


def gold_draw(samples: Sequence[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` gold items of ``samples`` (which exclude the study's own items), spread over strata.

    Gold items check care, not skill, so they should be items that a careful person answers
    right and that the scores judge without doubt. The preferred ones have a short answer on
    one line (at most :data:`GOLD_SHORT_ANSWER_CHARS` characters): ROUGE-L on such an answer
    is close to exact match, so a miss means a wrong answer, not a disagreement about how much
    of a long answer to copy. Answers a guess gets right half the time (``True``, ``no``,
    ``0``) are not preferred. The draw is stratified over the shortest ``max(3n, n)``
    candidates, so gold items are not all from one task, and deterministic for (samples, n, seed).
    """
    if n == 0:
        return []
    if n > len(samples):
        raise StudyError(f"Not enough samples left for {n} gold items after the study's questions "
                         f"({len(samples)} left): ask for fewer.")
    ranked = sorted(samples, key=lambda s: (*_gold_rank(s), s["id"]))
    pool = ranked[:max(3 * n, n)]
    return draws.stratified_draw(pool, n, stratum=stratum, seed=f"structext-study-gold|{seed}|{n}",
                                 allocation=draws.EVEN, order=lambda key: tuple(str(part) for part in key))


def _size(sample: dict) -> int:
    return len(sample["reference"]) + len(str(sample.get("answer") or ""))


def practice_draw(samples: Sequence[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` practice items of ``samples`` (which exclude the study's and the gold items),
    spread evenly over strata so a short practice round shows several formats and tasks.

    Practice is a warm-up, so only modest samples are drawn: reference at most
    :data:`PRACTICE_MAX_REFERENCE_CHARS` and answer at most :data:`PRACTICE_MAX_ANSWER_CHARS`
    characters. When fewer than ``n`` are that small, the draw is over the ``3n`` smallest."""
    if n == 0:
        return []
    if n > len(samples):
        raise StudyError(f"Not enough samples left for {n} practice items after the study's questions "
                         f"({len(samples)} left): ask for fewer.")
    pool = [s for s in samples if len(s["reference"]) <= PRACTICE_MAX_REFERENCE_CHARS
            and len(str(s.get("answer") or "")) <= PRACTICE_MAX_ANSWER_CHARS]
    if len(pool) < n:
        pool = sorted(samples, key=lambda s: (_size(s), s["id"]))[:3 * n]
    return draws.stratified_draw(pool, n, stratum=stratum, seed=f"structext-study-practice|{seed}|{n}",
                                 allocation=draws.EVEN, order=lambda key: tuple(str(part) for part in key))


def _elsewhere(db: sqlite_utils.Database, suite: str, kinds: Sequence[str]) -> list[dict]:
    """The items of ``kinds`` of every study over ``suite``, as ``{id, reference}``."""
    marks = ", ".join("?" for _ in kinds)
    rows = db.execute(
        "SELECT DISTINCT i.sample_id, json_extract(i.sample_json, '$.reference') FROM study_items i"
        f" JOIN studies s ON s.id = i.study_id WHERE s.suite = ? AND i.kind IN ({marks})", [suite, *kinds],
    ).fetchall()
    return [{"id": row[0], "reference": row[1]} for row in rows]


def _avoiding(samples: Sequence[dict], avoid: Sequence[Sequence[dict]], n: int) -> list[dict]:
    """``samples`` without those of the first of the ``avoid`` lists (by id or reference) that
    leaves at least ``n``; ``samples`` as they are when none does (the seal still withholds
    keys then, see :mod:`structext_core.studio.seal`)."""
    for items in avoid:
        left = _rest(samples, items)
        if len(left) >= n:
            return left
    return list(samples)


def _swap_out(samples: Sequence[dict], drawn: list[dict], avoid: Sequence[dict], seed: int) -> list[dict]:
    """``drawn`` with each item of ``avoid`` (by id or reference) replaced by a sample of the
    same stratum that is neither drawn nor avoided, where there is one (chosen at random,
    deterministically); the draw is unchanged when it holds no such item."""
    if not avoid:
        return drawn
    ids, references = {s["id"] for s in avoid}, {s["reference"] for s in avoid}
    hit = [d for d in drawn if d["id"] in ids or d["reference"] in references]
    if not hit:
        return drawn
    taken_ids, taken_refs = {d["id"] for d in drawn}, {d["reference"] for d in drawn}
    spare: dict[tuple, list[dict]] = {}
    for s in sorted(samples, key=lambda s: s["id"]):
        if not (s["id"] in ids or s["reference"] in references or s["id"] in taken_ids
                or s["reference"] in taken_refs):
            spare.setdefault(stratum(s), []).append(s)
    rng = random.Random(f"structext-study-swap|{seed}")
    out = []
    for d in drawn:
        pool = spare.get(stratum(d)) if d in hit else None
        if pool:
            out.append(pool.pop(rng.randrange(len(pool))))
        else:
            out.append(d)
    return out
