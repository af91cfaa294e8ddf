"""Home and Explore as data, without Streamlit: one line per sample, filters, statistics, export."""


import pytest

from structext_core.benchmark import samples, suites
from structext_core.views import explore


@pytest.fixture
def rows():
    return [s for t in (1, 8, 13, 18, 5, 21, 24, 27) for s in suites.generate_cell(t, 2, 1, 3, seed=2)]


def test_filters_combine_and_empty_filters_keep_all(rows):
    index = explore.index_frame(rows)
    assert len(explore.filter_index(index)) == len(rows)
    only = explore.filter_index(index, formats=["json", "yaml"], depths=[2])
    assert set(only["format"]) == {"json", "yaml"} and len(only) == 6
    assert explore.filter_index(index, task_ids=[8], widths=[3]).empty


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
