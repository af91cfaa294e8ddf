"""Results: heatmaps of model and human results, the paper's tables, drill-down to samples.

UI only: every number comes from ``structext_core.studio.results_store``, the Results views of
``structext_core.views`` (result_options, heatmaps, people_vs_models, comparisons, leaderboards,
drill_downs, page_tables) and ``structext_core.views.charts`` (and ``paper``); what each
role sees is decided by ``structext_core.studio.access`` (visitors and annotators: the paper's tables,
and in public read-only mode model results of suites in no open study; researchers and
admins: everything; loading and deleting results: admins). Every chart and export names its
metric (``views.result_options.ValueChoice``): strict or the paper's ROUGE-L, exact match or BLEU.
When people answered items, the views that compare them with models use only those items
unless “All items” is on. The controls' state is kept in the URL (``views.url_state.read_url`` /
``write_url``): a copied address opens the same view; what it holds is checked, never trusted.
A choice at the top picks the benchmark; a benchmark with its own view (its ``RESULTS_VIEW``) is shown that.
"""

import dataclasses
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from structext_core import ui
from structext_core.evaluation import paper, results
from structext_core.structext_eval import suites
from structext_core.studio import access, results_frame, results_store, storage
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import benchmark_choice
from structext_core.ui.frame import ensure_frame
from structext_core.views import (
    charts,
    comparisons,
    drill_downs,
    heatmaps,
    leaderboards,
    page_tables,
    people_vs_models,
    result_options,
    url_state,
)

ensure_frame()
user = ui.require_page("results")

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
def scoped_frame(db_path: str, version: tuple, scope: access.ResultsScope) -> pd.DataFrame:
    """The rows this session's role may see (``scope`` from ``access.results_scope``)."""
    return access.filter_results(load_frame(db_path, version), scope)


@st.cache_resource(max_entries=4, show_spinner=False)
def value_frame(db_path: str, version: tuple, scope: access.ResultsScope,
                choice: result_options.ValueChoice, people_as: str = "each") -> pd.DataFrame:
    """The values of ``choice``, people shown ``people_as`` (``people_vs_models.PEOPLE_AS``)."""
    return people_vs_models.people_as(result_options.with_choice(scoped_frame(db_path, version, scope), choice), people_as)


@st.cache_data(max_entries=16, show_spinner=False)
def heatmap_cells(db_path, version, scope, choice, filters, row, col, sort, items, whose, people_as) -> pd.DataFrame:
    """The heatmap's cells (``people_vs_models.heatmap_input``: each answer once)."""
    values = value_frame(db_path, version, scope, choice)
    frame = people_vs_models.heatmap_input(values, row, col, items, dict(filters), whose, people_as)
    return heatmaps.heatmap_frame(frame, row, col, sort=sort)


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


# ---------------------------------------------------------------- small widgets


def exports(name: str, chart=None, table: pd.DataFrame | None = None) -> None:
    """PNG and SVG of the chart (rendered on click) and CSV of the table."""
    columns = st.columns(3)
    if chart is not None:
        spec = chart.to_json()
        columns[0].download_button("PNG", data=lambda: png_of(spec), file_name=f"{name}.png", mime="image/png",
                                   key=f"rs_png_{name}", icon=":material/image:", on_click="ignore")
        columns[1].download_button("SVG", data=lambda: svg_of(spec), file_name=f"{name}.svg",
                                   mime="image/svg+xml", key=f"rs_svg_{name}", icon=":material/draw:",
                                   on_click="ignore")
    if table is not None:
        columns[2].download_button("CSV", data=page_tables.csv_bytes(table), file_name=f"{name}.csv", mime="text/csv",
                                   key=f"rs_csv_{name}", icon=":material/table:", on_click="ignore")


def show_chart(chart, name: str, table: pd.DataFrame | None = None, select_key: str | None = None,
               choice: result_options.ValueChoice | None = None, items: people_vs_models.ItemScope | None = None,
               page_wide: bool = False):
    """Draw a chart with its exports; with ``select_key``, a click on a cell reruns the page
    and the selection state is returned. With ``choice``, the chart's subtitle says how its
    values are computed, and the file names and the CSV's ``metric`` column name the metric;
    with ``items``, the CSV's ``on_items`` column says which items the values rest on. ``page_wide``:
    the chart takes the page's width (the exported files keep its own)."""
    if items is not None and table is not None:
        table = items.label_table(table)
    if choice is not None:
        chart = charts.subtitled(chart, choice.description)
        name = choice.file_name(name)
        table = choice.label_table(table) if table is not None else None
    shown, width = (charts.container_wide(chart), "stretch") if page_wide else (chart, "content")
    if select_key is None:
        st.altair_chart(shown, width=width)
        event = None
    else:
        event = st.altair_chart(shown, width=width, on_select="rerun", key=select_key,
                                selection_mode=charts.CELL_SELECTION)
    exports(name, chart, table)
    return event


def drill_key(name: str, row: str, col: str) -> str:
    """The state key of the drill-down under the ``name`` chart with these axes."""
    return f"{name}_{row}_{col}"


def follow_click(event, key: str) -> None:
    """Point the drill-down's row and column boxes at the heatmap cell just clicked."""
    picked = charts.picked_cell(event.selection if event is not None else None)
    if picked is not None and picked != st.session_state.get(f"rs_{key}_picked"):
        st.session_state[f"rs_{key}_picked"] = picked
        st.session_state[f"rs_{key}_drill_row"], st.session_state[f"rs_{key}_drill_col"] = picked


#: Controls only some views draw. Streamlit forgets a widget's value in a run that does not draw
#: it; these keep theirs across views (a copy under ``<key>_kept``).
KEPT_ACROSS_VIEWS = ("rs_all_items", "rs_people", "rs_min_n", "rs_people_as")


def restore_kept() -> None:
    """Give each of :data:`KEPT_ACROSS_VIEWS` that Streamlit forgot its value from before."""
    for key in KEPT_ACROSS_VIEWS:
        if key not in st.session_state and f"{key}_kept" in st.session_state:
            st.session_state[key] = st.session_state[f"{key}_kept"]


def note_kept() -> None:
    """Copy the values of :data:`KEPT_ACROSS_VIEWS` drawn in this run."""
    for key in KEPT_ACROSS_VIEWS:
        if key in st.session_state:
            st.session_state[f"{key}_kept"] = st.session_state[key]


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

# The controls drawn in this run, URL key -> value. The page script runs anew on every rerun,
# so this starts empty each time; :func:`write_url_state` puts it in the URL at the end.
shown_state: dict = {}


def remember(url_key: str, value) -> None:
    """Note a control's value for the URL."""
    shown_state[url_key] = value


def apply_url_state(options: dict, only: tuple[str, ...] | None = None) -> None:
    """Open the view the URL describes: on a session's first run, and whenever the URL is not the
    one this page wrote last (a pasted link). Controls the URL does not name go back to their
    defaults; what it gets wrong is ignored, with a small note. ``only``: the keys to read (the
    paper tables' viewers read the table and nothing else)."""
    current = benchmark_choice.url_now()
    mark = (only, current)
    if not current or current == st.session_state.get("rs_url_written") or mark == st.session_state.get("rs_url_read"):
        show_url_notes()
        return
    st.session_state["rs_url_read"] = mark
    params = {k: v for k, v in current.items() if only is None or k in only}
    state = url_state.read_url(params, options)
    values = state.values
    managed = [*URL_WIDGETS.values(), "rs_all_items", *(f"rs_rouge_{v}" for v in result_options.VIEWS),
               *(f"rs_filter_{d}" for d in result_options.DIMENSIONS), *(f"{k}_kept" for k in KEPT_ACROSS_VIEWS)]
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
        elif key in result_options.DIMENSIONS:
            st.session_state[f"rs_filter_{key}"] = list(value)
    st.session_state["rs_url_notes"] = (state.notes, None)
    show_url_notes()


def show_url_notes() -> None:
    """What the last link opened got wrong, until the view is changed (a rerun alone keeps it)."""
    notes, _ = st.session_state.get("rs_url_notes", ((), None))
    if notes:
        st.caption("Ignored in this link: " + "; ".join(notes) + ".")


def write_url_state() -> None:
    """Put this run's controls in the URL (only when they changed), so the address can be shared."""
    wanted = url_state.write_url(shown_state)
    as_lists = {key: value if isinstance(value, list) else [value] for key, value in wanted.items()}
    if as_lists != benchmark_choice.url_now():
        st.query_params.from_dict(wanted)
    st.session_state["rs_url_written"] = as_lists
    notes, shown_for = st.session_state.get("rs_url_notes", ((), None))
    if notes and shown_for is None:  # the view the link opened: notes stay while it does
        st.session_state["rs_url_notes"] = (notes, as_lists)
    elif notes and shown_for != as_lists:
        del st.session_state["rs_url_notes"]


# ---------------------------------------------------------------- admin: loading results


AUTO_SUITE = "(worked out from each file)"


def admin_panel(db, expanded: bool) -> None:
    """Loading and deleting results, for admins: first on the page (open while there are none)."""
    if not access.can(access.role_of(user), "load_data"):
        return
    with st.expander("Load results (admin)", expanded=expanded, icon=":material/upload_file:"):
        files = suites.suite_files()
        if not files:
            st.info("No sample files found in the suites folder: generate Test / Test-Hard on the Home page "
                    "first, so results can be matched to their samples.")
            return
        names = [f.name for f in files]
        chosen = st.selectbox("Samples the results answer", [AUTO_SUITE, *names], key="rs_samples_file",
                              help="Worked out from each file: every suite file is tried, the one whose name "
                                   "starts the file's sample ids first, until one holds every result's sample.")
        candidates = files if chosen == AUTO_SUITE else [files[names.index(chosen)]]
        # Read the suites and prepare their answers while the admin picks files (once per file version).
        for path in candidates[:2]:
            results_store.warm_up(path)
        # The browser refuses files above 4x the limit; between the limit and that, the import
        # says why in its own words (size, limit, what to do instead).
        uploads = st.file_uploader(
            "Result files: our schema {sample_id, model, prompt, response}, the original repository's "
            "evaluation output, an Inspect AI log (.eval, .json) or an lm-eval samples_*.jsonl",
            type=["jsonl", "json", "eval"], accept_multiple_files=True,
            key="rs_upload", max_upload_size=4 * results_store.MAX_UPLOAD_MB,
        )
        prompt = st.text_input("Prompt label for original-format files (optional)", key="rs_prompt_label",
                               help="Leave empty to derive it from the file name and the hint / shot fields.")
        folder = results_store.results_dir()
        left, right = st.columns(2)
        if left.button("Import uploaded files", type="primary", disabled=not uploads, key="rs_import"):
            import_uploads(db, candidates, uploads, prompt.strip() or None, user)
            st.rerun()
        if right.button(f"Import new files from {folder}", key="rs_import_folder"):
            import_from_folder(db, candidates, folder, user)
            st.rerun()
        stored = results_store.list_uploads(db)
        if stored:
            st.dataframe(page_tables.uploads_table(stored), hide_index=True)
            by_id = {u.id: u for u in stored}
            victim = st.selectbox("Delete an upload", list(by_id), key="rs_delete_choice",
                                  format_func=lambda upload_id: by_id[upload_id].label)
            if st.button("Delete this upload and its results", key="rs_delete"):
                gone = results_store.delete_upload(db, victim)
                ui.flash("success", f"Deleted {by_id[victim].label}: {plural(gone, 'result row')} removed.")
                st.rerun()


def show_what_was_imported() -> str:
    """Open the view on every item, so results just imported show even when no person answered
    their items; the sentence the import message ends with."""
    for key in ("rs_source", "rs_all_items", "rs_all_items_kept"):
        st.session_state.pop(key, None)
    st.session_state["rs_source"] = "imported"
    st.session_state["rs_all_items"] = True
    return " **All items** is on, so they are in view."


def import_uploads(db, candidates, uploads, prompt, user) -> None:
    shown = ""
    with st.spinner(f"Matching to {', '.join(p.name for p in candidates)} and scoring..."):
        for upload in uploads:
            try:
                summary, path = results_store.import_matching(db, upload.getvalue(), upload.name, candidates,
                                                              user_id=user["id"], prompt=prompt)
            except results.ResultsImportError as error:
                ui.flash("error", results_store.describe_problems(error))
                continue
            shown = shown or show_what_was_imported()
            scored = (f" It was scored with the {summary.scored_with} metric before; that is kept with the upload, "
                      "and every view says which metric it shows." if summary.scored_with else "")
            ui.flash("success", f"Imported {plural(summary.n_rows, 'result')} from **{summary.filename}** "
                                f"({summary.file_format} format; models {', '.join(summary.models)}; "
                                f"prompts {', '.join(summary.prompts)}), matched to the samples of {path.name}."
                                f"{scored}{shown}")


def import_from_folder(db, candidates, folder, user) -> None:
    if not folder.is_dir():
        ui.flash("error", f"The results folder {folder} does not exist.")
        return
    with st.spinner(f"Importing {folder}..."):
        report = results_store.import_folder(db, folder, candidates, user_id=user["id"])
    shown = show_what_was_imported() if report.imported else ""
    for summary in report.imported:
        ui.flash("success", f"Imported {plural(summary.n_rows, 'result')} from **{summary.filename}**.{shown}")
    for error in report.failed:
        ui.flash("error", results_store.describe_problems(error))
    if report.skipped:
        ui.flash("info", f"Already imported, skipped: {', '.join(report.skipped)}.")
    if not (report.imported or report.failed or report.skipped):
        ui.flash("info", f"No result files (.jsonl, .json, .eval) in {folder}.")


# ---------------------------------------------------------------- paper tables


def paper_page() -> None:
    st.caption("The paper's published tables (StrucText-Eval, Tables 3, 4 and 6), shipped with the app; "
               "the values are shown exactly as printed.")
    with st.expander("Where these figures come from"):
        st.markdown(paper.source_note())
    key = st.selectbox("Table", list(result_options.PAPER_VIEWS), key="rs_paper_view",
                       format_func=lambda k: result_options.PAPER_VIEWS[k].label)
    remember("paper", key)
    view = result_options.PAPER_VIEWS[key]
    if view.table is None:
        corr = paper.metric_correlations()
        chart = charts.subtitled(charts.correlation_chart(corr, "Correlation of metrics across the 12 models of "
                                                                "Table 6"), view.metric)
        show_chart(chart, view.file_name(), view.label_table(corr))
        st.caption("Pearson r across the 12 models' Table 6 scores. The paper's own figures (ROUGE-L 0.9932, "
                   "GPT-4o judge 0.9937, exact match 0.9501 against human judgement) were computed on its "
                   "samples, so they differ slightly from these table-level values.")
        return
    cells = heatmaps.paper_heatmap_cells(view.table, view.kind)
    table_info = paper.TABLES[view.table]
    chart = charts.subtitled(charts.paper_heatmap_chart(cells, table_info.title, view.row_title, view.col_title,
                                                        view.metric), view.metric, fit=True)
    st.write(table_info.caption)
    show_chart(chart, view.file_name(), view.label_table(paper.load_table(view.table)))
    st.dataframe(paper.load_table(view.table), hide_index=True)


# ---------------------------------------------------------------- imported results


def choose_filters(frame: pd.DataFrame, dimensions) -> dict:
    options = result_options.filter_options(frame)
    chosen = {}
    with st.expander("Filters", expanded=bool(any(st.session_state.get(f"rs_filter_{d}") for d in dimensions))):
        columns = st.columns(3)
        for i, dimension in enumerate(dimensions):
            values = options.get(dimension, [])
            if len(values) > 1:
                key = f"rs_filter_{dimension}"
                if key in st.session_state:  # values no longer offered (a URL, other filters) drop out
                    st.session_state[key] = [v for v in st.session_state[key] if v in values]
                chosen[dimension] = tuple(columns[i % 3].multiselect(
                    DIMENSION_TITLES[dimension], values, key=key, placeholder="all"))
    chosen = {k: v for k, v in chosen.items() if v}
    for dimension, values in chosen.items():
        remember(dimension, values)
    return chosen


def drill(frame: pd.DataFrame, chosen: "Chosen", row: str, col: str, cells: pd.DataFrame, name: str) -> None:
    """The samples behind one cell of the ``name`` chart (heatmap, paired). Its boxes are keyed by
    the chart's axes (:func:`drill_key`): after the axes change, they start afresh instead of
    showing the old axes' labels over the new cell's rows."""
    key = drill_key(name, row, col)
    st.subheader("Samples behind a cell")
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
        st.info(f"No results for {row} {row_value} and {col} {col_value}.")
        return
    samples = access.drop_hidden_samples(drill_rows(chosen.db_path, chosen.version, part),
                                         access.hidden_samples(chosen.db, user))
    if samples.empty:
        st.info("The samples behind this cell are in an open study: they stay hidden until it is closed.")
        return
    st.caption(f"{plural(len(part), 'result')} in this cell; "
               f"{'the 200 lowest-scoring' if len(part) > 200 else 'all'} shown, lowest {chosen.choice.title} first.")
    summary = samples.drop(columns=["reference", "question", "requirement", "answer", "response"])
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
    a.code(item["answer"], language=None, wrap_lines=True, height=frame_height(item["answer"]))
    b.markdown(f"**Response** (extracted answer; strict ROUGE-L {item['rouge_l']:.3f}, paper ROUGE-L "
               f"{item['rouge_l_paper']:.3f}, exact match {int(item['exact_match'])})")
    b.code(item["answer_extracted"], language=None, wrap_lines=True, height=frame_height(item["answer_extracted"]))
    with st.expander(f"Full response ({plural(len(item['response']), 'character')})"):
        st.code(item["response"], language=None, wrap_lines=True, height=frame_height(item["response"]))
    with st.expander(f"Reference ({plural(len(item['reference']), 'character')})"):
        st.code(item["reference"][:200_000], language=None, height=400)


def frame_height(text: str) -> int | str:
    """A code block's height: its content's up to about 20 lines, then it scrolls in its frame."""
    lines = text.count("\n") + 1 + len(text) // 100
    return "content" if lines <= 20 else 420


def choose_values(view: str) -> result_options.ValueChoice:
    """The metric controls. The ROUGE-L version is remembered per view, and a view that redraws
    one of the paper's figures opens on the paper's metric."""
    c1, c2, c3, c4 = st.columns([2, 3, 2, 2])
    metric = c1.selectbox("Metric", list(result_options.METRICS), format_func=result_options.METRICS.get, key="rs_metric")
    rouge_options = list(result_options.ROUGE_METRICS)
    st.session_state.setdefault(f"rs_rouge_{view}", result_options.VIEWS[view].default_rouge)
    rouge = c2.radio("ROUGE-L", rouge_options, format_func=result_options.ROUGE_METRICS.get, key=f"rs_rouge_{view}",
                     disabled=metric != "rouge_l" or view == "metric_correlation",
                     help="; ".join(result_options.ROUGE_DESCRIPTIONS.values()))
    mode = c3.radio("Scores", result_options.MODES, horizontal=True, key="rs_mode", disabled=metric != "rouge_l",
                    help="thresholded: a ROUGE-L below the threshold counts as 0 (the paper's rule)")
    st.session_state.setdefault("rs_threshold", 0.75)
    threshold = c4.slider("Threshold", 0.0, 1.0, step=url_state.THRESHOLD_STEP, key="rs_threshold",
                          disabled=metric != "rouge_l" or mode != "thresholded")
    remember("metric", metric)
    if metric == "rouge_l":
        remember("rouge", rouge)
        remember("mode", mode)
        if mode == "thresholded":
            remember("threshold", threshold)
    return result_options.ValueChoice(metric, rouge, mode, threshold)


def choose_scope(values: pd.DataFrame, view: str) -> tuple[people_vs_models.ItemScope, int, str]:
    """Which items the view uses, its minimum n and how it shows people (pooled or each person;
    each answer is counted once either way). When people answered items, the views of
    :data:`result_options.ITEM_VIEWS` compare them with models on those items unless “All items”
    is on (the default when no model answered any of them); the caption gives the number of shared
    items. ``values``: each person's rows apart."""
    people = people_vs_models.people_of(values)
    offers_items = view in result_options.ITEM_VIEWS and bool(people)
    offers_min_n = view in result_options.MIN_N_VIEWS
    restore_kept()
    how = choose_people_as(people)
    if not (offers_items or offers_min_n):
        return people_vs_models.ItemScope(), result_options.DEFAULT_MIN_N, how
    a, b, c = st.columns([2, 3, 2])
    scope = people_vs_models.ItemScope()
    if offers_items:
        if "rs_all_items" not in st.session_state and not people_vs_models.models_on_people_items(values):
            # restricted to people's items, the view would show people alone
            st.session_state["rs_all_items"] = bool((~people_vs_models.human_mask(values)).any())
        everything = a.toggle("All items", key="rs_all_items",
                              help="Off: people and models on the same items, those people answered. On: every "
                                   "item, so models are also scored on items no person answered.")
        keep_valid("rs_people", people, people[0])
        who = b.selectbox("Items answered by", people, key="rs_people", disabled=everything,
                          help="`human` is the pool of everyone's answers; `human:<name>` one person's.")
        remember("items", "all" if everything else "shared")
        if not everything:
            remember("people", who)
            scope = people_vs_models.item_scope(values, who)
    min_n = result_options.DEFAULT_MIN_N
    if offers_min_n:
        st.session_state.setdefault("rs_min_n", result_options.DEFAULT_MIN_N)
        min_n = int(c.number_input("Minimum n", min_value=1, max_value=result_options.MAX_MIN_N, step=1,
                                   key="rs_min_n", help="Cells (leaderboard rows) with fewer results are greyed "
                                                        "out (flagged), not hidden."))
        remember("min_n", min_n)
    if offers_items:
        st.caption(scope.sentence(values) + ("" if scope.restricted else
                                             " Models are also scored on items no person answered."))
        if (warning := scope.left_out_warning(values)) is not None:
            st.warning(warning, icon=":material/info:")
        if scope.restricted and not people_vs_models.models_on_people_items(values):
            st.info("No model result is on the items people answered: turn on **All items** to see the models.",
                    icon=":material/info:")
    note_kept()
    return scope, min_n, how


def choose_people_as(people: list[str]) -> str:
    """Pooled (``human``) or each person (``human:<name>``): offered when there are persons."""
    if len(people) < 2:
        return "pool"
    st.session_state.setdefault("rs_people_as", "pool")
    how = st.radio("People", list(people_vs_models.PEOPLE_AS), horizontal=True, key="rs_people_as",
                   format_func=people_vs_models.PEOPLE_AS.get,
                   help="Each answer is counted once: in the pool `human` (everyone together) or under its "
                        "person `human:<name>`.")
    remember("people_as", how)
    return how


def imported_page(db, db_path: str, version: tuple, scope: access.ResultsScope) -> None:
    frame_all = scoped_frame(db_path, version, scope)
    sources_block(frame_all)
    view = st.selectbox("View", list(result_options.VIEWS), format_func=lambda key: result_options.VIEWS[key].label,
                        key="rs_view")
    remember("view", view)
    choice = choose_values(view)
    items, min_n, people_as = choose_scope(value_frame(db_path, version, scope, choice), view)
    values = value_frame(db_path, version, scope, choice, people_as)
    chosen = Chosen(db, db_path, version, scope, choice, items, min_n, people_as=people_as)
    if note := page_tables.scored_otherwise(results_store.list_uploads(db), choice):
        st.caption(note)
    missing = people_vs_models.missing_values(values, choice)
    if missing and view != "metric_correlation":
        st.caption(f"{missing:,} model results have no {choice.title.removesuffix(' (%)')} (stored before the "
                   "paper's metric was); they are left out. Re-import their files to score them.")
    if view == "heatmap":
        heatmap_view(chosen, values)
        return
    filters = choose_filters(values, result_options.DIMENSIONS)
    frame = result_options.apply_filters(items.apply(values), filters)
    if frame.empty:
        st.info("No results match these filters.")
        return
    FRAME_VIEWS[view](dataclasses.replace(chosen, filters=tuple(sorted(filters.items()))), frame)


def sources_block(frame_all: pd.DataFrame) -> None:
    sources = results_frame.describe_sources(frame_all)
    if access.restricted(access.role_of(user)):
        st.caption(f"{len(frame_all):,} scored model results of the suites in no open study (public read-only "
                   "mode); samples of open studies and human results are left out.")
    else:
        st.caption(f"{plural(len(frame_all), 'scored result')} from {plural(len(sources), 'source')}: imported files (kept in "
                   "the database) and the human baseline studies (models `human:<annotator>` and the pool "
                   "`human`).")
    with st.expander("Sources"):
        st.dataframe(sources, hide_index=True)
        exports("sources", table=sources)


@dataclass(frozen=True)
class Chosen:
    """What the controls above the view chose."""

    db: object
    db_path: str
    version: tuple
    scope: access.ResultsScope
    choice: result_options.ValueChoice
    items: people_vs_models.ItemScope = people_vs_models.ItemScope()
    min_n: int = result_options.DEFAULT_MIN_N
    filters: tuple = ()  # (dimension, values) pairs, sorted: a cache key
    people_as: str = "pool"  # people_vs_models.PEOPLE_AS


def heatmap_view(chosen: Chosen, values: pd.DataFrame) -> None:
    a, b, c = st.columns(3)
    st.session_state.setdefault("rs_col", "format")
    row = a.selectbox("Rows", result_options.DIMENSIONS, key="rs_row", format_func=DIMENSION_TITLES.get)
    col = b.selectbox("Columns", result_options.DIMENSIONS, key="rs_col", format_func=DIMENSION_TITLES.get)
    sort = c.selectbox("Order rows and columns", list(result_options.HEATMAP_SORTS), key="rs_sort",
                       format_func=result_options.HEATMAP_SORTS.get)
    remember("rows", row)
    remember("cols", col)
    remember("sort", sort)
    if row == col:
        st.warning("Rows and columns show the same dimension: choose two different ones.")
        return
    filters = choose_filters(values, [d for d in result_options.DIMENSIONS if d not in (row, col)])
    items = chosen.items
    whose = choose_whose(items.apply(values), row, col)
    cells = heatmap_cells(chosen.db_path, chosen.version, chosen.scope, chosen.choice,
                          tuple(sorted(filters.items())), row, col, sort, items, whose, chosen.people_as)
    if cells.empty:
        st.info("No results match these filters.")
        return
    cells = heatmaps.flag_small_cells(cells, chosen.min_n)
    title = f"{chosen.choice.title} by {DIMENSION_TITLES[row]} and {DIMENSION_TITLES[col]}"
    if "model" not in (row, col) and whose != "models":
        title += f", {people_vs_models.WHOSE[whose]}"
    if items.restricted:
        title += f", on {items.label}"
    chart = charts.heatmap_chart(cells, DIMENSION_TITLES[row], DIMENSION_TITLES[col], title=title,
                                 value_title=chosen.choice.title, selectable=True, min_n=chosen.min_n)
    event = show_chart(chart, f"heatmap_{row}_{col}", heatmaps.cells_table(cells, row, col),
                       select_key=f"rs_heatmap_chart_{row}_{col}", choice=chosen.choice, items=items,
                       page_wide=True)
    follow_click(event, drill_key("heatmap", row, col))  # a pick belongs to these axes
    order = {"auto": "depth and width keep their order (1, 2, 3...) and the other dimensions are sorted by "
                     "their mean, best first",
             "mean": "rows and columns are sorted by their mean, best first",
             "name": "rows and columns are sorted by name (depth and width by number)"}[sort]
    st.caption(f"Each cell shows the mean and, under it, n (the results it rests on); {order}. Hover a cell for "
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
    cells = heatmaps.flag_small_cells(heatmaps.depth_width_frame(frame), chosen.min_n)
    show_chart(charts.depth_width_chart(cells, chosen.choice.title, min_n=chosen.min_n), "depth_width", cells,
               choice=chosen.choice)
    st.caption("Each model's mean (and n under it) per depth (rows) and width (columns), as the paper's Figure 4. "
               + heatmaps.min_n_note(chosen.min_n, cells) + " Below: how much the per-format and per-task "
               "means spread within each cell (standard deviation, points).")
    show_chart(charts.spread_chart(cells, chosen.choice.title), "depth_width_spread", choice=chosen.choice)


def people_vs_models_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    people = people_vs_models.people_of(frame)
    if not people:
        st.info("No human-baseline results yet: they appear here once annotators have answered a study.")
        return
    items = chosen.items
    reference = items.people or people_vs_models.POOL
    cells = people_vs_models.people_vs_models_frame(frame, people=reference, same_items=items.restricted,
                                                items=items.items if items.restricted else None)
    if items.restricted:
        st.caption(markdown_text(f"{plural(int(cells['items'].iloc[0]), 'item')} answered by {reference}; "
                                 "every bar uses only those items."))
        title = f"{chosen.choice.title} by task category, same items"
    else:
        st.caption(f"All {plural(int(cells['items'].iloc[0]), 'item')}: the models' bars include items no person answered, "
                   "so they do not compare like with like.")
        title = f"{chosen.choice.title} by task category, all items"
    chart = charts.interval_bars_chart(cells, "task", "model", title, chosen.choice.title, "task category")
    show_chart(chart, "people_vs_models", cells, choice=chosen.choice, items=items)


def test_vs_real_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    cells = comparisons.test_vs_real_frame(frame)
    if cells.empty:
        st.info("This view needs models with results on both Test and Real-Test (suite names `test` and "
                "`real-test`).")
        return
    value_title = chosen.choice.title
    chart = charts.interval_bars_chart(cells, "model", "set", f"{value_title}: Test against Real-Test", value_title)
    show_chart(chart, "test_vs_real", cells, choice=chosen.choice)


def metric_correlation_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    by = st.multiselect("One point per", ["model", "prompt", "format", "task", "depth", "width"],
                        default=["model", "prompt"], key="rs_corr_by")
    if not by:
        st.info("Choose at least one grouping.")
        return
    threshold = chosen.choice.threshold
    table = comparisons.metric_table(frame, by, threshold)
    metrics = [m for m in comparisons.CORRELATION_METRICS.values() if m in table.columns]
    result = comparisons.correlate(table, metrics)
    if result.frame is None:
        st.info(result.reason)
        st.dataframe(table.round(2), hide_index=True)
        return
    corr = result.frame
    chart = charts.subtitled(
        charts.correlation_chart(corr, f"Correlation of metrics over {plural(result.n_groups, 'group')}"),
        f"both ROUGE-L versions (strict: extracted answer; paper: whole response), thresholded at {threshold:g} "
        "and raw, exact match and BLEU")
    show_chart(chart, f"metric_correlation_t{threshold:g}", corr)
    constant = f" Left out, the same in every group: {', '.join(result.constant)}." if result.constant else ""
    st.caption(f"Pearson r over the {plural(result.n_groups, 'group')} that have every metric "
               f"({len(table) - result.n_groups} without, e.g. people have no BLEU).{constant} Human judgements "
               "of model responses are not stored yet; the paper's correlations with them are under Paper tables, "
               "Figure 5.")
    st.dataframe(table.round(2), hide_index=True)
    exports(f"metric_means_t{threshold:g}", table=table)


def paired_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    models = sorted(frame["model"].unique())
    if len(models) < 2:
        st.info("Comparing needs results of at least two models.")
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
        st.warning("Choose two different models and two different dimensions.")
        return
    cells = comparisons.paired_frame(frame, model_a, model_b, row, col)
    if cells.empty:
        st.info(markdown_text(f"{model_a} and {model_b} share no samples (same sample and prompt)."))
        return
    cells = heatmaps.flag_small_cells(cells, chosen.min_n)
    chart = charts.paired_chart(cells, DIMENSION_TITLES[row], DIMENSION_TITLES[col],
                                f"{model_a} minus {model_b} ({chosen.choice.title}), shared samples", selectable=True,
                                min_n=chosen.min_n)
    event = show_chart(chart, "paired", cells, select_key=f"rs_paired_chart_{model_a}_{model_b}_{row}_{col}",
                       choice=chosen.choice)
    follow_click(event, drill_key("paired", row, col))
    st.caption(f"{plural(int(cells['n'].sum()), 'shared sample')}. Cells show the mean paired difference in points and, under "
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
        st.info(f"No results have a {choice.title.removesuffix(' (%)')} (people have no BLEU).")
        return
    table = leaderboards.leaderboard_table(board, choice)
    st.subheader(markdown_text(f"Leaderboard: {choice.title}"
                               + (f", on {chosen.items.label}" if chosen.items.restricted else "")))
    st.caption(choice.description + ".")
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
    st.caption(f"One row per model or person and prompt setting; n = responses with a value{people}. 95 % interval: "
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


# ---------------------------------------------------------------- page

st.title("Results")
db = ui.get_db()
if benchmark_choice.own_view(benchmark_choice.results_benchmark(), "RESULTS_VIEW", db, user):
    st.stop()  # a benchmark with its own Results view (its RESULTS_VIEW) has shown it
db_path = str(storage.default_db_path())
version = results_frame.data_version(db)
scope = access.results_scope(db, user, load_frame(db_path, version)["suite"].unique())
has_results = results_frame.has_results(version) and not scoped_frame(db_path, version, scope).empty
ui.show_flash()
admin_panel(db, expanded=not has_results)
if scope == access.ResultsScope():  # the paper's tables only
    apply_url_state({}, only=("paper",))  # the rest of a shared link waits for a log-in that can see it
    st.caption("Model and human results are shown to researchers and admins; here are the paper's tables.")
    paper_page()
    st.stop()
apply_url_state(result_options.filter_options(scoped_frame(db_path, version, scope)) if has_results else {})
st.session_state.setdefault("rs_source", "imported" if has_results else "paper")
source = st.radio("Data", list(result_options.SOURCES), horizontal=True,
                  format_func=result_options.SOURCES.get, key="rs_source")
remember("source", source)
paper_label = result_options.SOURCES["paper"]
if source == "paper":
    paper_page()
elif not has_results and access.restricted(access.role_of(user)):
    st.info(f"No model results of suites outside open studies yet; the paper's tables are under “{paper_label}”.")
elif not has_results:
    st.info(f"No results yet. An admin loads result files under “Load results” above; meanwhile the paper's tables are under "
            f"“{paper_label}”.")
else:
    imported_page(db, db_path, version, scope)
write_url_state()
if not access.can(access.role_of(user), "load_data"):
    st.caption("Results are loaded by an admin (log in as admin to upload or delete result files).")
