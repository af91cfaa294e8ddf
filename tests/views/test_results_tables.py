"""The Results page's views are a table in the core, chosen by key; the paper's views name their table."""
from __future__ import annotations

from pathlib import Path

import pytest

from structext_core.structext_eval import paper
from structext_core.views import result_options


def test_views_are_keyed_and_labelled_once():
    assert list(result_options.VIEWS) == ["heatmap", "depth_width", "people_vs_models", "test_vs_real",
                                        "metric_correlation", "paired", "leaderboard"]
    assert len(set(result_options.VIEWS.values())) == len(result_options.VIEWS)


def test_the_page_draws_every_view_it_offers():
    from structext_core.structext_eval.ui import result_views

    assert {"heatmap", *result_views.FRAME_VIEWS} == set(result_options.VIEWS)
    assert all(callable(draw) for draw in result_views.FRAME_VIEWS.values())
    source = Path(result_views.__file__).read_text(encoding="utf-8")
    assert ".startswith(" not in source, "views are chosen by key, not by parsing labels"


@pytest.mark.parametrize("key", list(result_options.PAPER_VIEWS))
def test_every_paper_view_names_a_shipped_table(key):
    view = result_options.PAPER_VIEWS[key]
    if view.table is None:
        assert key == "figure5"
        return
    assert view.table in paper.TABLES
    cells = paper.heatmap_cells(view.table, view.kind)
    assert not cells.empty


def test_value_title_says_the_metric_and_its_cut():
    assert result_options.value_title("rouge_l", "thresholded", 0.75) == "strict ROUGE-L ≥ 0.75 (%)"
    assert result_options.value_title("rouge_l", "thresholded", 0.75, "paper") == "paper ROUGE-L ≥ 0.75 (%)"
    assert result_options.value_title("rouge_l", "raw", 0.75) == "strict ROUGE-L (%)"
    assert result_options.value_title("bleu", "thresholded", 0.5) == "BLEU (%)"
