"""Many annotators voting on pairs of large images at a human pace against one running server.

Builds the synthetic AIBench set (``--papers`` papers, 6 systems) with every image scaled up to
1024 x 1024, 1536 x 1024 or 2048 x 2048 pixels (the sizes generated figures come in), imports it
as the app does (checked in worker processes), creates one pairwise study with ``--annotators``
annotators, starts ``streamlit run server.py`` and puts the simulated people on it over their own
websockets (benchmarks/st_client.py): log in, open Pairwise comparison, then every 5-10 s
(``--pace-min``/``--pace-max``) press one of the four choices. As a browser does, each run's two
images are then fetched over HTTP from the media URLs the page names.

Printed: vote -> next pair latency (the click's run until it has finished, plus fetching the
next pair's two images), the clock's heartbeat runs (the clock ticks in the browser), p50/p95/max, the server's CPU, the goal
(p95 <= 1 s).

    .venv/bin/python benchmarks/bench_pairwise.py                  # 50 annotators, 120 s
    .venv/bin/python benchmarks/bench_pairwise.py --annotators 10 --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import bench_annotators
from bench_annotators import PASSWORD, cpu_seconds, describe, free_port, percentile, start_server, wait_healthy
from PIL import Image
from st_client import StreamlitClient

from structext_core.aibench import pairwise
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.synthetic import build
from structext_core.studio import accounts, sandbox, storage

GOAL_P95 = 1.0
SIZES = ((1024, 1024), (1536, 1024), (2048, 2048))
CHOICES = ("Left is better", "Right is better", "Equally good", "Both bad")


class ImageClient(StreamlitClient):
    """The protocol client, also noting the image URLs of each run (to fetch them as a browser does)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.image_urls: list[str] = []

    def _handle_delta(self, delta) -> None:
        super()._handle_delta(delta)
        if delta.WhichOneof("type") == "new_element" and delta.new_element.WhichOneof("type") == "imgs":
            self.image_urls.extend(img.url for img in delta.new_element.imgs.imgs)


def prepare(base: Path, n_annotators: int, papers: int) -> dict:
    """bench_annotators' database (its annotators, and the suites Home needs so no session starts
    the first-start generation), plus the AIBench store with large images and one pairwise study."""
    paths = bench_annotators.prepare(base, n_annotators, n_items=5)
    source = base / "source"
    build.write_set(source, seed=0, papers=papers)
    rng = random.Random(0)
    for path in sorted((source / "images").rglob("*.png")):
        with Image.open(path) as image:
            image.convert("RGB").resize(rng.choice(SIZES), Image.BILINEAR).save(path)
    store = base / "aibench"
    pool = sandbox.WorkerPool(workers=2, timeout=120, memory_mb=2048)
    try:
        aibench_import.import_folder(source, store / "bench", pool=pool)
    finally:
        pool.shutdown()
    os.environ["STRUCTEXT_AIBENCH_DIR"] = str(store)  # the server started below inherits it
    db = storage.open_db(paths["db"])
    people = accounts.list_users(db, role="annotator")  # bench_annotators' accounts, whatever their names
    pairwise.create_study(db, "bench", "bench", [u["id"] for u in people], n_pairs=min(200, 15 * papers),
                          practice=0, repeat_share=0.1)
    db.conn.close()
    return {**paths, "names": [u["username"] for u in people]}


def fetch(url: str) -> int:
    with urllib.request.urlopen(url, timeout=30) as response:
        return len(response.read())


async def annotator(index: int, name: str, url: str, pace: tuple[float, float], stop_at: float, start_delay: float,
                    votes: list, sizes: list, problems: list, clients: list) -> None:
    rng = random.Random(index)
    await asyncio.sleep(start_delay)
    client = ImageClient(url)
    clients.append(client)
    await client.connect()
    await client.run()
    client.type_text("User name", name)
    client.type_text("Password", PASSWORD)
    await client.click("Log in")
    await client.open_page("Pairwise comparison")
    # The page's clock ticks in the browser and sends a heartbeat every beat_ms, as a browser does.
    beats = asyncio.create_task(bench_annotators.heartbeats(client, lambda: stop_at))
    while time.time() < stop_at:
        await asyncio.sleep(min(rng.uniform(*pace), max(0.0, stop_at - time.time())))
        if time.time() >= stop_at:
            break
        if CHOICES[0] not in client.widgets:
            problems.append(f"{name}: no vote buttons on the page; it shows: "
                            + " | ".join(client._texts)[:300])
            break
        client.image_urls = []
        started = time.perf_counter()
        await client.click(rng.choice(CHOICES))
        fetched = await asyncio.gather(*(asyncio.to_thread(fetch, url + u) for u in client.image_urls[-2:]))
        votes.append(time.perf_counter() - started)
        sizes.extend(fetched)
    beats.cancel()
    await client.close()


async def simulate(url: str, names: list[str], args: argparse.Namespace, server_pid: int) -> None:
    votes: list[float] = []
    sizes: list[int] = []
    problems: list[str] = []
    clients: list[ImageClient] = []
    stop_at = time.time() + args.ramp + args.seconds
    tasks = [asyncio.create_task(annotator(i, names[i], url, (args.pace_min, args.pace_max), stop_at,
                                           args.ramp * i / args.annotators, votes, sizes, problems, clients))
             for i in range(args.annotators)]
    await asyncio.sleep(args.ramp)
    cpu_start, wall_start = cpu_seconds(server_pid), time.time()
    before = len(votes)
    fragments_before = sum(len(c.fragment_latencies) for c in clients)
    while time.time() < stop_at:
        await asyncio.sleep(min(10.0, max(0.1, stop_at - time.time())))
        print(f"\r{len(votes) - before:,} votes, {int(stop_at - time.time())} s left   ", end="", file=sys.stderr,
              flush=True)
    cpu_used, wall = cpu_seconds(server_pid) - cpu_start, time.time() - wall_start
    for result in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(result, BaseException):
            problems.append(repr(result))
    print(file=sys.stderr)
    measured = votes[before:]
    fragments = [x for c in clients for x in c.fragment_latencies][fragments_before:]
    errors = [e for c in clients for e in c.errors]
    print(f"{args.annotators} annotators, a vote every {args.pace_min:g}-{args.pace_max:g} s, {args.seconds:g} s "
          f"measured after a {args.ramp:g} s ramp; images {', '.join(f'{w}x{h}' for w, h in SIZES)}; "
          f"{os.cpu_count()} CPUs")
    print(describe("vote -> next pair shown (run + both images fetched)", measured))
    print(describe("clock heartbeat runs (one every beat_ms per annotator)", fragments))
    if sizes:
        print(f"served image sizes: {min(sizes):,} to {max(sizes):,} bytes "
              f"({len(set(sizes))} distinct; padded to multiples of {pairwise.SIZE_BUCKET:,})")
    print(f"server CPU: {cpu_used:.1f} s over {wall:.1f} s = {100 * cpu_used / wall:.0f}% of one core")
    p95 = percentile(measured, 0.95)
    print(f"goal: vote p95 <= {GOAL_P95:g} s: {'met' if measured and p95 <= GOAL_P95 else 'NOT met'} ({p95:.3f} s)")
    if problems or errors:
        print(f"problems ({len(problems) + len(errors)}):")
        for problem in (problems + errors)[:10]:
            print("  ", problem[:300])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--ramp", type=float, default=20, help="seconds over which annotators log in")
    parser.add_argument("--pace-min", type=float, default=5)
    parser.add_argument("--pace-max", type=float, default=10)
    parser.add_argument("--papers", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        print("preparing the data set and the study ...", file=sys.stderr)
        paths = prepare(base, args.annotators, args.papers)
        port = free_port()
        server = start_server(base, paths, port)
        wait_healthy(base, port, server)
        try:
            asyncio.run(simulate(f"http://127.0.0.1:{port}", paths["names"], args, server.pid))
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    main()
