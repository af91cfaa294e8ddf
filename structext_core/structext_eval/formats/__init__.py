"""One module per format: everything that depends on the format lives in its module.

The formats are registered in one table, :data:`REGISTRY` (language -> module, display name,
syntax highlighting); :func:`get_module` returns a format's module. Adding a format is one
module that offers the whole interface below, one row in :data:`REGISTRY`, and its tests
(``tests/structext_eval/test_formats.py`` checks every registered format offers every name of
:data:`INTERFACE`).

What every format module offers:

- ``LANGUAGE``: its name (the key of its row in :data:`REGISTRY`).
- Generating: ``generate(rng, depth, width, col, *, inject_errors=False, rows=None) -> Document``
  (``rows``: formats made of rows take that many instead of ``depth``; the others ignore it);
  ``MAX_DEPTH`` (the deepest tree it can write, None for any); ``SIZE`` (a
  :class:`~structext_core.structext_eval.formats.sizes.NodeSize` or ``RowSize``: how long a sample
  grows, for the suites' size limits). The readers its tasks' solvers use are its own.
- Explore: ``preview(reference) -> Preview`` (how the reference is shown rendered; the caller
  has checked the text against the limits, and a ``ValueError`` says it does not parse).
- Real-Test rewriting, where its data is and what a value may hold: ``RESERVED_WORDS`` (tokens
  of the syntax, never data), ``rewrite_tokens(reference)`` (every token of the data with its
  role, in document order) and ``value_problem(new, kinds)`` (why a replacement cannot stand
  where tokens of those roles stand in this format, or None).
- The rewrite check, how it reads and what its skeleton is: ``parse_error(text)`` (what its
  reader says, None when it reads; the text is within the limits), ``line_signature(line)``
  (a line's shape with the data masked, compared line by line for documents that do not
  parse) and ``compare_structure(original, rewrite) -> list[Problem]`` (where the rewrite's
  skeleton differs from the original's; both read; a ``ReadError`` when one cannot be read
  the way the comparison needs).

Shared by several formats, not formats themselves: ``markup`` (Markdown, LaTeX and Org, each
driven by its ``Syntax``), ``shapes`` (the object skeleton of JSON and YAML) and ``sizes``.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Format:
    """A format's row in the registry: its module (in this package), how the app names it,
    and its syntax highlighting for ``st.code`` (None: shown as plain text)."""

    module: str
    display_name: str
    highlight: str | None = None


#: The one table of formats, in the app's order.
REGISTRY: dict[str, Format] = {
    "tree": Format("tree_format", "Tree"),
    "csv": Format("csv_format", "CSV"),
    "json": Format("json_format", "JSON", "json"),
    "yaml": Format("yaml_format", "YAML", "yaml"),
    "xml": Format("xml_format", "XML", "xml"),
    "markdown": Format("markdown", "Markdown", "markdown"),
    "latex": Format("latex", "LaTeX", "latex"),
    "org": Format("org", "Org"),
}
LANGUAGES = list(REGISTRY)
#: How the app names each format.
DISPLAY_NAMES = {language: f.display_name for language, f in REGISTRY.items()}
#: Syntax highlighting for ``st.code``; the other formats are shown as plain text.
HIGHLIGHT = {language: f.highlight for language, f in REGISTRY.items() if f.highlight}
#: What every format module offers (see above).
INTERFACE = ("LANGUAGE", "generate", "MAX_DEPTH", "SIZE", "preview", "RESERVED_WORDS", "rewrite_tokens",
             "value_problem", "parse_error", "line_signature", "compare_structure")


#: A whole token: letters and digits, possibly joined by ``-`` or ``.`` (``X-ray``, ``vq.png``, ``1.5``).
TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*")
#: A number a rewrite may write where the answer computes with one: digits, maybe a decimal part.
NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?$")


def tokens_in(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


#: A tree reference with more edges than this is not drawn as a graph.
MAX_GRAPH_EDGES = 300


@dataclass
class Preview:
    """How to show a reference rendered: ``kind`` is markdown, json, tables, graph or none."""

    kind: str
    data: Any = None
    note: str = ""


# a reference that cannot be read the way its task needs (shared with the limits on untrusted text)
from structext_core.text.limits import ReadError  # noqa: E402, F401


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a rewrite or a mapping: which check, where, and what."""

    check: str  # "mapping", "parse", "structure", "answer"
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@dataclass
class Document:
    """A rendered reference together with what it was rendered from."""

    reference: str
    tree: Any = None
    extra: dict = field(default_factory=dict)


def dedent_excerpt(excerpt: str, column: int) -> str:
    """Remove up to ``column`` leading spaces from every line after the first.

    The original generator wrote excerpts as if the object stood at the top of
    the file; the object's own indentation is therefore taken off every line.
    """
    lines = excerpt.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        strip = 0
        while strip < column and strip < len(line) and line[strip] == " ":
            strip += 1
        out.append(line[strip:])
    return "\n".join(out)


def line_column(text: str, pos: int) -> int:
    """Column (0-based) of character ``pos`` in ``text``."""
    return pos - (text.rfind("\n", 0, pos) + 1)


def get_module(language: str):
    """The format module for ``language`` (imported on first use: the format modules import
    this package and :mod:`structext_core.text.limits`, which imports it too)."""
    try:
        entry = REGISTRY[language]
    except (KeyError, TypeError):
        raise ValueError(f"unknown format {language!r}; expected one of {', '.join(LANGUAGES)}") from None
    return importlib.import_module(f"{__name__}.{entry.module}")
