"""How long the Real-Test live checks take on the largest Test sample of each format,
in the server's process and through the check workers (``structext_core.studio.sandbox``).

The workspace reruns both checks on every change, so they must stay instant while
typing (goal: under 50 ms each). For each format the largest Test reference is
rewritten with a faithful mapping (every token renamed, numbers doubled), then the
structure check (parse + skeleton) and the answer check (the core's solver on the
rewrite) are timed separately in-process, then both together in-process and through a
worker process (what the page, the review and ``campaign.submit`` call), along with
applying the mapping. The isolation's cost is the difference of the two "all checks"
columns: pickling the sample and texts both ways and one round trip over a pipe. (On the
large Test-Hard texts it can come out negative: this process holds the whole suite, so its
garbage collector walks far more objects than a worker's does.) The Explore preview, which
also runs in a worker, is timed the same way.

    .venv/bin/python benchmarks/bench_rewrite.py [--repeat 200] [--hard]

``--hard`` adds the largest Test-Hard sample of each format (references up to ~100,000
characters) as a stress figure; the 50 ms goal is for Test, the suite Real-Test draws from.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from structext_core.structext_eval import rewrite, sandboxed
from structext_core.structext_eval.formats import LANGUAGES
from structext_core.structext_eval.preview import preview
from structext_core.structext_eval.suites import generate_suite
from structext_core.studio import sandbox

GOAL_MS = 50.0


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median and worst time of ``fn()`` in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


def largest_per_format(samples: list[dict]) -> dict[str, dict]:
    best: dict[str, dict] = {}
    for s in samples:
        if len(s["reference"]) > len(best.get(s["language"], {"reference": ""})["reference"]):
            best[s["language"]] = s
    return best


def run(samples: list[dict], repeat: int, label: str) -> bool:
    print(f"\n{label}: largest sample of each format, {repeat} runs each (median / worst, ms)")
    header = f"{'format':9} {'sample':22} {'chars':>7} {'tokens':>6}  {'structure':>15} {'answer':>15} " \
             f"{'all checks':>15} {'all, in worker':>15} {'cost':>6} {'apply map':>15}"
    print(header)
    print("-" * len(header))
    ok = True
    for language in LANGUAGES:
        s = largest_per_format(samples)[language]
        mapping = rewrite.mechanical_mapping(s)
        texts = rewrite.apply_mapping(s, mapping)
        report = rewrite.check_rewrite(s, texts.reference, texts.question, texts.answer)
        assert report.ok, (s["id"], [str(p) for p in report.problems])
        isolated = sandboxed.check_rewrite(s, texts.reference, texts.question, texts.answer)
        assert isolated == report, (s["id"], isolated)  # the worker computes the same report
        structure = timed(lambda: rewrite.check_structure(language, s["reference"], texts.reference), repeat)
        answer = timed(lambda: rewrite.check_answer(s, texts.reference, texts.question, texts.answer), repeat)
        full = timed(lambda: rewrite.check_rewrite(s, texts.reference, texts.question, texts.answer), repeat)
        worker = timed(lambda: sandboxed.check_rewrite(s, texts.reference, texts.question, texts.answer), repeat)
        apply = timed(lambda: rewrite.apply_mapping(s, mapping), repeat)
        ok &= structure[0] < GOAL_MS and answer[0] < GOAL_MS and worker[0] < GOAL_MS
        cells = "".join(f" {m:7.2f} / {w:6.2f}" for m, w in (structure, answer, full, worker))
        print(f"{language:9} {s['id']:22} {len(s['reference']):7,} {len(mapping):6}{cells} "
              f"{worker[0] - full[0]:+6.2f} {apply[0]:7.2f} / {apply[1]:6.2f}")
    return ok


def run_preview(samples: list[dict], repeat: int, label: str) -> None:
    print(f"\n{label}: the Explore preview of the same samples (median / worst, ms)")
    header = f"{'format':9} {'sample':22} {'chars':>7}  {'in-process':>15} {'in worker':>15} {'cost':>6}"
    print(header)
    print("-" * len(header))
    for language in LANGUAGES:
        s = largest_per_format(samples)[language]
        direct = timed(lambda: preview(language, s["reference"]), repeat)
        worker = timed(lambda: sandboxed.preview(language, s["reference"]), repeat)
        cells = "".join(f" {m:7.2f} / {w:6.2f}" for m, w in (direct, worker))
        print(f"{language:9} {s['id']:22} {len(s['reference']):7,} {cells} {worker[0] - direct[0]:+6.2f}")


def start_workers() -> None:
    """Start the workers before timing (once per server; again only after a worker is killed)."""
    start = time.perf_counter()
    sandbox.run("preview", "tree", "a->b")
    pool = sandbox.default_pool()
    print(f"check workers: {pool.size} processes, {pool.timeout:g} s and {pool.memory_mb} MB per check; "
          f"first call (workers starting) {time.perf_counter() - start:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--hard", action="store_true", help="also time the largest Test-Hard samples")
    args = parser.parse_args()
    start_workers()
    test = generate_suite("test")
    ok = run(test, args.repeat, "Test")
    run_preview(test, args.repeat, "Test")
    print(f"\ngoal: each check under {GOAL_MS:.0f} ms (median) on Test, in-process and in a worker: "
          f"{'met' if ok else 'NOT met'}")
    if args.hard:
        hard = generate_suite("test-hard")
        run(hard, max(5, args.repeat // 20), "Test-Hard (stress)")
        run_preview(hard, max(5, args.repeat // 20), "Test-Hard (stress)")
    sandbox.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
