"""Migration 6: the paper's ROUGE-L beside ours on stored model results.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "the paper's ROUGE-L beside ours on stored model results"


def migrate(db: sqlite_utils.Database) -> None:
    """The paper's metric beside ours on every stored model result: ``rouge_l_paper`` (the
    authors' ROUGE-L on the whole response) and ``score_paper`` (thresholded). Rows imported
    before keep NULL there (their files are not kept; re-import them to get the paper's metric)."""
    run_script(
        db,
        """
        ALTER TABLE results ADD COLUMN rouge_l_paper REAL;
        ALTER TABLE results ADD COLUMN score_paper REAL
        """,
    )
