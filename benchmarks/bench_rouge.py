"""Benchmark: structext_core.evaluation.scoring.rouge_l against rouge-score, in one run.

Generates Test-Hard (seed 0), takes answers of two length bands, perturbs each into a
response (tokens dropped, replaced, swapped, case changed), and times both implementations
on the same pairs, checking that they agree within 1e-9. rouge-score's pure-Python LCS is
quadratic, so its time per pair is measured once; ours is repeated for a stable figure.

Run from the repository root:

    .venv/bin/python benchmarks/bench_rouge.py            # defaults: 5 long, 15 medium pairs
    .venv/bin/python benchmarks/bench_rouge.py --long 8 --medium 30

Long answers are the shortest ones above 15,000 characters (the speed-up grows with
length, so these are the least flattering); medium ones are picked at even steps through
the answers of 2,000-12,000 characters sorted by length, so they follow the suite's own
length distribution (mostly near 2,000-4,000). Prints one line per band; the last column is the share of our
time spent tokenising (the rest maps tokens to code points and runs the LCS). The exit
status is 1 if any pair differs from rouge-score by more than 1e-9.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from rouge_score import rouge_scorer

from structext_core.evaluation.scoring import lcs_length, rouge_l, tokenize
from structext_core.structext_eval.suites import generate_suite


def perturb(answer: str, rng: random.Random) -> str:
    """A plausible wrong-ish response: about 15% of the words changed."""
    words = answer.split(" ")
    out = []
    for word in words:
        roll = rng.random()
        if roll < 0.05:
            continue  # dropped
        if roll < 0.10:
            out.append(rng.choice(words))  # replaced by another word of the answer
        elif roll < 0.13:
            out.append(word.upper())
        else:
            out.append(word)
        if rng.random() < 0.02:
            out.append("extra")
    for _ in range(max(1, len(out) // 200)):
        i, j = rng.randrange(len(out)), rng.randrange(len(out))
        out[i], out[j] = out[j], out[i]
    return " ".join(out)


def time_ours(answer: str, response: str, min_seconds: float = 0.2) -> float:
    """Mean seconds per call over enough repeats to last ``min_seconds``."""
    repeats, elapsed = 0, 0.0
    start = time.perf_counter()
    while elapsed < min_seconds or repeats < 3:
        rouge_l(answer, response)
        repeats += 1
        elapsed = time.perf_counter() - start
    return elapsed / repeats


def time_split(answer: str, response: str, repeats: int = 20) -> tuple[float, float]:
    """Mean seconds per call spent tokenising and in the LCS."""
    start = time.perf_counter()
    for _ in range(repeats):
        a, b = tokenize(answer), tokenize(response)
    tokenising = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    for _ in range(repeats):
        lcs_length(a, b)
    return tokenising, (time.perf_counter() - start) / repeats


def pick_medium(answers: list[str], count: int) -> list[str]:
    band = sorted((a for a in answers if 2_000 <= len(a) <= 12_000), key=len)
    if len(band) <= count:
        return band
    return [band[round(i * (len(band) - 1) / (count - 1))] for i in range(count)] if count > 1 else band[:1]


def run_band(name: str, answers: list[str], rng: random.Random, scorer) -> dict:
    reference_time = ours_time = 0.0
    worst = 0.0
    tokenising = lcs = 0.0
    tokens = []
    for answer in answers:
        response = perturb(answer, rng)
        start = time.perf_counter()
        expected = scorer.score(answer, response)["rougeL"].fmeasure
        reference_time += time.perf_counter() - start
        ours_time += time_ours(answer, response)
        worst = max(worst, abs(rouge_l(answer, response) - expected))
        split = time_split(answer, response)
        tokenising += split[0]
        lcs += split[1]
        tokens.append(len(tokenize(answer)))
        print(f"  {name}: {len(answer):>7,} chars, {tokens[-1]:>6,} tokens done", file=sys.stderr)
    lengths = [len(a) for a in answers]
    return {
        "band": name,
        "pairs": len(answers),
        "chars": f"{min(lengths):,}-{max(lengths):,} (median {statistics.median(lengths):,.0f})",
        "tokens": f"{min(tokens):,}-{max(tokens):,}",
        "rouge_score_s": reference_time,
        "ours_s": ours_time,
        "speedup": reference_time / ours_time,
        "max_abs_diff": worst,
        "tokenise_share": tokenising / (tokenising + lcs),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, default=5, help="pairs with answers above 15,000 characters")
    parser.add_argument("--medium", type=int, default=15, help="pairs with answers of 2,000-12,000 characters")
    parser.add_argument("--seed", type=int, default=0, help="seed of Test-Hard and of the perturbations")
    args = parser.parse_args(argv)

    print("generating Test-Hard...", file=sys.stderr)
    answers = [s["answer"] for s in generate_suite("test-hard", seed=args.seed)]
    long_band = sorted((a for a in answers if len(a) > 15_000), key=len)[: args.long]
    medium_band = pick_medium(answers, args.medium)
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    rng = random.Random(f"bench-rouge|{args.seed}")
    rows = [run_band("long >15k", long_band, rng, scorer), run_band("medium 2k-12k", medium_band, rng, scorer)]

    print(f"{'band':<15} {'pairs':>5}  {'answer chars':<30} {'tokens':<14} {'rouge-score s':>13} "
          f"{'ours s':>9} {'speed-up':>9} {'max |diff|':>10} {'tokenising':>10}")
    for row in rows:
        print(f"{row['band']:<15} {row['pairs']:>5}  {row['chars']:<30} {row['tokens']:<14} "
              f"{row['rouge_score_s']:>13.3f} {row['ours_s']:>9.5f} {row['speedup']:>8,.0f}x "
              f"{row['max_abs_diff']:>10.1e} {row['tokenise_share']:>9.0%}")
    return 0 if all(row["max_abs_diff"] <= 1e-9 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
