"""The paper's tables: shipped unchanged, and every printed value reproduced by the paper views."""

import csv
import io
from pathlib import Path

import pytest

from structext_core.structext_eval import paper
from structext_core.views import charts, heatmaps

SHARED_PAPER = Path(__file__).resolve().parents[3] / "shared" / "data" / "paper"


def printed_cells(name):
    """(row key, column, printed text) for every non-empty value cell of the CSV, read with csv."""
    table = paper.TABLES[name]
    reader = csv.DictReader(io.StringIO(paper.raw_text(name)))
    cells = []
    for record in reader:
        key = tuple(record[c] for c in table.id_columns)
        for column, text in record.items():
            if column not in table.id_columns and text.strip():
                cells.append((key, column, text))
    return cells


@pytest.mark.parametrize("name", list(paper.TABLES))
def test_package_data_is_the_shared_table_unchanged(name):
    shared = SHARED_PAPER / paper.TABLES[name].filename
    if not shared.exists():
        pytest.skip(f"shared copy not present at {shared}")
    assert paper.raw_text(name) == shared.read_text(encoding="utf-8")


def test_source_note_names_every_table():
    note = paper.source_note()
    for table in paper.TABLES.values():
        assert table.filename in note


@pytest.mark.parametrize("name, n_cells", [("table3", 24 * 17), ("table4", 12 * 4 + 1), ("table6", 12 * 6)])
def test_long_table_has_one_row_per_printed_value(name, n_cells):
    assert len(paper.long_table(name)) == n_cells == len(printed_cells(name))


@pytest.mark.parametrize("name", list(paper.TABLES))
def test_long_table_reproduces_every_value_exactly(name):
    long = paper.long_table(name)
    id_columns = paper.TABLES[name].id_columns
    index = {}
    for record in long.to_dict("records"):
        key = tuple(record[c] for c in id_columns) if name == "table3" else (record["model"],)
        index[(key, record["column"])] = record
    for key, column, text in printed_cells(name):
        record = index[(key, column)]
        assert record["label"] == text
        assert record["value"] == float(text)


@pytest.mark.parametrize("name, kind", [("table3", "format"), ("table3", "task"), ("table3", "overall"),
                                        ("table4", None), ("table6", None)])
def test_paper_heatmap_chart_data_holds_every_printed_value(name, kind):
    cells = paper.heatmap_cells(name, kind)
    chart = charts.paper_heatmap_chart(cells, "t", "row", "col")
    spec = chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    shown = {(d["row_label"], d["col_label"]): (d["label"], d["mean"]) for d in data}
    expected = [(k, c, t) for k, c, t in printed_cells(name) if kind is None or paper.column_kind(name, c) == kind]
    assert len(shown) == len(expected)
    for key, column, text in expected:
        row_label = " / ".join(key)
        assert shown[(row_label, column)] == (text, float(text))
    # every cell prints the paper's own text, e.g. "12.80", not a reformatted number
    text_layer = spec["layer"][1]
    assert text_layer["encoding"]["text"]["field"] == "label"


def test_paper_heatmap_keeps_printed_order():
    cells = paper.heatmap_cells("table4")
    assert heatmaps.axis_order(cells, "row")[:3] == ["Human", "GPT-4o-Turbo", "GPT-4o-Mini"]
    assert heatmaps.axis_order(cells, "col") == ["Base", "w/ Hint", "3-Shot", "Simple 3-Shot"]


def test_table4_human_row_has_only_the_naive_value():
    long = paper.long_table("table4")
    human = long[long["model"] == "Human"]
    assert human[["column", "label"]].values.tolist() == [["Base", "92.6"]]


def test_metric_correlations_from_table6():
    corr = paper.metric_correlations()
    metrics = ["Human judge", "GPT-4o judge", "GPT-4o-mini judge", "RougeL", "BLEU", "Exact match"]
    assert len(corr) == 36 and set(corr["n"]) == {12}
    diagonal = corr[corr["metric_a"] == corr["metric_b"]]
    assert diagonal["r"].round(12).tolist() == [1.0] * 6
    # recomputed by hand: Pearson r of the Human judge and RougeL columns
    wide = paper.load_table("table6")
    x = [float(v) for v in wide["Human judge"]]
    y = [float(v) for v in wide["RougeL"]]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    r = sum((a - mx) * (b - my) for a, b in zip(x, y)) / (
        sum((a - mx) ** 2 for a in x) ** 0.5 * sum((b - my) ** 2 for b in y) ** 0.5)
    got = corr[(corr["metric_a"] == "Human judge") & (corr["metric_b"] == "RougeL")]["r"].item()
    assert got == pytest.approx(r, abs=1e-12)
    assert set(corr["metric_a"]) == set(metrics)


def test_a_printed_cut_keeps_its_columns_in_order_and_shades_from_lowest_to_highest():
    cut, shade = paper.printed_cut("table3", "task")
    assert list(cut.columns) == ["model", "prompt", *paper.CATEGORY_COLUMNS]
    assert cut.equals(paper.load_table("table3")[list(cut.columns)])
    values = cut[list(paper.CATEGORY_COLUMNS)].astype(float)
    low, high = values.stack().idxmin(), values.stack().idxmax()
    assert shade.stack()[low] == 0.0 and shade.stack()[high] == 1.0
    four, four_shade = paper.printed_cut("table4")
    assert list(four.columns) == list(paper.load_table("table4").columns)
    assert (four_shade.isna() == (four.drop(columns="model") == "")).all().all()  # humans' empty cells: no shade


def test_the_tables_are_read_once_and_each_caller_gets_its_own_copy():
    first = paper.load_table("table6")
    first.iloc[0, 1] = "changed"
    long = paper.long_table("table6")
    long["value"] = 0.0
    assert paper.load_table("table6").iloc[0, 1] != "changed" and paper.long_table("table6")["value"].max() > 0
