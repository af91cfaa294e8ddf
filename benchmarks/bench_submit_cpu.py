"""Server CPU of one submit on the question page: one annotator, no contention.

Starts ``streamlit run server.py`` of a checkout (``--root``, default this one; give an older
clone to compare side by side) on a private database with one Test-Hard study of ``--items``
questions (the paper's human baseline answers 500), logs one simulated annotator in over the
browser's websocket protocol (benchmarks/st_client.py), answers a few questions to warm up, then
``--answers`` more, and prints the server's CPU per submit (callback and page run), the wall
time per submit and the messages the server sends per submit, with the machine's pace before each
run (the checkouts are measured in turn). The crowd benchmark
(bench_annotators.py) adds contention on top of this figure; this one moves only when the run
itself gets cheaper or dearer.

    .venv/bin/python benchmarks/bench_submit_cpu.py
    .venv/bin/python benchmarks/bench_submit_cpu.py --root /tmp/old-clone --root .   # side by side
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import bench_annotators as crowd  # noqa: E402
from st_client import StreamlitClient  # noqa: E402


def prepare(root: Path, template: Path, items: int) -> None:
    """The study's database made by the checkout's own code (an older checkout refuses a
    database a newer one migrated)."""
    print(f"{root}: preparing a study of {items} Test-Hard questions ...", file=sys.stderr, flush=True)
    code = ("import sys; from pathlib import Path; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/benchmarks']; "
            "import bench_annotators; bench_annotators.prepare(Path(sys.argv[2]), 2, int(sys.argv[3]))")
    subprocess.run([sys.executable, "-c", code, str(root), str(template), str(items)], cwd=root, check=True,
                   stdout=subprocess.DEVNULL)


def start(root: Path, base: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "STRUCTEXT_DB": str(base / "structext.db"), "STRUCTEXT_DATA_DIR": str(base / "suites"),
           "STRUCTEXT_ADMIN_USER": "admin", "STRUCTEXT_ADMIN_PASSWORD": "admin-password-1",
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "PYTHONPATH": str(root)}
    log = open(base / f"server-{port}.log", "w")
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(root / "server.py"), "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)


async def measure(root: Path, template: Path, warm: int, answers: int) -> tuple[float, float, float]:
    base = Path(tempfile.mkdtemp(prefix="submit-cpu-"))
    shutil.copytree(template, base, dirs_exist_ok=True)
    port = crowd.free_port()
    server = start(root, base, port)
    try:
        crowd.wait_healthy(base, port, server)
        client = StreamlitClient(f"http://127.0.0.1:{port}")
        await client.connect()
        await client.run()
        client.type_text("User name", "ann000")
        client.type_text("Password", crowd.PASSWORD)
        await client.click("Log in")
        await client.open_page("Human baseline")
        if "I have read the rule: start" in client.widgets:
            await client.click("I have read the rule: start")
        messages = [0]
        handle = client._handle

        def counting(message) -> None:
            messages[0] += 1
            handle(message)

        client._handle = counting

        async def submit() -> None:
            label = next((w for w in client.widgets if w.startswith("Your answer")), None)
            if label is None:
                raise SystemExit("no answer box on the page: is the study finished? (raise --items)")
            client.type_text(label, "an answer")
            result = await client.click(crowd.SUBMIT_LABEL)
            if not any(text.startswith(crowd.SAVED) for text in result.texts):
                raise SystemExit(f"a submit was not acknowledged: {result.texts[:5]}")

        for _ in range(warm):
            await submit()
        messages[0] = 0
        cpu, wall = crowd.cpu_seconds(server.pid), time.perf_counter()
        for done in range(answers):
            await submit()
            print(f"\r  {root}: {done + 1}/{answers} answers", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        cpu, wall = crowd.cpu_seconds(server.pid) - cpu, time.perf_counter() - wall
        await client.close()
        return cpu / answers, wall / answers, messages[0] / answers
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, action="append", help="a checkout to measure (repeatable)")
    parser.add_argument("--items", type=int, default=500, help="questions in the study (default 500, the paper's)")
    parser.add_argument("--answers", type=int, default=150)
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2, help="runs per checkout (the figures vary by a few percent)")
    args = parser.parse_args()
    roots = [root.resolve() for root in (args.root or [HERE.parent])]
    if args.items < args.warm + args.answers:
        parser.error("--items must be at least --warm + --answers")
    print(f"\n== one annotator, {args.answers} submits after {args.warm} to warm up, a study of {args.items} "
          f"questions; 2 CPUs")
    templates = {root: Path(tempfile.mkdtemp(prefix="submit-cpu-template-")) for root in roots}
    try:
        for root, template in templates.items():
            prepare(root, template, args.items)
        # The checkouts in turn, run after run: the shared machine's pace drifts within minutes, and
        # each figure is printed beside it (bench_annotators.machine_pace: less is faster).
        for _ in range(args.repeat):
            for root, template in templates.items():
                pace = crowd.machine_pace()
                cpu, wall, messages = asyncio.run(measure(root, template, args.warm, args.answers))
                print(f"{root}: server CPU {cpu * 1000:5.1f} ms per submit, wall {wall * 1000:5.0f} ms, "
                      f"{messages:.0f} messages sent per submit (machine's pace {pace:.0f} ms)", flush=True)
    finally:
        for template in templates.values():
            shutil.rmtree(template, ignore_errors=True)


if __name__ == "__main__":
    main()
