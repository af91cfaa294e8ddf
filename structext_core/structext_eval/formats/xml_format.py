"""XML in the original style: children first, then one line of text, one space of indent per depth."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from structext_core.structext_eval.formats import (
    Document,
    Preview,
    Problem,
    ReadError,
    dedent_excerpt,
    line_column,
    tokens_in,
)
from structext_core.structext_eval.formats.sizes import NodeSize
from structext_core.structext_eval.names import VOCABULARY
from structext_core.structext_eval.tree import Node, build_tree
from structext_core.text import limits

LANGUAGE = "xml"
MAX_DEPTH = None
SIZE = NodeSize(per_node=26, per_field=13)
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
ERROR_RATE = 0.2  # each end tag is dropped with this probability


def element_text(node: Node) -> str:
    return VOCABULARY[node.index % len(VOCABULARY)]


def _render(node: Node, lines: list[str], depth: int, drop: "random.Random | None") -> None:
    ind = " " * depth
    attrs = "".join([f' {k}="{v}"' for k, v in zip(node.keys, node.values)])
    lines.append(f"{ind}<{node.tag}{attrs}>")
    for child in node.children:
        _render(child, lines, depth + 1, drop)
    lines.append(f"{ind} {element_text(node)}")
    if drop is not None and drop.random() < ERROR_RATE:
        return
    lines.append(f"{ind}</{node.tag}>")


def render(root: Node, *, drop: "random.Random | None" = None) -> str:
    lines = [DECLARATION]
    _render(root, lines, 0, drop)
    return "\n".join(lines)


def render_content(node: Node) -> str:
    """What lies between the element's tags, as if the element stood at the top."""
    lines: list[str] = []
    for child in node.children:
        _render(child, lines, 1, None)
    lines.append(" " + element_text(node))
    return "\n".join(lines).strip()


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False,
             rows: int | None = None) -> Document:
    root = build_tree(rng, depth, width, col)
    return Document(render(root, drop=rng if inject_errors else None), root)


def _parser() -> etree.XMLParser:
    # No entity expansion, no DTD loading, no network: a reference is data, never instructions.
    # No huge_tree either: libxml2 keeps its own limits on depth, text nodes and amplification.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def parse(text: str) -> etree._Element:
    """The element tree of ``text`` within the limits (entity declarations refused);
    ReadError saying where when it is not well-formed."""
    limits.check_reference(LANGUAGE, text)
    try:
        return etree.fromstring(text.encode("utf-8"), _parser())
    except etree.XMLSyntaxError as exc:
        raise ReadError(f"not well-formed XML: {exc}") from None


def parses(text: str) -> bool:
    """What the real parser says: is ``text`` well-formed XML? (Text beyond a limit of
    :mod:`structext_core.text.limits` raises :class:`~structext_core.text.limits.ParseLimitError`.)"""
    try:
        parse(text)
    except ReadError as exc:
        if isinstance(exc, limits.ParseLimitError):
            raise
        return False
    return True


@dataclass
class Element:
    tag: str
    start: int  # where the start tag begins
    content_start: int
    content_end: int


def elements(text: str) -> list[Element]:
    """Elements in document order with their positions (the text must be well-formed).

    Tags inside comments, CDATA sections and processing instructions are not elements."""
    parse(text)
    out: list[Element] = []
    stack: list[Element] = []
    for m in limits.XML_TOKEN.finditer(text):
        tag = m.group("name")
        if tag is None:
            continue
        if m.group("close"):
            if stack:
                stack.pop().content_end = m.start()
        elif m.group("empty"):
            out.append(Element(tag, m.start(), m.end(), m.end()))
        else:
            el = Element(tag, m.start(), m.end(), -1)
            out.append(el)
            stack.append(el)
    return out


def content_of(text: str, tag: str) -> str:
    """What lies between the first ``tag`` element's tags, its indent taken off."""
    for el in elements(text):
        if el.tag == tag:
            inner = text[el.content_start:el.content_end]
            return dedent_excerpt(inner, line_column(text, el.start)).strip()
    raise ReadError(f"no element <{tag}> in the document")


def tag_with_attribute_value(text: str, value: str) -> str:
    """Name of the first element that has an attribute equal to ``value``."""
    for el in parse(text).iter():
        if isinstance(el.tag, str) and value in el.attrib.values():
            return el.tag
    raise ReadError(f"no element has an attribute of value {value!r}")


def as_data(reference: str) -> Any:
    """An element tree as nested dicts: tag, attributes, text, children."""
    def convert(el) -> dict:
        node: dict[str, Any] = {"tag": el.tag}
        if el.attrib:
            node["attributes"] = dict(el.attrib)
        own = [(el.text or "").strip()] + [(c.tail or "").strip() for c in el]
        own_text = " ".join(t for t in own if t)
        if own_text:
            node["text"] = own_text
        if len(el):
            node["children"] = [convert(c) for c in el if isinstance(c.tag, str)]
        return node

    return convert(parse(reference))


def preview(reference: str) -> Preview:
    return Preview("json", as_data(reference), "XML shown as its element tree")


RESERVED_WORDS = frozenset({"xml", "version", "1.0", "encoding", "UTF-8"})
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_TAG = re.compile(r"</?([A-Za-z_][\w.\-]*)")
_ATTRIBUTE = re.compile(r'([A-Za-z_][\w.\-]*)\s*=\s*"([^"]*)"')


def rewrite_tokens(reference: str) -> list[tuple[str, str]]:
    """Tag names (``tag``), attribute names (``attribute``) and values (``value``), and the text
    between elements (``word``); the declaration line is syntax."""
    out: list[tuple[str, str]] = []
    for line in reference.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if stripped.startswith("<?"):
            continue
        if not stripped.startswith("<"):
            out.extend((t, "word") for t in tokens_in(line))
            continue
        for tag in _TAG.finditer(line):
            out.extend((t, "tag") for t in tokens_in(tag.group(1)))
        for attr in _ATTRIBUTE.finditer(line):
            out.extend((t, "attribute") for t in tokens_in(attr.group(1)))
            out.extend((t, "value") for t in tokens_in(attr.group(2)))
    return out


def value_problem(new: str, kinds: set[str]) -> str | None:
    if set(new) & set('<>&"'):
        return "< > & and \" are markup characters in XML"
    if set(kinds) & {"tag", "attribute"} and (not NAME_RE.match(new) or new.lower().startswith("xml")):
        return ("XML tag and attribute names are one word of letters, digits, _ - . starting with a letter "
                "(and not starting with 'xml'): write Runner, not 'Runner 1'")
    return None


_MASKED_ATTRIBUTE = re.compile(r'(?<![\w.\-])[A-Za-z_][\w.\-]*+\s*+=\s*+"[^"]*+"')
_TAG_NAME = re.compile(r"<(/?)[A-Za-z_][\w.\-]*")
_INDENT = re.compile(r"^\s*")


def line_signature(line: str) -> str:
    """A line's shape with the data masked, for a document that does not parse."""
    if not line.strip().startswith("<"):
        return _INDENT.match(line).group() + "…"
    return _TAG_NAME.sub(r"<\1T", _MASKED_ATTRIBUTE.sub('A="…"', line))


def parse_error(text: str) -> str | None:
    """What the reader says about ``text`` (None: it reads); ``text`` is within the limits."""
    try:
        parse(text)
    except ValueError as exc:
        return str(exc)
    return None


# ---- the skeleton, for the rewrite check ----------------------------------------------

@dataclass(frozen=True)
class ElementShape:
    """One element in document order: where, how many attributes and children, any text."""

    path: str
    line: int
    tag: str
    attributes: int
    children: int
    has_text: bool


def skeleton(text: str) -> list[ElementShape]:
    """Every element of the document in document order (libxml2 bounds the nesting)."""
    root = parse(text)
    found: list[ElementShape] = []
    stack: list[tuple[etree._Element, str]] = [(root, f"/{root.tag}")]
    while stack:
        el, path = stack.pop()
        kids = [c for c in el if isinstance(c.tag, str)]
        has_text = bool((el.text or "").strip()) or any((c.tail or "").strip() for c in el)
        found.append(ElementShape(path, el.sourceline or 0, el.tag, len(el.attrib), len(kids), has_text))
        stack.extend(reversed([(child, f"{path}/{child.tag}[{i}]") for i, child in enumerate(kids, 1)]))
    return found


def compare_structure(original: str, rewrite: str) -> list[Problem]:
    """The declaration, then the first element whose attributes, children or text differ,
    then a different number of elements."""
    problems = _compare_elements(skeleton(original), skeleton(rewrite))
    if original.startswith("<?xml") and not rewrite.startswith("<?xml"):
        problems.insert(0, Problem("structure", "line 1", "the XML declaration is missing"))
    return problems


def _compare_elements(original: list[ElementShape], rewrite: list[ElementShape]) -> list[Problem]:
    for o, r in zip(original, rewrite):
        where = f"element {r.path} (line {r.line} of the rewrite, <{o.tag}> on line {o.line} of the original)"
        if o.attributes != r.attributes:
            what = "an attribute is missing" if r.attributes < o.attributes else "an attribute was added"
            return [Problem("structure", where, f"{what}: {o.attributes} attribute(s) in the original, "
                                                f"{r.attributes} in the rewrite")]
        if o.children != r.children:
            return [Problem("structure", where, f"{o.children} child element(s) in the original, "
                                                f"{r.children} in the rewrite")]
        if o.has_text != r.has_text:
            state = "has no text line" if o.has_text else "has a text line the original does not have"
            return [Problem("structure", where, f"the element {state}")]
    if len(original) != len(rewrite):
        return [Problem("structure", "document", f"{len(original)} elements in the original, {len(rewrite)} in the "
                                                 "rewrite: the nesting differs")]
    return []
