"""Migration 17: the times the Results page's fingerprint reads, indexed (a page run reads no table whole).

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "the times the results' fingerprint reads, indexed"


def migrate(db: sqlite_utils.Database) -> None:
    """Indexes of ``results.imported_at``, ``responses.submitted_at`` and ``responses.scored_at``.
    Each run of the Results page fingerprints what is stored (``results_frame.data_version``: counts
    and latest times) for its caches; without these the latest times were a scan of every row, and a
    response's row holds its answer: about 3 ms a run with 3,000 answers, read again on a new
    connection each run. With them each is one step down an index
    (``tests/studio/test_results_store.py``)."""
    run_script(db, """
        CREATE INDEX results_by_imported ON results (imported_at);
        CREATE INDEX responses_by_submitted ON responses (submitted_at);
        CREATE INDEX responses_by_scored ON responses (scored_at)
    """)
