"""Migration 16: a time-out for the people a study link brings.

``study_crowd.timeout_seconds``: how long after arriving by a study link a person may take to
finish (the platform's "maximum time allowed"); NULL, the default, is no time-out. A person past
it who has not finished is recorded ``timed_out`` (:func:`structext_core.studio.crowd.outcomes.time_out_overdue`)
and no longer holds a place of the link.
"""

from __future__ import annotations

import sqlite_utils

NAME = "a time-out for the people a study link brings"


def migrate(db: sqlite_utils.Database) -> None:
    """Add ``study_crowd.timeout_seconds`` (NULL or above 0)."""
    db.execute("ALTER TABLE study_crowd ADD COLUMN timeout_seconds REAL"
               " CHECK (timeout_seconds IS NULL OR timeout_seconds > 0)")
