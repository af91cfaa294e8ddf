"""Text from people or files, made safe for where it is shown or written.

- **CSV** (:func:`csv_cell`, :func:`csv_rows`, :func:`frame_csv`): every CSV download of the app goes
  through here. A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
  formula (and a leading tab or carriage return hides such a start), so a text cell that starts
  with one of them is written with a leading apostrophe (OWASP's advice), which spreadsheets
  show as text. Numbers stay numbers, and so does a text that is a plain number (``-2``,
  ``+1.5e3``): no formula can hide in one. The JSONL exports keep every text exactly.
- **Markdown** (:func:`markdown_text`): a text a page renders as Markdown never makes the
  browser fetch anything. Images (inline ``![alt](url)``, reference-style, HTML ``<img>``) and
  every other construct that could load something are shown as visible text, an image as
  ``[image: alt -> url]``; links and autolinks are shown as text with their target (nothing is
  fetched until clicked, and nothing is clickable but a bare URL). Emphasis and other
  formatting stay.
- **Preformatted HTML** (:func:`preformatted_html`): a text shown as it is, in a monospace frame,
  every character escaped (no tag, entity or script of the text reaches the page as markup).

Pure functions, bounded work (one pass over the text); no Streamlit.
"""

from __future__ import annotations

import csv
import html
import io
import re
import string
from collections.abc import Collection, Iterable, Mapping, Sequence

import pandas as pd

#: The first characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: What Markdown may read as markup; each is escaped in a table's cell (CommonMark escapes any of them).
_PUNCTUATION = frozenset(string.punctuation)
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value):
    """``value`` as a CSV cell: a text starting with one of :data:`FORMULA_STARTS` gets a
    leading apostrophe, unless it is a plain number; anything else is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_rows(rows: Iterable[dict], columns: Sequence[str]) -> str:
    """Rows (dicts) as CSV text with a header of ``columns`` (keys not listed are left out),
    every cell and header through :func:`csv_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([csv_cell(str(c)) for c in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(c)) if row.get(c) is not None else "" for c in columns])
    return buffer.getvalue()


def frame_csv(frame: pd.DataFrame) -> str:
    """A table as CSV text with a header and no index, every text cell and column name
    through :func:`csv_cell` (numbers, booleans and missing values as pandas writes them)."""
    safe = frame.copy()
    for name in safe.columns:
        column = safe[name]
        if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)
                or pd.api.types.is_datetime64_any_dtype(column)):
            safe[name] = column.astype(object).map(csv_cell)
    safe.columns = [csv_cell(str(c)) for c in safe.columns]
    buffer = io.StringIO()
    # Lines end in CR LF (as csv.writer's, RFC 4180): then a cell holding a lone CR is quoted too,
    # and cannot start a row of its own.
    safe.to_csv(buffer, index=False, lineterminator="\r\n")
    return buffer.getvalue()


# ---------------------------------------------------------------- Markdown

#: Characters that open a construct able to load or link something: ``[`` (links, images,
#: reference definitions, directives) and ``<`` (HTML, autolinks). Escaped where not escaped.
_OPENERS = "[<"


def _escapes(text: str) -> list[bool]:
    """For each character, whether it is backslash-escaped (an odd run of backslashes before it)."""
    escaped, run = [False] * (len(text) + 1), 0
    for at, char in enumerate(text):
        escaped[at] = run % 2 == 1
        run = run + 1 if char == "\\" else 0
    escaped[len(text)] = run % 2 == 1
    return escaped


def _literal(text: str, escaped: list[bool], start: int, end: int) -> str:
    """``text[start:end]`` with every unescaped ``[`` and ``<`` escaped."""
    out = []
    for at in range(start, end):
        char = text[at]
        if char in _OPENERS and not escaped[at]:
            out.append("\\")
        out.append(char)
    return "".join(out)


def _matches(text: str, escaped: list[bool], opener: str, closer: str) -> dict[int, int]:
    """Index of each unescaped ``opener`` -> index of the ``closer`` that closes it (nesting
    counted, a blank line ends every open one): one pass."""
    found, stack = {}, []
    for at, char in enumerate(text):
        if char == "\n" and text[at + 1:at + 2] == "\n":
            stack.clear()
        elif escaped[at]:
            continue
        elif char == opener:
            stack.append(at)
        elif char == closer and stack:
            found[stack.pop()] = at
    return found


def markdown_text(text: str) -> str:
    """``text`` (from a person or a file) ready for Markdown: nothing in it makes the browser
    fetch anything (see the module notes). An inline image becomes ``[image: alt -> url]``;
    everything else that could load or link shows as the text it is (every ``[`` and ``<``
    escaped). Linear in the length of the text."""
    if not text:
        return text or ""
    escaped = _escapes(text)
    brackets = _matches(text, escaped, "[", "]")
    parens = _matches(text, escaped, "(", ")")
    out, plain, at = [], 0, text.find("![")
    while at >= 0:
        close = brackets.get(at + 1, -1)
        end = parens.get(close + 1, -1) if close > 0 and not escaped[at] else -1
        if at < plain or end < 0:
            at = text.find("![", at + 1)
            continue
        destination = text[close + 2:end].strip()
        if destination.startswith("<") and ">" in destination:
            url = destination[1:destination.index(">")]
        else:
            url = destination.split(maxsplit=1)[0] if destination else ""
        out.append(_literal(text, escaped, plain, at))
        shown = f"[image: {text[at + 2:close]} -> {url}"
        marks = _escapes(shown)
        out.append(_literal(shown, marks, 0, len(shown)) + ("\\" if marks[-1] else "") + "]")
        plain = end + 1
        at = text.find("![", plain)
    out.append(_literal(text, escaped, plain, len(text)))
    if escaped[len(text)]:
        out.append("\\")  # a trailing lone backslash escapes nothing of what follows
    return "".join(out)


def markdown_literal(text: str) -> str:
    """``text`` shown exactly as it is in Markdown: each ASCII punctuation mark escaped (no emphasis, link,
    image, HTML or formula)."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in text)


def _cell_text(value, escape) -> str:
    """A table cell as shown: empty for a missing value, yes or no, a number with thousands separators,
    else the text on one line (white space runs as one space) passed through ``escape``."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,}"
    return escape(" ".join(str(value).split()))


def _of_numbers(frame: pd.DataFrame, column) -> bool:
    """Whether the column holds numbers (shown aligned right); yes/no columns do not."""
    return pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])


def markdown_table(frame: pd.DataFrame) -> str:
    """``frame`` as a Markdown table (a small static table costs the browser nothing more than the
    Markdown it already draws, where ``st.table``/``st.dataframe`` load an element of their own):
    numbers with thousands separators and numeric columns aligned right, every text cell shown
    exactly as it is (each ASCII punctuation mark escaped: no emphasis, link, image, HTML or formula;
    white space runs as one space, on one line), an empty cell for a missing value."""
    def cell(value) -> str:
        return _cell_text(value, markdown_literal)

    columns = list(frame.columns)
    lines = ["| " + " | ".join(cell(str(c)) for c in columns) + " |",
             "|" + "|".join("---:" if _of_numbers(frame, c) else "---" for c in columns) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v.item() if hasattr(v, "item") else v) for v in row) + " |")
    return "\n".join(lines)


#: The style of :func:`html_table`: Streamlit's table look (a hairline under each row, the header in
#: bold), one line a row, the frame scrolling sideways when the table is wider than the page.
_TABLE_STYLE = ("<style>.sx-table{overflow-x:auto;margin:0 0 1rem 0}.sx-table table{border-collapse:collapse;"
                "font-size:0.875rem}.sx-table th,.sx-table td{padding:0.3rem 0.75rem;white-space:nowrap;"
                "text-align:left;border-bottom:1px solid rgba(128,132,149,0.25)}.sx-table th{font-weight:600}"
                ".sx-table .sx-n{text-align:right;font-variant-numeric:tabular-nums}"
                ".sx-table th[title]{text-decoration:underline dotted;text-underline-offset:0.2em;cursor:help}</style>")


#: A shaded cell's tint (Streamlit's blue; light and dark themes alike): its opacity grows with the shade,
#: from a faint tint for the lowest value to one under which dark and light text both stay legible.
_SHADE_RGB, _SHADE_LOW, _SHADE_HIGH = "28,131,225", 0.06, 0.5


#: A number as a table prints it (``82.65``, ``-0.3``, ``1,024``): what :func:`printed_number_columns` looks for.
_PRINTED_NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?%?")
#: A cell a printed table leaves without a number: empty, or a dash.
_NO_NUMBER = {"", "-", "–", "—"}


def printed_number_columns(frame: pd.DataFrame) -> list:
    """The columns of ``frame`` (a table as printed: every value text) that hold numbers: each cell a number
    or empty or a dash, at least one a number. :func:`html_table` aligns them right (``right``)."""
    def numbers(column) -> bool:
        texts = [str(v).strip() for v in frame[column]]
        return any(t not in _NO_NUMBER for t in texts) and all(
            t in _NO_NUMBER or _PRINTED_NUMBER.fullmatch(t) for t in texts)
    return [c for c in frame.columns if numbers(c)]


def html_table(frame: pd.DataFrame, shade: pd.DataFrame | None = None, right: Collection = (),
               column_help: Mapping | None = None) -> str:
    """``frame`` as an HTML table (for ``st.html``, on a page that draws HTML already: no file of its own
    for the browser to load, where ``st.table`` loads Arrow's reader and formatting files): each row on
    one line, the table scrolling sideways when wider than the page; numbers with thousands separators
    and aligned right, every text cell escaped (shown exactly as it is), an empty cell for a missing value.
    ``shade`` (the same rows, some of the columns, each value from 0 to 1 or missing): those cells tinted
    by their value and aligned right, a heatmap that is still the table (its text selectable, copied as
    it reads). ``right``: more columns aligned right (numbers printed as text: :func:`printed_number_columns`).
    ``column_help``: a column's explanation, shown when the pointer rests on its heading (underlined dotted)."""
    def cell(value) -> str:
        return _cell_text(value, html.escape)

    def tint(row: int, column) -> str:
        value = shade.iat[row, shade.columns.get_loc(column)] if shade is not None and column in shade else None
        if value is None or value != value:
            return ""
        alpha = _SHADE_LOW + (_SHADE_HIGH - _SHADE_LOW) * min(max(float(value), 0.0), 1.0)
        return f' style="background:rgba({_SHADE_RGB},{alpha:.3f})"'

    def td(row: int, column, number: bool, value) -> str:
        attributes = (' class="sx-n"' if number else "") + tint(row, column)
        return f"<td{attributes}>{cell(value.item() if hasattr(value, 'item') else value)}</td>"

    columns = list(frame.columns)
    numeric = [_of_numbers(frame, c) or (shade is not None and c in shade) or c in right for c in columns]

    def th(column, number: bool) -> str:
        title = (column_help or {}).get(column)
        attributes = (' class="sx-n"' if number else "") + (f' title="{html.escape(title, quote=True)}"' if title else "")
        return f"<th{attributes}>{cell(str(column))}</th>"

    head = "".join(th(c, n) for c, n in zip(columns, numeric, strict=True))
    rows = "".join("<tr>" + "".join(td(i, c, n, v) for c, n, v in zip(columns, numeric, row, strict=True)) + "</tr>"
                   for i, row in enumerate(frame.itertuples(index=False)))
    return f'{_TABLE_STYLE}<div class="sx-table"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


#: The frame of :func:`preformatted_html`, in the block's own style attribute (no style sheet repeated
#: in each of a page's blocks): Streamlit's code font, a code block's tint (light and dark themes alike).
_PRE_STYLE = ('font-family:"Source Code Pro",monospace;font-size:0.875rem;line-height:1.6;margin:0 0 1rem 0;'
              "padding:0.75rem 1rem;border-radius:0.5rem;background:rgba(151,166,195,0.15);overflow:auto;")
#: A numbered block's lines: each line's number in a margin that a selection of the text skips (a CSS
#: counter), a line that wraps keeping one number; one style sheet for the block.
_LINES_STYLE = """<style>
.sx-lines{counter-reset:sxl}.sx-lines .sx-l{display:block;position:relative;padding-left:3.25em;min-height:1.6em}
.sx-lines .sx-l::before{counter-increment:sxl;content:counter(sxl);position:absolute;left:0;width:2.4em;
text-align:right;opacity:0.5;user-select:none}
</style>"""


def preformatted_html(text: str, *, line_numbers: bool = False, wrap: bool = True,
                      max_height: int | None = None) -> str:
    """``text`` (from a person or a file) as HTML that shows it exactly, in a monospace frame: every
    ``<``, ``>`` and ``&`` escaped, white space kept, long lines wrapped (``wrap``) or scrolled, the
    frame scrolling beyond ``max_height`` pixels; with ``line_numbers`` each line numbered in a margin
    (a line that wraps keeps one number; lines end at each line feed, as in ``st.code``, so the numbers
    are those the annotators read). What ``st.code`` shows without its syntax colours, for a
    page that cannot wait for the browser to load Streamlit's 1.5 MB code highlighter (issue 46).
    Linear in the length of the text."""
    style = _PRE_STYLE + ("white-space:pre-wrap;overflow-wrap:anywhere;" if wrap else "white-space:pre;")
    if max_height:
        style += f"max-height:{int(max_height)}px;"
    if not line_numbers:
        return f'<pre data-testid="sxPreformatted" style=\'{style}\'>{html.escape(text, quote=False)}</pre>'
    # Escaped once as a whole (escaping touches no line feed or carriage return), then cut into lines:
    # a call per line cost a long reference's page about a millisecond of the server's time (issue 46).
    lines = html.escape(text, quote=False).split("\n")
    if "\r" in text:
        lines = [line.removesuffix("\r") for line in lines]
    body = '<span class="sx-l">' + '</span><span class="sx-l">'.join(lines) + "</span>"
    return f'{_LINES_STYLE}<pre class="sx-lines" data-testid="sxPreformatted" style=\'{style}\'>{body}</pre>'


#: A row of figures drawn as st.metric draws them (a label, a large value under it), in one HTML block of
#: the page's own grid: st.metric makes the browser load a file of its own and costs it about 13 ms a figure
#: (15 figures: +0.2 s to a page, 0.04 s as one block; benchmarks/bench_pages.py's floors, issue 46). A label
#: with a definition is underlined with dots and shows it on hover; the values line up in columns.
_FIGURES_STYLE = (
    "<style>.sx-figures{display:grid;gap:0.5rem 1rem;margin:0 0 1rem 0}"
    ".sx-figure{min-width:0}.sx-figure-label{font-size:0.875rem;line-height:1.6;overflow-wrap:anywhere}"
    ".sx-figure-label[title]{text-decoration:underline dotted;text-underline-offset:0.2em;cursor:help}"
    ".sx-figure-value{font-size:2.25rem;line-height:1.3;font-variant-numeric:tabular-nums;"
    "overflow-wrap:anywhere}"
    "@media (max-width:640px){.sx-figures{grid-template-columns:repeat(2,minmax(0,1fr))!important}}</style>")


#: A progress bar drawn as st.progress draws it (its text above, a thin rounded bar in the app's red), in
#: an HTML block: st.progress makes the browser load a file of its own (a Home of three studies opened
#: 0.13 s sooner with these and its benchmarks drawn when opened; benchmarks/bench_pages.py, issue 46).
#: A frame as ``st.container(border=True)`` draws one (a hairline that reads in light and dark themes): the CSS
#: of every framed card the views build (an answer, a study, a benchmark).
FRAME_CSS = "border:1px solid rgba(128,132,149,0.3);border-radius:0.5rem"
#: A link in an HTML block as Streamlit draws a Markdown link in the app's theme (light, .streamlit/config.toml;
#: read in Chromium): an ``<a>`` of ``st.html`` is otherwise the browser's own blue.
LINK_CSS = "color:#244fb4;text-decoration:underline"

#: A progress bar's look (its text, track and fill), as ``st.progress`` draws one: :func:`progress_html`'s inline
#: styles, and the rules of the bar the question's clock draws beside it (``ui/clock.py``).
PROGRESS_STYLE = ("font-size:0.875rem;line-height:1.6;margin:0 0 0.25rem 0;overflow-wrap:anywhere",
                   "height:0.5rem;border-radius:0.25rem;background:rgba(151,166,195,0.25);overflow:hidden",
                   "height:100%;border-radius:0.25rem;background:rgb(197,57,72)")


def progress_share(fraction: float) -> float:
    """``fraction`` held to 0..1 (0 for NaN): how full a progress bar is drawn."""
    return min(max(float(fraction), 0.0), 1.0) if fraction == fraction else 0.0


def progress_html(text: str, fraction: float) -> str:
    """A progress bar ``fraction`` full (held to 0..1) under ``text`` (escaped: shown as it is), for
    ``st.html``: what ``st.progress(fraction, text=text)`` shows, read by a screen reader as a progress
    bar with its text and percentage."""
    share = progress_share(fraction)
    label = html.escape(text)
    text_style, track_style, bar_style = PROGRESS_STYLE
    return (f'<div data-testid="sxProgress"><div style="{text_style}">{label}</div>'
            f'<div role="progressbar" aria-label="{label}" aria-valuemin="0" aria-valuemax="100" '
            f'aria-valuenow="{share * 100:.0f}" style="{track_style}"><div style="width:{share * 100:.1f}%;'
            f'{bar_style}"></div></div></div>')


def figures_html(figures: Iterable[tuple], columns: int | None = None) -> str:
    """``figures`` (each ``(label, value)`` or ``(label, value, definition)``; a definition of None is
    none) as one row of figures in ``columns`` equal columns (default: one a figure; more figures wrap onto
    further rows), every text escaped: what a row of ``st.metric`` in ``st.columns`` shows, for ``st.html``.
    Each figure carries ``data-testid="sxFigure"`` and its label and value as the page shows them."""
    cells = []
    for label, value, *rest in figures:
        definition = rest[0] if rest else None
        title = f' title="{html.escape(str(definition))}"' if definition else ""
        cells.append(f'<div class="sx-figure" data-testid="sxFigure"><div class="sx-figure-label"{title}>'
                     f'{html.escape(str(label))}</div><div class="sx-figure-value">{html.escape(str(value))}</div></div>')
    width = max(1, columns or len(cells))
    return (f'{_FIGURES_STYLE}<div class="sx-figures" style="grid-template-columns:repeat({width},minmax(0,1fr))">'
            f'{"".join(cells)}</div>')


_BOX_STYLE = (f"<style>.sx-box{{{FRAME_CSS};padding:1rem;line-height:1.6}}"
              ".sx-box-title{font-weight:600;margin:0 0 0.75rem 0}.sx-box-help{display:inline-block;width:1rem;"
              "height:1rem;margin-left:0.375rem;border:1px solid currentColor;border-radius:50%;font-size:0.6875rem;"
              "line-height:0.875rem;text-align:center;opacity:0.6;cursor:help;vertical-align:0.1rem}</style>")


def box_html(title: str, rows: Iterable[tuple[str, str]], help: str = "") -> str:
    """A bordered box (as ``st.container(border=True)`` draws one) with a bold ``title`` and one line per row,
    ``label: value`` with the value in bold, and a help mark after the last line whose tooltip is ``help``.
    Every text escaped."""
    lines = [f"{html.escape(label)}: <strong>{html.escape(str(value))}</strong>" for label, value in rows]
    if help and lines:
        lines[-1] += (f'<span class="sx-box-help" role="img" title="{html.escape(help)}" '
                      f'aria-label="{html.escape(help)}">?</span>')
    return (f'{_BOX_STYLE}<div class="sx-box" data-testid="sxBox"><div class="sx-box-title">{html.escape(title)}</div>'
            f'{"<br>".join(lines)}</div>')
