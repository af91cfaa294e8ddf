"""The image a study item of a lab's set is answered from (its member's ``STUDY_IMAGE``), blinded:
the pixels only, re-encoded as a plain PNG in a sandbox worker (:mod:`structext_core.studio.sandbox`),
so no name, path or metadata of the lab's file reaches an annotator.

At each serving the file is checked again as the import checks it (a path inside the set's folder,
no ``..``, no link out of it, at most 5 MB, a PNG or JPEG of at most 4096 x 4096 pixels) and must
still be the file the study was drawn with (its sha256, kept with the item): a file changed since is
refused with a message for the lead, never shown in its new form.
"""

from __future__ import annotations

import base64
import hashlib
import io
import warnings
from pathlib import Path

from structext_core.labset import dataset
from structext_core.labset.study import sets_dir
from structext_core.studio.errors import StudyError

#: The widest image served (a wider one is scaled down, its aspect kept).
MAX_SERVED_WIDTH = 1600
#: A perceptual hash (:func:`dhash`): the image as ``PHASH_SIZE`` grey pixels, one bit a pair of
#: neighbours in a row (is the left one brighter?), 64 bits written as 16 hex digits.
PHASH_SIZE = (9, 8)
#: Two images are the same picture when their hashes differ in at most this many of the 64 bits
#: (a PNG saved again, a JPEG at quality 95, the image scaled by 90% differ in none to a few).
PHASH_DISTANCE = 4


def dhash(image) -> str:
    """The difference hash of a decoded Pillow image (:data:`PHASH_SIZE`): the same for the same
    picture whatever its encoding, and close (:func:`same_picture`) for the picture resized."""
    from PIL import Image
    width, height = PHASH_SIZE
    grey = image.convert("L").resize(PHASH_SIZE, Image.LANCZOS).tobytes()
    bits = 0
    for y in range(height):
        row = grey[y * width:(y + 1) * width]
        for x in range(width - 1):
            bits = bits << 1 | (row[x] > row[x + 1])
    return f"{bits:016x}"


def same_picture(one: str | None, other: str | None) -> bool:
    """Whether two perceptual hashes (:func:`dhash`) are of the same picture: at most
    :data:`PHASH_DISTANCE` bits apart. False when either is missing or no hash."""
    if not (isinstance(one, str) and isinstance(other, str) and len(one) == len(other) == 16):
        return False
    try:
        return bin(int(one, 16) ^ int(other, 16)).count("1") <= PHASH_DISTANCE
    except ValueError:
        return False


def decode_images(read: dataset.ReadSet) -> list:
    """Each distinct image of the checked set ``read`` decoded fully once, in a sandbox worker: the
    problems (each with the first line and field naming the image). Each image that decodes gets its
    perceptual hash (:func:`dhash`, ``phash``), and each item naming it that hash as ``image_phash``."""
    from structext_core.evaluation.matching import Problem
    from structext_core.studio import sandbox
    problems, hashes = [], {}
    for key, found in read.images.found.items():
        if isinstance(found, str):
            continue
        data = found.data if found.data is not None else reread(read, found)
        result = sandbox.run("labset_image_check", data)
        if isinstance(result, sandbox.Unchecked) or not result.get("ok"):
            why = result.detail if isinstance(result, sandbox.Unchecked) else result["problem"]
            line, where = read.images.first[key]
            problems.append(Problem(line, f"{where}: image {key!r} does not decode as one plain image ({why})"))
            continue
        found.phash = result.get("phash")
        hashes[found.path] = found.phash
    for item in read.items:
        if item.get("image") in hashes:
            item["image_phash"] = hashes[item["image"]]
    return problems


def reread(read: dataset.ReadSet, found: dataset.Image) -> bytes:
    """An image not kept in memory, read again: only the bytes checked (the same sha256) are used."""
    try:
        data = dataset.read_inside(read.images.folder, Path(found.path), dataset.LIMITS["image_bytes"])
    except (OSError, ValueError) as error:
        raise ImageChanged(f"image {found.path!r} changed while it was read ({error}); nothing written") from None
    if hashlib.sha256(data).hexdigest() != found.sha256:
        raise ImageChanged(f"image {found.path!r} changed while it was read; nothing written")
    return data


class ImageChanged(Exception):
    """An image's file changed between its check and a second read."""


def plain_png(data: bytes, served: bool = True) -> dict:
    """``{"ok": True, "png": bytes}``, the image's pixels as a plain PNG, or ``{"ok": False,
    "problem": why}``; with ``served`` false, ``{"ok": True, "phash": its perceptual hash}``
    (:func:`dhash`) instead. Runs in a sandbox worker (``SANDBOXED["labset_image"]``)."""
    from PIL import Image, UnidentifiedImageError  # imported in the worker, where this runs

    if len(data) > dataset.LIMITS["image_bytes"]:
        return {"ok": False, "problem": f"{len(data):,} bytes, more than {dataset.LIMITS['image_bytes']:,}"}
    Image.MAX_IMAGE_PIXELS = dataset.LIMITS["image_pixels"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data), formats=["PNG", "JPEG"])
            if getattr(image, "n_frames", 1) != 1:
                return {"ok": False, "problem": "more than one frame"}
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            return {"ok": False, "problem": "more pixels than are read (a decompression bomb)"}
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as error:
            return {"ok": False, "problem": f"not a PNG or JPEG that decodes ({error})"}
    if not served:
        return {"ok": True, "phash": dhash(image)}
    pixels = image.convert("RGB")
    if pixels.width > MAX_SERVED_WIDTH:
        pixels = pixels.resize((MAX_SERVED_WIDTH, max(1, round(pixels.height * MAX_SERVED_WIDTH / pixels.width))),
                               Image.LANCZOS)
    clean = Image.frombytes("RGB", pixels.size, pixels.tobytes())  # pixels only: no name, text or profile
    out = io.BytesIO()
    clean.save(out, "PNG", compress_level=6)
    return {"ok": True, "png": out.getvalue()}


_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_PASSES = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _png_honest(data: bytes) -> str | None:
    """Why a PNG's header lies about its size (its pixel data is not exactly what IHDR's width, height,
    depth and colour type make), or None. Pillow reads a truncated or longer data stream in silence."""
    import struct
    import zlib
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    bits = depth * _CHANNELS.get(colour, 1)

    def rows(w: int, h: int) -> int:
        return 0 if w == 0 or h == 0 else h * (1 + (w * bits + 7) // 8)
    expected = (sum(rows((width - x + dx - 1) // dx, (height - y + dy - 1) // dy) for x, y, dx, dy in _PASSES)
                if interlace else rows(width, height))
    at, stream = 8, zlib.decompressobj()
    got, frames = 0, 0
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I", data[at:at + 4])[0], data[at + 4:at + 8]
        if kind == b"IDAT":
            got += len(stream.decompress(data[at + 8:at + 8 + length], expected + 1 - got))
            if got > expected:
                return "its pixel data is longer than its header says"
        elif kind in (b"acTL", b"fcTL", b"fdAT"):
            frames += 1
        at += 12 + length
    if frames:
        return "more than one frame (an animated PNG)"
    if got != expected or not stream.eof:
        return f"its pixel data is shorter than its header's {width}x{height} (truncated?)"
    return None


def decode_check(data: bytes) -> dict:
    """``{"ok": True, "phash": its perceptual hash (:func:`dhash`)}`` when the image decodes fully as
    one frame of the size its header gives, else ``{"ok": False, "problem": why}``. Runs in a sandbox
    worker (``SANDBOXED["labset_image_check"]``) at a set's check and import and at a study's
    setup, once for each distinct image."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 33:
        try:
            why = _png_honest(data)
        except Exception as error:  # a corrupt stream in any way: said, not raised
            why = f"its data does not decompress ({type(error).__name__})"
        if why:
            return {"ok": False, "problem": why}
    return plain_png(data, served=False)


def _drawn_bytes(suite: str, item: dict) -> bytes | None:
    """The bytes of the item's image file when it is still, checked, the file the study was drawn with."""
    relative, expected = item.get("image"), (item.get("kept") or {}).get("image_sha256")
    folder = (sets_dir() / suite).parent
    found = dataset.read_image(folder, relative)
    if found is None or expected is None or found[1] != expected:
        return None
    return found[2] if hashlib.sha256(found[2]).hexdigest() == expected else None


def data_uri(suite: str, item: dict) -> str | None:
    """The item's image as a ``data:`` URI for an Inspect log (the lab's own file, as drawn), or None
    when it is no longer the file the study was drawn with."""
    data = _drawn_bytes(suite, item) if suite else None
    if data is None:
        return None
    kind = "png" if data.startswith(b"\x89PNG") else "jpeg"
    return f"data:image/{kind};base64," + base64.b64encode(data).decode("ascii")


def study_image(db, suite: str, strata: dict, nonce: bytes = b"", *, item: dict) -> bytes:
    """The blinded PNG of the study item ``item`` (stored with its ``image`` path and, in ``kept``,
    the sha256 it was drawn with) of a study of the set ``suite`` (see the module notes)."""
    from structext_core.studio import sandbox
    relative, expected = item.get("image"), (item.get("kept") or {}).get("image_sha256")
    folder = (sets_dir() / suite).parent
    found = dataset.read_image(folder, relative)
    if found is None:
        raise StudyError("its file is no longer a readable image inside the set's folder; tell the study lead.")
    data = found[2]
    if expected is None or found[1] != expected or hashlib.sha256(data).hexdigest() != expected:
        raise StudyError("its file changed since the study was drawn, so it is not shown; tell the study lead.")
    result = sandbox.run("labset_image", data)
    if isinstance(result, sandbox.Unchecked) or not result.get("ok"):
        why = result.detail if isinstance(result, sandbox.Unchecked) else result["problem"]
        raise StudyError(f"its file does not decode as an image ({why}); tell the study lead.")
    return result["png"]
