"""Pairwise studies: the blinded images (re-encoded PNGs without metadata, padded to a size bucket)."""

from __future__ import annotations

import functools
import hashlib
import io
import os
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import store as aibench_store
from structext_core.aibench.pairwise.common import CANVAS, MAX_SERVED_WIDTH, SIZE_BUCKET
from structext_core.aibench.pairwise.voting import _own_task
from structext_core.studio.study.store import StudyError

# ---------------------------------------------------------------- the blinded images

def _system_on(row: dict, side: str, pair: tuple[str, str, str]) -> str:
    _, a, b = pair
    left, right = (a, b) if row["left_is_a"] else (b, a)
    return left if side == "left" else right


def task_image(db: sqlite_utils.Database, user_id: int, token: str, side: str, nonce: bytes = b"") -> bytes:
    """The blinded PNG of the ``left`` or ``right`` image of the person's own task ``token``: both
    sides on one canvas and of one byte length (:func:`served_pair`), padded with bytes drawn from
    ``nonce`` (the page gives each viewer and task its own, so no two viewers get the same file or
    URL: Streamlit names a media file by a hash of its bytes)."""
    if side not in ("left", "right"):
        raise StudyError(f"A side is left or right, not {side!r}.")
    row = _own_task(db, user_id, token)
    dataset, paper_id, a, b = db.execute(
        "SELECT s.dataset, p.paper_id, p.system_a, p.system_b FROM pairwise_pairs p JOIN pairwise_studies s"
        " ON s.id = p.study_id WHERE p.id = ?", [row["pair_id"]]).fetchone()
    folder = aibench_store.dataset_path(dataset)
    records = _image_records(str(folder))
    paths = [records.get((_system_on(row, s, (paper_id, a, b)), paper_id)) for s in ("left", "right")]
    if None in paths:
        raise StudyError("That image is no longer stored; tell the study lead.")
    left, right = served_pair(str(folder / paths[0]), str(folder / paths[1]))
    size = _bucket(max(len(left), len(right)) + PAD_OVERHEAD)
    return pad_png(left if side == "left" else right, size, pad_fill(nonce, side))


def _image_records(folder: str) -> dict[tuple[str, str], str]:
    """(system, paper) -> the stored image's path, read again when ``images.jsonl`` changes (``aibench
    draw`` adds a system to a stored set while the app runs)."""
    try:
        stamp = os.stat(Path(folder) / "images.jsonl").st_mtime_ns
    except OSError:
        stamp = 0
    return _records_at(folder, stamp)


@functools.lru_cache(maxsize=8)
def _records_at(folder: str, stamp: int) -> dict[tuple[str, str], str]:
    data = aibench_dataset.load_dataset(folder)
    return {key: record.path for key, record in data.images.items()}


def _pixels(path: str, box: tuple[int, int]):
    """The stored image's pixels (RGB), scaled down to fit ``box`` when larger, aspect kept."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = image.convert("RGB")
    scale = min(box[0] / pixels.width, box[1] / pixels.height, 1.0)
    if scale < 1.0:
        pixels = pixels.resize((max(1, round(pixels.width * scale)), max(1, round(pixels.height * scale))),
                               Image.LANCZOS)
    return pixels


def _png(pixels) -> bytes:
    from PIL import Image

    clean = Image.frombytes("RGB", pixels.size, pixels.tobytes())  # pixels only: no name, text or profile
    out = io.BytesIO()
    clean.save(out, "PNG", compress_level=6)
    return out.getvalue()


@functools.lru_cache(maxsize=64)
def blinded_png(path: str) -> bytes:
    """The pixels of the stored image at ``path`` (at most :data:`MAX_SERVED_WIDTH` wide) as a plain
    PNG (nothing but IHDR, IDAT and IEND), not yet padded (:func:`pad_png`)."""
    return _png(_pixels(path, (MAX_SERVED_WIDTH, 10 * MAX_SERVED_WIDTH)))


@functools.lru_cache(maxsize=64)
def served_pair(left: str, right: str) -> tuple[bytes, bytes]:
    """Both images of a pair as plain PNGs on one :data:`CANVAS` (each scaled down to fit when
    larger, centred, the rest white): a pair's two files have the same dimensions whatever sizes and
    shapes the systems drew, so neither names its system. Not yet padded (:func:`pad_png`)."""
    from PIL import Image

    served = []
    for path in (left, right):
        pixels = _pixels(path, CANVAS)
        canvas = Image.new("RGB", CANVAS, (255, 255, 255))
        canvas.paste(pixels, ((CANVAS[0] - pixels.width) // 2, (CANVAS[1] - pixels.height) // 2))
        served.append(_png(canvas))
    return served[0], served[1]


#: Bytes a padding chunk adds besides its body (length, type, CRC).
PAD_OVERHEAD = 12


def _bucket(length: int) -> int:
    """``length`` rounded up to a multiple of :data:`SIZE_BUCKET`."""
    return -(-length // SIZE_BUCKET) * SIZE_BUCKET


def pad_fill(nonce: bytes, label: str) -> Callable[[int], bytes] | None:
    """Padding drawn from ``nonce`` (SHAKE-256 of it and ``label``), or None for zeros (no nonce)."""
    if not nonce:
        return None
    return lambda n: hashlib.shake_256(nonce + b"|" + label.encode()).digest(n)


def pad_png(png: bytes, size: int | None = None, fill: Callable[[int], bytes] | None = None) -> bytes:
    """``png`` with a private ancillary chunk (``pdNg``; decoders skip it) before IEND, so it is
    ``size`` bytes long (default: the next multiple of :data:`SIZE_BUCKET`, at least
    :data:`PAD_OVERHEAD` bytes more). The chunk holds zeros, or ``fill(n)``'s bytes."""
    size = _bucket(len(png) + PAD_OVERHEAD) if size is None else size
    if size < len(png) + PAD_OVERHEAD:
        raise ValueError(f"a {len(png):,}-byte PNG cannot be padded to {size:,} bytes")
    end = png.rindex(b"IEND") - 4
    length = size - len(png) - PAD_OVERHEAD
    body = fill(length) if fill is not None else b"\x00" * length
    chunk = struct.pack(">I", length) + b"pdNg" + body + struct.pack(">I", zlib.crc32(b"pdNg" + body))
    return png[:end] + chunk + png[end:]
