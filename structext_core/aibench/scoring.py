"""AIBench scored as the paper scores it, with n and 95% intervals everywhere.

- **Accuracy per level**: correct answers / questions of that level, pooled over all papers
  (question-level averaging, not a mean of per-paper means), times 100; interval: Wilson.
  Every question of the data set counts for every (system, solver) scored: a question without a
  prediction, or with a reply without a clear letter, is not correct (``missing`` and
  ``unclear`` say how many).
- **Aesthetics**: the mean of the imported per-image scores of one metric (UniPercept when
  present, as in the paper's Table 3), as imported.
- **Overall**: the plain mean of the five numbers; interval: a percentile bootstrap over papers
  (papers resampled with replacement, every number recomputed), seeded, so it is reproducible.
- **Chance** per level: the mean over its questions of 1 / options (50% for two, 25% for four).

Nothing depends on the order of the predictions: they are looked up by their key, and rows are
built in the data set's order (papers by id, questions as the paper lists them).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from structext_core.aibench.dataset import Dataset
from structext_core.aibench.model import LEVEL_COLUMNS, LEVELS
from structext_core.aibench.predictions import Prediction

if TYPE_CHECKING:  # pandas is loaded where a frame is built: `aibench score` starts faster without it
    import pandas as pd

Z95 = 1.959963984540054
DEFAULT_METRIC = "UniPercept"
BOOTSTRAP = 1000
ROW_COLUMNS = ("system", "solver", "paper_id", "conference", "question_id", "level", "options", "answer",
               "letter", "reply", "correct", "unclear", "missing")


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``correct`` of ``n``, in [0, 1]; (nan, nan) when n is 0."""
    if n == 0:
        return math.nan, math.nan
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def choose_metric(dataset: Dataset, metric: str | None = None) -> str | None:
    """The aesthetic metric scored: ``metric`` if given (a ``ValueError`` naming the imported ones
    when it is not there), else UniPercept if imported, else the only one, else None when none."""
    metrics = sorted({m for _, _, m in dataset.aesthetics})
    if metric is not None:
        if metric not in metrics:
            raise ValueError(f"no aesthetic scores of {metric!r}; imported: {', '.join(metrics) or 'none'}")
        return metric
    if not metrics:
        return None
    if DEFAULT_METRIC in metrics:
        return DEFAULT_METRIC
    if len(metrics) == 1:
        return metrics[0]
    raise ValueError(f"several aesthetic metrics ({', '.join(metrics)}); choose one")


def answer_rows(dataset: Dataset, predictions: list[Prediction]) -> pd.DataFrame:
    """One row per (system, solver) that has predictions and per question of the data set
    (:data:`ROW_COLUMNS`), in a fixed order whatever the predictions' order."""
    import pandas as pd
    by_key = {p.key: p for p in predictions}
    order = {system: i for i, system in enumerate(dataset.systems)}
    pairs = sorted({(p.system, p.solver) for p in predictions}, key=lambda sp: (order[sp[0]], sp[1]))
    questions = [(paper, q) for pid in sorted(dataset.papers) for paper in [dataset.papers[pid]] for q in paper.questions]
    base = {"paper_id": [p.id for p, _ in questions], "conference": [p.conference for p, _ in questions],
            "question_id": [q.id for _, q in questions], "level": [q.level for _, q in questions],
            "options": [len(q.options) for _, q in questions], "answer": [q.answer for _, q in questions]}
    columns: dict[str, list] = {name: [] for name in ROW_COLUMNS}
    for system, solver in pairs:
        found = [by_key.get((system, solver, p.id, q.id)) for p, q in questions]
        letters = [f.letter if f is not None else None for f in found]
        columns["system"] += [system] * len(questions)
        columns["solver"] += [solver] * len(questions)
        for name, values in base.items():
            columns[name] += values
        columns["letter"] += letters
        columns["reply"] += [f.reply if f is not None else None for f in found]
        columns["correct"] += [letter == key for letter, key in zip(letters, base["answer"])]
        columns["unclear"] += [f is not None and f.letter is None for f in found]
        columns["missing"] += [f is None for f in found]
    return pd.DataFrame(columns, columns=list(ROW_COLUMNS))


def accuracy_by(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Pooled accuracy per level within each group of ``by`` (plus ``level``): ``n, correct,
    unclear, missing, accuracy, low, high, chance`` (accuracy, interval and chance in percent)."""
    keys = [*by, "level"]
    grouped = rows.assign(chance=1.0 / rows["options"]).groupby(keys, sort=True)
    table = grouped.agg(n=("correct", "size"), correct=("correct", "sum"), unclear=("unclear", "sum"),
                        missing=("missing", "sum"), chance=("chance", "mean")).reset_index()
    table["correct"] = table["correct"].astype(int)
    table["accuracy"] = 100.0 * table["correct"] / table["n"]
    bounds = [wilson(int(k), int(n)) for k, n in zip(table["correct"], table["n"])]
    table["low"] = [100.0 * lo for lo, _ in bounds]
    table["high"] = [100.0 * hi for _, hi in bounds]
    table["chance"] = 100.0 * table["chance"]
    return table[[*keys, "n", "correct", "unclear", "missing", "accuracy", "low", "high", "chance"]]


@dataclass(frozen=True)
class LevelScore:
    level: int
    n: int
    correct: int
    unclear: int
    missing: int
    accuracy: float
    low: float
    high: float
    chance: float


@dataclass(frozen=True)
class SystemScore:
    """One (system, solver): its four level scores, aesthetics (None when not imported), overall
    (None without aesthetics) with its bootstrap interval, and how many papers it rests on."""

    system: str
    solver: str
    levels: dict[int, LevelScore]
    aesthetics: float | None
    aesthetics_n: int
    overall: float | None
    overall_low: float | None
    overall_high: float | None
    papers: int


def _bootstrap_overall(per_paper_correct: np.ndarray, per_paper_total: np.ndarray, aest_sum: np.ndarray,
                       aest_n: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    papers = per_paper_correct.shape[0]
    # how often each paper is drawn in each resample (papers drawn with replacement), so every
    # sum over a resample is one matrix product
    picks = rng.integers(0, papers, size=(n_boot, papers))
    flat = (np.arange(n_boot)[:, None] * papers + picks).ravel()
    weights = np.bincount(flat, minlength=n_boot * papers).reshape(n_boot, papers).astype(float)
    correct = weights @ per_paper_correct
    total = weights @ per_paper_total
    with np.errstate(invalid="ignore", divide="ignore"):
        levels = 100.0 * correct / total
        aesthetics = (weights @ aest_sum) / (weights @ aest_n)
    overall = (levels.sum(axis=1) + aesthetics) / 5.0
    overall = overall[np.isfinite(overall)]
    if overall.size == 0:
        return math.nan, math.nan
    return float(np.percentile(overall, 2.5)), float(np.percentile(overall, 97.5))


MISSING, UNCLEAR, WRONG, CORRECT = 0, 1, 2, 3  # a question's outcome for one (system, solver)


def score_systems(dataset: Dataset, predictions: list[Prediction], *, metric: str | None = None,
                  n_boot: int = BOOTSTRAP, seed: int = 0) -> list[SystemScore]:
    """Every (system, solver) with predictions scored as the paper scores (see the module).

    The same numbers as :func:`accuracy_by` over :func:`answer_rows` (a test holds them equal),
    counted on arrays: one pass over the questions per (system, solver)."""
    metric = choose_metric(dataset, metric)
    if not predictions:
        return []
    order = {system: i for i, system in enumerate(dataset.systems)}
    paper_ids = sorted(dataset.papers)
    questions = [(index, dataset.papers[pid], q) for index, pid in enumerate(paper_ids)
                 for q in dataset.papers[pid].questions]
    paper_of = np.fromiter((index for index, _, _ in questions), dtype=np.int64, count=len(questions))
    level_of = np.fromiter((q.level - 1 for _, _, q in questions), dtype=np.int64, count=len(questions))
    chance_of = np.fromiter((1.0 / len(q.options) for _, _, q in questions), dtype=float, count=len(questions))
    n_levels = len(LEVELS)
    cell = paper_of * n_levels + level_of  # (paper, level) of each question
    total = np.bincount(cell, minlength=len(paper_ids) * n_levels).reshape(len(paper_ids), n_levels).astype(float)
    per_level_n = np.bincount(level_of, minlength=n_levels)
    per_level_chance = np.bincount(level_of, weights=chance_of, minlength=n_levels)
    # one pass over the predictions: each (system, solver)'s outcome per question (missing unless found)
    index_of = {(p.id, q.id): i for i, (_, p, q) in enumerate(questions)}
    answers = [q.answer for _, _, q in questions]
    outcomes: dict[tuple[str, str], list[int]] = {}
    for p in predictions:
        i = index_of.get((p.paper_id, p.question_id))
        if i is None or p.system not in order:  # not a question or system of the data set: not scored
            continue
        found = outcomes.get((p.system, p.solver))
        if found is None:
            found = outcomes[(p.system, p.solver)] = [MISSING] * len(questions)
        found[i] = UNCLEAR if p.letter is None else (CORRECT if p.letter == answers[i] else WRONG)
    results = []
    for system, solver in sorted(outcomes, key=lambda sp: (order[sp[0]], sp[1])):
        outcome = np.array(outcomes[(system, solver)], dtype=np.int8)
        correct, unclear, missing = outcome == CORRECT, outcome == UNCLEAR, outcome == MISSING
        level_correct = np.bincount(level_of, weights=correct, minlength=n_levels)
        level_unclear = np.bincount(level_of, weights=unclear, minlength=n_levels)
        level_missing = np.bincount(level_of, weights=missing, minlength=n_levels)
        by_level = {}
        for index in range(n_levels):
            n = int(per_level_n[index])
            if not n:
                continue
            k = int(level_correct[index])
            low, high = wilson(k, n)
            by_level[index + 1] = LevelScore(index + 1, n, k, int(level_unclear[index]), int(level_missing[index]),
                                             100.0 * k / n, 100.0 * low, 100.0 * high,
                                             100.0 * float(per_level_chance[index]) / n)
        per_paper_correct = np.bincount(cell, weights=correct, minlength=len(paper_ids) * n_levels).reshape(
            len(paper_ids), n_levels)
        aest_sum, aest_n = np.zeros(len(paper_ids)), np.zeros(len(paper_ids))
        if metric is not None:
            for index, pid in enumerate(paper_ids):
                value = dataset.aesthetics.get((system, pid, metric))
                if value is not None:
                    aest_sum[index] += value
                    aest_n[index] += 1
        aesthetics = float(aest_sum.sum() / aest_n.sum()) if aest_n.sum() else None
        overall = low = high = None
        if aesthetics is not None and len(by_level) == len(LEVELS):
            overall = (sum(s.accuracy for s in by_level.values()) + aesthetics) / 5.0
            low, high = _bootstrap_overall(per_paper_correct, total, aest_sum, aest_n, n_boot,
                                           zlib.crc32(f"{seed}|{system}|{solver}".encode()))
        results.append(SystemScore(system, solver, by_level, aesthetics, int(aest_n.sum()), overall, low, high,
                                   len(paper_ids)))
    return results


def table3(scores: list[SystemScore]) -> pd.DataFrame:
    """The paper's Table 3 from scores: system, solver, C, T, P, S, A, O and O's interval."""
    import pandas as pd
    rows = []
    for s in scores:
        row = {"system": s.system, "solver": s.solver}
        for level, column in LEVEL_COLUMNS.items():
            row[column] = s.levels[level].accuracy if level in s.levels else math.nan
        row.update({"A": s.aesthetics if s.aesthetics is not None else math.nan,
                    "O": s.overall if s.overall is not None else math.nan,
                    "O_low": s.overall_low if s.overall_low is not None else math.nan,
                    "O_high": s.overall_high if s.overall_high is not None else math.nan})
        rows.append(row)
    return pd.DataFrame(rows, columns=["system", "solver", *LEVEL_COLUMNS.values(), "A", "O", "O_low", "O_high"])
