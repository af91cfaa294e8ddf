"""Human-baseline benchmark: submission latency under concurrent writers, and the time to
render the largest Test-Hard item.

    .venv/bin/python benchmarks/bench_human.py                 # writers + server render
    .venv/bin/python benchmarks/bench_human.py --browser       # also Chromium render and typing

Goals (issue 4): p99 submission latency <= 50 ms with 16 concurrent writers; server time
to render the largest Test-Hard item <= 0.5 s. Figures are printed, never asserted.

Writers do what the answering page does, each with its own connection: open the current
question (stamps its first showing), then submit it. "threads" is how Streamlit runs
sessions (one server process, one thread per session); "processes" adds true parallelism.
The latency of a submission is the wall time of ``study.submit_answer`` (validation,
scoring, ``BEGIN IMMEDIATE``, waiting for the write lock, insert, ``COMMIT`` with fsync).

Heartbeats: the cost of ``study.heartbeat`` for one annotator, as the page's clock fragment
calls it every second: a due heartbeat writes (once per ``STRUCTEXT_HEARTBEAT_SECONDS``),
the others only read. The load of 50 annotators on a running server is
``benchmarks/bench_annotators.py``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def make_study(db_path: Path, writers: int, items: int) -> tuple[int, list[int]]:
    db = storage.open_db(db_path)
    password_hash = accounts.hash_password("password-123")
    with storage.write_transaction(db):
        for i in range(writers):
            db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, 'annotator', 0)",
                       [f"writer{i}", password_hash])
    user_ids = [row[0] for row in db.execute("SELECT id FROM users ORDER BY id")]
    cells = [(t, d, w) for t in range(1, 30) for d in (1, 2) for w in (1, 2)]
    pool = [suites.generate_sample(t, d, w, suite="bench", index=i) for t, d, w in cells
            for i in range(-(-items // len(cells)))]
    study_id = structext_study.create_study(db, name="bench", suite="bench", samples=pool, n_items=items, annotator_ids=user_ids)
    for user_id in user_ids:
        study.accept_rule(db, study_id, user_id)
    return study_id, user_ids


def writer(args: tuple) -> tuple[list[float], list[float], list[str]]:
    """Answer every question; return (submit latencies, open latencies, errors)."""
    db_path, study_id, user_id, start_at = args
    while time.time() < start_at:  # all writers start together
        time.sleep(0.001)
    submit, opened, errors = [], [], []
    try:
        db = storage.open_db(db_path)
        while True:
            began = time.perf_counter()
            view = study.open_question(db, study_id, user_id)
            opened.append(time.perf_counter() - began)
            if view is None:
                break
            began = time.perf_counter()
            study.submit_answer(db, user_id, view.assignment_id, f"answer {view.seq} " + "token " * 40)
            submit.append(time.perf_counter() - began)
    except Exception as error:
        errors.append(repr(error))
    return submit, opened, errors


def bench_writers(mode: str, writers: int, submissions: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "bench.db"
        study_id, user_ids = make_study(db_path, writers, submissions)
        start_at = time.time() + (3.0 if mode == "processes" else 0.2)
        jobs = [(db_path, study_id, user_id, start_at) for user_id in user_ids]
        if mode == "threads":
            results: list = [None] * writers
            threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, writer(jobs[i]))) for i in range(writers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            with multiprocessing.get_context("spawn").Pool(writers) as pool:
                results = pool.map(writer, jobs)
        wall = time.time() - start_at  # from the common start to the last writer's end
        submit = [s * 1000 for r in results for s in r[0]]
        opened = [s * 1000 for r in results for s in r[1]]
        errors = [e for r in results for e in r[2]]
        rows = storage.open_db(db_path).execute("SELECT COUNT(*), COUNT(DISTINCT assignment_id) FROM responses").fetchone()
    print(f"\n{writers} concurrent writers x {submissions} submissions ({mode})")
    print(f"  rows {rows[0]:,} (distinct assignments {rows[1]:,}), errors {len(errors)}")
    print(f"  submit latency ms: p50 {percentile(submit, 50):.2f}  p90 {percentile(submit, 90):.2f}  "
          f"p99 {percentile(submit, 99):.2f}  max {max(submit):.2f}   (goal p99 <= 50)")
    print(f"  open-question latency ms: p50 {percentile(opened, 50):.2f}  p99 {percentile(opened, 99):.2f}")
    print(f"  throughput {len(submit) / wall:,.0f} answered questions/s ({wall:.1f} s from the common start)")
    for error in errors[:5]:
        print("  error:", error)


def bench_heartbeats(annotators: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "beats.db"
        study_id, user_ids = make_study(db_path, annotators, 2)
        db = storage.open_db(db_path)
        settings = study.clock_settings()
        start = time.time()
        views = {user_id: study.open_question(db, study_id, user_id, at=start, tab=f"tab{user_id}")
                 for user_id in user_ids}
        writes, reads = [], []
        for round_number in range(1, rounds + 1):
            for user_id, view in views.items():
                moment = start + round_number * settings.heartbeat_seconds
                for timings, at in ((writes, moment), (reads, moment + 1)):
                    began = time.perf_counter()
                    study.heartbeat(db, user_id, view.assignment_id, f"tab{user_id}", at=at, settings=settings)
                    timings.append((time.perf_counter() - began) * 1000)
    print(f"\nheartbeats: {annotators} annotators x {rounds} rounds, one connection "
          f"(heartbeat every {settings.heartbeat_seconds:g} s, clock fragment every 1 s)")
    print(f"  due (writes) ms: p50 {percentile(writes, 50):.2f}  p95 {percentile(writes, 95):.2f}  "
          f"max {max(writes):.2f}")
    print(f"  not due (reads) ms: p50 {percentile(reads, 50):.2f}  p95 {percentile(reads, 95):.2f}  "
          f"max {max(reads):.2f}")
    per_second = annotators * (percentile(writes, 50) / settings.heartbeat_seconds + percentile(reads, 50)) / 1000
    print(f"  database time for {annotators} annotators: about {per_second:.3f} s per second of wall time")


def largest_item() -> dict:
    samples = suites.generate_suite("test-hard")
    return max(samples, key=lambda s: len(s["reference"]))


def setup_render_db(db_path: Path, item: dict) -> dict:
    db = storage.open_db(db_path)
    annotator = accounts.create_user(db, "reader", "password-123", "annotator")
    study_id = structext_study.create_study(db, name="render", suite="test-hard", samples=[item], n_items=1,
                                  annotator_ids=[annotator["id"]])
    study.accept_rule(db, study_id, annotator["id"])
    return annotator


def bench_server_render(item: dict, repeats: int) -> None:
    import logging

    from streamlit.testing.v1 import AppTest

    # The page imports structext_core.ui, found from the project folder as `streamlit run app.py` finds it.
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    # AppTest outside a server: Streamlit warns about the missing run context on every call.
    for name in ("streamlit.runtime.scriptrunner_utils.script_run_context", "streamlit"):
        logging.getLogger(name).setLevel(logging.ERROR)

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STRUCTEXT_DB"] = str(Path(tmp) / "render.db")
        annotator = setup_render_db(Path(os.environ["STRUCTEXT_DB"]), item)
        db = storage.open_db()
        study_id = study.list_studies(db)[0].id
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            study.open_question(db, study_id, annotator["id"])
            times.append(time.perf_counter() - began)
        page_times = []
        for _ in range(repeats):
            at = AppTest.from_file(str(ROOT / "pages" / "human_baseline.py"), default_timeout=60)
            at.session_state["user"] = annotator
            began = time.perf_counter()
            at.run()
            page_times.append(time.perf_counter() - began)
            assert not at.exception and at.code[0].value == item["reference"]
    lines = item["reference"].count("\n") + 1
    print(f"\nlargest Test-Hard item {item['id']}: {len(item['reference']):,} characters, {lines:,} lines")
    print(f"  read from the database (open_question): median {statistics.median(times) * 1000:.1f} ms")
    print(f"  server render of the answering page (AppTest run, new session each): first {page_times[0]:.3f} s, "
          f"median {statistics.median(page_times):.3f} s, max {max(page_times):.3f} s   (goal <= 0.5 s)")


def bench_browser(item: dict) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "STRUCTEXT_DB": str(Path(tmp) / "browser.db"), "STRUCTEXT_DATA_DIR": tmp,
               "STRUCTEXT_ADMIN_USER": "admin", "STRUCTEXT_ADMIN_PASSWORD": "admin-password-1"}
        setup_render_db(Path(env["STRUCTEXT_DB"]), item)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "server.py"), "--server.headless=true",
             f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", headless=True,
                    args=["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run",
                          "--disable-component-update", "--disable-sync"])
                measure_in_browser(browser, url, item)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=15)


def measure_in_browser(browser, url: str, item: dict) -> None:
    idle = '[data-testid="stApp"][data-test-connection-state="CONNECTED"][data-test-script-state="notRunning"]'
    warm = browser.new_page()  # the first session of a fresh server is slow to settle
    warm.goto(url)
    warm.wait_for_selector(idle, state="attached", timeout=60_000)
    warm.close()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    page.wait_for_selector(idle, state="attached", timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill("reader")
    sidebar.get_by_label("Password", exact=True).fill("password-123")
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text("Logged in as").wait_for()
    began = time.perf_counter()
    sidebar.get_by_role("link", name="Human baseline").click()
    # Done when the whole reference is in the code block (line numbers are not text).
    page.wait_for_function(
        "n => { const e = document.querySelector('[data-testid=stCode] pre');"
        " return e !== null && e.textContent.length >= n; }",
        arg=len(item["reference"]) - 1, timeout=60_000)
    shown = time.perf_counter() - began
    box = page.get_by_label("Your answer")
    box.wait_for()
    began = time.perf_counter()
    box.press_sequentially("abcdefghijklmnopqrstuvwxyz0123", delay=0)
    typing = (time.perf_counter() - began) / 30
    code = page.get_by_test_id("stCode").locator("pre").first
    began = time.perf_counter()
    code.evaluate("el => { el.scrollTop = el.scrollHeight; return el.scrollTop; }")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    scrolled = time.perf_counter() - began
    print("\nbrowser (headless Chromium) with the largest item on the page")
    print(f"  click on 'Human baseline' until the whole reference is in the page: {shown:.2f} s")
    print(f"  typing in the answer box: {typing * 1000:.1f} ms per key (30 keys)")
    print(f"  scroll the reference to its end and paint two frames: {scrolled * 1000:.0f} ms")
    screenshots = ROOT / "benchmarks" / "out"
    screenshots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshots / "largest-item.png"))
    print(f"  screenshot: {screenshots / 'largest-item.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--submissions", type=int, default=250, help="per writer")
    parser.add_argument("--mode", choices=["threads", "processes", "both"], default="both")
    parser.add_argument("--repeats", type=int, default=10, help="server render repetitions")
    parser.add_argument("--browser", action="store_true", help="also measure in headless Chromium")
    parser.add_argument("--heartbeat-annotators", type=int, default=50)
    args = parser.parse_args()
    print(f"SQLite {storage.sqlite3.sqlite_version}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    for mode in (["threads", "processes"] if args.mode == "both" else [args.mode]):
        bench_writers(mode, args.writers, args.submissions)
    bench_heartbeats(args.heartbeat_annotators, rounds=20)
    item = largest_item()
    bench_server_render(item, args.repeats)
    if args.browser:
        bench_browser(item)


if __name__ == "__main__":
    main()
