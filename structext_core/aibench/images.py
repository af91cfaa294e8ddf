"""One untrusted image checked and re-encoded: run it in a worker process, never in the server's.

:func:`check_image` is allow-listed in :mod:`structext_core.studio.sandbox_worker` as
``aibench_image``; the import (:mod:`structext_core.aibench.sandboxed_import`) calls it there with
the file's bytes, under the sandbox's time and memory budget. It refuses, with a sentence
saying why: a file over :data:`~structext_core.aibench.limits.MAX_IMAGE_BYTES`; anything but one
PNG, JPEG or WebP frame; a format other than its file name says (a lying name); a header
declaring more than :data:`~structext_core.aibench.limits.MAX_IMAGE_PIXELS` pixels or a side
over :data:`~structext_core.aibench.limits.MAX_IMAGE_SIDE` (a decompression bomb: refused before
a pixel is decoded); data that does not decode to the size its header declares (truncated or
lying). What it returns is the pixels re-encoded as a plain PNG: no EXIF, no PNG text, no ICC
profile, nothing but pixels, so no metadata of the file is ever shown.
"""

from __future__ import annotations

import io
import warnings

from structext_core.aibench import limits

#: File name endings accepted, and the format each must hold.
SUFFIX_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP"}


def check_image(data: bytes, suffix: str) -> dict:
    """``{"ok": True, "width", "height", "format", "png"}`` (the re-encoded PNG bytes) when the
    image is sound; ``{"ok": False, "problem": why}`` otherwise. ``suffix``: the file name's ending."""
    from PIL import Image, UnidentifiedImageError  # imported in the worker, where this runs

    expected = SUFFIX_FORMATS.get(suffix.lower())
    if expected is None:
        return _refuse(f"{suffix or 'no ending'!r} is not an image ending ({', '.join(SUFFIX_FORMATS)})")
    if len(data) > limits.MAX_IMAGE_BYTES:
        return _refuse(f"{len(data):,} bytes; an image has at most {limits.MAX_IMAGE_BYTES:,}")
    Image.MAX_IMAGE_PIXELS = limits.MAX_IMAGE_PIXELS
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data), formats=sorted(set(SUFFIX_FORMATS.values())))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            return _refuse(f"declares more than {limits.MAX_IMAGE_PIXELS:,} pixels (a decompression bomb)")
        except UnidentifiedImageError:
            return _refuse("not a PNG, JPEG or WebP image")
        except (OSError, ValueError, SyntaxError) as error:
            return _refuse(f"its header cannot be read ({error})")
        width, height = image.size
        if image.format != expected:
            return _refuse(f"the name says {expected} but the file holds {image.format}")
        if width * height > limits.MAX_IMAGE_PIXELS or max(width, height) > limits.MAX_IMAGE_SIDE:
            return _refuse(f"declares {width:,} x {height:,} pixels; at most {limits.MAX_IMAGE_PIXELS:,} "
                           f"pixels and {limits.MAX_IMAGE_SIDE:,} a side (a decompression bomb)")
        if width < 1 or height < 1:
            return _refuse("declares no pixels")
        if getattr(image, "n_frames", 1) != 1:
            return _refuse("holds more than one frame (animations are not figures)")
        try:
            image.load()
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
            return _refuse(f"its data does not decode to the {width} x {height} pixels its header declares "
                           f"(truncated or damaged: {error})")
    pixels = image.convert("RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB")
    clean = Image.frombytes(pixels.mode, pixels.size, pixels.tobytes())  # pixels only, no info carried over
    out = io.BytesIO()
    clean.save(out, "PNG", optimize=False, compress_level=6)
    return {"ok": True, "width": width, "height": height, "format": image.format, "png": out.getvalue()}


def _refuse(problem: str) -> dict:
    return {"ok": False, "problem": problem}
