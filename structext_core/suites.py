"""Suites: Test, Test-Hard and custom grids, deterministic per (seed, sample).

Every sample seeds its own ``random.Random`` from a string naming the suite,
the seed, the task, the grid cell and the sample's index, so any sample can be
rebuilt alone and nothing depends on the global random state or on ``hash()``.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from . import samples as samples_mod
from .formats import get_module
from .tasks import TASKS
from .tree import node_count

Progress = Callable[[int, int], None]
MAX_NODES = 60_000  # larger trees make references of tens of megabytes
MAX_HEADING_DEPTH = {"markdown": 6, "latex": 5}


@dataclass(frozen=True)
class SuiteConfig:
    """A grid: every task at every (depth, width) with ``per_cell`` samples."""

    name: str
    depths: tuple[int, ...]
    widths: tuple[int, ...]
    per_cell: int
    col: int = 6
    task_ids: tuple[int, ...] = tuple(range(1, 30))
    csv_rows: int | None = None  # None: the original's ``depth`` rows

    def validate(self) -> "SuiteConfig":
        if not self.depths or not self.widths:
            raise ValueError("give at least one depth and one width")
        if min(self.depths) < 1 or min(self.widths) < 1:
            raise ValueError("depth and width start at 1")
        if self.per_cell < 1:
            raise ValueError("per-task count must be at least 1")
        if not 1 <= self.col <= 50:
            raise ValueError(f"col must be between 1 and 50, got {self.col}")
        unknown = sorted(set(self.task_ids) - set(TASKS))
        if unknown:
            raise ValueError(f"unknown task id(s) {unknown}; tasks are 1 to 29")
        for d in self.depths:
            for w in self.widths:
                if node_count(d, w) > MAX_NODES:
                    raise ValueError(f"depth {d} x width {w} gives {node_count(d, w):,} nodes per document; "
                                     f"the limit is {MAX_NODES:,}")
        for tid in self.task_ids:
            limit = MAX_HEADING_DEPTH.get(TASKS[tid].language)
            if limit and max(self.depths) > limit:
                raise ValueError(f"{TASKS[tid].language} has headings for depth up to {limit}, "
                                 f"got depth {max(self.depths)} (task {tid})")
        return self

    def cells(self) -> list[tuple[int, int, int]]:
        return [(t, d, w) for t in self.task_ids for d in self.depths for w in self.widths]

    @property
    def size(self) -> int:
        return len(self.cells()) * self.per_cell


SUITES = {
    "test": SuiteConfig("test", depths=(1, 2), widths=(1,), per_cell=64),
    "test-hard": SuiteConfig("test-hard", depths=(1, 2, 3), widths=(1, 2, 3), per_cell=8),
}


def sample_id(suite: str, task_id: int, depth: int, width: int, index: int) -> str:
    return f"{suite}-t{task_id:02d}-d{depth}w{width}-{index:03d}"


def generate_sample(task_id: int, depth: int, width: int, *, seed: int = 0, index: int = 0,
                    suite: str = "custom", col: int = 6, csv_rows: int | None = None) -> dict:
    """Build one sample; the same arguments always give the same sample."""
    task = TASKS[task_id]
    rng = random.Random(f"structext|{suite}|{seed}|{task_id}|{depth}|{width}|{col}|{csv_rows}|{index}")
    module = get_module(task.language)
    if task.language == "csv" and csv_rows:
        doc = module.generate(rng, depth, width, col, rows=csv_rows)
    else:
        doc = module.generate(rng, depth, width, col, inject_errors=task.inject_errors)
    params = task.sample(rng, doc)
    return {
        "id": sample_id(suite, task_id, depth, width, index),
        "suite": suite,
        "language": task.language,
        "task": task.category,
        "task_id": task_id,
        "depth": depth,
        "width": width,
        "col": col,
        "seed": seed,
        "reference": doc.reference,
        "question": task.question(params),
        "requirement": task.requirement,
        "answer": task.expected(doc, params),
        "rule_hint": task.rule_hint,
        "params": params,
    }


def generate_cell(task_id: int, depth: int, width: int, count: int, seed: int = 0, suite: str = "custom",
                  col: int = 6, start_index: int = 0, csv_rows: int | None = None) -> list[dict]:
    """``count`` samples of one task and grid cell."""
    return [generate_sample(task_id, depth, width, seed=seed, index=i, suite=suite, col=col, csv_rows=csv_rows)
            for i in range(start_index, start_index + count)]


def iter_suite(config: SuiteConfig, seed: int = 0) -> Iterable[dict]:
    config.validate()
    for task_id, depth, width in config.cells():
        for index in range(config.per_cell):
            yield generate_sample(task_id, depth, width, seed=seed, index=index, suite=config.name,
                                  col=config.col, csv_rows=config.csv_rows)


def generate_suite(name: str | SuiteConfig, seed: int = 0, progress: Progress | None = None) -> list[dict]:
    """All samples of a named suite (``test``, ``test-hard``) or of a custom grid."""
    config = SUITES[name] if isinstance(name, str) else name
    total = config.size
    out = []
    for i, row in enumerate(iter_suite(config, seed), 1):
        out.append(row)
        if progress is not None and (i % 50 == 0 or i == total):
            progress(i, total)
    return out


def data_dir() -> Path:
    """Where generated suites live: ``STRUCTEXT_DATA_DIR`` or ``annotations/suites``."""
    env = os.environ.get("STRUCTEXT_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "annotations" / "suites"


def suite_path(name: str, directory: str | Path | None = None) -> Path:
    return Path(directory or data_dir()) / f"{name}.jsonl"


def load_or_generate(name: str, data_dir: str | Path | None = None, progress: Progress | None = None,
                     seed: int = 0) -> list[dict]:
    """The stored suite file, generated first when it is missing."""
    path = suite_path(name, data_dir)
    if path.exists():
        return samples_mod.read_jsonl(path)
    rows = generate_suite(name, seed=seed, progress=progress)
    samples_mod.write_jsonl(path, rows)
    return rows
