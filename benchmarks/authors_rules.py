"""What ``score --metric paper --as-authors`` hides, on one Test-Hard results file.

Builds the Test-Hard suite (seed 0, 2,088 samples) and one results file in our schema answering
every sample with one kind of response, drawn at random (seed 0): mostly the answer after
``### Answer:`` (some upper-cased, some with words dropped), about 4% empty responses (a model
that returned nothing) and about 2% over-long ones (the answer, then thousands of words of
reasoning without a full stop, as a small model decoding greedily to its token limit writes).
Then it scores the file with the command line, twice:

    python -m structext_core score FILE --samples SUITE --metric paper
    python -m structext_core score FILE --samples SUITE --metric paper --as-authors

and prints both summaries, how many results the authors' rules leave out and why, and which
kinds of response they were.

    .venv/bin/python benchmarks/authors_rules.py
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from structext_core.structext_eval.samples import write_jsonl
from structext_core.structext_eval.suites import generate_suite


def response_for(answer: str, rng: random.Random) -> tuple[str, str]:
    draw = rng.random()
    if draw < 0.04:
        return "empty", ""
    if draw < 0.06:
        words = answer.split() or ["so"]
        return "over-long", "### Answer:\n" + answer + "\nbecause " + " ".join(rng.choice(words) for _ in range(3000))
    if draw < 0.16:
        return "upper", "### Answer:\n" + answer.upper()
    if draw < 0.36:
        return "perturbed", "### Answer:\n" + " ".join(w for w in answer.split(" ") if rng.random() > 0.15)
    return "answer", "### Answer:\n" + answer


def main() -> None:
    rows = generate_suite("test-hard", seed=0)
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        suite, results = Path(folder, "test-hard.jsonl"), Path(folder, "results.jsonl")
        write_jsonl(suite, rows)
        kinds = {}
        lines = []
        for row in rows:
            kind, response = response_for(row["answer"], rng)
            kinds[row["id"]] = kind
            lines.append({"sample_id": row["id"], "model": "simulated", "prompt": "naive", "response": response})
        write_jsonl(results, lines)
        print(f"{len(rows):,} Test-Hard samples; responses: "
              + ", ".join(f"{n} {k}" for k, n in Counter(kinds.values()).most_common()))
        scored = {}
        for label, extra in (("paper", []), ("as-authors", ["--as-authors"])):
            out = Path(folder, f"{label}.jsonl")
            command = [sys.executable, "-m", "structext_core", "score", str(results), "--samples", str(suite),
                       "--metric", "paper", "--no-bleu", "--out", str(out), *extra]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            print(f"\n$ score ... --metric paper {' '.join(extra)}\n{done.stdout.rstrip()}")
            scored[label] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        left = Counter((row["authors_left_out"], kinds[row["sample_id"]])
                       for row in scored["as-authors"] if row["authors_left_out"])
        print("\nleft out by the authors' rules, by reason and kind of response:")
        for (reason, kind), count in sorted(left.items()):
            print(f"  {reason:<16} {kind:<10} {count:>5}")
        longest = max((len(r["response"]) for r in scored["as-authors"]
                       if r["authors_left_out"] == "recursion limit"), default=0)
        shortest = min((len(r["response"]) for r in scored["as-authors"]
                        if r["authors_left_out"] == "recursion limit"), default=0)
        print(f"  responses left out at the recursion limit: {shortest:,} to {longest:,} characters")


if __name__ == "__main__":
    main()
