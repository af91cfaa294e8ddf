"""The reference viewer's data, without Streamlit: lines, search, windows, taking lines X to Y
into the answer, the answer's size. The sample texts are real Test-Hard references."""

import time

import pytest

from structext_core.structext_eval import suites
from structext_core.views import reference
from structext_core.views.reference import Lines, ReferenceInputError


@pytest.fixture(scope="module")
def json_reference():
    return suites.generate_sample(8, 3, 3, suite="test-hard", index=0)["reference"]


# ---------------------------------------------------------------- lines


@pytest.mark.parametrize("text, lines", [
    ("", []),
    ("a", ["a"]),
    ("a\n", ["a"]),            # a final line break ends the last line, opens no new one
    ("a\n\n", ["a", ""]),
    ("\n", [""]),
    ("a\r\nb", ["a\r", "b"]),  # only "\n" ends a line; the "\r" is the line's own character
    ("a\u2028b\x0cc", ["a\u2028b\x0cc"]),  # unlike str.splitlines
])
def test_a_line_ends_at_a_newline_and_nowhere_else(text, lines):
    split = Lines.of(text)
    assert list(split.lines) == lines and len(split) == len(lines)
    assert [text[s:s + len(line)] for s, line in zip(split.starts, split.lines)] == lines


def test_numbered_lines_count_from_one_and_clamp(json_reference):
    split = Lines.of(json_reference)
    assert split.numbered(1, 2) == [(1, json_reference.split("\n")[0]), (2, json_reference.split("\n")[1])]
    assert split.numbered(len(split) - 1, len(split) + 50)[-1][0] == len(split)
    assert split.numbered(-3, 1) == [(1, split.lines[0])]


def test_locate_gives_line_and_column_from_one():
    split = Lines.of("ab\ncd\n\nef")
    assert split.locate(0) == (1, 1)
    assert split.locate(4) == (2, 2)
    assert split.locate(6) == (3, 1)
    assert split.locate(8) == (4, 2)


@pytest.mark.parametrize("value, message", [
    (None, "Type a line number in 'Go to line'."),
    ("", "Type a line number in 'Go to line'."),
    (0, "'Go to line' is 0: line numbers start at 1."),
    (-4, "'Go to line' is -4: line numbers start at 1."),
    (6, "'Go to line' is 6, past the end: the reference has 5 lines."),
    (2.5, "'Go to line' must be a whole line number, got 2.5."),
    (float("nan"), "'Go to line' must be a whole line number, got nan."),
    (True, "'Go to line' must be a whole line number, got True."),
    ("3", "'Go to line' must be a whole line number, got '3'."),
])
def test_a_bad_line_number_is_named_in_the_message(value, message):
    with pytest.raises(ReferenceInputError) as error:
        reference.check_line(value, Lines.of("1\n2\n3\n4\n5"), "Go to line")
    assert str(error.value) == message


def test_a_whole_float_is_a_line_number():
    assert reference.check_line(3.0, Lines.of("1\n2\n3")) == 3


# ---------------------------------------------------------------- search


def test_search_is_case_insensitive_by_default_and_can_match_case():
    split = Lines.of('{"Name": "Ada"}\n{"name": "NAME"}')
    found = reference.search(split, "name")
    assert found.total == 3 and found.summary == "3 matches"
    assert [(h.line, h.column) for h in found.hits] == [(1, 3), (2, 3), (2, 11)]
    exact = reference.search(split, "name", case_sensitive=True)
    assert exact.total == 1 and [(h.line, h.column) for h in exact.hits] == [(2, 3)]
    assert exact.summary == "1 match"
    assert reference.search(split, "zebra").summary == "No match"


@pytest.mark.parametrize("query", [".*", "(", "[a-z]+", "\\d", "a|b", "^", "$", "?", "{1}"])
def test_search_text_is_plain_text_never_a_pattern(query):
    text = f"x{query}y\nplain line\n{query}"
    found = reference.search(Lines.of(text), query)
    assert found.total == text.count(query) == 2
    assert [(h.line, h.column) for h in found.hits] == [(1, 2), (3, 1)]


def test_matches_do_not_overlap_like_str_count():
    found = reference.search(Lines.of("aaaa"), "aa")
    assert found.total == 2 and [h.column for h in found.hits] == [1, 3]


def test_hits_are_bounded_and_the_total_is_stated():
    split = Lines.of("\n".join(["key: value"] * 1_000))
    found = reference.search(split, "KEY", limit=50)
    assert found.total == 1_000 and len(found.hits) == 50 and found.truncated
    assert found.summary == "1,000 matches (the first 50 listed)"
    assert found.hits[-1].line == 50
    assert len(reference.search(split, "key").hits) == reference.MAX_HITS


def test_an_empty_search_finds_nothing_and_a_long_one_is_refused():
    assert reference.search(Lines.of("abc"), "").total == 0
    with pytest.raises(ReferenceInputError, match="201 characters; the limit is 200"):
        reference.search(Lines.of("abc"), "x" * 201)


def test_lowering_keeps_every_character_one_character_long():
    """Case-insensitive offsets are offsets in the reference only if lowering keeps lengths."""
    table = reference._SAME_LENGTH_LOWER
    changed = [c for c in range(0x110000) if len(chr(c).translate(table).lower()) != 1]
    assert changed == []


def test_case_insensitive_columns_stay_right_after_a_dotted_capital_i():
    split = Lines.of("İİİ name\nİ NAME")
    found = reference.search(split, "name")
    assert [(h.line, h.column) for h in found.hits] == [(1, 5), (2, 3)]
    assert all(h.excerpt[h.start:h.end].lower() == "name" for h in found.hits)


def test_a_hit_excerpt_shows_the_match_on_a_long_line():
    line = "x" * 5_000 + "needle" + "y" * 5_000
    hit = reference.search(Lines.of("first\n" + line), "NEEDLE").hits[0]
    assert (hit.line, hit.column, hit.length) == (2, 5_001, 6)
    assert hit.excerpt[hit.start:hit.end] == "needle"
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")
    assert len(hit.excerpt) <= reference.EXCERPT_CHARS + 2
    assert hit.label.startswith("Line 2, column 5,001: …")


def test_a_hit_at_the_start_of_a_line_shows_the_line_from_its_start(json_reference):
    first = json_reference.split("\n")[0]
    hit = reference.search(Lines.of(json_reference), first[:3], case_sensitive=True).hits[0]
    assert hit.line == 1 and hit.start == 0 and hit.excerpt.startswith(first[:3])


def test_a_match_over_a_line_break_is_cut_at_the_line_end():
    hit = reference.search(Lines.of("ab\ncd"), "b\nc").hits[0]
    assert (hit.line, hit.column, hit.length) == (1, 2, 1)
    assert hit.excerpt[hit.start:hit.end] == "b"


# ---------------------------------------------------------------- windows


def test_a_window_shows_the_lines_around_the_target_and_stops_at_the_ends():
    split = Lines.of("\n".join(f"line {n}" for n in range(1, 1001)))
    middle = reference.window(split, 50, before=3, after=5)
    assert (middle.first, middle.last, middle.target) == (47, 55, 50)
    assert [(r.number, r.text) for r in middle.rows] == [(n, f"line {n}") for n in range(47, 56)]
    assert middle.caption == "Lines 47–55, around line 50"
    default = reference.window(split, 50)
    assert (default.first, default.last) == (50 - reference.WINDOW_BEFORE, 50 + reference.WINDOW_AFTER)
    assert (reference.window(split, 2).first, reference.window(split, 999).last) == (1, 1000)
    assert len(reference.window(split, 500, before=10_000, after=10_000).rows) == 2 * reference.MAX_WINDOW_RADIUS + 1


def test_a_window_on_a_missing_line_is_refused_with_the_number():
    with pytest.raises(ReferenceInputError, match="'Go to line' is 101, past the end: the reference has 100 lines"):
        reference.window(Lines.of("\n".join("x" * 100)), 101)


def test_a_window_marks_the_hit_and_cuts_a_long_line_around_it():
    line = "a" * 3_000 + "TARGET" + "b" * 3_000
    split = Lines.of("short\n" + line + "\nshort")
    hit = reference.search(split, "target").hits[0]
    view = reference.window(split, hit.line, hit=hit)
    row = view.rows[1]
    assert row.number == 2 and len(row.text) == reference.MAX_ROW_CHARS
    assert row.text[row.mark[0]:row.mark[1]] == "TARGET"
    assert row.cut_before + len(row.text) + row.cut_after == len(line)
    assert view.rows[0].mark is None and view.rows[0].text == "short"


def test_window_data_is_plain_text_with_the_match_span():
    """No HTML is made from the reference: the page's component puts each text as text."""
    split = Lines.of("<script>alert(1)</script>\n<b>name</b> & more")
    hit = reference.search(split, "name").hits[0]
    shown = reference.window_data(reference.window(split, 2, hit=hit))
    assert shown["target"] == 2
    assert shown["rows"] == [[1, "<script>alert(1)</script>", None, 0, 0], [2, "<b>name</b> & more", [3, 7], 0, 0]]


# ---------------------------------------------------------------- taking lines


def test_take_returns_lines_x_to_y_verbatim(json_reference):
    split = Lines.of(json_reference)
    assert reference.take(split, 3, 5) == "\n".join(json_reference.split("\n")[2:5])
    assert reference.take(split, 1, len(split)) == json_reference.removesuffix("\n")
    assert reference.take(Lines.of("a\r\n  b\t\r\nc"), 1, 2) == "a\r\n  b\t\r"


@pytest.mark.parametrize("first, last, message", [
    (0, 3, "'From line' is 0: line numbers start at 1."),
    (2, 11, "'To line' is 11, past the end: the reference has 10 lines."),
    (12, 11, "'From line' is 12, past the end: the reference has 10 lines."),
    (5, 3, "'From line' (5) is after 'To line' (3): give the first line first."),
    (None, 3, "Type a line number in 'From line'."),
    (1, None, "Type a line number in 'To line'."),
])
def test_a_bad_range_is_refused_naming_the_bad_number(first, last, message):
    with pytest.raises(ReferenceInputError) as error:
        reference.take(Lines.of("\n".join("0123456789")), first, last)
    assert str(error.value) == message


def test_a_range_too_large_to_take_at_once_is_refused():
    split = Lines.of("\n".join(["x"] * 30))
    assert reference.take(split, 1, 10, max_lines=10).count("\n") == 9
    with pytest.raises(ReferenceInputError, match="Lines 1–11 are 11 lines; at most 10 are added at once"):
        reference.take(split, 1, 11, max_lines=10)


@pytest.mark.parametrize("answer, expected", [
    ("", "L3\nL4"),
    (None, "L3\nL4"),
    ("start", "start\nL3\nL4"),
    ("start\n", "start\nL3\nL4"),
    ("start\n\n", "start\n\nL3\nL4"),  # the answer's own blank line is kept, none is added
    ("  ", "  \nL3\nL4"),  # the answer's text is never changed
])
def test_append_puts_the_lines_on_a_new_line_without_a_blank_one(answer, expected):
    assert reference.append(answer, "L3\nL4") == expected


def test_append_refuses_an_answer_over_the_limit():
    assert reference.append("a" * 5, "b" * 4, max_chars=10) == "aaaaa\nbbbb"
    with pytest.raises(ReferenceInputError, match="would have 11 characters; the limit is 10"):
        reference.append("a" * 5, "b" * 5, max_chars=10)


# ---------------------------------------------------------------- the answer's size


@pytest.mark.parametrize("text, lines, chars, said", [
    ("", 0, 0, "0 lines · 0 characters"),
    ("a", 1, 1, "1 line · 1 character"),
    ("a\n", 1, 2, "1 line · 2 characters"),
    ("a\nb", 2, 3, "2 lines · 3 characters"),
    ("a\n\n", 2, 3, "2 lines · 3 characters"),
])
def test_answer_size_counts_lines_like_the_reference(text, lines, chars, said):
    size = reference.answer_size(text)
    assert (size.lines, size.chars, str(size)) == (lines, chars, said)
    assert size.lines == len(Lines.of(text))


# ---------------------------------------------------------------- cost on a 1 MB reference


def test_every_action_is_quick_on_a_one_megabyte_reference():
    """Generous bounds (a shared, slow machine); a quadratic step on 1 MB would take minutes."""
    big = "\n".join(("a" * 60 + " İx") for _ in range(16_000)) + "\nz" * 5_000  # about 1 MB
    began = time.perf_counter()
    split = Lines.of(big)
    found = reference.search(split, "a" * 60 + " i")  # long needle, a match on every line
    worst = reference.search(split, "a" * 199 + "b")  # near-misses everywhere, no match
    view = reference.window(split, 8_000, hit=found.hits[-1])
    taken = reference.take(split, 1, reference.MAX_TAKE_LINES)
    answer = reference.append(taken, reference.take(split, 10, 20))
    size = reference.answer_size(answer)
    elapsed = time.perf_counter() - began
    assert len(big) > 1_000_000 and found.total == 16_000 and worst.total == 0
    assert len(found.hits) == reference.MAX_HITS and view.target == 8_000
    assert size.lines == reference.MAX_TAKE_LINES + 11
    assert elapsed < 3.0, f"{elapsed:.2f} s"
