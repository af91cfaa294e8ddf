"""A human-baseline study of a lab's set, through the shared items study
(:func:`structext_core.studio.study.create_items_study`). The shared question screen shows questions
with up to ten options (keys A to J) and short answers, with an image or without (the image served
blinded by :mod:`structext_core.labset.images`); a question with more options than the screen's keys
would be left out of the draw, and the lead told how many (:func:`studyable`; the import allows no
more than ten)."""

from __future__ import annotations

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
    """(the new study's id, the note of :func:`studyable`); ``setup`` as ``create_items_study``'s."""
    from structext_core.studio import study
    kept, note = studyable(items)
    if not kept:
        raise StudyError("No question of this set can be shown on the question screen: " + note)
    return study.create_items_study(db, benchmark=NAME, items=kept, **setup), note




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
