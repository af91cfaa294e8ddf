"""Results count each answer once (issue 32, item 1).

On 820246e Results loaded every person's answer twice, as ``human:<name>`` and again in the
pool ``human``: with *All items* on and neither axis the model, a cell's n was the models' results
plus each human answer twice, and people were averaged with models without the view saying so.

The oracle here reads the answers from the database by another road (the responses of the
study's people, the ``results`` table's rows), never through ``load_results``; the views must
agree with it over random mixes of people and models, axes, filters, pooling and scopes."""

import random
from collections import Counter

import pandas as pd
import pytest

from structext_core.structext_eval import results_store
from structext_core.studio import data_scope, study
from structext_core.views import heatmaps, people_vs_models, result_options

AXES = ("model", "prompt", "suite", "format", "task", "depth", "width")


@pytest.fixture(scope="module")
def answers(dataset):
    """Every answer in the database, one row each, read without ``load_results``."""
    db = dataset["db"]
    rows = [{"sample_id": r["sample_id"], "model": r["model"], "depth": int(r["depth"]), "person": False}
            for r in db.query("SELECT sample_id, model, depth FROM results")]
    people = study.responses_frame(db, dataset["study_id"])
    rows += [{"sample_id": r["sample_id"], "model": f"human:{r['annotator']}", "depth": int(r["depth"]),
              "person": True} for r in people.to_dict("records")]
    return pd.DataFrame(rows)


def test_results_hold_each_answer_once(frame, answers):
    """The frame Results reads has one row per answer: no model is a pool repeating persons."""
    assert len(frame) == len(answers)
    assert Counter(frame["model"]) == Counter(answers["model"])
    cells = heatmaps.heatmap_frame(result_options.with_value(frame), "task", "depth", n_boot=10)
    assert cells["n"].sum() == len(answers)  # the view: task category x depth, all items


@pytest.mark.parametrize("seed", range(16))
def test_heatmap_cells_count_each_answer_in_view_once(frame, answers, seed):
    """Over random mixes of people and models, the n of a heatmap's cells add up to the answers in view."""
    rnd = random.Random(seed)
    everyone = sorted(answers["model"].unique())
    kept = rnd.sample(everyone, rnd.randint(1, len(everyone)))
    row, col = rnd.sample(AXES, 2)
    whose, how = rnd.choice(list(people_vs_models.WHOSE)), rnd.choice(list(people_vs_models.PEOPLE_AS))
    per_person = rnd.random() < 0.5  # an admin; else a role that sees people pooled only
    scope = data_scope.ResultsScope(everything=True) if per_person else data_scope.ResultsScope(
        models=True, suites=tuple(sorted(set(frame["suite"]))),
        human_sources=(results_store.HUMAN_SOURCE_PREFIX + "pilot",))
    values = result_options.with_value(data_scope.filter_results(frame[frame["model"].isin(kept)], scope))
    restricted = rnd.random() < 0.5
    items = people_vs_models.item_scope(values, people_vs_models.POOL) if restricted else people_vs_models.ItemScope()
    depth = rnd.choice([(1,), (1, 2), (2, 3)])
    filters = {} if "depth" in (row, col) else {"depth": depth}

    cells = heatmaps.heatmap_frame(people_vs_models.heatmap_input(values, row, col, items, filters, whose, how),
                                       row, col, n_boot=5)

    expected = answers[answers["model"].isin(kept)]
    if restricted:
        expected = expected[expected["sample_id"].isin(set(expected.loc[expected["person"], "sample_id"]))]
    if filters:
        expected = expected[expected["depth"].isin(depth)]
    if "model" not in (row, col) and whose != "both":
        expected = expected[expected["person"] == (whose == "people")]
    assert (int(cells["n"].sum()) if len(cells) else 0) == len(expected)
    if "model" in (row, col):
        shown = set(cells["model"].astype(str))
        assert not ("human" in shown and any(m.startswith("human:") for m in shown))  # a pool beside its persons
        if how == "pool" or not per_person:
            assert not any(m.startswith("human:") for m in shown)
