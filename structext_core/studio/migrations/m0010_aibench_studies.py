"""Migration 10: AIBench studies: people answer questions from a generated image.

See :func:`migrate`."""

from __future__ import annotations

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "AIBench studies: people answer questions from a generated image"


def migrate(db: sqlite_utils.Database) -> None:
    """People answering AIBench questions from a generated image alone (issue 22, item 2): a
    study is StrucText's or AIBench's, and an AIBench study's items are (image, question) pairs.

    - ``studies.benchmark``: the registry name (:mod:`structext_core.protocol`), StrucText's by
      default; an AIBench study's ``suite`` is the name of its stored data set.
    - ``study_items.paper_id``, ``system``, ``question_id``, ``level``, ``conference``: an AIBench
      item's (image, question) and its strata (NULL on StrucText items, whose strata are
      ``language``, ``task``, ``depth`` and ``width``). ``sample_id`` is the item's stable key
      and ``sample_json`` the item, as for StrucText; neither is ever sent to an annotator's
      browser for an AIBench item (they name the system).
    - ``responses.response`` of an AIBench item holds the chosen option's letter; ``rouge_l`` and
      ``exact_match`` hold its correctness (1 or 0), so the dashboard, agreement, adjudication and
      the final score read AIBench answers as they read StrucText's.
    """
    run_script(
        db,
        """
        ALTER TABLE studies ADD COLUMN benchmark TEXT NOT NULL DEFAULT 'structext-eval'
            CHECK (benchmark IN ('structext-eval', 'aibench'));
        ALTER TABLE study_items ADD COLUMN paper_id TEXT;
        ALTER TABLE study_items ADD COLUMN system TEXT;
        ALTER TABLE study_items ADD COLUMN question_id TEXT;
        ALTER TABLE study_items ADD COLUMN level INTEGER;
        ALTER TABLE study_items ADD COLUMN conference TEXT;
        CREATE INDEX study_items_by_aibench_question ON study_items (paper_id, question_id, system)
        """,
    )
