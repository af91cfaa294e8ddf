"""The first start: the default suites (Test, Test-Hard) generated in a background thread of the
server, so that Home says how long it takes and shows its progress while every page stays usable.

One generation a data folder in a process (:func:`start` starts it once; later calls see the same
one). Each suite is written whole or not at all (:func:`structext_core.structext_eval.samples.write_jsonl`),
so a page that reads the folder meanwhile sees a suite or nothing of it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from structext_core.structext_eval import samples, suites

#: Characters of JSONL generated per second of CPU on a quiet machine (Test + Test-Hard,
#: 46 million estimated characters, in about 1.9 s); the estimate before anything is done.
CHARS_PER_SECOND = 24_000_000


@dataclass(frozen=True)
class Progress:
    """Where a first start's generation is: ``names`` of the suites it makes, ``done`` of ``total``
    samples, the ``fraction`` of the work (by the suites' estimated size), seconds since it began,
    whether it ``finished``, and the ``error`` that stopped it (None when none did)."""

    names: tuple[str, ...]
    done: int
    total: int
    fraction: float
    elapsed: float
    finished: bool
    error: str | None = None

    def seconds_left(self) -> float:
        """Seconds still to go: from the pace so far, or (nothing done yet) from :data:`CHARS_PER_SECOND`."""
        if self.finished:
            return 0.0
        if self.fraction <= 0.02 or self.elapsed <= 0:
            return expected_seconds(self.names) * (1 - self.fraction)
        return self.elapsed * (1 - self.fraction) / self.fraction


def expected_seconds(names) -> float:
    """How long generating the suites ``names`` takes on a quiet machine, in seconds."""
    return sum(suites.SUITES[name].estimated_chars() for name in names) / CHARS_PER_SECOND


class _Job:
    def __init__(self, names: tuple[str, ...], data_dir: Path | None):
        self.names, self.data_dir = names, data_dir
        self.weights = {name: suites.SUITES[name].estimated_chars() for name in names}
        self.sizes = {name: suites.SUITES[name].size for name in names}
        self.lock = threading.Lock()
        self.done = {name: 0 for name in names}
        self.started = time.monotonic()
        self.ended: float | None = None
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, name="structext-first-start", daemon=True)

    def _run(self) -> None:
        try:
            for name in self.names:
                if suites.suite_path(name, self.data_dir).exists():  # made meanwhile (another process)
                    self._step(name, self.sizes[name])
                    continue
                rows = suites.generate_suite(name, progress=lambda done, _total, name=name: self._step(name, done))
                samples.write_jsonl(suites.suite_path(name, self.data_dir), rows)
                self._step(name, len(rows))
        except Exception as exc:  # noqa: BLE001 - said on Home, with what failed
            with self.lock:
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            with self.lock:
                self.ended = time.monotonic()

    def _step(self, name: str, done: int) -> None:
        with self.lock:
            self.done[name] = done

    def progress(self) -> Progress:
        with self.lock:
            total_weight = sum(self.weights.values()) or 1
            fraction = sum(self.weights[n] * self.done[n] / max(1, self.sizes[n]) for n in self.names) / total_weight
            end = self.ended if self.ended is not None else time.monotonic()
            return Progress(names=self.names, done=sum(self.done.values()), total=sum(self.sizes.values()),
                            fraction=min(1.0, fraction), elapsed=end - self.started,
                            finished=self.ended is not None, error=self.error)


_jobs: dict[str, _Job] = {}
_jobs_lock = threading.Lock()


def _key(data_dir) -> str:
    return str(Path(data_dir or suites.data_dir()).resolve())


def start(data_dir: str | Path | None = None) -> Progress | None:
    """Start generating the default suites missing from ``data_dir`` (default: the data folder) in
    the background, unless it already runs or ran in this process (a failed one is not tried again:
    its error stays to be read); returns its progress, or None when nothing was missing and none ran."""
    key = _key(data_dir)
    with _jobs_lock:
        job = _jobs.get(key)
        if job is None or (job.ended is not None and job.error is None and suites.missing_default_suites(data_dir)):
            missing = tuple(suites.missing_default_suites(data_dir))
            if not missing:
                return None if job is None else job.progress()
            job = _jobs[key] = _Job(missing, Path(data_dir) if data_dir is not None else None)
            job.thread.start()
    return job.progress()


def progress(data_dir: str | Path | None = None) -> Progress | None:
    """The progress of this process's generation for ``data_dir``, or None when none was started."""
    with _jobs_lock:
        job = _jobs.get(_key(data_dir))
    return None if job is None else job.progress()


def wait(data_dir: str | Path | None = None, timeout: float | None = None) -> Progress | None:
    """Wait for the generation of ``data_dir`` to end (tests, the command line); its progress."""
    with _jobs_lock:
        job = _jobs.get(_key(data_dir))
    if job is not None:
        job.thread.join(timeout)
    return progress(data_dir)
