"""What answering a question reads: no statement of a page run reads a study item's row unless
it wants that item's sample.

A study item's row holds its whole sample (``sample_json``, often tens of kilobytes); until
migration 14 moved the sample to the end of the row, ``kind`` came after it, so reading ``kind``
from the row walked the sample's pages, and reading a row still loads its sample. The question page once counted an annotator's practice questions that way, three
times a submit, each count reading every item of the study (about 5 ms at 500 Test-Hard items;
``benchmarks/bench_annotators.py``). Counting goes through ``study_items_by_kind`` instead.

Checked on the plans SQLite makes for every statement the answering functions run (captured with
the connection's trace callback): a study item read by its row id must be one whose
``sample_json`` the statement uses.
"""

from __future__ import annotations

import re

import pytest

from structext_core.studio import study
from structext_core.studio.crowd import settings
from tests.studio.study.support import make_study

_ALIAS = re.compile(r"\bstudy_items\s+(?:AS\s+)?(\w+)", re.IGNORECASE)
_ROW_READ = re.compile(r"^SEARCH (\w+) USING INTEGER PRIMARY KEY")


def rows_read_without_their_sample(db, statement: str) -> list[str]:
    """The aliases of ``study_items`` this statement reads by row id without using their sample."""
    if "study_items" not in statement or not statement.lstrip().upper().startswith(("SELECT", "WITH")):
        return []
    aliases = set(_ALIAS.findall(statement)) | {"study_items"}  # the table itself, where it has no alias
    plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + statement).fetchall()]
    found = []
    for line in plan:
        match = _ROW_READ.match(line)
        if not match or match.group(1) not in aliases:
            continue
        uses_sample = "sample_json" in statement if match.group(1) == "study_items" else \
            f"{match.group(1)}.sample_json" in statement
        if not uses_sample:
            found.append(f"{match.group(1)}: {line}")
    return found


def statements_of(db, action) -> list[str]:
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        db.conn.set_trace_callback(None)
    return seen


@pytest.mark.parametrize("per_item", [None, 2], ids=["everyone", "dealt k per item"])
def test_a_page_run_and_a_submit_read_no_item_row_to_count(db, samples, annotators, per_item):
    study_id = make_study(db, samples, annotators[:1], n_items=8, practice_items=2, gold_items=2)
    if per_item is not None:  # a crowd study: counted questions dealt one at a time (issue 45)
        settings.save_settings(db, study_id, None, per_item=per_item, hold_seconds=600)
    for other in annotators[1:]:
        study.add_annotator(db, study_id, other["id"])
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id, at=0.0)

    def answer_three() -> None:
        moment = 10.0
        for _ in range(3):
            study.studies_for_annotator(db, user_id)
            study.own_progress(db, study_id, user_id, at=moment)
            study.pending_practice_feedback(db, study_id, user_id)
            view = study.open_question(db, study_id, user_id, tab="t1", at=moment)
            study.heartbeat(db, user_id, view.assignment_id, "t1", at=moment + 5)
            study.record_activity(db, user_id, view.assignment_id, "t1", draft="draft", at=moment + 6)
            submission = study.submit_answer(db, user_id, view.assignment_id, "an answer", tab="t1", at=moment + 8)
            study.practice_feedback(db, user_id, submission.response_id)
            study.response_feedback(db, user_id, submission.response_id)
            moment += 10

    statements = statements_of(db, answer_three)
    assert len(statements) > 30  # the trace saw the answering
    assert any("study_items" in s for s in statements)
    offenders = {s: found for s in statements if (found := rows_read_without_their_sample(db, s))}
    assert offenders == {}


def test_the_check_sees_a_count_that_reads_item_rows(db, samples, annotators):
    """The check itself: the way the page used to count practice questions is caught."""
    study_id = make_study(db, samples, annotators, n_items=8, practice_items=2)
    old_count = (
        "SELECT COUNT(*) FROM assignments a JOIN study_items i ON i.id = a.item_id"
        f" WHERE a.study_id = {study_id} AND a.user_id = {annotators[0]['id']} AND i.kind = 'practice'"
    )
    assert rows_read_without_their_sample(db, old_count) == ["i: SEARCH i USING INTEGER PRIMARY KEY (rowid=?)"]
    reading_the_sample = old_count.replace("COUNT(*)", "json_extract(i.sample_json, '$.answer')")
    assert rows_read_without_their_sample(db, reading_the_sample) == []
