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

Re-entrant per thread: a full run that calls a fragment inline takes one slot. A widget's
callback runs before its run takes a slot (Streamlit calls callbacks before the script), so
callbacks are not queued; they are short writes.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator

from structext_core import settings

#: Page runs at once, unless ``STRUCTEXT_RUN_SLOTS`` says otherwise (0: no gate).
DEFAULT_SLOTS = settings.DEFAULT_RUN_SLOTS
MAX_SLOTS = settings.MAX_RUN_SLOTS
_LOGGER = logging.getLogger(__name__)
#: A wait at the gate this long is logged with the stacks of the runs holding its slots.
STUCK_SECONDS = 20.0


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
        self._holders: dict[int, float] = {}  # thread id -> when it took its slot
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
                self._holders[threading.get_ident()] = time.monotonic()
                return
            turn = threading.Event()
            self._waiting.append(turn)
            self.most_waiting = max(self.most_waiting, len(self._waiting))
        started = time.monotonic()
        # The releasing run hands its slot over (_busy is unchanged). A wait this long means the
        # runs holding the slots are stuck: the log gets where each of them is, once per wait.
        if not turn.wait(STUCK_SECONDS):
            _LOGGER.warning("a page run has waited %.0f s for the gate; the runs holding its %d slots:\n%s",
                            STUCK_SECONDS, self.slots, self.holders_stacks())
            turn.wait()
        with self._lock:
            self._holders[threading.get_ident()] = time.monotonic()
            self.waited_runs += 1
            self.waited_seconds += time.monotonic() - started

    def holders_stacks(self) -> str:
        """Where each thread holding a slot is now, and for how long it has held it."""
        frames = sys._current_frames()
        with self._lock:
            holders = dict(self._holders)
        now = time.monotonic()
        parts = []
        for ident, since in holders.items():
            frame = frames.get(ident)
            stack = "".join(traceback.format_stack(frame)) if frame is not None else "  (ended)\n"
            parts.append(f"thread {ident}, holding for {now - since:.1f} s:\n{stack}")
        return "\n".join(parts) or "(none)"

    def holder_ids(self) -> set[int]:
        """The threads holding a slot now, read without the lock (a signal handler may ask,
        in a thread that must not wait): empty if they changed while being read."""
        try:
            return set(self._holders)
        except RuntimeError:
            return set()

    def _release(self) -> None:
        with self._lock:
            self._holders.pop(threading.get_ident(), None)
            if self._waiting:
                self._waiting.popleft().set()  # the slot passes to the first in line
            else:
                self._busy -= 1

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot for the block (at once if this thread holds one already)."""
        nesting = getattr(self._local, "nesting", 0)
        if self.slots == 0 or nesting:
            self._local.nesting = nesting + 1
            try:
                yield
            finally:
                self._local.nesting = nesting
            return
        self._acquire()
        self._local.nesting = 1
        try:
            yield
        finally:
            self._local.nesting = 0
            self._release()

    def held_here(self) -> bool:
        return getattr(self._local, "nesting", 0) > 0


def slots_from_env() -> int:
    """``STRUCTEXT_RUN_SLOTS`` (a whole number 0-256), else :data:`DEFAULT_SLOTS`. ``server.py``
    refuses to start with a bad value; a page run that meets one anyway (``streamlit run
    app.py``) logs it and keeps the default rather than failing every page."""
    try:
        return settings.run_slots()
    except settings.SettingError as error:
        _LOGGER.error("%s; using %d", error, DEFAULT_SLOTS)
        return DEFAULT_SLOTS


_gate: RunGate | None = None
_gate_guard = threading.Lock()


def process_gate() -> RunGate:
    """The gate of this server process (made on first use from the environment)."""
    global _gate  # noqa: PLW0603
    with _gate_guard:
        if _gate is None:
            _gate = RunGate(slots_from_env())
        return _gate


def all_stacks() -> str:
    """Where every thread of this process is now, and which of them hold a slot of the gate."""
    holders = _gate.holder_ids() if _gate is not None else set()
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    stacks: dict[str, list[str]] = {}  # threads with the very same stack (idle workers) once
    for ident, frame in sys._current_frames().items():
        mark = " (holds a slot of the gate)" if ident in holders else ""
        stacks.setdefault("".join(traceback.format_stack(frame)), []).append(f"{names.get(ident, ident)}{mark}")
    parts = [f"{len(threads)} thread{'s' if len(threads) > 1 else ''} ({', '.join(sorted(set(threads)))}):\n{stack}"
             for stack, threads in stacks.items()]
    gate = _gate
    state = (f"gate: {gate.busy} of {gate.slots} slots busy, {gate.waiting} runs waiting"
             if gate is not None else "gate: not used yet")
    return f"{state}\n" + "\n".join(parts)


#: What else the signal writes after the stacks: each a function returning a few lines (the last rerun
#: requests the server received: ``ui/lost_clicks.py``), added once with :func:`add_report`.
_REPORTS: list[Callable[[], str]] = []


def add_report(report: Callable[[], str]) -> None:
    """Write ``report()`` after the stacks on every signal of :func:`log_stacks_on_signal` (once however
    often it is added)."""
    if report not in _REPORTS:
        _REPORTS.append(report)


def log_stacks_on_signal(signum: int = signal.SIGUSR1) -> bool:
    """From now on ``kill -USR1 <pid>`` writes :func:`all_stacks` to stderr (the server's log):
    where each page run is when the server seems stuck, then each report added (:func:`add_report`).
    Only the main thread can set it (False elsewhere, with nothing changed)."""
    def write(_signum, _frame) -> None:
        reports = "".join(f"{report()}\n" for report in _REPORTS)
        sys.stderr.write(f"--- every thread's stack, on signal {_signum} ---\n{all_stacks()}{reports}--- end ---\n")
        sys.stderr.flush()

    try:
        signal.signal(signum, write)
    except ValueError:  # not the main thread
        return False
    return True
