"""Explore's rendered view of a reference: the limits first, then the format's ``preview``.

The check workers run :func:`preview` (``structext_core.structext_eval.sandboxed.preview``), since a
suite file may be hostile.
"""

from __future__ import annotations

# CSV previews are pandas tables: loaded with this module (the check workers import it when
# they start), not on someone's first click on a CSV sample.
import pandas  # noqa: F401

from structext_core.structext_eval import formats
from structext_core.structext_eval.formats import MAX_GRAPH_EDGES, Preview, ReadError
from structext_core.text import limits

__all__ = ["MAX_GRAPH_EDGES", "Preview", "preview"]


def preview(language: str, reference: str) -> Preview:
    """The rendered view of a reference (each format's ``preview``), or why there is none: text
    beyond a limit of :mod:`structext_core.text.limits` is not parsed (the note names the
    limit and where), and text that does not parse says what its reader found."""
    try:
        module = formats.get_module(language)
    except ValueError:
        return Preview("none", note=f"No rendered view for {language}.")
    try:
        limits.check_reference(language, reference)
    except limits.ParseLimitError as exc:
        return Preview("none", note=f"This reference is too large or too deeply nested to show rendered: {exc}")
    try:
        return module.preview(reference)
    except (ValueError, ReadError) as exc:
        return Preview("none", note=f"This reference does not parse as {language}: {exc}")
