"""The seal: the one rule that keeps answer keys from the people who may still answer them.

    A person is never given the answer (or rule hint) of an item they may still answer, nor a
    service that computes answers on text of a kind they are still being asked.

*Open items* of a person (:func:`open_items_sql`): every item (study, gold and practice
alike) of every study they take part in (not taken off it; the study open, not archived)
that they have not answered yet. An item is matched across studies by its sample id or by
its reference text, as :class:`structext_core.studio.access.Sealed` matches samples; an
AIBench item by its question, whatever system's image it is shown with: a question's key is the
same for every image of its paper. AIBench papers and questions are known by their **content**
(:func:`paper_key`, :func:`question_key`, over :mod:`structext_core.aibench.identity`), never by
the name of the data set they are stored under: a copy of a set (the question review's curated
export is made to be imported again) is sealed as the original is.

What obeys it (each service asks this module; nothing else decides):

- the Real-Test rewriting page's live **answer check** (:func:`answer_check_withheld`, used by
  :func:`structext_core.studio.campaign.live_check` and :func:`~structext_core.studio.campaign.submit`):
  the check works out the answer of whatever question is pasted into the rewrite, so while
  the person has an open item in the rewrite's format, or of its task category in any format
  (the categories ask the same questions in every format), it is not run for them; the page says the answer is checked at review, and the reviewer sees the full
  check. The structure and leftover-token checks still run. Without open items of that
  format the answer check runs, once the structure check passes;
- the **answer key after a practice question** and the correctness note after an answer
  (:func:`key_withheld`, used by :mod:`structext_core.studio.study.quality` and
  :mod:`~structext_core.studio.study.answering`): shown only when the item is no open item of
  that person in any study; otherwise the score alone, with a note why the key is withheld;
- a rewriting item whose own sample is an item of an open study the annotator takes part in
  (:func:`structext_core.studio.access.rewrite_answer_refusal`): the whole item stays closed;
- practice and gold draws (:func:`structext_core.studio.study.store.create_study`) avoid items
  that another study over the same suite counts, so feedback has a key to show;
- the AIBench **question review** (:mod:`structext_core.studio.question_review`) shows a paper's
  questions with their keys and its original figure: it gives no one a paper of which they still
  have an open AIBench study item, or a pair still to judge in an open pairwise study (an image
  resembling the original would name its side) (:func:`open_papers`);
- a new AIBench study draws no practice or gold (original figures) of a paper its annotators still
  answer or judge elsewhere; Results in public read-only mode hides every stored data set holding
  a paper of an open AIBench or pairwise study (:mod:`structext_core.studio.access`).

The other way round: keys a person was **already shown** before a study (:func:`seen_keys`).
The question review shows a paper's questions with their keys, the rewriting page shows a
sample's answer, and practice feedback shows the key of a practice question once it is
answered. A study leaves those out of its draw for the annotators it is created with
(:func:`structext_core.studio.study.store.create_study`,
:func:`~structext_core.studio.study.aibench_study.create_aibench_study`). No one is added later to
a study holding such an item (:func:`seen_refusal`, used by
:func:`~structext_core.studio.study.store.add_annotator`). A pairwise study leaves out the papers its
annotators opened in the review and refuses to add someone who opened one of its papers
(:func:`structext_core.studio.pairwise.reviewed_refusal`).

Researchers and admins see answers anyway (the capability ``answers`` of
:mod:`structext_core.studio.access`) and take part in no study, so they have no open items.
No Streamlit here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import sqlite_utils

from structext_core.aibench import store as aibench_store
from structext_core.structext_eval.formats import DISPLAY_NAMES

#: The rows of ``study_items`` (alias ``i``) open for the user bound to the one ``?``: assigned
#: to them in a study they still take part in, the study open and not archived, no answer yet.
OPEN_ITEMS_SQL = """
    FROM study_annotators sa
    JOIN studies s ON s.id = sa.study_id
    JOIN assignments a ON a.study_id = sa.study_id AND a.user_id = sa.user_id
    JOIN study_items i ON i.id = a.item_id
    LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE sa.user_id = ? AND sa.removed_at IS NULL AND s.status = 'open' AND s.archived_at IS NULL
      AND r.id IS NULL
"""

#: What the rewriting page says where the answer check's result would be.
ANSWER_CHECK_WITHHELD = (
    "Answer: checked at review, not here. You still have questions to answer in a study in {format} or "
    "of this kind of task, and this check would work out the answer of any question pasted here, so it is "
    "off while those are open. The structure and token checks still run.")
#: Said instead of a practice question's answer key while the same question is open elsewhere.
KEY_WITHHELD = ("The answer key is withheld: this question is still open for you in another study, so its "
                "key is shown once you have answered it there. Your score above stands.")


def open_items_sql(columns: str) -> str:
    """``SELECT columns`` over the open items (``i``) of the user bound to the first ``?``."""
    return f"SELECT {columns} {OPEN_ITEMS_SQL}"


def open_formats(db: sqlite_utils.Database, user_id: int | None) -> set[str]:
    """The formats (``language``) of the user's open items; empty for None."""
    if user_id is None:
        return set()
    return {row[0] for row in db.execute(open_items_sql("DISTINCT json_extract(i.strata, '$.language')"), [user_id])}


def open_item_count(db: sqlite_utils.Database, user_id: int | None) -> int:
    """How many open items the user has, over every study."""
    if user_id is None:
        return 0
    return db.execute(open_items_sql("COUNT(*)"), [user_id]).fetchone()[0]


def is_open_for(db: sqlite_utils.Database, user_id: int | None, sample: dict) -> bool:
    """Whether ``sample`` (by id or reference text; an AIBench item by its question's content,
    :func:`question_key`, its ``suite`` telling which stored set its ids are of) is an open item of
    the user in any study.

    The reference is compared only where its length already agrees (``reference_chars``), so
    no long text is read for the other items."""
    if user_id is None:
        return False
    if sample.get("paper_id") is not None:
        wanted = question_key(sample.get("suite"), sample["paper_id"], sample.get("question_id"))
        return any(row[1:] == (sample["paper_id"], sample.get("question_id")) or question_key(*row) == wanted
                   for row in _open_questions(db, user_id))
    reference = sample.get("reference")
    found = db.execute(
        open_items_sql("1") + " AND (i.sample_id = ? OR (i.reference_chars = ?"
                              " AND json_extract(i.sample_json, '$.reference') = ?)) LIMIT 1",
        [user_id, sample.get("id"), len(reference) if isinstance(reference, str) else -1, reference],
    ).fetchone()
    return found is not None


# ---------------------------------------------------------------- AIBench: known by content

def paper_key(dataset: str | None, paper_id: str) -> str:
    """What an AIBench paper is, whatever set it is stored in (:mod:`structext_core.aibench.identity`):
    its content's fingerprint; for a paper of a set no longer stored, its name in that set."""
    if dataset is None:
        return f"?/{paper_id}"
    return aibench_store.prints_of(dataset).paper(dataset, paper_id)


def question_key(dataset: str | None, paper_id: str, question_id: str | None) -> str:
    """What an AIBench question is: its content's fingerprint (its paper, text, options, key)."""
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


def open_papers(db: sqlite_utils.Database, user_id: int | None, counted_only: bool = False) -> set[str]:
    """The AIBench papers (:func:`paper_key`, by content: every copy of them) no service may show
    the user with their keys or original figure: those of which they have an open study item, and
    those of which they still have a pair to vote on in an open pairwise study (the question review
    shows a paper's original figure, and a system's image that resembles it would name that side).
    With ``counted_only``, open practice items leave their paper out (practice counts for nothing,
    and its key is withheld while the question is open elsewhere)."""
    if user_id is None:
        return set()
    papers = {paper_key(dataset, paper_id) for dataset, paper_id, _ in _open_questions(db, user_id, counted_only)}
    return papers | {paper_key(dataset, paper_id) for dataset, paper_id in _unvoted_pairs(db, user_id)}


def open_categories(db: sqlite_utils.Database, user_id: int | None) -> set[str]:
    """The task categories (``task``, e.g. ``TextRetrieval``) of the user's open items."""
    if user_id is None:
        return set()
    return {row[0] for row in db.execute(open_items_sql("DISTINCT json_extract(i.strata, '$.task')"), [user_id])}


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


def key_withheld(db: sqlite_utils.Database, user_id: int, sample: dict) -> bool:
    """Whether the answer key (or correctness) of ``sample`` must not be shown to the user:
    it is an open item of theirs in some study."""
    return is_open_for(db, user_id, sample)


# ---------------------------------------------------------------- keys seen before a study


#: Where a person can have been shown an answer outside the study at hand, as a refusal names it.
REVIEW, REWRITE, PRACTICE = "review", "rewrite", "practice"


@dataclass(frozen=True)
class SeenKeys:
    """What people have been shown the answers of outside the study at hand, by where.

    - ``papers``: AIBench papers (:func:`paper_key`, by content) they opened in the question review,
      or worked on there. The page shows every question of the paper with its key, and its
      original figure.
    - ``rewritten``: StrucText samples given to them to rewrite for Real-Test, as (ids, reference
      texts). The rewriting page shows the sample's answer. Every one assigned counts, opened or
      not, because opening leaves no trace until a draft is saved.
    - ``practised``: practice questions they answered in a study, after which the key is shown.
      StrucText samples go in (ids, reference texts); AIBench questions go in ``practised_questions``
      by content (:func:`question_key`). Every answered one counts, even where the key was withheld.

    A sample is matched by its id or by its reference text, as :func:`is_open_for` matches it; an
    AIBench item by ``paper_key`` and ``question_key`` (the item carries them, or its ``suite``)."""

    papers: frozenset[str] = frozenset()
    rewritten: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    practised: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    practised_questions: frozenset[tuple[str, str]] = frozenset()

    def where(self, item: dict) -> str | None:
        """Where ``item``'s answer was shown (:data:`REVIEW`, :data:`REWRITE`, :data:`PRACTICE`), or
        None. ``item`` is a sample, a drawn study item, or a ``study_items`` row (then its reference is
        read from ``sample_json``, only where its length matches a seen one)."""
        if item.get("paper_id") is not None:
            paper = item.get("paper_key") or paper_key(item.get("suite"), item["paper_id"])
            if paper in self.papers:
                return REVIEW
            question = item.get("question_key") or question_key(item.get("suite"), item["paper_id"],
                                                                 item.get("question_id"))
            return PRACTICE if question in self.practised_questions else None
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
        return bool(self.papers or self.rewritten[0] or self.practised[0] or self.practised_questions)


def seen_keys(db: sqlite_utils.Database, user_ids: Iterable[int]) -> SeenKeys:
    """What the people ``user_ids`` have been shown the answers of outside a study, all together."""
    ids = sorted(set(user_ids))
    if not ids:
        return SeenKeys()
    marks = ", ".join("?" for _ in ids)
    papers = {paper_key(row[0], row[1]) for row in db.execute(
        "SELECT DISTINCT c.dataset, q.paper_id FROM qreview_items q JOIN qreview_campaigns c ON c.id = q.campaign_id"
        f" WHERE q.reviewer_id IN ({marks}) AND (q.first_shown_at IS NOT NULL OR q.status != 'todo')", ids)}
    rewritten = db.execute(
        f"SELECT sample_id, json_extract(sample_json, '$.reference') FROM rewrite_items WHERE annotator_id IN ({marks})",
        ids).fetchall()
    practised = db.execute(
        "SELECT DISTINCT i.sample_id, json_extract(i.sample_json, '$.reference'), json_extract(i.strata, '$.paper_id'), json_extract(i.strata, '$.question_id'), s.suite"
        " FROM responses r JOIN assignments a ON a.id = r.assignment_id JOIN study_items i ON i.id = a.item_id"
        f" JOIN studies s ON s.id = i.study_id WHERE a.user_id IN ({marks}) AND i.kind = 'practice'", ids).fetchall()

    def samples(rows) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(row[0] for row in rows), frozenset(row[1] for row in rows if isinstance(row[1], str))

    return SeenKeys(frozenset(papers), samples(rewritten), samples([row for row in practised if row[2] is None]),
                    frozenset(question_key(row[4], row[2], row[3]) for row in practised if row[2] is not None))


def seen_refusal(db: sqlite_utils.Database, study_id: int, user_id: int) -> str | None:
    """Why ``user_id`` may not join the study ``study_id``: they have been shown the answers of
    some of its questions (:func:`seen_keys`). None when they have not."""
    seen = seen_keys(db, [user_id])
    if not seen:
        return None
    columns = ("paper_id", "question_id", "sample_id", "reference_chars", "sample_json", "suite")
    items = [dict(zip(columns, row)) for row in db.execute(
        "SELECT json_extract(i.strata, '$.paper_id'), json_extract(i.strata, '$.question_id'), i.sample_id, i.reference_chars, i.sample_json, s.suite"
        " FROM study_items i JOIN studies s ON s.id = i.study_id WHERE i.study_id = ?", [study_id])]
    found: dict[str, list[dict]] = {}
    for item in items:
        if (where := seen.where(item)) is not None:
            found.setdefault(where, []).append(item)
    if not found:
        return None
    said = []
    if REVIEW in found:
        papers = sorted({item["paper_id"] for item in found[REVIEW]})  # this study's ids of those papers
        shown = ", ".join(papers[:5]) + (", ..." if len(papers) > 5 else "")
        said.append(f"the question review showed them {len(papers):,} of its papers with their keys ({shown})")
    if REWRITE in found:
        said.append(f"they were given {len(found[REWRITE]):,} of its questions to rewrite for Real-Test, with their "
                    "answers")
    if PRACTICE in found:
        said.append(f"they answered {len(found[PRACTICE]):,} of its questions as practice in another study, where "
                    "the key is shown after the answer")
    name = db.execute("SELECT username FROM users WHERE id = ?", [user_id]).fetchone()
    who = repr(name[0]) if name else f"User {user_id}"
    return (f"{who} has already seen answers of this study: {'; '.join(said)}. "
            "Their answers would not be blind, so they cannot join it. Add someone who has not seen them, or "
            "set up a new study for them: a new study leaves out what its annotators have seen.")
