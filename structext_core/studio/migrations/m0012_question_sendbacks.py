"""Migration 12: AIBench questions sent back to review from Results.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "AIBench questions sent back to review from Results"


def migrate(db: sqlite_utils.Database) -> None:
    """Questions the lead sends back to expert review from Results (issue 22, item 2): where people
    answering from the paper's own figure and a VLM solver part, the question (or the solver) is
    wrong, and the question goes back to AIBench's question review.

    - ``qreview_sendbacks``: one question of a stored data set (``dataset``, ``paper_id``,
      ``question_id``), the lead's ``reason`` and the evidence (``evidence_json``: the people's
      letters as counts, without names, the solver and its letter, the key, why it was listed);
      ``campaign_id`` NULL while it waits for the next review campaign of the data set (which takes
      it when it is created with that paper), else the campaign that reviews it; ``withdrawn_at``
      when the lead takes it back.
    """
    run_script(
        db,
        """
        CREATE TABLE qreview_sendbacks (
            id INTEGER PRIMARY KEY,
            dataset TEXT NOT NULL,
            paper_id TEXT NOT NULL,
            question_id TEXT NOT NULL,
            campaign_id INTEGER REFERENCES qreview_campaigns(id) ON DELETE SET NULL,
            reason TEXT NOT NULL,
            evidence_json TEXT NOT NULL DEFAULT '{}',
            by_user INTEGER REFERENCES users(id),
            at REAL NOT NULL,
            withdrawn_at REAL
        );
        CREATE INDEX qreview_sendbacks_by_question ON qreview_sendbacks (dataset, paper_id, question_id);
        CREATE INDEX qreview_sendbacks_by_campaign ON qreview_sendbacks (campaign_id, paper_id)
        """,
    )
