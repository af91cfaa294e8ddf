"""Many annotators at a human pace against one running server.

Starts ``streamlit run app.py`` on a private database with a Test-Hard study, then puts
``--annotators`` simulated people on it (default 50), each over its own websocket speaking
the browser's protocol (benchmarks/st_client.py): log in, open Human baseline, accept the
rule, then every 10-20 s (``--pace``) type an answer and submit it. The question page's
clock component sends its heartbeat every ``STRUCTEXT_HEARTBEAT_SECONDS`` (5 s), as its script
does in a browser (the time on screen ticks in the browser: no run per second); fragments with
a ``run_every`` rerun at the interval the server asks for.

Printed: submit -> next question latency (from the click until the next question's run has
finished), fragment (heartbeat) run latency, both with p50/p95/max, the number of each, the
server's CPU use over the measured window, and the goal (p95 <= 1 s).

    .venv/bin/python benchmarks/bench_annotators.py                 # 50 annotators, 120 s
    .venv/bin/python benchmarks/bench_annotators.py --annotators 10 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from st_client import StreamlitClient

from structext_core.benchmark import (
    samples,
    suites,
)
from structext_core.studio import accounts, storage, study

ROOT = Path(__file__).resolve().parents[1]

GOAL_P95 = 1.0
PASSWORD = "annotator-password"
SUBMIT_LABEL = "Submit answer"


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
    ids = [accounts.create_user(db, f"ann{i:02d}", PASSWORD, "annotator")["id"] for i in range(n_annotators)]
    study.create_study(db, name="bench", suite="test-hard", samples=rows, n_items=n_items,
                       annotator_ids=ids, seed=0)
    answers = {row["question"]: row["answer"] for row in rows}
    return {"db": base / "structext.db", "data_dir": data_dir, "answers": answers}


def start_server(base: Path, paths: dict, port: int) -> subprocess.Popen:
    env = {**os.environ, "STRUCTEXT_DB": str(paths["db"]), "STRUCTEXT_DATA_DIR": str(paths["data_dir"]),
           "STRUCTEXT_ADMIN_USER": "admin", "STRUCTEXT_ADMIN_PASSWORD": "admin-password-1",
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = open(base / "server.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
            return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit(f"the server did not start; see {base / 'server.log'}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def annotator(index: int, url: str, answers: dict, pace: tuple[float, float], stop_at: float,
                    start_delay: float, submits: list, problems: list, clients: list) -> None:
    rng = random.Random(index)
    await asyncio.sleep(start_delay)
    client = StreamlitClient(url)
    clients.append(client)
    await client.connect()
    await client.run()
    client.type_text("User name", f"ann{index:02d}")
    client.type_text("Password", PASSWORD)
    await client.click("Log in")
    await client.open_page("Human baseline")
    if "I have read the rule: start" in client.widgets:
        await client.click("I have read the rule: start")
    beats = asyncio.create_task(heartbeats(client, stop_at))
    while time.time() < stop_at:
        await asyncio.sleep(min(rng.uniform(*pace), max(0.0, stop_at - time.time())))
        if time.time() >= stop_at:
            break
        question = next((q for q in client_texts(client) if q in answers), None)
        label = next((w for w in client.widgets if w.startswith("Your answer")), None)
        if label is None or SUBMIT_LABEL not in client.widgets:
            problems.append(f"ann{index:02d}: no answer box on the page")
            break
        client.type_text(label, answers.get(question, "an answer"))
        result = await client.click(SUBMIT_LABEL)
        submits.append(result.seconds)
    beats.cancel()
    await client.close()


CLOCK = "structext_question_clock"


async def heartbeats(client: StreamlitClient, stop_at: float) -> None:
    """The question page's clock: a heartbeat every ``beat_ms`` (its data says), as the state
    ``beat`` of the component; each is one run of the clock's fragment."""
    seq = 0
    while time.time() < stop_at:
        clock = client.components.get(CLOCK)
        interval = (clock.data or {}).get("beat_ms", 5000) / 1000 if clock else 5.0
        await asyncio.sleep(interval)
        clock = client.components.get(CLOCK)
        if clock is None or time.time() >= stop_at:
            continue
        seq += 1
        try:
            result = await client.set_component_state(
                CLOCK, {"beat": {"assignment": (clock.data or {}).get("assignment"), "seq": seq, "visible": True}})
        except (asyncio.TimeoutError, OSError) as error:
            client.errors.append(f"heartbeat: {error!r}")
            return
        client.fragment_latencies.append(result.seconds)


def client_texts(client: StreamlitClient) -> list[str]:
    return client._texts


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


async def simulate(url: str, answers: dict, args: argparse.Namespace, server_pid: int) -> None:
    submits: list[float] = []
    problems: list[str] = []
    clients: list[StreamlitClient] = []
    ramp = args.ramp
    stop_at = time.time() + ramp + args.seconds
    tasks = [asyncio.create_task(annotator(i, url, answers, (args.pace_min, args.pace_max), stop_at,
                                           ramp * i / args.annotators, submits, problems, clients))
             for i in range(args.annotators)]
    await asyncio.sleep(ramp)
    cpu_start, wall_start = cpu_seconds(server_pid), time.time()
    fragments_before = sum(len(c.fragment_latencies) for c in clients)
    submits_before = len(submits)
    done = 0
    while time.time() < stop_at:
        await asyncio.sleep(min(10.0, max(0.1, stop_at - time.time())))
        line = f"\r{len(submits) - submits_before:,} submits, {sum(len(c.fragment_latencies) for c in clients) - fragments_before:,} fragment runs, {int(stop_at - time.time())} s left   "
        print(line, end="", file=sys.stderr, flush=True)
    cpu_used, wall = cpu_seconds(server_pid) - cpu_start, time.time() - wall_start
    results = await asyncio.gather(*tasks, return_exceptions=True)
    print(file=sys.stderr)
    for result in results:
        if isinstance(result, BaseException):
            done += 1
            problems.append(repr(result))
    measured = submits[submits_before:]
    fragment_runs = [x for c in clients for x in c.fragment_latencies]
    errors = [e for c in clients for e in c.errors]
    print(f"{args.annotators} annotators, an action every {args.pace_min:g}-{args.pace_max:g} s, "
          f"{args.seconds:g} s measured after a {ramp:g} s ramp; {os.cpu_count()} CPUs")
    print(describe("submit -> next question", measured))
    print(describe("fragment (heartbeat) runs", fragment_runs))
    runs = len(measured) + sum(1 for x in fragment_runs)
    print(f"server CPU: {cpu_used:.1f} s over {wall:.1f} s = {100 * cpu_used / wall:.0f}% of one core"
          f" ({1000 * cpu_used / max(1, runs):.0f} ms per run, fragment or full)")
    p95 = percentile(measured, 0.95)
    verdict = "met" if measured and p95 <= GOAL_P95 else "NOT met"
    print(f"goal: submit p95 <= {GOAL_P95:g} s: {verdict} ({p95:.3f} s)")
    if problems or errors:
        print(f"problems ({len(problems) + len(errors)}):")
        for problem in (problems + errors)[:10]:
            print("  ", problem[:300])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--ramp", type=float, default=20, help="seconds over which annotators log in")
    parser.add_argument("--pace-min", type=float, default=10)
    parser.add_argument("--pace-max", type=float, default=20)
    parser.add_argument("--items", type=int, default=100, help="questions in the study")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        print("preparing the study ...", file=sys.stderr)
        paths = prepare(base, args.annotators, args.items)
        port = free_port()
        server = start_server(base, paths, port)
        try:
            asyncio.run(simulate(f"http://127.0.0.1:{port}", paths["answers"], args, server.pid))
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    main()
