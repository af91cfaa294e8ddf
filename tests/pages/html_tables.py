"""The tables and figures a page draws as HTML (``safe_text.html_table`` and ``figures_html``, drawn with
``st.html`` or as a light element, ``structext_core/ui/light_html.py``), read back as a person reads them: the tests' one reader, so that a table moved from
``st.table`` to HTML is still checked cell by cell, and a figure moved from ``st.metric`` label by value."""

import html
import json
import re
from typing import NamedTuple

import pandas as pd

from structext_core.ui import clock, light_html
from tests.pages.light_parts import walk

_TABLE = re.compile(r'<div class="sx-table"><table>(.*?)</table></div>', re.S)
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r'<t[hd]( class="sx-n")?(?: style="background:rgba\([\d,]+,([\d.]+)\)")?(?: title="[^"]*")?>(.*?)</t[hd]>',
                   re.S)
_HEADING = re.compile(r'<th(?: class="sx-n")?(?: title="([^"]*)")?>(.*?)</th>', re.S)


def _nodes(node):
    yield from walk(node)


def html_blocks(at, where=None) -> list[str]:
    """The markup of each HTML block of the run ``at`` (or only of ``where``: ``at.sidebar``), in page order:
    ``st.html``'s and the light blocks' (``widgets.html_block`` draws one or the other)."""
    blocks = []
    for node in _nodes(at._tree if where is None else where):
        kind = getattr(node, "type", "")
        if kind == "html":
            blocks.append(node.value)
        elif kind == "bidi_component" and node.proto.component_name.endswith(light_html.COMPONENT_NAME):
            blocks.append(json.loads(node.proto.json)["html"])
    return blocks


def _number(text: str):
    if text == "":
        return None
    plain = text.replace(",", "")
    return int(plain) if plain.lstrip("-").isdigit() else float(plain)


def _cells(at):
    """Each HTML table of the run ``at``: its header and its rows, each cell (right-aligned, tint, text)."""
    for block in html_blocks(at):
        for body in _TABLE.findall(block):
            head, *rows = [_CELL.findall(row) for row in _ROW.findall(body)]
            yield head, rows


def html_tables(at, numbers: bool = True) -> list[pd.DataFrame]:
    """The run ``at``'s HTML tables, in order: text as shown, right-aligned columns as numbers (with
    ``numbers``; else every cell the text shown)."""
    tables = []
    for head, rows in _cells(at):
        frame = pd.DataFrame([[html.unescape(text) for _, _, text in row] for row in rows],
                             columns=[html.unescape(text) for _, _, text in head])
        for column, (numeric, _, _) in zip(frame.columns, head, strict=True):
            if numeric and numbers:
                frame[column] = [_number(v) for v in frame[column]]
        tables.append(frame)
    return tables


def html_table_help(at) -> list[dict[str, str]]:
    """The run ``at``'s HTML tables' column help (``column_help``): heading -> help, for headings that have one."""
    return [{html.unescape(text): html.unescape(title) for title, text in _HEADING.findall(body) if title}
            for block in html_blocks(at) for body in _TABLE.findall(block)]


def html_table_tints(at) -> list[pd.DataFrame]:
    """The run ``at``'s HTML tables' tints: each cell's opacity (a shaded table's heat), None where untinted."""
    return [pd.DataFrame([[float(tint) if tint else None for _, tint, _ in row] for row in rows],
                         columns=[html.unescape(text) for _, _, text in head]) for head, rows in _cells(at)]


_FIGURE = re.compile(r'<div class="sx-figure" data-testid="sxFigure"><div class="sx-figure-label"(?: title="([^"]*)")?>'
                     r"(.*?)</div><div class=\"sx-figure-value\">(.*?)</div></div>", re.S)


class Figure(NamedTuple):
    """A figure as a person reads it (what ``st.metric``'s element gave a test: label, value, help)."""
    label: str
    value: str
    help: str | None


def html_figures(at) -> list[Figure]:
    """The run ``at``'s figures (``widgets.figures``), in order."""
    return [Figure(html.unescape(label), html.unescape(value), html.unescape(definition) if definition else None)
            for block in html_blocks(at) for definition, label, value in _FIGURE.findall(block)]


_TAG = re.compile(r"<style>.*?</style>|<[^>]+>", re.S)


def html_text(at, where=None) -> str:
    """The text of the run ``at``'s HTML blocks (or only of ``where``'s) as a person reads it: tags dropped,
    entities read, blocks joined by a space (markup such as bold shows as its text)."""
    return " ".join(" ".join(html.unescape(_TAG.sub(" ", block)).split()) for block in html_blocks(at, where))


_PROGRESS = re.compile(r'<div data-testid="sxProgress"><div style="[^"]*">(.*?)</div><div role="progressbar"[^>]*'
                       r'aria-valuenow="(\d+)"', re.S)


def html_progress(at) -> list[tuple[str, int]]:
    """The run ``at``'s progress bars, in order: (text as shown, percent full): ``widgets.progress``'s HTML, and
    the bar the question page's clock shows beside it (``structext_core/ui/clock.py``)."""
    bars = []
    for node in _nodes(at._tree):
        kind = getattr(node, "type", "")
        if kind == "html" or (kind == "bidi_component" and node.proto.component_name.endswith(light_html.COMPONENT_NAME)):
            block = node.value if kind == "html" else json.loads(node.proto.json)["html"]
            bars += [(html.unescape(text), int(now)) for text, now in _PROGRESS.findall(block)]
        elif kind == "bidi_component" and node.proto.component_name.endswith(clock.COMPONENT_NAME):
            data = json.loads(node.proto.json)
            if data.get("show") and data.get("progress"):
                bars.append((data["progress"]["text"], round(data["progress"]["percent"])))
    return bars


def progress_text(at) -> str:
    """The text of the run ``at``'s first progress bar drawn as HTML (the question pages': "Question 2 of 4"), or ""."""
    bars = html_progress(at)
    return bars[0][0] if bars else ""
