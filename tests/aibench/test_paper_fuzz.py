"""Hostile paper files: whatever a file holds, parse_paper returns a paper or named problems, never raises."""
from __future__ import annotations

import copy
import json
import random

from structext_core.aibench.papers import parse_paper
from tests.aibench.conftest import paper_json

ODD_VALUES = [None, True, 0, -1, 1.5, "", " ", "x" * 3000, [], {}, [None], {"a": 1}, "Level 9: Nothing", "\x00",
              float("1e308"), [[[]]], "../../etc", "Z", ["a"] * 10]


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from paths(child, (*prefix, i))


def mutate(document: dict, rng: random.Random) -> dict:
    doc = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        where = rng.choice([p for p in paths(doc) if p])
        parent = doc
        for step in where[:-1]:
            parent = parent[step]
        if rng.random() < 0.15 and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    return doc


def test_random_damage_gives_problems_never_exceptions():
    rng = random.Random(21)
    base = paper_json("p1")
    refused = 0
    for _ in range(400):
        paper, problems = parse_paper(json.dumps(mutate(base, rng)).encode(), "papers/p1.json")
        assert (paper is None) == bool(problems)
        assert all(p.file == "papers/p1.json" and str(p) for p in problems)
        refused += paper is None
    assert refused > 200  # most damage is noticed


def test_deep_nesting_and_non_objects():
    deep = b"[" * 200_000 + b"]" * 200_000
    for data, message in [(deep, "nested too deeply to read"), (b"[1, 2]", "must hold one JSON object (a paper)"),
                          (b"\xff\xfe", "not UTF-8 text (byte 0)"), (b"", "not JSON: Expecting value at line 1, column 1")]:
        paper, problems = parse_paper(data, "papers/x.json")
        assert paper is None and [str(p) for p in problems] == [f"papers/x.json: {message}"]
