"""JSON in the original style: one member a line, one space of indent per depth."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

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

LANGUAGE = "json"
MAX_DEPTH = None
SIZE = NodeSize(per_node=52, per_field=25)
ERROR_RATE = 0.2  # each closing brace is dropped with this probability


def _render(node: Node, lines: list[str], depth: int, drop: "random.Random | None", last: bool) -> None:
    ind = " " * depth
    lines.append(ind + "{")
    lines.append(f'{ind}"id":"{node.name}",')
    lines.extend([f'{ind}"{k}":"{v}",' for k, v in zip(node.keys, node.values)])
    if node.children:
        lines.append(ind + '"subs":[')
        for i, child in enumerate(node.children):
            _render(child, lines, depth + 1, drop, i == len(node.children) - 1)
        lines.append(ind + "]")
    else:
        lines.append(ind + '"subs":[]')
    if drop is not None and drop.random() < ERROR_RATE:
        return
    lines.append(ind + ("}" if last else "},"))


def render(root: Node, *, depth: int = 0, drop: "random.Random | None" = None) -> str:
    """Render ``root`` as if it stood at ``depth``; ``drop`` injects missing braces."""
    lines: list[str] = []
    _render(root, lines, depth, drop, True)
    return "\n".join(lines)


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False,
             rows: int | None = None) -> Document:
    root = build_tree(rng, depth, width, col)
    return Document(render(root, drop=rng if inject_errors else None), root)


def parses(text: str) -> bool:
    """What the real parser says: does ``text`` load as JSON? (Text beyond a limit of
    :mod:`structext_core.text.limits` raises :class:`~structext_core.text.limits.ParseLimitError`.)"""
    try:
        load(text)
    except ReadError as exc:
        if isinstance(exc, limits.ParseLimitError):
            raise
        return False
    return True


def load(text: str, **kwargs) -> Any:
    """``json.loads`` within the limits; ReadError (a ParseLimitError for a limit) when it
    does not read. ``kwargs`` go to ``json.loads``."""
    limits.check_reference(LANGUAGE, text)
    try:
        return json.loads(text, **kwargs)
    except json.JSONDecodeError as exc:
        raise ReadError(f"not valid JSON: {exc}") from None
    except ValueError as exc:  # a number of more than 4,300 digits
        raise ReadError(f"not readable as JSON: {exc}") from None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')


@dataclass
class Span:
    """An object of the document: where it stands, how deep, what it holds."""

    start: int
    end: int
    nesting: int
    value: dict[str, Any]


def objects(text: str) -> list[Span]:
    """Every object of a valid JSON document, in document order."""
    load(text)
    decoder = json.JSONDecoder()
    spans: list[Span] = []
    depth = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok == "{":
            value, end = decoder.raw_decode(text, m.start())
            spans.append(Span(m.start(), end, depth, value))
            depth += 1
        elif tok == "}":
            depth -= 1
    return spans


def excerpt(text: str, span: Span) -> str:
    """The object's lines as they appear in the file, its own indent taken off."""
    return dedent_excerpt(text[span.start:span.end], line_column(text, span.start))


def find_value_path(obj: Any, value: str, prefix: str = "obj") -> str | None:
    """``obj["subs"][0]["K"]`` for the first field (depth-first) holding ``value``."""
    if isinstance(obj, dict):
        for key, item in obj.items():
            if isinstance(item, (dict, list)):
                continue
            if _scalar(item) == value and key != "id":
                return f'{prefix}["{key}"]'
        for key, item in obj.items():
            if isinstance(item, (dict, list)):
                found = find_value_path(item, value, f'{prefix}["{key}"]')
                if found:
                    return found
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            found = find_value_path(item, value, f"{prefix}[{i}]")
            if found:
                return found
    return None


def _scalar(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item)


def preview(reference: str) -> Preview:
    return Preview("json", load(reference))


RESERVED_WORDS = frozenset({"id", "subs", "obj"})
_STRING_OR_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?')


def rewrite_tokens(reference: str) -> list[tuple[str, str]]:
    """Keys' tokens (role ``key``), then each value's (``id`` after an ``"id"`` key, else ``value``)."""
    out: list[tuple[str, str]] = []
    previous_key = None
    for m in _STRING_OR_KEY.finditer(reference):
        text, is_key = m.group(1), bool(m.group(2))
        if is_key:
            previous_key = text
            out.extend((t, "key") for t in tokens_in(text))
        else:
            role = "id" if previous_key == "id" else "value"
            out.extend((t, role) for t in tokens_in(text))
            previous_key = None
    return out


def value_problem(new: str, kinds: set[str]) -> str | None:
    return "a double quote or a backslash would end the JSON string" if ('"' in new or "\\" in new) else None


_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?')


def line_signature(line: str) -> str:
    """A line's shape with the data masked, for a document that does not parse."""
    return _STRING.sub(lambda m: m.group() if m.group() in ('"id"', '"subs"') else '"…"', line)


def parse_error(text: str) -> str | None:
    """What the reader says about ``text`` (None: it reads); ``text`` is within the limits."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except ValueError as exc:  # a number of more than 4,300 digits
        return str(exc)
    return None


# ---- the skeleton, for the rewrite check ----------------------------------------------

class _Pairs(list):
    """A JSON object as its list of (key, value) pairs: duplicate keys survive."""


def _type_name(value: object) -> str:
    if isinstance(value, _Pairs):
        return "object"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "true/false"
    if value is None:
        return "null"
    return "number"


def skeleton(text: str) -> list[shapes.ObjectShape]:
    """Every object of the document in pre-order, with the line of its opening brace."""
    root = load(text, object_pairs_hook=_Pairs)
    brace_lines = [text.count("\n", 0, m.start()) + 1 for m in _TOKEN.finditer(text) if m.group() == "{"]
    found: list[shapes.ObjectShape] = []
    stack: list[tuple[object, str]] = [(root, "obj")]
    while stack:  # pre-order without recursion: the nesting comes from the text
        obj, path = stack.pop()
        if isinstance(obj, _Pairs):
            line = brace_lines[len(found)] if len(found) < len(brace_lines) else 0
            roles = tuple(f"{shapes.role(k)}:{_type_name(v)}" for k, v in obj)
            subs = [v for k, v in obj if k == "subs"]
            children = len(subs[0]) if subs and isinstance(subs[0], list) else 0
            found.append(shapes.ObjectShape(path, line, roles, children, tuple(k for k, _ in obj)))
            stack.extend(reversed([(v, f'{path}["{k}"]') for k, v in obj]))
        elif isinstance(obj, list):
            stack.extend(reversed([(item, f"{path}[{i}]") for i, item in enumerate(obj)]))
    return found


def compare_structure(original: str, rewrite: str) -> list[Problem]:
    """Where the rewrite's objects differ from the original's (:func:`shapes.compare`)."""
    return shapes.compare(skeleton(original), skeleton(rewrite), "object")
