"""Benchmark: AIBench-sized scoring and the import's cost per image.

1. Scoring at the paper's size: 300 synthetic papers (graphs and questions by rule, no figures
   drawn), 15 systems and one prediction per (system, question) with a random reply (the cost
   does not depend on the replies). Times, each step separately: parsing the predictions JSONL
   (letters read, every line checked against the data set), scoring (pooled level accuracy,
   Wilson intervals, aesthetics, overall with 1,000 bootstrap resamples over papers per
   system) and building Table 3. The goal (issue 21) is score + first Table 3 under 2 s.
   Then the whole command as a user runs it, in a fresh process each time (interpreter start,
   imports, reading the stored set, parsing, scoring, printing Table 3):
   ``python -m structext_core aibench score PRED --data SET``, ``--repeat`` times for each
   ``--root`` checkout given (this one by default; give an older clone first to compare side by
   side), with the load average beside the figures. The goal (issue 31): at most 2 s.
2. The import: ``--import-papers`` synthetic papers drawn (6 images each) and imported through
   the sandboxed import (every image decoded and re-encoded in a worker process); prints the
   time per image and, as an estimate only, the time for 300 papers x 15 systems at that rate.

Run from the repository root:

    .venv/bin/python benchmarks/bench_aibench.py                  # 300 papers, 15 systems; import of 10 papers
    .venv/bin/python benchmarks/bench_aibench.py --import-papers 0   # scoring only
    .venv/bin/python benchmarks/bench_aibench.py --import-papers 0 --root /tmp/old-clone --root .
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from structext_core.aibench import predictions, scoring  # noqa: E402
from structext_core.aibench.dataset import Dataset, ImageRecord, _write_stored  # noqa: E402
from structext_core.aibench.papers import parse_paper  # noqa: E402
from structext_core.aibench.synthetic import build  # noqa: E402


def sized_dataset(papers: int, systems: int) -> Dataset:
    data = Dataset()
    for index in range(papers):
        built = build.build_paper(0, index)
        paper, problems = parse_paper(
            json.dumps(build.paper_document(built)).encode(), "bench")
        assert not problems
        data.papers[paper.id] = paper
    names = [f"System {k:02d}" for k in range(systems)]
    rng = random.Random(0)
    for system in names:
        for pid in data.papers:
            data.images[(system, pid)] = ImageRecord(system, pid, f"images/{system}/{pid}.png", 1024, 1024)
            data.aesthetics[(system, pid, "UniPercept")] = rng.uniform(20, 70)
    return data


def fresh_processes(data: Dataset, text: str, roots: list[Path], repeat: int) -> None:
    """``aibench score`` as a user runs it, timed as whole processes, for each checkout in turn."""
    with tempfile.TemporaryDirectory() as tmp:
        stored = Path(tmp) / "stored"
        stored.mkdir()
        _write_stored(stored, data)
        (Path(tmp) / "predictions.jsonl").write_text(text, encoding="utf-8")
        command = [sys.executable, "-m", "structext_core", "aibench", "score", str(Path(tmp) / "predictions.jsonl"),
                   "--data", str(stored)]
        print(f"\nfresh processes: {' '.join(command[1:])} (stored set and predictions as above), {repeat} runs each")
        for root in roots:
            walls = []
            for _ in range(repeat):
                started = time.perf_counter()
                done = subprocess.run(command, cwd=root, capture_output=True, text=True,
                                      env={**os.environ, "PYTHONPATH": str(root)})
                walls.append(time.perf_counter() - started)
                if done.returncode:
                    raise SystemExit(f"{root}: exit {done.returncode}: {done.stderr[-500:]}")
            load = " ".join(f"{v:.2f}" for v in os.getloadavg())
            print(f"{root}: wall min {min(walls):.2f} s, median {statistics.median(walls):.2f} s, "
                  f"max {max(walls):.2f} s (goal: at most 2 s); load average {load}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=300)
    parser.add_argument("--systems", type=int, default=15)
    parser.add_argument("--import-papers", type=int, default=10)
    parser.add_argument("--root", action="append", type=Path,
                        help="a checkout whose `aibench score` is timed in fresh processes (repeatable; default: this one)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per checkout (default %(default)s)")
    args = parser.parse_args()

    t = time.perf_counter()
    data = sized_dataset(args.papers, args.systems)
    questions = sum(len(p.questions) for p in data.papers.values())
    print(f"data set: {len(data.papers)} papers, {questions} questions, {args.systems} systems "
          f"(built in {time.perf_counter() - t:.2f} s, not part of the goal)")
    rng = random.Random(1)
    replies = ["A", "B", "C", "D", "The answer is B.", "I cannot tell from the image."]
    lines = [json.dumps({"paper_id": p.id, "question_id": q.id, "system": system, "solver": "bench",
                         "prediction": rng.choice(replies)})
             for system in sorted({s for s, _ in data.images}) for p in data.papers.values() for q in p.questions]
    rng.shuffle(lines)
    text = "\n".join(lines) + "\n"
    print(f"predictions: {len(lines):,} lines, {len(text) / 1e6:.1f} MB")

    def clock() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    t0 = clock()
    preds = predictions.parse_predictions(text, data)
    t1 = clock()
    scores = scoring.score_systems(data, preds)
    t2 = clock()
    table = scoring.table3(scores)
    t3 = clock()

    def took(a, b) -> str:
        return f"{b[0] - a[0]:.2f} s (CPU {b[1] - a[1]:.2f} s)"

    print("wall-clock time, and this process's CPU time (the difference is other load on the machine)")
    print(f"parse predictions: {took(t0, t1)}")
    print(f"score ({len(scores)} systems, 1,000 bootstrap resamples each): {took(t1, t2)}")
    print(f"Table 3: {took(t2, t3)}")
    print(f"score + first Table 3: {took(t1, t3)} (goal: under 2 s); with parsing: {took(t0, t3)}")
    print(table.head(3).to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    fresh_processes(data, text, args.root or [Path(__file__).resolve().parent.parent], args.repeat)

    if args.import_papers:
        from structext_core.aibench import sandboxed_import as aibench_import
        from structext_core.studio import sandbox
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            build.write_set(Path(tmp) / "syn", seed=0, papers=args.import_papers)
            drawn = time.perf_counter() - t
            images = args.import_papers * len(build.SYSTEMS)
            pool = sandbox.WorkerPool(workers=2)
            try:
                pool.call("aibench_image", b"", ".png")  # start the workers before timing
                t = time.perf_counter()
                aibench_import.import_folder(Path(tmp) / "syn", Path(tmp) / "stored", pool=pool)
                took = time.perf_counter() - t
            finally:
                pool.shutdown()
            print(f"synthetic set: {images} images drawn in {drawn:.2f} s ({1000 * drawn / images:.0f} ms an image)")
            print(f"import: {images} images in {took:.2f} s ({1000 * took / images:.0f} ms an image, 2 workers); "
                  f"estimate for 300 papers x 15 systems at that rate: {took / images * 4500:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
