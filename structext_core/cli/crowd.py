"""``python -m structext_core crowd``: several app processes on one database behind a sticky HAProxy.

One ``streamlit run server.py`` process uses one core (its page runs share one interpreter), so a
lab with a large crowd runs one process per core, each on its own port, on the one database, and a
proxy that keeps each browser on one process: a Streamlit session, and the files it hands out
(downloads, images), live in the process that holds its websocket.

- ``crowd start --processes N --port P``: writes ``<run-dir>/haproxy.cfg`` (from
  ``structext_core/data/haproxy.cfg.template``: cookie ``STRUCTEXT_NODE``, round robin, the
  websocket's tunnel timeout of a day), starts N app processes on ports P+1 .. P+N (``--app-port``
  moves them) bound to 127.0.0.1, waits until each answers its health check, then starts Debian's
  ``haproxy`` on P, and stays in the foreground until Ctrl-C, ``crowd stop`` or the end of one of
  them (then it stops the others and says which one ended, with its log's last lines).
- ``crowd stop``: stops the crowd started from the same ``--run-dir`` (its supervisor's pid is in
  ``crowd.pid``), and waits until every process has ended.
- ``crowd config``: prints the configuration ``start`` would write.

``start`` writes only files it recognises as its own: ``haproxy.cfg`` starts with :data:`HEADER`, and
each log (``app-a.log``, ..., ``haproxy.log``) with a first line :data:`LOG_HEADER` it writes before
the process's output. A file of one of those names that is not empty and lacks that first line (the
lab's own ``haproxy.log``), or is a link, stops ``start`` before anything is written or started, naming
it; so does a ``crowd.pid`` that holds more than a process id. ``--bind`` is an IP address or a host
name (:func:`check_bind`), refused otherwise before anything is checked or printed.

The app processes read the environment as one process does (``STRUCTEXT_DB`` and the others: the
same database for all; ``STRUCTEXT_SESSION_SECRET``, when set, is then the same for all). Every
child dies with the supervisor (``PR_SET_PDEATHSIG``), even if it is killed with SIGKILL.
"""

from __future__ import annotations

import ctypes
import errno
import ipaddress
import os
import re
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from structext_core.cli.main import UsageError
from structext_core.cli.progress import ProgressLine
from structext_core.evaluation import http_client

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server.py"  # the app as the README serves it: app.py and the clock's heartbeat route
TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "haproxy.cfg.template"
HEADER = "# HAProxy in front of"  # the first words of every configuration this command writes
#: The first words of every log this command writes (before the process's own output).
LOG_HEADER = "# structext_core crowd start: the log of "
COOKIE = "STRUCTEXT_NODE"
NODE_HEADER = "X-Structext-Node"  # the response header naming the process that answered
MAX_PROCESSES = 64
STARTUP_SECONDS = 120.0
STOP_SECONDS = 20.0
PID_FILE = "crowd.pid"
CONFIG_FILE = "haproxy.cfg"
INSTALL_HINT = "install it (Debian: apt-get install haproxy) or give its path with --haproxy"
_PR_SET_PDEATHSIG = 1
DEBIAN_SBIN = "/usr/sbin"
#: A host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123), 253 characters at most.
_HOST_NAME = re.compile(r"(?=.{1,253}\Z)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?\Z")


def check_bind(value: str) -> str:
    """``value`` when it is an IP address (v4 or v6) or a host name; else :class:`UsageError` naming
    ``--bind`` and the value (shown with its escapes: a newline in it is seen, never printed as one)."""
    text = value if isinstance(value, str) else ""
    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    if _HOST_NAME.match(text) and not text.replace(".", "").isdigit():
        return text
    shown = repr(text[:80]) + (" ..." if len(text) > 80 else "")
    raise UsageError(f"--bind {shown} is not an IP address or a host name: give one such as 0.0.0.0 "
                     "(every address), 127.0.0.1 or ::1")


def _bind_text(bind: str) -> str:
    """How HAProxy's ``bind`` line writes the address: an IPv6 address in brackets."""
    return f"[{bind}]" if ":" in bind else bind


def server_names(processes: int) -> list[str]:
    """The backends' names (and cookie values): a, b, c, ... then p27, p28, ..."""
    return [chr(ord("a") + i) if i < 26 else f"p{i + 1}" for i in range(processes)]


def app_ports(port: int, processes: int, app_port: int | None = None) -> list[int]:
    first = app_port if app_port is not None else port + 1
    return list(range(first, first + processes))


def haproxy_config(processes: int, port: int, app_port: int | None = None, bind: str = "0.0.0.0",
                   ports: list[int] | None = None) -> str:
    """The HAProxy configuration for ``processes`` app processes, the proxy on ``bind``:``port``; the
    apps on ``app_port`` and the next ones, or on ``ports`` (the benchmark's, each one the OS gave)."""
    bind = _bind_text(check_bind(bind))
    ports = ports if ports is not None else app_ports(port, processes, app_port)
    servers = "\n".join(f"    server {name} 127.0.0.1:{app} check cookie {name}"
                        for name, app in zip(server_names(processes), ports))
    return string.Template(TEMPLATE.read_text()).substitute(processes=processes, bind=bind, port=port,
                                                            servers=servers)


# ---------------------------------------------------------------------------------------- checks
def _check_counts(args) -> None:
    if not 1 <= args.processes <= MAX_PROCESSES:
        raise UsageError(f"--processes must be between 1 and {MAX_PROCESSES}, not {args.processes}")
    ports = [args.port, *app_ports(args.port, args.processes, args.app_port)]
    bad = [p for p in ports if not 1 <= p <= 65535]
    if bad:
        raise UsageError(f"port {bad[0]} is out of range (1-65535): choose another --port or --app-port")
    if args.port in ports[1:]:
        raise UsageError(f"the proxy's port {args.port} is also an app process's port: choose another --app-port")


def port_taken(host: str, port: int) -> bool:
    """Whether ``port`` on ``host`` is taken; :class:`UsageError` when ``host`` (the ``--bind``
    address) is none of this machine's or a name that does not resolve: that is no taken port."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except (socket.gaierror, UnicodeError):
        raise UsageError(f"--bind {host!r}: no address has that name (it does not resolve on this machine)") from None
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As the servers bind (SO_REUSEADDR): a port that only closed connections linger on is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRNOTAVAIL:
                raise UsageError(f"--bind {host!r} is no address of this machine: give one of its addresses, "
                                 "or 0.0.0.0 for every one") from None
            return True
    return False


def _url_host(bind: str) -> str:
    """The host part of a URL that reaches the proxy bound to ``bind``."""
    host = "127.0.0.1" if bind in ("0.0.0.0", "::") else bind
    return f"[{host}]" if ":" in host else host


def find_haproxy(name: str = "haproxy") -> str:
    """The haproxy executable: ``name`` as a path, or on PATH (Debian's in /usr/sbin, which a user's
    PATH may lack); a clear error when there is none."""
    path = name if os.sep in name else shutil.which(name) or shutil.which(name, path=DEBIAN_SBIN)
    if path is None or not os.access(path, os.X_OK):
        raise UsageError(f"haproxy was not found ({name!r} is not an executable on PATH): {INSTALL_HINT}")
    return path


def _running_pid(run_dir: Path) -> int | None:
    """The pid in ``run_dir/crowd.pid`` when that process is alive and is a crowd, else None."""
    try:
        pid = int((run_dir / PID_FILE).read_text().strip())
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except (OSError, ValueError):
        return None
    return pid if b"structext_core crowd start" in command else None


def _first_line(path: Path) -> str:
    with open(path, "rb") as file:
        return file.readline(512).decode("utf-8", "replace")


def not_ours(run_dir: Path, processes: int) -> list[str]:
    """The files ``start`` would write in ``run_dir`` that are there and not of its making: a link, a
    non-empty file without our first line (the configuration's :data:`HEADER`, a log's
    :data:`LOG_HEADER`), a ``crowd.pid`` that holds more than a process id, or something that is no file."""
    found = []
    logs = [f"app-{name}.log" for name in server_names(processes)] + ["haproxy.log"]
    for name, header in [(CONFIG_FILE, HEADER), *((log, LOG_HEADER) for log in logs), (PID_FILE, None)]:
        path = run_dir / name
        if not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink() or not path.is_file():
            found.append(name)
            continue
        try:
            if path.stat().st_size == 0:
                continue
            first = _first_line(path)
        except OSError:
            found.append(name)
            continue
        if (header is None and not re.fullmatch(r"\d{1,10}\n?", first)) or (header and not first.startswith(header)):
            found.append(name)
    return found


def _check_own_files(run_dir: Path, processes: int) -> None:
    """Refuse to start when a file ``start`` would write is there and is not its own (see the module notes)."""
    if not run_dir.is_dir():
        return
    foreign = not_ours(run_dir, processes)
    if foreign:
        raise UsageError(f"{', '.join(foreign)} in {run_dir} {'exists' if len(foreign) == 1 else 'exist'} and "
                         f"{'was' if len(foreign) == 1 else 'were'} not written by this command: nothing is "
                         "overwritten; choose another --run-dir or move the file away")


def _write_config(path: Path, text: str) -> None:
    """Write our configuration; a file there that this command did not write is left alone."""
    if path.is_symlink() or (path.exists() and not path.read_text(errors="replace").startswith(HEADER)):
        raise UsageError(f"{path} exists and was not written by this command: choose another --run-dir")
    # A temporary name of its own (never one the lab may use), then renamed over ours.
    handle, temporary = tempfile.mkstemp(prefix=".haproxy.cfg.", dir=path.parent)
    with os.fdopen(handle, "w") as file:
        file.write(text)
    os.replace(temporary, path)


# ---------------------------------------------------------------------------------------- processes
def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _open_log(log: Path, what: str):
    """Our log ``log``, emptied, opened for appending with :data:`LOG_HEADER` as its first line.
    A link is never followed (``O_NOFOLLOW``)."""
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    out = os.fdopen(descriptor, "wb")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out.write(f"{LOG_HEADER}{what}, started {stamp}\n".encode())
    out.flush()
    return out


def _spawn(command: list[str], log: Path, what: str = "a process") -> subprocess.Popen:
    with _open_log(log, what) as out:
        # Its own session: Ctrl-C reaches the supervisor only, which stops the proxy first, then the apps.
        return subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_die_with_parent)


def _healthy(url: str) -> bool:
    """Whether the app at ``url`` says it is healthy within 2 s (the whole request, reply included)."""
    try:
        _, reply = http_client.fetch(f"{url}/_stcore/health", timeout=2, max_bytes=64)
    except http_client.EndpointError:
        return False
    return reply.strip() == b"ok"


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class Crowd:
    """The running processes: (name, process, log) of each app, then the proxy."""

    def __init__(self):
        self.children: list[tuple[str, subprocess.Popen, Path]] = []

    def add(self, name: str, command: list[str], log: Path) -> subprocess.Popen:
        process = _spawn(command, log, name)
        self.children.append((name, process, log))
        return process

    def ended(self) -> tuple[str, subprocess.Popen, Path] | None:
        return next((child for child in self.children if child[1].poll() is not None), None)

    def stop(self) -> None:
        """The proxy first (no new request reaches a stopping app), then the apps; SIGKILL after
        STOP_SECONDS."""
        for _, process, _ in reversed(self.children):
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_SECONDS
        for _, process, _ in reversed(self.children):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_healthy(crowd: Crowd, urls: list[tuple[str, str]], progress: ProgressLine) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    waiting = list(urls)
    while waiting:
        ended = crowd.ended()
        if ended is not None:
            name, process, log = ended
            raise RuntimeError(f"{name} ended with exit status {process.returncode} while starting; "
                               f"the end of {log}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{waiting[0][0]} did not answer on {waiting[0][1]} within {STARTUP_SECONDS:g} s")
        waiting = [(name, url) for name, url in waiting if not _healthy(url)]
        progress.update(len(urls) - len(waiting))
        if waiting:
            time.sleep(0.3)


class _Stop(Exception):
    """SIGTERM (``crowd stop``) reached the supervisor."""


def _on_term(signum, frame):
    raise _Stop()


def start(args) -> int:
    check_bind(args.bind)
    _check_counts(args)
    haproxy = find_haproxy(args.haproxy)
    if not SERVER.is_file():
        raise UsageError(f"{SERVER} is missing: the crowd serves the app of a checkout (streamlit run server.py)")
    ports = app_ports(args.port, args.processes, args.app_port)
    for port, who in [(args.port, f"the proxy ({args.bind})"), *((p, "an app process") for p in ports)]:
        if port_taken(args.bind if port == args.port else "127.0.0.1", port):
            raise UsageError(f"port {port}, for {who}, is taken: choose another "
                             f"{'--port' if port == args.port else '--app-port'} or stop what listens there")
    run_dir = Path(args.run_dir).resolve()  # the children run in the checkout: every path absolute
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"--run-dir {run_dir} is not a folder")
    running = _running_pid(run_dir)
    if running is not None:
        raise UsageError(f"a crowd started from {run_dir} still runs (pid {running}): "
                         f"stop it first with `python -m structext_core crowd stop --run-dir {run_dir}`")
    _check_own_files(run_dir, args.processes)
    run_dir.mkdir(parents=True, exist_ok=True)
    config = run_dir / CONFIG_FILE
    _write_config(config, haproxy_config(args.processes, args.port, args.app_port, args.bind))
    checked = subprocess.run([haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
    if checked.returncode != 0:
        raise UsageError(f"haproxy refused {config}:\n{(checked.stdout + checked.stderr).strip()}")

    crowd = Crowd()
    previous = signal.signal(signal.SIGTERM, _on_term)
    status = 0
    try:
        for name, port in zip(server_names(args.processes), ports):
            crowd.add(f"app process {name} (port {port})",
                      [sys.executable, "-m", "streamlit", "run", str(SERVER), "--server.port", str(port),
                       "--server.address", "127.0.0.1", "--server.headless", "true",
                       "--browser.gatherUsageStats", "false"], run_dir / f"app-{name}.log")
        _wait_healthy(crowd, [(f"app process {n}", f"http://127.0.0.1:{p}")
                              for n, p in zip(server_names(args.processes), ports)],
                      ProgressLine("starting the app processes", args.processes))
        crowd.add(f"haproxy (port {args.port})", [haproxy, "-db", "-f", str(config)], run_dir / "haproxy.log")
        host = _url_host(args.bind)
        _wait_healthy(crowd, [("haproxy", f"http://{host}:{args.port}")], ProgressLine("starting haproxy", 1))
        (run_dir / PID_FILE).write_text(f"{os.getpid()}\n")
        print(f"serving {args.processes} app process{'es' if args.processes > 1 else ''} (ports "
              f"{', '.join(map(str, ports))}) behind haproxy at http://{host}:{args.port}; logs and "
              f"configuration in {run_dir}. Ctrl-C or `python -m structext_core crowd stop --run-dir {run_dir}` "
              f"stops them all.", flush=True)
        while (ended := crowd.ended()) is None:
            time.sleep(0.5)
        name, process, log = ended
        print(f"error: {name} ended with exit status {process.returncode}; stopping the others. "
              f"The end of {log}:\n{_tail(log)}", file=sys.stderr)
        status = 1
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        status = 1
    except (KeyboardInterrupt, _Stop):
        print("stopping the crowd ...", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second stop does not cut the clean-up short
        crowd.stop()
        signal.signal(signal.SIGTERM, previous)
        if _running_pid(run_dir) == os.getpid():
            (run_dir / PID_FILE).unlink(missing_ok=True)
    print(f"stopped: {len(crowd.children)} process{'es' if len(crowd.children) != 1 else ''} ended", file=sys.stderr)
    return status


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a process that ended but is not yet reaped by its parent does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop(args) -> int:
    run_dir = Path(args.run_dir).resolve()  # the children run in the checkout: every path absolute
    pid = _running_pid(run_dir)
    if pid is None:
        raise UsageError(f"no crowd started from {run_dir} is running (no live pid in {run_dir / PID_FILE})")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        print(f"error: the crowd (pid {pid}) is still stopping after {STOP_SECONDS + 10:g} s", file=sys.stderr)
        return 1
    print(f"stopped the crowd started from {run_dir} (pid {pid})")
    return 0


def config(args) -> int:
    check_bind(args.bind)
    _check_counts(args)
    sys.stdout.write(haproxy_config(args.processes, args.port, args.app_port, args.bind))
    return 0


def register(subparsers) -> None:
    """``crowd start|stop|config``."""
    crowd = subparsers.add_parser("crowd", help="several app processes on one database behind a sticky HAProxy",
                                  description=__doc__.split("\n\n")[0])
    verbs = crowd.add_subparsers(dest="crowd_command", required=True)

    def common(parser, *, ports: bool) -> None:
        parser.add_argument("--run-dir", default="structext-crowd",
                            help="the folder of the configuration, the logs and the pid (default structext-crowd)")
        if ports:
            parser.add_argument("--processes", type=int, default=2, help="app processes (default 2: one per core)")
            parser.add_argument("--port", type=int, default=8500, help="the proxy's port (default 8500)")
            parser.add_argument("--app-port", type=int, default=None,
                                help="the first app process's port (default: the proxy's + 1), then one more each")
            parser.add_argument("--bind", default="0.0.0.0", help="the proxy's address (default 0.0.0.0: every one)")

    begin = verbs.add_parser("start", help="start the app processes and haproxy; stay until Ctrl-C or `crowd stop`")
    common(begin, ports=True)
    begin.add_argument("--haproxy", default="haproxy", help="the haproxy executable (default: haproxy on PATH)")
    begin.set_defaults(func=start)
    end = verbs.add_parser("stop", help="stop the crowd started from --run-dir")
    common(end, ports=False)
    end.set_defaults(func=stop)
    show = verbs.add_parser("config", help="print the HAProxy configuration that start writes")
    common(show, ports=True)
    show.set_defaults(func=config)
