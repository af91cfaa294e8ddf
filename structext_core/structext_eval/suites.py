"""Suites: Test, Test-Hard and custom grids, deterministic per (seed, sample).

Every sample seeds its own ``random.Random`` from a string naming the suite,
the seed, the task, the grid cell and the sample's index, so any sample can be
rebuilt alone and nothing depends on the global random state or on ``hash()``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from structext_core import settings
from structext_core.structext_eval import samples as samples_mod
from structext_core.structext_eval.formats import get_module
from structext_core.structext_eval.tasks import TASKS
from structext_core.structext_eval.tree import capped_node_count
from structext_core.text.words import plural

Progress = Callable[[int, int], None]

# Default size limits of a grid. Each one is lifted by ``SuiteConfig(allow_large=True)``
# (``generate --allow-large``); they keep a typo from filling a disk or a server's memory.
MAX_NODES = 60_000  # nodes per document: larger trees make references of tens of megabytes
MAX_COL = 50  # fields per node go up to depth x col
MAX_PER_TASK = 10_000  # samples per task and grid cell
MAX_CSV_ROWS = 100_000  # rows per CSV table (about 57 characters each)
MAX_SAMPLES = 1_000_000  # samples in all
MAX_OUTPUT_CHARS = 1_000_000_000  # estimated characters of the JSONL file (about 1 GB)
# Never lifted: no grid can use more values than this, and a range is checked before it is built.
MAX_LIST_VALUES = 1_000

# Estimated JSONL characters of one sample: SAMPLE_BASE_CHARS, plus what the format's ``SIZE``
# says its document adds (:mod:`structext_core.structext_eval.formats.sizes`).
SAMPLE_BASE_CHARS = 600
BYTES_PER_CHAR_IN_MEMORY = 12  # peak memory while one sample is built and encoded (measured: 4 to 9)
_SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class SizeLimitError(ValueError):
    """A grid above one of the default size limits; ``allow_large`` lifts it."""


def estimate_sample_chars(language: str, depth: int, width: int, col: int, csv_rows: int | None = None,
                          cap: int = 10**15) -> int:
    """Estimated length of one sample's JSONL line (at most ``cap + 1`` for a format that
    grows with its tree)."""
    return get_module(language).SIZE.sample_chars(SAMPLE_BASE_CHARS, depth, width, col, csv_rows, cap)


def available_memory() -> int | None:
    """Bytes of memory the system can still hand out (``MemAvailable``), None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class SuiteConfig:
    """A grid: every task at every (depth, width) with ``per_cell`` samples.

    ``allow_large`` lifts the default size limits (``MAX_NODES`` and the others above)."""

    name: str
    depths: tuple[int, ...]
    widths: tuple[int, ...]
    per_cell: int
    col: int = 6
    task_ids: tuple[int, ...] = tuple(range(1, 30))
    csv_rows: int | None = None  # None: the original's ``depth`` rows
    allow_large: bool = False

    def validate(self) -> "SuiteConfig":
        """Check the grid before anything is built; raise ValueError (SizeLimitError for a size
        above a default limit) saying what and what the limit is."""
        self._validate_values()
        self._validate_sizes()
        for tid in self.task_ids:
            limit = get_module(TASKS[tid].language).MAX_DEPTH
            if limit and max(self.depths) > limit:
                raise ValueError(f"{TASKS[tid].language} has headings for depth up to {limit}, "
                                 f"got depth {max(self.depths)} (task {tid})")
        self._validate_memory()
        return self

    def _validate_values(self) -> None:
        if not self.depths or not self.widths or not self.task_ids:
            raise ValueError("give at least one depth, one width and one task")
        for what, values in (("depths", self.depths), ("widths", self.widths), ("tasks", self.task_ids)):
            if len(values) > MAX_LIST_VALUES:
                raise ValueError(f"{len(values):,} {what} given; a grid takes at most {MAX_LIST_VALUES:,}")
        if min(self.depths) < 1 or min(self.widths) < 1:
            raise ValueError("depth and width start at 1")
        if self.per_cell < 1:
            raise ValueError(f"per-task count must be at least 1, got {self.per_cell}")
        if self.col < 1:
            raise ValueError(f"col must be at least 1, got {self.col}")
        if self.csv_rows is not None and self.csv_rows < 1:
            raise ValueError(f"csv-rows must be at least 1, got {self.csv_rows}")
        unknown = sorted(set(self.task_ids) - set(TASKS))
        if unknown:
            raise ValueError(f"unknown task id(s) {unknown}; tasks are 1 to 29")

    def _validate_sizes(self) -> None:
        if self.allow_large:
            return
        depth, width = max(self.depths), max(self.widths)
        nodes = capped_node_count(depth, width, MAX_NODES)
        if nodes > MAX_NODES:
            raise SizeLimitError(f"depth {depth} x width {width} gives more than {MAX_NODES:,} nodes per document; "
                                 f"the limit is {MAX_NODES:,} nodes per document")
        if self.col > MAX_COL:
            raise SizeLimitError(f"col {self.col:,} is above the limit of {MAX_COL}")
        if self.per_cell > MAX_PER_TASK:
            raise SizeLimitError(f"per-task {self.per_cell:,} is above the limit of {MAX_PER_TASK:,} samples "
                                 "per task and grid cell")
        if self.csv_rows is not None and self.csv_rows > MAX_CSV_ROWS:
            raise SizeLimitError(f"csv-rows {self.csv_rows:,} is above the limit of {MAX_CSV_ROWS:,} rows per table")
        if self.size > MAX_SAMPLES:
            raise SizeLimitError(f"the grid makes {plural(self.size, 'sample')}; the limit is {MAX_SAMPLES:,} samples")
        chars = self.estimated_chars()
        if chars > MAX_OUTPUT_CHARS:
            raise SizeLimitError(f"the grid makes about {chars:,} characters of JSONL; the limit is "
                                 f"{MAX_OUTPUT_CHARS:,} characters")

    def _validate_memory(self) -> None:
        """Even with ``allow_large``: one document must fit in the memory the system has free."""
        free = available_memory()
        if free is None:
            return
        languages = {TASKS[t].language for t in self.task_ids}
        cap = free // BYTES_PER_CHAR_IN_MEMORY
        largest = max(estimate_sample_chars(lang, max(self.depths), max(self.widths), self.col, self.csv_rows, cap)
                      for lang in languages)
        if largest > cap:
            shown = "more than" if largest == cap + 1 else "about"
            raise ValueError(f"one sample at depth {max(self.depths)} x width {max(self.widths)} needs {shown} "
                             f"{largest * BYTES_PER_CHAR_IN_MEMORY / 1e9:,.1f} GB of memory to build; "
                             f"{free / 1e9:,.1f} GB are free")

    def estimated_chars(self) -> int:
        """Estimated characters of the whole suite as JSONL (see :func:`estimate_sample_chars`)."""
        per_language: dict[str, int] = {}
        for tid in self.task_ids:
            language = TASKS[tid].language
            per_language[language] = per_language.get(language, 0) + 1
        cap = 10**15
        total = 0
        for language, n_tasks in per_language.items():
            for d in self.depths:
                for w in self.widths:
                    total += n_tasks * estimate_sample_chars(language, d, w, self.col, self.csv_rows, cap)
        return total * self.per_cell

    def cells(self) -> list[tuple[int, int, int]]:
        return [(t, d, w) for t in self.task_ids for d in self.depths for w in self.widths]

    @property
    def size(self) -> int:
        return len(self.task_ids) * len(self.depths) * len(self.widths) * self.per_cell


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
    doc = get_module(task.language).generate(rng, depth, width, col, inject_errors=task.inject_errors, rows=csv_rows)
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
    return settings.suites_dir()


def suite_files(directory: str | Path | None = None) -> list[Path]:
    """Every suite file (``<name>.jsonl``) in ``directory`` (default :func:`data_dir`): the
    paper's suites first (Test, Test-Hard), then the others by name; [] when the folder is missing.
    The one place that lists suite files (Explore, studies and Results all ask here)."""
    folder = Path(directory) if directory is not None else data_dir()
    if not folder.is_dir():
        return []
    order = {name: i for i, name in enumerate(SUITES)}
    return sorted((p for p in folder.glob("*.jsonl") if p.is_file()),
                  key=lambda p: (order.get(p.stem, len(order)), p.stem))


def suite_path(name: str, directory: str | Path | None = None) -> Path:
    return Path(directory or data_dir()) / f"{name}.jsonl"


def missing_default_suites(data_dir: str | Path | None = None) -> list[str]:
    """The paper's suites (Test, Test-Hard) that have no file yet."""
    return [name for name in SUITES if not suite_path(name, data_dir).exists()]


def check_suite_name(name: str) -> str:
    """A new suite's file name: letters, digits, - and _; not a default suite's name."""
    if len(name or "") > 64:
        raise ValueError(f"the suite name is {len(name):,} characters long; the limit is 64 characters")
    if not _SUITE_NAME.fullmatch(name or ""):  # fullmatch: '$' would let a trailing newline through
        raise ValueError("the name may use letters, digits, - and _ only (at most 64)")
    if name in SUITES:
        raise ValueError(f"{name!r} is a default suite's name; choose another")
    return name


def import_official(folder: str | Path, name: str, data_dir: str | Path | None = None) -> tuple[int, list[str]]:
    """Read the authors' released files into the suite ``name``; returns (count, problems).

    Unreadable files are named in the problems and skipped; nothing is written when
    no file could be read."""
    from structext_core.structext_eval import official  # the released layout's reader: not for `generate`

    check_suite_name(name)
    rows, problems = official.read_folder(folder)
    if rows:
        samples_mod.write_jsonl(suite_path(name, data_dir), [dict(r, suite=name) for r in rows])
    return len(rows), problems


def load_or_generate(name: str, data_dir: str | Path | None = None, progress: Progress | None = None,
                     seed: int = 0) -> list[dict]:
    """The stored suite file, generated first when it is missing."""
    path = suite_path(name, data_dir)
    if path.exists():
        return samples_mod.read_jsonl(path)
    rows = generate_suite(name, seed=seed, progress=progress)
    samples_mod.write_jsonl(path, rows)
    return rows
