"""Results: heatmaps of model and human results, the paper's tables, drill-down to samples.

UI only: every number comes from ``structext_core.studio.results_store``, ``structext_core.views.results``
and ``structext_core.views.charts`` (and ``paper``); what each
role sees is decided by ``structext_core.studio.access`` (visitors and annotators: the paper's tables,
and in public read-only mode model results of suites in no open study; researchers and
admins: everything; loading and deleting results: admins). Every chart and export names its
metric (``views.results.ValueChoice``): strict or the paper's ROUGE-L, exact match or BLEU.
"""

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from pages import ui
from pages.ui.frame import ensure_frame
from structext_core.benchmark import suites
from structext_core.evaluation import paper, results
from structext_core.studio import access, results_store, storage
from structext_core.views import charts
from structext_core.views import results as result_views

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
    return results_store.load_results(storage.open_db(db_path))


@st.cache_resource(max_entries=8, show_spinner=False)
def scoped_frame(db_path: str, version: tuple, scope: access.ResultsScope) -> pd.DataFrame:
    """The rows this session's role may see (``scope`` from ``access.results_scope``)."""
    return access.filter_results(load_frame(db_path, version), scope)


@st.cache_resource(max_entries=4, show_spinner=False)
def value_frame(db_path: str, version: tuple, scope: access.ResultsScope,
                choice: result_views.ValueChoice) -> pd.DataFrame:
    return result_views.with_choice(scoped_frame(db_path, version, scope), choice)


@st.cache_data(max_entries=16, show_spinner=False)
def heatmap_cells(db_path, version, scope, choice, filters, row, col, sort) -> pd.DataFrame:
    frame = result_views.apply_filters(value_frame(db_path, version, scope, choice), dict(filters))
    return result_views.heatmap_frame(frame, row, col, sort=sort)


@st.cache_data(max_entries=8, show_spinner=False)
def drill_rows(db_path: str, version: tuple, part: pd.DataFrame) -> pd.DataFrame:
    """The samples behind a cell (reading the suite files is the slow part: cached)."""
    return result_views.drill_down(part, db=storage.open_db(db_path))


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
        columns[2].download_button("CSV", data=result_views.csv_bytes(table), file_name=f"{name}.csv", mime="text/csv",
                                   key=f"rs_csv_{name}", icon=":material/table:", on_click="ignore")


def show_chart(chart, name: str, table: pd.DataFrame | None = None, select_key: str | None = None,
               choice: result_views.ValueChoice | None = None):
    """Draw a chart with its exports; with ``select_key``, a click on a cell reruns the page
    and the selection state is returned. With ``choice``, the chart's subtitle says how its
    values are computed, and the file names and the CSV's ``metric`` column name the metric."""
    if choice is not None:
        chart = charts.subtitled(chart, choice.description)
        name = choice.file_name(name)
        table = choice.label_table(table) if table is not None else None
    if select_key is None:
        st.altair_chart(chart, width="content")
        event = None
    else:
        event = st.altair_chart(chart, width="content", on_select="rerun", key=select_key,
                                selection_mode=charts.CELL_SELECTION)
    exports(name, chart, table)
    return event


def follow_click(event, key: str) -> None:
    """Point the drill-down's row and column boxes at the heatmap cell just clicked."""
    picked = charts.picked_cell(event.selection if event is not None else None)
    if picked is not None and picked != st.session_state.get(f"rs_{key}_picked"):
        st.session_state[f"rs_{key}_picked"] = picked
        st.session_state[f"rs_{key}_drill_row"], st.session_state[f"rs_{key}_drill_col"] = picked


# ---------------------------------------------------------------- admin: loading results


def admin_panel(db) -> None:
    if not access.can(access.role_of(user), "load_data"):
        st.caption("Results are loaded by an admin (log in as admin to upload or delete result files).")
        return
    with st.expander("Load results (admin)", expanded=False):
        files = suites.suite_files()
        if not files:
            st.info("No sample files found in the suites folder: generate Test / Test-Hard on the Home page "
                    "first, so results can be matched to their samples.")
            return
        names = [f.name for f in files]
        default = names.index("test-hard.jsonl") if "test-hard.jsonl" in names else 0
        chosen = st.selectbox("Samples the results answer", names, index=default, key="rs_samples_file")
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
            import_uploads(db, files[names.index(chosen)], uploads, prompt.strip() or None, user)
            st.rerun()
        if right.button(f"Import new files from {folder}", key="rs_import_folder"):
            import_from_folder(db, files[names.index(chosen)], folder, user)
            st.rerun()
        stored = results_store.list_uploads(db)
        if stored:
            st.dataframe(result_views.uploads_table(stored), hide_index=True)
            by_id = {u.id: u for u in stored}
            victim = st.selectbox("Delete an upload", list(by_id), key="rs_delete_choice",
                                  format_func=lambda upload_id: by_id[upload_id].label)
            if st.button("Delete this upload and its results", key="rs_delete"):
                gone = results_store.delete_upload(db, victim)
                ui.flash("success", f"Deleted {by_id[victim].label}: {gone} result rows removed.")
                st.rerun()


def import_uploads(db, samples_path, uploads, prompt, user) -> None:
    with st.spinner(f"Reading {samples_path.name} and scoring..."):
        index = results_store.sample_index(samples_path)
        for upload in uploads:
            try:
                summary = results_store.import_results(db, upload.getvalue(), upload.name, index, user_id=user["id"],
                                                       prompt=prompt)
            except results.ResultsImportError as error:
                ui.flash("error", results_store.describe_problems(error))
                continue
            ui.flash("success", f"Imported {summary.n_rows} results from **{summary.filename}** "
                                f"({summary.file_format} format; models {', '.join(summary.models)}; "
                                f"prompts {', '.join(summary.prompts)}).")


def import_from_folder(db, samples_path, folder, user) -> None:
    if not folder.is_dir():
        ui.flash("error", f"The results folder {folder} does not exist.")
        return
    with st.spinner(f"Importing {folder}..."):
        report = results_store.import_folder(db, folder, results_store.sample_index(samples_path), user_id=user["id"])
    for summary in report.imported:
        ui.flash("success", f"Imported {summary.n_rows} results from **{summary.filename}**.")
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
    key = st.selectbox("Table", list(result_views.PAPER_VIEWS), key="rs_paper_view",
                       format_func=lambda k: result_views.PAPER_VIEWS[k].label)
    view = result_views.PAPER_VIEWS[key]
    if view.table is None:
        corr = paper.metric_correlations()
        chart = charts.subtitled(charts.correlation_chart(corr, "Correlation of metrics across the 12 models of "
                                                                "Table 6"), view.metric)
        show_chart(chart, view.file_name(), view.label_table(corr))
        st.caption("Pearson r across the 12 models' Table 6 scores. The paper's own figures (ROUGE-L 0.9932, "
                   "GPT-4o judge 0.9937, exact match 0.9501 against human judgement) were computed on its "
                   "samples, so they differ slightly from these table-level values.")
        return
    cells = result_views.paper_heatmap_cells(view.table, view.kind)
    table_info = paper.TABLES[view.table]
    chart = charts.subtitled(charts.paper_heatmap_chart(cells, table_info.title, view.row_title, view.col_title,
                                                        view.metric), view.metric)
    st.write(table_info.caption)
    show_chart(chart, view.file_name(), view.label_table(paper.load_table(view.table)))
    st.dataframe(paper.load_table(view.table), hide_index=True)


# ---------------------------------------------------------------- imported results


def choose_filters(frame: pd.DataFrame, dimensions) -> dict:
    options = result_views.filter_options(frame)
    chosen = {}
    with st.expander("Filters", expanded=False):
        columns = st.columns(3)
        for i, dimension in enumerate(dimensions):
            values = options.get(dimension, [])
            if len(values) > 1:
                chosen[dimension] = tuple(columns[i % 3].multiselect(
                    DIMENSION_TITLES[dimension], values, key=f"rs_filter_{dimension}",
                    placeholder="all"))
    return {k: v for k, v in chosen.items() if v}


def drill(frame: pd.DataFrame, chosen: "Chosen", row: str, col: str, cells: pd.DataFrame, key: str) -> None:
    st.subheader("Samples behind a cell")
    rows_available = result_views.axis_order(cells, "row")
    cols_available = result_views.axis_order(cells, "col")
    for widget, options in ((f"rs_{key}_drill_row", rows_available), (f"rs_{key}_drill_col", cols_available)):
        if st.session_state.get(widget) not in (None, *options):
            del st.session_state[widget]  # a cell picked before the filters changed
    left, right = st.columns(2)
    row_value = left.selectbox(DIMENSION_TITLES.get(row, row), rows_available, key=f"rs_{key}_drill_row")
    col_value = right.selectbox(DIMENSION_TITLES.get(col, col), cols_available, key=f"rs_{key}_drill_col")
    part = result_views.cell_rows(frame, row, row_value, col, col_value)
    if part.empty:
        st.info(f"No results for {row} {row_value} and {col} {col_value}.")
        return
    samples = access.drop_hidden_samples(drill_rows(chosen.db_path, chosen.version, part),
                                         access.hidden_samples(chosen.db, user))
    if samples.empty:
        st.info("The samples behind this cell are in an open study: they stay hidden until it is closed.")
        return
    st.caption(f"{len(part)} results in this cell; "
               f"{'the 200 lowest-scoring' if len(part) > 200 else 'all'} shown, lowest {chosen.choice.title} first.")
    summary = samples.drop(columns=["reference", "question", "requirement", "answer", "response"])
    st.dataframe(summary, hide_index=True, key=f"rs_{key}_drill_table")
    exports(chosen.choice.file_name(f"drilldown_{key}"), table=chosen.choice.label_table(samples))
    labels = [f"{r.sample_id} · {r.model} · {r.prompt} · {r.value:.1f}" for r in samples.itertuples()]
    # One box per cell: with one key for all cells the browser kept showing the previous
    # cell's label after another cell was picked.
    pick = st.selectbox("Sample", range(len(labels)), format_func=labels.__getitem__,
                        key=f"rs_{key}_drill_pick_{row_value}_{col_value}")
    item = samples.iloc[pick]
    st.markdown(f"**Question.** {item['question']}")
    st.markdown(f"**Requirement.** {item['requirement']}")
    a, b = st.columns(2)
    a.markdown("**Answer**")
    a.code(item["answer"], language=None, wrap_lines=True)
    b.markdown(f"**Response** (extracted answer; strict ROUGE-L {item['rouge_l']:.3f}, paper ROUGE-L "
               f"{item['rouge_l_paper']:.3f}, exact match {int(item['exact_match'])})")
    b.code(item["answer_extracted"], language=None, wrap_lines=True)
    with st.expander("Full response"):
        st.code(item["response"], language=None, wrap_lines=True)
    with st.expander(f"Reference ({len(item['reference']):,} characters)"):
        st.code(item["reference"][:200_000], language=None, height=400)


def choose_values(view: str) -> result_views.ValueChoice:
    """The metric controls. The ROUGE-L version is remembered per view, and a view that redraws
    one of the paper's figures opens on the paper's metric."""
    c1, c2, c3, c4 = st.columns([2, 3, 2, 2])
    metric = c1.selectbox("Metric", list(result_views.METRICS), format_func=result_views.METRICS.get, key="rs_metric")
    rouge_options = list(result_views.ROUGE_METRICS)
    rouge = c2.radio("ROUGE-L", rouge_options, index=rouge_options.index(result_views.VIEWS[view].default_rouge),
                     format_func=result_views.ROUGE_METRICS.get, key=f"rs_rouge_{view}",
                     disabled=metric != "rouge_l" or view == "metric_correlation",
                     help="; ".join(result_views.ROUGE_DESCRIPTIONS.values()))
    mode = c3.radio("Scores", result_views.MODES, horizontal=True, key="rs_mode", disabled=metric != "rouge_l",
                    help="thresholded: a ROUGE-L below the threshold counts as 0 (the paper's rule)")
    threshold = c4.slider("Threshold", 0.0, 1.0, 0.75, 0.05, key="rs_threshold",
                          disabled=metric != "rouge_l" or mode != "thresholded")
    return result_views.ValueChoice(metric, rouge, mode, threshold)


def imported_page(db, db_path: str, version: tuple, scope: access.ResultsScope) -> None:
    frame_all = scoped_frame(db_path, version, scope)
    sources_block(frame_all)
    view = st.selectbox("View", list(result_views.VIEWS), format_func=lambda key: result_views.VIEWS[key].label,
                        key="rs_view")
    choice = choose_values(view)
    chosen = Chosen(db, db_path, version, scope, choice)
    values = value_frame(db_path, version, scope, choice)
    missing = result_views.missing_values(values, choice)
    if missing and view != "metric_correlation":
        st.caption(f"{missing:,} model results have no {choice.title.removesuffix(' (%)')} (stored before the "
                   "paper's metric was); they are left out. Re-import their files to score them.")
    if view == "heatmap":
        heatmap_view(chosen, values)
        return
    frame = result_views.apply_filters(values, choose_filters(values, result_views.DIMENSIONS))
    if frame.empty:
        st.info("No results match these filters.")
        return
    FRAME_VIEWS[view](chosen, frame)


def sources_block(frame_all: pd.DataFrame) -> None:
    sources = results_store.describe_sources(frame_all)
    if access.restricted(access.role_of(user)):
        st.caption(f"{len(frame_all):,} scored model results of the suites in no open study (public read-only "
                   "mode); samples of open studies and human results are left out.")
    else:
        st.caption(f"{len(frame_all):,} scored results from {len(sources)} source(s): imported files (kept in "
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
    choice: result_views.ValueChoice


def heatmap_view(chosen: Chosen, values: pd.DataFrame) -> None:
    a, b, c = st.columns([2, 2, 1])
    row = a.selectbox("Rows", result_views.DIMENSIONS, index=0, key="rs_row", format_func=DIMENSION_TITLES.get)
    col = b.selectbox("Columns", result_views.DIMENSIONS, index=3, key="rs_col", format_func=DIMENSION_TITLES.get)
    sort = c.radio("Sort rows and columns", ["mean", "name"], horizontal=True, key="rs_sort",
                   format_func={"mean": "by mean", "name": "by name"}.get)
    if row == col:
        st.warning("Rows and columns show the same dimension: choose two different ones.")
        return
    filters = choose_filters(values, [d for d in result_views.DIMENSIONS if d not in (row, col)])
    cells = heatmap_cells(chosen.db_path, chosen.version, chosen.scope, chosen.choice,
                          tuple(sorted(filters.items())), row, col, sort)
    if cells.empty:
        st.info("No results match these filters.")
        return
    title = f"{chosen.choice.title} by {DIMENSION_TITLES[row]} and {DIMENSION_TITLES[col]}"
    chart = charts.heatmap_chart(cells, DIMENSION_TITLES[row], DIMENSION_TITLES[col], title=title,
                                 value_title=chosen.choice.title, selectable=True)
    event = show_chart(chart, f"heatmap_{row}_{col}", result_views.cells_table(cells, row, col),
                       select_key=f"rs_heatmap_chart_{row}_{col}", choice=chosen.choice)
    follow_click(event, "heatmap")
    st.caption("Cells show the mean; rows and columns are sorted by their mean, best first (or by name). "
               "Hover a cell for n and the 95 % bootstrap interval; click it to see its samples below.")
    drill(result_views.apply_filters(values, filters), chosen, row, col, cells, "heatmap")


def depth_width_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    cells = result_views.depth_width_frame(frame)
    show_chart(charts.depth_width_chart(cells, chosen.choice.title), "depth_width", cells, choice=chosen.choice)
    st.caption("Each model's mean per depth (rows) and width (columns), as the paper's Figure 4. "
               "Below: how much the per-format and per-task means spread within each cell (standard "
               "deviation, points).")
    show_chart(charts.spread_chart(cells, chosen.choice.title), "depth_width_spread", choice=chosen.choice)


def people_vs_models_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    people = sorted(m for m in frame["model"].unique() if result_views.is_human(str(m)))
    if not people:
        st.info("No human-baseline results yet: they appear here once annotators have answered a study.")
        return
    reference = st.selectbox("Items answered by", people, key="rs_people",
                             help="Models are scored on exactly the items these people answered.")
    cells = result_views.people_vs_models_frame(frame, people=reference)
    st.caption(f"{int(cells['items'].iloc[0])} items answered by {reference}; every bar uses only those items.")
    value_title = chosen.choice.title
    chart = charts.interval_bars_chart(cells, "task", "model", f"{value_title} by task category, same items",
                                       value_title, "task category")
    show_chart(chart, "people_vs_models", cells, choice=chosen.choice)


def test_vs_real_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    cells = result_views.test_vs_real_frame(frame)
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
    table = result_views.metric_table(frame, by, threshold)
    metrics = [m for m in result_views.CORRELATION_METRICS.values() if m in table.columns]
    if len(table) < 3 or len(metrics) < 2:
        st.info(f"Correlation needs at least 3 groups and 2 metrics; there are {len(table)} group(s) and "
                f"{len(metrics)} metric(s).")
        st.dataframe(table, hide_index=True)
        return
    corr = result_views.correlation_frame(table, metrics)
    n_complete = int(corr["n"].iloc[0])
    chart = charts.subtitled(
        charts.correlation_chart(corr, f"Correlation of metrics over {n_complete} groups"),
        f"both ROUGE-L versions (strict: extracted answer; paper: whole response), thresholded at {threshold:g} "
        "and raw, exact match and BLEU")
    show_chart(chart, f"metric_correlation_t{threshold:g}", corr)
    st.caption(f"Pearson r over the {n_complete} groups that have every metric "
               f"({len(table) - n_complete} without, e.g. people have no BLEU). Human judgements of model "
               "responses are not stored yet; the paper's correlations with them are under Paper tables, "
               "Figure 5.")
    st.dataframe(table.round(2), hide_index=True)
    exports(f"metric_means_t{threshold:g}", table=table)


def paired_view(chosen: Chosen, frame: pd.DataFrame) -> None:
    models = sorted(frame["model"].unique())
    if len(models) < 2:
        st.info("Comparing needs results of at least two models.")
        return
    a, b, c, d = st.columns(4)
    model_a = a.selectbox("Model A", models, index=0, key="rs_model_a")
    model_b = b.selectbox("Model B", models, index=1, key="rs_model_b")
    dims = [x for x in result_views.DIMENSIONS if x != "model"]
    row = c.selectbox("Rows", dims, index=dims.index("format"), key="rs_pair_row", format_func=DIMENSION_TITLES.get)
    col = d.selectbox("Columns", dims, index=dims.index("depth"), key="rs_pair_col", format_func=DIMENSION_TITLES.get)
    if model_a == model_b or row == col:
        st.warning("Choose two different models and two different dimensions.")
        return
    cells = result_views.paired_frame(frame, model_a, model_b, row, col)
    if cells.empty:
        st.info(f"{model_a} and {model_b} share no samples (same sample and prompt).")
        return
    chart = charts.paired_chart(cells, DIMENSION_TITLES[row], DIMENSION_TITLES[col],
                                f"{model_a} minus {model_b} ({chosen.choice.title}), shared samples", selectable=True)
    event = show_chart(chart, "paired", cells, select_key=f"rs_paired_chart_{model_a}_{model_b}_{row}_{col}",
                       choice=chosen.choice)
    follow_click(event, "paired")
    st.caption(f"{int(cells['n'].sum())} shared samples. Cells show the mean paired difference in points; "
               "* marks p < 0.05 (sign-flip permutation test, no correction for the number of cells). "
               "Click a cell to see its samples below.")
    drill(result_views.shared_rows(frame, model_a, model_b), chosen, row, col, cells, "paired")


#: Every view but the heatmap works on the filtered frame; the heatmap filters around its axes.
FRAME_VIEWS = {
    "depth_width": depth_width_view,
    "people_vs_models": people_vs_models_view,
    "test_vs_real": test_vs_real_view,
    "metric_correlation": metric_correlation_view,
    "paired": paired_view,
}


# ---------------------------------------------------------------- page

st.title("Results")
db = ui.get_db()
db_path = str(storage.default_db_path())
version = results_store.data_version(db)
scope = access.results_scope(db, user, load_frame(db_path, version)["suite"].unique())
has_results = results_store.has_results(version) and not scoped_frame(db_path, version, scope).empty
ui.show_flash()
if scope == access.ResultsScope():  # the paper's tables only
    st.caption("Model and human results are shown to researchers and admins; here are the paper's tables.")
    paper_page()
    st.stop()
source = st.radio("Data", list(result_views.SOURCES), index=0 if has_results else 1, horizontal=True,
                  format_func=result_views.SOURCES.get, key="rs_source")
paper_label = result_views.SOURCES["paper"]
if source == "paper":
    paper_page()
elif not has_results and access.restricted(access.role_of(user)):
    st.info(f"No model results of suites outside open studies yet; the paper's tables are under “{paper_label}”.")
elif not has_results:
    st.info(f"No results yet. An admin can load result files below; meanwhile the paper's tables are under "
            f"“{paper_label}”.")
else:
    imported_page(db, db_path, version, scope)
admin_panel(db)
