"""Home and Explore as data, without Streamlit: one line per sample, filters, statistics, export."""


import pytest

from structext_core.structext_eval import explore, samples, suites


@pytest.fixture
def rows():
    return [s for t in (1, 8, 13, 18, 5, 21, 24, 27) for s in suites.generate_cell(t, 2, 1, 3, seed=2)]


def test_filters_combine_and_empty_filters_keep_all(rows):
    index = explore.index_frame(rows)
    assert len(explore.filter_index(index)) == len(rows)
    only = explore.filter_index(index, formats=["json", "yaml"], depths=[2])
    assert set(only["format"]) == {"json", "yaml"} and len(only) == 6
    assert explore.filter_index(index, task_ids=[8], widths=[3]).empty


def test_the_id_filter_keeps_ids_containing_the_text_as_written(rows):
    index = explore.index_frame(rows)
    part = rows[4]["id"][-8:]  # e.g. "d2w1-001": the end of one id, shared by others of its cell
    kept = explore.filter_index(index, id_contains=part)
    assert list(kept["id"]) == [r["id"] for r in rows if part in r["id"]] and len(kept) >= 1
    assert explore.filter_index(index, id_contains=".*").empty  # text, not a pattern
    assert len(explore.filter_index(index, id_contains="")) == len(rows)
    both = explore.filter_index(index, formats=[rows[4]["language"]], id_contains=part)
    assert set(both["format"]) == {rows[4]["language"]} and set(both["id"]) <= set(kept["id"])


def test_choices_follow_the_suite_and_the_chosen_formats(rows):
    index = explore.index_frame(rows)
    assert explore.format_choices(index) == ["tree", "csv", "json", "yaml", "xml", "markdown", "latex", "org"]
    assert explore.format_choices(index[index["format"] == "json"]) == ["json"]
    assert explore.task_choices(index) == [1, 5, 8, 13, 18, 21, 24, 27]
    assert explore.task_choices(index, ["json", "latex"]) == [8, 24]
    assert explore.task_choices(index, []) == explore.task_choices(index)


def test_task_label_names_format_category_and_slug():
    assert explore.task_label(8) == "8 · json TR: json-object-by-id"


def test_stats_count_and_average(rows):
    stats = explore.suite_stats(explore.index_frame(rows))
    fmt = stats["format"].set_index("format")
    assert fmt.loc["json", "samples"] == 3
    want = round(sum(len(r["reference"]) for r in rows if r["language"] == "csv") / 3)
    assert fmt.loc["csv", "mean reference chars"] == want
    assert stats["grid"]["samples"].tolist() == [len(rows)]


def test_jsonl_export_round_trips(rows, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(explore.selection_jsonl(iter(rows)))
    assert samples.read_jsonl(path) == rows
    samples.write_jsonl(tmp_path / "y.jsonl", rows)  # the same lines as a suite file
    assert path.read_bytes() == (tmp_path / "y.jsonl").read_bytes()


# ---- a suite read once per file version (Explore's filter changes must not read it again) ----

@pytest.fixture
def suite_path(rows, tmp_path):
    path = tmp_path / "pilot.jsonl"
    samples.write_jsonl(path, rows)
    explore.clear_view_cache()
    yield path
    explore.clear_view_cache()


def test_suite_view_is_read_once_per_file_version(suite_path, rows, monkeypatch):
    reads = []
    real = samples.read_jsonl
    monkeypatch.setattr(samples, "read_jsonl", lambda path: reads.append(path) or real(path))
    first = explore.load_suite_view(suite_path)
    assert explore.load_suite_view(suite_path) is first and len(reads) == 1
    assert list(first.rows) == rows and first.by_id[rows[3]["id"]] == rows[3]
    samples.write_jsonl(suite_path, rows[:5])  # rewritten: a new size (and time) reads again
    second = explore.load_suite_view(suite_path)
    assert len(reads) == 2 and len(second.rows) == 5 and len(second.index) == 5


def test_suite_view_filters_give_what_a_fresh_index_gives(suite_path, rows):
    """The cached index answers every filter as the index built afresh from the file did."""
    view = explore.load_suite_view(suite_path)
    fresh = explore.index_frame(samples.read_jsonl(suite_path))
    for filters in ({}, {"formats": ["json", "yaml"]}, {"depths": [2]}, {"task_ids": [8, 21], "widths": [1]},
                    {"formats": ["csv"], "task_ids": [8]}):
        got = explore.filter_index(view.index, **filters)
        want = explore.filter_index(fresh, **filters)
        assert got["id"].tolist() == want["id"].tolist()
    assert view.index.equals(fresh)


def test_suite_view_of_a_file_that_does_not_read_raises_and_is_not_kept(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"id": \n', encoding="utf-8")
    with pytest.raises(samples.SampleError, match="line 1"):
        explore.load_suite_view(path)
    with pytest.raises(samples.SampleError):  # not cached as if it were a suite
        explore.load_suite_view(path)


def test_keep_narrows_rows_index_and_lookup(rows):
    view = explore.SuiteView.of(rows)
    kept = [dict(r, rule_hint="withheld") for r in rows if r["language"] != "json"]
    narrow = view.keep(kept)
    assert len(narrow.rows) == len(narrow.index) == len(rows) - 3
    assert "json" not in set(narrow.index["format"])
    assert narrow.by_id[kept[0]["id"]]["rule_hint"] == "withheld"
    assert len(view.rows) == len(rows)  # the shared view is untouched
    with pytest.raises(TypeError):
        view.by_id["x"] = {}  # read-only: every session shares it


# ---- long raw text a page at a time ----------------------------------------------------------

def test_raw_page_cuts_a_long_reference_into_numbered_pages():
    text = "\n".join(f"line {n}" for n in range(1, 1001))
    first = explore.raw_page(text, 1, lines=400)
    assert (first.first, first.last, first.total, first.pages, first.whole) == (1, 400, 1000, 3, False)
    last = explore.raw_page(text, 3, lines=400)
    assert (last.first, last.last) == (801, 1000) and last.text.split("\n")[0] == "line 801"
    assert last.numbered().split("\n")[0] == " 801  line 801"  # numbered as in the whole reference
    assert explore.raw_page(text, 99, lines=400).page == 3 and explore.raw_page(text, -2, lines=400).page == 1


def test_raw_page_of_a_short_reference_is_the_whole_text():
    page = explore.raw_page('{"a": 1}\n{"b": 2}')
    assert page.whole and page.text == '{"a": 1}\n{"b": 2}' and (page.first, page.last) == (1, 2)
    with pytest.raises(ValueError):
        explore.raw_page("x", 1, lines=0)


def test_sample_html_shows_every_text_as_written_and_escaped(rows):
    """Explore's sample as one HTML block: a question, hint or answer holding markup or Markdown shows as
    the text it is (nothing of it becomes an element), white space kept; a long answer scrolls in its frame."""
    hostile = dict(rows[0], question="<script>alert(1)</script> **not bold**\n  second line",
                   rule_hint="<img src=x onerror=alert(1)> & [a](http://x)", answer="a < b\n" * 20,
                   params={"field": "</pre><b>"})
    card = explore.sample_html(hostile)
    for text in ("<script>", "<img", "<b>", "</pre><b>"):
        assert text not in card
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **not bold**\n  second line" in card
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; [a](http://x)" in card
    assert '"field": "&lt;/pre&gt;&lt;b&gt;"' in card
    assert "<h4>Answer (21 lines)</h4><pre data-testid=\"sxPreformatted\"" in card
    assert f"max-height:{explore.ANSWER_FRAME}px" in card
    short = explore.sample_html(dict(rows[0], answer="65"))
    assert "<h4>Answer</h4>" in short and "max-height" not in short
    assert f"<strong>{rows[0]['id']}</strong> · format <strong>{rows[0]['language']}</strong>" in short
