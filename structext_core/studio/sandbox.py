"""Run the core's checks on untrusted text in worker processes, so a runaway case is stopped.

The Real-Test live checks, the review's rerun, the server-side check before a submission is
accepted and the Explore preview all read text a person typed or a file brought. The parsers
bound what they read (:mod:`structext_core.text.limits`); this module is the second line of
defence, for whatever slips past them: a C parser that segfaults, a loop, a blow-up.

A :class:`WorkerPool` keeps a few long-lived worker processes
(:mod:`structext_core.studio.sandbox_worker`), started on first use, never at import. Each call
names a function from a fixed allow-list and runs in one worker under

- a wall-clock **timeout** (``STRUCTEXT_SANDBOX_TIMEOUT`` seconds, default 5),
- an **address-space limit** (``RLIMIT_AS``, ``STRUCTEXT_SANDBOX_MEMORY_MB``, default 1024),
- a CPU-time limit a little above the timeout, in case the server itself is gone.

A call that times out, runs out of memory or crashes its worker returns an :class:`Unchecked`
("too large or too deeply nested to check", and which of the three), never an exception;
the worker is killed, reaped and replaced. ``STRUCTEXT_SANDBOX_WORKERS`` (default 2) sets
how many checks run at once. The pool is thread-safe (Streamlit runs each session in its
own thread). When no worker can start, :meth:`WorkerPool.call` raises
:class:`SandboxUnavailable`: nothing ever runs in the server's own process instead.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from structext_core import settings
from structext_core.studio import sandbox_worker as protocol

ENV_WORKERS = "STRUCTEXT_SANDBOX_WORKERS"
ENV_TIMEOUT = "STRUCTEXT_SANDBOX_TIMEOUT"
ENV_MEMORY_MB = "STRUCTEXT_SANDBOX_MEMORY_MB"
DEFAULT_WORKERS = 2
DEFAULT_TIMEOUT = 5.0
DEFAULT_MEMORY_MB = 1024
#: How long a new worker may take to import the core and say it is ready.
START_TIMEOUT = 60.0
#: How long a call waits for a free worker before saying the checkers are busy.
WAIT_TIMEOUT = 60.0
#: How many texts that could not be checked are remembered, and for how long (seconds), so a
#: page that reruns on every click does not wait out the same timeout again.
REMEMBER = 128
REMEMBER_SECONDS = 600.0
#: After a worker failed to start, calls say so at once for this long (seconds) before trying again.
RETRY_START_SECONDS = 30.0
TOO_BIG = "This text is too large or too deeply nested to check"
_ROOT = settings.PROJECT_ROOT
_log = logging.getLogger(__name__)


class SandboxUnavailable(RuntimeError):
    """No worker process could be started (or the pool is shut down); nothing ran."""


@dataclass(frozen=True)
class Unchecked:
    """Why a text could not be checked.

    ``reason`` is ``timeout``, ``memory``, ``crash`` or ``nesting`` (the text is too large or
    too deeply nested to check), ``error`` (the check itself failed), ``busy`` (no worker
    came free) or ``unavailable`` (no worker could start); ``detail`` says more.
    """

    reason: str
    detail: str

    @property
    def too_big(self) -> bool:
        """True when the text itself is the cause (it timed out, ran out of memory, crashed or
        nested too deeply), rather than the server (busy, unavailable) or a failing check."""
        return self.reason in ("timeout", "memory", "crash", "nesting")

    @property
    def message(self) -> str:
        """The sentence a person sees where the check results usually are."""
        return self.describe("check")

    def describe(self, what: str) -> str:
        """The message for a ``what`` ("check", "preview") that could not run."""
        too_big = TOO_BIG.replace("check", what)
        plain = {"timeout": f"{too_big}: the {what} timed out after {self.detail}.",
                 "memory": f"{too_big}: the {what} ran out of memory ({self.detail}).",
                 "crash": f"{too_big}: the {what} crashed ({self.detail}).",
                 "nesting": f"{too_big}: the {what} ran out of stack ({self.detail}).",
                 "busy": f"The {what}s are busy with other texts ({self.detail}); try again in a moment.",
                 "unavailable": f"The {what}s cannot run on this server: {self.detail}"}
        return plain.get(self.reason, f"This text could not be {what}ed: the {what} failed ({self.detail}).")

    def __str__(self) -> str:
        return self.message


# ---------------------------------------------------------------- settings

def _setting(read) -> float:
    try:
        return read()
    except settings.SettingError as error:
        raise SandboxUnavailable(str(error)) from None


def allowed(name: str) -> bool:
    """True when ``name`` is a function a worker may run (test ones only in test mode)."""
    return name in protocol.functions() or (protocol.test_mode() and name in protocol.TEST_FUNCTIONS)


# ---------------------------------------------------------------- one worker

class _Timeout(Exception):
    pass


class _Died(Exception):
    pass


def _describe_exit(code: int | None) -> tuple[str, str]:
    """(reason, detail) for a worker that ended with ``code``."""
    if code is None:
        return "crash", "the worker stopped answering"
    if code == -signal.SIGXCPU:
        return "timeout", "its CPU-time limit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        plain = {"SIGSEGV": "segmentation fault", "SIGABRT": "aborted", "SIGBUS": "bus error",
                 "SIGKILL": "killed by the system, perhaps for memory"}.get(name, name)
        return "crash", plain
    return "crash", f"the worker exited with code {code}"


class _Worker:
    """One worker process and the two pipes to it; used by one thread at a time."""

    def __init__(self, memory_bytes: int, cpu_seconds: float):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")  # thread pools would spend the address-space budget on stacks
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "structext_core.studio.sandbox_worker", str(memory_bytes), str(cpu_seconds),
                 str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=_ROOT, env=env, start_new_session=True)
        except OSError as exc:
            raise SandboxUnavailable(f"a check worker could not be started ({exc})") from exc
        self.ready = False
        os.set_blocking(self.proc.stdin.fileno(), False)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float) -> None:
        """Wait for the worker's "ready"; :class:`SandboxUnavailable` if it does not come."""
        if self.ready:
            return
        try:
            message = self._read(time.monotonic() + timeout)
        except _Timeout:
            raise SandboxUnavailable(f"a check worker did not start within {timeout:g} s") from None
        except _Died:
            _, detail = _describe_exit(self.exit_code())
            raise SandboxUnavailable(f"a check worker ended while starting ({detail})") from None
        if message[0] != "ready":
            raise SandboxUnavailable(f"a check worker could not start: {message[1]}")
        self.ready = True

    def exchange(self, request: bytes, timeout: float) -> tuple:
        """Send one request frame and read the reply; raises :class:`_Timeout` or :class:`_Died`."""
        deadline = time.monotonic() + timeout
        self._write(request, deadline)
        return self._read(deadline)

    def _write(self, data: bytes, deadline: float) -> None:
        fd, view = self.proc.stdin.fileno(), memoryview(data)
        while view:
            self._wait(fd, select.POLLOUT, deadline)
            try:
                sent = os.write(fd, view)
            except BlockingIOError:
                continue
            except OSError as exc:  # BrokenPipeError: the worker is gone
                raise _Died() from exc
            view = view[sent:]

    def _read(self, deadline: float) -> tuple:
        header = self._read_exact(protocol.HEADER.size, deadline)
        data = self._read_exact(protocol.HEADER.unpack(header)[0], deadline)
        try:
            return pickle.loads(data)
        except Exception as exc:  # a garbled reply: the worker is not to be trusted further
            raise _Died() from exc

    def _read_exact(self, size: int, deadline: float) -> bytes:
        fd, chunks, left = self.proc.stdout.fileno(), [], size
        while left:
            self._wait(fd, select.POLLIN, deadline)
            try:
                chunk = os.read(fd, min(left, 1 << 20))
            except OSError as exc:
                raise _Died() from exc
            if not chunk:
                raise _Died()
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    @staticmethod
    def _wait(fd: int, event: int, deadline: float) -> None:
        poller = select.poll()
        poller.register(fd, event)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout()
            if poller.poll(left * 1000):
                return  # ready, or the other end closed (the read or write then says so)

    def exit_code(self) -> int | None:
        """The exit code once the process has ended (None: killed after 5 s of not ending)."""
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def stop(self) -> None:
        """Kill the process and reap it (no zombie is left)."""
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
        self.proc.wait()

    def kill(self) -> None:
        """Kill and reap the process, and close the pipes to it."""
        self.stop()
        self._close_pipes()

    def close(self, grace: float = 1.0) -> None:
        """Ask the worker to stop (end of its input); kill it if it does not within ``grace``."""
        self._close_pipes()
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass


# ---------------------------------------------------------------- the pool

class WorkerPool:
    """A thread-safe pool of worker processes running allow-listed functions with a budget.

    ``workers``, ``timeout`` (seconds) and ``memory_mb`` default to the environment variables
    :data:`ENV_WORKERS`, :data:`ENV_TIMEOUT` and :data:`ENV_MEMORY_MB`, else 2, 5 s and 1024 MB.
    """

    def __init__(self, workers: int | None = None, timeout: float | None = None, memory_mb: int | None = None,
                 start_timeout: float = START_TIMEOUT, wait_timeout: float = WAIT_TIMEOUT):
        self.size = int(workers or _setting(settings.sandbox_workers))
        self.timeout = float(timeout or _setting(settings.sandbox_timeout))
        self.memory_mb = int(memory_mb or _setting(settings.sandbox_memory_mb))
        self.start_timeout = start_timeout
        self.wait_timeout = wait_timeout
        self.owner = os.getpid()
        self.closed = False
        self._cond = threading.Condition()
        self._workers: list[_Worker] = []  # every live worker
        self._idle: list[_Worker] = []
        self._failures: OrderedDict[bytes, tuple[float, Unchecked]] = OrderedDict()
        self._start_failure: tuple[float, str] | None = None  # (when, why) the last worker failed to start

    # -- public

    def call(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        """``name(*args)`` in a worker: its result, or an :class:`Unchecked` saying why not.

        Raises :class:`ValueError` for a name not on the allow-list and
        :class:`SandboxUnavailable` when no worker can start.
        """
        if not allowed(name):
            raise ValueError(f"{name!r} is not a function the check workers run")
        request = protocol.dump((name, args))
        key = hashlib.sha256(request).digest()
        known = self._remembered(key)
        if known:
            return known
        worker = self._acquire()
        if worker is None:
            return Unchecked("busy", f"no checker came free within {self.wait_timeout:g} s")
        healthy = False
        try:
            try:
                worker.wait_ready(self.start_timeout)
            except SandboxUnavailable as exc:
                with self._cond:
                    self._start_failure = (time.monotonic(), str(exc))
                raise
            result, healthy = self._run(worker, name, request, timeout or self.timeout)
        finally:
            self._release(worker, healthy)
        if isinstance(result, Unchecked) and result.reason not in ("busy", "unavailable"):
            self._remember(key, result)
        return result

    def pids(self) -> list[int]:
        """The process ids of the live workers (for tests and the benchmark)."""
        with self._cond:
            return [w.pid for w in self._workers]

    def shutdown(self) -> None:
        """Stop every worker and reap it; later calls raise :class:`SandboxUnavailable`."""
        with self._cond:
            self.closed = True
            idle = self._idle
            busy = [w for w in self._workers if w not in idle]
            self._workers, self._idle = [], []
            self._cond.notify_all()
        for worker in idle:
            if worker.ready:
                worker.close()
            else:
                worker.kill()  # still booting: it would not read the end of its input yet
        for worker in busy:
            worker.stop()  # the thread using it sees it end, and closes the pipes it reads

    # -- one call

    def _run(self, worker: _Worker, name: str, request: bytes, timeout: float) -> tuple[Any, bool]:
        """(result or Unchecked, whether the worker can serve again)."""
        try:
            reply = worker.exchange(request, timeout)
        except _Timeout:
            _log.warning("check worker %s: %s timed out after %g s; killed", worker.pid, name, timeout)
            return Unchecked("timeout", f"{timeout:g} s"), False
        except _Died:
            reason, detail = _describe_exit(worker.exit_code())
            if reason == "timeout":
                detail = f"{timeout:g} s"
            _log.warning("check worker %s: %s ended it (%s); replaced", worker.pid, name, detail)
            return Unchecked(reason, detail), False
        if reply[0] == "ok":
            return reply[1], True
        _, kind, detail = reply
        if kind == "memory":
            detail = f"over its {self.memory_mb} MB budget"
        return Unchecked(kind, detail), kind != "memory"

    # -- workers

    def _acquire(self) -> _Worker | None:
        """A worker for this thread alone, or None when none came free in time."""
        deadline = time.monotonic() + self.wait_timeout
        with self._cond:
            while True:
                if self.closed:
                    raise SandboxUnavailable("the check workers are shut down")
                if os.getpid() != self.owner:
                    raise SandboxUnavailable("the check workers belong to another process")
                worker = self._take_idle()
                if worker:
                    return worker
                if len(self._workers) < self.size:
                    if self._start_failure and time.monotonic() - self._start_failure[0] < RETRY_START_SECONDS:
                        raise SandboxUnavailable(self._start_failure[1])  # not a new failing start every rerun
                    for _ in range(self.size - len(self._workers)):  # all at once: they start in parallel
                        self._start()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)

    def _take_idle(self) -> _Worker | None:
        """An idle live worker, a ready one first; idle workers that died are reaped first."""
        for worker in [w for w in self._idle if not w.alive()]:
            self._idle.remove(worker)
            self._workers.remove(worker)
            worker.kill()
        if not self._idle:
            return None
        worker = min(self._idle, key=lambda w: not w.ready)
        self._idle.remove(worker)
        return worker

    def _start(self) -> None:
        worker = _Worker(self.memory_mb << 20, self.timeout)
        self._workers.append(worker)
        self._idle.append(worker)

    def _release(self, worker: _Worker, healthy: bool) -> None:
        if not healthy:
            worker.kill()  # outside the lock would race shutdown; killing is quick
        with self._cond:
            if worker in self._workers:
                if healthy and not self.closed:
                    self._idle.append(worker)
                else:
                    self._workers.remove(worker)
                    if not self.closed and worker.ready:  # replace it now: it boots while nobody waits
                        try:
                            self._start()
                        except SandboxUnavailable as exc:
                            _log.warning("%s", exc)
            elif healthy:
                worker.close()  # shut down meanwhile
            self._cond.notify()

    # -- texts that could not be checked

    def _remembered(self, key: bytes) -> Unchecked | None:
        with self._cond:
            entry = self._failures.get(key)
            if entry and time.monotonic() - entry[0] < REMEMBER_SECONDS:
                return entry[1]
            return None

    def _remember(self, key: bytes, result: Unchecked) -> None:
        with self._cond:
            self._failures[key] = (time.monotonic(), result)
            self._failures.move_to_end(key)
            while len(self._failures) > REMEMBER:
                self._failures.popitem(last=False)


# ---------------------------------------------------------------- the server's pool

_default: WorkerPool | None = None
_default_lock = threading.Lock()


def default_pool() -> WorkerPool:
    """The process's pool, made on first use (no process starts before a call)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed or _default.owner != os.getpid():
            _default = WorkerPool()
        return _default


def shutdown() -> None:
    """Stop the process's workers (also run at interpreter exit)."""
    with _default_lock:
        pool = _default
    if pool is not None and pool.owner == os.getpid():
        pool.shutdown()


atexit.register(shutdown)


def run(name: str, *args: Any) -> Any:
    """``name(*args)`` in the server's pool: its result or an :class:`Unchecked`.

    When no worker can start, the result is ``Unchecked("unavailable", ...)`` and the
    reason is logged; the function is never run in this process instead.
    """
    try:
        return default_pool().call(name, *args)
    except SandboxUnavailable as exc:
        _log.error("the check workers are unavailable: %s", exc)
        return Unchecked("unavailable", f"{exc}. Ask the administrator.")
