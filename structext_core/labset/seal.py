"""The lab's own benchmark's part of the seal (:mod:`structext_core.studio.seal`, which states the rule).

A lab's question is the same item as another by its **meaning** (:func:`meaning_key`), not by its
bytes: a copy of a set with the options in another order, white space added, the case changed, the
text in another Unicode normal form, or the images encoded again or resized, asks the same
questions, and is sealed as the original is. The meaning of a question:

- its text in Unicode NFKC, case-folded, runs of white space made one space, the ends stripped
  (:func:`normalised`);
- its options as a multiset of such texts (their order aside), and its key as the key option's
  normalised **text**, not its letter; a short answer's key as the set of its normalised accepted
  answers (the rule it is scored by aside);
- its image, if any: the same picture when the sha256 of the bytes is the same, or when their
  perceptual hashes (:func:`structext_core.labset.images.dhash`, computed where the image is decoded,
  in a sandbox worker at a set's check, import and study setup, and kept with the study item) are at
  most :data:`~structext_core.labset.images.PHASH_DISTANCE` bits apart.

The content id (:func:`structext_core.labset.dataset.content_id`) stays the item's id: an item with
the same id is the same item too, and the meaning is compared besides. A key that cannot be read
(none stored) matches any key: the seal then withholds rather than shows.

Where a lab's keys are shown outside a study: practice feedback (every answered practice question
counts, even where the key was withheld). No other page of this benchmark shows keys.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import sqlite_utils

from structext_core.evaluation.choices import LETTERS
from structext_core.labset import dataset, inspect_rules
from structext_core.labset.images import same_picture
from structext_core.studio.seal import PRACTICE, open_items_sql

NAME = "labset"
#: The most characters of a text read for its meaning (a stored text is bounded at import far below).
MAX_CHARS = 4 * dataset.LIMITS["question_chars"]


def normalised(text) -> str:
    """``text`` as its meaning compares it: Unicode NFKC, case-folded (then NFKC again, as folding may
    undo it), runs of white space made one space, the ends stripped. Linear; no regular expression."""
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS])
    return " ".join(unicodedata.normalize("NFKC", text.casefold()).split())


@dataclass(frozen=True)
class Meaning:
    """What a question means (:func:`meaning_key`): ``text`` (its normalised question and its
    options' normalised texts, sorted), ``key`` (the key option's normalised text, or a frozenset
    of normalised accepted answers; None when unknown) and its image (sha256 and perceptual hash;
    ``image`` false when it has none)."""

    text: tuple
    key: object = None
    image: bool = False
    sha256: str | None = field(default=None, compare=False)
    phash: str | None = field(default=None, compare=False)

    def same(self, other: Meaning | None) -> bool:
        """Whether ``other`` is the same question: the same text and options, the same key (or one
        unknown) and the same picture (or neither with an image)."""
        if other is None or self.text != other.text or self.image != other.image:
            return False
        if self.key is not None and other.key is not None and self.key != other.key:
            return False
        if not self.image:
            return True
        return (self.sha256 is not None and self.sha256 == other.sha256) or same_picture(self.phash, other.phash)


def _stored(item: Mapping) -> Mapping:
    """The stored study item of ``item`` (its ``sample_json``), else ``item`` itself."""
    raw = item.get("sample_json")
    if isinstance(raw, str) and raw:
        try:
            found = json.loads(raw)
        except ValueError:
            return item
        return found if isinstance(found, dict) else item
    return item


def _options(stored: Mapping) -> list[str] | None:
    options = stored.get("options", stored.get("choices"))
    return [o if isinstance(o, str) else "" for o in options[:len(LETTERS)]] if isinstance(options, list) else None


def _key(stored: Mapping, options: list[str]):
    """The key by meaning: the key option's normalised text, or a short answer's normalised accepted
    answers (a frozenset); None when the item carries no key that can be read."""
    if "answer" in stored:  # a stored study item: the key's letter, or "<rule>: t1 | t2"
        answer = stored.get("answer")
        if not isinstance(answer, str) or not answer:
            return None
        if options:
            letter = answer.strip().upper()
            return normalised(options[LETTERS.index(letter)]) if len(letter) == 1 and letter in LETTERS[:len(options)] \
                else None
        split = inspect_rules.split_key(answer[:MAX_CHARS])
        return frozenset(normalised(t) for t in split[1]) if split else None
    target = stored.get("target")  # a set's item (dataset.load_set)
    targets = target if isinstance(target, list) else [target] if isinstance(target, str) else None
    if not targets:
        return None
    if options:
        letter = targets[0].strip().upper() if isinstance(targets[0], str) else ""
        return normalised(options[LETTERS.index(letter)]) if len(letter) == 1 and letter in LETTERS[:len(options)] \
            else None
    return frozenset(normalised(t) for t in targets[:dataset.LIMITS["targets"]])


def meaning_key(item: Mapping) -> Meaning | None:
    """What ``item`` means (:class:`Meaning`): a stored study item (``sample_json``, or its parsed
    object: ``question``, ``options``, ``answer``, ``image``, ``kept.image_sha256`` and
    ``kept.image_phash``) or a set's item (``question``, ``choices``, ``target``, ``image_sha256``,
    ``image_phash``). None when it holds no question."""
    stored = _stored(item)
    question = normalised(stored.get("question"))
    if not question:
        return None
    options = _options(stored) or []
    kept = stored.get("kept") if isinstance(stored.get("kept"), dict) else {}
    sha256 = kept.get("image_sha256", stored.get("image_sha256"))
    phash = kept.get("image_phash", stored.get("image_phash"))
    image = bool(stored.get("image")) or bool(sha256)
    return Meaning((question, tuple(sorted(normalised(o) for o in options))), _key(stored, options), image,
                   sha256 if isinstance(sha256, str) else None, phash if isinstance(phash, str) else None)


def _item_id(item: Mapping):
    return item.get("sample_id", item.get("id"))


def _with_key(db: sqlite_utils.Database, item: Mapping) -> Mapping:
    """``item``, or the stored study item of its id when ``item`` carries no key of its own (a page's
    view of a study item: its question and options only)."""
    if item.get("sample_json") or "answer" in item or "target" in item:
        return item
    row = db.execute("SELECT sample_json FROM study_items WHERE sample_id = ? LIMIT 1", [_item_id(item)]).fetchone()
    return {"sample_json": row[0]} if row else item


def is_open_for(db: sqlite_utils.Database, user_id: int | None, item: dict) -> bool:
    """Whether ``item`` (a set's item, a drawn study item, or a page's view of one) is the same
    question, by its id or its meaning (:func:`meaning_key`), as an open item of the user in any study
    of this benchmark, whatever set either is of."""
    if user_id is None:
        return False
    wanted_id, wanted = _item_id(item), meaning_key(_with_key(db, item))
    for sample_id, stored in db.execute(open_items_sql("i.sample_id, i.sample_json") + " AND s.benchmark = ?",
                                        [user_id, NAME]):
        if sample_id == wanted_id or (wanted is not None and wanted.same(meaning_key({"sample_json": stored}))):
            return True
    return False


@dataclass(frozen=True)
class SeenMeanings:
    """Questions people answered as practice (after which the key is shown): by id and by meaning
    (:func:`meaning_key`, kept by their text and options for a quick look-up)."""

    ids: frozenset[str] = frozenset()
    meanings: Mapping[tuple, tuple[Meaning, ...]] = field(default_factory=dict)

    def where(self, item: dict) -> str | None:
        """:data:`~structext_core.studio.seal.PRACTICE` when ``item`` (a set's item or a study item)
        was answered as practice, by its id or its meaning; else None."""
        if _item_id(item) in self.ids:
            return PRACTICE
        wanted = meaning_key(item)
        if wanted is not None and any(wanted.same(seen) for seen in self.meanings.get(wanted.text, ())):
            return PRACTICE
        return None

    def covers(self, item: dict) -> bool:
        """Whether ``item``'s key was shown to them (:meth:`where`)."""
        return self.where(item) is not None

    def __bool__(self) -> bool:
        return bool(self.ids)

    @staticmethod
    def said(kind: str, items: list[dict]) -> str:
        """How a refusal names the ``items`` of a study seen at ``kind``."""
        return (f"they answered {len(items):,} of its questions (or the same questions in another set) as "
                "practice in another study, where the key is shown after the answer")


def seen_keys(db: sqlite_utils.Database, user_ids: Iterable[int]) -> SeenMeanings:
    """What the people ``user_ids`` have been shown the keys of outside a study, all together: the
    practice questions of this benchmark they answered."""
    ids = sorted(set(user_ids))
    if not ids:
        return SeenMeanings()
    marks = ", ".join("?" for _ in ids)
    rows = db.execute(
        "SELECT DISTINCT i.sample_id, i.sample_json FROM responses r JOIN assignments a ON a.id = r.assignment_id"
        " JOIN study_items i ON i.id = a.item_id JOIN studies s ON s.id = i.study_id"
        f" WHERE a.user_id IN ({marks}) AND i.kind = 'practice' AND s.benchmark = ?", [*ids, NAME]).fetchall()
    meanings: dict[tuple, list[Meaning]] = {}
    for _, stored in rows:
        if (meaning := meaning_key({"sample_json": stored})) is not None:
            meanings.setdefault(meaning.text, []).append(meaning)
    return SeenMeanings(frozenset(row[0] for row in rows), {text: tuple(found) for text, found in meanings.items()})
