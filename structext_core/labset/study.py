"""A human-baseline study of a lab's set, through the shared items study
(:func:`structext_core.studio.study.create_items_study`). The shared question screen shows questions
with up to ten options (keys A to J) and short answers, with an image or without (the image served
blinded by :mod:`structext_core.labset.images`); a question with more options than the screen's keys
would be left out of the draw, and the lead told how many (:func:`studyable`; the import allows no
more than ten)."""

from __future__ import annotations

import functools
from pathlib import Path

from structext_core.evaluation.choices import LETTERS
from structext_core.labset.member import ITEM_SUFFIXES as SET_SUFFIXES
from structext_core.labset.member import NAME
from structext_core.studio.errors import StudyError

#: The most options the shared question screen offers (its keys A to J, as a set may have).
SCREEN_OPTIONS = len(LETTERS)


def studyable(items) -> tuple[list[dict], str]:
    """(the items a study may draw, a sentence on those left out, "" when none)."""
    kept = [item for item in items if len(item["choices"]) <= SCREEN_OPTIONS]
    wide = len(items) - len(kept)
    note = (f"Left out of the study's draw: {wide} with more than {SCREEN_OPTIONS} options (not shown on the "
            "question screen yet)." if wide else "")
    return kept, note


def create_study(db, *, items, **setup) -> tuple[int, str]:
    """(the new study's id, the note of :func:`studyable`); ``setup`` as ``create_items_study``'s.
    Questions its annotators were shown the keys of (as practice in another study, of this set or of
    any other asking the same questions: :mod:`structext_core.labset.seal`) are in no draw."""
    from structext_core.studio import seal, study
    kept, note = studyable(items)
    if not kept:
        raise StudyError("No question of this set can be shown on the question screen: " + note)
    if seen := seal.seen_keys(db, setup.get("annotator_ids") or (), NAME):
        unseen = [item for item in kept if not seen.covers(item)]
        if len(unseen) < len(kept):
            note = " ".join(filter(None, [note, f"Left out of the draw: {len(kept) - len(unseen)} whose keys its "
                                                "annotators were shown as practice in another study."]))
        if not unseen:
            raise StudyError("Its annotators were shown the keys of every question of this set: " + note)
        kept = unseen
    return study.create_items_study(db, benchmark=NAME, items=kept, **setup), note


def load_for_study(path, **options) -> list[dict]:
    """The checked items of the set at ``path`` (``options`` as
    :func:`~structext_core.labset.dataset.read_set`'s), each distinct image decoded once in a sandbox
    worker: an image that does not decode is refused as the import refuses it, and each item on an
    image gets its perceptual hash (``image_phash``), which its study keeps for the seal."""
    from structext_core.labset import dataset, images
    read = dataset.read_set(path, **options)
    try:
        problems = images.decode_images(read)
    except images.ImageChanged as error:
        problems = [dataset.Problem(0, str(error))]
    if problems:
        raise dataset.LabSetError(Path(path).name, problems)
    return read.items


def short_answers(path) -> int | None:
    """How many of the set's questions have a short answer (and so a rule to score them by), read
    once per version of the file; None when the set cannot be read (its study form then asks the
    rule, and creating the study says what is wrong with the set)."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return None
    return _short_answers(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _short_answers(path: str, _mtime_ns: int, _size: int) -> int | None:
    from structext_core.labset import dataset
    try:
        items = dataset.load_set(path, strata_key=None)
    except (dataset.LabSetError, OSError, ValueError):
        return None
    return sum(1 for item in items if item["format"] == "short")


def sets_dir():
    """Where a lab's sets are put for the app (each beside its images): its member's shared item
    place (:func:`structext_core.evaluation.item_sets.data_dir`), ``<data dir>/labsets``."""
    from structext_core.evaluation import item_sets
    return item_sets.data_dir(NAME)


def available_sets(folder=None, limit: int = 500) -> list[str]:
    """The set files in ``folder`` (default :func:`sets_dir`), by name (at most ``limit``)."""
    folder = sets_dir() if folder is None else folder
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.suffix.lower() in SET_SUFFIXES and p.is_file()
                  and not p.name.endswith((".mapping.json", ".task.json")))[:limit]  # a set's sidecar is no set
