"""One worker process of :mod:`structext_core.studio.sandbox`: runs allow-listed core functions on
untrusted text under a memory and CPU budget.

Started by the pool as ``python -m structext_core.studio.sandbox_worker <memory_bytes> <cpu_seconds>
<parent_pid>``. It imports the core once, caps its own address space (``RLIMIT_AS``), says
it is ready, then answers requests one at a time until its input closes. A request is a
frame ``(name, args)``; ``name`` must be in :func:`functions` (never arbitrary code). The
answer is ``("ok", result)`` or ``("error", kind, text)`` where kind is ``memory``,
``nesting`` or ``error``. Anything worse (a segfault in a C extension, a loop) ends or stalls
the process, and the pool kills and replaces it.

Frames are an 8-byte big-endian length and a pickle. Only the pool talks to a worker, over
the pipes it made; the untrusted text travels inside the pickle as plain strings.
"""

from __future__ import annotations

import importlib
import os
import pickle
import resource
import signal
import struct
import sys
import threading
import time
import traceback
from typing import Any, BinaryIO, Callable

from structext_core import protocol, settings

#: What a worker may be asked to run of the studio's own: name -> (module, function); with what each
#: benchmark's member adds (``SANDBOXED``: :func:`functions`). Nothing else runs.
FUNCTIONS: dict[str, tuple[str, str]] = {}
#: Set to ``1`` (tests only) to add the ``_test_*`` functions below and the poison markers.
TEST_FUNCTIONS_ENV = settings.SANDBOX_TEST_FUNCTIONS_ENV
#: In test mode, a string argument holding one of these makes any allow-listed call misbehave.
POISON = {"<<sandbox-test:crash>>": "crash", "<<sandbox-test:hang>>": "hang", "<<sandbox-test:memory>>": "memory"}
HEADER = struct.Struct(">Q")


# ---------------------------------------------------------------- frames

def dump(message: Any) -> bytes:
    """One frame: the pickled message with its length in front."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def write_frame(stream: BinaryIO, message: Any) -> None:
    """Send one message."""
    stream.write(dump(message))
    stream.flush()


def read_exact(stream: BinaryIO, size: int) -> bytes | None:
    """``size`` bytes, or None at end of input."""
    chunks, left = [], size
    while left:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> Any | None:
    """The next message, or None when the pool closed the pipe."""
    header = read_exact(stream, HEADER.size)
    if header is None:
        return None
    data = read_exact(stream, HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


# ---------------------------------------------------------------- test-only functions

def _test_sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


def _test_crash() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def _test_abort() -> None:
    os.abort()


def _test_allocate(megabytes: int) -> int:
    blocks = [bytearray(1 << 20) for _ in range(megabytes)]
    return len(blocks)


def _test_spin() -> None:
    while True:  # a pure CPU loop that allocates nothing
        pass


def _test_echo(value: Any) -> Any:
    return value


def _test_raise(message: str) -> None:
    raise ValueError(message)


def _test_recurse(depth: int) -> int:
    return 0 if depth == 0 else 1 + _test_recurse(depth - 1)


def _test_pid() -> int:
    return os.getpid()


TEST_FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (_test_sleep, _test_crash, _test_abort, _test_allocate, _test_spin, _test_echo,
                            _test_raise, _test_recurse, _test_pid)}


def test_mode() -> bool:
    """True when the test-only functions are enabled (never in production)."""
    return settings.sandbox_test_functions()


def _misbehave(how: str) -> None:
    if how == "crash":
        _test_crash()
    elif how == "hang":
        while True:
            time.sleep(0.05)
    else:
        _test_allocate(1 << 20)  # a terabyte: stops at the address-space limit


def _poisonable(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, except that an argument carrying a poison marker crashes, hangs or
    exhausts memory first: lets page tests open a pathological draft whatever the parsers do."""
    def run(*args: Any) -> Any:
        for arg in args:
            for marker, how in POISON.items():
                if isinstance(arg, str) and marker in arg:
                    _misbehave(how)
        return function(*args)
    return run


def functions() -> dict[str, tuple[str, str]]:
    """Every allow-listed function: :data:`FUNCTIONS` and the benchmarks' own (``SANDBOXED`` of
    their members, :mod:`structext_core.protocol`); a name may be declared once."""
    found = dict(FUNCTIONS)
    for name, target in protocol.declared("SANDBOXED").items():
        if name in found:
            raise protocol.RegistryError(f"the sandboxed function {name!r} is the studio's own; a benchmark "
                                         "may not declare it")
        module, _, attr = str(target).partition(":")
        found[name] = (module, attr)
    return found


def load_functions() -> dict[str, Callable[..., Any]]:
    """The allow-listed functions, imported now (and the test ones in test mode)."""
    loaded = {name: getattr(importlib.import_module(module), attr) for name, (module, attr) in functions().items()}
    if test_mode():
        loaded = {name: _poisonable(f) for name, f in loaded.items()} | TEST_FUNCTIONS
    return loaded


# ---------------------------------------------------------------- limits

def _watch_parent(parent: int) -> None:
    """Exit as soon as the server process is gone (checked twice a second, from a thread).

    A worker stuck in C code holds the interpreter; the CPU limit of :func:`cap_cpu` ends it."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _address_space_in_use() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


def cap_memory(limit: int) -> None:
    """Cap this process's address space at ``limit`` bytes (raises if it already uses more)."""
    in_use = _address_space_in_use()
    if limit < in_use + (64 << 20):
        raise RuntimeError(f"the memory budget of {limit >> 20} MB is below what a worker needs at rest "
                           f"({in_use >> 20} MB plus 64 MB); raise STRUCTEXT_SANDBOX_MEMORY_MB")
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def cap_cpu(seconds: float) -> None:
    """Let the next call use at most ``seconds`` more CPU seconds before the kernel stops the
    worker (a backstop: the pool's wall-clock timeout normally acts first)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(used + seconds) + 2
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


# ---------------------------------------------------------------- the loop

def answer(functions: dict[str, Callable[..., Any]], request: Any) -> tuple[bytes, str | None]:
    """Run one request: (the reply frame, the error kind or None).

    Every failure that leaves the process sound is an ``error`` reply, including a result
    too deep to pickle back."""
    try:
        name, args = request
        function = functions[name]
    except (TypeError, ValueError, KeyError):
        return dump(("error", "error", f"not an allowed request: {str(request)[:200]!r}")), "error"
    try:
        return dump(("ok", function(*args))), None
    except MemoryError:
        return dump(("error", "memory", "ran out of memory")), "memory"
    except RecursionError:
        return dump(("error", "nesting", "nested too deeply")), "nesting"
    except Exception as exc:  # a bug in a check: reported to the caller and logged here
        traceback.print_exc(file=sys.stderr)
        return dump(("error", "error", f"{type(exc).__name__}: {str(exc)[:500]}")), "error"


def serve(inp: BinaryIO, out: BinaryIO, functions: dict[str, Callable[..., Any]], cpu_seconds: float) -> None:
    """Answer requests until the pool closes the pipe (or a MemoryError leaves us unsound)."""
    while True:
        request = read_frame(inp)
        if request is None:
            return
        cap_cpu(cpu_seconds)
        reply, failure = answer(functions, request)
        out.write(reply)
        out.flush()
        if failure == "memory":
            return  # the pool replaces a worker that ran out of memory


def main(argv: list[str] | None = None) -> int:
    memory, cpu_seconds, parent = (argv or sys.argv[1:])[:3]
    _watch_parent(int(parent))
    # The protocol keeps private copies of stdin and stdout; whatever the core prints goes to stderr.
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb")  # buffered: writes every byte
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file
    try:
        try:
            functions = load_functions()
            cap_memory(int(memory))
        except Exception as exc:
            write_frame(out, ("failed", f"{type(exc).__name__}: {exc}"))
            return 1
        write_frame(out, ("ready", os.getpid()))
        serve(inp, out, functions, float(cpu_seconds))
    except BrokenPipeError:
        pass  # the pool stopped listening (shut down, or gave up on this call): nothing to say
    return 0


if __name__ == "__main__":
    sys.exit(main())
