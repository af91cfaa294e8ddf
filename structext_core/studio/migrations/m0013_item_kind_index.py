"""Migration 13: study items indexed by kind (counting practice questions reads no sample).

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "study items indexed by kind (counting practice questions reads no sample)"


def migrate(db: sqlite_utils.Database) -> None:
    """An index of study items by study and kind. ``kind`` was added after ``sample_json`` (a
    whole sample, often tens of kilobytes), so reading it from the row walks the sample's pages:
    counting an annotator's practice questions that way read every item of the study, three
    times on each submit and once more after a practice answer (about 5 ms each at 500
    Test-Hard items). With the index those counts read the index alone
    (``tests/studio/study/test_hot_queries.py``)."""
    run_script(db, "CREATE INDEX study_items_by_kind ON study_items (study_id, kind)")
