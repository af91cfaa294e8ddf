"""Scoring as the paper: pooled level accuracy with Wilson intervals, aesthetics as imported,
overall = mean of five with a bootstrap over papers, chance per level; order never matters."""
from __future__ import annotations

import json
import math
import random

import pytest

from structext_core.aibench import predictions as preds
from structext_core.aibench import scoring
from structext_core.aibench.dataset import Dataset, ImageRecord, ImportFailed
from structext_core.aibench.papers import parse_paper
from tests.aibench.conftest import paper_json

FOUR = ["a", "b", "c", "none of the other options"]


def question(qid, level, answer="B", options=None):
    return {"id": qid, "level": level, "question": f"{qid}?", "options": options or (
        ["No", "Yes"] if level == 1 else FOUR), "answer": answer}


def make_dataset() -> Dataset:
    """Paper a (CVPR): one level-1 question; paper b (ICLR): three level-1 questions; both
    with one question of each of levels 2-4."""
    papers = {}
    for pid, conference, n1 in (("a", "CVPR", 1), ("b", "ICLR", 3)):
        qs = [question(f"l1_{i}", 1) for i in range(n1)] + [question(f"l{lv}", lv) for lv in (2, 3, 4)]
        paper, problems = parse_paper(json.dumps(paper_json(pid, conference=conference, questions=qs)).encode(), pid)
        assert not problems
        papers[pid] = paper
    ds = Dataset(papers=papers)
    for system in ("S1", "S2"):
        for pid in papers:
            ds.images[(system, pid)] = ImageRecord(system, pid, f"images/{system}/{pid}.png", 8, 8)
    ds.aesthetics = {("S1", "a", "UniPercept"): 40.0, ("S1", "b", "UniPercept"): 60.0,
                     ("S2", "a", "UniPercept"): 50.0, ("S2", "b", "UniPercept"): 50.0,
                     ("S1", "a", "PickScore"): 20.0}
    return ds


def lines(rows) -> str:
    return "".join(json.dumps(dict(zip(preds.FIELDS, r))) + "\n" for r in rows)


def s1_predictions():
    """S1: paper a all right; paper b: level 1 all wrong, levels 2-4 right except level 4 unclear."""
    rows = [("a", q, "S1", "qwen", "B") for q in ("l1_0", "l2", "l3", "l4")]
    rows += [("b", f"l1_{i}", "S1", "qwen", "A") for i in range(3)]
    rows += [("b", "l2", "S1", "qwen", "(B)"), ("b", "l3", "S1", "qwen", "The answer is B."),
             ("b", "l4", "S1", "qwen", "I cannot tell")]
    return rows


def test_wilson_matches_known_values():
    low, high = scoring.wilson(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    assert scoring.wilson(0, 10)[0] == 0.0 and round(scoring.wilson(0, 10)[1], 4) == 0.2775
    assert all(math.isnan(v) for v in scoring.wilson(0, 0))


def test_levels_are_pooled_over_questions_not_averaged_over_papers():
    ds = make_dataset()
    scores = scoring.score_systems(ds, preds.parse_predictions(lines(s1_predictions()), ds))
    (s1,) = scores
    assert (s1.levels[1].correct, s1.levels[1].n) == (1, 4)
    assert s1.levels[1].accuracy == 25.0  # a mean of per-paper means would say 50
    assert s1.levels[4].accuracy == 50.0 and s1.levels[4].unclear == 1
    assert s1.levels[2].accuracy == s1.levels[3].accuracy == 100.0
    assert (s1.levels[1].chance, s1.levels[2].chance) == (50.0, 25.0)
    low, high = scoring.wilson(1, 4)
    assert (s1.levels[1].low, s1.levels[1].high) == (100 * low, 100 * high)
    assert s1.aesthetics == 50.0 and s1.aesthetics_n == 2  # UniPercept, not PickScore
    assert s1.overall == pytest.approx((25 + 100 + 100 + 50 + 50) / 5)
    assert s1.overall_low <= s1.overall <= s1.overall_high


def test_missing_predictions_count_as_not_correct_and_are_counted():
    ds = make_dataset()
    (s2,) = scoring.score_systems(ds, preds.parse_predictions(lines([("a", "l2", "S2", "qwen", "B")]), ds))
    assert (s2.levels[2].correct, s2.levels[2].n, s2.levels[2].missing) == (1, 2, 1)
    assert s2.levels[1].missing == 4


def test_scores_do_not_depend_on_prediction_order():
    ds = make_dataset()
    rows = s1_predictions() + [(p, q, "S2", solver, random.Random(i).choice("ABCD"))
                               for i, (p, q) in enumerate([("a", "l1_0"), ("a", "l2"), ("b", "l3"), ("b", "l1_2")])
                               for solver in ("qwen", "gpt")]
    base = scoring.table3(scoring.score_systems(ds, preds.parse_predictions(lines(rows), ds)))
    for seed in range(3):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        again = scoring.table3(scoring.score_systems(ds, preds.parse_predictions(lines(shuffled), ds)))
        assert again.equals(base)
    assert list(base["system"]) == ["S1", "S2", "S2"] and list(base["solver"]) == ["qwen", "gpt", "qwen"]


def test_breakdowns_by_paper_conference_and_question():
    ds = make_dataset()
    rows = scoring.answer_rows(ds, preds.parse_predictions(lines(s1_predictions()), ds))
    by_conf = scoring.accuracy_by(rows, ["system", "conference"])
    level1 = by_conf[by_conf["level"] == 1].set_index("conference")
    assert level1.loc["CVPR", "accuracy"] == 100.0 and level1.loc["ICLR", "accuracy"] == 0.0
    by_paper = scoring.accuracy_by(rows, ["paper_id"])
    assert list(by_paper[by_paper["level"] == 1]["n"]) == [1, 3]
    by_question = scoring.accuracy_by(rows, ["paper_id", "question_id"])
    assert len(by_question) == 10 and set(by_question["n"]) == {1}


def test_choosing_the_aesthetic_metric():
    ds = make_dataset()
    assert scoring.choose_metric(ds) == "UniPercept"
    with pytest.raises(ValueError, match="no aesthetic scores of 'AesR1'; imported: PickScore, UniPercept"):
        scoring.choose_metric(ds, "AesR1")
    ds.aesthetics = {}
    (s1,) = scoring.score_systems(ds, preds.parse_predictions(lines(s1_predictions()), ds))
    assert s1.aesthetics is None and s1.overall is None


def test_prediction_problems_are_named_by_line_and_field():
    ds = make_dataset()
    text = lines([("a", "l2", "S1", "qwen", "B"), ("zz", "l2", "S1", "qwen", "B"), ("a", "l9", "S1", "qwen", "B"),
                  ("a", "l2", "S9", "qwen", "B"), ("a", "l2", "S1", "qwen", "C")]) + "[1]\n" + '{"paper_id": "a"}\n'
    with pytest.raises(ImportFailed) as failed:
        preds.parse_predictions(text, ds, "p.jsonl")
    assert [str(p) for p in failed.value.problems] == [
        "p.jsonl: line 2.paper_id: 'zz' is not a paper of the data set",
        "p.jsonl: line 3.question_id: 'l9' is not a question of paper 'a'",
        "p.jsonl: line 4.system: 'S9' has no images in the data set",
        "p.jsonl: line 5: a second prediction for a/l2 by 'qwen' on 'S1'",
        "p.jsonl: line 6: not a JSON object",
        "p.jsonl: line 7.question_id: missing or not text",
    ]


@pytest.mark.parametrize("seed", range(3))
def test_score_systems_counts_as_the_answer_rows_do(seed):
    """score_systems counts on arrays (issue 31: `aibench score` in under 2 s); every level number
    equals accuracy_by over answer_rows, the frame the breakdowns use, with missing and unclear."""
    ds = make_dataset()
    rng = random.Random(seed)
    questions = [(p.id, q.id) for p in ds.papers.values() for q in p.questions]
    rows = [(p, q, system, solver, rng.choice(["A", "B", "C", "(B)", "B or C", "no idea"]))
            for system in ("S1", "S2") for solver in ("qwen", "gpt") for p, q in questions if rng.random() < 0.8]
    predictions = preds.parse_predictions(lines(rows), ds)
    table = scoring.accuracy_by(scoring.answer_rows(ds, predictions), ["system", "solver"])
    scores = scoring.score_systems(ds, predictions)
    assert len(table) == sum(len(s.levels) for s in scores) == 4 * len(scores)
    for s in scores:
        for level, got in s.levels.items():
            row = table[(table["system"] == s.system) & (table["solver"] == s.solver) & (table["level"] == level)]
            assert len(row) == 1
            row = row.iloc[0]
            assert (got.n, got.correct, got.unclear, got.missing) == (row.n, row.correct, row.unclear, row.missing)
            for name in ("accuracy", "low", "high", "chance"):
                assert getattr(got, name) == pytest.approx(row[name], abs=1e-12)
