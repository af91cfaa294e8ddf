"""What StrucText-Eval's Results views share: the cached frames, a chart with its exports, the
drill-down's keys, the controls kept across views, and the view's state in the URL
(:mod:`structext_core.structext_eval.url_state`: a copied address opens the same view; what it holds is checked, never trusted)."""

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from structext_core.structext_eval import drill_downs, results_frame, url_state
from structext_core.structext_eval.result_dimensions import DIMENSIONS, ORDERED_DIMENSIONS
from structext_core.studio import data_scope, storage
from structext_core.ui import benchmark_choice, light_choice, widgets
from structext_core.ui import heatmap_table as heatmap_widget
from structext_core.views import (
    charts,
    heatmap_table,
    heatmaps,
    leaderboards,
    page_tables,
    people_vs_models,
    result_options,
)

DIMENSION_TITLES = {"model": "model", "prompt": "prompt", "suite": "suite", "format": "format",
                    "task": "task category", "depth": "depth", "width": "width"}


# ---------------------------------------------------------------- cached data


# The two large frames are cached as resources: cache_data would pickle and copy 100,000
# rows on every run. They are shared between sessions, so nothing may modify them
# (the view functions return new frames).
@st.cache_resource(max_entries=2, show_spinner=False)
def load_frame(db_path: str, version: tuple) -> pd.DataFrame:
    """Stored results and the human baseline; ``version`` changes whenever they do."""
    with storage.opened(db_path) as db:
        return results_frame.load_results(db)


@st.cache_resource(max_entries=8, show_spinner=False)
def scoped_frame(db_path: str, version: tuple, scope: data_scope.ResultsScope) -> pd.DataFrame:
    """The rows this session's role may see (``scope`` from ``data_scope.results_scope``)."""
    return data_scope.filter_results(load_frame(db_path, version), scope)


@st.cache_resource(max_entries=4, show_spinner=False)
def value_frame(db_path: str, version: tuple, scope: data_scope.ResultsScope,
                choice: result_options.ValueChoice, people_as: str = "each") -> pd.DataFrame:
    """The values of ``choice``, people shown ``people_as`` (``people_vs_models.PEOPLE_AS``)."""
    return people_vs_models.people_as(result_options.with_choice(scoped_frame(db_path, version, scope), choice), people_as)


@st.cache_resource(max_entries=8, show_spinner=False)
def people_facts(db_path: str, version: tuple, scope: data_scope.ResultsScope,
                 choice: result_options.ValueChoice) -> people_vs_models.PeopleFacts:
    """``people_vs_models.people_facts`` of the values of ``choice``, each person apart: read once per
    data version, not on each run (frozen: shared between sessions)."""
    return people_vs_models.people_facts(value_frame(db_path, version, scope, choice))


@st.cache_resource(max_entries=16, show_spinner=False)
def scope_caption(db_path: str, version: tuple, scope: data_scope.ResultsScope, choice: result_options.ValueChoice,
                  people: str | None) -> people_vs_models.ScopeCaption:
    """The items ``people`` answered (None: every item) in the values of ``choice``, with their caption."""
    return people_vs_models.scope_caption(value_frame(db_path, version, scope, choice), people)


@st.cache_data(max_entries=16, show_spinner=False)
def heatmap_cells(db_path, version, scope, choice, filters, row, col, sort, items, whose, people_as) -> pd.DataFrame:
    """The heatmap's cells (``people_vs_models.heatmap_input``: each answer once)."""
    values = value_frame(db_path, version, scope, choice)
    frame = people_vs_models.heatmap_input(values, row, col, items, dict(filters), whose, people_as)
    return heatmaps.heatmap_frame(frame, row, col, sort=sort, ordered=ORDERED_DIMENSIONS)


@st.cache_data(max_entries=8, show_spinner="Ranking...")
def leaderboard_rows(db_path, version, scope, choice, filters, items, people_as) -> pd.DataFrame:
    """The leaderboard of the filtered rows on ``items`` (its bootstrap intervals are the slow
    part: cached; sorting and the minimum n are applied afterwards)."""
    values = value_frame(db_path, version, scope, choice, people_as)
    frame = result_options.apply_filters(items.apply(values), dict(filters))
    return leaderboards.leaderboard(frame, choice)


@st.cache_data(max_entries=8, show_spinner=False)
def drill_rows(db_path: str, version: tuple, part: pd.DataFrame) -> pd.DataFrame:
    """The samples behind a cell (reading the suite files is the slow part: cached)."""
    with storage.opened(db_path) as db:
        return drill_downs.drill_down(part, db=db)


@st.cache_data(max_entries=8, show_spinner="Rendering the image...")
def png_of(spec_json: str) -> bytes:
    import json

    import vl_convert

    return vl_convert.vegalite_to_png(json.loads(spec_json), scale=2)


@st.cache_data(max_entries=8, show_spinner=False)
def svg_of(spec_json: str) -> bytes:
    import json

    import vl_convert

    return vl_convert.vegalite_to_svg(json.loads(spec_json)).encode("utf-8")


# ---------------------------------------------------------------- charts built once


try:  # what st.altair_chart draws: Streamlit's own conversion, so a built chart is drawn exactly alike
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec
except ImportError:  # moved in another Streamlit: the chart is drawn by st.altair_chart
    _convert_altair_to_vega_lite_spec = None


@dataclass(frozen=True)
class BuiltChart:
    """A chart built and converted once for the same inputs (:func:`built_chart`): what the page
    draws (Streamlit's Vega-Lite spec, its data as Arrow; or, without Streamlit's converter, the
    Altair chart) and the exported files' spec."""

    shown: dict | object
    spec_json: str


@st.cache_data(max_entries=32, show_spinner=False)
def _built(_make: Callable, name: str, args: tuple, kwargs: dict, subtitle: str | None, fit: bool,
           page_wide: bool) -> BuiltChart:
    chart = _make(*args, **kwargs)  # the function is known by its ``name`` in the cache's key
    if subtitle is not None:
        chart = charts.subtitled(chart, subtitle, fit=fit)
    shown = charts.container_wide(chart) if page_wide else chart
    if _convert_altair_to_vega_lite_spec is not None:
        shown = _convert_altair_to_vega_lite_spec(shown)
    return BuiltChart(shown=shown, spec_json=chart.to_json())


def built_chart(make: Callable, *args, subtitle: str | None = None, fit: bool = False, page_wide: bool = False,
                **kwargs) -> BuiltChart:
    """``make(*args, **kwargs)`` (with ``subtitle``: :func:`charts.subtitled`; ``page_wide``:
    :func:`charts.container_wide` for the page), built and converted once per distinct inputs:
    building an Altair chart and converting it (Altair checks both against the Vega-Lite schema)
    cost every Results run about 0.2 s of CPU, for the same chart."""
    return _built(make, f"{make.__module__}.{make.__qualname__}", args, kwargs, subtitle, fit, page_wide)


# ---------------------------------------------------------------- small widgets


def exports(name: str, chart=None, table: pd.DataFrame | None = None) -> None:
    """PNG and SVG of the chart and CSV of the table, each made when its button is clicked (made on
    every run, the three cost a Results run a fifth of its CPU). ``chart``: an Altair chart, one
    :func:`built_chart` made, or a function making either (a chart the page does not draw, made only
    for its files)."""
    files = []
    if chart is not None:
        def spec() -> str:
            made = chart() if callable(chart) else chart
            return made.spec_json if isinstance(made, BuiltChart) else made.to_json()

        files += [light_choice.Download("PNG", f"{name}.png", lambda: png_of(spec()), "image/png",
                                        "The chart as a PNG image"),
                  light_choice.Download("SVG", f"{name}.svg", lambda: svg_of(spec()), "image/svg+xml",
                                        "The chart as an SVG drawing")]
    if table is not None:
        files.append(light_choice.Download("CSV", f"{name}.csv", lambda: page_tables.csv_bytes(table), "text/csv",
                                           "The chart's values as a CSV table" if chart is not None
                                           else "The table as a CSV file"))
    light_choice.downloads(f"rs_files_{name}", files, label=f"Download {name}")


def show_chart(chart, name: str, table: pd.DataFrame | None = None, select_key: str | None = None,
               choice: result_options.ValueChoice | None = None, items: people_vs_models.ItemScope | None = None,
               page_wide: bool = False):
    """Draw a chart with its exports; with ``select_key``, a click on a cell reruns the page
    and the selection state is returned. With ``choice``, the chart's subtitle says how its
    values are computed, and the file names and the CSV's ``metric`` column name the metric;
    with ``items``, the CSV's ``on_items`` column says which items the values rest on. ``page_wide``:
    the chart takes the page's width (the exported files keep its own). ``chart``: an Altair chart,
    or one :func:`built_chart` made (its subtitle and width already in it)."""
    if items is not None and table is not None:
        table = items.label_table(table)
    built = isinstance(chart, BuiltChart)
    if choice is not None:
        chart = chart if built else charts.subtitled(chart, choice.description)
        name = choice.file_name(name)
        table = choice.label_table(table) if table is not None else None
    width = "stretch" if page_wide else "content"
    if built and isinstance(chart.shown, dict):
        draw, shown = st.vega_lite_chart, chart.shown  # a copy of the cached spec (cache_data), as Streamlit takes its data out
    elif built:
        draw, shown = st.altair_chart, chart.shown
    else:
        draw, shown = st.altair_chart, charts.container_wide(chart) if page_wide else chart
    if select_key is None:
        draw(shown, width=width)
        event = None
    else:
        event = draw(shown, width=width, on_select="rerun", key=select_key, selection_mode=charts.CELL_SELECTION)
    exports(name, chart, table)
    return event


def show_heatmap(cells: pd.DataFrame, name: str, table: pd.DataFrame, *, key: str, drill: str, row_title: str,
                 col_title: str, title: str, choice: result_options.ValueChoice, items: people_vs_models.ItemScope,
                 min_n: int) -> None:
    """The heatmap of ``cells`` as a tinted table (:mod:`structext_core.ui.heatmap_table`), with the files
    of :func:`show_chart` (its PNG and SVG are the Vega-Lite chart, built when one is clicked). A click on
    a cell points the drill-down ``drill`` at it (:func:`follow_pick`); the cell the open drill-down shows
    (clicked, or chosen in its boxes) is outlined."""
    picked = None
    if st.session_state.get(DRILL_OPEN):  # the cell its boxes show: each box's value, else its first option
        picked = tuple(_shown(st.session_state.get(f"rs_{drill}_drill_{axis}"), heatmaps.axis_order(cells, axis))
                       for axis in ("row", "col"))
    data = heatmap_table.table_data(cells, row_title, col_title, title=title, subtitle=choice.description,
                                    value_title=choice.title, min_n=min_n, picked=picked)
    heatmap_widget.draw(data, key, on_pick=lambda cell: follow_pick(cell, drill))

    def chart() -> BuiltChart:
        return built_chart(charts.heatmap_chart, cells, row_title, col_title, title=title, value_title=choice.title,
                           min_n=min_n, subtitle=choice.description)

    exports(choice.file_name(name), chart, choice.label_table(items.label_table(table)))


def _shown(value, labels: list[str]) -> str:
    """What a drill-down box holding ``value`` shows among ``labels`` (a value no longer offered: the first)."""
    return value if value in labels else labels[0]


def follow_pick(cell: tuple[str, str], key: str) -> None:
    """Point the drill-down ``key``'s row and column boxes at ``cell`` (row, column) and open it."""
    st.session_state[f"rs_{key}_picked"] = cell
    st.session_state[DRILL_OPEN] = True
    st.session_state[f"rs_{key}_drill_row"], st.session_state[f"rs_{key}_drill_col"] = cell


def drill_key(name: str, row: str, col: str) -> str:
    """The state key of the drill-down under the ``name`` chart with these axes."""
    return f"{name}_{row}_{col}"


#: The session key of the open state of the drill-down's box (one for every chart).
DRILL_OPEN = "rs_drill_open"


def follow_click(event, key: str) -> None:
    """Point the drill-down's row and column boxes at the heatmap cell just clicked, and open it."""
    picked = charts.picked_cell(event.selection if event is not None else None)
    if picked is not None and picked != st.session_state.get(f"rs_{key}_picked"):
        follow_pick(picked, key)


#: Controls some runs do not draw: those only some views draw, and those of the Settings box, drawn
#: only while it is open. Streamlit forgets a widget's value in a run that does not draw it; these keep
#: theirs (a copy under ``<key>_kept``).
KEPT_ACROSS_VIEWS = ("rs_all_items", "rs_people", "rs_min_n", "rs_people_as", "rs_metric", "rs_mode",
                     "rs_threshold", "rs_row", "rs_col", "rs_sort",
                     *(f"rs_rouge_{view}" for view in result_options.VIEWS))


def keep_valid(key: str, options, default) -> None:
    """Give the control ``key`` the value ``default`` unless it holds one of ``options`` (a
    value from an earlier run, or from a URL, may no longer be offered once filters change)."""
    if st.session_state.get(key) not in list(options):
        st.session_state[key] = default


# ---------------------------------------------------------------- the view's state in the URL

#: URL key -> the session key of the control that holds it. ``rouge`` is held per view
#: (``rs_rouge_<view>``), ``items`` by the toggle ``rs_all_items``, filters by ``rs_filter_<dimension>``.
URL_WIDGETS = {"source": "rs_source", "paper": "rs_paper_view", "view": "rs_view", "metric": "rs_metric",
               "mode": "rs_mode", "threshold": "rs_threshold", "rows": "rs_row", "cols": "rs_col",
               "sort": "rs_sort", "min_n": "rs_min_n", "people": "rs_people", "board": "rs_board_sort",
               "a": "rs_model_a", "b": "rs_model_b", "pair_rows": "rs_pair_row", "pair_cols": "rs_pair_col",
               "people_as": "rs_people_as", "whose": "rs_whose"}

#: The session key of the controls drawn in this run, URL key -> value: :func:`start_run` empties
#: it, :func:`remember` notes each control and :func:`write_url_state` puts it in the URL at the end.
#: (In the session, not in this module: a module's dict would be shared by every session.)
SHOWN = "rs_shown_this_run"


def start_run() -> None:
    """Start a run of the view: no control drawn yet."""
    st.session_state[SHOWN] = {}


def remember(url_key: str, value) -> None:
    """Note a control's value for the URL."""
    st.session_state.setdefault(SHOWN, {})[url_key] = value


def apply_url_state(options: Callable[[], dict], only: tuple[str, ...] | None = None) -> None:
    """Open the view the URL describes: on a session's first run, and whenever the URL is not the
    one this page wrote last (a pasted link). Controls the URL does not name go back to their
    defaults; what it gets wrong is ignored, with a small note. ``options`` makes the values each
    key may take, called only when there is a link to read (the filters' values are a pass over every
    result, made on each run for a link almost never there: under 1 ms with 3,000, more with more).
    ``only``: the keys to read (the paper tables' viewers read the table and nothing else)."""
    current = benchmark_choice.url_now()
    mark = (only, current)
    if not current or current == st.session_state.get("rs_url_written") or mark == st.session_state.get("rs_url_read"):
        show_url_notes()
        return
    st.session_state["rs_url_read"] = mark
    params = {k: v for k, v in current.items() if only is None or k in only}
    state = url_state.read_url(params, options())
    values = state.values
    managed = [*URL_WIDGETS.values(), "rs_all_items", *(f"rs_rouge_{v}" for v in result_options.VIEWS),
               *(f"rs_filter_{d}" for d in DIMENSIONS), *(f"rs_filter_{d}_kept" for d in DIMENSIONS),
               *(f"{k}_kept" for k in KEPT_ACROSS_VIEWS)]
    for key in managed:
        st.session_state.pop(key, None)
    view = values.get("view", "heatmap")
    for key, value in values.items():
        if key in URL_WIDGETS:
            st.session_state[URL_WIDGETS[key]] = value
        elif key == "rouge":
            st.session_state[f"rs_rouge_{view}"] = value
        elif key == "items":
            st.session_state["rs_all_items"] = value == "all"
        elif key in DIMENSIONS:
            st.session_state[f"rs_filter_{key}"] = list(value)
    st.session_state["rs_url_notes"] = (state.notes, None)
    show_url_notes()


def show_url_notes() -> None:
    """What the last link opened got wrong, until the view is changed (a rerun alone keeps it)."""
    notes, _ = st.session_state.get("rs_url_notes", ((), None))
    if notes:
        widgets.caption("Ignored in this link: " + "; ".join(notes) + ".")


def write_url_state() -> None:
    """Put this run's controls in the URL (only when they changed), so the address can be shared."""
    wanted = url_state.write_url(st.session_state.get(SHOWN, {}))
    as_lists = {key: value if isinstance(value, list) else [value] for key, value in wanted.items()}
    if as_lists != benchmark_choice.url_now():
        st.query_params.from_dict(wanted)
    st.session_state["rs_url_written"] = as_lists
    notes, shown_for = st.session_state.get("rs_url_notes", ((), None))
    if notes and shown_for is None:  # the view the link opened: notes stay while it does
        st.session_state["rs_url_notes"] = (notes, as_lists)
    elif notes and shown_for != as_lists:
        del st.session_state["rs_url_notes"]
