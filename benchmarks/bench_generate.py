"""Generating Test + Test-Hard (5,800 samples) as whole processes, ours beside the original.

    .venv/bin/python benchmarks/bench_generate.py [--repeat 3]

Runs ``python -m structext_core generate`` for both suites in fresh processes
(imports, generation and writing the JSONL all count), with the default number of
worker processes and with ``--jobs 1``, and prints the median wall time.

The original generator is not part of this project (its code is never committed).
When a local copy exists, point ``STRUCTEXT_ORIGINAL_GENERATOR`` at a script that
regenerates the same 5,800 samples (default: /tmp/original_generator/run_original.sh)
and it is timed in the same run; otherwise the figure quoted in the issue is shown,
marked as quoted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUOTED_ORIGINAL_SECONDS = 3.1  # the figure for the original generator on this machine kind


def wall(cmd: list[str], env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def ours(out: Path, jobs: int | None) -> float:
    total = 0.0
    for suite in ("test", "test-hard"):
        cmd = [sys.executable, "-m", "structext_core", "generate", "--suite", suite, "--seed", "0",
               "--out", str(out / f"{suite}.jsonl")]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        total += wall(cmd)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    original = Path(os.environ.get("STRUCTEXT_ORIGINAL_GENERATOR", "/tmp/original_generator/run_original.sh"))
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        runs: dict[str, list[float]] = {"ours (default jobs)": [], "ours (--jobs 1)": [], "original": []}
        for _ in range(args.repeat):  # interleaved, so load on the machine hits all alike
            runs["ours (default jobs)"].append(ours(out, None))
            runs["ours (--jobs 1)"].append(ours(out, 1))
            if original.exists():
                runs["original"].append(wall(["bash", str(original)]))
        rows = [(name, times) for name, times in runs.items() if times]
    print(f"Generating Test (3,712) + Test-Hard (2,088) = 5,800 samples as whole processes, "
          f"{args.repeat} runs, {os.cpu_count()} CPUs")
    print(f"{'generator':<22} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, times in rows:
        print(f"{name:<22} {statistics.median(times):>9.2f} {min(times):>7.2f} {max(times):>7.2f}")
    ours_median = statistics.median(runs["ours (default jobs)"])
    if runs["original"]:
        measured = statistics.median(runs["original"])
        print(f"side by side: ours {ours_median:.2f} s = {ours_median / measured:.0%} of the original's "
              f"{measured:.2f} s measured in this run (goal: at most 50%)")
    else:
        print(f"the original was not run ({original} not found)")
    print(f"against the issue's quoted {QUOTED_ORIGINAL_SECONDS:.1f} s for the original: ours "
          f"{ours_median:.2f} s = {ours_median / QUOTED_ORIGINAL_SECONDS:.0%} (goal: at most 50%)")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (figures are only comparable on a quiet machine)")


if __name__ == "__main__":
    main()
