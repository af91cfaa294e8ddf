"""``score --metric paper --as-authors``: where the authors' library raises, and their loop.

The real pltrdy ``rouge`` 1.0.1 runs in a fresh interpreter (``authors_loop.py``) at the stack
depth and recursion limit of the authors' script, so it raises exactly where theirs does.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from structext_core.evaluation.paper_rouge import (
    AUTHORS_CALL_DEPTH,
    AUTHORS_RECURSION_LIMIT,
    EMPTY_RESPONSE,
    LIBRARY_FRAMES,
    RECURSION_LIMIT,
    authors_failure,
)
from structext_core.structext_eval.suites import generate_suite

LOOP = Path(__file__).with_name("authors_loop.py")


def library_outcomes(pairs: list[tuple[str, str]], limit: int = AUTHORS_RECURSION_LIMIT,
                     depth: int = AUTHORS_CALL_DEPTH) -> list[str]:
    done = subprocess.run([sys.executable, str(LOOP), "raises", str(limit), str(depth)],
                          input=json.dumps(pairs), capture_output=True, text=True, timeout=240, check=True)
    return json.loads(done.stdout)


def expected_outcome(failure: str | None) -> str:
    return {None: "ok", RECURSION_LIMIT: "RecursionError", EMPTY_RESPONSE: "ValueError: Reference is empty.",
            "empty answer": "ValueError: Hypothesis is empty."}[failure]


def words(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{k}" for k in range(count)]


def boundary_pairs(headroom: int, rng: random.Random) -> list[tuple[str, str]]:
    """Pairs whose deepest walk needs about ``headroom`` calls, in the shapes a model's
    response takes: the answer then a long ramble, a ramble then the answer, a short response
    to a long answer, the answer repeated, several sentences, a <JUMP>."""
    pairs = []
    for delta in range(-4, 5):
        size = headroom + delta
        answer = " ".join(words("a", 5))
        # the answer, then filler without a dot: the walk climbs every filler row
        pairs.append((answer, answer + " " + " ".join(words("f", size - 5))))
        # the filler first: the walk ends at the answer's first word
        pairs.append((answer, " ".join(words("f", size)) + " " + answer))
        # a long one-sentence answer, a short response: the walk goes left across the answer
        long_answer = " ".join(words("w", size))
        pairs.append((long_answer, "w3 w1 x"))
        pairs.append((long_answer, "<JUMP>"))
        # a ramble that repeats answer words at random
        vocabulary = words("v", 6)
        short = " ".join(rng.choice(vocabulary) for _ in range(6))
        pairs.append((short, " ".join(rng.choice(vocabulary + words("z", 3)) for _ in range(size))))
        # several sentences: only the long one can overflow
        pairs.append(("a0 a1. a2", "a0. " + answer + " " + " ".join(words("f", size - 4)) + ". a2"))
    return pairs


def test_the_prediction_is_exact_around_the_authors_boundary():
    """The authors' settings (recursion limit 1,000, library called from frame 7): on both sides
    of the boundary, in several shapes, the prediction is the library's outcome."""
    headroom = AUTHORS_RECURSION_LIMIT - AUTHORS_CALL_DEPTH - LIBRARY_FRAMES
    pairs = boundary_pairs(headroom, random.Random(0))
    predicted = [expected_outcome(authors_failure(a, r)) for a, r in pairs]
    assert library_outcomes(pairs) == predicted
    assert predicted.count("RecursionError") >= 12 and predicted.count("ok") >= 12


@pytest.mark.parametrize("limit, depth", [(260, 7), (400, 31)])
def test_the_prediction_is_exact_on_random_texts(limit, depth):
    """Random texts of many lengths around a lower limit (cheap for the library's quadratic
    table), from other stack depths: the formula, not a constant fitted to one setting."""
    rng = random.Random(limit)
    headroom = limit - depth - LIBRARY_FRAMES
    vocabulary = ["a", "b", "c", "d", "e", "A", "b,", "x.y", "", "1.5"]
    pairs = boundary_pairs(headroom, rng)
    for _ in range(150):
        n, m = rng.randint(headroom // 3, headroom + 20), rng.randint(1, headroom)
        answer = " ".join(rng.choice(vocabulary[:6]) for _ in range(m))
        response = " ".join(rng.choice(vocabulary) for _ in range(n))
        pairs.append((answer, response))
    predicted = [expected_outcome(authors_failure(a, r, recursion_limit=limit, call_depth=depth)) for a, r in pairs]
    outcomes = library_outcomes(pairs, limit, depth)
    assert [(k, o) for k, (o, p) in enumerate(zip(outcomes, predicted)) if o != p] == []
    assert predicted.count("RecursionError") >= 20 and predicted.count("ok") >= 20


def test_empty_texts():
    assert authors_failure("a b", "") == EMPTY_RESPONSE
    assert authors_failure("a b", " ... ") is None  # one sentence of blanks: the library scores it
    assert authors_failure("a b", "...") == EMPTY_RESPONSE
    assert authors_failure("...", "a") == "empty answer"
    pairs = [("a b", ""), ("a b", " ... "), ("a b", "..."), ("...", "a"), ("", "")]
    assert library_outcomes(pairs) == [expected_outcome(authors_failure(a, r)) for a, r in pairs]


def test_generated_test_hard_answers_against_long_responses():
    """Test-Hard answers (several sentences, many words) with responses of the lengths the
    issue saw (20,000 to 35,000 characters): the answer, then reasoning without a full stop."""
    rows = [row for row in generate_suite("test-hard", seed=0) if 200 < len(row["answer"]) < 3000][::40]
    rng = random.Random(2)
    pairs = []
    for row in rows[:12]:
        ramble = " ".join(rng.choice(row["answer"].split() or ["x"]) for _ in range(rng.randint(500, 1400)))
        pairs.append((row["answer"], row["answer"] + "\n" + ramble))
        pairs.append((row["answer"], ramble + "\n" + row["answer"]))
    predicted = [expected_outcome(authors_failure(a, r)) for a, r in pairs]
    assert library_outcomes(pairs) == predicted
    assert "RecursionError" in predicted and "ok" in predicted


# ------------------------------------------------------------------ the authors' loop, end to end

def authors_judge(path: Path) -> dict:
    done = subprocess.run([sys.executable, str(LOOP), "judge", str(path)], capture_output=True, text=True,
                          timeout=240, check=True)
    return json.loads(done.stdout)


def ramble(sample: dict, count: int = 1100) -> str:
    """A response that gives the answer, then goes on without a full stop."""
    return sample["answer"] + "\n" + " ".join(f"and{k % 37}" for k in range(count))


def authors_file(samples: list[dict]) -> tuple[list[str], dict[str, int]]:
    """Original-format lines covering every case of the authors' loop, by index."""
    from tests.evaluation.test_results_import import original

    cases = {
        "answer": lambda s: [s["answer"]],
        "empty": lambda s: [""],
        "over-long": lambda s: [ramble(s)],
        "jump, then answer": lambda s: ["<JUMP>", s["answer"]],
        "answer, then jump": lambda s: [s["answer"], "<JUMP>"],
        "empty, then jump": lambda s: ["", "<JUMP>"],
        "jump alone": lambda s: ["<JUMP>"],
        "answer, then empty": lambda s: [s["answer"], ""],
        "wrong, then answer": lambda s: ["no idea", s["answer"]],
        "answer, then wrong": lambda s: [s["answer"], "no idea"],
        "over-long, then shouted": lambda s: [ramble(s), s["answer"].upper()],
        "answer, then over-long": lambda s: [s["answer"], ramble(s)],
        "empty, then over-long": lambda s: ["", ramble(s)],
        "answer twice": lambda s: [s["answer"] + " " + s["answer"]],
    }
    lines, kinds, index = [], {}, 0
    pending = []
    for _round in range(2):
        for name, responses in cases.items():
            for hint in (False, True):
                sample = samples[index % len(samples)]
                kinds[name] = kinds.get(name, 0) + 1
                pending.append([original(index, sample, r, engine="m", rule_hint=hint) for r in responses(sample)])
                index += 1
    # interleave: an index's later lines come after other indices' lines, as in a resumed run
    for position in range(3):
        for group in pending:
            if position < len(group):
                lines.append(group[position])
    return lines, kinds


def test_as_authors_equals_the_authors_loop_on_the_same_file(tmp_path):
    from structext_core.cli.main import main as cli

    samples = generate_suite("test", seed=0)[::97]
    assert len({s["language"] for s in samples}) == 8
    sample_file = tmp_path / "samples.jsonl"
    sample_file.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    lines, _ = authors_file(samples)
    results_file = tmp_path / "m.jsonl"
    results_file.write_text("\n".join(lines) + "\n", encoding="utf-8")

    theirs = authors_judge(results_file)
    out = tmp_path / "scored.jsonl"
    assert cli(["score", str(results_file), "--samples", str(sample_file), "--metric", "paper", "--as-authors",
                "--out", str(out), "--n-boot", "20"]) == 0
    ours = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_index = {row["original_index"]: row for row in ours}
    assert len(by_index) == len(ours)

    # the same indices count, with the same values; the others are left out with a reason
    counted = {str(i): row["score"] for i, row in by_index.items() if row["authors_left_out"] is None}
    assert counted.keys() == theirs["indices"].keys()
    assert all(abs(counted[k] - theirs["indices"][k]) <= 1e-12 for k in counted)
    left_out = {row["authors_left_out"] for row in ours if row["authors_left_out"]}
    assert left_out == {EMPTY_RESPONSE, RECURSION_LIMIT}
    # their figures: the mean without a rule hint, and with one
    for prompt, n, mean in (("naive", theirs["n"], theirs["mean"]), ("hint", theirs["hint_n"], theirs["hint_mean"])):
        values = [row["score"] for row in ours if row["prompt"] == prompt and row["authors_left_out"] is None]
        assert len(values) == n and abs(sum(values) / len(values) - mean) <= 1e-12


def test_as_authors_summary_counts_the_left_out_rows(tmp_path, capsys):
    from structext_core.cli.main import main as cli

    samples = generate_suite("test", seed=0)[::97]
    sample_file = tmp_path / "samples.jsonl"
    sample_file.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    lines, kinds = authors_file(samples)
    results_file = tmp_path / "m.jsonl"
    results_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    theirs = authors_judge(results_file)
    capsys.readouterr()
    assert cli(["score", str(results_file), "--samples", str(sample_file), "--metric", "paper", "--as-authors",
                "--n-boot", "20"]) == 0
    printed = capsys.readouterr().out
    # the indices their loop never registers: "empty" (4 of them: 2 rounds x 2 prompts) and those
    # whose every line overflows
    left = sum(kinds.values()) - len(theirs["indices"])
    found = re.search(r"(\d+) of 56 results left out of every mean \((\d+) empty response, (\d+) recursion limit",
                      printed)
    assert found and int(found[1]) == left and int(found[2]) == 4 and int(found[3]) == left - 4 >= 4
    header, _, *rows = printed.splitlines()[2:]
    assert "score_paper %" in header and "rouge_l_paper %" in header and "score_strict %" in header
    assert "rouge_l %" not in header and "score_full %" not in header  # strict figures are named as such
    naive = next(line.split() for line in rows if line.split()[:2] == ["m", "naive"])
    hint = next(line.split() for line in rows if line.split()[:2] == ["m", "hint"])
    assert naive[2:4] == [str(theirs["n"]), f"{100 * theirs['mean']:.1f}"]
    assert hint[2:4] == [str(theirs["hint_n"]), f"{100 * theirs['hint_mean']:.1f}"]
    # --duplicates last alone scores every line the library raises on: another figure
    assert cli(["score", str(results_file), "--samples", str(sample_file), "--metric", "paper",
                "--duplicates", "last", "--n-boot", "20"]) == 0
    assert "left out" not in capsys.readouterr().out


def test_as_authors_needs_the_papers_metric(tmp_path, capsys):
    from structext_core.cli.main import main as cli

    assert cli(["score", "x.jsonl", "--samples", "y.jsonl", "--as-authors"]) == 2
    assert "add --metric paper" in capsys.readouterr().err
    assert cli(["score", "x.jsonl", "--samples", "y.jsonl", "--as-authors", "--metric", "paper",
                "--duplicates", "refuse"]) == 2
    assert "leave out --duplicates refuse" in capsys.readouterr().err


def test_epochs_left_out_by_the_authors_rules_are_not_averaged():
    from structext_core.evaluation.harness import average_epochs

    def row(epoch, score, left_out):
        return {"sample_id": "s", "model": "m", "prompt": "naive", "epoch": epoch, "score": score,
                "rouge_l_paper": score, "authors_left_out": left_out}

    merged, = average_epochs([row(1, 1.0, None), row(2, 0.0, EMPTY_RESPONSE), row(3, 0.5, None)])
    assert merged["score"] == 0.75 and merged["authors_left_out"] is None
    assert merged["epochs"] == 3 and merged["authors_left_out_epochs"] == 1
    gone, = average_epochs([row(1, 0.0, EMPTY_RESPONSE), row(2, 0.0, RECURSION_LIMIT)])
    assert gone["authors_left_out"] == EMPTY_RESPONSE and gone["authors_left_out_epochs"] == 2
    plain, = average_epochs([{k: v for k, v in row(1, 1.0, None).items() if k != "authors_left_out"},
                             {k: v for k, v in row(2, 0.0, None).items() if k != "authors_left_out"}])
    assert plain["score"] == 0.5 and "authors_left_out" not in plain


def test_our_schema_follows_the_same_rules(tmp_path):
    """Our result schema under --as-authors: a line that raises is skipped, a later scorable line
    replaces an earlier one, and a result whose every line raises is left out."""
    from structext_core.structext_eval.result_files import parse_results

    samples = generate_suite("test", seed=0)[:3]
    a, b, c = samples

    def line(sample, response):
        return json.dumps({"sample_id": sample["id"], "model": "m", "prompt": "naive", "response": response})

    ramble = b["answer"] + " " + "x " * 1200  # the answer, then 1,200 words: too deep for the library
    assert authors_failure(b["answer"], ramble) == RECURSION_LIMIT
    lines = [line(a, a["answer"]), line(a, ""), line(b, ""), line(b, ramble), line(c, "no"), line(c, c["answer"])]
    _, rows = parse_results(lines, samples, as_authors=True)
    assert [(r["sample_id"], r["response"], r["authors_left_out"]) for r in rows] == [
        (a["id"], a["answer"], None), (b["id"], ramble, RECURSION_LIMIT), (c["id"], c["answer"], None)]
