"""Benchmark: how long Explore takes to answer a filter change on Test-Hard (server time).

Measured: the script run of ``pages/explore.py`` through Streamlit's ``AppTest`` (what the
server does for one filter change: read the suite or take it from the cache, filter, pick
the sample, preview it in a check worker, build every element), for a fixed series of filter
changes (format, depth, width, task, and clearing them) on Test-Hard (2,088 samples, 41 MB).
The browser's own drawing comes on top and is not in these figures.

Three ways, the same filter changes each:

1. now: the suite read once per file version and shared (``structext_eval.explore.load_suite_view``),
   only the open tab drawn, a long raw text a page at a time;
2. before: the page as it was before this change (``git show b3a2d5f:pages/explore.py``, when
   git has it), which read the suite through ``st.cache_data`` and so copied the whole suite
   out of the cache on every run;
3. uncached: the page now with the suite cache emptied before every run, i.e. the file read
   and parsed on every filter change.

    .venv/bin/python benchmarks/bench_explore.py [--rounds 2] [--suites DIR]

The target (issue 13) is at most 0.3 s per filter change at the median (p50).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the pages import ``structext_core.ui`` from the repository root

GOAL_SECONDS = 0.3
RESEARCHER = {"id": 7, "username": "reader", "role": "researcher"}
#: (filter widget key, its new value): each line is one change a person makes.
CHANGES = [
    ("explore_formats", ["json"]), ("explore_depths", [3]), ("explore_widths", [3]),
    ("explore_formats", ["json", "xml"]), ("explore_tasks", [18]), ("explore_tasks", []),
    ("explore_formats", ["yaml"]), ("explore_depths", [1]), ("explore_widths", [1, 2]),
    ("explore_formats", ["markdown"]), ("explore_depths", []), ("explore_widths", []),
    ("explore_formats", []),
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


BEFORE = "b3a2d5f"  # the last commit with the page that copied the suite out of st.cache_data


def old_page(tmp: Path) -> Path | None:
    """The page as it was at :data:`BEFORE`, as a file, or None when git cannot give it."""
    try:
        text = subprocess.run(["git", "show", f"{BEFORE}:pages/explore.py"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    if "ui_suites.load_suite" not in text:  # already the page of now: nothing to compare
        return None
    path = tmp / "explore_before.py"
    path.write_text(text, encoding="utf-8")
    return path


def time_changes(page: Path, rounds: int, before_each=None) -> list[float]:
    """Seconds of each script run after a filter change, ``rounds`` times over :data:`CHANGES`."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(page), default_timeout=300)
    at.session_state["user"] = RESEARCHER
    at.session_state["explore_filters_open"] = True  # the filters' box, open (a click on it; the old page has none)
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="explore_suite").select("test-hard").run()  # the first read is not a filter change
    assert not at.exception, at.exception
    times = []
    for _ in range(rounds):
        for key, value in CHANGES:
            at.multiselect(key=key).set_value(value)
            if before_each:
                before_each()
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
            assert not at.exception, at.exception
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="times through the series of filter changes")
    parser.add_argument("--suites", help="a folder holding test-hard.jsonl (generated into a temporary one if not)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        suites_dir = Path(args.suites) if args.suites else tmp / "suites"
        os.environ["STRUCTEXT_DATA_DIR"] = str(suites_dir)
        os.environ["STRUCTEXT_DB"] = str(tmp / "structext.db")
        from structext_core.structext_eval import explore, suites
        from structext_core.studio import sandbox

        if not (suites_dir / "test-hard.jsonl").exists():
            print("generating Test-Hard …", flush=True)
            suites.load_or_generate("test-hard", data_dir=suites_dir)
        size = (suites_dir / "test-hard.jsonl").stat().st_size
        print(f"Explore, {len(CHANGES)} filter changes x {args.rounds} round(s) on Test-Hard ({size / 1e6:.0f} MB)")
        print("measured: the script run of pages/explore.py through streamlit.testing.v1.AppTest "
              "(server time; the browser's drawing not included)\n")
        ways = [("now (suite read once, shared)", ROOT / "pages" / "explore.py", None)]
        before = old_page(tmp)
        if before is not None:
            ways.append((f"before ({BEFORE}'s page, st.cache_data copy)", before, None))
        else:
            print("(before: git has no older page to compare with; skipped)")
        ways.append(("uncached (suite read every run)", ROOT / "pages" / "explore.py", explore.clear_view_cache))
        print(f"{'way':44} {'runs':>4} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
        try:
            results = {}
            for label, page, before_each in ways:
                try:
                    times = time_changes(page, args.rounds, before_each)
                except AssertionError as failed:
                    if page == ROOT / "pages" / "explore.py":
                        raise
                    print(f"{label:44} skipped: the old page no longer runs against today's modules ({failed})"[:200])
                    continue
                results[label] = times
                print(f"{label:44} {len(times):>4} {statistics.median(times):>7.3f} {percentile(times, 0.95):>7.3f} "
                      f"{max(times):>7.3f}", flush=True)
        finally:
            sandbox.shutdown()
        now = statistics.median(results[ways[0][0]])
        print(f"\ngoal: p50 <= {GOAL_SECONDS} s per filter change: {'met' if now <= GOAL_SECONDS else 'NOT met'} "
              f"({now:.3f} s)")


if __name__ == "__main__":
    main()
