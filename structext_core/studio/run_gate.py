"""At most a few page runs of one server process at once (issue 23).

Streamlit runs every session's script in a thread of its own, and all of them share one
interpreter lock. With a crowd on one process (300 annotators answering every 10-20 s), a
hundred page runs or more can be under way at once: each gets a sliver of the interpreter in
turn, each of its many small waits (a socket write per element sent, a SQLite call, a lock of
Streamlit's configuration) becomes a wait for the interpreter behind all the others, and every
run takes as long as all of them together. Measured on the 2-core machine at 300 annotators,
a third of the server's samples were such waits, and a submit waited 18 s (p50).

The gate lets ``slots`` runs proceed at once (two cores: two or three keep both busy while a
run waits on SQLite) and queues the others, first come first served; a run waiting at the gate
holds nothing but its thread. The wait is counted, so a benchmark can print it.

Re-entrant per thread: a full run that calls a fragment inline, or a callback followed by its
run, takes one slot.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Iterator

#: Page runs at once, unless ``STRUCTEXT_RUN_SLOTS`` says otherwise (0: no gate).
DEFAULT_SLOTS = 3
MAX_SLOTS = 256


class RunGate:
    """A first-come-first-served limit on concurrent runs, re-entrant per thread."""

    def __init__(self, slots: int):
        if not 0 <= slots <= MAX_SLOTS:
            raise ValueError(f"slots must be between 0 (no gate) and {MAX_SLOTS}, not {slots}")
        self.slots = slots
        self._lock = threading.Lock()
        self._busy = 0
        self._waiting: deque[threading.Event] = deque()
        self._local = threading.local()
        self.runs = 0
        self.waited_runs = 0
        self.waited_seconds = 0.0
        self.most_waiting = 0

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _acquire(self) -> None:
        with self._lock:
            self.runs += 1
            if self._busy < self.slots and not self._waiting:
                self._busy += 1
                return
            turn = threading.Event()
            self._waiting.append(turn)
            self.most_waiting = max(self.most_waiting, len(self._waiting))
        started = time.monotonic()
        turn.wait()  # the releasing run hands its slot over: _busy is unchanged
        with self._lock:
            self.waited_runs += 1
            self.waited_seconds += time.monotonic() - started

    def _release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()  # the slot passes to the first in line
            else:
                self._busy -= 1

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot for the block (at once if this thread holds one already)."""
        depth = getattr(self._local, "depth", 0)
        if self.slots == 0 or depth:
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth = depth
            return
        self._acquire()
        self._local.depth = 1
        try:
            yield
        finally:
            self._local.depth = 0
            self._release()

    def held_here(self) -> bool:
        return getattr(self._local, "depth", 0) > 0


def slots_from_env() -> int:
    """``STRUCTEXT_RUN_SLOTS`` (a whole number 0-256), else :data:`DEFAULT_SLOTS`."""
    raw = os.environ.get("STRUCTEXT_RUN_SLOTS", "").strip()
    if not raw:
        return DEFAULT_SLOTS
    if not raw.isdigit() or not 0 <= int(raw) <= MAX_SLOTS:
        raise ValueError(f"STRUCTEXT_RUN_SLOTS must be a whole number from 0 to {MAX_SLOTS}, not {raw!r}")
    return int(raw)


_gate: RunGate | None = None
_gate_guard = threading.Lock()


def process_gate() -> RunGate:
    """The gate of this server process (made on first use from the environment)."""
    global _gate  # noqa: PLW0603
    with _gate_guard:
        if _gate is None:
            _gate = RunGate(slots_from_env())
        return _gate
