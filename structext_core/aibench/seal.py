"""AIBench's part of the seal (:mod:`structext_core.studio.seal`, which states the rule).

An AIBench item is one question shown with one system's image; it is the same item as every other
image's item of that question, since a question's key is the same for every image of its paper.
Papers and questions are known by their **content** (:func:`paper_key`, :func:`question_key`, over
:mod:`structext_core.aibench.identity`), never by the name of the data set they are stored under: a
copy of a set (the question review's curated export is made to be imported again) is sealed as the
original is.

Where AIBench shows answers outside a study: the question review shows a paper's questions with
their keys and its original figure, and practice feedback the key of an answered practice
question. The question review gives no one a paper of which they still have an open study item,
or a pair still to judge in an open pairwise study (an image resembling the original would name its
side) (:func:`open_papers`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlite_utils

from structext_core.aibench import store as aibench_store
from structext_core.studio.seal import PRACTICE, REVIEW, open_items_sql


def paper_key(dataset: str | None, paper_id: str) -> str:
    """What a paper is, whatever set it is stored in (:mod:`structext_core.aibench.identity`): its
    content's fingerprint; for a paper of a set no longer stored, its name in that set."""
    if dataset is None:
        return f"?/{paper_id}"
    return aibench_store.prints_of(dataset).paper(dataset, paper_id)


def question_key(dataset: str | None, paper_id: str, question_id: str | None) -> str:
    """What a question is: its content's fingerprint (its paper, text, options, key)."""
    found = aibench_store.prints_of(dataset).questions.get((paper_id, question_id)) if dataset else None
    return found or f"{dataset}/{paper_id}/{question_id}"


def _open_questions(db: sqlite_utils.Database, user_id: int, counted_only: bool = False) -> list[tuple[str, str, str]]:
    """(data set, paper, question) of the user's open AIBench study items (with ``counted_only``:
    not their practice items, which count for nothing)."""
    where = " AND json_extract(i.strata, '$.paper_id') IS NOT NULL" + (" AND i.kind != 'practice'" if counted_only else "")
    return [tuple(row) for row in db.execute(
        open_items_sql("DISTINCT s.suite, json_extract(i.strata, '$.paper_id'), json_extract(i.strata, '$.question_id')") + where, [user_id])]


def _unvoted_pairs(db: sqlite_utils.Database, user_id: int) -> list[tuple[str, str]]:
    """(data set, paper) of the pairs the user still has to vote on in an open pairwise study."""
    return [tuple(row) for row in db.execute(
        "SELECT DISTINCT s.dataset, p.paper_id FROM pairwise_members m"
        " JOIN pairwise_studies s ON s.id = m.study_id"
        " JOIN pairwise_tasks t ON t.study_id = m.study_id AND t.user_id = m.user_id"
        " JOIN pairwise_pairs p ON p.id = t.pair_id"
        " LEFT JOIN pairwise_votes v ON v.task_id = t.id"
        " WHERE m.user_id = ? AND m.removed_at IS NULL AND s.status = 'open' AND s.archived_at IS NULL"
        " AND v.id IS NULL", [user_id])]


def is_open_for(db: sqlite_utils.Database, user_id: int | None, item: dict) -> bool:
    """Whether ``item``'s question (by content, :func:`question_key`; its ``suite`` tells which stored
    set its ids are of) is an open item of the user in any study, shown with any image."""
    if user_id is None:
        return False
    wanted = question_key(item.get("suite"), item["paper_id"], item.get("question_id"))
    return any(row[1:] == (item["paper_id"], item.get("question_id")) or question_key(*row) == wanted
               for row in _open_questions(db, user_id))


def open_papers(db: sqlite_utils.Database, user_id: int | None, counted_only: bool = False) -> set[str]:
    """The papers (:func:`paper_key`, by content: every copy of them) no service may show the user
    with their keys or original figure: those of which they have an open study item, and those of
    which they still have a pair to vote on in an open pairwise study (the question review shows a
    paper's original figure, and a system's image that resembles it would name that side). With
    ``counted_only``, open practice items leave their paper out (practice counts for nothing, and
    its key is withheld while the question is open elsewhere)."""
    if user_id is None:
        return set()
    papers = {paper_key(dataset, paper_id) for dataset, paper_id, _ in _open_questions(db, user_id, counted_only)}
    return papers | {paper_key(dataset, paper_id) for dataset, paper_id in _unvoted_pairs(db, user_id)}


@dataclass(frozen=True)
class SeenQuestions:
    """What people were shown the keys of outside the study at hand, by where:

    - ``papers``: papers (:func:`paper_key`, by content) they opened in the question review, or
      worked on there. The page shows every question of the paper with its key, and its original
      figure.
    - ``practised_questions``: practice questions they answered in a study, after which the key is
      shown (:func:`question_key`; every answered one counts, even where the key was withheld).

    An item is matched by ``paper_key`` and ``question_key`` (the item carries them, or its ``suite``)."""

    papers: frozenset[str] = frozenset()
    practised_questions: frozenset[str] = frozenset()

    def where(self, item: dict) -> str | None:
        """Where ``item``'s key was shown (:data:`~structext_core.studio.seal.REVIEW`,
        :data:`~structext_core.studio.seal.PRACTICE`), or None."""
        if item.get("paper_id") is None:
            return None
        paper = item.get("paper_key") or paper_key(item.get("suite"), item["paper_id"])
        if paper in self.papers:
            return REVIEW
        question = item.get("question_key") or question_key(item.get("suite"), item["paper_id"],
                                                             item.get("question_id"))
        return PRACTICE if question in self.practised_questions else None

    def covers(self, item: dict) -> bool:
        """Whether ``item``'s key was shown to them (:meth:`where`)."""
        return self.where(item) is not None

    def __bool__(self) -> bool:
        return bool(self.papers or self.practised_questions)

    @staticmethod
    def said(kind: str, items: list[dict]) -> str:
        """How a refusal names the ``items`` of a study seen at ``kind``."""
        if kind == REVIEW:
            papers = sorted({item["paper_id"] for item in items})  # this study's ids of those papers
            shown = ", ".join(papers[:5]) + (", ..." if len(papers) > 5 else "")
            return f"the question review showed them {len(papers):,} of its papers with their keys ({shown})"
        return (f"they answered {len(items):,} of its questions as practice in another study, where the key is "
                "shown after the answer")


def seen_keys(db: sqlite_utils.Database, user_ids: Iterable[int]) -> SeenQuestions:
    """What the people ``user_ids`` have been shown the keys of outside a study, all together."""
    ids = sorted(set(user_ids))
    if not ids:
        return SeenQuestions()
    marks = ", ".join("?" for _ in ids)
    papers = {paper_key(row[0], row[1]) for row in db.execute(
        "SELECT DISTINCT c.dataset, q.paper_id FROM qreview_items q JOIN qreview_campaigns c ON c.id = q.campaign_id"
        f" WHERE q.reviewer_id IN ({marks}) AND (q.first_shown_at IS NOT NULL OR q.status != 'todo')", ids)}
    practised = db.execute(
        "SELECT DISTINCT s.suite, json_extract(i.strata, '$.paper_id'), json_extract(i.strata, '$.question_id')"
        " FROM responses r JOIN assignments a ON a.id = r.assignment_id JOIN study_items i ON i.id = a.item_id"
        f" JOIN studies s ON s.id = i.study_id WHERE a.user_id IN ({marks}) AND i.kind = 'practice'"
        " AND json_extract(i.strata, '$.paper_id') IS NOT NULL", ids).fetchall()
    return SeenQuestions(frozenset(papers), frozenset(question_key(*row) for row in practised))
