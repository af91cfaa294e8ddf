"""Full scoring at the paper's scale, beside the libraries it replaces, in one run.

The paper's grid is 12 models x 6 prompt settings x 5,800 samples (Test and Test-Hard):
about 420,000 responses. This builds responses of that shape (seeded; a mix of kinds a
model writes: the answer after ``### Answer:``, reasoning first, a perturbed answer, an
upper-cased one, the answer twice, a truncated one, an empty reply, a refusal), scores every
row with every metric (strict ROUGE-L on the extracted answer and on the whole response, the
authors' ROUGE-L, exact match, BLEU) with ``scoring.score_many``, and times, on a random
subsample of the same rows, what the same figures cost with the libraries themselves:
sacrebleu's sentence BLEU, pltrdy ``rouge`` 1.0.1 (the authors' metric; pairs where it raises
are counted) and Google's ``rouge-score``. Their totals for all rows are extrapolated from
the subsample, and said to be.

    .venv/bin/python benchmarks/bench_scoring.py                  # 420,000 rows, --jobs 2
    .venv/bin/python benchmarks/bench_scoring.py --rows 50000 --subsample 500

rouge-score's LCS is pure Python and quadratic (seconds on one long Test-Hard pair), so it
gets its own, smaller subsample (``--rouge-score-subsample``).

The goal (issue: full scoring at the speed of the rest): every metric on 420,000 rows in
at most 60 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

from structext_core.evaluation import scoring
from structext_core.structext_eval.suites import generate_suite

GOAL_SECONDS = 60.0
MODELS, PROMPTS = 12, 6
KINDS = ("marker", "reasoning", "perturbed", "upper", "doubled", "truncated", "empty", "refusal")


def response_for(answer: str, kind: str, rng: random.Random) -> str:
    if kind == "marker":
        return "### Answer:\n" + answer
    if kind == "reasoning":
        return "### Reasoning:\nI read the reference. The path follows the ids.\n### Answer:\n" + answer
    if kind == "perturbed":
        return "### Answer:\n" + " ".join(w for w in answer.split(" ") if rng.random() > 0.15)
    if kind == "upper":
        return answer.upper()
    if kind == "doubled":
        return answer + "\n" + answer
    if kind == "truncated":
        return "### Answer:\n" + answer[: max(1, len(answer) // 3)]
    if kind == "empty":
        return ""
    return "I cannot determine the answer from the reference."


def build_rows(total: int, seed: int) -> list[tuple[str, str]]:
    samples = generate_suite("test", seed=0) + generate_suite("test-hard", seed=0)
    rng = random.Random(seed)
    weights = (30, 20, 20, 5, 5, 10, 5, 5)
    full = MODELS * PROMPTS * len(samples)
    # fewer rows than the full grid: an even random draw over it, so both suites are in
    cells = range(full) if total >= full else sorted(rng.sample(range(full), total))
    pairs = []
    for cell in cells:
        answer = samples[cell % len(samples)]["answer"]
        kind = rng.choices(KINDS, weights)[0]
        pairs.append((answer, response_for(answer, kind, rng)))
    return pairs


# The authors' library fills a dict of (n+1)(m+1) cells per sentence pair: two 20,000-word
# sentences need tens of GB. Pairs over this many words a side are not given to it.
AUTHORS_MAX_WORDS = 3000


def time_library(name: str, function, pairs: list[tuple[str, str]]) -> tuple[float, int]:
    raised = 0
    started = time.perf_counter()
    for answer, response in pairs:
        try:
            function(answer, response)
        except (ValueError, RecursionError):
            raised += 1
    return time.perf_counter() - started, raised


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=MODELS * PROMPTS * 5800)
    parser.add_argument("--subsample", type=int, default=1000, help="rows timed with sacrebleu and pltrdy rouge")
    parser.add_argument("--rouge-score-subsample", type=int, default=100, help="rows timed with rouge-score")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    print(f"building {args.rows:,} responses ...", file=sys.stderr)
    pairs = build_rows(args.rows, args.seed)

    def progress(done: int, total: int) -> None:
        print(f"\rscored {done:,} of {total:,}", end="", file=sys.stderr, flush=True)

    load_before = os.getloadavg()[0]
    cpu_before = os.times()
    started = time.perf_counter()
    scored = scoring.score_many(pairs, jobs=args.jobs, progress=progress)
    ours = time.perf_counter() - started
    cpu_after = os.times()  # the workers have been reaped: their time is in children_*
    ours_cpu = sum(after - before for after, before in zip(cpu_after[:4], cpu_before[:4]))
    print(file=sys.stderr)
    assert len(scored) == len(pairs)

    from rouge import Rouge
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU

    subsample = random.Random(args.seed + 1).sample(pairs, min(args.subsample, len(pairs)))
    sacre = BLEU(effective_order=True)
    authors = Rouge()
    google = rouge_scorer.RougeScorer(["rougeL"])
    libraries = [
        ("sacrebleu sentence BLEU", lambda a, r: sacre.sentence_score(r, [a])),
        ("pltrdy rouge 1.0.1 (authors')", lambda a, r: authors.get_scores(a, r)),
        ("rouge-score ROUGE-L", lambda a, r: google.score(a, r)),
    ]
    google_rows = subsample[:args.rouge_score_subsample]
    small = [(a, r) for a, r in subsample
             if len(a.split()) <= AUTHORS_MAX_WORDS and len(r.split()) <= AUTHORS_MAX_WORDS]
    print(f"{len(pairs):,} rows of the paper's shape ({MODELS} models x {PROMPTS} prompts x Test + Test-Hard), "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'what':<44}{'rows timed':>12}{'seconds':>10}{'per row':>11}{'for all rows':>15}")
    print(f"{'ours, every metric, --jobs ' + str(args.jobs):<44}{len(pairs):>12,}{ours:>10.1f}"
          f"{ours / len(pairs) * 1e6:>9.0f}us{ours:>14.1f}s")
    for name, function in libraries:
        rows = small if name.startswith("pltrdy") else google_rows if name.startswith("rouge-score") else subsample
        seconds, raised = time_library(name, function, rows)
        note = f"  ({raised} raised)" if raised else ""
        print(f"{name + ', one metric, 1 core':<44}{len(rows):>12,}{seconds:>10.1f}"
              f"{seconds / len(rows) * 1e6:>9.0f}us{seconds * len(pairs) / len(rows):>13.0f}s*{note}")
    print("* extrapolated from the subsample to all rows")
    print(f"  ours used {ours_cpu:.1f} CPU seconds in all processes ({ours_cpu / len(pairs) * 1e6:.0f}us a row); "
          f"load average {load_before:.2f} when it started: other work on the machine stretches the wall time")
    print(f"  pltrdy rouge was given only the {len(small):,} subsample rows of at most {AUTHORS_MAX_WORDS:,} words a side "
          "(its cell dict exhausts memory on the longest Test-Hard pairs), so its figure is an underestimate")
    full = MODELS * PROMPTS * 5800
    projected = ours * full / len(pairs)
    verdict = "met" if projected <= GOAL_SECONDS else "NOT met"
    where = "" if len(pairs) >= full else f", projected from {len(pairs):,} rows"
    print(f"goal: every metric on {full:,} rows in <= {GOAL_SECONDS:.0f} s: {verdict} ({projected:.1f} s{where})")


if __name__ == "__main__":
    main()
