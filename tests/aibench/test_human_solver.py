"""People as an AIBench solver, on hand-made frames: majorities, splits and the ranking of the
disagreements on the original figure (no database)."""
from __future__ import annotations

import pandas as pd
import pytest

from structext_core.aibench import human_solver as hs
from structext_core.aibench.model import ORIGINAL_SYSTEM

O = ORIGINAL_SYSTEM


def people(*answers):
    """(question_id, letters, key) -> one answer row per letter, on the original figure, level 2."""
    rows = []
    for qid, letters, key in answers:
        rows += [{"annotator": f"p{i}", "system": O, "paper_id": "p", "question_id": qid, "level": 2,
                  "letter": letter, "correct": letter == key} for i, letter in enumerate(letters)]
    return pd.DataFrame(rows)


def solver(**letters):
    return pd.DataFrame([{"system": O, "solver": "s", "paper_id": "p", "question_id": qid, "level": 2,
                          "letter": letter, "correct": False} for qid, letter in letters.items()])


@pytest.mark.parametrize("letters, majority", [("AAB", "A"), ("AB", None), ("AABB", None), ("A", "A"), ("ABC", None)])
def test_majority_is_more_than_half(letters, majority):
    table = hs.question_table(people(("q", letters, "A")), solver(q="A"), {("p", "q"): "A"})
    assert table["majority"].iloc[0] == majority


def test_disagreements_are_ranked_by_category_then_consensus():
    keys = {("p", q): "A" for q in ("split", "missed", "disputed", "misread", "weak", "fine")}
    answers = people(("split", "AB", "A"), ("missed", "BBA", "A"), ("disputed", "CC", "A"), ("misread", "AAA", "A"),
                     ("weak", "AAB", "A"), ("fine", "AA", "A"))
    rows = solver(split="B", missed="A", disputed="C", misread="D", weak="D", fine="A")
    found = hs.disagreements_on_original(hs.question_table(answers, rows, keys))
    assert list(found["question_id"]) == ["disputed", "missed", "misread", "weak", "split"]
    assert list(found["category"]) == ["key_disputed", "people_wrong", "solver_differs", "solver_differs",
                                       "people_split"]
    assert hs.tally(["B", "A", "B"]) == "B×2 A×1"


def test_other_systems_are_never_on_the_original_list():
    answers = people(("q", "BB", "A")).assign(system="Blank Image")
    rows = solver(q="B").assign(system="Blank Image")
    table = hs.question_table(answers, rows, {("p", "q"): "A"})
    assert len(table) == 1 and hs.disagreements_on_original(table).empty


def test_no_people_no_rows():
    empty = pd.DataFrame(columns=list(hs.PEOPLE_COLUMNS))
    assert hs.accuracy_beside_solvers(empty, solver(q="A")).empty
    assert hs.question_table(empty, solver(q="A"), {}).empty
