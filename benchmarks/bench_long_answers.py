"""Long answers (issue 13): what "Add lines X–Y to the answer", the search and "Go to line"
cost on the largest Test-Hard item, beside the obvious naive way of doing the same.

    .venv/bin/python benchmarks/bench_long_answers.py                # 300 repeats
    .venv/bin/python benchmarks/bench_long_answers.py --repeats 1000

The item is the Test-Hard item with the longest reference: read from the default suites
folder (``annotations/suites/test-hard.jsonl``, or ``STRUCTEXT_DATA_DIR``) when that file is
there, generated with the core's suite generator otherwise. Figures are printed, never
asserted: p50 and p95 over the repeats, in milliseconds.

Each action is timed as the page does it on one click (``pages/human_baseline.py``): the
callback keeps no per-session copy of the split reference, so "add lines" splits the
reference anew each time (``Lines.of``), takes the lines and appends them to an answer of
39,000 characters (the longest Test-Hard answer). The naive line is what one would write
first: ``reference.splitlines()`` on every call, slice, ``"\\n".join``, append. For the
search, the naive way is a Python loop over ``splitlines()`` lowering each line and keeping
every hit. The last line says whether the naive numbering would even agree with the viewer's
(``splitlines`` also breaks at ``\\r``, ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``,
``\\u2028`` and ``\\u2029``; the viewer only at ``\\n``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from structext_core.structext_eval import samples as samples_mod
from structext_core.structext_eval import suites
from structext_core.studio.study import MAX_RESPONSE_CHARS
from structext_core.views import reference as viewer

LONGEST_ANSWER_CHARS = 39_000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def timed(action: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    action()  # warm-up
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        action()
        times.append((time.perf_counter() - began) * 1000)
    return percentile(times, 50), percentile(times, 95)


def test_hard_suite() -> tuple[list[dict], str]:
    path = suites.suite_path("test-hard")
    if path.exists():
        return samples_mod.read_jsonl(path), f"read from {path}"
    began = time.perf_counter()
    rows = suites.generate_suite("test-hard")
    return rows, f"generated with the core's suite generator in {time.perf_counter() - began:.1f} s"


def naive_add(reference: str, answer: str, first: int, last: int) -> str:
    lines = "\n".join(reference.splitlines()[first - 1:last])
    return answer + "\n" + lines if answer else lines


def naive_search(reference: str, query: str) -> list[tuple[int, int]]:
    query = query.lower()
    hits = []
    for number, line in enumerate(reference.splitlines(), 1):
        lowered, at = line.lower(), 0
        while (at := lowered.find(query, at)) != -1:
            hits.append((number, at + 1))
            at += len(query)
    return hits


def show(name: str, figures: tuple[float, float]) -> None:
    print(f"  {name:<58} p50 {figures[0]:8.3f} ms   p95 {figures[1]:8.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()

    rows, source = test_hard_suite()
    item = max(rows, key=lambda row: len(row["reference"]))
    ref = item["reference"]
    lines = viewer.Lines.of(ref)
    n = len(lines)
    answer = ("x" * 79 + "\n") * (LONGEST_ANSWER_CHARS // 80) + "last line, no line break"
    print(f"Test-Hard: {len(rows):,} items, {source}")
    print(f"largest item {item['id']} ({item['language']}): reference {len(ref):,} characters, {n:,} lines; "
          f"answer {len(answer):,} characters; {args.repeats} repeats\n")

    middle = n // 2
    small, large = (middle, middle + 5), (1, min(n, 5_000))
    for first, last in (small, large):
        ours = viewer.append(answer, viewer.take(lines, first, last), max_chars=MAX_RESPONSE_CHARS)
        assert ours == naive_add(ref, answer, first, last)  # the same result (no \r and the like here)

    print("Add lines X–Y to the answer (as the callback does it: split, take, append):")
    for first, last in (small, large):
        show(f"lines {first:,}–{last:,}, this page",
             timed(lambda: viewer.append(answer, viewer.take(viewer.Lines.of(ref), first, last),
                                         max_chars=MAX_RESPONSE_CHARS), args.repeats))
        show(f"lines {first:,}–{last:,}, naive (splitlines + join per call)",
             timed(lambda: naive_add(ref, answer, first, last), args.repeats))
    show("of which the split (Lines.of)", timed(lambda: viewer.Lines.of(ref), args.repeats))

    print("\nSearch (split + count + the first 200 hits with excerpts):")
    for query in ('"id"', "zz", "no such text anywhere"):
        found = viewer.search(lines, query)
        assert found.total == len(naive_search(ref, query))
        show(f"{query!r}: {found.summary}, this page",
             timed(lambda: viewer.search(viewer.Lines.of(ref), query), args.repeats))
        show(f"{query!r}: naive (per-line lower + find loop)", timed(lambda: naive_search(ref, query), args.repeats))

    print("\nGo to line (split, window of 25 lines, its HTML):")
    show(f"line {middle:,}", timed(lambda: viewer.window_html(viewer.window(viewer.Lines.of(ref), middle)),
                                   args.repeats))

    differ = sum(tuple(row["reference"].splitlines()) != viewer.Lines.of(row["reference"]).lines for row in rows)
    print(f"\nreferences whose splitlines() numbering differs from the viewer's: {differ} of {len(rows):,}")


if __name__ == "__main__":
    main()
