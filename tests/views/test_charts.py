"""The Results page's charts: fixed scales, tooltips, order, the clickable cell, titles that name
the metric, and PNG / SVG export (rendered offline by vl-convert)."""

from structext_core.views import charts
from structext_core.views import results as result_views


def test_heatmap_chart_fixed_scale_tooltip_and_sort(frame):
    cells = result_views.heatmap_frame(result_views.with_value(frame), "model", "format", n_boot=50)
    spec = charts.heatmap_chart(cells, "model", "format").to_dict()
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 100]
    tooltip_fields = [t["field"] for t in rect["encoding"]["tooltip"]]
    assert {"mean", "n", "ci_low", "ci_high"} <= set(tooltip_fields)
    assert rect["encoding"]["y"]["sort"] == result_views.axis_order(cells, "row")
    assert rect["encoding"]["x"]["sort"] == result_views.axis_order(cells, "col")
    assert text["encoding"]["text"]["field"] == "mean"
    data = next(iter(spec["datasets"].values()))
    assert len(data) == len(cells)


def test_png_and_svg_export(frame):
    cells = result_views.heatmap_frame(result_views.with_value(frame), "model", "format", n_boot=20)
    chart = charts.heatmap_chart(cells, "model", "format", title="export")
    assert charts.chart_png(chart).startswith(b"\x89PNG\r\n\x1a\n")
    svg = charts.chart_svg(chart).decode("utf-8")
    assert svg.lstrip().startswith("<svg") and "good" in svg


def test_selectable_heatmap_and_picked_cell(frame):
    cells = result_views.heatmap_frame(result_views.with_value(frame), "model", "format", n_boot=20)
    spec = charts.heatmap_chart(cells, "model", "format", selectable=True).to_dict()
    params = spec.get("params") or spec["layer"][0]["params"]  # Altair lifts layer params to the top
    assert params[0]["name"] == charts.CELL_SELECTION
    assert params[0]["select"]["fields"] == ["row_label", "col_label"]
    assert charts.picked_cell({"cell": [{"row_label": "good", "col_label": "json"}]}) == ("good", "json")
    assert charts.picked_cell({"cell": []}) is None and charts.picked_cell(None) is None
    assert charts.picked_cell({"cell": [{"row_label": "good"}]}) is None


def test_paired_chart_selectable(frame):
    cells = result_views.paired_frame(result_views.with_value(frame), "good", "weak", "format", "depth", n_boot=20, n_perm=100)
    spec = charts.paired_chart(cells, "format", "depth", "t", selectable=True).to_dict()
    params = spec.get("params") or spec["layer"][0]["params"]
    assert params[0]["name"] == charts.CELL_SELECTION


def test_every_chart_names_its_metric(frame):
    choice = result_views.ValueChoice(rouge="paper")
    values = result_views.with_choice(frame[frame["suite"] == "test-hard"], choice)
    cells = result_views.depth_width_frame(values, n_boot=20)
    assert choice.title in charts.depth_width_chart(cells, choice.title).to_dict()["title"]
    assert choice.title in charts.spread_chart(cells, choice.title).to_dict()["title"]
    heatmap = charts.heatmap_chart(result_views.heatmap_frame(values, "model", "format", n_boot=20), "model",
                                   "format", title=f"{choice.title} by model and format", value_title=choice.title)
    spec = charts.subtitled(heatmap, choice.description).to_dict()
    assert spec["title"]["text"] == "paper ROUGE-L ≥ 0.75 (%) by model and format"
    assert spec["title"]["subtitle"] == choice.description.split("; ")  # one line per part
    assert spec["layer"][0]["encoding"]["color"]["title"] == choice.title  # the legend too


def test_subtitle_on_a_chart_without_title():
    cells = result_views.paper_heatmap_cells("table4")
    spec = charts.subtitled(charts.paper_heatmap_chart(cells, "", "model", "prompt"), "metric").to_dict()
    assert spec["title"]["subtitle"] == "metric"
