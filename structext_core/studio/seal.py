"""The seal: the one rule that keeps answer keys from the people who may still answer them.

    A person is never given the answer (or rule hint) of an item they may still answer, nor a
    service that computes answers on text of a kind they are still being asked.

*Open items* of a person (:func:`open_items_sql`): every item (study, gold and practice
alike) of every study they take part in (not taken off it; the study open, not archived)
that they have not answered yet (in a study that deals k people per item, every item of it they
have not answered: any may still be dealt to them). What makes two items **the same item** is the benchmark's to say,
by content, never by the name of the data set they are stored under (a copy of a set is sealed as
the original is): a benchmark declares its part of the seal in its member module (``SEAL``, see
:mod:`structext_core.protocol`), a module offering ``is_open_for(db, user_id, item)`` and
``seen_keys(db, user_ids)``. A benchmark that declares none gets :class:`ByContent`: an item is
the same as another of that benchmark with its id or with the same question and options.

What obeys it here (each service asks this module or its benchmark's part; nothing else decides):

- the **answer key after a practice question** and the correctness note after an answer
  (:func:`key_withheld`, used by :mod:`structext_core.studio.study.quality` and
  :mod:`~structext_core.studio.study.submitting`): shown only when the item is no open item of
  that person in any study; otherwise the score alone, with a note why the key is withheld;
- practice and gold draws (each benchmark's study setup) avoid items
  that another study over the same suite counts, so feedback has a key to show;
- the services a benchmark offers outside studies ask its part (a rewriting page's answer check,
  a review page that shows keys, Results in public read-only mode).

The other way round: keys a person was **already shown** before a study (:func:`seen_keys`, the
benchmark's part says where: practice feedback, and the benchmark's own pages that show keys). A
study leaves those out of its draw for the annotators it is created with
(each benchmark's study setup). No one is added later to a study holding
such an item (:func:`seen_refusal`, used by :func:`~structext_core.studio.study.store.add_annotator`).

Researchers and admins see answers anyway (the capability ``answers`` of
:mod:`structext_core.studio.access`) and take part in no study, so they have no open items.
No Streamlit here.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

import sqlite_utils

from structext_core import protocol

#: The rows of ``study_items`` (alias ``i``) open for the user bound to the one ``?``: assigned
#: to them in a study they still take part in, the study open and not archived, no answer yet.
#: In a study that deals its items one at a time (k people per item, :mod:`structext_core.studio.crowd.dealing`)
#: every item the person has not answered is open for them: any may still be dealt to them.
OPEN_ITEMS_SQL = """
    FROM study_annotators sa
    JOIN studies s ON s.id = sa.study_id
    JOIN study_items i ON i.study_id = sa.study_id
    LEFT JOIN assignments a ON a.study_id = sa.study_id AND a.user_id = sa.user_id AND a.item_id = i.id
    LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE sa.user_id = ? AND sa.removed_at IS NULL AND s.status = 'open' AND s.archived_at IS NULL
      AND r.id IS NULL
      AND (a.id IS NOT NULL OR sa.study_id IN (SELECT study_id FROM study_crowd WHERE per_item IS NOT NULL))
"""

#: Said instead of a practice question's answer key while the same question is open elsewhere.
KEY_WITHHELD = ("The answer key is withheld: this question is still open for you in another study, so its "
                "key is shown once you have answered it there. Your score above stands.")


def open_items_sql(columns: str) -> str:
    """``SELECT columns`` over the open items (``i``) of the user bound to the first ``?``."""
    return f"SELECT {columns} {OPEN_ITEMS_SQL}"


def open_item_count(db: sqlite_utils.Database, user_id: int | None) -> int:
    """How many open items the user has, over every study."""
    if user_id is None:
        return 0
    return db.execute(open_items_sql("COUNT(*)"), [user_id]).fetchone()[0]


#: Where a person can have been shown an answer outside the study at hand, as a refusal names it.
REVIEW, REWRITE, PRACTICE = "review", "rewrite", "practice"


def part(benchmark: str) -> ModuleType | ByContent:
    """The benchmark's part of the seal: the module its member declares as ``SEAL``, else
    :class:`ByContent` for it."""
    declared = protocol.option(protocol.get_module(benchmark), "SEAL")
    return importlib.import_module(declared) if declared else ByContent(benchmark)


def is_open_for(db: sqlite_utils.Database, user_id: int | None, item: dict, benchmark: str) -> bool:
    """Whether ``item`` of ``benchmark`` (an item, or a ``study_items`` row with its strata as
    keys, ``sample_json`` and the study's ``suite``) is the same item as an open item of the user in
    any study (the benchmark's part says what "the same" is)."""
    return user_id is not None and part(benchmark).is_open_for(db, user_id, item)


def key_withheld(db: sqlite_utils.Database, user_id: int, item: dict, benchmark: str) -> bool:
    """Whether the answer key (or correctness) of ``item`` must not be shown to the user: it is an
    open item of theirs in some study (:func:`is_open_for`)."""
    return is_open_for(db, user_id, item, benchmark)


def seen_keys(db: sqlite_utils.Database, user_ids: Iterable[int], benchmark: str):
    """What the people ``user_ids`` have been shown the answers of outside a study, all together, as
    ``benchmark``'s part knows it: an object with ``where(item)`` (:data:`REVIEW`, :data:`REWRITE`,
    :data:`PRACTICE` or None), ``covers(item)``, ``said(kind, items)`` and truth (anything seen)."""
    return part(benchmark).seen_keys(db, user_ids)


def study_item_rows(db: sqlite_utils.Database, study_id: int) -> tuple[str, list[dict]]:
    """The study's benchmark and its items as the seal's parts read them: each ``study_items`` row's
    strata as keys, with ``sample_id``, ``reference_chars``, ``sample_json`` and the study's ``suite``."""
    benchmark, suite = db.execute("SELECT benchmark, suite FROM studies WHERE id = ?", [study_id]).fetchone()
    rows = db.execute("SELECT strata, sample_id, reference_chars, sample_json FROM study_items WHERE study_id = ?",
                      [study_id]).fetchall()
    return benchmark, [{**json.loads(strata or "{}"), "sample_id": sample_id, "reference_chars": chars,
                        "sample_json": sample_json, "suite": suite} for strata, sample_id, chars, sample_json in rows]


def seen_refusal(db: sqlite_utils.Database, study_id: int, user_id: int) -> str | None:
    """Why ``user_id`` may not join the study ``study_id``: they have been shown the answers of
    some of its questions (:func:`seen_keys`). None when they have not."""
    benchmark, items = study_item_rows(db, study_id)
    seen = seen_keys(db, [user_id], benchmark)
    if not seen:
        return None
    found: dict[str, list[dict]] = {}
    for item in items:
        if (where := seen.where(item)) is not None:
            found.setdefault(where, []).append(item)
    if not found:
        return None
    said = [seen.said(kind, found[kind]) for kind in (REVIEW, REWRITE, PRACTICE) if kind in found]
    name = db.execute("SELECT username FROM users WHERE id = ?", [user_id]).fetchone()
    who = repr(name[0]) if name else f"User {user_id}"
    return (f"{who} has already seen answers of this study: {'; '.join(said)}. "
            "Their answers would not be blind, so they cannot join it. Add someone who has not seen them, or "
            "set up a new study for them: a new study leaves out what its annotators have seen.")


# ---------------------------------------------------------------- a benchmark that declares no part

def shown_content(item: dict) -> tuple[str, str] | None:
    """What a person is shown of a stored item (``sample_json``'s question and options), as text;
    None when there is none to compare."""
    stored = json.loads(item["sample_json"]) if item.get("sample_json") else item
    question = stored.get("question")
    if not isinstance(question, str) or not question.strip():
        return None
    return question, json.dumps(list(stored.get("options") or ()), ensure_ascii=False)


@dataclass(frozen=True)
class SeenItems:
    """Items of one benchmark answered as practice (after which the key is shown): by id and by
    what they show (:func:`shown_content`)."""

    ids: frozenset[str] = frozenset()
    contents: frozenset[tuple[str, str]] = frozenset()

    def where(self, item: dict) -> str | None:
        if item.get("sample_id", item.get("id")) in self.ids or shown_content(item) in self.contents - {None}:
            return PRACTICE
        return None

    def covers(self, item: dict) -> bool:
        return self.where(item) is not None

    def __bool__(self) -> bool:
        return bool(self.ids)

    @staticmethod
    def said(kind: str, items: list[dict]) -> str:
        return (f"they answered {len(items):,} of its questions as practice in another study, where the key is "
                "shown after the answer")


@dataclass(frozen=True)
class ByContent:
    """The seal's part for a benchmark that declares none: an item is the same as another item of
    that benchmark with its id (``sample_id``) or with the same question and options
    (:func:`shown_content`), whatever set either is stored under."""

    benchmark: str

    def is_open_for(self, db: sqlite_utils.Database, user_id: int | None, item: dict) -> bool:
        if user_id is None:
            return False
        wanted_id, wanted = item.get("sample_id", item.get("id")), shown_content(item)
        return any(sample_id == wanted_id or (wanted is not None and shown_content({"sample_json": stored}) == wanted)
                   for sample_id, stored in db.execute(
                       open_items_sql("i.sample_id, i.sample_json") + " AND s.benchmark = ?", [user_id, self.benchmark]))

    def seen_keys(self, db: sqlite_utils.Database, user_ids: Iterable[int]) -> SeenItems:
        ids = sorted(set(user_ids))
        if not ids:
            return SeenItems()
        marks = ", ".join("?" for _ in ids)
        rows = db.execute(
            "SELECT DISTINCT i.sample_id, i.sample_json FROM responses r JOIN assignments a ON a.id = r.assignment_id"
            " JOIN study_items i ON i.id = a.item_id JOIN studies s ON s.id = i.study_id"
            f" WHERE a.user_id IN ({marks}) AND i.kind = 'practice' AND s.benchmark = ?", [*ids, self.benchmark])
        found = [(sample_id, shown_content({"sample_json": stored})) for sample_id, stored in rows]
        return SeenItems(frozenset(sample_id for sample_id, _ in found),
                         frozenset(content for _, content in found if content is not None))
