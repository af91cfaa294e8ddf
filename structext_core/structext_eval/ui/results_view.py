"""StrucText-Eval's Results view (its ``RESULTS_VIEW``): heatmaps of model and human results, the
paper's tables, drill-down to samples.

UI only: every number comes from ``structext_core.structext_eval.results_store``, the Results views of
``structext_core.views`` (result_options, heatmaps, people_vs_models, comparisons, leaderboards,
page_tables), ``structext_core.views.charts`` and this package's ``drill_downs`` and ``paper``; what
each role sees is decided by ``structext_core.studio.access`` (visitors and annotators: the paper's
tables, and in public read-only mode model results of suites in no open study; researchers and
admins: everything; loading and deleting results: admins). Every chart and export names its metric
(``views.result_options.ValueChoice``): strict or the paper's ROUGE-L, exact match or BLEU. When
people answered items, the views that compare them with models use only those items unless “All
items” is on. The controls' state is kept in the URL (:mod:`.results_common`). The views of imported
results are in :mod:`.result_views`. The page (``pages/results.py``) shows this view when
StrucText-Eval is chosen at its top.
"""


import streamlit as st

from structext_core import ui
from structext_core.structext_eval import paper, results_frame, results_store, suites
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval.result_dimensions import DIMENSIONS
from structext_core.structext_eval.ui.result_views import imported_page
from structext_core.structext_eval.ui.results_common import (
    apply_url_state,
    built_chart,
    exports,
    load_frame,
    remember,
    scoped_frame,
    show_chart,
    start_run,
    write_url_state,
)
from structext_core.studio import access, data_scope, storage
from structext_core.text.safe_text import html_table
from structext_core.text.words import plural
from structext_core.ui import light_choice, widgets
from structext_core.views import (
    charts,
    result_options,
)

# ---------------------------------------------------------------- admin: loading results


AUTO_SUITE = "(worked out from each file)"


#: The session key of the open state of the admin's loading panel, and of whether it was opened because
#: nothing was loaded yet (it closes when the first results come in).
LOAD_OPEN, LOAD_AUTO = "rs_load_open", "rs_load_opened_empty"


def admin_panel(db, user) -> None:
    """Loading and deleting results, for admins: first on the page (open while there are none).
    Its uploader and list are drawn only while it is open (opening it reruns the page): the browser
    does not load them for a page whose admin came to read results."""
    if not access.can(access.role_of(user), "load_data"):
        return
    state, empty = st.session_state, not has_data(db, user)[3]
    if empty and not state.get(LOAD_AUTO):  # nothing loaded yet: open, with nothing to click
        state[LOAD_OPEN] = state[LOAD_AUTO] = True
    elif not empty and state.pop(LOAD_AUTO, False):  # the first results came in: closed to its label
        state[LOAD_OPEN] = False
    box = widgets.lazy_section("Load results (admin)", key=LOAD_OPEN, icon=":material/upload_file:")
    if box is None:
        return
    with box:
        files = suites.suite_files()
        if not files:
            widgets.info("No sample files found in the suites folder: generate Test / Test-Hard on the Home page "
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
            st.dataframe(results_frame.uploads_table(stored), hide_index=True)
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
    widgets.caption("The paper's published tables (StrucText-Eval, Tables 3, 4 and 6), shipped with the app; "
               "the values are shown exactly as printed.")
    # Drawn when opened: its Markdown table, drawn closed, was a fifth of the browser's work on each run.
    source = widgets.lazy_section("Where these figures come from", key="rs_paper_source_open")
    if source is not None:
        source.markdown(paper.source_note())
    # a light chooser (the browser's own select box): the click on "Paper tables" loads no widget's code
    key = light_choice.choose("Table", list(result_options.PAPER_VIEWS), key="rs_paper_view",
                              format_func=lambda k: result_options.PAPER_VIEWS[k].label)
    remember("paper", key)
    view = result_options.PAPER_VIEWS[key]
    if view.table is None:
        corr = paper.metric_correlations()
        chart = charts.subtitled(charts.correlation_chart(corr, "Correlation of metrics across the 12 models of "
                                                                "Table 6"), view.metric)
        show_chart(chart, view.file_name(), view.label_table(corr))
        widgets.caption("Pearson r across the 12 models' Table 6 scores. The paper's own figures (ROUGE-L 0.9932, "
                   "GPT-4o judge 0.9937, exact match 0.9501 against human judgement) were computed on its "
                   "samples, so they differ slightly from these table-level values.")
        return
    table_info = paper.TABLES[view.table]
    st.write(table_info.caption)
    # The table is the heatmap: its printed numbers, each cell tinted by its value (an HTML table, where a
    # chart made a click on "Paper tables" wait for the browser to draw it); the chart is in its PNG and SVG.
    cut, shade = paper.printed_cut(view.table, view.kind)
    widgets.html_block(html_table(cut, shade))
    widgets.caption(f"Values: {view.metric}; the darker the cell, the higher the value.")

    def chart():
        return built_chart(charts.paper_heatmap_chart, paper.heatmap_cells(view.table, view.kind), table_info.title,
                           view.row_title, view.col_title, view.metric, subtitle=view.metric, fit=True)

    table = paper.load_table(view.table)
    exports(view.file_name(), chart, view.label_table(table))
    if len(cut.columns) < len(table.columns):  # a cut of Table 3: the whole table, every column, for who asks
        box = widgets.lazy_section(f"{table_info.title}, every column as printed ({plural(len(table), 'row')})",
                                   key=f"rs_paper_table_open_{key}", icon=":material/table:")
        if box:
            box.dataframe(table, hide_index=True)


# ---------------------------------------------------------------- the view


def results_page(db, user) -> None:
    """StrucText-Eval's Results view: imported model results and the human baseline, and the
    paper's tables."""
    ui.show_flash()
    admin_panel(db, user)
    data_view(user)


def has_data(db, user) -> tuple[str, tuple, data_scope.ResultsScope, bool]:
    """(database path, data version, what ``user`` may see, whether any of it is there)."""
    db_path = str(storage.default_db_path())
    version = results_frame.data_version(db)
    scope = data_scope.results_scope(db, user, load_frame(db_path, version)["suite"].unique())
    return db_path, version, scope, results_frame.has_results(version) and not scoped_frame(db_path, version,
                                                                                             scope).empty


@ui.fragment
def data_view(user) -> None:
    """Everything below the loading panel: a click here (the data, a view, a control, a heatmap cell)
    reruns this part only, not the page around it."""
    start_run()
    db = ui.get_db()
    db_path, version, scope, has_results = has_data(db, user)
    if scope == data_scope.ResultsScope():  # the paper's tables only
        apply_url_state(dict, only=("paper",))  # the rest of a shared link waits for a log-in that can see it
        widgets.caption("Model and human results are shown to researchers and admins; here are the paper's tables.")
        paper_page()
        return
    apply_url_state(lambda: result_options.filter_options(scoped_frame(db_path, version, scope), DIMENSIONS)
                    if has_results else {})
    st.session_state.setdefault("rs_source", "imported" if has_results else "paper")
    source = light_choice.choose("Data", list(result_options.SOURCES), buttons=True,
                                 format_func=result_options.SOURCES.get, key="rs_source")
    remember("source", source)
    paper_label = result_options.SOURCES["paper"]
    if source == "paper":
        paper_page()
    elif not has_results and access.restricted(access.role_of(user)):
        widgets.info(f"No model results of suites outside open studies yet; the paper's tables are under “{paper_label}”.")
    elif not has_results:
        widgets.info(f"No results yet. An admin loads result files under “Load results” above; meanwhile the paper's tables are under "
                f"“{paper_label}”.")
    else:
        imported_page(db, user, db_path, version, scope)
    write_url_state()
    if not access.can(access.role_of(user), "load_data"):
        widgets.caption("Results are loaded by an admin (log in as admin to upload or delete result files).")
