"""Issue 46, item 2: people's rows on Results say true things: no prompt (people have none), no
``None`` where a metric does not apply to people (BLEU), in the drill-down and the leaderboard."""
from __future__ import annotations

from structext_core.views import people_vs_models
from tests.pages.light_choices import choice, choose
from tests.pages.test_page_results import DRILL, dataset_root, drill_table, env, open_page, select  # noqa: F401
from tests.pages.test_screens_say_true_things import raw_missing


def test_a_drill_down_into_the_peoples_row_shows_no_prompt_and_no_none(env):  # noqa: F811
    at = open_page(boxes=(DRILL,))  # the samples behind a cell: their box open, as a click does
    rows = at.selectbox(key="rs_heatmap_model_format_drill_row").options
    person = next(r for r in rows if people_vs_models.is_human(r))
    select(at, "rs_heatmap_model_format_drill_row", person)
    select(at, "rs_heatmap_model_format_drill_col", at.selectbox(key="rs_heatmap_model_format_drill_col").options[0])
    table = drill_table(at)
    assert len(table) and set(table["prompt"]) == {people_vs_models.NO_PROMPT}  # regression: "naive"
    assert not any("naive" in label for label in at.selectbox(key=next(
        s.key for s in at.selectbox if s.label == "Sample")).options)
    assert raw_missing(at) == []  # regression: bleu None on people's rows


def test_every_view_of_the_results_page_shows_no_raw_missing_value(env):  # noqa: F811
    at = open_page()
    views = choice(at, "rs_view").options
    found = {}
    for view in views:
        choose(at, "rs_view", view)
        assert not at.exception, (view, [e.value for e in at.exception])
        if missing := raw_missing(at):
            found[view] = missing
    assert found == {}
