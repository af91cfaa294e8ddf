"""AIBench's Results views as data: Table 3, heatmaps, solver robustness, failing kinds, drill-down."""
from __future__ import annotations

import json
import math

import pytest

from structext_core.aibench import predictions, scoring
from structext_core.aibench import views as views
from structext_core.aibench.dataset import Dataset, ImageRecord
from structext_core.aibench.model import ORIGINAL_SYSTEM
from structext_core.aibench.papers import parse_paper
from structext_core.aibench.synthetic import build
from structext_core.views import heatmap_table


@pytest.fixture(scope="module")
def scored():
    built = [build.build_paper(5, i) for i in range(3)]
    data = Dataset()
    for b in built:
        paper, problems = parse_paper(json.dumps(build.paper_document(b)).encode(), "x")
        assert not problems
        data.papers[paper.id] = paper
        for system in build.SYSTEMS:
            data.images[(system, paper.id)] = ImageRecord(system, paper.id, f"images/{system}/{paper.id}.png", 9, 9)
    lines = []
    for b in built:
        for row in build.truth_rows(b):
            base = {"paper_id": row["paper_id"], "question_id": row["question_id"], "system": row["system"]}
            lines.append({**base, "solver": "reader", "prediction": row["truth"]})
            lines.append({**base, "solver": "reader-2", "prediction": row["truth"]})
            lines.append({**base, "solver": "always-A", "prediction": "A"})
    text = "".join(json.dumps(r) + "\n" for r in lines)
    preds = predictions.parse_predictions(text, data)
    return data, preds, scoring.answer_rows(data, preds)


def test_table3_view_has_n_and_intervals(scored):
    data, preds, _ = scored
    table = views.table3_view(scoring.score_systems(data, preds))
    assert len(table) == 3 * len(build.SYSTEMS)
    assert table["O"].isna().all()  # the synthetic set has no aesthetic scores: no overall
    row = table[(table["system"] == ORIGINAL_SYSTEM) & (table["solver"] == "reader")].iloc[0]
    assert (row["C"], row["T"], row["P"], row["S"]) == (100.0, 100.0, 100.0, 100.0)
    assert row["C_n"] > 0 and row["C_interval"].endswith("-100.0")


def test_heatmaps(scored):
    data, preds, rows = scored
    by_level = views.heatmap(rows, "system", "level")
    scores = {(s.system, s.solver): s for s in scoring.score_systems(data, preds)}
    reader_rows = rows[rows["solver"] == "reader"]
    cells = views.heatmap(reader_rows, "system", "level").set_index(["system", "level"])
    for (system, solver), s in scores.items():
        if solver == "reader":
            for level, score in s.levels.items():
                assert cells.loc[(system, level), "value"] == score.accuracy
    assert set(by_level.columns) == {"system", "level", "value", "n"}
    conf = views.heatmap(reader_rows, "system", "conference")
    blank = conf[conf["system"] == "Blank Image"]
    assert (blank["value"] < 100).all() and (conf[conf["system"] == ORIGINAL_SYSTEM]["value"] == 100).all()
    solver_system = views.heatmap(rows, "solver", "system")
    assert len(solver_system) == 3 * len(build.SYSTEMS)
    kinds = views.heatmap(views.with_kinds(reader_rows, data), "system", "kind").set_index(["system", "kind"])
    failing = views.failing_kinds(reader_rows, data).set_index(["system", "kind"])
    assert kinds["value"].notna().all() and len(kinds) == len(failing)
    assert (kinds["value"] == failing["accuracy"].reindex(kinds.index)).all()
    with pytest.raises(ValueError, match="no axis 'colour'"):
        views.heatmap(rows, "system", "colour")


def test_solver_rank_agreement(scored):
    _, _, rows = scored
    table = views.solver_rank_agreement(rows).set_index(["solver_a", "solver_b"])
    assert table.loc[("reader", "reader-2"), "tau"] == pytest.approx(1.0)
    assert table.loc[("reader", "reader-2"), "systems"] == len(build.SYSTEMS)
    # always-A gives every system the same score (it ignores the image): no ranking, no tau
    assert math.isnan(table.loc[("always-A", "reader"), "tau"])


def test_failing_kinds_show_the_damage(scored):
    data, _, rows = scored
    table = views.failing_kinds(rows[rows["solver"] == "reader"], data)
    original = table[table["system"] == ORIGINAL_SYSTEM]
    assert set(original["accuracy"]) == {100.0}
    blank = table[table["system"] == "Blank Image"].set_index("kind")
    assert (blank.drop(index="exists")["accuracy"] == 0.0).all()
    assert 0 < blank.loc["exists", "accuracy"] < 100  # only the "No" keys survive a blank image
    assert {"exists", "successor", "fan_out", "task"} <= set(table["kind"])


def test_drill_down_shows_keys_only_when_allowed(scored):
    data, _, rows = scored
    hidden = views.drill_down(rows, data, show_keys=False, system="Blank Image", solver="reader", level=2)
    assert hidden and all("key" not in item and "correct" not in item for item in hidden)
    assert all(item["level"] == 2 and item["image"].startswith("images/Blank Image/") for item in hidden)
    shown = views.drill_down(rows, data, show_keys=True, system="Blank Image", solver="reader", level=2, limit=3)
    assert len(shown) == 3 and all(item["correct"] is False and item["key"] != item["letter"] for item in shown)
    assert shown[0]["options"][0].startswith("A. ")


# ---------------------------------------------------------------- the view's state in the URL

from structext_core.aibench import url_state as aib_url  # noqa: E402

URL_OPTIONS = {"benchmark": ["structext-eval", "aibench"], "table": ["table2", "table3"], "data": ["synthetic"],
               "heatmap": ["system x level"], "system": ["Blank Image", "Original Image"], "solver": ["s1"]}


def test_url_round_trip():
    values = {"benchmark": "aibench", "table": "table3", "data": "synthetic", "heatmap": "system x level",
              "system": "Blank Image", "solver": "s1", "level": 2}
    url = aib_url.write_url(values)
    assert list(url) == list(aib_url.KEYS)
    assert aib_url.read_url(url, URL_OPTIONS) == aib_url.UrlState(values, ())


@pytest.mark.parametrize("params, note", [
    ({"colour": "red"}, "unknown parameter 'colour'"),
    ({"system": "Nobody"}, "system='Nobody' is not a valid choice"),
    ({"level": "²"}, "level='²' is not a valid choice"),
    ({"level": "5"}, "level='5' is not a valid choice"),
    ({"level": " 2"}, "level=' 2' is not a valid choice"),
    ({"data": "../../etc"}, "data='../../etc' is not a valid choice"),
    ({"solver": "x" * 5000}, "solver: a value longer than 200 characters"),
    ({f"k{i}": "v" for i in range(500)}, "only the first 40 of 500 parameters were read"),
])
def test_hostile_url_values_are_ignored_with_a_note(params, note):
    state = aib_url.read_url(params, URL_OPTIONS)
    assert note in state.notes and not any(k in state.values for k in ("system", "level", "data", "solver"))


def test_a_visitor_url_sets_the_table_only_without_notes():
    state = aib_url.read_url({"table": "table2", "data": "synthetic", "system": "Blank Image"},
                             {"benchmark": ["aibench"], "table": ["table2"]})
    assert state == aib_url.UrlState({"table": "table2"}, ())


def test_a_repeated_key_counts_its_last_value():
    assert aib_url.read_url({"level": ["1", "3"]}, URL_OPTIONS).values == {"level": 3}


def test_structexts_url_reader_leaves_the_benchmark_choice_to_the_page():
    from structext_core.structext_eval import url_state
    assert url_state.read_url({"benchmark": "aibench", "view": "heatmap"}, {}) == \
        url_state.UrlState({"view": "heatmap"}, ())


# ---------------------------------------------------------------- layout: what fits the page (issue 32, item 8)

from structext_core.aibench.model import LEVEL_COLUMNS, LEVELS  # noqa: E402
from structext_core.aibench.pairwise import ranking as pw  # noqa: E402


def test_table3_headline_fits_the_page_and_the_detail_keeps_each_levels_n(scored):
    # regression: Table 3 had 17 columns, A and O needed scrolling
    data, preds, _ = scored
    table = views.table3_view(scoring.score_systems(data, preds))
    headline = views.table3_headline(table)
    assert list(headline.columns) == ["system", "solver", "C", "T", "P", "S", "A", "O", "O_interval"]
    detail = views.table3_detail(table)
    assert list(detail.columns) == ["system", "solver", "C n", "C 95%", "T n", "T 95%", "P n", "P 95%", "S n", "S 95%"]
    assert (detail["C n"] == table["C_n"]).all() and (detail["S 95%"] == table["S_interval"]).all()
    for level, column in LEVEL_COLUMNS.items():  # each short column's help names it in full
        assert views.TABLE3_HELP[column].startswith(f"{column} · {LEVELS[level]}")
    assert views.TABLE3_HELP["A"].startswith("Aesthetics") and views.TABLE3_HELP["O"].startswith("Overall")


def test_the_heatmap_names_levels_as_table3_does_and_prints_n_in_each_cell(scored):
    # regression: the heatmap said levels 1-4 while Table 3 says C/T/P/S, and its cells had no n
    _, _, rows = scored
    cells = views.heatmap(rows, "system", "level")
    data = views.heatmap_data(cells, "system", "level")
    labels = [f"{column} · {LEVELS[level]}" for level, column in LEVEL_COLUMNS.items()]
    assert data["cols"] == labels  # in the table's order, not alphabetical
    assert views.LEVEL_LABELS == dict(zip(LEVEL_COLUMNS, labels))
    drawn = data["cells"]
    assert {c["col_label"] for c in drawn} == set(labels)
    assert [c["n_label"] for c in drawn] == [f"n={n:,}" for n in cells["n"]]
    assert all(f"\nn: {c['n']:,}" in c["tip"] for c in drawn)  # n in each tooltip too
    assert data["title"] == "AIBench: system x level, accuracy (%)" and not data["clickable"]


@pytest.mark.parametrize("row_axis, column_axis", [("system", "level"), ("solver", "system"), ("system", "kind")])
def test_heatmap_labels_are_whole_and_colours_blue(scored, row_axis, column_axis):
    # regression: "perfect reader (sy..." (Vega's default labelLimit is 180 px): a table's labels are whole
    data, _, rows = scored
    rows = views.with_kinds(rows, data)
    cells = views.heatmap(rows, row_axis, column_axis)
    shown = views.heatmap_data(cells, row_axis, column_axis)
    labelled = cells.assign(level=cells["level"].map(views.level_label)) if "level" in cells else cells
    assert set(shown["rows"]) == set(labelled[row_axis].astype(str))
    assert set(shown["cols"]) == set(labelled[column_axis].astype(str))
    for cell in shown["cells"]:  # the chart's blues, white text on the dark end
        assert cell["background"] == heatmap_table.colour(cell["mean"], heatmap_table.BLUES)
        assert cell["colour"] == ("white" if cell["mean"] > 60 else "black")


def test_the_heatmap_csv_has_the_charts_level_labels_and_n(scored):
    _, _, rows = scored
    cells = views.heatmap(rows, "solver", "level")
    table = views.heatmap_table(cells, "solver", "level")
    assert list(table.columns) == ["solver", "level", "accuracy (%)", "n"]
    assert set(table["level"]) == set(views.LEVEL_LABELS.values())
    assert (table["n"].to_numpy() == cells["n"].to_numpy()).all()
    mean = views.heatmap_table(views.heatmap(rows, "solver", "system"), "solver", "system")
    assert list(mean.columns) == ["solver", "system", "mean of the four level accuracies (%)", "n"]


def _votes() -> list[pw.Vote]:
    return [pw.Vote("ann1", "p1", "x", "y", "first"), pw.Vote("ann1", "p1", "y", "z", "first"),
            pw.Vote("ann2", "p1", "x", "z", "both_bad")]


def test_the_human_rank_fits_the_page_with_the_vote_counts_apart():
    # regression: 14 columns, cut on the right
    ranking = pw.human_ranking(_votes(), n_boot=20)
    headline = views.human_rank_headline(ranking.table)
    assert list(headline.columns) == ["rank", "rank 95%", "system", "strength", "strength 95%", "win_rate",
                                      "comparisons"]
    assert list(headline["system"]) == list(ranking.table["system"])
    assert all(" to " in span for span in headline["strength 95%"])
    detail = views.human_rank_detail(ranking.table)
    assert list(detail.columns) == ["system", "wins", "losses", "ties", "both_bad", "both_bad_share"]
    unfitted = views.human_rank_headline(pw.human_ranking(_votes(), n_boot=0).table)
    assert set(unfitted["rank 95%"]) == {"—"} and set(unfitted["strength 95%"]) == {"—"}


def test_agreement_figures_say_why_instead_of_undefined():
    # regression: Kendall's W showed "undefined" in large type
    votes = _votes()
    figures = views.rank_agreement_figures(pw.pair_agreement(votes), pw.kendall_w(votes), pw.swap_consistency(votes))
    assert [f["label"] for f in figures] == ["Per-pair agreement", "Kendall's W", "Swap consistency"]
    for figure in figures:
        assert figure["value"] == "—"
        assert "undefined" not in figure["value"] + figure["help"] and "None" not in figure["help"]
        assert "nan" not in figure["value"].lower()
    assert "needs two or more such people" in figures[1]["help"]
    measured = views.rank_agreement_figures({"pairs": 3, "rater_pairs": 4, "agreement": 0.75},
                                            {"w": 0.5, "raters": 3, "systems": 3}, {"repeats": 2, "consistency": 1.0})
    assert [f["value"] for f in measured] == ["75%", "0.50", "100%"]
    assert "needs" not in measured[1]["help"]


def test_the_judges_table_fits_and_says_where_the_paper_printed_no_rho():
    # regression: nine columns cut on the right, "None" where the paper printed no rho
    ranking = pw.human_ranking(_votes(), n_boot=20)
    fig6b = pw.fig6b(ranking, {"AIBench": {"x": 3, "y": 2, "z": 1}, "mine": {"x": 1, "y": 2, "z": 3}})
    table = views.judges_headline(fig6b)
    assert list(table.columns) == ["metric", "n", "spearman_rho", "kendall_tau", "p_rho_exact", "p_tau_exact",
                                   "rho 95%", "paper rho"]
    assert list(table["paper rho"]) == ["0.886", "—"]
    assert not table.astype(str).isin(["None", "nan", "undefined"]).any().any()


def test_a_review_campaigns_tables_say_a_missing_figure_as_a_dash():
    """Issue 46 (screens that say true things): the lead's agreement table showed ``None`` for kappa at a level
    both reviewers decided alike, and the progress table ``median_active_min`` and ``None`` before a submission."""
    agreement = views.review_agreement_table([
        {"level": "all", "n": 17, "agreement_pct": 88.2, "kappa": 0.0},
        {"level": "3 Phase Architecture", "n": 4, "agreement_pct": 100.0, "kappa": None},
        {"level": "4 Global Semantics", "n": 0, "agreement_pct": None, "kappa": None}])
    assert agreement.to_dict("records") == [
        {"level": "all", "questions": 17, "agreement (%)": "88.2", "kappa": "0.000"},
        {"level": "3 Phase Architecture", "questions": 4, "agreement (%)": "100.0", "kappa": views.UNDEFINED},
        {"level": "4 Global Semantics", "questions": 0, "agreement (%)": views.UNDEFINED, "kappa": views.UNDEFINED}]
    progress = views.review_progress_table([
        {"reviewer": "rev1", "todo": 0, "approved": 1, "total": 1, "median_active_min": 0.4},
        {"reviewer": "rev2", "todo": 1, "approved": 0, "total": 1, "median_active_min": None}])
    assert list(progress.columns) == ["reviewer", "todo", "approved", "total", "median active (min)"]
    assert list(progress["median active (min)"]) == ["0.4", views.UNDEFINED]
    assert views.review_progress_table([]).empty
