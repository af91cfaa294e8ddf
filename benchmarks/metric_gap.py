"""The two ROUGE-L metrics side by side on one Test-Hard results file: where they differ and by how much.

Builds the Test-Hard suite (seed 0, 2,088 samples) and one results file answering every sample
with one of eight kinds of response, in turn (the kinds the issue traced the 8.9-point gap to,
plus the ordinary ones), writes it, and scores it with the command line, twice:

    python -m structext_core score FILE --samples SUITE --metric strict
    python -m structext_core score FILE --samples SUITE --metric paper

It prints each run's summary line and, from the scored rows, the accuracy of every kind under
both metrics. A subsample is also scored with the authors' library itself (pltrdy ``rouge``
1.0.1, a dev requirement) to show the ``paper`` column is theirs.

    .venv/bin/python benchmarks/metric_gap.py
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from structext_core.structext_eval.samples import write_jsonl
from structext_core.structext_eval.suites import generate_suite

KINDS = {
    "marker": "the answer after `### Answer:`",
    "reasoning": "a short reasoning, then the answer after `### Answer:`",
    "bare": "the answer alone, no marker",
    "upper": "the answer upper-cased, after the marker",
    "doubled": "the answer written twice, after the marker",
    "perturbed": "the answer with 15% of its words dropped, after the marker",
    "chatty": "the answer inside a sentence (`The answer is ... .`), no marker",
    "refusal": "a refusal",
}


def response_for(answer: str, kind: str, rng: random.Random) -> str:
    if kind == "marker":
        return "### Answer:\n" + answer
    if kind == "reasoning":
        return "### Reasoning:\nI follow the ids in the reference and read the field.\n### Answer:\n" + answer
    if kind == "bare":
        return answer
    if kind == "upper":
        return "### Answer:\n" + answer.upper()
    if kind == "doubled":
        return "### Answer:\n" + answer + "\n" + answer
    if kind == "perturbed":
        return "### Answer:\n" + " ".join(w for w in answer.split(" ") if rng.random() > 0.15)
    if kind == "chatty":
        return f"The answer is {answer}."
    return "I cannot determine the answer from the reference."


def score(results: Path, suite: Path, metric: str, out: Path) -> str:
    command = [sys.executable, "-m", "structext_core", "score", str(results), "--samples", str(suite),
               "--metric", metric, "--out", str(out), "--no-bleu", "--n-boot", "200"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def main() -> None:
    samples = generate_suite("test-hard", seed=0)
    rng = random.Random(0)
    kinds = list(KINDS)
    with tempfile.TemporaryDirectory() as tmp:
        suite, results = Path(tmp) / "test-hard.jsonl", Path(tmp) / "model.jsonl"
        write_jsonl(suite, samples)
        kind_of = {}
        rows = []
        for index, sample in enumerate(samples):
            kind = kinds[index % len(kinds)]
            kind_of[sample["id"]] = kind
            rows.append({"sample_id": sample["id"], "model": "mix", "prompt": "naive",
                         "response": response_for(str(sample["answer"]), kind, rng)})
        write_jsonl(results, rows)
        print(f"one results file: {len(rows):,} Test-Hard responses, {len(kinds)} kinds in turn\n")
        scored = {}
        for metric in ("strict", "paper"):
            out = Path(tmp) / f"{metric}.jsonl"
            print(f"$ python -m structext_core score model.jsonl --samples test-hard.jsonl --metric {metric}")
            print(score(results, suite, metric, out))
            print()
            scored[metric] = [json.loads(line) for line in out.read_text().splitlines()]

        by_kind: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for row in scored["strict"]:
            by_kind[kind_of[row["sample_id"]]]["strict"].append(row["score_strict"])
            by_kind[kind_of[row["sample_id"]]]["paper"].append(row["score_paper"])
        print(f"{'kind':<10} {'n':>4} {'strict':>7} {'paper':>7}  response")
        for kind in kinds:
            strict, paper = by_kind[kind]["strict"], by_kind[kind]["paper"]
            print(f"{kind:<10} {len(strict):>4} {100 * sum(strict) / len(strict):6.1f}% "
                  f"{100 * sum(paper) / len(paper):6.1f}%  {KINDS[kind]}")
        every = [r["score_strict"] for r in scored["strict"]], [r["score_paper"] for r in scored["strict"]]
        print(f"{'all':<10} {len(every[0]):>4} {100 * sum(every[0]) / len(every[0]):6.1f}% "
              f"{100 * sum(every[1]) / len(every[1]):6.1f}%")

        try:
            from rouge import Rouge
        except ImportError:
            print("\n(pltrdy rouge not installed: `pip install -r requirements-dev.txt` to compare with it)")
            return
        answers = {s["id"]: str(s["answer"]) for s in samples}
        responses = {r["sample_id"]: r["response"] for r in rows}
        # The library's LCS is pure Python and quadratic: only pairs of at most 1,000 words a side.
        small = [row for row in scored["strict"] if len(answers[row["sample_id"]].split()) <= 1000
                 and len(responses[row["sample_id"]].split()) <= 1000]
        check = random.Random(1).sample(small, min(300, len(small)))
        compared = raised = 0
        worst = 0.0
        for row in check:
            response = responses[row["sample_id"]]
            try:
                theirs = Rouge().get_scores(answers[row["sample_id"]], response)[0]["rouge-l"]["f"]
            except (ValueError, RecursionError):
                raised += 1
                continue
            compared += 1
            worst = max(worst, abs(theirs - row["rouge_l_paper"]))
        print(f"\nthe authors' library on {len(check)} of these rows (of the {len(small):,} with at most 1,000 words "
              f"a side): {compared} compared, largest |difference| {worst:.1e}; "
              f"{raised} raised (empty text or RecursionError) and were not compared")


if __name__ == "__main__":
    main()
