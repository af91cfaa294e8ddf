"""The Results page, run with Streamlit's AppTest on real scored results and the paper's tables."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import paper, results_frame, results_store
from structext_core.studio import storage
from structext_core.views import comparisons, leaderboards, people_vs_models, result_options
from structext_core.views import heatmap_table as heatmap_data
from tests.pages.heatmap_tables import heatmap_tables
from tests.pages.html_tables import html_table_tints, html_tables
from tests.pages.light_choices import (
    LightDownloads,
    choice,
    choices,
    choose,
    download_buttons,
    open_section,
    sections,
)
from tests.pages.light_parts import children, expand
from tests.pages.light_parts import notes as notes_of
from tests.pages.text_blocks import text_blocks
from tests.results_data import build_dataset, hard_samples, make_test_and_real_samples, result_lines

PAGE = Path(__file__).resolve().parents[2] / "pages" / "results.py"


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("results_page")
    build_dataset(root)
    return root


@pytest.fixture
def env(dataset_root, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(dataset_root / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(dataset_root / "suites"))
    return dataset_root


@pytest.fixture
def empty_env(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    return tmp_path


RESEARCHER = {"id": 98, "username": "reader", "role": "researcher"}  # sees every result


#: The keys of the boxes whose content is drawn only while they are open (opening one reruns the page).
DRILL, FILTERS, SOURCES, LOADING = "rs_drill_open", "rs_filters_open", "rs_sources_open", "rs_load_open"
SETTINGS = "rs_settings_open"


def open_page(user=RESEARCHER, boxes=(), settings_open=True) -> AppTest:
    """The page as ``user`` opens it, with the lazy ``boxes`` open (as a click on each does), and the
    Settings box too unless ``settings_open`` is False (a first view has it closed)."""
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    if user is not None:
        at.session_state["user"] = user
    for box in (*boxes, *((SETTINGS,) if settings_open else ())):
        at.session_state[box] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def charts(at):
    """(spec, [datasets as DataFrames]) of every chart on the page: first the heatmap drawn as a table (its
    data: titles, rows and columns in order, and its cells as the frame), then every Altair chart."""
    out = [(data, [frame]) for data, frame in heatmap_tables(at)]
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        frames = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
        out.append((spec, frames))
    return out


def drill_table(at) -> pd.DataFrame:
    """The drill-down's table (the one with the extracted answers)."""
    tables = [d.value for d in at.dataframe if "answer_extracted" in d.value.columns]
    assert len(tables) == 1
    return tables[0]


def download_labels(at):
    return download_buttons(at)


def select(at, key, value) -> AppTest:
    """Choose ``value`` under ``key``: in a light chooser (the view) or one of Streamlit's select boxes."""
    if key in choices(at):
        choose(at, key, value)
    else:
        at.selectbox(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def all_items(at) -> AppTest:
    """Turn on “All items”: models on every item, not only those people answered."""
    at.toggle(key="rs_all_items").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def on_shared_items(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows on the items the people pool answered: what the default views show."""
    return frame[frame["sample_id"].isin(people_vs_models.answered_items(frame))]


def paper_cut(at) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper view's table (every cell the text shown) and its cells' tints."""
    (table,), (tints,) = html_tables(at, numbers=False), html_table_tints(at)
    return table, tints


def test_fresh_install_shows_the_paper_tables(empty_env):
    at = open_page(boxes=["rs_paper_table_open_table3_format"])
    assert choice(at, "rs_source").value == "paper"
    # Table 3's format columns, as printed, each number tinted by its value (the heatmap is the table)
    table, tints = paper_cut(at)
    printed = paper.load_table("table3")
    assert table.equals(printed[["model", "prompt", *paper.FORMAT_COLUMNS]])
    assert tints[["model", "prompt"]].isna().all().all()
    values = table[list(paper.FORMAT_COLUMNS)].astype(float).to_numpy().ravel()
    alphas = tints[list(paper.FORMAT_COLUMNS)].to_numpy(dtype=float).ravel()
    assert (alphas[values.argsort()] == sorted(alphas)).all() and alphas.min() < alphas.max()  # darker is higher
    assert any("the darker the cell, the higher the value" in c.value for c in notes_of(at))
    # the whole table, every column, in its box
    assert at.dataframe[0].value.astype(str).equals(printed)
    assert download_labels(at) == ["PNG", "SVG", "CSV"]
    assert not charts(at)  # the chart is drawn only into its files
    assert any("Results are loaded by an admin" in c.value for c in notes_of(at))


@pytest.mark.parametrize("view, name, kind", [
    ("table3_task", "table3", "task"), ("table3_overall", "table3", "overall"), ("table4", "table4", None),
    ("table6", "table6", None), ("figure5", None, None)])
def test_every_paper_view_reproduces_its_table(empty_env, view, name, kind):
    at = select(open_page(), "rs_paper_view", view)
    if name is None:
        (spec, frames), = charts(at)
        corr = paper.metric_correlations()
        assert len(frames[0]) == 36
        assert frames[0]["r"].round(12).tolist() == corr["r"].round(12).tolist()
        return
    table, tints = paper_cut(at)
    long = paper.long_table(name)
    if kind:
        long = long[long["kind"] == kind]
    ids = list(paper.TABLES[name].id_columns)
    shown = table.melt(id_vars=ids, var_name="column", value_name="label")
    shown = shown[shown["label"] != ""]
    assert sorted(shown["label"]) == sorted(long["label"]) and list(table.columns[len(ids):]) == list(
        dict.fromkeys(long["column"]))
    # a cell is tinted exactly when it holds a number
    assert (tints.drop(columns=ids).notna() == (table.drop(columns=ids) != "")).all().all()
    # a cut of Table 3 keeps the whole table in a box; Tables 4 and 6 are shown whole
    assert any("every column as printed" in label for label in sections(at)) == (kind is not None)


def assert_cells(data: pd.DataFrame, frame: pd.DataFrame, row="model", col="format"):
    """Every cell of a heatmap's data is its group's mean, with its n printed (``n_label``)."""
    expected = frame.groupby([row, col])["value"].agg(["mean", "size"])
    assert len(data) == len(expected)
    for record in data.to_dict("records"):
        mean, size = expected.loc[(record["row_label"], record["col_label"])]
        assert record["mean"] == pytest.approx(mean) and record["n"] == size
        assert record["n_label"] == f"n={int(size):,}"


def test_heatmap_of_imported_results(env):
    """With people's results, the default heatmap compares people and models on the items people
    answered; “All items” shows every result."""
    at = open_page(boxes=[SOURCES])
    assert choice(at, "rs_source").value == "imported"
    assert at.toggle(key="rs_all_items").value is False
    (spec, frames), = charts(at)[:1]
    frame = people_vs_models.people_as(result_options.with_value(results_frame.load_results(storage.open_db())))
    assert_cells(frames[0], on_shared_items(frame))
    assert set(frames[0]["row_label"]) == {"human", "good", "weak"}  # people pooled, each answer once
    at.radio(key="rs_people_as").set_value("each").run()
    (_, [each]), = charts(at)[:1]
    assert set(each["row_label"]) == {"human:ann1", "human:ann2", "good", "weak"}
    assert each["n"].sum() == frames[0]["n"].sum()
    at.radio(key="rs_people_as").set_value("pool").run()
    assert any("n = 12 shared items" in c.value for c in notes_of(at))
    for cell in spec["cells"]:  # on the fixed 0-100 scale: a colour is its mean's wherever the rest lies
        assert cell["background"] == heatmap_data.colour(cell["mean"])
    assert spec["title"].endswith(", on the 12 items answered by human")
    assert download_labels(at)[:3] == ["CSV", "PNG", "SVG"]  # sources CSV, then the heatmap's PNG / SVG
    all_items(at)
    (spec, frames), = charts(at)[:1]
    assert_cells(frames[0], frame)
    assert "items answered" not in spec["title"]
    assert any(c.value.startswith("All items: ") for c in notes_of(at))


def test_heatmap_rows_columns_filters_and_raw_switch(env):
    at = all_items(open_page(boxes=[FILTERS]))
    at.selectbox(key="rs_row").set_value("task")
    at.selectbox(key="rs_col").set_value("depth")
    at.run()
    at.multiselect(key="rs_filter_model").set_value(["good"]).run()
    assert not at.exception
    data = charts(at)[0][1][0]
    frame = result_options.with_value(results_frame.load_results(storage.open_db()))
    good = frame[frame["model"] == "good"]
    expected = good.groupby(["task", "depth"])["value"].mean()
    assert len(data) == len(expected)
    for record in data.to_dict("records"):
        assert record["mean"] == pytest.approx(expected.loc[(record["row_label"], int(record["col_label"]))])
    at.radio(key="rs_mode").set_value("raw").run()
    raw = charts(at)[0][1][0]
    expected_raw = result_options.with_value(good, mode="raw").groupby(["task", "depth"])["value"].mean()
    for record in raw.to_dict("records"):
        assert record["mean"] == pytest.approx(expected_raw.loc[(record["row_label"], int(record["col_label"]))])
    assert raw["mean"].sum() > data["mean"].sum()


def test_sort_by_name_orders_depths_naturally(env):
    at = open_page()
    at.selectbox(key="rs_row").set_value("depth")
    at.selectbox(key="rs_sort").set_value("name")
    at.run()
    assert charts(at)[0][0]["rows"] == ["1", "2"]


def test_threshold_control_defaults_to_075_and_changes_values(env):
    at = open_page()
    assert at.slider(key="rs_threshold").value == 0.75
    before = charts(at)[0][1][0]["mean"].sum()
    at.slider(key="rs_threshold").set_value(0.0).run()
    after = charts(at)[0][1][0]["mean"].sum()
    assert after > before


def test_settings_wait_in_a_closed_box_and_stay_on_when_it_closes(env):
    """The first view draws the chart, not the dozen controls of its settings: they are in a closed box,
    with one line saying what they are; what was chosen in it stays on once it closes, across views too."""
    at = open_page(settings_open=False)
    assert not at.slider and not at.number_input and not at.toggle
    assert not at.selectbox and not at.radio  # rows, columns, order: in the box
    assert [k for k, c in choices(at).items() if c["kind"] != "downloads"] == ["rs_benchmark", "rs_source", "rs_view"]
    line = "Settings: strict ROUGE-L ≥ 0.75 · people pooled as `human` · minimum n 1 · rows model × columns format"
    assert any(c.value.startswith(line) for c in notes_of(at))
    default = charts(at)[0][1][0]
    at.session_state[SETTINGS] = True  # opened
    at.run()
    at.slider(key="rs_threshold").set_value(0.0)
    at.selectbox(key="rs_row").set_value("task")
    at.run()
    opened = charts(at)[0]
    assert titles(opened[0])[0].startswith("strict ROUGE-L ≥ 0 (%) by task category and format")
    at.session_state[SETTINGS] = False  # closed again: the threshold and the rows stay
    at.run()
    assert not at.slider and charts(at)[0][1][0].equals(opened[1][0]) and not opened[1][0].equals(default)
    assert any(c.value.startswith("Settings: strict ROUGE-L ≥ 0 · ") and "rows task category" in c.value
               for c in notes_of(at))
    assert at.query_params["threshold"] == "0" and at.query_params["rows"] == "task"
    select(at, "rs_view", "leaderboard")
    select(at, "rs_view", "heatmap")
    assert charts(at)[0][1][0].equals(opened[1][0])  # a view without them in between forgets nothing


def test_same_dimension_for_rows_and_columns_is_explained(env):
    at = open_page()
    at.selectbox(key="rs_col").set_value("model").run()
    assert any("same dimension" in w.value for w in notes_of(at, "warning"))
    assert not charts(at)


def test_drill_down_from_a_cell(env):
    at = open_page(boxes=[DRILL])
    heatmap = charts(at)[0][0]
    assert heatmap["picked"] == [heatmap["rows"][0], heatmap["cols"][0]]  # the cell the open box shows: outlined
    select(at, "rs_heatmap_model_format_drill_row", "weak")
    select(at, "rs_heatmap_model_format_drill_col", "yaml")
    assert charts(at)[0][0]["picked"] == ["weak", "yaml"]  # a choice in the boxes: its cell outlined
    at.session_state[DRILL] = False
    at.run()
    assert charts(at)[0][0]["picked"] is None  # no samples shown: no cell outlined
    at.session_state[DRILL] = True
    at.run()
    select(at, "rs_heatmap_model_format_drill_row", "weak")
    select(at, "rs_heatmap_model_format_drill_col", "yaml")
    table = drill_table(at)
    frame = on_shared_items(results_frame.load_results(storage.open_db()))  # the default: items people answered
    cell = frame[(frame["model"] == "weak") & (frame["format"] == "yaml")]
    assert len(table) == len(cell) and set(table["model"]) == {"weak"}
    assert set(table["sample_id"]) == set(cell["sample_id"])
    test, real = make_test_and_real_samples()
    samples = {s["id"]: s for s in hard_samples() + test + real}
    first = samples[table.iloc[0]["sample_id"]]  # the lowest-scoring result of the cell is shown
    codes = text_blocks(at)
    assert first["answer"] in codes and first["reference"] in codes and not at.code  # no highlighter to load
    assert any(first["question"] in m.value for m in at.markdown)
    assert any(c.startswith("Let me look.\n### Answer:") for c in codes)
    assert "CSV" in download_labels(at)


def test_drill_down_sample_box_follows_the_cell(env):
    at = open_page(boxes=[DRILL])
    select(at, "rs_heatmap_model_format_drill_row", "good")
    first = [b for b in at.selectbox if b.label == "Sample"][0]
    assert all(" · good · " in option for option in first.options)
    select(at, "rs_heatmap_model_format_drill_row", "weak")
    second = [b for b in at.selectbox if b.label == "Sample"][0]
    assert all(" · weak · " in option for option in second.options)


def test_the_drill_down_belongs_to_the_axes_it_was_picked_on(env):
    """Issue 19: after the heatmap's axes changed, the drill-down kept the old axes' labels over
    the new cell's rows. Each pair of axes has its own boxes: new axes start afresh."""
    at = open_page(boxes=[DRILL])
    select(at, "rs_heatmap_model_format_drill_row", "weak")
    select(at, "rs_row", "depth")
    row_box = at.selectbox(key="rs_heatmap_depth_format_drill_row")
    assert row_box.label.lower() == "depth" and row_box.value == row_box.options[0]
    assert set(row_box.options) == {"1", "2"}
    table = drill_table(at)
    assert set(table["depth"].astype(str)) == {row_box.value}  # the rows are the new cell's


def test_depth_and_width_keep_their_order_by_default(env):
    at = open_page()
    assert at.selectbox(key="rs_sort").value == "auto"
    select(at, "rs_row", "width")
    select(at, "rs_col", "depth")
    spec = charts(at)[0][0]
    assert spec["rows"] == ["1", "2"] and spec["cols"] == ["1", "2"]
    assert any("depth and width keep their order" in c.value for c in notes_of(at))


def test_all_items_stays_on_across_views(env):
    """Issue 19: “All items” went back to off after a view without it (depth x width)."""
    at = all_items(open_page())
    select(at, "rs_view", "depth_width")
    assert not at.toggle  # this view does not draw it
    select(at, "rs_view", "leaderboard")
    assert at.toggle(key="rs_all_items").value is True
    assert not any("n = 12 shared items" in c.value for c in notes_of(at))


def test_a_restricted_leaderboard_says_what_it_leaves_out(env):
    """Issue 19: two complete runs were ranked on n = 4, the items a study's people had answered,
    with nothing but a caption saying so. Now a warning counts the model results left out."""
    at = open_page()
    select(at, "rs_view", "leaderboard")
    frame = results_frame.load_results(storage.open_db())
    models = frame[~frame["model"].str.startswith("human")]
    left_out = int((~models["sample_id"].isin(people_vs_models.answered_items(frame))).sum())
    warning, = [w.value for w in notes_of(at, "warning") if "left out" in w.value]
    assert f"the 12 items human answered only: {left_out:,} model results on other items are left out" in warning
    assert "**All items**" in warning
    at = all_items(at)
    assert not [w for w in notes_of(at, "warning") if "left out" in w.value]


def test_the_heatmap_is_a_table_whose_cells_say_what_the_chart_said(env, downloads):
    """Issue 46: the heatmap's Vega-Lite chart cost Results about 0.1 s in the browser; it is a tinted
    table now, with the chart's words (its legend is the metric's whole title; each cell's tooltip its
    row, column, mean, n and 95% interval), and the chart is still the PNG and SVG files."""
    at = open_page()
    spec, [cells] = charts(at)[0]
    assert spec["value_title"] == "strict ROUGE-L ≥ 0.75 (%)" and spec["row_title"] == "model"
    assert spec["col_title"] == "format" and set(cells["col_label"]) <= set(spec["cols"])
    first = cells.iloc[0]
    assert first["tip"].split("\n") == [
        f"model: {first['row_label']}", f"format: {first['col_label']}",
        f"strict ROUGE-L ≥ 0.75 (%): {first['mean']:.1f}", f"n: {first['n']:,}",
        f"95% CI: {first['ci_low']:.1f} to {first['ci_high']:.1f}"]
    assert not at.get("vega_lite_chart")
    png = downloads.files["heatmap_model_format_rouge_l_strict_t0.75.png"]
    svg = downloads.files["heatmap_model_format_rouge_l_strict_t0.75.svg"]
    assert png().startswith(b"\x89PNG") and b"strict ROUGE-L" in svg()


@pytest.mark.parametrize("view, n_charts", [("depth_width", 2), ("people_vs_models", 1),
                                           ("test_vs_real", 1), ("metric_correlation", 1),
                                           ("paired", 1), ("leaderboard", 0)])
def test_each_view_draws_its_chart_with_exports(env, view, n_charts):
    at = select(open_page(), "rs_view", view)
    assert len(charts(at)) == n_charts
    labels = download_labels(at)
    assert labels.count("PNG") == n_charts and labels.count("SVG") == n_charts and "CSV" in labels


def test_people_vs_models_view_uses_the_people_items(env):
    at = select(open_page(), "rs_view", "people_vs_models")
    data = charts(at)[0][1][0]
    assert {"human", "good", "weak"} == set(data["model"])  # people pooled by default
    assert any("12 items answered by human" in c.value for c in notes_of(at))
    at.radio(key="rs_people_as").set_value("each").run()
    each = charts(at)[0][1][0]
    assert {"human:ann1", "human:ann2", "good", "weak"} == set(each["model"])
    assert each["n"].sum() == data["n"].sum()  # each answer once, pooled or not
    at.radio(key="rs_people_as").set_value("pool").run()
    # a view of the paper's figures opens on the paper's metric
    frame = result_options.with_value(results_frame.load_results(storage.open_db()), rouge="paper")
    items = people_vs_models.answered_items(frame)
    good = frame[(frame["model"] == "good") & frame["sample_id"].isin(items)].groupby("task")["value"].mean()
    mine = data[data["model"] == "good"].set_index("task")["mean"]
    for task, mean in good.items():
        assert mine[task] == pytest.approx(mean)


def test_test_vs_real_test_view(env):
    at = select(open_page(), "rs_view", "test_vs_real")
    data = charts(at)[0][1][0]
    assert set(data["set"]) == {"Test", "Real-Test"} and set(data["model"]) == {"good", "weak"}


def test_compare_two_models_marks_significant_cells_and_drills_down(env):
    at = select(open_page(), "rs_view", "paired")
    select(at, "rs_model_a", "good")
    select(at, "rs_model_b", "weak")
    data = charts(at)[0][1][0]
    frame = result_options.with_value(results_frame.load_results(storage.open_db()))
    expected = comparisons.paired_frame(frame, "good", "weak", "format", "depth")
    assert sorted(data["text"]) == sorted(expected.apply(lambda r: f"{r['diff']:+.1f}{r['mark']}", axis=1))
    assert any(t.endswith("*") for t in data["text"])
    at.session_state[DRILL] = True  # as a click on a cell does
    at.run()
    select(at, "rs_paired_format_depth_drill_row", "json")
    table = drill_table(at)
    assert set(table["model"]) == {"good", "weak"} and set(table["format"]) == {"json"}


def test_upload_needs_an_admin(env):
    at = open_page()  # a researcher sees every result, but loads none
    assert choice(at, "rs_source").value != "paper" and charts(at)
    assert not at.get("file_uploader")
    assert any("loaded by an admin" in c.value for c in notes_of(at))


@pytest.fixture
def admin_env(tmp_path, monkeypatch):
    from tests.results_data import build_dataset as build

    data = build(tmp_path, with_humans=False)
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_RESULTS_DIR", str(tmp_path / "incoming"))
    return data


def upload(at, name, data) -> AppTest:
    if not at.get("file_uploader"):  # the loading panel is closed while there are results
        at.session_state[LOADING] = True
        at.run()
    at.file_uploader(key="rs_upload").set_value((name, data, "application/json"))
    at.run()
    button = [b for b in at.button if b.label == "Import uploaded files"][0]
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_admin_uploads_a_file_and_the_heatmap_shows_it(admin_env):
    admin = {**admin_env["admin"]}
    at = open_page(admin)
    samples = admin_env["hard"]
    lines = result_lines(samples, models=("newcomer",))
    at = upload(at, "newcomer.jsonl", "\n".join(lines).encode())
    assert any(f"Imported {len(samples)} results from **newcomer.jsonl**" in s.value for s in notes_of(at, "success"))
    assert "newcomer" in set(charts(at)[0][1][0]["row_label"])
    uploads, = [d.value for d in at.dataframe if "filename" in d.value.columns]
    assert "newcomer.jsonl" in set(uploads["filename"])


@pytest.mark.parametrize("case, where", [("not JSON", "line 2"), ("missing field", "line 2"),
                                         ("unknown sample", "line 3"), ("Latin-1", "line 2"), ("UTF-16", "line 1"),
                                         ("50 MB", "file")])
def test_bad_upload_on_the_page_says_what_and_where(admin_env, case, where):
    from tests.results_data import bad_uploads

    at = open_page(admin_env["admin"])
    db = storage.open_db()
    before = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    data = bad_uploads(admin_env["hard"])[case][0]
    at = upload(at, "bad.jsonl", data)
    error, = notes_of(at, "error")
    assert "**bad.jsonl** was not imported, nothing was stored" in error.value
    assert f"- {where}: " in error.value
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == before


def test_folder_import_and_delete(admin_env):
    folder = Path(admin_env["data_dir"]).parent / "incoming"
    folder.mkdir()
    (folder / "extra.jsonl").write_text("\n".join(result_lines(admin_env["hard"][:5], models=("extra",))),
                                        encoding="utf-8")
    (folder / "broken.jsonl").write_text("{nope\n", encoding="utf-8")
    at = open_page(admin_env["admin"], boxes=[LOADING])
    [b for b in at.button if b.label.startswith("Import new files from")][0].click().run()
    assert any("Imported 5 results from **extra.jsonl**" in s.value for s in notes_of(at, "success"))
    assert any("**broken.jsonl** was not imported" in e.value and "- line 1: " in e.value for e in notes_of(at, "error"))
    choice = [o for o in at.selectbox(key="rs_delete_choice").options if "extra.jsonl" in o][0]
    at.selectbox(key="rs_delete_choice").set_value(choice)
    [b for b in at.button if b.label == "Delete this upload and its results"][0].click().run()
    assert any("5 result rows removed" in s.value for s in notes_of(at, "success"))
    assert "extra" not in set(results_frame.load_results(storage.open_db())["model"])


@pytest.fixture
def people_on_hard(tmp_path, monkeypatch):
    """A study's people answered Test-Hard items; no model result yet; Test and Test-Hard suites."""
    from structext_core.structext_eval import samples as samples_mod
    from structext_core.studio import accounts
    from tests.results_data import run_human_study

    hard, (test, _) = hard_samples(), make_test_and_real_samples()
    samples_mod.write_jsonl(tmp_path / "suites" / "test-hard.jsonl", hard)
    samples_mod.write_jsonl(tmp_path / "suites" / "test.jsonl", test)
    db = storage.open_db(tmp_path / "structext.db")
    admin = accounts.create_user(db, "lead", "password-123", "admin")
    run_human_study(db, hard)
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_RESULTS_DIR", str(tmp_path / "incoming"))
    return {"admin": admin, "db": db, "test": test, "hard": hard}


def in_order(node):
    """Every block and element below ``node``, as the page shows them (depth first)."""
    for child in expand(children(node)):
        yield child
        if getattr(child, "type", "") != "expander":
            yield from in_order(child)


def test_loading_comes_first_works_out_the_suite_and_shows_the_import(people_on_hard):
    """Issue 32, items 2 and 3: the loading panel is the page's first control for an admin; Test
    results import with its default (the suite is worked out from the file's sample ids; on
    820246e it was test-hard.jsonl, and the upload failed with one "unknown sample_id" per line);
    and the view then shows them, though no person answered their items."""
    at = open_page(people_on_hard["admin"])
    labels = [json.loads(e.proto.json).get("label") if getattr(e, "type", "") == "bidi_component" else
              getattr(e, "label", "") for e in in_order(at.main)]
    assert labels.index("Load results (admin)") < labels.index("Data")  # above the data and the views
    at.session_state[LOADING] = True  # closed, as people's results are there: opened by a click
    at.run()
    assert at.selectbox(key="rs_samples_file").value == "(worked out from each file)"
    lines = result_lines(people_on_hard["test"], models=("newcomer",))
    at = upload(at, "test-results.jsonl", "\n".join(lines).encode())
    assert not notes_of(at, "error"), [e.value for e in notes_of(at, "error")]
    message, = [s.value for s in notes_of(at, "success") if "test-results.jsonl" in s.value]
    assert f"Imported {len(lines)} results" in message and "matched to the samples of test.jsonl" in message
    assert at.toggle(key="rs_all_items").value is True
    assert {"newcomer", "human"} <= set(charts(at)[0][1][0]["row_label"])


def test_people_items_without_models_open_on_every_item(people_on_hard):
    """Issue 32, item 2: with no model result on the items people answered, Same items would show
    people alone (820246e did): the view opens on every item and says why."""
    results_store.import_results(people_on_hard["db"], "\n".join(result_lines(
        people_on_hard["test"], models=("newcomer",))).encode(), "t.jsonl", people_on_hard["test"])
    at = open_page(people_on_hard["admin"])
    assert at.toggle(key="rs_all_items").value is True
    assert {"newcomer", "human"} <= set(charts(at)[0][1][0]["row_label"])
    all_items(at).toggle(key="rs_all_items").set_value(False).run()
    assert any("No model result is on the items people answered" in i.value for i in notes_of(at, "info"))


def test_results_of_no_suite_are_refused_with_the_suites_tried(people_on_hard):
    at = open_page(people_on_hard["admin"])
    line = json.dumps({"sample_id": "elsewhere-t01-d1w1-000", "model": "m", "prompt": "p", "response": "r"})
    at = upload(at, "stray.jsonl", line.encode())
    error, = notes_of(at, "error")
    assert "**stray.jsonl** was not imported, nothing was stored" in error.value
    assert "no suite file holds all its samples (tried test.jsonl, test-hard.jsonl)" in error.value
    assert "- line 1: unknown sample_id 'elsewhere-t01-d1w1-000'" in error.value


# ---------------------------------------------------------------- strict or the paper's ROUGE-L


class Downloads(LightDownloads):
    """Every download button's file name, and what makes it on the click (the chart images and the CSV
    files are made then), called only when a test reads it."""

    def csv(self, name) -> pd.DataFrame:
        content = self.files[name]()
        return pd.read_csv(io.BytesIO(content.encode("utf-8") if isinstance(content, str) else bytes(content)))


@pytest.fixture
def downloads(monkeypatch):
    return Downloads(monkeypatch)


def titles(spec) -> tuple[str, str]:
    """A chart's title and subtitle (its lines joined); or the heatmap table's."""
    if "cells" in spec:
        return spec["title"], "; ".join(spec["subtitle"])
    title = spec["title"]
    subtitle = title.get("subtitle", "")
    return title["text"], "; ".join(subtitle) if isinstance(subtitle, list) else subtitle


def test_the_metric_control_defaults_to_ours_on_the_heatmap(env):
    at = open_page()
    control = at.radio(key="rs_rouge_heatmap")
    assert control.value == "strict" and control.options == [
        "strict (ours: the extracted answer)", "paper (the authors': the whole response)"]
    text, subtitle = titles(charts(at)[0][0])
    assert text.startswith("strict ROUGE-L ≥ 0.75 (%) by model and format")
    assert "rouge-score" in subtitle and "'### Answer:'" in subtitle


@pytest.mark.parametrize("view", ["depth_width", "people_vs_models", "test_vs_real"])
def test_views_of_the_papers_figures_open_on_its_metric(env, view):
    at = select(open_page(), "rs_view", view)
    assert at.radio(key=f"rs_rouge_{view}").value == "paper"
    frame = result_options.with_value(results_frame.load_results(storage.open_db()), rouge="paper")
    for spec, _ in charts(at):
        text, subtitle = titles(spec)
        assert "paper ROUGE-L ≥ 0.75 (%)" in text, text
        assert "pltrdy rouge" in subtitle and "whole response" in subtitle
    if view == "test_vs_real":
        data = charts(at)[0][1][0]
        weak = frame[(frame["model"] == "weak") & (frame["suite"] == "real-test")]["value"].mean()
        assert data[(data["model"] == "weak") & (data["set"] == "Real-Test")]["mean"].item() == pytest.approx(weak)


def test_switching_to_the_papers_metric_changes_the_heatmap(env):
    at = all_items(open_page())
    strict = charts(at)[0][1][0]
    at.radio(key="rs_rouge_heatmap").set_value("paper").run()
    assert not at.exception
    (spec, frames), = charts(at)[:1]
    paper = frames[0]
    assert titles(spec)[0].startswith("paper ROUGE-L ≥ 0.75 (%)")
    frame = people_vs_models.people_as(result_options.with_value(results_frame.load_results(storage.open_db()),
                                                           rouge="paper"))
    expected = frame.groupby(["model", "format"])["value"].mean()
    for record in paper.to_dict("records"):
        assert record["mean"] == pytest.approx(expected.loc[(record["row_label"], record["col_label"])])
    # the responses reason before their answer: the paper's metric, on the whole response, is lower
    assert paper["mean"].sum() < strict["mean"].sum()
    # each view keeps its own choice: the heatmap's does not move Figure 4's
    select(at, "rs_view", "depth_width")
    assert at.radio(key="rs_rouge_depth_width").value == "paper"


def test_exports_name_the_metric(env, downloads):
    at = open_page(boxes=[DRILL])
    names = set(downloads.files)
    for ext in ("png", "svg", "csv"):
        assert f"heatmap_model_format_rouge_l_strict_t0.75.{ext}" in names
    table = downloads.csv("heatmap_model_format_rouge_l_strict_t0.75.csv")
    assert list(table.columns[:2]) == ["metric", "threshold"]
    assert set(table["metric"]) == {"rouge_l_strict"} and set(table["threshold"]) == {0.75}
    assert any(n.startswith("drilldown_heatmap_rouge_l_strict_t0.75") for n in names)
    downloads.offered.clear()
    at.radio(key="rs_rouge_heatmap").set_value("paper").run()
    at.radio(key="rs_mode").set_value("raw").run()
    table = downloads.csv("heatmap_model_format_rouge_l_paper_raw.csv")
    assert set(table["metric"]) == {"rouge_l_paper"} and table["threshold"].isna().all()
    drill = downloads.csv("drilldown_heatmap_rouge_l_paper_raw.csv")
    assert set(drill["metric"]) == {"rouge_l_paper"} and "rouge_l_paper" in drill.columns


def test_paper_tables_name_their_metric(empty_env, downloads):
    at = open_page()
    assert any(c.value.startswith("Values: paper ROUGE-L ≥ 0.75 (%), as printed;") for c in notes_of(at))
    table = downloads.csv("paper_table3_format_rouge_l_paper.csv")
    assert set(table["metric"]) == {"rouge_l_paper"}
    assert table.drop(columns="metric").astype(str).equals(paper.load_table("table3"))
    # the chart, made for its files when one is asked for, names the metric too
    svg = downloads.files["paper_table3_format_rouge_l_paper.svg"]()
    assert b"Table 3: Test, open models" in svg and "paper ROUGE-L ≥ 0.75 (%), as printed".encode() in svg
    select(at, "rs_paper_view", "table6")
    assert any(c.value.startswith("Values: six metrics (%), as printed;") for c in notes_of(at))
    assert "paper_table6_all_table6_metrics.csv" in downloads.files


# ---------------------------------------------------------------- n in every cell, minimum n


def test_minimum_n_greys_out_thin_cells_and_says_so(env, downloads):
    at = open_page()
    assert at.number_input(key="rs_min_n").value == 1
    (spec, frames), = charts(at)[:1]
    assert not frames[0]["below_min"].any()
    assert (frames[0]["text"] == frames[0]["mean"].map("{:.1f}".format)).all()  # each cell: its mean, its n
    assert (frames[0]["n_label"] == frames[0]["n"].map("n={:,}".format)).all()
    at.number_input(key="rs_min_n").set_value(5).run()
    assert not at.exception
    (spec, frames), = charts(at)[:1]
    data = frames[0]
    thin = data["n"] < 5
    assert thin.any() and (~thin).any()  # people's cells are thin, models' are not
    assert (data["below_min"] == thin).all()  # greyed out, not hidden: every cell is still there
    assert set(data[thin]["background"]) == {heatmap_data.GREY}
    assert (data[thin]["tip"].str.endswith("\nn below 5")).all() and not data[~thin]["tip"].str.contains("below").any()
    assert any(f"Cells with n below 5 are greyed out ({int(thin.sum())} of {len(data)})" in c.value
               for c in notes_of(at))
    table = downloads.csv("heatmap_model_format_rouge_l_strict_t0.75.csv")
    assert list(table.columns[:3]) == ["metric", "threshold", "on_items"]
    assert set(table["on_items"]) == {"the 12 items answered by human"}
    assert table["below_min_n"].tolist() == (table["n"] < 5).tolist()


# ---------------------------------------------------------------- leaderboard


def board(at) -> pd.DataFrame:
    tables = [d.value for d in at.dataframe if "ci95_method" in d.value.columns]
    assert len(tables) == 1
    return tables[0]


def test_leaderboard_on_the_shared_items_sortable_and_downloadable(env, downloads):
    at = select(open_page(), "rs_view", "leaderboard")
    table = board(at)
    mean, low, high = ("mean_rouge_l_strict_t0.75", "ci95_low_rouge_l_strict_t0.75", "ci95_high_rouge_l_strict_t0.75")
    assert list(table.columns) == ["rank", "model", "prompt", "who", mean, "n", low, high, "ci95_method",
                                   "below_min_n"]
    frame = on_shared_items(people_vs_models.people_as(result_options.with_value(
        results_frame.load_results(storage.open_db()))))
    # people have no prompt: their rows show none (issue 46)
    frame = people_vs_models.people_without_prompt(frame)
    assert set(table.loc[table["who"] != "model", "prompt"]) == {people_vs_models.NO_PROMPT}
    expected = frame.groupby(["model", "prompt"])["value"].agg(["mean", "size"])
    assert len(table) == len(expected)
    for record in table.to_dict("records"):
        m, size = expected.loc[(record["model"], record["prompt"])]
        assert record[mean] == pytest.approx(m, abs=0.01) and record["n"] == size
        assert record[low] <= record[mean] + 0.01 and record[mean] <= record[high] + 0.01
    assert table[mean].tolist() == sorted(table[mean], reverse=True)  # best first
    assert set(table["who"]) == {"model", "people (pool)"}
    assert set(table["ci95_method"]) == {leaderboards.CI_METHODS["bootstrap"]}
    assert any(c.value.startswith("Leaderboard: strict ROUGE-L ≥ 0.75 (%), on the 12 items") for c in at.subheader)
    csv = downloads.csv("leaderboard_rouge_l_strict_t0.75.csv")
    assert list(csv.columns[:3]) == ["metric", "threshold", "on_items"] and mean in csv.columns
    assert len(csv) == len(table)
    at.radio(key="rs_board_sort").set_value("n").run()
    assert board(at)["n"].tolist() == sorted(board(at)["n"], reverse=True)
    at.radio(key="rs_board_sort").set_value("name").run()
    assert list(zip(board(at)["model"], board(at)["prompt"])) == sorted(zip(table["model"], table["prompt"]))


def test_leaderboard_of_exact_match_uses_wilson(env, downloads):
    import math

    at = select(open_page(), "rs_view", "leaderboard")
    all_items(at)
    select(at, "rs_metric", "exact_match")
    table = board(at)
    assert set(table["ci95_method"]) == {leaderboards.CI_METHODS["wilson"]}
    frame = results_frame.load_results(storage.open_db())
    good = frame[(frame["model"] == "good") & (frame["prompt"] == "naive")]["exact_match"]
    k, n, z = int(good.sum()), len(good), 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    row = table[(table["model"] == "good") & (table["prompt"] == "naive")].iloc[0]
    assert row["mean_exact_match"] == pytest.approx(100 * p, abs=0.01) and row["n"] == n
    assert row["ci95_low_exact_match"] == pytest.approx(100 * (centre - half), abs=0.01)
    assert row["ci95_high_exact_match"] == pytest.approx(100 * (centre + half), abs=0.01)
    csv = downloads.csv("leaderboard_exact_match.csv")
    assert set(csv["metric"]) == {"exact_match"} and set(csv["on_items"]) == {"all items"}


def test_leaderboard_flags_rows_below_the_minimum_n(env):
    at = select(open_page(), "rs_view", "leaderboard")
    at.number_input(key="rs_min_n").set_value(20).run()
    table = board(at)
    # on the 12 shared items: 12 answers per model and prompt; 24 of the pool of two people
    assert table["below_min_n"].tolist() == (table["n"] < 20).tolist()
    assert table.loc[~table["below_min_n"], "model"].tolist() == ["human"]
    assert any("Rows with n below 20 are ticked under “n below minimum” (below_min_n) (4 of 5)" in c.value for c in notes_of(at))
    at.radio(key="rs_people_as").set_value("each").run()
    each = board(at)  # each person apart: 12 answers each, and no pool beside them
    assert set(each["who"]) == {"model", "person"} and each["below_min_n"].all()


# ---------------------------------------------------------------- correlations need 3 groups


def test_correlation_over_two_groups_is_refused(env):
    at = select(open_page(), "rs_view", "metric_correlation")
    assert charts(at)  # one point per model and prompt: enough groups
    at.multiselect(key="rs_corr_by").set_value(["model"]).run()
    assert not at.exception
    # good and weak have every metric, people have no BLEU: 2 groups, where r would print 1.000
    assert not charts(at)
    info, = notes_of(at, "info")
    assert "at least 3 groups with every metric; there are 2" in info.value and "±1" in info.value


# ---------------------------------------------------------------- the view's state in the URL


def test_the_url_follows_the_controls_and_reopens_the_same_view(env):
    at = select(open_page(boxes=[FILTERS]), "rs_view", "heatmap")
    at.selectbox(key="rs_row").set_value("task")
    at.selectbox(key="rs_col").set_value("depth")
    at.radio(key="rs_rouge_heatmap").set_value("paper")
    at.number_input(key="rs_min_n").set_value(3)
    at.run()
    at.multiselect(key="rs_filter_model").set_value(["good", "human"]).run()
    assert not at.exception
    url = dict(at.query_params)
    assert url["view"] == "heatmap" and url["rows"] == "task" and url["cols"] == "depth"
    assert url["rouge"] == "paper" and url["min_n"] == "3" and url["items"] == "shared" and url["people"] == "human"
    assert url["model"] == ["good", "human"]
    before = charts(at)[0]
    # a new session opening that address: the same chart, its settings said under the closed box
    again = AppTest.from_file(str(PAGE), default_timeout=60)
    again.session_state["user"] = RESEARCHER
    again.query_params.update(url)
    again.run()
    assert not again.exception
    after = charts(again)[0]
    assert after[0]["title"] == before[0]["title"]
    assert after[1][0].equals(before[1][0])
    assert dict(again.query_params) == url  # nothing to note, nothing rewritten
    assert not any(c.value.startswith("Ignored in this link") for c in notes_of(again))
    assert [c.value for c in notes_of(again) if c.value.startswith("Settings:")] == [
        "Settings: paper ROUGE-L ≥ 0.75 · people pooled as `human` · minimum n 3 · "
        "rows task category × columns depth (natural: depth, width in order)."]
    again.session_state[SETTINGS] = True  # the box opened: its controls hold the link's values
    again.run()
    assert again.selectbox(key="rs_row").value == "task" and again.selectbox(key="rs_col").value == "depth"
    assert again.radio(key="rs_rouge_heatmap").value == "paper" and again.number_input(key="rs_min_n").value == 3
    assert again.multiselect(key="rs_filter_model").value == ["good", "human"]
    assert charts(again)[0][1][0].equals(before[1][0]) and dict(again.query_params) == url


def open_with(params: dict, user=RESEARCHER) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    if user is not None:
        at.session_state["user"] = user
    at.session_state[SETTINGS] = True
    at.query_params.update(params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_opening_a_shared_leaderboard_link(env):
    at = open_with({"view": "leaderboard", "metric": "exact_match", "items": "all", "min_n": "40",
                    "board": "ci_low", "prompt": "hint"})
    assert choice(at, "rs_view").value == "leaderboard" and at.selectbox(key="rs_metric").value == "exact_match"
    assert at.toggle(key="rs_all_items").value is True and at.radio(key="rs_board_sort").value == "ci_low"
    table = board(at)
    assert set(table["prompt"]) == {"hint"}
    assert table["ci95_low_exact_match"].tolist() == sorted(table["ci95_low_exact_match"], reverse=True)
    assert table["below_min_n"].tolist() == (table["n"] < 40).tolist()


@pytest.mark.parametrize("params, notes", [
    ({"view": "nope", "threshold": "NaN", "min_n": "-4"},
     ["view='nope' is not a valid choice", "threshold='NaN'", "min_n='-4'"]),
    ({"min_n": "²"}, ["min_n='²' is not a valid choice"]),
    ({"rows": "x" * 5000, "zzz": "1", "prompt": ["naive", "<script>"], "depth": "9"},
     ["rows: a value longer than 200", "unknown parameter 'zzz'", "prompt: '<script>' not among the results",
      "depth: '9' not among the results"]),
    ({"threshold": "0.73", "min_n": "1e9", "a": "nobody", "people": "good", "metric": "exact_match ",
      "items": "some"},
     ["threshold='0.73'", "min_n='1e9'", "a='nobody'", "people='good'", "metric='exact_match '", "items='some'"]),
])
def test_bad_values_in_the_url_are_ignored_with_a_note(env, params, notes):
    at = open_with(params)
    note, = [c.value for c in notes_of(at) if c.value.startswith("Ignored in this link")]
    for expected in notes:
        assert expected in note, note
    assert "x" * 100 not in note  # a long value is not echoed
    # the defaults stand in for what was ignored, and the page works
    assert choice(at, "rs_view").value == "heatmap" and at.slider(key="rs_threshold").value == 0.75
    assert at.number_input(key="rs_min_n").value == 1 and at.selectbox(key="rs_row").value == "model"
    assert charts(at)
    if "prompt" in params:  # the valid part of a list is kept
        assert at.multiselect(key="rs_filter_prompt").value == ["naive"]


def test_many_parameters_are_cut_off(env):
    at = open_with({f"p{i}": str(i) for i in range(200)})
    note, = [c.value for c in notes_of(at) if c.value.startswith("Ignored in this link")]
    assert "only the first 40 of 200 parameters" in note
    assert charts(at)


def test_visitor_with_a_shared_link_sees_the_papers_table_it_names(env):
    at = open_with({"source": "paper", "paper": "table4", "view": "leaderboard", "model": "human:ann2"}, user=None)
    assert choice(at, "rs_paper_view").value == "table4"
    assert not any(c.value.startswith("Ignored in this link") for c in notes_of(at))  # the rest waits for a log-in
    assert "human:ann2" not in json.dumps([spec for spec, _ in charts(at)])


def test_a_link_naming_people_shows_an_annotator_in_public_mode_nothing_of_them(env):
    """A URL is no key: an annotator (public read-only mode) opening a researcher's link to
    people's results gets the models of suites in no open study, and a note."""
    from structext_core.studio import access, accounts

    db = storage.open_db()
    admin = accounts.get_user(db, "lead")
    access.set_public_mode(db, True, admin)
    try:
        annotator = accounts.get_user(db, "ann1")
        at = open_with({"view": "leaderboard", "items": "shared", "people": "human:ann2", "model": "human:ann2"},
                       user=annotator)
        note, = [c.value for c in notes_of(at) if c.value.startswith("Ignored in this link")]
        assert "people='human:ann2' is not a valid choice" in note
        table = board(at)
        assert set(table["who"]) == {"model"} and not any(str(m).startswith("human") for m in table["model"])
        assert not at.get("toggle")  # no people to compare with: no choice of items
    finally:
        access.set_public_mode(db, False, admin)


def test_the_note_on_a_bad_link_stays_until_the_view_changes(env):
    at = open_with({"view": "leaderboard", "colour": "red"})
    ignored = [c.value for c in notes_of(at) if c.value.startswith("Ignored in this link")]
    assert ignored == ["Ignored in this link: unknown parameter 'colour'."]
    assert "colour" not in at.query_params  # the address now holds only what was understood
    at.run()  # a rerun (a log-in, a click elsewhere) keeps it
    assert [c.value for c in notes_of(at) if c.value.startswith("Ignored in this link")] == ignored
    at.radio(key="rs_board_sort").set_value("n").run()
    at.run()
    assert not [c.value for c in notes_of(at) if c.value.startswith("Ignored in this link")]
    assert at.query_params["board"] == "n"


def test_a_file_scored_with_the_papers_metric_is_named_where_the_view_differs(admin_env, tmp_path):
    """Issue 20: the upload keeps the metric its file was scored with; the page says so while the
    view shows the other ROUGE-L, and not once the view shows the same."""
    from structext_core.cli.main import main as cli
    from structext_core.structext_eval.samples import write_jsonl

    samples = admin_env["hard"]
    samples_file, responses, scored = tmp_path / "s.jsonl", tmp_path / "r.jsonl", tmp_path / "scored.jsonl"
    write_jsonl(samples_file, samples)
    responses.write_text("\n".join(result_lines(samples, models=("papered",))) + "\n", encoding="utf-8")
    assert cli(["score", str(responses), "--samples", str(samples_file), "--metric", "paper", "--out", str(scored),
                "--n-boot", "0", "--no-bleu"]) == 0
    at = upload(open_page(admin_env["admin"]), "papered.jsonl", scored.read_bytes())
    assert any("scored with the paper metric before" in s.value for s in notes_of(at, "success"))
    table, = [d.value for d in at.dataframe if "filename" in d.value.columns]
    assert table.set_index("filename").loc["papered.jsonl", "scored_with"] == "paper"
    assert at.radio(key="rs_rouge_heatmap").value == "strict"
    notes = [c.value for c in notes_of(at) if "Scored with another metric before import" in c.value]
    assert len(notes) == 1 and "papered.jsonl (paper)" in notes[0] and "strict ROUGE-L" in notes[0]
    at.radio(key="rs_rouge_heatmap").set_value("paper").run()
    assert not [c for c in notes_of(at) if "Scored with another metric before import" in c.value]


def test_the_results_guide_names_the_results_axes_as_the_page_does():
    """Regression (issue item 9i): the README called an axis "task" where the page says "task category";
    the Results guide (docs/guides/results.md, moved from the README) is held to the page's words."""
    from structext_core.structext_eval.ui.results_common import DIMENSION_TITLES as titles

    guide = (PAGE.parents[1] / "docs" / "guides" / "results.md").read_text(encoding="utf-8")
    section = guide.split("\n## AIBench's human side\n", 1)[0]
    heatmap = next(line for line in section.splitlines() if line.startswith("- *Heatmap*"))
    assert f"any two of {', '.join(titles.values())} as rows" in heatmap
    assert "format, task," not in section.replace("\n", " ")


def test_the_heatmap_chart_is_built_only_for_its_files(env, monkeypatch, downloads):
    """Building an Altair heatmap and converting it cost every run of Results about 0.2 s (issue 46):
    the page draws a table, and builds the chart only when its PNG or SVG is made, once for the same
    inputs; other axes build another."""
    from structext_core.views import charts as chart_module

    built = []
    original = chart_module.heatmap_chart

    def counting(*args, **kwargs):
        built.append(args[1:3])
        return original(*args, **kwargs)

    counting.__qualname__ = "counting_heatmap_chart"  # a name of its own in the cache's key
    monkeypatch.setattr(chart_module, "heatmap_chart", counting)
    at = open_page()
    first = charts(at)
    at.run()
    assert not built and charts(at)[0][0] == first[0][0]  # drawn again, alike, no chart built
    name = "heatmap_model_format_rouge_l_strict_t0.75"
    svg = downloads.files[f"{name}.svg"]()
    png = downloads.files[f"{name}.png"]()
    assert len(built) == 1 and svg.startswith(b"<svg") and png.startswith(b"\x89PNG")  # built once for both
    at.selectbox(key="rs_row").set_value("prompt").run()
    downloads.files["heatmap_prompt_format_rouge_l_strict_t0.75.svg"]()
    assert len(built) == 2 and built[-1][0] == "prompt"


# ---------------------------------------------------------------- what the first view sends (issue 46)


def test_the_first_view_draws_the_heatmap_and_no_grid_until_asked(env):
    """Issue 46: a grid (st.dataframe) costs the page about 0.6 s in the browser. The first view draws
    the heatmap, its purpose, and no grid: the sources, the filters and the samples behind a cell are
    boxes whose content comes when one is opened."""
    at = open_page()
    assert len(charts(at)) == 1 and not at.dataframe and not at.multiselect
    labels = sections(at)
    sources = results_frame.describe_sources(results_frame.load_results(storage.open_db()))
    assert f"Sources ({len(sources)})" in labels and "Filters" in labels and "Samples behind a cell" in labels
    assert not [b for b in at.selectbox if b.label == "Sample"]
    at = open_section(at, f"Sources ({len(sources)})")  # a click on its header
    assert len(at.dataframe) == 1 and "CSV" in download_labels(at)
    at.session_state[DRILL] = True
    at.run()
    assert len(drill_table(at)) and [b for b in at.selectbox if b.label == "Sample"]
    at.session_state[FILTERS] = True
    at.run()
    assert at.multiselect(key="rs_filter_prompt")


def test_a_filter_stays_on_in_the_closed_box_and_says_so(env):
    at = open_page(boxes=[FILTERS])
    at.multiselect(key="rs_filter_prompt").set_value(["naive"]).run()
    on = charts(at)[0][1][0]["n"].sum()
    at.session_state[FILTERS] = False  # closed: its boxes are not drawn, the filter stays on
    at.run()
    assert not at.multiselect and charts(at)[0][1][0]["n"].sum() == on
    assert any(c.value == "Filters on: prompt naive." for c in notes_of(at))
    assert at.query_params["prompt"] == "naive"
    at.session_state[FILTERS] = True
    at.run()
    assert at.multiselect(key="rs_filter_prompt").value == ["naive"]


def test_a_click_on_a_cell_opens_the_samples_behind_it():
    """A chart's click (its selection event: Compare two models' heatmap; the heatmap view's table calls
    follow_pick itself) points the drill-down at the cell and opens its box."""
    def page():
        import streamlit as st

        from structext_core.structext_eval.ui.results_common import DRILL_OPEN, follow_click
        from structext_core.views import charts

        class Event:
            selection = {charts.CELL_SELECTION: [{"row_label": "weak", "col_label": "yaml"}]}

        follow_click(Event(), "heatmap_model_format")
        st.write(st.session_state.get(DRILL_OPEN), st.session_state["rs_heatmap_model_format_drill_row"])

    at = AppTest.from_function(page).run()
    assert at.session_state["rs_drill_open"] is True
    assert at.session_state["rs_heatmap_model_format_drill_col"] == "yaml"


def test_an_admin_with_results_gets_the_loading_panel_closed_and_empty(admin_env):
    at = open_page(admin_env["admin"])
    assert sections(at)[0] == "Load results (admin)"
    assert not at.get("file_uploader") and not at.dataframe
    at.session_state[LOADING] = True
    at.run()
    assert at.get("file_uploader") and [d for d in at.dataframe if "filename" in d.value.columns]


def test_the_papers_whole_table_and_its_source_are_boxes_drawn_when_opened(empty_env):
    at = open_page()
    assert len(html_tables(at)) == 1 and not at.dataframe and not charts(at)
    box, = [label for label in sections(at) if label.endswith("every column as printed (24 rows)")]
    assert "Where these figures come from" in sections(at)  # closed: a light header
    assert not any("Known oddities" in m.value for m in at.markdown)
    at.session_state["rs_paper_table_open_table3_format"] = True
    at = open_section(at, "Where these figures come from")  # a click on its header opens it
    assert [e.label for e in at.expander if e.label == "Where these figures come from"]
    assert at.dataframe[0].value.astype(str).equals(paper.load_table("table3"))
    assert any("Known oddities" in m.value for m in at.markdown)


def test_the_loading_panel_is_open_on_a_fresh_install_and_the_first_import_shows(tmp_path, monkeypatch):
    """With no results the loading panel is open at once (nothing to click); after the first import
    the view shows the results and the panel closes to its label."""
    from structext_core.structext_eval import samples as samples_mod
    from structext_core.studio import accounts

    hard = hard_samples()
    samples_mod.write_jsonl(tmp_path / "suites" / "test-hard.jsonl", hard)
    admin = accounts.create_user(storage.open_db(tmp_path / "structext.db"), "lead", "password-123", "admin")
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_RESULTS_DIR", str(tmp_path / "incoming"))
    at = open_page(admin)
    assert at.get("file_uploader") and choice(at, "rs_source").value == "paper"
    at = upload(at, "first.jsonl", "\n".join(result_lines(hard, models=("first",))).encode())
    assert any("Imported" in s.value and "first.jsonl" in s.value for s in notes_of(at, "success"))
    assert choice(at, "rs_source").value == "imported" and "first" in set(charts(at)[0][1][0]["row_label"])
    assert not at.get("file_uploader") and "Load results (admin)" in sections(at)
