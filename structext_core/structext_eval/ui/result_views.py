"""StrucText-Eval's views of imported results (Results, ``Data: imported``): the heatmap, depth x
width, people vs models, Test vs Real-Test, metric correlation, the paired comparison and the
leaderboard, each with its controls and exports, and the drill-down to the samples behind a cell.
UI only: every number comes from ``structext_core.views``."""

import dataclasses
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from structext_core.structext_eval import drill_downs, results_charts, results_frame, results_store, sealed, url_state
from structext_core.structext_eval.result_dimensions import DIMENSIONS, ITEM_COLUMNS
from structext_core.structext_eval.ui.results_common import (
    DIMENSION_TITLES,
    DRILL_OPEN,
    KEPT_ACROSS_VIEWS,
    drill_key,
    drill_rows,
    exports,
    follow_click,
    heatmap_cells,
    keep_valid,
    leaderboard_rows,
    people_facts,
    remember,
    scope_caption,
    scoped_frame,
    show_chart,
    show_heatmap,
    value_frame,
)
from structext_core.studio import access, data_scope
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_choice, light_panel, widgets
from structext_core.views import cells as shown_cells
from structext_core.views import (
    charts,
    comparisons,
    heatmaps,
    leaderboards,
    people_vs_models,
    result_options,
)

# ---------------------------------------------------------------- imported results


#: The session key of the open state of the filters' box.
FILTERS_OPEN = "rs_filters_open"
#: The session key of the open state of the Settings box.
SETTINGS_OPEN = "rs_settings_open"


class Settings:
    """The view's settings (metric, people, minimum n, a heatmap's axes) in one box whose controls are
    drawn only while it is open (opening it reruns the view), so the first view shows the chart, not a
    dozen controls. Closed, the values chosen stay on (kept under ``<key>_kept``, see
    :data:`KEPT_ACROSS_VIEWS`) and one line under the box says what they are."""

    def __init__(self) -> None:
        #: where the controls go; None: the box is closed
        self.box = widgets.lazy_section("Settings", key=SETTINGS_OPEN, icon=":material/tune:")
        self._line = None if self.box else light_panel.placeholder()  # written as each setting is known
        self._said: dict = {}
        state = st.session_state
        # The values last drawn: closed, every one (a control not drawn may hold a stale value); open,
        # those Streamlit forgot (a control the view draws now holds the person's last choice).
        for key in KEPT_ACROSS_VIEWS:
            if f"{key}_kept" in state and (self.box is None or key not in state):
                state[key] = state[f"{key}_kept"]

    @staticmethod
    def value(key: str, options, default):
        """The value a control not drawn holds, ``default`` unless it is one of ``options``."""
        keep_valid(key, options, default)
        return st.session_state[key]

    @staticmethod
    def kept(**values) -> None:
        """Keep the values of controls just drawn (by session key), for the runs that do not draw them."""
        for key, value in values.items():
            st.session_state[f"{key}_kept"] = value

    def say(self, **parts) -> None:
        """Note values for the closed box's line (the arguments of ``result_options.settings_line``)."""
        self._said.update(parts)
        if self._line is not None and "choice" in self._said:
            self._line.caption(result_options.settings_line(**self._said))


def choose_filters(frame: pd.DataFrame, dimensions) -> dict:
    """The filters of ``dimensions`` (those with more than one value), in a box whose boxes are drawn only
    while it is open (opening it reruns the view); closed, the filters chosen stay on (its label counts
    them). A filter's value is kept under ``rs_filter_<dimension>_kept``, as Streamlit forgets a widget
    it did not draw."""
    options = result_options.filter_options(frame, DIMENSIONS)
    offered = [d for d in dimensions if len(options.get(d, [])) > 1]
    state = st.session_state
    for dimension in offered:
        key = f"rs_filter_{dimension}"
        if key not in state and f"{key}_kept" in state:
            state[key] = state[f"{key}_kept"]
        if key in state:  # values no longer offered (a URL, other filters) drop out
            state[key] = [v for v in state[key] if v in options[dimension]]
    chosen = {d: tuple(state.get(f"rs_filter_{d}") or ()) for d in offered}
    on = sum(bool(v) for v in chosen.values())
    if on and FILTERS_OPEN not in state:  # a link with filters opens on them
        state[FILTERS_OPEN] = True
    box = widgets.lazy_section("Filters", key=FILTERS_OPEN, icon=":material/filter_list:")
    if box:
        columns = box.columns(3)
        for i, dimension in enumerate(offered):
            key = f"rs_filter_{dimension}"
            chosen[dimension] = tuple(columns[i % 3].multiselect(
                DIMENSION_TITLES[dimension], options[dimension], key=key, placeholder="all"))
            state[f"{key}_kept"] = list(chosen[dimension])
    elif on:  # what the closed box keeps on
        widgets.caption(markdown_text("Filters on: " + "; ".join(f"{DIMENSION_TITLES[d]} {', '.join(map(str, v))}"
                                                            for d, v in chosen.items() if v)) + ".")
    chosen = {k: v for k, v in chosen.items() if v}
    for dimension, values in chosen.items():
        remember(dimension, values)
    return chosen


def drill(frame: pd.DataFrame, chosen: "Chosen", row: str, col: str, cells: pd.DataFrame, name: str) -> None:
    """The samples behind one cell of the ``name`` chart (heatmap, paired). Its boxes are keyed by
    the chart's axes (:func:`drill_key`): after the axes change, they start afresh instead of
    showing the old axes' labels over the new cell's rows."""
    # Drawn only while open (opening it, or clicking a cell, reruns the view): its grid and boxes cost the
    # page about 0.7 s in the browser.
    box = widgets.lazy_section("Samples behind a cell", key=DRILL_OPEN, icon=":material/table_rows:")
    if box:
        with box:
            drill_cell(frame, chosen, row, col, cells, name)


def drill_cell(frame: pd.DataFrame, chosen: "Chosen", row: str, col: str, cells: pd.DataFrame, name: str) -> None:
    """The drill-down's boxes, its table and the sample picked (:func:`drill`)."""
    key = drill_key(name, row, col)
    rows_available = heatmaps.axis_order(cells, "row")
    cols_available = heatmaps.axis_order(cells, "col")
    for widget, options in ((f"rs_{key}_drill_row", rows_available), (f"rs_{key}_drill_col", cols_available)):
        if st.session_state.get(widget) not in (None, *options):
            del st.session_state[widget]  # a cell picked before the filters changed
    left, right = st.columns(2)
    row_value = left.selectbox(DIMENSION_TITLES.get(row, row), rows_available, key=f"rs_{key}_drill_row")
    col_value = right.selectbox(DIMENSION_TITLES.get(col, col), cols_available, key=f"rs_{key}_drill_col")
    part = drill_downs.cell_rows(frame, row, row_value, col, col_value)
    if part.empty:
        widgets.info(f"No results for {row} {row_value} and {col} {col_value}.")
        return
    samples = sealed.drop_hidden_samples(drill_rows(chosen.db_path, chosen.version, part),
                                         sealed.hidden_samples(chosen.db, chosen.user))
    if samples.empty:
        widgets.info("The samples behind this cell are in an open study: they stay hidden until it is closed.")
        return
    widgets.caption(f"{plural(len(part), 'result')} in this cell; "
               f"{'the 200 lowest-scoring' if len(part) > 200 else 'all'} shown, lowest {chosen.choice.title} first.")
    samples = people_vs_models.people_without_prompt(samples)  # a person has no prompt setting
    # a metric that does not apply (people's BLEU) reads as a dash, not None
    summary = shown_cells.without_missing(samples.drop(columns=["reference", "question", "requirement", "answer",
                                                          "response"]), digits=3)
    st.dataframe(summary, hide_index=True, key=f"rs_{key}_drill_table")
    exports(chosen.choice.file_name(f"drilldown_{name}"), table=chosen.choice.label_table(samples))
    labels = [f"{r.sample_id} · {r.model} · {r.prompt} · {r.value:.1f}" for r in samples.itertuples()]
    # One box per cell: with one key for all cells the browser kept showing the previous
    # cell's label after another cell was picked.
    pick = st.selectbox("Sample", range(len(labels)), format_func=labels.__getitem__,
                        key=f"rs_{key}_drill_pick_{row_value}_{col_value}")
    item = samples.iloc[pick]
    st.markdown(f"**Question.** {markdown_text(item['question'])}")
    st.markdown(f"**Requirement.** {markdown_text(item['requirement'])}")
    a, b = st.columns(2)
    a.markdown("**Answer**")
    # long texts scroll in a frame of their own: a 20,000-character response would fill pages
    widgets.text_block(item["answer"], max_height=FRAME_HEIGHT, where=a)
    b.markdown(f"**Response** (extracted answer; strict ROUGE-L {item['rouge_l']:.3f}, paper ROUGE-L "
               f"{item['rouge_l_paper']:.3f}, exact match {int(item['exact_match'])})")
    widgets.text_block(item["answer_extracted"], max_height=FRAME_HEIGHT, where=b)
    with st.expander(f"Full response ({plural(len(item['response']), 'character')})"):
        widgets.text_block(item["response"], max_height=FRAME_HEIGHT)
    with st.expander(f"Reference ({plural(len(item['reference']), 'character')})"):
        widgets.text_block(item["reference"][:200_000], wrap=False, max_height=400)


#: The most a text of a sample takes on the page, in pixels (about 20 lines); a longer one scrolls.
FRAME_HEIGHT = 420


def choose_values(view: str, settings: Settings) -> result_options.ValueChoice:
    """The metric controls. The ROUGE-L version is remembered per view, and a view that redraws
    one of the paper's figures opens on the paper's metric."""
    state = st.session_state
    state.setdefault(f"rs_rouge_{view}", result_options.VIEWS[view].default_rouge)
    state.setdefault("rs_threshold", 0.75)
    if settings.box is None:  # closed: the values kept
        metric = settings.value("rs_metric", result_options.METRICS, next(iter(result_options.METRICS)))
        rouge = settings.value(f"rs_rouge_{view}", result_options.ROUGE_METRICS,
                               result_options.VIEWS[view].default_rouge)
        mode = settings.value("rs_mode", result_options.MODES, result_options.MODES[0])
        threshold = state["rs_threshold"]
    else:
        c1, c2, c3, c4 = settings.box.columns([2, 3, 2, 2])
        metric = c1.selectbox("Metric", list(result_options.METRICS), format_func=result_options.METRICS.get,
                              key="rs_metric")
        rouge = c2.radio("ROUGE-L", list(result_options.ROUGE_METRICS), format_func=result_options.ROUGE_METRICS.get,
                         key=f"rs_rouge_{view}", disabled=metric != "rouge_l" or view == "metric_correlation",
                         help="; ".join(result_options.ROUGE_DESCRIPTIONS.values()))
        mode = c3.radio("Scores", result_options.MODES, horizontal=True, key="rs_mode", disabled=metric != "rouge_l",
                        help="thresholded: a ROUGE-L below the threshold counts as 0 (the paper's rule)")
        threshold = c4.slider("Threshold", 0.0, 1.0, step=url_state.THRESHOLD_STEP, key="rs_threshold",
                              disabled=metric != "rouge_l" or mode != "thresholded")
        settings.kept(rs_metric=metric, rs_mode=mode, rs_threshold=threshold, **{f"rs_rouge_{view}": rouge})
    remember("metric", metric)
    if metric == "rouge_l":
        remember("rouge", rouge)
        remember("mode", mode)
        if mode == "thresholded":
            remember("threshold", threshold)
    return result_options.ValueChoice(metric, rouge, mode, threshold)


def choose_scope(source: tuple, view: str, settings: Settings) -> tuple[people_vs_models.ItemScope, int, str]:
    """Which items the view uses, its minimum n and how it shows people (pooled or each person;
    each answer is counted once either way). When people answered items, the views of
    :data:`result_options.ITEM_VIEWS` compare them with models on those items unless “All items”
    is on (the default when no model answered any of them); the caption gives the number of shared
    items. ``source``: the values' (database path, data version, scope, choice), whose people's facts
    and captions are cached (``results_common.people_facts``, ``scope_caption``)."""
    facts = people_facts(*source)
    people = list(facts.people)
    offers_items = view in result_options.ITEM_VIEWS and bool(people)
    offers_min_n = view in result_options.MIN_N_VIEWS
    how = choose_people_as(people, settings)
    if not (offers_items or offers_min_n):
        return people_vs_models.ItemScope(), result_options.DEFAULT_MIN_N, how
    a, b, c = settings.box.columns([2, 3, 2]) if settings.box is not None else (None, None, None)
    said = scope_caption(*source, None)
    if offers_items:
        if "rs_all_items" not in st.session_state and not facts.models_on_people_items:
            # restricted to people's items, the view would show people alone
            st.session_state["rs_all_items"] = facts.any_model
        keep_valid("rs_people", people, people[0])
        if a is None:
            everything, who = bool(st.session_state.get("rs_all_items", False)), st.session_state["rs_people"]
        else:
            everything = a.toggle("All items", key="rs_all_items",
                                  help="Off: people and models on the same items, those people answered. On: "
                                       "every item, so models are also scored on items no person answered.")
            who = b.selectbox("Items answered by", people, key="rs_people", disabled=everything,
                              help="`human` is the pool of everyone's answers; `human:<name>` one person's.")
            settings.kept(rs_all_items=everything, rs_people=who)
        remember("items", "all" if everything else "shared")
        if not everything:
            remember("people", who)
            said = scope_caption(*source, who)
    scope = said.scope
    min_n = result_options.DEFAULT_MIN_N
    if offers_min_n:
        st.session_state.setdefault("rs_min_n", result_options.DEFAULT_MIN_N)
        if c is None:
            min_n = min(max(int(st.session_state["rs_min_n"]), 1), result_options.MAX_MIN_N)
        else:
            min_n = int(c.number_input("Minimum n", min_value=1, max_value=result_options.MAX_MIN_N, step=1,
                                       key="rs_min_n", help="Cells (leaderboard rows) with fewer results are "
                                                            "greyed out (flagged), not hidden."))
            settings.kept(rs_min_n=min_n)
        settings.say(min_n=min_n)
        remember("min_n", min_n)
    if offers_items:
        widgets.caption(said.sentence + ("" if scope.restricted else " Models are also scored on items no person answered."))
        if said.warning is not None:
            widgets.warning(said.warning, icon=":material/info:")
        if scope.restricted and not facts.models_on_people_items:
            widgets.info("No model result is on the items people answered: turn on **All items** to see the models.",
                    icon=":material/info:")
    return scope, min_n, how


def choose_people_as(people: list[str], settings: Settings) -> str:
    """Pooled (``human``) or each person (``human:<name>``): offered when there are persons."""
    if len(people) < 2:
        return "pool"
    st.session_state.setdefault("rs_people_as", "pool")
    if settings.box is None:
        how = settings.value("rs_people_as", people_vs_models.PEOPLE_AS, "pool")
    else:
        how = settings.box.radio("People", list(people_vs_models.PEOPLE_AS), horizontal=True, key="rs_people_as",
                                 format_func=people_vs_models.PEOPLE_AS.get,
                                 help="Each answer is counted once: in the pool `human` (everyone together) or "
                                      "under its person `human:<name>`.")
        settings.kept(rs_people_as=how)
    settings.say(people=people_vs_models.PEOPLE_AS[how])
    remember("people_as", how)
    return how


def imported_page(db, user, db_path: str, version: tuple, scope: data_scope.ResultsScope) -> None:
    frame_all = scoped_frame(db_path, version, scope)
    sources_block(frame_all, user)
    view = light_choice.choose("View", list(result_options.VIEWS), key="rs_view",
                               format_func=lambda key: result_options.VIEWS[key].label)
    remember("view", view)
    settings = Settings()
    choice = choose_values(view, settings)
    settings.say(choice=choice)
    items, min_n, people_as = choose_scope((db_path, version, scope, choice), view, settings)
    values = value_frame(db_path, version, scope, choice, people_as)
    chosen = Chosen(db, db_path, version, scope, choice, items, min_n, people_as=people_as, user=user)
    if note := results_frame.scored_otherwise(results_store.list_uploads(db), choice):
        widgets.caption(note)
    missing = people_vs_models.missing_values(values, choice)
    if missing and view != "metric_correlation":
        widgets.caption(f"{missing:,} model results have no {choice.title.removesuffix(' (%)')} (stored before the "
                   "paper's metric was); they are left out. Re-import their files to score them.")
    if view == "heatmap":
        heatmap_view(chosen, values, settings)
        return
    filters = choose_filters(values, DIMENSIONS)
    frame = result_options.apply_filters(items.apply(values), filters)
    if frame.empty:
        widgets.info("No results match these filters.")
        return
    FRAME_VIEWS[view](dataclasses.replace(chosen, filters=tuple(sorted(filters.items()))), frame)


def sources_block(frame_all: pd.DataFrame, user) -> None:
    n_sources = results_frame.source_count(frame_all)  # the table itself is made once its box is opened
    if access.restricted(access.role_of(user)):
        widgets.caption(f"{len(frame_all):,} scored model results of the suites in no open study (public read-only "
                   "mode); samples of open studies and human results are left out.")
    else:
        widgets.caption(results_frame.sources_said(frame_all))
    # drawn only while open (opening it reruns the view): a grid costs the page about 0.6 s
    box = widgets.lazy_section(f"Sources ({n_sources:,})", key="rs_sources_open")
    if box:
        sources = results_frame.describe_sources(frame_all)
        with box:
            st.dataframe(sources, hide_index=True)
            exports("sources", table=sources)


@dataclass(frozen=True)
class Chosen:
    """What the controls above the view chose."""

    db: object
    db_path: str
    version: tuple
    scope: data_scope.ResultsScope
    choice: result_options.ValueChoice
    items: people_vs_models.ItemScope = people_vs_models.ItemScope()
    min_n: int = result_options.DEFAULT_MIN_N
    filters: tuple = ()  # (dimension, values) pairs, sorted: a cache key
    people_as: str = "pool"  # people_vs_models.PEOPLE_AS
    user: object = None  # who looks: the drill-down hides the samples of studies open to them


def heatmap_view(chosen: Chosen, values: pd.DataFrame, settings: Settings) -> None:
    st.session_state.setdefault("rs_col", "format")
    if settings.box is None:
        row, col = settings.value("rs_row", DIMENSIONS, DIMENSIONS[0]), settings.value("rs_col", DIMENSIONS, "format")
        sort = settings.value("rs_sort", result_options.HEATMAP_SORTS, next(iter(result_options.HEATMAP_SORTS)))
    else:
        a, b, c = settings.box.columns(3)
        row = a.selectbox("Rows", DIMENSIONS, key="rs_row", format_func=DIMENSION_TITLES.get)
        col = b.selectbox("Columns", DIMENSIONS, key="rs_col", format_func=DIMENSION_TITLES.get)
        sort = c.selectbox("Order rows and columns", list(result_options.HEATMAP_SORTS), key="rs_sort",
                           format_func=result_options.HEATMAP_SORTS.get)
        settings.kept(rs_row=row, rs_col=col, rs_sort=sort)
    settings.say(axes=(DIMENSION_TITLES[row], DIMENSION_TITLES[col], result_options.HEATMAP_SORTS[sort]))
    remember("rows", row)
    remember("cols", col)
    remember("sort", sort)
    if row == col:
        widgets.warning("Rows and columns show the same dimension: choose two different ones.")
        return
    filters = choose_filters(values, [d for d in DIMENSIONS if d not in (row, col)])
    items = chosen.items
    whose = choose_whose(items.apply(values), row, col)
    cells = heatmap_cells(chosen.db_path, chosen.version, chosen.scope, chosen.choice,
                          tuple(sorted(filters.items())), row, col, sort, items, whose, chosen.people_as)
    if cells.empty:
        widgets.info("No results match these filters.")
        return
    cells = heatmaps.flag_small_cells(cells, chosen.min_n)
    title = f"{chosen.choice.title} by {DIMENSION_TITLES[row]} and {DIMENSION_TITLES[col]}"
    if "model" not in (row, col) and whose != "models":
        title += f", {people_vs_models.WHOSE[whose]}"
    if items.restricted:
        title += f", on {items.label}"
    show_heatmap(cells, f"heatmap_{row}_{col}", heatmaps.cells_table(cells, row, col), key=f"rs_heatmap_table_{row}_{col}",
                 drill=drill_key("heatmap", row, col), row_title=DIMENSION_TITLES[row], col_title=DIMENSION_TITLES[col],
                 title=title, choice=chosen.choice, items=items, min_n=chosen.min_n)  # a pick belongs to these axes
    order = {"auto": "depth and width keep their order (1, 2, 3...) and the other dimensions are sorted by "
                     "their mean, best first",
             "mean": "rows and columns are sorted by their mean, best first",
             "name": "rows and columns are sorted by name (depth and width by number)"}[sort]
    widgets.caption(f"Each cell shows the mean and, under it, n (the results it rests on); {order}. Hover a cell for "
               "the 95 % bootstrap interval; click it to see its samples below. "
               + heatmaps.min_n_note(chosen.min_n, cells))
    drill(people_vs_models.heatmap_input(values, row, col, items, filters, whose, chosen.people_as), chosen, row, col,
          cells, "heatmap")


def choose_whose(frame: pd.DataFrame, row: str, col: str) -> str:
    """Whose results a heatmap without a ``model`` axis averages (models, people or both, said
    in the title): its cells never mix people and models unless the reader asks."""
    if "model" in (row, col):
        return "both"
    people = people_vs_models.human_mask(frame)
    if people.all() or not people.any():
        return "both"  # one kind only: nothing to mix
    keep_valid("rs_whose", list(people_vs_models.WHOSE), people_vs_models.default_whose(frame))
    whose = st.radio("Results of", list(people_vs_models.WHOSE), horizontal=True, key="rs_whose",
                     format_func=people_vs_models.WHOSE.get,
                     help="Neither axis is the model, so a cell would average everyone in it: choose whose "
                          "results it averages.")
    remember("whose", whose)
    return whose


def depth_width_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    cells = heatmaps.flag_small_cells(results_charts.depth_width_frame(frame), chosen.min_n)
    show_chart(results_charts.depth_width_chart(cells, chosen.choice.title, min_n=chosen.min_n), "depth_width", cells,
               choice=chosen.choice)
    widgets.caption("Each model's mean (and n under it) per depth (rows) and width (columns), as the paper's Figure 4. "
               + heatmaps.min_n_note(chosen.min_n, cells) + " Below: how much the per-format and per-task "
               "means spread within each cell (standard deviation, points).")
    show_chart(results_charts.spread_chart(cells, chosen.choice.title), "depth_width_spread", choice=chosen.choice)


def people_vs_models_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    people = people_vs_models.people_of(frame)
    if not people:
        widgets.info("No human-baseline results yet: they appear here once annotators have answered a study.")
        return
    items = chosen.items
    reference = items.people or people_vs_models.POOL
    cells = people_vs_models.people_vs_models_frame(frame, "task", people=reference, same_items=items.restricted,
                                                items=items.items if items.restricted else None)
    if items.restricted:
        widgets.caption(markdown_text(f"{plural(int(cells['items'].iloc[0]), 'item')} answered by {reference}; "
                                 "every bar uses only those items."))
        title = f"{chosen.choice.title} by task category, same items"
    else:
        widgets.caption(f"All {plural(int(cells['items'].iloc[0]), 'item')}: the models' bars include items no person answered, "
                   "so they do not compare like with like.")
        title = f"{chosen.choice.title} by task category, all items"
    chart = charts.interval_bars_chart(cells, "task", "model", title, chosen.choice.title, "task category")
    show_chart(chart, "people_vs_models", cells, choice=chosen.choice, items=items)


def test_vs_real_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    cells = comparisons.test_vs_real_frame(frame)
    if cells.empty:
        widgets.info("This view needs models with results on both Test and Real-Test (suite names `test` and "
                "`real-test`).")
        return
    value_title = chosen.choice.title
    chart = charts.interval_bars_chart(cells, "model", "set", f"{value_title}: Test against Real-Test", value_title)
    show_chart(chart, "test_vs_real", cells, choice=chosen.choice)


def metric_correlation_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    by = st.multiselect("One point per", ["model", "prompt", "format", "task", "depth", "width"],
                        default=["model", "prompt"], key="rs_corr_by")
    if not by:
        widgets.info("Choose at least one grouping.")
        return
    threshold = chosen.choice.threshold
    table = comparisons.metric_table(frame, by, threshold)
    metrics = [m for m in comparisons.CORRELATION_METRICS.values() if m in table.columns]
    result = comparisons.correlate(table, metrics)
    if result.frame is None:
        widgets.info(result.reason)
        st.dataframe(shown_cells.without_missing(people_vs_models.people_without_prompt(table.round(2)), digits=2),
                     hide_index=True)
        return
    corr = result.frame
    chart = charts.subtitled(
        charts.correlation_chart(corr, f"Correlation of metrics over {plural(result.n_groups, 'group')}"),
        f"both ROUGE-L versions (strict: extracted answer; paper: whole response), thresholded at {threshold:g} "
        "and raw, exact match and BLEU")
    show_chart(chart, f"metric_correlation_t{threshold:g}", corr)
    constant = f" Left out, the same in every group: {', '.join(result.constant)}." if result.constant else ""
    widgets.caption(f"Pearson r over the {plural(result.n_groups, 'group')} that have every metric "
               f"({len(table) - result.n_groups} without, e.g. people have no BLEU).{constant} Human judgements "
               "of model responses are not stored yet; the paper's correlations with them are under Paper tables, "
               "Figure 5.")
    # people have no BLEU (and no prompt): a dash, not None
    st.dataframe(shown_cells.without_missing(people_vs_models.people_without_prompt(table.round(2)), digits=2),
                 hide_index=True)
    exports(f"metric_means_t{threshold:g}", table=table)


def paired_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    models = sorted(frame["model"].unique())
    if len(models) < 2:
        widgets.info("Comparing needs results of at least two models.")
        return
    a, b, c, d = st.columns(4)
    dims = list(url_state.PAIR_DIMENSIONS)
    keep_valid("rs_model_a", models, models[0])
    keep_valid("rs_model_b", models, models[1])
    st.session_state.setdefault("rs_pair_row", "format")
    st.session_state.setdefault("rs_pair_col", "depth")
    model_a = a.selectbox("Model A", models, key="rs_model_a")
    model_b = b.selectbox("Model B", models, key="rs_model_b")
    row = c.selectbox("Rows", dims, key="rs_pair_row", format_func=DIMENSION_TITLES.get)
    col = d.selectbox("Columns", dims, key="rs_pair_col", format_func=DIMENSION_TITLES.get)
    remember("a", model_a)
    remember("b", model_b)
    remember("pair_rows", row)
    remember("pair_cols", col)
    if model_a == model_b or row == col:
        widgets.warning("Choose two different models and two different dimensions.")
        return
    cells = comparisons.paired_frame(frame, model_a, model_b, row, col, item_columns=ITEM_COLUMNS)
    if cells.empty:
        widgets.info(markdown_text(f"{model_a} and {model_b} share no samples (same sample and prompt)."))
        return
    cells = heatmaps.flag_small_cells(cells, chosen.min_n)
    chart = charts.paired_chart(cells, DIMENSION_TITLES[row], DIMENSION_TITLES[col],
                                f"{model_a} minus {model_b} ({chosen.choice.title}), shared samples", selectable=True,
                                min_n=chosen.min_n)
    event = show_chart(chart, "paired", cells, select_key=f"rs_paired_chart_{model_a}_{model_b}_{row}_{col}",
                       choice=chosen.choice)
    follow_click(event, drill_key("paired", row, col))
    widgets.caption(f"{plural(int(cells['n'].sum()), 'shared sample')}. Cells show the mean paired difference in points and, under "
               "it, n (pairs); * marks p < 0.05 (sign-flip permutation test, no correction for the number of cells). "
               + heatmaps.min_n_note(chosen.min_n, cells) + " Click a cell to see its samples below.")
    drill(comparisons.shared_rows(frame, model_a, model_b), chosen, row, col, cells, "paired")


def leaderboard_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    sort = st.radio("Sort by", list(leaderboards.LEADERBOARD_SORTS), horizontal=True, key="rs_board_sort",
                    format_func=leaderboards.LEADERBOARD_SORTS.get)
    remember("board", sort)
    choice = chosen.choice
    rows = leaderboard_rows(chosen.db_path, chosen.version, chosen.scope, choice, chosen.filters, chosen.items,
                            chosen.people_as)
    board = leaderboards.arrange_leaderboard(rows, sort, chosen.min_n)
    if board.empty:
        widgets.info(f"No results have a {choice.title.removesuffix(' (%)')} (people have no BLEU).")
        return
    table = leaderboards.leaderboard_table(board, choice)
    st.subheader(markdown_text(f"Leaderboard: {choice.title}"
                               + (f", on {chosen.items.label}" if chosen.items.restricted else "")))
    widgets.caption(choice.description + ".")
    # The headers stay short on screen (the subheader names the metric); the CSV's name it in full.
    metric_help = f"{choice.title}: {choice.description}"
    st.dataframe(table, hide_index=True, key="rs_board_table", column_config={
        choice.file_name("mean"): st.column_config.NumberColumn("mean (%)", help=metric_help, format="%.2f"),
        choice.file_name("ci95_low"): st.column_config.NumberColumn("95% CI low", help=metric_help, format="%.2f"),
        choice.file_name("ci95_high"): st.column_config.NumberColumn("95% CI high", help=metric_help,
                                                                     format="%.2f"),
        "ci95_method": st.column_config.TextColumn("CI method"),
        "below_min_n": st.column_config.CheckboxColumn("n below minimum"),
    })
    exports(choice.file_name("leaderboard"), table=choice.label_table(chosen.items.label_table(table)))
    method = leaderboards.CI_DESCRIPTIONS["wilson" if choice.metric == "exact_match" else "bootstrap"]
    people = "; the people pool `human` counts every answer of every person" if (board["who"] != "model").any() else ""
    widgets.caption(f"One row per model or person and prompt setting; n = responses with a value{people}. 95 % interval: "
               f"{method}. Rank by mean (ties share a rank); click a column header to sort by it. "
               + heatmaps.min_n_note(chosen.min_n, board, rows=True))


#: Every view but the heatmap works on the filtered frame; the heatmap filters around its axes.
FRAME_VIEWS = {
    "depth_width": depth_width_view,
    "people_vs_models": people_vs_models_view,
    "test_vs_real": test_vs_real_view,
    "metric_correlation": metric_correlation_view,
    "paired": paired_view,
    "leaderboard": leaderboard_view,
}
