"""The heatmap's table (structext_core/views/heatmap_table.py, drawn by structext_core/ui/heatmap_table.py):
the chart's cells, order, colours and words, as plain data the browser writes as text."""

import pandas as pd
import pytest

from structext_core.ui import heatmap_table as widget
from structext_core.views import charts, heatmap_table, heatmaps


def cells(**extra) -> pd.DataFrame:
    frame = pd.DataFrame({
        "row_label": ["good", "good", "weak", "weak"], "col_label": ["json", "yaml", "json", "yaml"],
        "mean": [90.0, 70.0, 20.0, 54.99], "n": [12, 3, 1200, 2], "ci_low": [80.0, 50.0, 10.0, float("nan")],
        "ci_high": [95.0, 85.0, 30.0, float("nan")], "row_rank": [0, 0, 1, 1], "col_rank": [1, 0, 1, 0]})
    return frame.assign(**extra)


def test_colour_is_viridis_on_a_fixed_scale():
    assert heatmap_table.colour(0) == "#440154" and heatmap_table.colour(100) == "#fde725"
    assert heatmap_table.colour(-5) == "#440154" and heatmap_table.colour(250) == "#fde725"  # clipped
    assert heatmap_table.colour(50) == "#22908c"  # half-way between #26828e and #1f9e89, its 5th and 6th stops
    assert heatmap_table.VIRIDIS[0] == "#440154" and charts.COLOR_SCHEME == "viridis"


def test_table_data_keeps_the_charts_order_words_and_colours():
    data = heatmap_table.table_data(cells(), "model", "format", title="t", subtitle="how; below 0.75 counts as 0",
                                    value_title="strict ROUGE-L ≥ 0.75 (%)")
    assert data["rows"] == heatmaps.axis_order(cells(), "row") == ["good", "weak"]
    assert data["cols"] == ["yaml", "json"]  # by rank, not as listed
    assert data["subtitle"] == ["how", "below 0.75 counts as 0"] and data["picked"] is None
    first, *_, last = data["cells"]
    assert (first["text"], first["n_label"], first["background"], first["colour"]) == (
        "90.0", "n=12", heatmap_table.colour(90), "black")
    assert first["tip"].split("\n") == ["model: good", "format: json", "strict ROUGE-L ≥ 0.75 (%): 90.0", "n: 12",
                                        "95% CI: 80.0 to 95.0"]
    assert last["colour"] == "white" and last["text"] == "55.0"  # below 55: the dark end, white text
    assert last["ci_low"] is None and "95% CI" not in last["tip"]  # no interval: none said
    assert data["cells"][2]["n_label"] == "n=1,200"
    assert len(data["legend"]) == 11 and data["legend"][0] == heatmap_table.colour(0)


def test_thin_cells_are_grey_and_say_why_and_the_picked_cell_is_named():
    flagged = heatmaps.flag_small_cells(cells(), 5)
    data = heatmap_table.table_data(flagged, "model", "format", min_n=5, picked=("weak", "yaml"))
    thin = [c for c in data["cells"] if c["below_min"]]
    assert [c["n"] for c in thin] == [3, 2]
    assert {c["background"] for c in thin} == {heatmap_table.GREY} and {c["colour"] for c in thin} == {
        heatmap_table.GREY_TEXT}
    assert all(c["tip"].endswith("\nn below 5") for c in thin)
    assert data["picked"] == ["weak", "yaml"]


def test_a_cell_without_a_value_says_so_and_is_grey():
    data = heatmap_table.table_data(cells(mean=[90.0, float("nan"), 20.0, 10.0]), "model", "format")
    empty = data["cells"][1]
    assert empty["mean"] is None and empty["text"] == "" and "nan" not in str(empty).lower()
    assert empty["background"] == heatmap_table.GREY and "format: yaml\nscore (%): no value\nn: 3" in empty["tip"]


@pytest.mark.parametrize("label", ["<img src=x onerror=alert(1)>", "a\"b'c&d", "</table><script>x</script>"])
def test_a_hostile_label_is_data_and_the_browser_writes_it_as_text(label):
    """Labels come from imported files: the table's data carries them as they are, and its script
    writes every one with textContent (no markup is ever parsed from the data)."""
    data = heatmap_table.table_data(cells(row_label=[label, label, "weak", "weak"]), "model", "format")
    assert data["rows"][0] == label and data["cells"][0]["tip"].startswith(f"model: {label}\n")
    assert "innerHTML" not in widget.TABLE_JS and "insertAdjacentHTML" not in widget.TABLE_JS
    assert "textContent" in widget.TABLE_JS
