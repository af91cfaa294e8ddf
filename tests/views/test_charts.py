"""The Results page's charts: fixed scales, tooltips, order, the clickable cell, titles that name
the metric, and PNG / SVG export (rendered offline by vl-convert)."""

import pytest

from structext_core.structext_eval import paper, results_charts
from structext_core.views import charts, comparisons, heatmaps, result_options


def test_heatmap_chart_fixed_scale_tooltip_and_sort(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "model", "format", n_boot=50)
    spec = charts.heatmap_chart(cells, "model", "format").to_dict()
    rect, text, n_text = spec["layer"]
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 100]
    for layer in spec["layer"]:  # n in every tooltip, wherever the pointer rests
        tooltip_fields = [t["field"] for t in layer["encoding"]["tooltip"]]
        assert {"mean", "n", "ci_low", "ci_high"} <= set(tooltip_fields)
    assert rect["encoding"]["y"]["sort"] == heatmaps.axis_order(cells, "row")
    assert rect["encoding"]["x"]["sort"] == heatmaps.axis_order(cells, "col")
    assert text["encoding"]["text"]["field"] == "mean"
    assert n_text["encoding"]["text"]["field"] == "n_label"  # n printed in every cell, under its mean
    data = next(iter(spec["datasets"].values()))
    assert len(data) == len(cells)
    assert [d["n_label"] for d in data] == [f"n={n:,}" for n in cells["n"]]


def test_thin_cells_are_grey_with_their_mean_and_n(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "model", "format", n_boot=10)
    flagged = heatmaps.flag_small_cells(cells, 20)
    spec = charts.heatmap_chart(flagged, "model", "format", min_n=20).to_dict()
    rect, text, n_text = spec["layer"]
    assert rect["encoding"]["color"]["condition"] == {"test": "datum.below_min", "value": charts.GREY}
    assert rect["encoding"]["color"]["field"] == "mean"  # the others keep the scale
    for layer in (text, n_text):  # still printed, in dark grey
        assert layer["encoding"]["color"]["condition"][0] == {"test": "datum.below_min", "value": charts.GREY_TEXT}
    assert {"field": "below_min", "title": "n below 20", "type": "nominal"} in rect["encoding"]["tooltip"]
    data = next(iter(spec["datasets"].values()))
    assert len(data) == len(cells)  # nothing hidden
    assert [d["below_min"] for d in data] == (cells["n"] < 20).tolist() and any(d["below_min"] for d in data)
    assert "n below" not in str(charts.heatmap_chart(cells, "model", "format").to_dict()["layer"][0]["encoding"])


def test_depth_width_paired_and_spread_charts_carry_n(frame):
    values = result_options.with_value(frame[frame["suite"] == "test-hard"])
    cells = heatmaps.flag_small_cells(results_charts.depth_width_frame(values, n_boot=10), 30)
    spec = results_charts.depth_width_chart(cells, min_n=30).to_dict()
    layers = spec["spec"]["layer"]
    assert [layer["encoding"]["text"]["field"] for layer in layers[1:]] == ["mean", "n_label"]
    assert layers[0]["encoding"]["color"]["condition"]["test"] == "datum.below_min"
    spread = results_charts.spread_chart(cells).to_dict()
    assert "n" in [t["field"] for t in spread["spec"]["layer"][0]["encoding"]["tooltip"]]
    paired = comparisons.paired_frame(values, "good", "weak", "format", "depth", n_boot=10, n_perm=50)
    spec = charts.paired_chart(heatmaps.flag_small_cells(paired, 5), "format", "depth", "t", min_n=5).to_dict()
    assert [layer["encoding"]["text"]["field"] for layer in spec["layer"][1:]] == ["text", "n_label"]
    assert {"field": "n", "title": "n (pairs)", "type": "quantitative"} in spec["layer"][0]["encoding"]["tooltip"]


def test_png_and_svg_export(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "model", "format", n_boot=20)
    chart = charts.heatmap_chart(cells, "model", "format", title="export")
    assert charts.chart_png(chart).startswith(b"\x89PNG\r\n\x1a\n")
    svg = charts.chart_svg(chart).decode("utf-8")
    assert svg.lstrip().startswith("<svg") and "good" in svg


def test_selectable_heatmap_and_picked_cell(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "model", "format", n_boot=20)
    spec = charts.heatmap_chart(cells, "model", "format", selectable=True).to_dict()
    params = spec.get("params") or spec["layer"][0]["params"]  # Altair lifts layer params to the top
    assert params[0]["name"] == charts.CELL_SELECTION
    assert params[0]["select"]["fields"] == ["row_label", "col_label"]
    assert charts.picked_cell({"cell": [{"row_label": "good", "col_label": "json"}]}) == ("good", "json")
    assert charts.picked_cell({"cell": []}) is None and charts.picked_cell(None) is None
    assert charts.picked_cell({"cell": [{"row_label": "good"}]}) is None


def test_paired_chart_selectable(frame):
    cells = comparisons.paired_frame(result_options.with_value(frame), "good", "weak", "format", "depth", n_boot=20, n_perm=100)
    spec = charts.paired_chart(cells, "format", "depth", "t", selectable=True).to_dict()
    params = spec.get("params") or spec["layer"][0]["params"]
    assert params[0]["name"] == charts.CELL_SELECTION


def test_every_chart_names_its_metric(frame):
    choice = result_options.ValueChoice(rouge="paper")
    values = result_options.with_choice(frame[frame["suite"] == "test-hard"], choice)
    cells = results_charts.depth_width_frame(values, n_boot=20)
    assert choice.title in results_charts.depth_width_chart(cells, choice.title).to_dict()["title"]
    assert choice.title in results_charts.spread_chart(cells, choice.title).to_dict()["title"]
    heatmap = charts.heatmap_chart(heatmaps.heatmap_frame(values, "model", "format", n_boot=20), "model",
                                   "format", title=f"{choice.title} by model and format", value_title=choice.title)
    spec = charts.subtitled(heatmap, choice.description).to_dict()
    assert spec["title"]["text"] == "paper ROUGE-L ≥ 0.75 (%) by model and format"
    assert spec["title"]["subtitle"] == choice.description.split("; ")  # one line per part
    assert spec["layer"][0]["encoding"]["color"]["title"] == choice.title  # the legend too


def test_subtitle_on_a_chart_without_title():
    cells = paper.heatmap_cells("table4")
    spec = charts.subtitled(charts.paper_heatmap_chart(cells, "", "model", "prompt"), "metric").to_dict()
    assert spec["title"]["subtitle"] == "metric"


@pytest.mark.parametrize("table", list(paper.TABLES))
def test_a_paper_table_title_fits_its_chart(table):
    """Regression (issue item 9c): the paper-table chart's title was cut at the chart's width.
    Title and subtitle come in lines that each fit the cells' width, the words all kept."""
    title, metric = paper.TABLES[table].title, "score (%): the mean of the paper ROUGE-L; printed values"
    cells = paper.heatmap_cells(table)
    spec = charts.subtitled(charts.paper_heatmap_chart(cells, title, "model", "prompt"), metric, fit=True).to_dict()
    lines = spec["title"]["text"]
    assert isinstance(lines, list) and " ".join(lines) == title
    subtitle = spec["title"]["subtitle"]
    assert " ".join(subtitle) == metric.replace("; ", " ")
    assert all(len(line) * charts.TITLE_CHAR_PX <= spec["width"] for line in [*lines, *subtitle])
