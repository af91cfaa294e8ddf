"""What the Results page shows, as data: values (both ROUGE-L versions, thresholded or raw),
filters, heatmap cells, the paper's figures, paired comparisons and drill-downs. Real data:
see tests/results_data.py (the ``dataset`` and ``frame`` fixtures are in conftest.py)."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from structext_core.evaluation import scoring
from structext_core.structext_eval import drill_downs, results_charts, url_state
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval.result_dimensions import DIMENSIONS, ORDERED_DIMENSIONS
from structext_core.views import (
    charts,
    comparisons,
    heatmaps,
    leaderboards,
    page_tables,
    people_vs_models,
    result_options,
)
from tests.results_data import hard_samples

# ---------------------------------------------------------------- values and the heatmap


def test_with_value_thresholded_and_raw(frame):
    raw = result_options.with_value(frame, "rouge_l", "raw")["value"]
    thresholded = result_options.with_value(frame, "rouge_l", "thresholded", 0.75)["value"]
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
        result_options.with_value(frame, **{"metric": "rouge_l", "mode": "raw", "threshold": 0.75, **bad})


@pytest.mark.parametrize("row, col", [("model", "format"), ("task", "depth"), ("prompt", "width"),
                                      ("suite", "model")])
def test_heatmap_cells_are_group_means_with_n_and_interval(frame, row, col):
    values = result_options.with_value(frame)
    cells = heatmaps.heatmap_frame(values, row, col, n_boot=200)
    expected = values.groupby([row, col], observed=True)["value"].agg(["mean", "size"])
    assert len(cells) == len(expected)
    for record in cells.to_dict("records"):
        mean, size = expected.loc[(record[row], record[col])]
        assert record["mean"] == pytest.approx(mean)
        assert record["n"] == size
        assert record["ci_low"] <= record["mean"] + 1e-9 <= record["ci_high"] + 2e-9


def test_heatmap_rows_and_columns_sorted_by_mean(frame):
    values = result_options.with_value(frame)
    cells = heatmaps.heatmap_frame(values, "model", "format", n_boot=50)
    # ties keep the alphabetical order (stable sort)
    row_means = values.groupby("model")["value"].mean().sort_values(ascending=False, kind="stable")
    assert heatmaps.axis_order(cells, "row") == list(row_means.index)
    col_means = values.groupby("format")["value"].mean().sort_values(ascending=False, kind="stable")
    assert heatmaps.axis_order(cells, "col") == list(col_means.index)


def test_heatmap_sorted_by_name(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "depth", "model", n_boot=20, sort="name")
    assert heatmaps.axis_order(cells, "row") == ["1", "2"]
    assert heatmaps.axis_order(cells, "col") == sorted(set(frame["model"]))
    with pytest.raises(ValueError, match="unknown sort"):
        heatmaps.heatmap_frame(result_options.with_value(frame), "depth", "model", sort="size")


def test_heatmap_keeps_the_order_of_depth_and_width_by_default(frame):
    """Issue 19: width was shown 1, 3, 2 (sorted by mean). By default ordered axes keep their order,
    the others are sorted by mean; "mean" sorts all by mean."""
    values = result_options.with_value(frame)
    values.loc[values["depth"] == 1, "value"] = 10.0  # depth 2 now has the higher mean
    values.loc[values["depth"] == 2, "value"] = 90.0
    cells = heatmaps.heatmap_frame(values, "depth", "model", n_boot=20, ordered=ORDERED_DIMENSIONS)
    assert heatmaps.axis_order(cells, "row") == ["1", "2"]
    model_means = values.groupby("model")["value"].mean().sort_values(ascending=False, kind="stable")
    assert heatmaps.axis_order(cells, "col") == list(model_means.index)
    by_mean = heatmaps.heatmap_frame(values, "depth", "model", n_boot=20, sort="mean", ordered=ORDERED_DIMENSIONS)
    assert heatmaps.axis_order(heatmaps.heatmap_frame(values, "depth", "model", n_boot=20), "row") == ["2", "1"]
    assert heatmaps.axis_order(by_mean, "row") == ["2", "1"]


def test_heatmap_same_dimension_twice_is_refused(frame):
    with pytest.raises(ValueError, match="different dimensions"):
        heatmaps.heatmap_frame(result_options.with_value(frame), "model", "model")


def test_filters_keep_chosen_values_only(frame):
    values = result_options.with_value(frame)
    part = result_options.apply_filters(values, {"model": ("good",), "depth": (2,), "prompt": ()})
    assert set(part["model"]) == {"good"} and set(part["depth"]) == {2}
    assert set(part["prompt"]) == {"naive", "hint"}
    assert result_options.filter_options(values, DIMENSIONS)["depth"] == [1, 2]


def test_cells_table_for_csv(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "model", "depth", n_boot=50)
    table = heatmaps.cells_table(cells, "model", "depth")
    assert list(table.columns) == ["model", "depth", "mean", "n", "ci_low", "ci_high"]
    back = pd.read_csv(pd.io.common.BytesIO(page_tables.csv_bytes(table)))
    assert len(back) == len(cells) and back["n"].sum() == len(frame)


# ---------------------------------------------------------------- figures


def test_depth_width_grid_and_spread(frame):
    values = result_options.with_value(frame[frame["suite"] == "test-hard"])
    cells = results_charts.depth_width_frame(values, n_boot=50)
    assert set(map(tuple, cells[["depth", "width"]].astype(int).values)) == {(1, 1), (1, 2), (2, 1), (2, 2)}
    good = values[(values["model"] == "good") & (values["depth"] == 2) & (values["width"] == 1)]
    record = cells[(cells["model"] == "good") & (cells["depth"] == 2) & (cells["width"] == 1)].iloc[0]
    assert record["mean"] == pytest.approx(good["value"].mean()) and record["n"] == len(good)
    assert record["format_std"] == pytest.approx(np.std(good.groupby("format")["value"].mean().to_numpy()))
    assert record["task_std"] == pytest.approx(np.std(good.groupby("task")["value"].mean().to_numpy()))
    results_charts.depth_width_chart(cells).to_dict()
    results_charts.spread_chart(cells).to_dict()


def test_people_vs_models_on_the_same_items(frame):
    values = result_options.with_value(frame)
    cells = people_vs_models.people_vs_models_frame(values, "task", n_boot=50)
    items = people_vs_models.answered_items(frame)
    assert len(items) == 12 and set(cells["items"]) == {12}
    good = values[(values["model"] == "good") & values["sample_id"].isin(items)]
    expected = good.groupby("task")["value"].agg(["mean", "size"])
    mine = cells[cells["model"] == "good"].set_index("task")
    for task, (mean, size) in expected.iterrows():
        assert mine.loc[task, "mean"] == pytest.approx(mean) and mine.loc[task, "n"] == size
    assert set(cells.loc[cells["group"] == "people", "model"]) == {"human:ann1", "human:ann2"}
    ann1 = cells[cells["model"] == "human:ann1"]
    assert (ann1["mean"] == 100).all()
    pooled = people_vs_models.people_vs_models_frame(people_vs_models.people_as(values, "pool"), "task", n_boot=50)
    assert set(pooled.loc[pooled["group"] == "people", "model"]) == {"human"}
    people = cells.loc[cells["group"] == "people", "n"].sum()
    assert pooled.loc[pooled["group"] == "people", "n"].sum() == people == 24  # each answer once
    spec = charts.interval_bars_chart(cells, "task", "model", "t").to_dict()
    # every bar carries its mean as text (a bar of 0 has no height: without it, it read as missing)
    text, = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    assert text["encoding"]["text"] == {"field": "mean", "format": ".0f", "type": "quantitative"}


def test_people_vs_models_without_people_is_empty(frame):
    assert people_vs_models.people_vs_models_frame(result_options.with_value(frame[~frame["model"].str.startswith("human")]), "task").empty


def test_test_vs_real_test(frame, dataset):
    values = result_options.with_value(frame)
    cells = comparisons.test_vs_real_frame(values, n_boot=50)
    assert set(cells["model"]) == {"good", "weak"} and set(cells["set"]) == {"Test", "Real-Test"}
    assert set(cells["n"]) == {len(dataset["test"])}
    real = values[(values["model"] == "weak") & (values["suite"] == "real-test")]["value"].mean()
    assert cells[(cells["model"] == "weak") & (cells["set"] == "Real-Test")]["mean"].item() == pytest.approx(real)


@pytest.mark.parametrize("suite, real", [("real-test", True), ("Real_Test", True), ("test", False),
                                         ("test-hard", False)])
def test_is_real_test(suite, real):
    assert comparisons.is_real_test(suite) is real


def test_metric_correlation_by_hand(frame):
    table = comparisons.metric_table(result_options.with_value(frame), ["model", "prompt", "format"], threshold=0.75)
    metrics = ["ROUGE-L strict (raw)", "ROUGE-L strict (thresholded)", "Exact match", "BLEU"]
    assert all(m in table.columns for m in metrics)
    corr = comparisons.correlation_frame(table, metrics)
    # groups with every metric (people have no BLEU, so their groups drop out)
    both = table.dropna(subset=metrics)[["ROUGE-L strict (raw)", "Exact match"]].to_numpy()
    assert set(corr["n"]) == {len(both)} and len(both) < len(table)
    expected = np.corrcoef(both[:, 0], both[:, 1])[0, 1]
    got = corr[(corr["metric_a"] == "ROUGE-L strict (raw)") & (corr["metric_b"] == "Exact match")]["r"].item()
    assert got == pytest.approx(expected)
    spec = charts.correlation_chart(corr, "t").to_dict()
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-1, 1]


def test_metric_table_threshold_is_applied(frame):
    loose = comparisons.metric_table(frame, ["model"], threshold=0.0)
    strict = comparisons.metric_table(frame, ["model"], threshold=0.75)
    assert (loose["ROUGE-L strict (thresholded)"] == loose["ROUGE-L strict (raw)"]).all()
    assert (strict["ROUGE-L strict (thresholded)"] <= strict["ROUGE-L strict (raw)"]).all()


def test_paired_difference_on_shared_samples(frame):
    values = result_options.with_value(frame)
    cells = comparisons.paired_frame(values, "good", "weak", "format", "depth", n_boot=100, n_perm=500)
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
    values = people_vs_models.people_as(result_options.with_value(frame), "pool")
    cells = comparisons.paired_frame(values, "human", "good", "task", "depth", n_boot=50, n_perm=200)
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
    values = result_options.with_value(frame)
    part = drill_downs.cell_rows(values, "model", "good", "format", "json")
    assert len(part) == len(values[(values["model"] == "good") & (values["format"] == "json")])
    rows = drill_downs.drill_down(part, db=dataset["db"], data_dir=dataset["data_dir"])
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
    values = result_options.with_value(frame)
    part = drill_downs.cell_rows(values, "model", "human:ann2", "depth", "1")
    rows = drill_downs.drill_down(part, db=dataset["db"], data_dir=dataset["data_dir"] / "missing")
    samples = {s["id"]: s for s in dataset["hard"]}
    assert len(rows) == len(part) > 0
    for record in rows.to_dict("records"):
        assert record["answer"] == samples[record["sample_id"]]["answer"]
        assert record["response"] in (record["answer"], "zzz")


def test_drill_down_limit_and_missing_samples(frame):
    values = result_options.with_value(frame)
    rows = drill_downs.drill_down(values[values["model"] == "weak"], db=None, data_dir="/nonexistent", limit=5)
    assert len(rows) == 5 and set(rows["reference"]) == {"(sample not found)"}


# ---------------------------------------------------------------- paired rows


def test_shared_rows_are_the_paired_samples(frame):
    values = people_vs_models.people_as(result_options.with_value(frame), "pool")
    rows = comparisons.shared_rows(values, "human", "good")
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
    strict = result_options.with_value(frame, rouge="strict").set_index(["model", "sample_id"])["value"]
    paper = result_options.with_value(frame, rouge="paper").set_index(["model", "sample_id"])["value"]
    paper_raw = result_options.with_value(frame, mode="raw", rouge="paper").set_index(["model", "sample_id"])["value"]
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
    strict = heatmaps.heatmap_frame(result_options.with_value(frame, rouge="strict"), "model", "format", n_boot=20)
    paper = heatmaps.heatmap_frame(result_options.with_value(frame, rouge="paper"), "model", "format", n_boot=20)
    assert (strict["mean"] == 100).all()
    by_model = paper.groupby("model")["mean"].mean()
    assert by_model["verbatim"] == pytest.approx(100) and by_model["shouts"] == 0 and by_model["explains"] < 99
    assert heatmaps.axis_order(paper, "row")[0] == "verbatim"


def test_value_choice_names_itself_in_titles_tables_and_file_names():
    paper = result_options.ValueChoice("rouge_l", "paper", "thresholded", 0.75)
    assert paper.column == "rouge_l_paper" and paper.name == "rouge_l_paper"
    assert paper.title == "paper ROUGE-L ≥ 0.75 (%)"
    assert "pltrdy rouge" in paper.description and "whole response" in paper.description
    assert paper.file_name("heatmap_model_format") == "heatmap_model_format_rouge_l_paper_t0.75"
    table = paper.label_table(pd.DataFrame({"model": ["a"], "mean": [50.0]}))
    assert list(table.columns) == ["metric", "threshold", "model", "mean"]
    assert table.iloc[0][["metric", "threshold"]].tolist() == ["rouge_l_paper", 0.75]
    strict_raw = result_options.ValueChoice("rouge_l", "strict", "raw")
    assert (strict_raw.column, strict_raw.title) == ("rouge_l", "strict ROUGE-L (%)")
    assert strict_raw.file_name("x") == "x_rouge_l_strict_raw" and "'### Answer:'" in strict_raw.description
    assert np.isnan(strict_raw.label_table(pd.DataFrame({"v": [1]}))["threshold"].item())
    bleu = result_options.ValueChoice("bleu", "paper")
    assert (bleu.column, bleu.name, bleu.title, bleu.file_name("x")) == ("bleu", "bleu", "BLEU (%)", "x_bleu")


@pytest.mark.parametrize("bad", [{"metric": "accuracy"}, {"rouge": "lenient"}, {"mode": "binary"},
                                 {"threshold": -0.1}])
def test_value_choice_rejects_unknown_options(bad):
    with pytest.raises(ValueError):
        result_options.ValueChoice(**bad)


def test_views_that_redraw_the_papers_figures_open_on_its_metric():
    defaults = {key: view.default_rouge for key, view in result_options.VIEWS.items()}
    assert defaults == {"heatmap": "strict", "depth_width": "paper", "people_vs_models": "paper",
                        "test_vs_real": "paper", "metric_correlation": "paper", "paired": "strict",
                        "leaderboard": "strict"}
    for view in result_options.VIEWS.values():
        assert view.beside_paper == ("Fig." in view.label)


def test_metric_table_has_both_rouge_versions(frame):
    table = comparisons.metric_table(frame, ["model"], threshold=0.75)
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
    models = part["model"].map(lambda m: not people_vs_models.is_human(m))
    gone = part.index[models.to_numpy()][:5]
    part.loc[gone, "rouge_l_paper"] = np.nan
    choice = result_options.ValueChoice(rouge="paper")
    assert people_vs_models.missing_values(part, choice) == 5
    assert people_vs_models.missing_values(part, result_options.ValueChoice(rouge="strict")) == 0
    values = result_options.with_choice(part, choice)
    assert values.loc[gone, "value"].isna().all()
    cells = heatmaps.heatmap_frame(values, "model", "format", n_boot=10)
    assert cells["n"].sum() == len(part) - 5


# ---------------------------------------------------------------- people and models on the same items


def test_people_and_their_items(frame):
    assert people_vs_models.people_of(frame) == ["human", "human:ann1", "human:ann2"]  # the pool first
    items = people_vs_models.answered_items(frame, "human")
    assert len(items) == 12
    assert people_vs_models.answered_items(frame, "human:ann1") <= items
    assert people_vs_models.answered_items(frame, "nobody") == frozenset()
    part = people_vs_models.on_items(frame, items)
    assert set(part["sample_id"]) == items
    assert set(part["model"]) == {"human:ann1", "human:ann2", "good", "weak"}  # no pool beside the persons
    assert set(people_vs_models.people_as(part, "pool")["model"]) == {"human", "good", "weak"}
    assert people_vs_models.people_as(part, "each") is part
    with pytest.raises(ValueError, match="unknown way to show people"):
        people_vs_models.people_as(part, "twice")


def test_the_heatmap_on_shared_items_counts_only_them(frame):
    values = result_options.with_value(frame)
    scope = people_vs_models.item_scope(values, "human")
    assert scope.restricted and scope.label == "the 12 items answered by human"
    cells = heatmaps.heatmap_frame(scope.apply(values), "model", "format", n_boot=20)
    # by hand: per format, the shared items of that format; good and weak answered each with
    # 2 prompts, each person once; pooled, the pool twice (both people answered all 12)
    per_format = Counter(values.drop_duplicates("sample_id").set_index("sample_id").loc[sorted(scope.items), "format"])
    n = cells.set_index(["model", "format"])["n"]
    pooled = heatmaps.heatmap_frame(people_vs_models.people_as(scope.apply(values)), "model", "format", n_boot=20)
    n_pool = pooled.set_index(["model", "format"])["n"]
    for fmt, k in per_format.items():
        assert (n[("good", fmt)], n[("weak", fmt)], n[("human:ann1", fmt)], n_pool[("human", fmt)]) == \
            (2 * k, 2 * k, k, 2 * k)
    assert cells["n"].sum() == pooled["n"].sum() == (2 + 2 + 1 + 1) * 12  # each answer once
    everything = heatmaps.heatmap_frame(people_vs_models.ItemScope().apply(values), "model", "format", n_boot=20)
    assert everything["n"].sum() == len(values) > cells["n"].sum()


def test_item_scope_says_what_it_rests_on(frame):
    values = result_options.with_value(frame)
    shared = people_vs_models.item_scope(values, "human")
    assert shared.sentence(values) == ("People and models on the same items: the 12 items answered by human, "
                                       "n = 12 shared items (24 results of people, 48 of models; 2 models "
                                       "answered them).")
    assert people_vs_models.ItemScope().sentence(values).startswith(f"All items: {values['sample_id'].nunique()} items")
    assert people_vs_models.item_scope(values, None) == people_vs_models.ItemScope()
    table = shared.label_table(pd.DataFrame({"model": ["good"]}))
    assert list(table.columns) == ["on_items", "model"] and table["on_items"].item() == shared.label


def test_people_facts_and_scope_captions_read_once_say_what_each_question_says(frame):
    """What Results' controls ask of the people, read once per data version (cached by the page), is
    what each question asked of the frame says; with no person, no one to restrict to."""
    facts = people_vs_models.people_facts(frame)
    assert facts == people_vs_models.PeopleFacts(("human", "human:ann1", "human:ann2"),
                                                 people_vs_models.models_on_people_items(frame), True)
    assert facts.models_on_people_items > 0
    for who in (None, "human", "human:ann1"):
        said = people_vs_models.scope_caption(frame, who)
        scope = people_vs_models.item_scope(frame, who)
        assert (said.scope, said.sentence, said.warning) == (scope, scope.sentence(frame), scope.left_out_warning(frame))
    assert people_vs_models.scope_caption(frame, None).warning is None
    assert "left out" in people_vs_models.scope_caption(frame, "human").warning
    models_only = frame[~people_vs_models.human_mask(frame)]
    assert people_vs_models.people_facts(models_only) == people_vs_models.PeopleFacts((), 0, True)


def test_people_vs_models_on_all_items_is_available_but_not_the_default(frame):
    values = result_options.with_value(frame)
    same = people_vs_models.people_vs_models_frame(values, "task", n_boot=20)
    everything = people_vs_models.people_vs_models_frame(values, "task", n_boot=20, same_items=False)
    assert set(same["items"]) == {12} and set(everything["items"]) == {values["sample_id"].nunique()}
    good_same = same[same["model"] == "good"]["n"].sum()
    good_all = everything[everything["model"] == "good"]["n"].sum()
    assert good_same == 24 and good_all == int((values["model"] == "good").sum())
    # people's own cells do not change: they answered only their items
    people = same[same["group"] == "people"].set_index(["model", "task"])["n"]
    assert people.equals(everything[everything["group"] == "people"].set_index(["model", "task"])["n"])


# ---------------------------------------------------------------- minimum n


def test_small_cells_are_flagged_not_dropped(frame):
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "model", "depth", n_boot=10)
    flagged = heatmaps.flag_small_cells(cells, 50)
    assert len(flagged) == len(cells)
    assert flagged["below_min"].tolist() == (cells["n"] < 50).tolist()
    assert flagged["below_min"].any() and not flagged["below_min"].all()
    assert not heatmaps.flag_small_cells(cells)["below_min"].any()  # the default, 1, flags nothing
    assert "below_min_n" in heatmaps.cells_table(flagged, "model", "depth").columns
    assert heatmaps.min_n_note(50, flagged) == (
        f"Cells with n below 50 are greyed out ({int(flagged['below_min'].sum())} of {len(flagged)}), not hidden: "
        "their means rest on few results.")
    assert "Raise “Minimum n”" in heatmaps.min_n_note(1)


@pytest.mark.parametrize("bad", [0, -3, 1.5, True, "5", result_options.MAX_MIN_N + 1])
def test_minimum_n_must_be_a_sensible_whole_number(bad):
    with pytest.raises(ValueError, match="minimum n"):
        result_options.check_min_n(bad)


# ---------------------------------------------------------------- leaderboard


@pytest.mark.parametrize("successes, n, low, high", [
    (3, 4, 0.300642, 0.954413), (0, 10, 0.0, 0.277533), (10, 10, 0.722467, 1.0), (1, 3, 0.061492, 0.792340)])
def test_wilson_interval_against_published_values(successes, n, low, high):
    # Wilson (1927) score interval, z = 1.96; the same figures as Newcombe (1998), Table I
    assert leaderboards.wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-6)


def test_wilson_interval_edges():
    assert all(np.isnan(leaderboards.wilson_interval(0, 0)))
    with pytest.raises(ValueError):
        leaderboards.wilson_interval(5, 4)


def tiny_results() -> pd.DataFrame:
    """Hand-made scored rows: ``a`` right 3 times in 4 (ROUGE-L 0.9 or 0.5), ``b`` once in 4,
    the person ``human:x`` once in 1."""
    rows = []
    for model, hits in (("a", [1, 1, 1, 0]), ("b", [1, 0, 0, 0]), ("human:x", [1])):
        for i, hit in enumerate(hits):
            rows.append({"sample_id": f"s{i}", "model": model, "prompt": "naive", "exact_match": hit,
                         "rouge_l": 0.9 if hit else 0.5, "rouge_l_paper": 0.9 if hit else 0.5, "bleu": np.nan})
    return pd.DataFrame(rows)


def test_leaderboard_by_hand_exact_match_with_wilson():
    choice = result_options.ValueChoice("exact_match")
    board = leaderboards.leaderboard(result_options.with_choice(tiny_results(), choice), choice, min_n=2)
    assert board["model"].tolist() == ["human:x", "a", "b"]  # best mean first
    assert board["rank"].tolist() == [1, 2, 3]
    assert board["who"].tolist() == ["person", "model", "model"]
    assert board["mean"].tolist() == [100.0, 75.0, 25.0] and board["n"].tolist() == [1, 4, 4]
    a = board[board["model"] == "a"].iloc[0]
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((30.0642, 95.4413), abs=1e-3)  # 3 of 4, as above
    b = board[board["model"] == "b"].iloc[0]
    assert (b["ci_low"], b["ci_high"]) == pytest.approx((100 - 95.4413, 100 - 30.0642), abs=1e-3)  # 1 of 4
    x = board[board["model"] == "human:x"].iloc[0]
    assert (x["ci_low"], x["ci_high"]) == pytest.approx((20.6543, 100.0), abs=1e-3)  # 1 of 1
    assert set(board["ci_method"]) == {"wilson"}
    assert board["below_min"].tolist() == [True, False, False]
    by_n = leaderboards.leaderboard(result_options.with_choice(tiny_results(), choice), choice, sort="n")
    assert by_n["model"].tolist() == ["a", "b", "human:x"]  # ties by name
    by_name = leaderboards.leaderboard(result_options.with_choice(tiny_results(), choice), choice, sort="name")
    assert by_name["model"].tolist() == ["a", "b", "human:x"]


def test_leaderboard_by_hand_thresholded_rouge_with_bootstrap():
    choice = result_options.ValueChoice("rouge_l", "strict", "thresholded", 0.75)
    values = result_options.with_choice(tiny_results(), choice)
    board = leaderboards.leaderboard(values, choice, n_boot=400)
    a = board[board["model"] == "a"].iloc[0]
    # 0.9, 0.9, 0.9 and 0.5 (below the threshold: 0): (90 + 90 + 90 + 0) / 4
    assert a["mean"] == pytest.approx(67.5) and a["n"] == 4
    # bootstrap means of 4 draws from {90, 90, 90, 0}: multiples of 22.5, within [0, 90]
    assert 0 <= a["ci_low"] <= a["mean"] <= a["ci_high"] <= 90
    assert (a["ci_low"] / 22.5) == pytest.approx(round(a["ci_low"] / 22.5))
    assert a["ci_high"] == 90.0  # all four draws are 90 with probability (3/4)^4 = 32 %
    x = board[board["model"] == "human:x"].iloc[0]
    assert (x["mean"], x["ci_low"], x["ci_high"]) == (90.0, 90.0, 90.0)  # one response: no spread
    assert set(board["ci_method"]) == {"bootstrap"}
    again = leaderboards.leaderboard(values, choice, n_boot=400)
    assert again.equals(board)  # seeded


def test_leaderboard_table_names_the_metric(frame):
    choice = result_options.ValueChoice(rouge="paper")
    values = result_options.with_choice(frame, choice)
    board = leaderboards.leaderboard(values, choice, n_boot=50)
    table = leaderboards.leaderboard_table(board, choice)
    assert list(table.columns) == ["rank", "model", "prompt", "who", "mean_rouge_l_paper_t0.75", "n",
                                   "ci95_low_rouge_l_paper_t0.75", "ci95_high_rouge_l_paper_t0.75", "ci95_method",
                                   "below_min_n"]
    assert set(table["ci95_method"]) == {"percentile bootstrap"}
    expected = values.groupby(["model", "prompt"])["value"].mean()
    for record, prompt in zip(table.to_dict("records"), board["prompt"]):
        assert record["mean_rouge_l_paper_t0.75"] == pytest.approx(expected[(record["model"], prompt)], abs=0.005)
    # people have no prompt: their rows show none (regression, issue 46: `prompt: naive`)
    people = table["who"] != "model"
    assert people.any() and set(table.loc[people, "prompt"]) == {people_vs_models.NO_PROMPT}
    assert people_vs_models.NO_PROMPT not in set(table.loc[~people, "prompt"])
    # people have no BLEU: they are not on BLEU's leaderboard
    bleu = result_options.ValueChoice("bleu")
    assert not leaderboards.leaderboard(result_options.with_choice(frame, bleu), bleu, n_boot=20)["who"].ne(
        "model").any()
    with pytest.raises(ValueError, match="unknown sort"):
        leaderboards.leaderboard(values, choice, sort="best")


# ---------------------------------------------------------------- correlations need 3 groups


def test_correlation_over_two_groups_is_refused(frame):
    # regression: one point per model left good and weak (people have no BLEU), and r printed 1.000
    table = comparisons.metric_table(result_options.with_value(frame), ["model"])
    metrics = [m for m in comparisons.CORRELATION_METRICS.values() if m in table.columns]
    result = comparisons.correlate(table, metrics)
    assert result.frame is None and result.n_groups == 2
    assert "at least 3 groups with every metric; there are 2 (2 more lack a metric" in result.reason
    assert comparisons.correlation_frame(table, metrics) is None


def test_correlation_by_hand_over_three_groups():
    table = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [2.0, 4.0, 7.0], "z": [5.0, 5.0, 5.0]})
    result = comparisons.correlate(table, ["x", "y", "z"])
    assert result.reason is None and result.n_groups == 3 and result.constant == ("z",)
    r = result.frame.set_index(["metric_a", "metric_b"])["r"]
    # by hand: x - mean = (-1, 0, 1), y - mean = (-7/3, -1/3, 8/3): r = 5 / sqrt(2 * 114/9)
    assert r[("x", "y")] == pytest.approx(5 / np.sqrt(2 * 114 / 9))
    assert set(result.frame["metric_a"]) == {"x", "y"}  # z does not vary: left out, not NaN


@pytest.mark.parametrize("table, metrics, reason", [
    (pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 1.0]}), ["x", "y"], "there are 2"),
    (pd.DataFrame({"x": [1.0, 2.0, np.nan], "y": [3.0, 1.0, 2.0]}), ["x", "y"], "there are 2 (1 more lack"),
    (pd.DataFrame({"x": [1.0]}), ["x"], "at least 2 metrics"),
    (pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [4.0, 4.0, 4.0]}), ["x", "y"], "y is the same in all 3"),
])
def test_correlation_refusals_say_why(table, metrics, reason):
    result = comparisons.correlate(table, metrics)
    assert result.frame is None and reason in result.reason


# ---------------------------------------------------------------- the view's state in the URL

OPTIONS = {"model": ["good", "human", "human:ann1", "weak"], "prompt": ["hint", "naive"], "depth": [1, 2],
           "format": ["csv", "json"]}


@pytest.mark.parametrize("values", [
    {},
    {"view": "heatmap", "metric": "rouge_l", "rouge": "paper", "mode": "thresholded", "threshold": 0.6,
     "rows": "task", "cols": "depth", "sort": "name", "min_n": 5, "items": "shared", "people": "human:ann1",
     "model": ("good", "human"), "depth": (2,)},
    {"source": "paper", "paper": "table4"},
    {"view": "leaderboard", "metric": "exact_match", "items": "all", "board": "ci_low", "min_n": 100000},
    {"view": "paired", "a": "good", "b": "weak", "pair_rows": "task", "pair_cols": "width", "threshold": 0.0},
])
def test_url_round_trip(values):
    params = url_state.write_url(values)
    assert all(isinstance(v, (str, list)) for v in params.values())
    state = url_state.read_url(params, OPTIONS)
    assert state.values == values and state.notes == ()
    if "depth" in values:
        assert params["depth"] == ["2"] and state.values["depth"] == (2,)  # typed as the filter holds it


@pytest.mark.parametrize("params, kept, note", [
    ({"view": "nope"}, {}, "view='nope' is not a valid choice"),
    ({"view": ["heatmap", "leaderboard"]}, {"view": "leaderboard"}, None),  # the last one counts
    ({"threshold": "nan"}, {}, "threshold='nan'"),
    ({"threshold": "inf"}, {}, "threshold='inf'"),
    ({"threshold": "1.05"}, {}, "threshold='1.05'"),
    ({"threshold": "0.33"}, {}, "threshold='0.33'"),
    ({"min_n": "0"}, {}, "min_n='0'"),
    ({"min_n": "+5"}, {}, "min_n='+5'"),
    ({"min_n": "²"}, {}, "min_n='²'"),  # issue 19: '²'.isdigit() is true, int('²') raises
    ({"min_n": "١٢"}, {}, "min_n='١٢'"),  # Arabic-Indic digits: int() takes them, a URL must not
    ({"min_n": "1²"}, {}, "min_n='1²'"),
    ({"threshold": "٠.٥"}, {}, "threshold='٠.٥'"),
    ({"min_n": "9" * 5000}, {}, "min_n: a value longer than 200 characters"),
    ({"min_n": "100001"}, {}, "min_n='100001'"),
    ({"people": "good"}, {}, "people='good'"),  # a model is no person
    ({"a": "'; DROP TABLE results; --"}, {}, "a=\"'; DROP TABLE results; --\""),
    ({"model": ["good", "ghost", "good"]}, {"model": ("good",)}, "model: 'ghost' not among the results"),
    ({"depth": ["1", "x"] * 100}, {"depth": (1,)}, "only the first 50 of 200 values"),
    ({"colour": "red"}, {}, "unknown parameter 'colour'"),
    ({"embed": "true", "embed_options": "dark_theme"}, {}, None),  # Streamlit's own
    ({"view": ""}, {}, "view='' is not a valid choice"),
    ({"view": []}, {}, None),
])
def test_url_hostile_values_are_ignored_with_a_note(params, kept, note):
    state = url_state.read_url(params, OPTIONS)
    assert state.values == kept
    if note is None:
        assert state.notes == ()
    else:
        assert any(note in n for n in state.notes), state.notes
    assert all(len(n) < 200 for n in state.notes)  # a long value is never echoed


def test_url_too_many_parameters_and_no_options():
    state = url_state.read_url({f"k{i}": "v" for i in range(500)}, {})
    assert state.values == {} and state.notes[0] == "only the first 40 of 500 parameters were read"
    assert len(state.notes) == 41
    # before any result is visible, no model or filter value is known
    state = url_state.read_url({"model": "good", "a": "good", "view": "leaderboard"}, {})
    assert state.values == {"view": "leaderboard"} and len(state.notes) == 2


def test_every_url_key_is_known_to_the_reader():
    assert set(url_state.write_url({key: None for key in url_state.URL_KEYS})) == set()
    assert url_state.write_url({"zzz": "1", "view": "heatmap"}) == {"view": "heatmap"}


def test_arranging_a_leaderboard_again_equals_computing_it_so():
    choice = result_options.ValueChoice("rouge_l", "strict", "raw")
    values = result_options.with_choice(tiny_results(), choice)
    board = leaderboards.leaderboard(values, choice, n_boot=100)
    for sort in leaderboards.LEADERBOARD_SORTS:
        for min_n in (1, 2, 5):
            again = leaderboards.arrange_leaderboard(board, sort, min_n)
            assert again.equals(leaderboards.leaderboard(values, choice, sort=sort, min_n=min_n, n_boot=100))
    with pytest.raises(ValueError):
        leaderboards.arrange_leaderboard(board, "mean", 0)


def test_results_csvs_write_no_formula():
    """Issue 19, item 8: a model named as a formula, in a table and the leaderboard's CSV."""
    import csv
    import io

    frame = tiny_results()
    frame["model"] = frame["model"].replace({"a": '=HYPERLINK("http://evil.example","x")', "b": "+cmd|' /C calc'!A0"})
    choice = result_options.ValueChoice("exact_match")
    board = leaderboards.leaderboard(result_options.with_choice(frame, choice), choice, min_n=2)
    table = choice.label_table(leaderboards.leaderboard_table(board, choice))
    parsed = list(csv.reader(io.StringIO(page_tables.csv_bytes(table).decode("utf-8"), newline="")))
    cells = [cell for row in parsed for cell in row]
    assert "'=HYPERLINK(\"http://evil.example\",\"x\")" in cells and "'+cmd|' /C calc'!A0" in cells
    assert not [c for c in cells if c.startswith(("=", "+", "@"))]
    back = pd.read_csv(io.BytesIO(page_tables.csv_bytes(table)))
    assert back["rank"].tolist() == table["rank"].tolist()  # numbers stay numbers


def test_a_closed_settings_box_says_what_it_keeps_on():
    choice = result_options.ValueChoice(rouge="paper", threshold=0.5)
    assert result_options.settings_line(choice, "each person", 3, ("task category", "depth", "all by mean")) == (
        "Settings: paper ROUGE-L ≥ 0.5 · people each person · minimum n 3 · rows task category × columns depth "
        "(all by mean).")
    assert result_options.settings_line(result_options.ValueChoice(metric="bleu")) == "Settings: BLEU."


@pytest.mark.parametrize("dtype", ["string", "str", "object", "category"])
def test_human_mask_finds_people_in_every_kind_of_model_column(dtype):
    """People's rows (``human`` and ``human:<name>``), whatever the column's type, a missing model none."""
    models = ["gpt-4o", "human", "human:ann1", None, "humanoid", "x-human:y", "human:"]
    frame = pd.DataFrame({"model": pd.Series(models, dtype=dtype)})
    assert people_vs_models.human_mask(frame).tolist() == [False, True, True, False, False, False, True]
