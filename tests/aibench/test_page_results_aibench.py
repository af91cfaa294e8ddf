"""AIBench on the Results page (AppTest): the paper's tables for everyone, exactly as printed;
stored results, heatmaps and drill-down with the image for those who may see answers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import protocol
from structext_core.aibench import config as aibench_config
from structext_core.aibench import paper as aibench_paper
from structext_core.aibench import store as aibench_store
from structext_core.aibench import views
from tests.pages.heatmap_tables import heatmap_tables
from tests.pages.html_tables import html_table_help, html_tables
from tests.pages.light_choices import choice, choose, sections
from tests.pages.light_parts import notes

PAGE = Path(__file__).resolve().parents[2] / "pages" / "results.py"
RESEARCHER = {"id": 98, "username": "reader", "role": "researcher"}


@pytest.fixture(scope="module")
def aibench_dir(tmp_path_factory, pool):
    root = tmp_path_factory.mktemp("aibench_page")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(aibench_config.DIR_ENV, str(root / "aibench"))
        patch.setattr(aibench_store, "SYNTHETIC_PAPERS", 2)
        aibench_store.add_reference_predictions(pool)
    return root / "aibench"


@pytest.fixture
def env(tmp_path, monkeypatch, aibench_dir):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv(aibench_config.DIR_ENV, str(aibench_dir))
    return aibench_dir


#: The keys of the boxes drawn only while open (opening one reruns the page).
DRILL, DETAIL, UPLOAD = "rs_aib_drill_open", "rs_aib_table3_detail_open", "rs_aib_upload_open"


def open_aibench(user, boxes=()) -> AppTest:
    """AIBench on Results as ``user`` opens it, with the lazy ``boxes`` open (as a click on each does)."""
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    if user is not None:
        at.session_state["user"] = user
    for box in boxes:
        at.session_state[box] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    choose(at, "rs_benchmark", "aibench")
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame(at, column):
    """The one table on the page with this column (a grid or a plain table)."""
    (found,) = [t for t in [d.value for d in at.dataframe] + html_tables(at) if column in t.columns]
    return found


def test_structext_stays_the_default(env):
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.run()
    assert choice(at, "rs_benchmark").value == "structext-eval"
    assert choice(at, "rs_benchmark").options == [b.display_name for b in protocol.REGISTRY.values()]  # every member, in order


def test_visitors_see_the_papers_tables_exactly_as_printed(env):
    at = open_aibench(None)
    for key in aibench_paper.TABLES:
        choose(at, "rs_aib_paper", key)
        shown = html_tables(at, numbers=False)[0]
        assert shown.equals(aibench_paper.load_table(key)), key
    assert "Model results on AIBench data sets are shown to researchers and admins." in [c.value for c in notes(at, "caption")]
    assert not any("O 95%" in t.columns or "C n" in t.columns for t in [d.value for d in at.dataframe] + html_tables(at))


def test_researchers_see_table3_heatmaps_and_the_drill_down(env):
    at = open_aibench(RESEARCHER, boxes=[DRILL])
    assert choice(at, "rs_aib_data").value == "synthetic"
    table = frame(at, "O 95%")
    expected = json.loads((env / "synthetic" / "expected.json").read_text())["perfect_solver"]
    for _, row in table.iterrows():  # to one decimal, as the paper prints it
        assert [row["C"], row["T"], row["P"], row["S"]] == [float(f"{expected[row['system']][level]:.1f}")
                                                            for level in "1234"]
    assert len(heatmap_tables(at)) == 1 and not at.get("vega_lite_chart")
    for heatmap in ("system x conference", "solver x system", "system x kind of question"):
        choose(at, "rs_aib_heatmap", heatmap)
        assert not at.exception and len(heatmap_tables(at)) == 1
        (data, cells), = heatmap_tables(at)
        assert data["title"].startswith(f"AIBench: {heatmap}, ") and not data["clickable"]
        assert len(cells) and cells["mean"].notna().all(), choice  # every cell has a value
    at.selectbox(key="rs_aib_system").set_value("Blank Image").run()
    at.selectbox(key="rs_aib_level").set_value(2).run()
    drill = frame(at, "reply")
    assert len(drill) > 0 and not drill["correct"].any() and (drill["key"] != drill["letter"]).all()
    (image,) = at.get("image")
    assert image.captions[0].startswith(f"Blank Image, {drill['paper_id'].iloc[0]}: ")


def test_table3_and_the_heatmap_fit_the_page_and_name_levels_alike(env):
    # regression (issue 32, item 8): Table 3 wider than the page, the heatmap's levels 1-4 against
    # the table's C/T/P/S, no n in its cells, solver names cut at 180 px
    at = open_aibench(RESEARCHER, boxes=[DRILL, DETAIL])
    table = frame(at, "O 95%")
    assert list(table.columns) == ["system", "solver", "C", "T", "P", "S", "A", "O", "O 95%"]
    detail = frame(at, "C 95%")
    assert len(detail) == len(table) and (detail["C n"] > 0).all()
    (column_help,) = [h for h in html_table_help(at) if "O 95%" in h]
    assert column_help["C"].startswith("C · Component Existence") and column_help["O"].startswith("Overall")
    assert column_help["O 95%"] == views.TABLE3_HELP["O_interval"]
    labels = ["C · Component Existence", "T · Local Topology", "P · Phase Architecture", "S · Global Semantics"]
    (data, cells), = heatmap_tables(at)
    assert data["cols"] == labels and set(cells["col_label"]) == set(labels)  # levels in Table 3's order
    assert (cells["n_label"] == [f"n={n:,}" for n in cells["n"]]).all()
    assert (cells["text"] == cells["mean"].map("{:.1f}".format)).all()  # each cell: its value, then its n
    choose(at, "rs_aib_heatmap", "solver x system")
    (data, cells), = heatmap_tables(at)
    assert "perfect reader (synthetic truth)" in data["rows"]  # a table's labels are whole (a chart cut them)
    assert at.selectbox(key="rs_aib_level").options == labels
    at.selectbox(key="rs_aib_level").set_value(3).run()
    assert set(frame(at, "reply")["level"]) == {labels[2]}


# ---------------------------------------------------------------- admins upload predictions

ADMIN = {"id": 97, "username": "lead", "role": "admin"}


@pytest.fixture
def own_copy(env, tmp_path, monkeypatch):
    """A copy of the stored sets this test may add to."""
    import shutil
    copy = tmp_path / "aibench-copy"
    shutil.copytree(env, copy)
    monkeypatch.setenv(aibench_config.DIR_ENV, str(copy))
    return copy


def truth_lines(folder, solver="uploaded", system="Blank Image") -> list[str]:
    rows = [json.loads(line) for line in (folder / "synthetic" / "truth.jsonl").read_text().splitlines()]
    return [json.dumps({"paper_id": r["paper_id"], "question_id": r["question_id"], "system": r["system"],
                        "solver": solver, "prediction": r["truth"]}) for r in rows if r["system"] == system]


def store(at, name: str, data: bytes, label: str = "") -> AppTest:
    if not at.get("file_uploader"):  # the upload box is drawn only while open
        at.session_state[UPLOAD] = True
        at.run()
    at.file_uploader(key="rs_aib_upload").set_value((name, data, "application/json"))
    at.run()
    if label:
        at.text_input(key="rs_aib_upload_label").input(label)
    [b for b in at.button if b.label == "Store the predictions"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_only_admins_may_upload_predictions(env):
    at = open_aibench(RESEARCHER)
    assert at.get("file_uploader") == [] and choice(at, "rs_aib_data").value == "synthetic"
    at = open_aibench(ADMIN, boxes=[UPLOAD])
    assert len(at.get("file_uploader")) == 1


def test_an_admin_uploads_predictions_and_table3_shows_the_new_solver(own_copy):
    at = open_aibench(ADMIN)
    lines = truth_lines(own_copy)
    at = store(at, "mine.jsonl", "\n".join(lines).encode())
    assert any(f"Stored {len(lines):,} predictions as 'mine' with the data set 'synthetic'." in s.value
               for s in notes(at, "success"))
    table = frame(at, "O 95%")
    assert "uploaded" in set(table["solver"])
    assert (own_copy / "synthetic" / "predictions" / "mine.jsonl").is_file()


@pytest.mark.parametrize("case, where", [
    ("not JSON", "mine.jsonl: line 2: not a JSON object"),
    ("unknown system", "mine.jsonl: line 1.system: 'Nobody' has no images in the data set"),
    ("missing field", "mine.jsonl: line 1.solver: missing or not text"),
    ("Latin-1", "mine.jsonl: line 2: not UTF-8 text"),
    ("empty", "mine.jsonl: holds no predictions"),
    ("stored label", "perfect-reader.jsonl: a predictions file of that name is stored"),
])
def test_a_bad_upload_names_line_and_field_and_stores_nothing(own_copy, case, where):
    good = truth_lines(own_copy)
    data = {
        "not JSON": good[0] + "\n{nope\n",
        "unknown system": good[0].replace('"Blank Image"', '"Nobody"') + "\n",
        "missing field": good[0].replace('"solver"', '"solve"') + "\n",
        "Latin-1": good[0] + "\n" + good[1].replace('"uploaded"', '"caf\u00e9"') + "\n",
        "empty": "\n",
        "stored label": "\n".join(good),
    }[case]
    raw = data.encode("latin-1") if case == "Latin-1" else data.encode()
    before = sorted(p.name for p in (own_copy / "synthetic" / "predictions").iterdir())
    at = store(open_aibench(ADMIN), "mine.jsonl", raw, label="perfect-reader" if case == "stored label" else "")
    (error,) = notes(at, "error")
    assert "**mine.jsonl** was not stored, nothing was" in error.value
    assert f"- {where}" in error.value.replace("\\", "")
    assert sorted(p.name for p in (own_copy / "synthetic" / "predictions").iterdir()) == before


# ---------------------------------------------------------------- the view's state in the URL

def test_the_url_follows_the_aibench_controls_and_reopens_the_same_view(env):
    at = open_aibench(RESEARCHER, boxes=[DRILL])
    choose(at, "rs_aib_paper", "table2")
    choose(at, "rs_aib_heatmap", "solver x system")
    at.selectbox(key="rs_aib_system").set_value("Blank Image").run()
    at.selectbox(key="rs_aib_level").set_value(3).run()
    assert not at.exception
    url = dict(at.query_params)
    assert url["benchmark"] == "aibench" and url["table"] == "table2" and url["data"] == "synthetic"
    assert url["heatmap"] == "solver x system" and url["system"] == "Blank Image" and url["level"] == "3"
    again = AppTest.from_file(str(PAGE), default_timeout=60)
    again.session_state["user"] = RESEARCHER
    again.query_params.update(url)
    again.run()
    assert not again.exception, [e.value for e in again.exception]
    assert choice(again, "rs_benchmark").value == "aibench"
    assert choice(again, "rs_aib_paper").value == "table2"
    assert choice(again, "rs_aib_heatmap").value == "solver x system"
    assert again.selectbox(key="rs_aib_system").value == "Blank Image" and again.selectbox(key="rs_aib_level").value == 3
    assert frame(again, "reply").equals(frame(at, "reply"))
    assert dict(again.query_params) == url
    assert not any(c.value.startswith("Ignored in this link") for c in notes(again, "caption"))


def test_a_hostile_aibench_link_is_ignored_with_a_note(env):
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["user"] = RESEARCHER
    at.query_params.update({"benchmark": "aibench", "system": "<script>x</script>", "level": "9", "data": "../x",
                            "colour": "red", "heatmap": "system x level"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert choice(at, "rs_aib_heatmap").value == "system x level"
    assert at.selectbox(key="rs_aib_level").value == 1 and choice(at, "rs_aib_data").value == "synthetic"
    (note,) = [c.value for c in notes(at, "caption") if c.value.startswith("Ignored in this link")]
    for part in ("is not a valid choice", "level='9'", "data='../x'", "unknown parameter 'colour'"):
        assert part in note.replace("\\", "")
    assert "\\<script>" in note and note.count("<") == note.count("\\<")  # shown as text, never as HTML
    assert "colour" not in at.query_params and at.query_params["level"] == "1"
    at.run()  # a rerun keeps the note; changing the view ends it
    assert any(c.value.startswith("Ignored in this link") for c in notes(at, "caption"))
    at.selectbox(key="rs_aib_level").set_value(2).run()
    assert not any(c.value.startswith("Ignored in this link") for c in notes(at, "caption"))


def test_a_visitors_link_opens_the_papers_table_and_back_to_structext_clears_it(env):
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.query_params.update({"benchmark": "aibench", "table": "table2", "system": "Blank Image"})
    at.run()
    assert not at.exception
    assert choice(at, "rs_aib_paper").value == "table2"
    assert dict(at.query_params) == {"benchmark": "aibench", "table": "table2"}
    choose(at, "rs_benchmark", "structext-eval")
    assert not at.exception
    assert "benchmark" not in at.query_params and "table" not in at.query_params
    assert not any(c.value.startswith("Ignored in this link") for c in notes(at, "caption"))


def test_the_first_view_draws_table3_and_the_heatmap_and_no_grid(env):
    """Issue 46: a grid (st.dataframe) costs the page about 0.4-0.6 s in the browser, st.table Arrow's
    reader. The paper's tables and Table 3 are plain tables, the heatmap a tinted one; Table 3's detail,
    the questions behind a cell and the admin's upload are boxes whose content comes when one is opened."""
    at = open_aibench(ADMIN)
    assert not at.dataframe and not at.table and len(frame(at, "O 95%")) > 0
    assert len(heatmap_tables(at)) == 1 and not at.get("file_uploader") and not at.get("image")
    assert {"n and Wilson 95% interval of each level", "Questions behind a cell",
            "Upload predictions (admin)"} <= set(sections(at))
    assert html_tables(at, numbers=False)[0].equals(aibench_paper.load_table(next(iter(aibench_paper.TABLES))))
    for box in (DRILL, DETAIL, UPLOAD):
        at.session_state[box] = True  # as a click on the box does
    at.run()
    assert frame(at, "reply") is not None and frame(at, "C 95%") is not None and at.get("file_uploader")
    choose(at, "rs_aib_paper", "table2")
    correlations = html_tables(at, numbers=False)[1]
    assert list(correlations["metric"]) == list(aibench_paper.metric_rank_correlations()["metric"])
    assert not correlations.isna().any().any() and "0.9000" in set(correlations["spearman_rho"])
