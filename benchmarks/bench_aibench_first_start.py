"""Benchmark: the synthetic AIBench set made at the app's first start, in the background.

In a fresh temporary home (database, suites and AIBench folder of its own, the default suites
generated first so Home has nothing else to do), it prints:

1. how long ``aibench_store.start_synthetic()`` takes to return (it only starts a thread);
2. the time of a Home page run through ``app.py`` (Streamlit's AppTest, in this process) while the
   job runs beside it, against the same run once the job is done (median of ``--runs`` runs);
3. how long the job takes (``--papers`` papers drawn, every image checked in a worker process,
   the perfect-reader predictions stored).

    .venv/bin/python benchmarks/bench_aibench_first_start.py [--papers 20] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def home_run_seconds(runs: int) -> list[float]:
    from streamlit.testing.v1 import AppTest
    times = []
    for _ in range(runs):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-first-start-"))
    os.environ.update({"STRUCTEXT_DB": str(home / "structext.db"), "STRUCTEXT_DATA_DIR": str(home / "suites"),
                       "STRUCTEXT_AIBENCH_DIR": str(home / "aibench"), "STRUCTEXT_AIBENCH_SYNTHETIC": "off"})
    from structext_core.aibench import store as aibench_store
    from structext_core.structext_eval import suites
    from structext_core.studio import sandbox
    for name in suites.missing_default_suites():
        suites.load_or_generate(name)
    aibench_store.SYNTHETIC_PAPERS = args.papers
    home_run_seconds(1)  # imports and caches warm
    sandbox.default_pool().call("aibench_image", b"", ".png")  # workers started, as in a running server

    start = time.perf_counter()
    aibench_store.start_synthetic()
    returned = time.perf_counter() - start
    during = home_run_seconds(args.runs)
    running = aibench_store.synthetic_status().state == "running"
    status = aibench_store.wait_for_synthetic(600)
    job = time.perf_counter() - start
    after = home_run_seconds(args.runs)
    sandbox.shutdown()
    shutil.rmtree(home, ignore_errors=True)
    print(f"start_synthetic() returned in {returned * 1000:.1f} ms")
    print(f"Home page run while the job runs: median {statistics.median(during):.3f} s "
          f"(runs {', '.join(f'{t:.3f}' for t in during)}; job still running after them: {running})")
    print(f"Home page run once it is done:    median {statistics.median(after):.3f} s "
          f"(runs {', '.join(f'{t:.3f}' for t in after)})")
    print(f"the job ({args.papers} papers): {status.state} after {job:.1f} s; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    return 0 if status.state == "ready" else 1


if __name__ == "__main__":
    sys.exit(main())
