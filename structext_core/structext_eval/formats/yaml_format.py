"""YAML in the original style: ``id: "x"``, ``KEY: value``, ``subs:`` with ``- id:`` items.

The original appended a stray ``,`` to every value; we render clean values and
accept the comma when reading.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

import yaml

from structext_core.structext_eval.formats import (
    Document,
    Preview,
    Problem,
    ReadError,
    dedent_excerpt,
    line_column,
    shapes,
    tokens_in,
)
from structext_core.structext_eval.formats.sizes import NodeSize
from structext_core.structext_eval.tree import Node, build_tree
from structext_core.text import limits

LANGUAGE = "yaml"
MAX_DEPTH = None
SIZE = NodeSize(per_node=33, per_field=18)
ERROR_RATE = 0.2  # a stray ``:word`` line follows each node with this probability

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseLoader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def _render(node: Node, lines: list[str], indent: int, item: bool, errors: "random.Random | None") -> None:
    pad = " " * indent
    first = (pad + "- ") if item else pad
    inner = pad + "  " if item else pad
    lines.append(f'{first}id: "{node.name}"')
    lines.extend([f"{inner}{k}: {v}" for k, v in zip(node.keys, node.values)])
    if node.children:
        lines.append(inner + "subs: ")
        for child in node.children:
            _render(child, lines, len(inner), True, errors)
    else:
        lines.append(inner + "subs: []")
    if errors is not None and errors.random() < ERROR_RATE:
        lines.append(f"{inner}:{errors.choice('abcdefghijklmnopqrstuvwxyz')}")


def render(root: Node, *, errors: "random.Random | None" = None) -> str:
    """Render ``root`` as a top-level mapping; ``errors`` injects stray lines."""
    lines: list[str] = []
    _render(root, lines, 0, False, errors)
    return "\n".join(lines)


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False,
             rows: int | None = None) -> Document:
    root = build_tree(rng, depth, width, col)
    return Document(render(root, errors=rng if inject_errors else None), root)


def parses(text: str) -> bool:
    """What the real parser says: does PyYAML's safe loader accept ``text``? (Text beyond a
    limit of :mod:`structext_core.text.limits` raises :class:`~structext_core.text.limits.ParseLimitError`.)"""
    try:
        safe_load(text)
    except ReadError as exc:
        if isinstance(exc, limits.ParseLimitError):
            raise
        return False
    return True


def safe_load(text: str) -> Any:
    """PyYAML's safe loader within the limits; ReadError (a ParseLimitError for a limit)
    saying where when it does not read."""
    limits.check_reference(LANGUAGE, text)
    try:
        return yaml.load(text, Loader=_SafeLoader)
    except yaml.YAMLError as exc:
        raise ReadError(f"not valid YAML: {describe_error(exc)}") from None
    except ValueError as exc:  # a number of more than 4,300 digits
        raise ReadError(f"not readable as YAML: {exc}") from None


def compose(text: str) -> "yaml.Node | None":
    """The document's node graph (every scalar a string) within the limits; a ReadError for
    an alias inside the collection it names (``&a [*a]``), which no walk could finish."""
    limits.check_reference(LANGUAGE, text)
    try:
        node = yaml.compose(text, Loader=_BaseLoader)
    except yaml.YAMLError as exc:
        raise ReadError(f"not valid YAML: {describe_error(exc)}") from None
    _refuse_cycles(node)
    return node


def _refuse_cycles(root: "yaml.Node | None") -> None:
    """Depth-first with an explicit stack; a collection met again while still open is a cycle."""
    open_ids: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)] if root is not None else []
    while stack:
        node, leaving = stack.pop()
        if leaving:
            open_ids.discard(id(node))
            continue
        if not isinstance(node, yaml.CollectionNode):
            continue
        if id(node) in open_ids:
            raise ReadError(f"not valid YAML: line {node.start_mark.line + 1}, column {node.start_mark.column + 1}: "
                            "an alias stands inside the collection it names, so the document never ends")
        open_ids.add(id(node))
        stack.append((node, True))
        items = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
        stack.extend((item, False) for item in reversed(items))


def describe_error(exc: "yaml.YAMLError") -> str:
    """``line L, column C: problem`` for a YAML error."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    return f"{where}{getattr(exc, 'problem', None) or exc}"


def clean(value: str) -> str:
    """A scalar as meant: the original's trailing comma removed."""
    return value[:-1] if value.endswith(",") else value


@dataclass
class Span:
    start: int
    end: int
    nesting: int
    value: dict[str, Any]


def load(text: str) -> Any:
    """Load with every scalar kept as a string (``no`` stays ``"no"``)."""
    limits.check_reference(LANGUAGE, text)
    try:
        return _clean_tree(yaml.load(text, Loader=_BaseLoader))
    except yaml.YAMLError as exc:
        raise ReadError(f"not valid YAML: {describe_error(exc)}") from None


def _clean_tree(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {clean(k): _clean_tree(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean_tree(v) for v in obj]
    return clean(obj) if isinstance(obj, str) else obj


def objects(text: str) -> list[Span]:
    """Every mapping of the document, in document order, with its position."""
    node = compose(text)
    constructor = yaml.constructor.BaseConstructor()
    spans: list[Span] = []

    def visit(n: yaml.Node, nesting: int) -> None:
        if isinstance(n, yaml.MappingNode):
            value = _clean_tree(constructor.construct_document(n))
            spans.append(Span(n.start_mark.index, n.end_mark.index, nesting, value))
            for _, v in n.value:
                visit(v, nesting + 1)
        elif isinstance(n, yaml.SequenceNode):
            for v in n.value:
                visit(v, nesting)

    if node is not None:
        visit(node, 0)
    return spans


def excerpt(text: str, span: Span) -> str:
    """The mapping's lines as in the file, the item dash and its indent taken off."""
    body = text[span.start:span.end].rstrip()
    return dedent_excerpt(body, line_column(text, span.start))


def preview(reference: str) -> Preview:
    return Preview("json", load(reference), "YAML shown as its parsed data")


RESERVED_WORDS = frozenset({"id", "subs", "obj"})
_KEY_VALUE = re.compile(r"^\s*(?:-\s+)?([^:\s][^:]*?):(?:\s+(.*))?$")
_BAD_START = tuple("-?:,[]{}#&*!|>'\"%@`")


def rewrite_tokens(reference: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in reference.replace("\r\n", "\n").split("\n"):
        m = _KEY_VALUE.match(line)
        if not m:
            continue
        key, value = m.group(1), (m.group(2) or "").strip()
        role = "id" if key == "id" else "value"
        out.extend((t, "key") for t in tokens_in(key))
        if value not in ("", "[]"):
            out.extend((t, role) for t in tokens_in(value))
    return out


def value_problem(new: str, kinds: set[str]) -> str | None:
    if ": " in new or " #" in new or new.endswith(":") or new.startswith(_BAD_START) or '"' in new:
        return "YAML would read this differently: avoid ': ', ' #', quotes and a leading - ? : [ { # & * ! | > %"
    return None


_STRAY = re.compile(r"^(\s*):\S")
_LINE = re.compile(r"^(\s*)(-\s+)?(?:([^:\s][^:]*?))?:(?:\s+(.*))?$")


def line_signature(line: str) -> str:
    """A line's shape with the data masked, for a document that does not parse."""
    stray = _STRAY.match(line)
    if stray:  # the original's injected error line, ':word'
        return f"{stray.group(1)}:…"
    m = _LINE.match(line)
    if not m:
        return line
    indent, dash, key, value = m.group(1), m.group(2) or "", m.group(3), (m.group(4) or "").strip()
    key_sig = key if key in ("id", "subs") else ("K" if key else "")
    value_sig = value if value in ("", "[]") else "V"
    return f"{indent}{'- ' if dash else ''}{key_sig}:{value_sig}" if key else f"{indent}:…"


def parse_error(text: str) -> str | None:
    """What the reader says about ``text`` (None: it reads); ``text`` is within the limits."""
    try:
        safe_load(text)
    except ValueError as exc:
        return str(exc).removeprefix("not valid YAML: ")
    return None


# ---- the skeleton, for the rewrite check ----------------------------------------------

def _kind(node: yaml.Node) -> str:
    return {"MappingNode": "object", "SequenceNode": "list"}.get(type(node).__name__, "text")


def skeleton(text: str) -> list[shapes.ObjectShape]:
    """Every mapping of the document in pre-order, with its first line."""
    found: list[shapes.ObjectShape] = []
    stack: list[tuple[yaml.Node | None, str]] = [(compose(text), "obj")]
    while stack:  # pre-order without recursion: the nesting comes from the text
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            keys = tuple(clean(str(k.value)) for k, _ in node.value)
            roles = tuple(f"{shapes.role(k)}:{_kind(v)}" for k, (_, v) in zip(keys, node.value))
            subs = [v for k, (_, v) in zip(keys, node.value) if k == "subs"]
            children = len(subs[0].value) if subs and isinstance(subs[0], yaml.SequenceNode) else 0
            found.append(shapes.ObjectShape(path, node.start_mark.line + 1, roles, children, keys))
            stack.extend(reversed([(v, f'{path}["{k}"]') for k, (_, v) in zip(keys, node.value)]))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed([(item, f"{path}[{i}]") for i, item in enumerate(node.value)]))
    return found


def compare_structure(original: str, rewrite: str) -> list[Problem]:
    """Where the rewrite's mappings differ from the original's (:func:`shapes.compare`)."""
    return shapes.compare(skeleton(original), skeleton(rewrite), "mapping")
