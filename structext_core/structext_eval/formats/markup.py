"""What Markdown, LaTeX and Org share: a tree of headings, each followed by a paragraph.

The first line holds the root's name, then the root's paragraph; every other node
is a heading line followed by one paragraph of vocabulary words, in which a bold
run and an included image may be inserted.

Each markup module describes its language in one :class:`Syntax`; everything else of the
format interface is written here once, driven by that syntax (the modules bind it with
``functools.partial``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable

from structext_core.structext_eval.formats import TOKEN_RE, Document, Preview, Problem, ReadError, tokens_in
from structext_core.structext_eval.formats.sizes import NodeSize
from structext_core.structext_eval.names import IMAGE_EXTENSIONS, VOCABULARY, node_name
from structext_core.structext_eval.tree import Node, build_tree, capped_node_count, fan_out
from structext_core.text import limits

BOLD_RATE = 0.5
IMAGE_RATE = 0.5
LEVEL_NAMES = ["section", "subsection", "subsubsection"]
#: Characters per node grow with the heading syntax; per field with the shared paragraph words.
PER_FIELD_CHARS = 13


def size(per_node: int) -> NodeSize:
    return NodeSize(per_node=per_node, per_field=PER_FIELD_CHARS)


@dataclass(frozen=True)
class Syntax:
    """How one markup language writes headings, bold runs and images."""

    language: str
    label: str  # as named in questions: "markdown", "LaTeX", "org"
    heading: Callable[[int, str], str]
    heading_re: re.Pattern  # groups: marker, title
    level_of: Callable[[str], int]
    bold: Callable[[str], str]
    bold_re: re.Pattern
    image: Callable[[str], str]
    image_re: re.Pattern
    image_noun: str = "image"


@dataclass(slots=True)
class Paragraph:
    text: str
    bolds: list[str]
    images: list[str]


def make_paragraph(rng: random.Random, syntax: Syntax, rest: str, first: str, image_counter: list[int]) -> Paragraph:
    """``first`` and the shared ``rest`` of the words, with a bold run and an image maybe inserted."""
    text = first + rest
    rand = rng.random
    n_vocab = len(VOCABULARY)
    places = len(text) + 1
    bolds: list[str] = []
    images: list[str] = []
    bold_at = -1
    if rand() < BOLD_RATE:
        words = VOCABULARY[int(rand() * n_vocab)]
        if rand() < 0.2:
            words += " " + VOCABULARY[int(rand() * n_vocab)]
        bold_at = int(rand() * places)
        bolds.append(words)
    if rand() < IMAGE_RATE:
        name = f"{node_name(image_counter[0])}.{IMAGE_EXTENSIONS[int(rand() * len(IMAGE_EXTENSIONS))]}"
        image_counter[0] += 1
        image_at = int(rand() * places)
        images.append(name)
        # The later place first, so that the earlier one is not moved; at one place the image
        # goes in first and the bold run before it.
        if image_at >= bold_at:
            text = text[:image_at] + syntax.image(name) + text[image_at:]
            image_at = -1
    if bold_at >= 0:
        text = text[:bold_at] + syntax.bold(bolds[0]) + text[bold_at:]
    if images and image_at >= 0:
        text = text[:image_at] + syntax.image(images[0]) + text[image_at:]
    return Paragraph(text, bolds, images)


def generate(syntax: Syntax, rng: random.Random, depth: int, width: int, col: int, *,
             inject_errors: bool = False, rows: int | None = None) -> Document:
    root = build_tree(rng, depth, width, col, with_fields=False)
    base = [rng.choice(VOCABULARY) for _ in range(max(1, depth * col))]
    rest = "".join(" " + w for w in base[1:])
    first_word = rng.randrange(len(VOCABULARY))
    image_counter = [rng.randrange(26 * 26)]
    lines: list[str] = []
    paragraphs: dict[int, Paragraph] = {}
    spans: dict[int, tuple[int, int]] = {}
    for node in root.walk():
        para = make_paragraph(rng, syntax, rest, VOCABULARY[(first_word + node.index) % len(VOCABULARY)], image_counter)
        paragraphs[node.index] = para
        spans[node.index] = (len(lines), 0)
        lines.append(node.name if node.parent is None else syntax.heading(node.level, node.name))
        lines.append(para.text)
    # A node's block runs from its heading to the end of its last descendant: its last child's
    # block's end, found first by going through the nodes from the last (pre-order: children last).
    for node in reversed(list(root.walk())):
        start = spans[node.index][0]
        spans[node.index] = (start, spans[node.children[-1].index][1] if node.children else start + 2)
    return Document("\n".join(lines), root, {"paragraphs": paragraphs, "spans": spans, "lines": lines})


def expected_section(doc: Document, node: Node) -> str:
    start, end = doc.extra["spans"][node.index]
    return "\n".join(doc.extra["lines"][start:end])


def expected_list(doc: Document, what: str) -> list[str]:
    """Bold texts or image names of the whole document, in document order."""
    items: list[str] = []
    for node in doc.tree.walk():
        items.extend(getattr(doc.extra["paragraphs"][node.index], what))
    return items


# ---- reading ---------------------------------------------------------------

@dataclass
class Heading:
    line: int
    level: int


def headings(syntax: Syntax, text: str, depth: int | None = None, width: int | None = None) -> tuple[list[str], list[Heading]]:
    """Lines of the document and its headings (the root line is not a heading)."""
    limits.check_reference(syntax.language, text)
    lines = text.replace("\r\n", "\n").split("\n")
    found = []
    for i, line in enumerate(lines):
        m = syntax.heading_re.match(line)
        if m and i > 0:
            found.append(Heading(i, syntax.level_of(m.group(1))))
    if depth and width and depth > 1 and found:
        found = _levels_from_shape(found, depth, width)
    return lines, found


def _levels_from_shape(found: list[Heading], depth: int, width: int) -> list[Heading]:
    """Recover the levels of a document written by the original LaTeX renderer.

    The original wrote level L as ``'sub' * (L - 2) + 'section'``: levels 1 and 2
    both as ``\\section``, level 3 as ``\\subsection``. Its trees are complete, so
    when the headings match a complete tree of the sample's depth and width with
    every level shifted that way, the pre-order position of a heading tells its level.
    """
    if depth > len(LEVEL_NAMES) + 2 or capped_node_count(depth, width, len(found) + 1) != len(found) + 1:
        return found  # (depth and width come from a file: never build a huge tree's shape)
    levels = _shape_levels(depth, width)
    if all(h.level == max(level - 1, 1) for h, level in zip(found, levels)):
        return [Heading(h.line, level) for h, level in zip(found, levels)]
    return found


def _shape_levels(depth: int, width: int) -> list[int]:
    """Levels of the non-root nodes of a complete tree, in pre-order."""
    k = fan_out(depth, width)
    levels: list[int] = []

    def visit(level: int) -> None:
        if level > 0:
            levels.append(level)
        if level < depth:
            for _ in range(k):
                visit(level + 1)

    visit(0)
    return levels


def section_content(syntax: Syntax, text: str, positions: list[int], depth: int | None = None,
                    width: int | None = None) -> str:
    """The ``positions`` (1-based: section, subsection, ...) block, heading line included."""
    lines, found = headings(syntax, text, depth, width)
    lo, hi, level = 0, len(found), 0
    chosen: Heading | None = None
    for want in positions:
        level += 1
        nth = 0
        chosen_index = None
        i = lo
        while i < hi:
            h = found[i]
            if h.level < level:
                break
            if h.level == level:
                nth += 1
                if nth == want:
                    chosen_index = i
                    break
            i += 1
        if chosen_index is None:
            raise ReadError(f"the document has no {describe_positions(positions[:level])}")
        chosen = found[chosen_index]
        lo = chosen_index + 1
        hi = lo
        while hi < len(found) and found[hi].level > level:
            hi += 1
    assert chosen is not None
    end_line = found[hi].line if hi < len(found) else len(lines)
    return "\n".join(lines[chosen.line:end_line]).strip()


def extract(pattern: re.Pattern, text: str, syntax: Syntax | None = None, language: str | None = None) -> list[str]:
    """Every match of ``pattern`` outside heading lines, in document order."""
    limits.check_reference(language or (syntax.language if syntax else "markup"), text)
    out: list[str] = []
    for i, line in enumerate(text.replace("\r\n", "\n").split("\n")):
        if syntax is not None and i > 0 and syntax.heading_re.match(line):
            continue
        out.extend(m.group(1) for m in pattern.finditer(line))
    return out


def parse_positions(question: str) -> list[int]:
    """``2nd subsection under 1st section`` (or the original ``2th``) -> ``[1, 2]``."""
    found = re.findall(r"(\d+)\s*(?:st|nd|rd|th)\s+(subsubsection|subsection|section)\b", question)
    if not found:
        raise ReadError("the question names no section")
    by_level = {LEVEL_NAMES.index(kind): int(n) for n, kind in found}
    if sorted(by_level) != list(range(len(by_level))):
        raise ReadError("the question skips a section level")
    return [by_level[i] for i in range(len(by_level))]


def describe_positions(positions: list[int]) -> str:
    from structext_core.structext_eval.names import ordinal
    parts = [f"{ordinal(p)} {LEVEL_NAMES[i]}" for i, p in enumerate(positions)]
    return " under ".join(reversed(parts))


def _image_chip(name: str) -> str:
    return f" :material/image: `{name}` "


def as_markdown(syntax: Syntax, reference: str) -> str:
    """The document shown as Markdown: the first line as a bold title, headings as Markdown
    headings of their level, bold runs, and image names as chips (the files do not exist, so
    they are named rather than drawn)."""
    out: list[str] = []
    for i, line in enumerate(reference.split("\n")):
        m = syntax.heading_re.match(line) if i > 0 else None
        if m:
            out.append("#" * min(syntax.level_of(m.group(1)), 6) + " " + m.group(2))
            continue
        line = syntax.image_re.sub(lambda m: _image_chip(m.group(1)), line)
        out.append(syntax.bold_re.sub(r"**\1**", line))
    if out:
        out = [f"**{out[0]}**", ""] + out[1:]
    return "\n\n".join(out)


def preview(syntax: Syntax, reference: str) -> Preview:
    return Preview("markdown", as_markdown(syntax, reference))


#: Characters that are markup in Markdown, LaTeX and Org: never inside a rewritten value.
FORBIDDEN_IN_VALUES = "*\\{}[]`"


def _taken_out(text: str, pattern: re.Pattern) -> str:
    """``text`` without the runs of ``pattern``: a run inside a word (a letter or digit on both
    sides, as the generator puts a bold run or an image into a word) joins the word's two pieces;
    any other run becomes a space."""
    def gap(m: re.Match) -> str:
        inside = (m.start() > 0 and m.end() < len(text) and text[m.start() - 1].isalnum()
                  and text[m.end()].isascii() and text[m.end()].isalnum())
        return "" if inside else " "
    return pattern.sub(gap, text)


def rewrite_tokens(syntax: Syntax, reference: str) -> list[tuple[str, str]]:
    """The title line and headings (``heading``), image names (``file``), bold runs (``bold``)
    and the other words (``word``). A word an image or a bold run cuts (``jar\\textbf{x}gon``) is
    one word, ``jargon``, never its fragments (:func:`substitute` renames it whole)."""
    out: list[tuple[str, str]] = []
    for i, line in enumerate(reference.replace("\r\n", "\n").split("\n")):
        heading = syntax.heading_re.match(line) if i > 0 else None
        if i == 0 or heading:
            out.extend((t, "heading") for t in tokens_in(line if i == 0 else heading.group(2)))
            continue
        for m in syntax.image_re.finditer(line):
            out.extend((t, "file") for t in tokens_in(m.group(1)))
        rest = syntax.image_re.sub(" ", line)
        for m in syntax.bold_re.finditer(rest):
            out.extend((t, "bold") for t in tokens_in(m.group(1)))
        out.extend((t, "word") for t in tokens_in(_taken_out(_taken_out(line, syntax.image_re), syntax.bold_re)))
    return out


def substitute(syntax: Syntax, text: str, mapping: dict[str, str]) -> str:
    """``text`` with the tokens ``mapping`` names replaced, in one pass (never chained), a word
    cut by an image or a bold run counted as one word: its new text stands before the run, which
    keeps its place in the line (its own tokens replaced too)."""
    if not mapping:
        return text
    cut = re.compile(rf"(?P<left>[A-Za-z0-9]++)(?P<mark>{syntax.image_re.pattern}|{syntax.bold_re.pattern})"
                     rf"(?P<right>[A-Za-z0-9]++)|{TOKEN_RE.pattern}")

    def tokens(part: str) -> str:
        return TOKEN_RE.sub(lambda m: mapping.get(m.group(), m.group()), part)

    def one(m: re.Match) -> str:
        if m.group("left") is None:
            return mapping.get(m.group(), m.group())
        word, mark = m.group("left") + m.group("right"), tokens(m.group("mark"))
        if word in mapping:
            return mapping[word] + mark
        return tokens(m.group("left")) + mark + tokens(m.group("right"))

    return cut.sub(one, text)


def value_problem(new: str, kinds: set[str]) -> str | None:
    if set(new) & set(FORBIDDEN_IN_VALUES):
        return f"the characters {FORBIDDEN_IN_VALUES} are markup in this format"
    return None


def parse_error(text: str) -> str | None:
    """Markup always reads; only an empty document is refused."""
    return None if text.strip() else "the document is empty"


def line_signature(line: str) -> str:
    """A line's shape with the data masked (this format's lines are compared as they are)."""
    return line


# ---- the skeleton, for the rewrite check ----------------------------------------------

@dataclass(frozen=True)
class Block:
    """A heading (or the root line) and the lines beneath it up to the next heading."""

    line: int
    level: int
    title: str
    lines: int
    bolds: int
    images: int


def blocks(syntax: Syntax, text: str) -> list[Block]:
    """The heading hierarchy of a document, block by block (the title line first, level 0)."""
    lines, heads = headings(syntax, text)
    starts = [(0, 0)] + [(h.line, h.level) for h in heads]
    out = []
    for i, (start, level) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        body = [ln for ln in lines[start + 1:end] if ln.strip()]
        m = syntax.heading_re.match(lines[start]) if start > 0 else None
        title = m.group(2) if m else lines[start]
        bolds = sum(len(syntax.bold_re.findall(syntax.image_re.sub(" ", ln))) for ln in body)
        images = sum(len(syntax.image_re.findall(ln)) for ln in body)
        out.append(Block(start + 1, level, title.strip(), len(body), bolds, images))
    return out


_LEVEL_LABELS = {0: "the title line", 1: "section", 2: "subsection", 3: "subsubsection"}


def compare_structure(syntax: Syntax, original: str, rewrite: str) -> list[Problem]:
    """The title line, then the first block whose level, lines, bold runs or images differ,
    then a different number of headings."""
    o_blocks, r_blocks = blocks(syntax, original), blocks(syntax, rewrite)
    if not r_blocks[0].title:
        return [Problem("structure", "line 1", "the first line holds the document's title; it is empty")]
    for n, (o, r) in enumerate(zip(o_blocks, r_blocks)):
        difference = _block_difference(o, r)
        if difference:
            label = "the title line" if n == 0 else f"heading {n} {r.title!r}"
            where = f"{label} (line {r.line} of the rewrite, line {o.line} of the original)"
            return [Problem("structure", where, difference)]
    if len(o_blocks) != len(r_blocks):
        if len(r_blocks) > len(o_blocks):
            extra = r_blocks[len(o_blocks)]
            detail = f"the first extra heading is {extra.title!r} on line {extra.line}"
        else:
            detail = f"the original's heading {o_blocks[len(r_blocks)].title!r} has no counterpart"
        return [Problem("structure", "document", f"{len(o_blocks) - 1} headings in the original, "
                                                 f"{len(r_blocks) - 1} in the rewrite: {detail}")]
    return []


def _block_difference(o: Block, r: Block) -> str | None:
    if o.level != r.level:
        return (f"level {r.level} ({_LEVEL_LABELS.get(r.level, r.level)}) in the rewrite, "
                f"level {o.level} ({_LEVEL_LABELS.get(o.level, o.level)}) in the original")
    if o.lines != r.lines:
        return f"{o.lines} paragraph line(s) beneath it in the original, {r.lines} in the rewrite"
    if o.bolds != r.bolds:
        return f"{o.bolds} bold run(s) in its paragraph in the original, {r.bolds} in the rewrite"
    if o.images != r.images:
        return f"{o.images} image(s) in its paragraph in the original, {r.images} in the rewrite"
    return None
