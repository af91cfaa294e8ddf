"""StrucText-Eval's part of the seal (:mod:`structext_core.studio.seal`, which states the rule).

A sample is the same item across studies by its id or by its reference text (the text is the
question's data: a copy under another id is the same question). Where its answers are shown
outside a study: the Real-Test rewriting page shows a sample's answer, and practice feedback the
key of an answered practice question. The rewriting page's live answer check would work out the
answer of any question pasted into it, so it is withheld while the person has an open item in the
rewrite's format or of its task category (:func:`answer_check_withheld`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import sqlite_utils

from structext_core.structext_eval.formats import DISPLAY_NAMES
from structext_core.studio.seal import PRACTICE, REWRITE, open_items_sql

NAME = "structext-eval"

#: What the rewriting page says where the answer check's result would be.
ANSWER_CHECK_WITHHELD = (
    "Answer: checked at review, not here. You still have questions to answer in a study in {format} or "
    "of this kind of task, and this check would work out the answer of any question pasted here, so it is "
    "off while those are open. The structure and token checks still run.")


def open_formats(db: sqlite_utils.Database, user_id: int | None) -> set[str]:
    """The formats (``language``) of the user's open items; empty for None."""
    if user_id is None:
        return set()
    return {row[0] for row in db.execute(
        open_items_sql("DISTINCT json_extract(i.strata, '$.language')") + " AND s.benchmark = ?", [user_id, NAME])}


def open_categories(db: sqlite_utils.Database, user_id: int | None) -> set[str]:
    """The task categories (``task``, e.g. ``TextRetrieval``) of the user's open items."""
    if user_id is None:
        return set()
    return {row[0] for row in db.execute(
        open_items_sql("DISTINCT json_extract(i.strata, '$.task')") + " AND s.benchmark = ?", [user_id, NAME])}


def answer_check_withheld(db: sqlite_utils.Database, user: dict | None, language: str,
                          category: str | None = None) -> str | None:
    """Why the rewriting page's answer check is not run for ``user`` on a rewrite in
    ``language`` of the task category ``category``, or None when it may run.

    Withheld while they have an open item in that format, or of that category in any format:
    the categories ask the same questions in every format, so a question of another format,
    its data moved into this one, would be answered too."""
    if user is None:
        return None
    if language in open_formats(db, user.get("id")) or (
            category is not None and category in open_categories(db, user.get("id"))):
        return ANSWER_CHECK_WITHHELD.format(format=DISPLAY_NAMES.get(language, language))
    return None


def is_open_for(db: sqlite_utils.Database, user_id: int | None, item: dict) -> bool:
    """Whether the sample ``item`` (by its id, ``id`` or ``sample_id``, or its reference text) is an
    open item of the user in any study.

    The reference is compared only where its length already agrees (``reference_chars``), so
    no long text is read for the other items."""
    if user_id is None:
        return False
    reference = item.get("reference")
    if reference is None and item.get("sample_json"):
        reference = json.loads(item["sample_json"]).get("reference")
    found = db.execute(
        open_items_sql("1") + " AND s.benchmark = ? AND (i.sample_id = ? OR (i.reference_chars = ?"
                              " AND json_extract(i.sample_json, '$.reference') = ?)) LIMIT 1",
        [user_id, NAME, item.get("id", item.get("sample_id")), len(reference) if isinstance(reference, str) else -1,
         reference],
    ).fetchone()
    return found is not None


@dataclass(frozen=True)
class SeenSamples:
    """The samples people were shown the answers of outside the study at hand, by where:

    - ``rewritten``: given to them to rewrite for Real-Test, as (ids, reference texts). The
      rewriting page shows the sample's answer. Every one assigned counts, opened or not, because
      opening leaves no trace until a draft is saved.
    - ``practised``: practice questions of a StrucText study they answered, after which the key is
      shown (every answered one counts, even where the key was withheld).

    A sample is matched by its id or by its reference text, as :func:`is_open_for` matches it."""

    rewritten: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    practised: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

    def where(self, item: dict) -> str | None:
        """Where ``item``'s answer was shown (:data:`~structext_core.studio.seal.REWRITE`,
        :data:`~structext_core.studio.seal.PRACTICE`), or None. ``item`` is a sample, a drawn study
        item, or a ``study_items`` row (then its reference is read from ``sample_json``, only where
        its length matches a seen one)."""
        sample_id = item.get("sample_id", item.get("id"))
        reference = item.get("reference")
        for kind, (ids, references) in ((REWRITE, self.rewritten), (PRACTICE, self.practised)):
            if sample_id in ids:
                return kind
            if reference is None and references and item.get("sample_json") \
                    and item.get("reference_chars") in (None, *map(len, references)):
                reference = json.loads(item["sample_json"]).get("reference")
            if reference is not None and reference in references:
                return kind
        return None

    def covers(self, item: dict) -> bool:
        """Whether ``item``'s answer was shown to them (:meth:`where`)."""
        return self.where(item) is not None

    def __bool__(self) -> bool:
        return bool(self.rewritten[0] or self.practised[0])

    @staticmethod
    def said(kind: str, items: list[dict]) -> str:
        """How a refusal names the ``items`` of a study seen at ``kind``."""
        if kind == REWRITE:
            return f"they were given {len(items):,} of its questions to rewrite for Real-Test, with their answers"
        return (f"they answered {len(items):,} of its questions as practice in another study, where the key is "
                "shown after the answer")


def seen_keys(db: sqlite_utils.Database, user_ids: Iterable[int]) -> SeenSamples:
    """What the people ``user_ids`` have been shown the answers of outside a study, all together."""
    ids = sorted(set(user_ids))
    if not ids:
        return SeenSamples()
    marks = ", ".join("?" for _ in ids)
    rewritten = db.execute(
        f"SELECT sample_id, json_extract(sample_json, '$.reference') FROM rewrite_items WHERE annotator_id IN ({marks})",
        ids).fetchall()
    practised = db.execute(
        "SELECT DISTINCT i.sample_id, json_extract(i.sample_json, '$.reference')"
        " FROM responses r JOIN assignments a ON a.id = r.assignment_id JOIN study_items i ON i.id = a.item_id"
        f" JOIN studies s ON s.id = i.study_id WHERE a.user_id IN ({marks}) AND i.kind = 'practice'"
        " AND s.benchmark = ?", [*ids, NAME]).fetchall()

    def samples(rows) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(row[0] for row in rows), frozenset(row[1] for row in rows if isinstance(row[1], str))

    return SeenSamples(samples(rewritten), samples(practised))
