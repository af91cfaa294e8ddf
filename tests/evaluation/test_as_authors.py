"""``score --metric paper --as-authors``: where the authors' library raises, and their loop.

The real pltrdy ``rouge`` 1.0.1 runs in a fresh interpreter (``authors_loop.py``) at the stack
depth and recursion limit of the authors' script, so it raises exactly where theirs does.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from structext_core.benchmark.suites import generate_suite
from structext_core.evaluation.paper_rouge import (
    AUTHORS_CALL_DEPTH,
    AUTHORS_RECURSION_LIMIT,
    EMPTY_RESPONSE,
    LIBRARY_FRAMES,
    RECURSION_LIMIT,
    authors_failure,
)

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
