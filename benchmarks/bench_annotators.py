"""Many annotators at a human pace against one or more running servers on one database.

Starts ``--processes`` servers (``streamlit run server.py``, the README's command, or ``--entry app.py``; one per port) on a private database
with a Test-Hard study, then puts ``--annotators`` simulated people on them, round-robin (a
sticky proxy does the same: a person stays on one process), each over its own websocket
speaking the browser's protocol (benchmarks/st_client.py): log in, open Human baseline, accept
the rule, then every 10-20 s (``--pace``) type the question's answer and submit it. The question
page's clock component sends its heartbeat every ``beat_ms`` its data says
(``STRUCTEXT_HEARTBEAT_SECONDS``, 5 s), as its script does in a browser (the time on screen ticks
in the browser); fragments with a ``run_every`` rerun at the interval the server asks for. The
measured window starts once everyone is logged in.

Printed, per run: submit -> next question latency (from the click until the next question's run
has finished) and the fragment run latency by interval, each p50/p95/max; the servers' CPU use;
their memory (RSS) and open files, sampled every 10 s; memory per session (the servers' RSS
growth from one warm session per process to everyone on a question, divided by the sessions
added: an upper bound, as freed memory is not always given back); and the checks: every
acknowledged answer (the "Saved your answer" toast) is one row in the database, per annotator
(0 lost, 0 doubled), no errors, and ``PRAGMA integrity_check`` is ok.

``--soak MINUTES`` is the long run: 100 annotators (unless ``--annotators`` says otherwise)
for MINUTES (30 unless given), with the RSS and open-file series printed and a verdict on
whether they stay flat after the warm-up.

    .venv/bin/python benchmarks/bench_annotators.py                         # 50 annotators, 120 s, 1 process
    .venv/bin/python benchmarks/bench_annotators.py --annotators 50 100 200 --seconds 120
    .venv/bin/python benchmarks/bench_annotators.py --annotators 150 --processes 2
    .venv/bin/python benchmarks/bench_annotators.py --soak 30               # 100 annotators, 30 minutes
    .venv/bin/python benchmarks/bench_annotators.py --annotators 300 --processes 2 --seconds 60 --through-proxy

``--through-proxy`` makes each run twice, side by side: straight to the processes (each simulated
person on one process, round robin), then through Debian's HAProxy with the configuration of
``python -m structext_core crowd`` (structext_core/cli/crowd.py): each person loads the page first
(the proxy's cookie ``STRUCTEXT_NODE``), and its websocket and heartbeats carry the cookie, as a
browser's do. The proxy's own CPU is printed too; a last table puts the two runs side by side.

``--participants N`` is the crowd arriving by a study link (issue 45) instead of annotators logging
in. The study (Test-Hard, one lab annotator in it) gets, by the core functions, a study link of
``--places`` places (N unless given) that takes Prolific's parameters, a consent text and a short
questionnaire (expertise: a choice; years of practice: a number). N + ``--extra`` people arrive at
random times (uniform, seeded) within ``--ramp`` seconds: each loads the page at the link's address
with its own ``PROLIFIC_PID`` (and ``STUDY_ID``, ``SESSION_ID``) as the platform sends it (through
the proxy: its cookie, as above), opens its websocket at that address (the first run asks for the
page by its path and sends the query string, as a browser's does) and is enrolled in that run (the
resume code shown); the same websocket, logged in by the enrolment, goes on: "Go on to the study",
the consent accepted, the questionnaire sent, the rule accepted, each after 5-15 s of reading
(``--read-min``/``--read-max``: a person reads a consent text, a questionnaire and a rule; 2-5 s puts
every arrival's five steps into the ramp and is the stress case); then an answer every ``--pace-min``-``--pace-max`` s with the
clock's heartbeats, as above, until ``--seconds`` after the ramp. Those beyond the places are
refused in their first run with the page's "This study is full" message: counted as refusals, not
problems. Each process is warmed first, not counted: the lab's pilot annotator logs in and opens the
join page and Human baseline (a lead trying the study before the link goes out).

Printed: every step's time (the run a click asks for, until it has finished; arrive: from the page's
HTTP GET to the end of the enrolling run) p50/p95/max, the heartbeats, the servers' and the proxy's
CPU, the arrivals by process; the database's count of the link's participants (exactly the places),
of those kept with the platform's three parameters, in the study, consented, with the questionnaire
sent and its answers, the refusals; every acknowledged answer one row (0 lost, 0 unacknowledged),
no errors, ``PRAGMA integrity_check``; one line per goal (met / NOT met). The exit status is 1 when a
goal is not met. With ``--through-proxy`` a participants run goes through the proxy only.

    .venv/bin/python benchmarks/bench_annotators.py --participants 20 --extra 2 --ramp 20 --seconds 30
    .venv/bin/python benchmarks/bench_annotators.py --participants 20 --extra 2 --ramp 20 --seconds 30 \\
        --processes 2 --through-proxy
    # issue 45's figure (on a quiet machine): 320 arrive within 60 s for 300 places, 2 processes behind HAProxy
    .venv/bin/python benchmarks/bench_annotators.py --participants 300 --extra 20 --ramp 60 --seconds 120 \\
        --processes 2 --through-proxy
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from st_client import StreamlitClient

from structext_core.cli import crowd
from structext_core.cli.main import UsageError
from structext_core.structext_eval import (
    samples,
    suites,
)
from structext_core.structext_eval import study as structext_study
from structext_core.studio import accounts, storage
from structext_core.studio.crowd import consent, links, questionnaire
from structext_core.text.safe_text import markdown_text

ROOT = Path(__file__).resolve().parents[1]

GOAL_P95 = 1.0
GOAL_SESSION_MB = 10.0
PASSWORD = "annotator-password"
SUBMIT_LABEL = "Submit answer"
SAVED = "Saved your answer to"
SAMPLE_SECONDS = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prepare(base: Path, n_annotators: int, n_items: int) -> dict:
    """A database with ``n_annotators`` annotators in one Test-Hard study, and the suite."""
    data_dir = base / "suites"
    data_dir.mkdir()
    rows = suites.generate_suite("test-hard", seed=0)
    samples.write_jsonl(data_dir / "test-hard.jsonl", rows)
    db = storage.open_db(base / "structext.db")
    ids = [accounts.create_user(db, f"ann{i:03d}", PASSWORD, "annotator")["id"] for i in range(n_annotators)]
    structext_study.create_study(db, name="bench", suite="test-hard", samples=rows, n_items=min(n_items, len(rows)),
                       annotator_ids=ids, seed=0)
    db.conn.close()
    answers = {row["question"]: row["answer"] for row in rows}
    return {"db": base / "structext.db", "data_dir": data_dir, "answers": answers}


def start_server(base: Path, paths: dict, port: int, entry: str = "server.py") -> subprocess.Popen:
    env = {**os.environ, "STRUCTEXT_DB": str(paths["db"]), "STRUCTEXT_DATA_DIR": str(paths["data_dir"]),
           "STRUCTEXT_ADMIN_USER": "admin", "STRUCTEXT_ADMIN_PASSWORD": "admin-password-1",
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = open(base / f"server-{port}.log", "w")
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / entry), "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )


def wait_healthy(base: Path, port: int, server: subprocess.Popen) -> None:
    deadline = time.time() + 90
    while time.time() < deadline:
        if server.poll() is not None:
            break
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server on port {port} did not start; see {base / f'server-{port}.log'}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_files(pid: int, db_path: Path) -> tuple[int, int]:
    """(open file descriptors of the process, those on the database, its WAL or shared memory)."""
    total = on_db = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        total += 1
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(db_path)):
                on_db += 1
        except OSError:
            continue
    return total, on_db


@dataclass
class Sample:
    at: float
    rss_mb: float
    fds: int
    db_fds: int
    submits: int


@dataclass
class Tally:
    submits: list[float] = field(default_factory=list)  # latencies of measured submits
    acked: dict[str, int] = field(default_factory=dict)  # user name -> acknowledged answers
    unacked: int = 0  # submits whose run said nothing about being saved
    problems: list[str] = field(default_factory=list)
    clients: list[StreamlitClient] = field(default_factory=list)
    ready: int = 0  # annotators on their first question
    measuring: bool = False
    sticky: bool = False  # through the proxy: each person loads the page first, for the proxy's cookie


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def describe(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: none"
    return (f"{name}: n={len(values):,}  p50 {statistics.median(values) * 1000:,.0f} ms  "
            f"p95 {percentile(values, 0.95) * 1000:,.0f} ms  max {max(values) * 1000:,.0f} ms")


def sample(pids: list[int], db_path: Path, started: float, submits: int) -> Sample:
    files = [open_files(pid, db_path) for pid in pids]
    return Sample(time.time() - started, sum(rss_mb(pid) for pid in pids), sum(f[0] for f in files),
                  sum(f[1] for f in files), submits)


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) points, per minute."""
    if len(points) < 2:
        return float("nan")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 60 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


async def simulate(urls: list[str], answers: dict, args: argparse.Namespace, n: int, seconds: float,
                   pids: list[int], db_path: Path) -> dict:
    tally = Tally()
    tally.sticky = bool(getattr(args, "via_proxy", False))
    ramp = args.ramp
    starts = [asyncio.Event() for _ in range(n)]
    stop_box = {"at": time.time() + 3600 * 24}  # set once everyone is in

    async def one(i: int) -> None:
        # The end is read through the box: it is known only when the ramp is over.
        await starts[i].wait()
        await annotator_until(i, urls[i % len(urls)], answers, (args.pace_min, args.pace_max), _StopAt(stop_box),
                              random.Random(i), tally)

    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    began = time.time()
    # One warm session per process first: memory per session is measured from there.
    warm = min(len(pids), n)  # one per process (through the proxy, round robin spreads the first ones)
    for i in range(warm):
        starts[i].set()
    while tally.ready < warm and time.time() - began < 120:
        await asyncio.sleep(0.2)
    await asyncio.sleep(2)
    rss_warm = sum(rss_mb(pid) for pid in pids)
    for i in range(warm, n):
        await asyncio.sleep(ramp / max(1, n - warm))
        starts[i].set()
    while tally.ready + len(tally.problems) < n and time.time() - began < ramp + 300:
        await asyncio.sleep(0.2)
    await asyncio.sleep(2)
    rss_all = sum(rss_mb(pid) for pid in pids)
    per_session = (rss_all - rss_warm) / max(1, n - warm)
    stop_box["at"] = time.time() + seconds
    tally.measuring = True
    cpu_start, wall_start = sum(cpu_seconds(pid) for pid in pids), time.time()
    fragments_before = {id(c): {k: len(v) for k, v in c.fragment_latencies_by_interval.items()}
                        for c in tally.clients}
    series = [sample(pids, db_path, wall_start, 0)]
    while time.time() < stop_box["at"]:
        await asyncio.sleep(min(SAMPLE_SECONDS, max(0.05, stop_box["at"] - time.time())))
        series.append(sample(pids, db_path, wall_start, len(tally.submits)))
        if args.soak:
            s = series[-1]
            print(f"  {s.at:7.0f} s  RSS {s.rss_mb:8.1f} MB  open files {s.fds:5d} (database {s.db_fds:4d})  "
                  f"submits {s.submits:6d}  load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    cpu_used, wall = sum(cpu_seconds(pid) for pid in pids) - cpu_start, time.time() - wall_start
    fragments: dict[float | str, list[float]] = {}
    for c in tally.clients:
        before = fragments_before.get(id(c), {})
        for interval, values in c.fragment_latencies_by_interval.items():
            fragments.setdefault(interval, []).extend(values[before.get(interval, 0):])
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            tally.problems.append(repr(result))
    return {"tally": tally, "fragments": fragments, "cpu": cpu_used, "wall": wall, "series": series,
            "rss_warm": rss_warm, "rss_all": rss_all, "per_session": per_session, "warm": warm}


class _StopAt:
    """The end of the measured window, read when needed (it is set after the ramp)."""

    def __init__(self, box: dict):
        self.box = box

    def __call__(self) -> float:
        return self.box["at"]


async def annotator_until(index: int, url: str, answers: dict, pace: tuple[float, float], stop_at: _StopAt,
                          rng: random.Random, tally: Tally) -> None:
    name = f"ann{index:03d}"
    cookies = {}
    if tally.sticky:  # as a browser: the page first, whose answer sets the proxy's cookie
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            cookies = dict((await http.get("/")).cookies)
        if crowd.COOKIE not in cookies:
            tally.problems.append(f"{name}: the proxy set no {crowd.COOKIE} cookie")
    client = StreamlitClient(url, cookies=cookies)
    tally.clients.append(client)
    await client.connect()
    try:
        await client.run()
        client.type_text("User name", name)
        client.type_text("Password", PASSWORD)
        await client.click("Log in")
        await client.open_page("Human baseline")
        if "I have read the rule: start" in client.widgets:
            await client.click("I have read the rule: start")
        tally.acked.setdefault(name, 0)
        tally.ready += 1
        await answer_until(client, name, answers, pace, stop_at, rng, tally)
    finally:
        await client.close()


async def answer_until(client: StreamlitClient, name: str, answers: dict, pace: tuple[float, float],
                       stop_at, rng: random.Random, tally: Tally) -> None:
    """From the first question on: the clock's heartbeats, and an answer every ``pace`` seconds until
    ``stop_at()``; each acknowledged one counted under ``name`` in ``tally.acked``."""
    beats = asyncio.create_task(heartbeats(client, stop_at))
    try:
        while time.time() < stop_at():
            await asyncio.sleep(min(rng.uniform(*pace), max(0.0, stop_at() - time.time())))
            if time.time() >= stop_at():
                break
            question = next((q for q in client._texts if q in answers), None)
            label = next((w for w in client.widgets if w.startswith("Your answer")), None)
            if label is None or SUBMIT_LABEL not in client.widgets:
                tally.problems.append(f"{name}: no answer box on the page")
                break
            client.type_text(label, answers.get(question, "an answer"))
            result = await client.click(SUBMIT_LABEL)
            if any(text.startswith(SAVED) for text in result.texts):
                tally.acked[name] += 1
            else:
                tally.unacked += 1
            if tally.measuring:
                tally.submits.append(result.seconds)
    finally:
        beats.cancel()


CLOCK = "structext_question_clock"
HEARTBEAT = "heartbeat"  # the key of the clock's heartbeats among the fragment latencies


ROUTED = "routed heartbeat"  # the key of heartbeats posted to the clock's route (server.py)
RECHECK_SECONDS = 1.5  # structext_core/ui/clock.py's RECHECK_MS
ANSWERED_RECHECK_SECONDS = 10.0  # and its ANSWERED_RECHECK_MS
RECHECK_AGAIN_SECONDS = 3.0  # and its RECHECK_AGAIN_MS


async def heartbeats(client: StreamlitClient, stop_at: _StopAt) -> None:
    """The question page's clock, as its script does in a browser (structext_core/ui/clock.py): a
    heartbeat every ``beat_ms`` (its data says), posted to the clock's route when the data
    names one (``streamlit run server.py``) and the page stays as it is unless the answer's
    state is not one of ``stay``; else (``streamlit run app.py``), or when the route fails or
    says the page must change, the state ``beat`` of the component: one run of its fragment."""
    seq = 0
    rechecked = None  # the reply (stamp) a fragment run was last asked for
    recheck_due = 0.0  # and when that run was asked for
    async with httpx.AsyncClient(base_url=client.base_url, timeout=30, cookies=client.cookies) as http:
        while time.time() < stop_at():
            clock = client.components.get(CLOCK)
            interval = (clock.data or {}).get("beat_ms", 5000) / 1000 if clock else 5.0
            await asyncio.sleep(interval)
            clock = client.components.get(CLOCK)
            if clock is None or time.time() >= stop_at():
                continue
            data = clock.data or {}
            route = data.get("beat")
            if route:
                started = time.perf_counter()
                try:
                    response = await http.post(route["url"], json={
                        "kind": route["kind"], "item": route["item"], "tab": route["tab"], "visible": True,
                        "pass": route["pass"]})
                except httpx.HTTPError as error:
                    client.errors.append(f"routed heartbeat: {error!r}")
                    return
                client.fragment_latencies_by_interval.setdefault(ROUTED, []).append(time.perf_counter() - started)
                state = response.json().get("state") if response.status_code == 200 else None
                if state in route["stay"]:
                    continue
                # As the page's script does: a run of the fragment only if no reply of the server
                # moved the page on meanwhile (an answer just submitted), one per reply, asked
                # again only when no new reply came RECHECK_AGAIN_SECONDS after it was asked for.
                if rechecked == data.get("stamp") and time.time() < recheck_due + RECHECK_AGAIN_SECONDS:
                    continue
                wait = ANSWERED_RECHECK_SECONDS if state == "answered" else RECHECK_SECONDS
                rechecked, recheck_due = data.get("stamp"), time.time() + wait
                await asyncio.sleep(wait)
                now = client.components.get(CLOCK)
                if now is None or (now.data or {}).get("stamp") != data.get("stamp") \
                        or (now.data or {}).get("assignment") != data.get("assignment"):
                    continue
            seq += 1
            try:
                result = await client.set_component_state(
                    CLOCK, {"beat": {"assignment": data.get("assignment"), "seq": seq, "visible": True}})
            except (asyncio.TimeoutError, OSError) as error:
                client.errors.append(f"heartbeat: {error!r}")
                return
            client.fragment_latencies.append(result.seconds)
            client.fragment_latencies_by_interval.setdefault(HEARTBEAT, []).append(result.seconds)


def database_checks(db_path: Path, acked: dict[str, int]) -> tuple[dict[str, int], str]:
    conn = sqlite3.connect(str(db_path), timeout=30)
    try:
        rows = dict(conn.execute("SELECT u.username, COUNT(r.id) FROM users u JOIN responses r ON r.user_id = u.id"
                                 " GROUP BY u.username").fetchall())
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()
    return rows, integrity


#: The fixed work of :func:`machine_pace`.
PACE_LOOP = 3_000_000


def machine_pace() -> float:
    """Milliseconds of a fixed pure-Python loop (the median of five), timed with nothing of the benchmark
    running. This project's machine is shared, and its pace changes by the hour with nothing of ours
    running (4 December 2026, Python 3.11: 25 ms at 12:17 UTC, 52 to 66 ms at 12:45), and the figures
    with it (one checkout: p95 0.58 s and 1.12 s within the hour): a run's figures are compared with
    another's at the same pace."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        sum(range(PACE_LOOP))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def report(args: argparse.Namespace, n: int, processes: int, seconds: float, out: dict, rows: dict[str, int],
           integrity: str) -> dict:
    tally: Tally = out["tally"]
    load = os.getloadavg()
    route = "through HAProxy (the crowd's configuration)" if getattr(args, "via_proxy", False) else \
        "straight to the processes"
    print(f"\n== {n} annotators on {processes} process{'es' if processes > 1 else ''} (streamlit run {args.entry}), "
          f"{route}, "
          f"one database; an answer every "
          f"{args.pace_min:g}-{args.pace_max:g} s; {seconds:g} s measured after everyone logged in; "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if "pace" in out:
        before, after = out["pace"]
        print(f"the machine's pace: a fixed Python loop took {before:.1f} ms before the run and {after:.1f} ms "
              f"after it (less is faster; compare runs at the same pace)")
    print(describe("submit -> next question", tally.submits))
    slow = sum(1 for x in tally.submits if x > 1.0)
    print(f"  submits over 1 s: {slow:,}")
    names = {1.0: "clock (every 1 s)", 3.0: "pause watch (every 3 s)", 30.0: "progress panel (every 30 s)",
             HEARTBEAT: "clock component's heartbeat (a fragment run)",
             ROUTED: "clock's heartbeat posted to its route (no run)"}
    all_fragments = [x for key, values in out["fragments"].items() if key != ROUTED for x in values]
    for interval in sorted(out["fragments"], key=str):
        print(describe(f"fragment {names.get(interval, f'every {interval} s')}", out["fragments"][interval]))
    runs = len(tally.submits) + len(all_fragments) + len(out["fragments"].get(ROUTED, []))
    print(f"fragment runs done: {len(all_fragments) / out['wall']:.0f}/s; heartbeats posted to the route: "
          f"{len(out['fragments'].get(ROUTED, [])) / out['wall']:.0f}/s")
    print(f"server CPU: {out['cpu']:.1f} s over {out['wall']:.1f} s = {100 * out['cpu'] / out['wall']:.0f}% of one core"
          f" ({1000 * out['cpu'] / max(1, runs):.1f} ms per request: a page or fragment run, or a heartbeat posted to the route)")
    series: list[Sample] = out["series"]
    first, last = series[0], series[-1]
    print(f"memory: RSS {out['rss_warm']:.0f} MB with {out['warm']} warm session(s), {out['rss_all']:.0f} MB with all "
          f"{n} on a question: {out['per_session']:.2f} MB per session (goal <= {GOAL_SESSION_MB:g} MB: "
          f"{'met' if out['per_session'] <= GOAL_SESSION_MB else 'NOT met'}); "
          f"{first.rss_mb:.0f} -> {last.rss_mb:.0f} MB over the window")
    print(f"open files: {first.fds} -> {last.fds} (on the database: {first.db_fds} -> {last.db_fds})")
    acked = sum(tally.acked.values())
    stored = sum(rows.values())
    lost = sum(max(0, tally.acked.get(k, 0) - rows.get(k, 0)) for k in set(tally.acked) | set(rows))
    extra = sum(max(0, rows.get(k, 0) - tally.acked.get(k, 0)) for k in set(tally.acked) | set(rows))
    print(f"answers: {acked:,} acknowledged, {stored:,} rows in the database ({lost} lost, {extra} not acknowledged "
          f"but stored); {tally.unacked} submits without an acknowledgement; integrity_check: {integrity}")
    errors = [e for c in tally.clients for e in c.errors]
    print(f"errors: {len(tally.problems) + len(errors)}")
    for problem in (tally.problems + errors)[:10]:
        print("  ", problem[:300])
    p95 = percentile(tally.submits, 0.95)
    print(f"goal: submit p95 <= {GOAL_P95:g} s: {'met' if tally.submits and p95 <= GOAL_P95 else 'NOT met'} "
          f"({p95:.3f} s)")
    if out.get("proxy_cpu") is not None:
        print(f"haproxy CPU: {out['proxy_cpu']:.1f} s over {out['wall']:.1f} s")
    if args.soak:
        soak_verdict(series)
    return {"route": route, "n": n, "processes": processes, "p50": percentile(tally.submits, 0.5), "p95": p95,
            "submits": len(tally.submits),
            "answers": acked, "lost": lost, "errors": len(tally.problems) + len(errors),
            "cpu": out["cpu"], "proxy_cpu": out.get("proxy_cpu")}


def soak_verdict(series: list[Sample]) -> None:
    print("series (s, RSS MB, open files, on the database, submits):")
    for s in series:
        print(f"  {s.at:7.0f}  {s.rss_mb:8.1f}  {s.fds:5d}  {s.db_fds:4d}  {s.submits:6d}")
    warm = [s for s in series if s.at >= min(300.0, series[-1].at / 4)]  # after 5 minutes (or a quarter)
    if len(warm) < 2:
        return
    rss = slope_per_minute([(s.at, s.rss_mb) for s in warm])
    fds = slope_per_minute([(s.at, s.fds) for s in warm])
    print(f"after warm-up ({warm[0].at:.0f} s on): RSS {warm[0].rss_mb:.1f} -> {warm[-1].rss_mb:.1f} MB "
          f"(max {max(s.rss_mb for s in warm):.1f}), slope {rss:+.2f} MB/min; open files {warm[0].fds} -> "
          f"{warm[-1].fds} (max {max(s.fds for s in warm)}), slope {fds:+.2f}/min; database files max "
          f"{max(s.db_fds for s in warm)}")


def start_proxy(base: Path, ports: list[int]) -> tuple[subprocess.Popen, int]:
    """Debian's haproxy with the crowd's configuration in front of the servers on ``ports``."""
    haproxy = crowd.find_haproxy("haproxy")
    port = free_port()
    config = base / "haproxy.cfg"
    config.write_text(crowd.haproxy_config(len(ports), port, bind="127.0.0.1", ports=ports))
    log = open(base / "haproxy.log", "w")
    proxy = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    wait_healthy(base, port, proxy)
    return proxy, port


@contextlib.contextmanager
def servers_up(base: Path, paths: dict, processes: int, entry: str, via_proxy: bool):
    """``processes`` servers on the database of ``paths`` (and HAProxy in front of them when
    ``via_proxy``), stopped on leaving: yields (the addresses people open, the servers, the proxy or None,
    each server's own address)."""
    ports = [free_port() for _ in range(processes)]
    servers = [start_server(base, paths, port, entry) for port in ports]
    proxy = None
    try:
        for port, server in zip(ports, servers):
            wait_healthy(base, port, server)
        direct = [f"http://127.0.0.1:{port}" for port in ports]
        urls = direct
        if via_proxy:
            proxy, proxy_port = start_proxy(base, ports)
            urls = [f"http://127.0.0.1:{proxy_port}"]
        yield urls, servers, proxy, direct
    finally:
        for server in ([proxy] if proxy is not None else []) + servers:
            server.terminate()
        for server in ([proxy] if proxy is not None else []) + servers:
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()


def run_once(args: argparse.Namespace, n: int, processes: int, seconds: float) -> dict:
    items = max(args.items, math.ceil(seconds / args.pace_min) + 20)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        print(f"preparing the study ({n} annotators, {items} questions) ...", file=sys.stderr)
        paths = prepare(base, n, items)
        pace_before = machine_pace()
        with servers_up(base, paths, processes, args.entry, getattr(args, "via_proxy", False)) as (urls, servers,
                                                                                                  proxy, _):
            proxy_cpu = cpu_seconds(proxy.pid) if proxy is not None else 0.0
            out = asyncio.run(simulate(urls, paths["answers"], args, n, seconds, [s.pid for s in servers],
                                       paths["db"]))
            if proxy is not None:
                out["proxy_cpu"] = cpu_seconds(proxy.pid) - proxy_cpu  # from the start: logins included
        out["pace"] = (pace_before, machine_pace())
        rows, integrity = database_checks(paths["db"], out["tally"].acked)
        return report(args, n, processes, seconds, out, rows, integrity)


# ---------------------------------------------------------------- participants arriving by a study link

#: What the platform fills in for STUDY_ID (the same for everyone in one platform study).
PLATFORM_STUDY_ID = "bench-study-0001"
CONSENT_TEXT = ("## Taking part\n\nYou answer short puzzles **on your own**, without tools or the web. Your answers "
                "and the time you take are kept for research; your platform id is kept to pay you.\n\n"
                "You may stop at any time.")
QUESTIONNAIRE = [
    {"name": "expertise", "label": "How expert are you at puzzles like these?", "kind": "choice",
     "options": ["novice", "some", "expert"], "required": True},
    {"name": "years", "label": "Years of practice with such puzzles", "kind": "number", "min": 0, "max": 60,
     "required": True},
]
#: The labels the participant clicks (pages/join.py, structext_core/ui/crowd_gate.py, the rule screen).
GO_ON_LABEL = "Go on to the study"
AGREE_LABEL = "I agree: continue"
QUESTIONNAIRE_LABEL = "Continue"
RULE_LABEL = "I have read the rule: start"
FULL_PREFIX = "This study is full"
#: The steps timed, in a participant's order: the run a click asks for, until it has finished (arrive:
#: the page loaded at the link's address, the websocket opened and the first run, the enrolment in it).
STEPS = {"arrive": "arrive: page, websocket, enrolment (resume code shown)",
         "go on": "'Go on to the study' -> consent text",
         "consent": "consent accepted -> questionnaire",
         "questionnaire": "questionnaire sent -> the rule",
         "rule": "rule accepted -> first question",
         "submit": "submit -> next question"}


@dataclass
class CrowdTally(Tally):
    steps: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in STEPS})
    refused: list[str] = field(default_factory=list)  # the messages of the refused ("full")
    enrolled: int = 0  # shown a resume code
    page_loads: list[float] = field(default_factory=list)  # the HTTP GET of the link's address (part of arrive)
    routes: dict[str, int] = field(default_factory=dict)  # arrivals by process: the proxy's cookie, or the address
    chosen: dict[str, dict[str, str]] = field(default_factory=dict)  # external id -> questionnaire answers sent

    def __post_init__(self) -> None:
        self.steps["submit"] = self.submits  # the answering loop's own list (Tally.submits)


def prepare_participants(base: Path, places: int, n_items: int) -> dict:
    """A database with a Test-Hard study (one lab annotator in it: a study needs one to be made), a
    study link of ``places`` places that takes Prolific's parameters, a consent text and a short
    questionnaire, set by the core functions; the suite."""
    data_dir = base / "suites"
    data_dir.mkdir()
    rows = suites.generate_suite("test-hard", seed=0)
    samples.write_jsonl(data_dir / "test-hard.jsonl", rows)
    db = storage.open_db(base / "structext.db")
    pilot = accounts.create_user(db, "lab-pilot", PASSWORD, "annotator")["id"]
    study_id = structext_study.create_study(db, name="bench-crowd", suite="test-hard", samples=rows,
                                            n_items=min(n_items, len(rows)), annotator_ids=[pilot], seed=0)
    link = links.create_link(db, study_id, places=places, expires_at=None, id_param=links.PROLIFIC_ID_PARAM,
                             by=None)
    consent.set_consent(db, study_id, CONSENT_TEXT, by=None)
    questionnaire.set_questionnaire(db, study_id, QUESTIONNAIRE, by=None)
    db.conn.close()
    answers = {row["question"]: row["answer"] for row in rows}
    # The address the lead pastes into the platform, its placeholders as the platform sees them.
    address = links.link_url("", link.token, links.PROLIFIC_ID_PARAM)
    return {"db": base / "structext.db", "data_dir": data_dir, "answers": answers, "study_id": study_id,
            "address": address}


def platform_address(template: str, rng: random.Random) -> tuple[str, str]:
    """The link's address as the platform sends one person to it (Prolific's ids: 24 hex digits); and the id."""
    person = f"{rng.getrandbits(96):024x}"
    filled = {"PROLIFIC_PID": person, "STUDY_ID": PLATFORM_STUDY_ID, "SESSION_ID": f"{rng.getrandbits(96):024x}"}
    for name, value in filled.items():
        template = template.replace(f"{{{{%{name}%}}}}", value)
    return template, person


async def gate_step(client: StreamlitClient, tally: CrowdTally, who: str, step: str, label: str, expect: str,
                    reading: tuple[float, float], rng: random.Random) -> bool:
    """Read for a moment, click ``label`` and time the run; True when it drew ``expect``."""
    await asyncio.sleep(rng.uniform(*reading))
    result = await client.click(label)
    tally.steps[step].append(result.seconds)
    if client.drew(result, expect):
        return True
    tally.problems.append(f"{who}: after {step!r} no {expect!r}; the page said: {' | '.join(result.texts)[:300]}")
    return False


async def participant(index: int, url: str, template: str, answers: dict, args: argparse.Namespace, stop_at,
                      tally: CrowdTally) -> None:
    """One person sent by the platform: the page at the link's address, enrolment, go on, consent, the
    questionnaire, the rule, then answers at ``--pace`` until ``stop_at()``."""
    rng = random.Random(index)
    address, person = platform_address(template, rng)
    who = f"participant {index}"
    reading = (args.read_min, args.read_max)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:  # the browser loads the page first
        cookies = dict((await http.get(address)).cookies)
    tally.page_loads.append(time.perf_counter() - started)
    route = cookies.get(crowd.COOKIE, url)
    tally.routes[route] = tally.routes.get(route, 0) + 1
    if tally.sticky and crowd.COOKIE not in cookies:
        tally.problems.append(f"{who}: the proxy set no {crowd.COOKIE} cookie")
    client = StreamlitClient(url, cookies=cookies)
    tally.clients.append(client)
    try:
        await client.connect()
        result = await client.open_address(address)
        tally.steps["arrive"].append(time.perf_counter() - started)
        refusal = next((text for text in result.texts if text.startswith(FULL_PREFIX)), None)
        if refusal is not None:
            tally.refused.append(refusal)
            return
        if not client.drew(result, GO_ON_LABEL):
            tally.problems.append(f"{who}: not enrolled; the page said: {' | '.join(result.texts)[:300]}")
            return
        tally.enrolled += 1
        tally.acked[person] = 0
        if not (await gate_step(client, tally, who, "go on", GO_ON_LABEL, AGREE_LABEL, reading, rng)
                and await gate_step(client, tally, who, "consent", AGREE_LABEL, QUESTIONNAIRE_LABEL, reading, rng)):
            return
        expertise, years = rng.choice(QUESTIONNAIRE[0]["options"]), rng.randint(0, 30)
        client.choose(markdown_text(QUESTIONNAIRE[0]["label"]), expertise)
        client.type_number(markdown_text(QUESTIONNAIRE[1]["label"]), years)
        tally.chosen[person] = {"expertise": expertise, "years": str(years)}
        if not (await gate_step(client, tally, who, "questionnaire", QUESTIONNAIRE_LABEL, RULE_LABEL, reading, rng)
                and await gate_step(client, tally, who, "rule", RULE_LABEL, SUBMIT_LABEL, reading, rng)):
            return
        tally.ready += 1
        await answer_until(client, person, answers, (args.pace_min, args.pace_max), stop_at, rng, tally)
    finally:
        await client.close()


async def warm_up(direct: list[str]) -> None:
    """Each process once, straight (not counted): the lab's pilot annotator logs in, opens the join page
    and Human baseline (its consent screen), as a lead trying the study before the link goes out."""
    for url in direct:
        client = StreamlitClient(url)
        await client.connect()
        try:
            await client.run()
            client.type_text("User name", "lab-pilot")
            client.type_text("Password", PASSWORD)
            await client.click("Log in")
            await client.open_address("/join")
            await client.open_page("Human baseline")
        finally:
            await client.close()


async def simulate_participants(urls: list[str], paths: dict, args: argparse.Namespace, arrivals: int,
                                seconds: float) -> dict:
    """``arrivals`` people arriving at random times within ``--ramp`` seconds (each uniformly, seeded),
    each on the next address of ``urls`` (one: the proxy); everyone answers until ``seconds`` after the ramp."""
    tally = CrowdTally(measuring=True, sticky=bool(getattr(args, "via_proxy", False)))
    spread = random.Random(12345)
    offsets = sorted(spread.uniform(0, args.ramp) for _ in range(arrivals))
    began = time.time()
    end = began + args.ramp + seconds

    async def one(i: int) -> None:
        await asyncio.sleep(max(0.0, began + offsets[i] - time.time()))
        await participant(i, urls[i % len(urls)], paths["address"], paths["answers"], args, lambda: end, tally)

    results = await asyncio.gather(*(one(i) for i in range(arrivals)), return_exceptions=True)
    for i, result in enumerate(results):
        if isinstance(result, BaseException):
            tally.problems.append(f"participant {i}: {result!r}")
    return {"tally": tally, "wall": time.time() - began}


def participant_checks(db_path: Path, study_id: int) -> dict:
    """What the database holds of the link's participants: rows, consents, questionnaires, answers by external id."""
    conn = sqlite3.connect(str(db_path), timeout=30)
    members = ("FROM study_annotators sa JOIN participants p ON p.user_id = sa.user_id AND p.study_id = sa.study_id"
               " WHERE sa.study_id = ?")

    def one(sql: str) -> int:
        return conn.execute(sql, [study_id]).fetchone()[0]

    try:
        return {
            "participants": one("SELECT COUNT(*) FROM participants WHERE study_id = ?"),
            "with_platform_ids": conn.execute(  # the id and the platform's other parameters, as the address had them
                "SELECT COUNT(*) FROM participants WHERE study_id = ? AND length(external_id) = 24"
                " AND json_extract(params, '$.STUDY_ID') = ? AND json_extract(params, '$.SESSION_ID') IS NOT NULL",
                [study_id, PLATFORM_STUDY_ID]).fetchone()[0],
            "in_study": one(f"SELECT COUNT(*) {members}"),
            "consented": one(f"SELECT COUNT(*) {members} AND sa.consent_version IS NOT NULL"),
            "questionnaires": one(f"SELECT COUNT(*) {members} AND sa.questionnaire_at IS NOT NULL"),
            "answer_fields": one("SELECT COUNT(*) FROM questionnaire_answers WHERE study_id = ?"),
            "questionnaire_answers": conn.execute(
                "SELECT p.external_id, q.field, q.value FROM questionnaire_answers q JOIN participants p"
                " ON p.user_id = q.user_id AND p.study_id = q.study_id WHERE q.study_id = ?", [study_id]).fetchall(),
            "rows": dict(conn.execute(
                "SELECT p.external_id, COUNT(r.id) FROM participants p LEFT JOIN responses r"
                " ON r.user_id = p.user_id AND r.study_id = p.study_id WHERE p.study_id = ? GROUP BY p.external_id",
                [study_id]).fetchall()),
            "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0],
        }
    finally:
        conn.close()


def report_participants(args: argparse.Namespace, arrivals: int, places: int, processes: int, seconds: float,
                        out: dict, checks: dict) -> bool:
    """Print the run's figures and checks; True when every goal is met."""
    tally: CrowdTally = out["tally"]
    load = os.getloadavg()
    route = "through HAProxy (the crowd's configuration)" if getattr(args, "via_proxy", False) else \
        "straight to the processes (round robin)"
    print(f"\n== {arrivals} participants arriving by the study link within {args.ramp:g} s for {places} places, "
          f"{processes} process{'es' if processes > 1 else ''} (streamlit run {args.entry}) {route}, one database; "
          f"{args.read_min:g}-{args.read_max:g} s read before each step, then an answer every "
          f"{args.pace_min:g}-{args.pace_max:g} s until {seconds:g} s after the ramp; {os.cpu_count()} CPUs, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for step, name in STEPS.items():
        print(describe(name, tally.steps[step]))
        if step == "arrive":
            print("  " + describe("of which the page's HTTP GET", tally.page_loads))
    beats = [x for c in tally.clients for x in c.fragment_latencies_by_interval.get(HEARTBEAT, [])]
    routed = [x for c in tally.clients for x in c.fragment_latencies_by_interval.get(ROUTED, [])]
    print(describe("clock's heartbeat posted to its route", routed))
    print(describe("clock's heartbeat as a fragment run", beats))
    print(f"server CPU: {out['cpu']:.1f} s over {out['wall']:.1f} s = {100 * out['cpu'] / out['wall']:.0f}% of "
          f"one core; RSS at the end {out['rss']:.0f} MB")
    if out.get("proxy_cpu") is not None:
        print(f"haproxy CPU: {out['proxy_cpu']:.1f} s over {out['wall']:.1f} s")
    print("arrivals by process: " + ", ".join(f"{route} {count}" for route, count in sorted(tally.routes.items())))
    rows: dict = checks["rows"]
    acked = sum(tally.acked.values())
    stored = sum(rows.values())
    lost = sum(max(0, tally.acked.get(k, 0) - rows.get(k, 0)) for k in set(tally.acked) | set(rows))
    extra = sum(max(0, rows.get(k, 0) - tally.acked.get(k, 0)) for k in set(tally.acked) | set(rows))
    expected_in = min(arrivals, places)
    taken = "all taken" if checks["participants"] == places else f"{checks['participants']} taken"
    print(f"places: {checks['participants']} participants in the database for {places} places "
          f"({taken}); {tally.enrolled} shown a "
          f"resume code, {checks['with_platform_ids']} kept with the platform's PROLIFIC_PID, STUDY_ID and "
          f"SESSION_ID; {len(tally.refused)} refused as full (expected {arrivals - expected_in}); "
          f"{checks['in_study']} in the study, {checks['consented']} consented, {checks['questionnaires']} "
          f"questionnaires sent ({checks['answer_fields']} answers); {tally.ready} reached the questions")
    if tally.refused:
        print(f"  the refusal said: {tally.refused[0]!r}")
    kept: dict[str, dict[str, str]] = {}
    for person, name, value in checks["questionnaire_answers"]:
        kept.setdefault(person, {})[name] = value
    as_sent = sum(1 for person, answers in tally.chosen.items() if kept.get(person) == answers)
    print(f"questionnaires: {as_sent} of {len(tally.chosen)} sent kept exactly as sent (choice and number)")
    print(f"answers: {acked:,} acknowledged, {stored:,} rows in the database ({lost} lost, {extra} not acknowledged "
          f"but stored); {tally.unacked} submits without an acknowledgement; integrity_check: {checks['integrity']}")
    errors = [e for c in tally.clients for e in c.errors]
    print(f"errors: {len(tally.problems) + len(errors)}")
    for problem in (tally.problems + errors)[:10]:
        print("  ", problem[:300])
    slow = [step for step in STEPS if not tally.steps[step] or percentile(tally.steps[step], 0.95) > GOAL_P95]
    goals = {
        f"p95 of every step <= {GOAL_P95:g} s": not slow,
        "0 lost": lost == 0 and extra == 0 and tally.unacked == 0,
        "exactly the places filled": checks["participants"] == tally.enrolled == expected_in
        and checks["in_study"] == checks["with_platform_ids"] == expected_in,
        "the others refused as full": len(tally.refused) == arrivals - expected_in,
        "everyone in consented, sent the questionnaire and reached the questions":
            checks["consented"] == checks["questionnaires"] == tally.ready == expected_in
            and checks["answer_fields"] == expected_in * len(QUESTIONNAIRE) and as_sent == len(kept) == expected_in,
        "no errors": not tally.problems and not errors,
        "integrity_check ok": checks["integrity"] == "ok",
    }
    for goal, met in goals.items():
        why = f" (over, or no figures: {', '.join(slow)})" if goal.startswith("p95") and slow else ""
        print(f"goal: {goal}: {'met' if met else 'NOT met'}{why}")
    return all(goals.values())


def run_participants(args: argparse.Namespace, arrivals: int, places: int, processes: int, seconds: float) -> bool:
    items = max(args.items, math.ceil((args.ramp + seconds) / args.pace_min) + 20)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        print(f"preparing the study (a link of {places} places, {items} questions) ...", file=sys.stderr)
        paths = prepare_participants(base, places, items)
        with servers_up(base, paths, processes, args.entry, getattr(args, "via_proxy", False)) as (urls, servers,
                                                                                                  proxy, direct):
            asyncio.run(warm_up(direct))
            pids = [s.pid for s in servers]
            cpu_start = sum(cpu_seconds(pid) for pid in pids)
            proxy_cpu = cpu_seconds(proxy.pid) if proxy is not None else 0.0
            out = asyncio.run(simulate_participants(urls, paths, args, arrivals, seconds))
            out["cpu"] = sum(cpu_seconds(pid) for pid in pids) - cpu_start
            out["rss"] = sum(rss_mb(pid) for pid in pids)
            if proxy is not None:
                out["proxy_cpu"] = cpu_seconds(proxy.pid) - proxy_cpu
        checks = participant_checks(paths["db"], paths["study_id"])
        return report_participants(args, arrivals, places, processes, seconds, out, checks)


def side_by_side(summaries: list[dict]) -> None:
    print("\n== side by side (submit -> next question in the measured window; answers: acknowledged in the whole "
          "run, log-ins and window; lost: acknowledged but not in the database; errors: simulated people stopped, "
          "e.g. a run over 60 s)")
    print("| annotators | processes | route | submit p50 | submit p95 | submits in the window | answers | lost "
          "| errors | server CPU | haproxy CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in summaries:
        proxy_cpu = f"{s['proxy_cpu']:.1f} s" if s["proxy_cpu"] is not None else "-"
        print(f"| {s['n']} | {s['processes']} | {s['route']} | {s['p50']:.2f} s | {s['p95']:.2f} s | "
              f"{s['submits']:,} | {s['answers']:,} | {s['lost']} | {s['errors']} | {s['cpu']:.1f} s | {proxy_cpu} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, nargs="+", default=None, help="one run per number (default 50)")
    parser.add_argument("--processes", type=int, nargs="+", default=[1],
                        help="server processes on the one database (one run per number; default 1)")
    parser.add_argument("--seconds", type=float, default=120, help="the measured window")
    parser.add_argument("--entry", choices=("server.py", "app.py"), default="server.py",
                        help="what the servers run: server.py (the README's command: heartbeats posted to the "
                             "clock's route) or app.py (no route: every heartbeat a fragment run, as before)")
    parser.add_argument("--soak", type=float, default=None, nargs="?", const=30.0, metavar="MINUTES",
                        help="the long run: 100 annotators for MINUTES (default 30), the series printed")
    parser.add_argument("--ramp", type=float, default=20,
                        help="seconds over which annotators log in (participants: arrive by the link)")
    parser.add_argument("--pace-min", type=float, default=10)
    parser.add_argument("--pace-max", type=float, default=20)
    parser.add_argument("--items", type=int, default=100, help="questions in the study (raised to last the window)")
    parser.add_argument("--through-proxy", action="store_true",
                        help="each run twice: straight to the processes, then through HAProxy with the configuration "
                             "of `python -m structext_core crowd` (needs haproxy: apt-get install haproxy)")
    crowd_mode = parser.add_argument_group(
        "participants", "people arriving by a study link (consent, questionnaire, rule, questions) instead of "
                        "annotators logging in; with --through-proxy, through the proxy only")
    crowd_mode.add_argument("--participants", type=int, nargs="+", default=None, metavar="N",
                            help="one run per number: N people take the link's places (N places unless --places)")
    crowd_mode.add_argument("--extra", type=int, default=0,
                            help="more people arriving than that, for the places left (default 0): refused as full")
    crowd_mode.add_argument("--places", type=int, default=None, help="the link's places (default N)")
    crowd_mode.add_argument("--read-min", type=float, default=5, help="seconds read before each step (min)")
    crowd_mode.add_argument("--read-max", type=float, default=15, help="seconds read before each step (max)")
    args = parser.parse_args()
    if args.participants is not None:
        participants_main(parser, args)
        return
    annotators = args.annotators or ([100] if args.soak else [50])
    seconds = args.soak * 60 if args.soak else args.seconds
    if args.through_proxy:
        try:
            crowd.find_haproxy("haproxy")  # before any run: a missing haproxy is said at once
        except UsageError as error:
            parser.exit(2, f"error: {error}\n")
    summaries = []
    for processes in args.processes:
        for n in annotators:
            for via_proxy in ((False, True) if args.through_proxy else (False,)):
                args.via_proxy = via_proxy
                summaries.append(run_once(args, n, processes, seconds))
    if args.through_proxy:
        side_by_side(summaries)


def participants_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.annotators or args.soak:
        parser.error("--participants runs people arriving by a link: not with --annotators or --soak")
    if args.extra < 0 or any(n < 1 for n in args.participants) or (args.places is not None and args.places < 1):
        parser.error("--participants and --places must be at least 1, --extra at least 0")
    if not 0 <= args.read_min <= args.read_max:
        parser.error("--read-min must be at most --read-max, both at least 0")
    if args.through_proxy:
        try:
            crowd.find_haproxy("haproxy")
        except UsageError as error:
            parser.exit(2, f"error: {error}\n")
    args.via_proxy = args.through_proxy
    met = True
    for processes in args.processes:
        for n in args.participants:
            places = args.places if args.places is not None else n
            met &= run_participants(args, n + args.extra, places, processes, args.seconds)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
