"""The synthetic AIBench: deterministic per seed, keys by rule, damage with known right answers,
and end to end through the import and the scorer: a solver answering from the undamaged graph
scores 100 on the original figures and exactly the computable accuracy on each damaged system."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from structext_core.aibench import predictions, scoring
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.model import INSUFFICIENT, LETTERS, ORIGINAL_SYSTEM
from structext_core.aibench.papers import parse_paper
from structext_core.aibench.synthetic import build, damage, draw, graphs, rules

PAPERS = 4


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("syn") / "set"
    built = build.write_set(folder, seed=7, papers=PAPERS)
    return folder, built


def test_same_seed_same_bytes_other_seed_other_bytes(synthetic, tmp_path):
    folder, _ = synthetic
    build.write_set(tmp_path / "again", seed=7, papers=PAPERS)
    assert files(tmp_path / "again") == files(folder)
    build.write_set(tmp_path / "other", seed=8, papers=1)
    assert files(tmp_path / "other")["figures/syn8-0000.png"] != files(folder)["figures/syn7-0000.png"]


def test_a_paper_rebuilt_alone_is_the_same(synthetic, tmp_path):
    folder, _ = synthetic
    build.write_paper(tmp_path / "one", seed=7, index=2)
    alone = files(tmp_path / "one")
    assert alone and all(files(folder)[name] == data for name, data in alone.items())


def test_graphs_have_phases_branches_and_a_loop(synthetic):
    _, built = synthetic
    for b in built:
        g = b.spec.graph
        assert 2 <= len(g.phases) <= 4
        assert len(rules.qualifying_labels({"kind": "fan_out"}, g)) == 1
        assert len(rules.qualifying_labels({"kind": "fan_in"}, g)) == 1
        assert len(rules.qualifying_labels({"kind": "feedback"}, g)) == 1
        assert {n.type for n in g.nodes} == {"model", "data"}


def test_questions_follow_the_papers_shape_and_keys_are_answerable(synthetic):
    folder, built = synthetic
    keys_level1, insufficient_letters = set(), set()
    for b in built:
        levels = [r.question.level for r in b.questions]
        assert set(levels) == {1, 2, 3, 4}
        for r in b.questions:
            q = r.question
            if q.level == 1:
                assert q.options == ("No", "Yes")
                keys_level1.add(q.options[LETTERS.index(q.answer)])
            else:
                assert len(q.options) == 4 and INSUFFICIENT in q.options
                assert q.options[LETTERS.index(q.answer)] != INSUFFICIENT
                insufficient_letters.add(LETTERS[q.options.index(INSUFFICIENT)])
        paper, problems = parse_paper((folder / "papers" / f"{b.spec.paper_id}.json").read_bytes(), "x")
        assert problems == [] and [q.answer for q in paper.questions] == [r.question.answer for r in b.questions]
    assert keys_level1 == {"No", "Yes"}  # real "No" questions
    assert len(insufficient_letters) >= 3  # at a varying letter


def test_each_damage_does_what_it_says():
    spec = graphs.generate_paper(7, 0)
    g = spec.graph
    dropped = damage.damaged_graph(g, "Dropped Node", 7, 0)
    assert len(dropped.nodes) == len(g.nodes) - 1 and len(dropped.edges) < len(g.edges)
    rewired = damage.damaged_graph(g, "Rewired Edge", 7, 0)
    assert len(set(rewired.edges) - set(g.edges)) == 1 and rewired.nodes == g.nodes
    garbled = damage.damaged_graph(g, "Garbled Label", 7, 0)
    changed = [(a.label, b.label) for a, b in zip(g.nodes, garbled.nodes) if a.label != b.label]
    assert len(changed) == 1 and sorted(changed[0][0]) == sorted(changed[0][1])
    merged = damage.damaged_graph(g, "Merged Phases", 7, 0)
    assert len(merged.phases) == len(g.phases) - 1 and merged.edges == g.edges
    assert damage.damaged_graph(g, "Blank Image", 7, 0) is None
    assert draw.figure_png(None) != draw.figure_png(g)


def test_right_answers_on_damaged_images(synthetic):
    _, built = synthetic
    for b in built:
        for r in b.questions:
            q = r.question
            blank = b.truth("Blank Image", r)
            assert blank == (LETTERS[q.options.index("No")] if q.level == 1 else LETTERS[q.options.index(INSUFFICIENT)])
            if r.rule["kind"] == "exists":
                drawn = {n.label for n in b.drawn["Dropped Node"].nodes}
                assert (b.truth("Dropped Node", r) == "B") == (r.rule["label"] in drawn)


def _solver_from_the_drawn_graph(folder: Path, dataset, built) -> list[dict]:
    """A perfect reader of each image: answers every question about a system's image from the
    graph that system drew (the undamaged graph for the original figure), by the rule stored in
    the paper's JSON. It never sees the key."""
    drawn = {b.spec.paper_id: b.drawn for b in built}
    rows = []
    for pid, paper in dataset.papers.items():
        document = json.loads((folder / "papers" / f"{pid}.json").read_text())
        rule_of = {q["id"]: q["rule"] for q in document["questions"]}
        for q in paper.questions:
            for system in dataset.systems:
                letter = rules.right_answer(rule_of[q.id], q.options, drawn[pid][system])
                rows.append({"paper_id": pid, "question_id": q.id, "system": system, "solver": "reader",
                             "prediction": letter})
    return rows


def test_end_to_end_scores_are_the_computable_ones(synthetic, tmp_path, pool):
    folder, built = synthetic
    dataset = aibench_import.import_folder(folder, tmp_path / "stored", pool=pool)
    assert dataset.systems == list(build.SYSTEMS[:1]) + sorted(build.SYSTEMS[1:])
    rows = _solver_from_the_drawn_graph(folder, dataset, built)
    random.Random(0).shuffle(rows)  # the order of the file must not matter
    text = "".join(json.dumps(r) + "\n" for r in rows)
    scores = scoring.score_systems(dataset, predictions.parse_predictions(text, dataset))
    assert len(scores) == len(build.SYSTEMS)
    expected = json.loads((folder / "expected.json").read_text())["perfect_solver"]
    truth = [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines()]
    for s in scores:
        got = {str(level): score.accuracy for level, score in s.levels.items()}
        if s.system == ORIGINAL_SYSTEM:
            assert set(got.values()) == {100.0}
        assert got == pytest.approx(expected[s.system], abs=1e-9)
        for level in (1, 2, 3, 4):
            counted = [r["key"] == r["truth"] for r in truth if r["system"] == s.system and r["level"] == level]
            assert (s.levels[level].correct, s.levels[level].n) == (sum(counted), len(counted))
    for system in damage.DAMAGES:
        assert min(expected[system].values()) < 100.0, system  # every damage costs something
    assert set(expected["Blank Image"].values()) - {0.0} == {expected["Blank Image"]["1"]}  # only "No" keys survive
    # a solver that ignores the image and parrots the keys scores 100 everywhere: scoring is against the keys
    keys = {(p, q.id): q.answer for p, paper in dataset.papers.items() for q in paper.questions}
    parrot = "".join(json.dumps({**r, "solver": "parrot", "prediction": keys[(r["paper_id"], r["question_id"])]})
                     + "\n" for r in rows)
    for s in scoring.score_systems(dataset, predictions.parse_predictions(parrot, dataset)):
        assert {score.accuracy for score in s.levels.values()} == {100.0}
