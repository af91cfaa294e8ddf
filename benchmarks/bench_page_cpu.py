"""Server CPU of each page's script run (app.py's frame included), with 300 annotators' answers stored.

Wall-clock page times (``bench_pages.py``) need a quiet machine; the CPU a run takes does not, so
this one finds where time goes on a busy one. The database is the one ``bench_pages.py`` fills
(its ``PREPARE``: an admin, ``--annotators`` annotators who each answered ``--answers`` questions of a
Test-Hard study, two small studies more). Each page is opened through app.py in Streamlit's AppTest
as the admin, in a new session each time (as a page opened from its address), after one visit that
fills the server's caches (the pages of ``pages/``: a benchmark's own page, opened this way, runs Home,
and the script stops saying so); printed: the CPU time of the script run's thread (the median and the least
of ``--repeat``), and with ``--profile PAGE`` that page's cProfile, the slowest functions first.

    .venv/bin/python benchmarks/bench_page_cpu.py
    .venv/bin/python benchmarks/bench_page_cpu.py --annotators 50 --profile results
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pages import ADMIN, PASSWORD, PREPARE  # noqa: E402 - the same database as the page times

#: What Home draws as its title (pages/home.py): a visit that draws it ran Home, not the page asked for.
HOME_TITLE = "StrucText Studio"
PAGES = ("home", "explore", "results", "study_admin", "adjudication", "accounts")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=300)
    parser.add_argument("--answers", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", metavar="PAGE", help="also print this page's cProfile (a key of the access table)")
    parser.add_argument("pages", nargs="*", default=list(PAGES), help=f"page keys (default: {' '.join(PAGES)})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-page-cpu-") as tmp:
        base = Path(tmp)
        print(f"filling a database ({args.annotators} people x {args.answers} answers)…", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-c", PREPARE, str(base), str(args.annotators), str(args.answers)],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "STRUCTEXT_AIBENCH_DIR": str(base / "aibench")},
                       check=True)
        os.environ.update(STRUCTEXT_DB=str(base / "structext.db"), STRUCTEXT_DATA_DIR=str(base / "suites"),
                          STRUCTEXT_AIBENCH_DIR=str(base / "aibench"),
                          STRUCTEXT_ADMIN_USER=ADMIN, STRUCTEXT_ADMIN_PASSWORD=PASSWORD)
        measure(args)
    return 0


def measure(args) -> None:
    from streamlit.testing.v1 import AppTest

    from structext_core import ui
    from structext_core.studio import access

    runs: list[float] = []
    profiler: list[cProfile.Profile | None] = [None]
    wrapped = ui.run_scope

    @contextlib.contextmanager
    def timed_scope():  # app.py's whole run: its frame and the page
        started = time.thread_time()
        if profiler[0] is not None:
            profiler[0].enable()
        try:
            with wrapped():
                yield
        finally:
            if profiler[0] is not None:
                profiler[0].disable()
            runs.append(time.thread_time() - started)

    ui.run_scope = timed_scope

    def session() -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.run()  # the admin account is made from the environment by this first run
        with sqlite3.connect(os.environ["STRUCTEXT_DB"]) as db:
            (admin_id,) = db.execute("SELECT id FROM users WHERE username = ?", [ADMIN]).fetchone()
        at.session_state["user"] = {"id": admin_id, "username": ADMIN, "role": "admin"}
        at.run()
        return at

    print(f"{'page':<24} {'median ms':>9} {'least ms':>8}  (CPU of the run's thread; load {os.getloadavg()[0]:.1f})")
    for key in args.pages:
        page = access.page(key).file
        # AppTest finds a page by its path from app.py's folder (given another, it runs Home instead)
        page = os.path.relpath(page, ROOT) if os.path.isabs(page) else f"pages/{page}"
        times = []
        for visit in range(args.repeat + 1 + (key == args.profile)):
            at = session()
            at.switch_page(page)
            runs.clear()
            profiled = visit > args.repeat  # one visit more, profiled, after the timed ones
            profiler[0] = cProfile.Profile() if profiled else None
            at.run()
            if at.exception:
                raise SystemExit(f"{key}: {at.exception[0].value}")
            if not visit and key != "home" and HOME_TITLE in [title.value for title in at.title]:
                raise SystemExit(f"{key}: AppTest ran Home, not {page} (a benchmark's own page, in its package, "
                                 "is not opened through app.py by AppTest's switch_page): its time in the browser "
                                 "is bench_pages.py's")
            if profiled:
                pstats.Stats(profiler[0]).sort_stats("cumulative").print_stats(40)
                profiler[0] = None
            elif visit:  # the first visit fills the caches
                times.append(sum(runs) * 1000)
        print(f"{key:<24} {statistics.median(times):9.0f} {min(times):8.0f}", flush=True)
    ui.run_scope = wrapped


if __name__ == "__main__":
    sys.exit(main())
