"""Migration 14: a study item's strata as data its benchmark declares, no benchmark names in the schema.

- ``study_items.strata``: the item's strata as a JSON object (``{"language": "json", "task": ...}``
  for a StrucText item, ``{"paper_id": ..., "system": ..., "level": ...}`` for an AIBench one),
  checked on insert against the ``STRATA`` its benchmark declares
  (:func:`structext_core.protocol.check_strata`). It replaces the nullable columns each
  benchmark had (``language``, ``task``, ``task_id``, ``depth``, ``width``; ``paper_id``,
  ``system``, ``question_id``, ``level``, ``conference``): every value an existing row held there
  is moved into its ``strata`` with its type, and the columns and the index
  ``study_items_by_aibench_question`` (read by no query) are dropped. Readers take a stratum
  with ``json_extract(i.strata, '$.<name>')``, NULL where the item has none, as the column was.
- ``study_items.sample_json`` moves to the end of the row (after ``kind`` and ``strata``): a
  column stored after the sample (often tens of kilobytes) is read by walking the sample's
  overflow pages, and the question screen reads ``strata`` on every run. It is copied into a new
  last column, the old one dropped and the new one renamed; its ``NOT NULL`` stays, the
  ``DEFAULT ''`` that adding a NOT NULL column needs is taken out of the schema's text afterwards
  (every row was rewritten by the drops, so no row reads the default).
- ``studies.benchmark`` loses ``CHECK (benchmark IN ('structext-eval', 'aibench'))``: the name
  is checked against the registry (:mod:`structext_core.protocol`) when a study is written, so
  a new benchmark needs no schema change. The CHECK is taken out of the table's text in the
  schema, as migration 5 loosened ``users``' role CHECK (rebuilding ``studies`` would fire the
  foreign keys of every table pointing at it).
"""

from __future__ import annotations

import json
import re
import sqlite3

import sqlite_utils

NAME = "study items' strata as JSON their benchmark checks; no benchmark names in the schema"

#: The per-benchmark columns of ``study_items`` before this migration, in their order.
OLD_COLUMNS = ("language", "task", "task_id", "depth", "width", "paper_id", "system", "question_id", "level",
               "conference")
_BENCHMARK_CHECK = re.compile(r"\s*CHECK \(benchmark IN \([^)]*\)\)")
_SAMPLE_DEFAULT = re.compile(r"(\"?sample_json\"? TEXT NOT NULL) DEFAULT ''")


def _table_sql(db: sqlite_utils.Database, table: str) -> str:
    return db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone()[0]


def migrate(db: sqlite_utils.Database) -> None:
    """Move the strata columns' values into ``strata``, drop the columns, loosen ``studies``."""
    if sqlite3.sqlite_version_info < (3, 35, 0):
        raise RuntimeError(f"migration 14 drops columns, which needs SQLite 3.35 or newer; this Python has "
                           f"SQLite {sqlite3.sqlite_version}")
    db.execute("ALTER TABLE study_items ADD COLUMN strata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(strata))")
    rows = db.execute(f"SELECT id, {', '.join(OLD_COLUMNS)} FROM study_items").fetchall()
    for item_id, *values in rows:
        strata = {key: value for key, value in zip(OLD_COLUMNS, values, strict=True) if value is not None}
        db.execute("UPDATE study_items SET strata = ? WHERE id = ?",
                   [json.dumps(strata, ensure_ascii=False, separators=(",", ":")), item_id])
    db.execute("ALTER TABLE study_items ADD COLUMN sample_last TEXT NOT NULL DEFAULT ''")
    db.execute("UPDATE study_items SET sample_last = sample_json")
    db.execute("DROP INDEX IF EXISTS study_items_by_aibench_question")
    for column in (*OLD_COLUMNS, "sample_json"):
        db.execute(f"ALTER TABLE study_items DROP COLUMN {column}")
    db.execute("ALTER TABLE study_items RENAME COLUMN sample_last TO sample_json")
    studies = _table_sql(db, "studies")
    new_studies, found = _BENCHMARK_CHECK.subn("", studies)
    if found != 1:
        raise RuntimeError(f"migration 14: expected one benchmark CHECK in the studies table, found {found}: {studies}")
    items = _table_sql(db, "study_items")
    new_items, found = _SAMPLE_DEFAULT.subn(r"\1", items)
    if found != 1:
        raise RuntimeError(f"migration 14: expected one DEFAULT of the moved sample_json, found {found}: {items}")
    schema_version_now = db.execute("PRAGMA schema_version").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    try:
        for table, sql in (("studies", new_studies), ("study_items", new_items)):
            db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", [sql, table])
        # A new schema version makes every connection (this one too) read the changed table.
        db.execute(f"PRAGMA schema_version = {int(schema_version_now) + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
