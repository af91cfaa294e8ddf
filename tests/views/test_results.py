"""What the Results page shows, as data: values (both ROUGE-L versions, thresholded or raw),
filters, heatmap cells, the paper's figures, paired comparisons and drill-downs. Real data:
see tests/results_data.py (the ``dataset`` and ``frame`` fixtures are in conftest.py)."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from structext_core.evaluation import results, scoring
from structext_core.views import charts
from structext_core.views import results as result_views
from tests.results_data import hard_samples

# ---------------------------------------------------------------- values and the heatmap


def test_with_value_thresholded_and_raw(frame):
    raw = result_views.with_value(frame, "rouge_l", "raw")["value"]
    thresholded = result_views.with_value(frame, "rouge_l", "thresholded", 0.75)["value"]
    assert np.allclose(raw, 100 * frame["rouge_l"])
    expected = np.where(frame["rouge_l"] >= 0.75, 100 * frame["rouge_l"], 0.0)
    assert np.allclose(thresholded, expected)
    partial = (frame["rouge_l"] > 0) & (frame["rouge_l"] < 0.75)
    assert partial.any() and (raw[partial] > thresholded[partial]).all()
    # the stored score is the core's thresholded ROUGE-L at 0.75 (human rows included)
    assert np.allclose(thresholded / 100, frame["score"])


@pytest.mark.parametrize("bad", [{"metric": "accuracy"}, {"mode": "binary"}, {"threshold": 1.5}])
def test_with_value_rejects_unknown_options(frame, bad):
    with pytest.raises(ValueError):
        result_views.with_value(frame, **{"metric": "rouge_l", "mode": "raw", "threshold": 0.75, **bad})


@pytest.mark.parametrize("row, col", [("model", "format"), ("task", "depth"), ("prompt", "width"),
                                      ("suite", "model")])
def test_heatmap_cells_are_group_means_with_n_and_interval(frame, row, col):
    values = result_views.with_value(frame)
    cells = result_views.heatmap_frame(values, row, col, n_boot=200)
    expected = values.groupby([row, col], observed=True)["value"].agg(["mean", "size"])
    assert len(cells) == len(expected)
    for record in cells.to_dict("records"):
        mean, size = expected.loc[(record[row], record[col])]
        assert record["mean"] == pytest.approx(mean)
        assert record["n"] == size
        assert record["ci_low"] <= record["mean"] + 1e-9 <= record["ci_high"] + 2e-9


def test_heatmap_rows_and_columns_sorted_by_mean(frame):
    values = result_views.with_value(frame)
    cells = result_views.heatmap_frame(values, "model", "format", n_boot=50)
    # ties keep the alphabetical order (stable sort)
    row_means = values.groupby("model")["value"].mean().sort_values(ascending=False, kind="stable")
    assert result_views.axis_order(cells, "row") == list(row_means.index)
    col_means = values.groupby("format")["value"].mean().sort_values(ascending=False, kind="stable")
    assert result_views.axis_order(cells, "col") == list(col_means.index)


def test_heatmap_sorted_by_name(frame):
    cells = result_views.heatmap_frame(result_views.with_value(frame), "depth", "model", n_boot=20, sort="name")
    assert result_views.axis_order(cells, "row") == ["1", "2"]
    assert result_views.axis_order(cells, "col") == sorted(set(frame["model"]))
    with pytest.raises(ValueError, match="unknown sort"):
        result_views.heatmap_frame(result_views.with_value(frame), "depth", "model", sort="size")


def test_heatmap_same_dimension_twice_is_refused(frame):
    with pytest.raises(ValueError, match="different dimensions"):
        result_views.heatmap_frame(result_views.with_value(frame), "model", "model")


def test_filters_keep_chosen_values_only(frame):
    values = result_views.with_value(frame)
    part = result_views.apply_filters(values, {"model": ("good",), "depth": (2,), "prompt": ()})
    assert set(part["model"]) == {"good"} and set(part["depth"]) == {2}
    assert set(part["prompt"]) == {"naive", "hint"}
    assert result_views.filter_options(values)["depth"] == [1, 2]


def test_cells_table_for_csv(frame):
    cells = result_views.heatmap_frame(result_views.with_value(frame), "model", "depth", n_boot=50)
    table = result_views.cells_table(cells, "model", "depth")
    assert list(table.columns) == ["model", "depth", "mean", "n", "ci_low", "ci_high"]
    back = pd.read_csv(pd.io.common.BytesIO(result_views.csv_bytes(table)))
    assert len(back) == len(cells) and back["n"].sum() == len(frame)


# ---------------------------------------------------------------- figures


def test_depth_width_grid_and_spread(frame):
    values = result_views.with_value(frame[frame["suite"] == "test-hard"])
    cells = result_views.depth_width_frame(values, n_boot=50)
    assert set(map(tuple, cells[["depth", "width"]].astype(int).values)) == {(1, 1), (1, 2), (2, 1), (2, 2)}
    good = values[(values["model"] == "good") & (values["depth"] == 2) & (values["width"] == 1)]
    record = cells[(cells["model"] == "good") & (cells["depth"] == 2) & (cells["width"] == 1)].iloc[0]
    assert record["mean"] == pytest.approx(good["value"].mean()) and record["n"] == len(good)
    assert record["format_std"] == pytest.approx(np.std(good.groupby("format")["value"].mean().to_numpy()))
    assert record["task_std"] == pytest.approx(np.std(good.groupby("task")["value"].mean().to_numpy()))
    charts.depth_width_chart(cells).to_dict()
    charts.spread_chart(cells).to_dict()


def test_people_vs_models_on_the_same_items(frame):
    values = result_views.with_value(frame)
    cells = result_views.people_vs_models_frame(values, n_boot=50)
    items = set(frame.loc[frame["model"] == "human", "sample_id"])
    assert len(items) == 12 and set(cells["items"]) == {12}
    good = values[(values["model"] == "good") & values["sample_id"].isin(items)]
    expected = good.groupby("task")["value"].agg(["mean", "size"])
    mine = cells[cells["model"] == "good"].set_index("task")
    for task, (mean, size) in expected.iterrows():
        assert mine.loc[task, "mean"] == pytest.approx(mean) and mine.loc[task, "n"] == size
    assert set(cells.loc[cells["group"] == "people", "model"]) == {"human", "human:ann1", "human:ann2"}
    ann1 = cells[cells["model"] == "human:ann1"]
    assert (ann1["mean"] == 100).all()
    charts.interval_bars_chart(cells, "task", "model", "t").to_dict()


def test_people_vs_models_without_people_is_empty(frame):
    assert result_views.people_vs_models_frame(result_views.with_value(frame[~frame["model"].str.startswith("human")])).empty


def test_test_vs_real_test(frame, dataset):
    values = result_views.with_value(frame)
    cells = result_views.test_vs_real_frame(values, n_boot=50)
    assert set(cells["model"]) == {"good", "weak"} and set(cells["set"]) == {"Test", "Real-Test"}
    assert set(cells["n"]) == {len(dataset["test"])}
    real = values[(values["model"] == "weak") & (values["suite"] == "real-test")]["value"].mean()
    assert cells[(cells["model"] == "weak") & (cells["set"] == "Real-Test")]["mean"].item() == pytest.approx(real)


@pytest.mark.parametrize("suite, real", [("real-test", True), ("Real_Test", True), ("test", False),
                                         ("test-hard", False)])
def test_is_real_test(suite, real):
    assert result_views.is_real_test(suite) is real


def test_metric_correlation_by_hand(frame):
    table = result_views.metric_table(result_views.with_value(frame), ["model", "prompt", "format"], threshold=0.75)
    metrics = ["ROUGE-L strict (raw)", "ROUGE-L strict (thresholded)", "Exact match", "BLEU"]
    assert all(m in table.columns for m in metrics)
    corr = result_views.correlation_frame(table, metrics)
    # groups with every metric (people have no BLEU, so their groups drop out)
    both = table.dropna(subset=metrics)[["ROUGE-L strict (raw)", "Exact match"]].to_numpy()
    assert set(corr["n"]) == {len(both)} and len(both) < len(table)
    expected = np.corrcoef(both[:, 0], both[:, 1])[0, 1]
    got = corr[(corr["metric_a"] == "ROUGE-L strict (raw)") & (corr["metric_b"] == "Exact match")]["r"].item()
    assert got == pytest.approx(expected)
    spec = charts.correlation_chart(corr, "t").to_dict()
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-1, 1]


def test_metric_table_threshold_is_applied(frame):
    loose = result_views.metric_table(frame, ["model"], threshold=0.0)
    strict = result_views.metric_table(frame, ["model"], threshold=0.75)
    assert (loose["ROUGE-L strict (thresholded)"] == loose["ROUGE-L strict (raw)"]).all()
    assert (strict["ROUGE-L strict (thresholded)"] <= strict["ROUGE-L strict (raw)"]).all()


def test_paired_difference_on_shared_samples(frame):
    values = result_views.with_value(frame)
    cells = result_views.paired_frame(values, "good", "weak", "format", "depth", n_boot=100, n_perm=500)
    a = values[values["model"] == "good"].set_index(["sample_id", "prompt"])
    b = values[values["model"] == "weak"].set_index(["sample_id", "prompt"])
    shared = a.join(b[["value"]].rename(columns={"value": "value_b"}), how="inner")
    record = cells[(cells["format"] == "json") & (cells["depth"] == 1)].iloc[0]
    part = shared[(shared["format"] == "json") & (shared["depth"] == 1)]
    assert record["n"] == len(part)
    assert record["diff"] == pytest.approx((part["value"] - part["value_b"]).mean())
    assert (cells["mark"] == np.where(cells["p_value"] < 0.05, "*", "")).all()
    assert cells["significant"].any()  # good beats weak clearly somewhere
    spec = charts.paired_chart(cells, "format", "depth", "t").to_dict()
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-100, 100]
    texts = {d["text"] for d in next(iter(spec["datasets"].values()))}
    assert any(t.endswith("*") for t in texts)


def test_paired_against_people(frame):
    values = result_views.with_value(frame)
    cells = result_views.paired_frame(values, "human", "good", "task", "depth", n_boot=50, n_perm=200)
    # the pool answered each of its 12 items twice: its mean per item is paired with good's naive answer
    assert cells["n"].sum() == 12
    pool = values[values["model"] == "human"].groupby("sample_id")["value"].mean()
    good = values[(values["model"] == "good") & (values["prompt"] == "naive")].set_index("sample_id")["value"]
    tree = values[values["sample_id"].isin(pool.index) & (values["model"] == "human")]
    ids = sorted(set(tree.loc[(tree["task"] == "TreeHeight") & (tree["depth"] == 1), "sample_id"]))
    record = cells[(cells["task"] == "TreeHeight") & (cells["depth"] == 1)].iloc[0]
    assert record["diff"] == pytest.approx((pool[ids] - good[ids]).mean())


# ---------------------------------------------------------------- drill-down


def test_drill_down_shows_sample_response_and_scores(dataset, frame):
    values = result_views.with_value(frame)
    part = result_views.cell_rows(values, "model", "good", "format", "json")
    assert len(part) == len(values[(values["model"] == "good") & (values["format"] == "json")])
    rows = result_views.drill_down(part, db=dataset["db"], data_dir=dataset["data_dir"])
    assert len(rows) == len(part)
    assert rows["value"].is_monotonic_increasing  # worst first
    samples = {s["id"]: s for s in dataset["hard"] + dataset["test"] + dataset["real"]}
    for record in rows.to_dict("records"):
        sample = samples[record["sample_id"]]
        assert record["reference"] == sample["reference"]
        assert record["question"] == sample["question"] and record["answer"] == sample["answer"]
        assert record["response"].startswith("Let me look.\n### Answer:\n")
        assert record["answer_extracted"] == record["response"].split("### Answer:\n", 1)[1]


def test_drill_down_of_people_uses_study_items(dataset, frame):
    values = result_views.with_value(frame)
    part = result_views.cell_rows(values, "model", "human:ann2", "depth", "1")
    rows = result_views.drill_down(part, db=dataset["db"], data_dir=dataset["data_dir"] / "missing")
    samples = {s["id"]: s for s in dataset["hard"]}
    assert len(rows) == len(part) > 0
    for record in rows.to_dict("records"):
        assert record["answer"] == samples[record["sample_id"]]["answer"]
        assert record["response"] in (record["answer"], "zzz")


def test_drill_down_limit_and_missing_samples(frame):
    values = result_views.with_value(frame)
    rows = result_views.drill_down(values[values["model"] == "weak"], db=None, data_dir="/nonexistent", limit=5)
    assert len(rows) == 5 and set(rows["reference"]) == {"(sample not found)"}


# ---------------------------------------------------------------- paired rows


def test_shared_rows_are_the_paired_samples(frame):
    values = result_views.with_value(frame)
    rows = result_views.shared_rows(values, "human", "good")
    items = set(values.loc[values["model"] == "human", "sample_id"])
    assert set(rows["sample_id"]) == items
    assert Counter(rows["model"]) == {"human": 24, "good": 12}  # good's naive answers only: people saw no hints
    assert set(rows.loc[rows["model"] == "good", "prompt"]) == {"naive"}


# ---------------------------------------------------------------- strict or the paper's ROUGE-L


def crafted_frame():
    """Three models on the same real samples (answers with letters): ``shouts`` gives the answer
    upper-cased after the marker, ``explains`` reasons first and then gives it, ``verbatim``
    gives the answer alone. Scored by the core, as an import scores them."""
    samples = [s for s in hard_samples() if s["answer"].upper() != s["answer"]][:12]
    policies = {
        "shouts": lambda answer: "### Answer:\n" + answer.upper(),
        "explains": lambda answer: "I read the reference carefully.\n### Answer:\n" + answer,
        "verbatim": lambda answer: answer,
    }
    rows = [{"sample_id": s["id"], "model": model, "prompt": "naive", "response": respond(s["answer"])}
            for model, respond in policies.items() for s in samples]
    scored = pd.DataFrame(results.score_results(rows, samples)).rename(columns={"language": "format"})
    return scored, {s["id"]: s for s in samples}


def test_the_metric_switch_changes_the_numbers_as_the_core_scores_them():
    frame, samples = crafted_frame()
    strict = result_views.with_value(frame, rouge="strict").set_index(["model", "sample_id"])["value"]
    paper = result_views.with_value(frame, rouge="paper").set_index(["model", "sample_id"])["value"]
    paper_raw = result_views.with_value(frame, mode="raw", rouge="paper").set_index(["model", "sample_id"])["value"]
    for row in frame.to_dict("records"):
        expected = scoring.score_response(samples[row["sample_id"]]["answer"], row["response"])
        key = (row["model"], row["sample_id"])
        assert strict[key] == pytest.approx(100 * scoring.apply_threshold(expected.rouge_l))
        assert paper[key] == pytest.approx(100 * scoring.apply_threshold(expected.rouge_l_paper))
        assert paper_raw[key] == pytest.approx(100 * expected.rouge_l_paper)
    # strict ROUGE-L lower-cases and reads the extracted answer: every model is right
    assert (strict == 100).all()
    # the paper's keeps case: upper-cased answers fall below the threshold
    assert (paper["shouts"] == 0).all() and (paper_raw["shouts"] < 75).all()
    # ...and reads the whole response: reasoning before the answer costs precision
    assert (paper_raw["explains"] < 100).all() and paper_raw["explains"].mean() > paper_raw["shouts"].mean()
    assert np.allclose(paper["verbatim"], 100)  # the authors' F has 1e-8 in its denominator


def test_the_heatmap_follows_the_metric():
    frame, _ = crafted_frame()
    strict = result_views.heatmap_frame(result_views.with_value(frame, rouge="strict"), "model", "format", n_boot=20)
    paper = result_views.heatmap_frame(result_views.with_value(frame, rouge="paper"), "model", "format", n_boot=20)
    assert (strict["mean"] == 100).all()
    by_model = paper.groupby("model")["mean"].mean()
    assert by_model["verbatim"] == pytest.approx(100) and by_model["shouts"] == 0 and by_model["explains"] < 99
    assert result_views.axis_order(paper, "row")[0] == "verbatim"


def test_value_choice_names_itself_in_titles_tables_and_file_names():
    paper = result_views.ValueChoice("rouge_l", "paper", "thresholded", 0.75)
    assert paper.column == "rouge_l_paper" and paper.name == "rouge_l_paper"
    assert paper.title == "paper ROUGE-L ≥ 0.75 (%)"
    assert "pltrdy rouge" in paper.description and "whole response" in paper.description
    assert paper.file_name("heatmap_model_format") == "heatmap_model_format_rouge_l_paper_t0.75"
    table = paper.label_table(pd.DataFrame({"model": ["a"], "mean": [50.0]}))
    assert list(table.columns) == ["metric", "threshold", "model", "mean"]
    assert table.iloc[0][["metric", "threshold"]].tolist() == ["rouge_l_paper", 0.75]
    strict_raw = result_views.ValueChoice("rouge_l", "strict", "raw")
    assert (strict_raw.column, strict_raw.title) == ("rouge_l", "strict ROUGE-L (%)")
    assert strict_raw.file_name("x") == "x_rouge_l_strict_raw" and "'### Answer:'" in strict_raw.description
    assert np.isnan(strict_raw.label_table(pd.DataFrame({"v": [1]}))["threshold"].item())
    bleu = result_views.ValueChoice("bleu", "paper")
    assert (bleu.column, bleu.name, bleu.title, bleu.file_name("x")) == ("bleu", "bleu", "BLEU (%)", "x_bleu")


@pytest.mark.parametrize("bad", [{"metric": "accuracy"}, {"rouge": "lenient"}, {"mode": "binary"},
                                 {"threshold": -0.1}])
def test_value_choice_rejects_unknown_options(bad):
    with pytest.raises(ValueError):
        result_views.ValueChoice(**bad)


def test_views_that_redraw_the_papers_figures_open_on_its_metric():
    defaults = {key: view.default_rouge for key, view in result_views.VIEWS.items()}
    assert defaults == {"heatmap": "strict", "depth_width": "paper", "people_vs_models": "paper",
                        "test_vs_real": "paper", "metric_correlation": "paper", "paired": "strict"}
    for view in result_views.VIEWS.values():
        assert view.beside_paper == ("Fig." in view.label)


def test_metric_table_has_both_rouge_versions(frame):
    table = result_views.metric_table(frame, ["model"], threshold=0.75)
    for name in ("ROUGE-L strict (raw)", "ROUGE-L strict (thresholded)", "ROUGE-L paper (raw)",
                 "ROUGE-L paper (thresholded)"):
        assert name in table.columns
    good = frame[frame["model"] == "good"]
    row = table.set_index("model").loc["good"]
    assert row["ROUGE-L paper (raw)"] == pytest.approx(100 * good["rouge_l_paper"].mean())
    cut = np.where(good["rouge_l_paper"] >= 0.75, good["rouge_l_paper"], 0.0)
    assert row["ROUGE-L paper (thresholded)"] == pytest.approx(100 * cut.mean())


def test_rows_without_the_papers_metric_are_left_out_and_counted(frame):
    part = frame.copy()
    models = part["model"].map(lambda m: not result_views.is_human(m))
    gone = part.index[models.to_numpy()][:5]
    part.loc[gone, "rouge_l_paper"] = np.nan
    choice = result_views.ValueChoice(rouge="paper")
    assert result_views.missing_values(part, choice) == 5
    assert result_views.missing_values(part, result_views.ValueChoice(rouge="strict")) == 0
    values = result_views.with_choice(part, choice)
    assert values.loc[gone, "value"].isna().all()
    cells = result_views.heatmap_frame(values, "model", "format", n_boot=10)
    assert cells["n"].sum() == len(part) - 5
