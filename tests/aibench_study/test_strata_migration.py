"""Migration 14 on a database of the schema before it: a StrucText study and an AIBench study,
answered, keep every row and read back exactly as they were written; a fresh database gets the
same schema. (Here because the AIBench study needs the stored synthetic data set of this folder.)

The old database is the one this code wrote, laid out as migrations 1 to 13 left it: created by
those migrations, then filled row for row from a database the study API filled, each item's
strata put back into the per-benchmark columns migration 10 documents.
"""
from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

from structext_core.aibench import study as aibench_study
from structext_core.structext_eval import study as structext_study
from structext_core.studio import storage, study
from structext_core.studio.migrations import m0014_study_strata
from tests.studio.study.support import grid_samples

OLD_VERSION = 13
_ITEM_KEEP = ("id", "study_id", "position", "sample_id", "reference_chars", "sample_json", "kind")


def _answer_some(db, study_id, user_id, n, right):
    study.accept_rule(db, study_id, user_id, at=0.0)
    for index in range(n):
        view = study.open_question(db, study_id, user_id, at=10.0 * index)
        if view is None:
            return
        answer, options = db.execute(
            "SELECT json_extract(i.sample_json, '$.answer'), json_array_length(i.sample_json, '$.options')"
            " FROM assignments a JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [view.assignment_id]).fetchone()
        wrong = next(letter for letter in "AB" if letter != answer) if options else "zzz nothing alike"
        study.submit_answer(db, user_id, view.assignment_id, answer if right(index) else wrong, at=10.0 * index + 5)


def _tables(db) -> list[str]:
    return [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _dump(db) -> dict[str, list[tuple]]:
    """Every row of every table but the migration history, in id order."""
    return {table: db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            for table in _tables(db) if table != "schema_migrations"}


@pytest.fixture
def filled(world):
    """The world's database with one StrucText and one AIBench study, partly answered."""
    db, people = world["db"], world["people"]
    ann1, ann2 = people["ann1"]["id"], people["ann2"]["id"]
    structext = structext_study.create_study(db, name="text", suite="test-hard", samples=grid_samples(), n_items=6,
                                   annotator_ids=[ann1, ann2], practice_items=1, gold_items=1)
    aibench = aibench_study.create_aibench_study(db, name="images", dataset="synthetic", n_items=6, seed=1,
                                         annotator_ids=[ann1, ann2], created_by=people["lead"]["id"])
    for study_id in (structext, aibench):
        _answer_some(db, study_id, ann1, 4, lambda i: True)
        _answer_some(db, study_id, ann2, 3, lambda i: i % 2 == 0)
    return world, structext, aibench


def _old_database(path, source, monkeypatch) -> None:
    """A database of schema 13 holding ``source``'s rows, its items' strata in the old columns."""
    with monkeypatch.context() as patch:
        patch.setattr(storage, "MIGRATIONS", storage.MIGRATIONS[:OLD_VERSION])
        storage.open_db(path).conn.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("ATTACH DATABASE ? AS source", [str(source)])
    old_columns = m0014_study_strata.OLD_COLUMNS
    for table in _tables(conn):
        if table == "schema_migrations":
            continue
        if table == "study_items":
            strata = ", ".join(f"json_extract(strata, '$.{column}')" for column in old_columns)
            conn.execute(f"INSERT INTO study_items ({', '.join(_ITEM_KEEP + old_columns)})"
                         f" SELECT {', '.join(_ITEM_KEEP)}, {strata} FROM source.study_items")
        else:  # the columns schema 13 had (later migrations added columns and tables, empty here)
            columns = ", ".join(row[1] for row in conn.execute(f"PRAGMA main.table_info({table})"))
            conn.execute(f"INSERT INTO main.{table} SELECT {columns} FROM source.{table}")
    conn.commit()
    conn.execute("DETACH DATABASE source")
    conn.close()


def test_migration_14_keeps_both_studies_exactly(filled, tmp_path, monkeypatch):
    world, structext, aibench = filled
    new_db = world["db"]
    before = _dump(new_db)
    frames = {s: study.responses_frame(new_db, s, kinds=("study", "practice", "gold")) for s in (structext, aibench)}
    adjudication = {s: study.adjudication_items(new_db, s, order="position") for s in (structext, aibench)}
    new_db.conn.execute("PRAGMA wal_checkpoint(FULL)")
    old_path = tmp_path / "old.db"
    _old_database(old_path, tmp_path / "structext.db", monkeypatch)

    old = sqlite3.connect(old_path)  # what the code before migration 14 wrote
    assert old.execute("PRAGMA user_version").fetchone()[0] == OLD_VERSION
    rows = dict(old.execute("SELECT s.benchmark, COUNT(i.language) + COUNT(i.paper_id) FROM study_items i"
                            " JOIN studies s ON s.id = i.study_id GROUP BY s.benchmark").fetchall())
    assert rows == {"structext-eval": 8, "aibench": 6}
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        old.execute("UPDATE studies SET benchmark = 'mmlu' WHERE id = ?", [structext])
    old.close()

    migrated = storage.open_db(old_path)
    assert storage.schema_version(migrated) == storage.latest_version()
    assert _dump(migrated) == before  # every row, the strata's JSON text included
    assert migrated.execute("PRAGMA foreign_key_check").fetchall() == []
    assert migrated.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    strata = [json.loads(row[0]) for row in migrated.execute("SELECT strata FROM study_items WHERE study_id = ?",
                                                              [aibench])]
    assert all(set(s) == {"paper_id", "system", "question_id", "level", "conference"} for s in strata)
    assert all(isinstance(s["level"], int) for s in strata)
    for study_id in (structext, aibench):
        after = study.responses_frame(migrated, study_id, kinds=("study", "practice", "gold"))
        pd.testing.assert_frame_equal(after, frames[study_id])
        assert study.adjudication_items(migrated, study_id, order="position") == adjudication[study_id]
    fresh = storage.open_db(":memory:")
    schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
    assert migrated.execute(schema).fetchall() == fresh.execute(schema).fetchall()
    columns = [row[1] for row in migrated.execute("PRAGMA table_info(study_items)")]
    assert not set(columns) & set(m0014_study_strata.OLD_COLUMNS) and "strata" in columns
    migrated.execute("UPDATE studies SET benchmark = 'mmlu' WHERE id = ?", [structext])  # the CHECK is gone


def test_migration_14_moves_every_value_an_old_row_held(tmp_path, monkeypatch):
    """A value in a column its benchmark does not use is kept too (nothing is dropped on the floor)."""
    path = tmp_path / "odd.db"
    with monkeypatch.context() as patch:
        patch.setattr(storage, "MIGRATIONS", storage.MIGRATIONS[:OLD_VERSION])
        db = storage.open_db(path)
    db.execute("INSERT INTO studies (id, name, suite, n_items, seed, rule_text, created_at) "
               "VALUES (1, 's', 'x', 1, 0, 'r', 0)")
    db.execute("INSERT INTO study_items (study_id, position, sample_id, language, depth, level, reference_chars,"
               " sample_json) VALUES (1, 1, 'a', 'json', 3, 2, 0, '{}')")
    db.conn.close()
    migrated = storage.open_db(path)
    assert migrated.execute("SELECT strata FROM study_items").fetchone()[0] == '{"language":"json","depth":3,"level":2}'
