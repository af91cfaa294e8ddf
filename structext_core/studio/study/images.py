"""The image a study item is answered from, for the annotator's question and the lead's pages,
served through the protocol: the benchmark's member declares ``STUDY_IMAGE``
(:mod:`structext_core.protocol`), which draws the blinded PNG from the study's data set and the
item's strata; this module checks whose item it is first. An item of a benchmark without images
has none (the same answer as an item that is not the user's).
"""

from __future__ import annotations

import inspect
import json

import sqlite_utils

from structext_core import protocol
from structext_core.studio.errors import StudyError


def _image(db: sqlite_utils.Database, row, nonce: bytes) -> bytes | None:
    benchmark, suite, strata, sample = row
    if benchmark not in protocol.names():
        return None
    draw = protocol.view(benchmark, "STUDY_IMAGE")
    if draw is None:
        return None
    if "item" in inspect.signature(draw).parameters:  # a hook that reads the stored item (its image's path)
        return draw(db, suite, json.loads(strata or "{}"), nonce, item=json.loads(sample))
    return draw(db, suite, json.loads(strata or "{}"), nonce)


def item_image(db: sqlite_utils.Database, user_id: int, assignment_id: int, nonce: bytes = b"") -> bytes:
    """The blinded PNG of the image of the user's own assignment ``assignment_id`` (pixels only,
    padded to a size bucket: no name, path or metadata of the file), its padding drawn from
    ``nonce`` (the page gives each viewer and question its own: a file and URL of their own)."""
    row = db.execute(
        "SELECT s.benchmark, s.suite, i.strata, i.sample_json FROM assignments a JOIN study_items i ON i.id = a.item_id"
        " JOIN studies s ON s.id = a.study_id WHERE a.id = ? AND a.user_id = ?", [assignment_id, user_id],
    ).fetchone()
    image = None if row is None else _image(db, row, nonce)
    if image is None:
        raise StudyError("That question is not one of yours.")
    return image


def lead_image(db: sqlite_utils.Database, item_id: int) -> bytes:
    """The image of a study item, for the lead's pages (adjudication)."""
    row = db.execute(
        "SELECT s.benchmark, s.suite, i.strata, i.sample_json FROM study_items i JOIN studies s ON s.id = i.study_id"
        " WHERE i.id = ?", [item_id],
    ).fetchone()
    image = None if row is None else _image(db, row, b"")
    if image is None:
        raise StudyError(f"There is no study item with id {item_id} that shows an image.")
    return image
