"""AIBench on the Results page (Streamlit glue; every number comes from
``structext_core.aibench.views``, ``structext_core.aibench`` and
``structext_core.aibench.store``).

Everyone sees the paper's AIBench tables, exactly as printed. Who may see answers (researchers
and admins; ``access.can(role, "answers")``) also sees the stored data sets' results: Table 3
with n and intervals, heatmaps, the solvers' agreement and a drill-down to each question with
its image, key, letter read and reply. The synthetic set (and its perfect-reader predictions) is
made in the background at the app's first start (or when this view is first opened, if that was
turned off); until it is ready the view shows its progress.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from structext_core import protocol, ui
from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import paper as aibench_paper
from structext_core.aibench import scoring, visibility
from structext_core.aibench import store as aibench_store
from structext_core.aibench import url_state as url_state
from structext_core.aibench import views as views
from structext_core.aibench.ui import people as aibench_people
from structext_core.aibench.ui import widgets as aibench_widgets
from structext_core.studio import access
from structext_core.text import safe_text
from structext_core.text.words import plural
from structext_core.ui import benchmark_choice, light_choice, light_panel, widgets
from structext_core.views import cells as shown_cells

HEATMAPS = {"system x level": ("system", "level"), "system x conference": ("system", "conference"),
            "solver x system": ("solver", "system"), "system x kind of question": ("system", "kind")}


#: The session keys of the open state of the boxes drawn only while open (opening one reruns the page):
#: a grid (st.dataframe) costs the page about 0.6 s in the browser, an uploader its own code.
DRILL_OPEN, DETAIL_OPEN, UPLOAD_OPEN = "rs_aib_drill_open", "rs_aib_table3_detail_open", "rs_aib_upload_open"

#: Table 3's heading over O's interval.
TABLE3_INTERVAL = "O 95%"

URL_WIDGETS = {"table": "rs_aib_paper", "data": "rs_aib_data", "heatmap": "rs_aib_heatmap",
               "system": "rs_aib_system", "solver": "rs_aib_solver", "level": "rs_aib_level"}


def paper_tables() -> None:
    widgets.subheader("The AIBench paper's tables")
    key = light_choice.choose("Table", list(aibench_paper.TABLES), key="rs_aib_paper",
                              format_func=lambda k: aibench_paper.TABLES[k].title)
    info = aibench_paper.TABLES[key]
    widgets.caption(info.caption + " Shown exactly as printed.")
    # A few rows as printed (text): an HTML table (st.table makes the browser load Arrow's reader and its
    # formatting files: about 0.15 s of Adjudication's first view when its list was one, issue 46).
    printed = aibench_paper.load_table(key)
    printed_table(printed)
    if key == "table2":
        widgets.caption("Each metric against the human rank. With 5 systems Spearman's rho takes only 21 values "
                   "(0.9 is one swap of neighbours from 1.0), so three metrics tie at 0.9; p is the exact "
                   "one-sided permutation p over all 120 orderings.")
        correlations = plain(aibench_paper.metric_rank_correlations(), digits=4)
        printed_table(correlations)
    source = widgets.lazy_section("Where these figures come from", key="rs_ab_paper_source_open")
    if source is not None:
        source.markdown(aibench_paper.source_note())


def plain(frame: pd.DataFrame, digits: int) -> pd.DataFrame:
    """``frame`` for a plain table (``safe_text.html_table``): its decimal columns as text to ``digits``
    decimals, a dash where a value is missing."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            out[column] = [shown_cells.DASH if shown_cells.missing(v) else shown_cells.number_text(v, digits)
                           for v in out[column]]
    return out


def _signature(name: str) -> tuple:
    folder = aibench_store.dataset_path(name)
    files = sorted((folder / "predictions").glob("*.jsonl")) if (folder / "predictions").is_dir() else []
    marker = folder / aibench_dataset.STORED_MARKER
    return (marker.stat().st_mtime_ns, *((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files))


@st.cache_resource(max_entries=4, show_spinner="Scoring…")
def _scored(name: str, signature: tuple):
    data = aibench_dataset.load_dataset(aibench_store.dataset_path(name))
    predictions = aibench_store.load_predictions(name)
    rows = views.with_kinds(scoring.answer_rows(data, predictions), data) if predictions else None
    table = views.table3_view(scoring.score_systems(data, predictions)) if predictions else None
    return data, rows, table


# What a rerun of the view would compute again from the same scored rows (a heatmap's cells, the solvers'
# agreement, Table 3 as printed: about 30 ms of each visit's 50 ms on the server, issue 46), kept with them.
# Read only, as the scored rows they come from.
@st.cache_resource(max_entries=16, show_spinner=False)
def _heatmap_cells(name: str, signature: tuple, row_axis: str, column_axis: str) -> pd.DataFrame:
    return views.heatmap(_scored(name, signature)[1], row_axis, column_axis)


@st.cache_resource(max_entries=4, show_spinner=False)
def _agreement(name: str, signature: tuple) -> pd.DataFrame:
    return plain(views.solver_rank_agreement(_scored(name, signature)[1]), digits=3)


@st.cache_resource(max_entries=4, show_spinner=False)
def _table3_headline(name: str, signature: tuple) -> pd.DataFrame:
    table = _scored(name, signature)[2]
    return plain(views.table3_headline(table), digits=1).rename(columns={"O_interval": TABLE3_INTERVAL})


def results_section(db, user) -> None:
    widgets.subheader("Results on stored data sets")
    status = aibench_store.start_synthetic()  # at once: ready, or being made in the background
    if status.state == "failed":
        synthetic_failed(status)
    elif status.state != "ready":
        synthetic_progress()
    names = _visible_datasets(db, user, status.state == "ready")
    if not names:
        if access.restricted(access.role_of(user)):
            widgets.caption("Every stored data set is in an open study: its results show once the study is closed.")
        return
    name = light_choice.choose("Data set", names, key="rs_aib_data")
    if access.can(access.role_of(user), "load_data", access.public_mode(db)):
        upload_panel(name)
    signature = _signature(name)
    data, rows, table = _scored(name, signature)
    widgets.caption(f"{plural(len(data.papers), 'paper')}, "
               f"{plural(sum(len(p.questions) for p in data.papers.values()), 'question')}, "
               f"{plural(len(data.systems), 'system')}.")
    if rows is None:
        widgets.info("No predictions stored for this data set yet: `python -m structext_core aibench run` asks a "
                "model, `aibench add-predictions` stores a file.")
        aibench_people.people_section(db, user, name, data, None)
        return
    table3(table, _table3_headline(name, signature))
    choice = light_choice.choose("Heatmap", list(HEATMAPS), key="rs_aib_heatmap")
    row_axis, column_axis = HEATMAPS[choice]
    aibench_widgets.heatmap(_heatmap_cells(name, signature, row_axis, column_axis), row_axis, column_axis,
                            f"aibench_{name}_{row_axis}_x_{column_axis}")
    agreement = _agreement(name, signature)
    if not agreement.empty:
        widgets.caption("Does the ranking of systems change with the solver? Kendall's tau between solvers.")
        printed_table(agreement)  # a row a pair of solvers
    drill(data, rows)
    aibench_people.people_section(db, user, name, data, rows)


def table3(table: pd.DataFrame, headline: pd.DataFrame) -> None:
    """Table 3 as the paper prints it (short columns, each with its full name as help), each
    level's n and interval in a second table below. A plain table, as the paper's own above it: a
    grid cost the page 0.42 s in the browser (1.34 against 0.92 s, issue 46), for sorting a few rows."""
    column_help = {**views.TABLE3_HELP, TABLE3_INTERVAL: views.TABLE3_HELP["O_interval"]}
    printed_table(headline, column_help)
    widgets.caption(" ".join(f"{label};" for label in views.LEVEL_LABELS.values())
               + " A: aesthetics as imported (none for the synthetic set); O: the mean of the five, with a bootstrap "
               "interval over papers. C, T, P, S: accuracy (%) pooled over the level's questions; a question "
               "without a clear letter counts as not correct.")
    box = widgets.lazy_section("n and Wilson 95% interval of each level", key=DETAIL_OPEN)
    if box:
        with box:
            printed_table(views.table3_detail(table))


def printed_table(frame: pd.DataFrame, column_help: dict[str, str] | None = None) -> None:
    """``frame`` (its numbers as text: :func:`plain`) as a plain table, its numbers aligned right."""
    widgets.html_block(safe_text.html_table(frame, right=safe_text.printed_number_columns(frame), column_help=column_help))


def upload_panel(name: str) -> None:
    """Admins: store a predictions file with the chosen data set (every problem named, nothing
    stored on any)."""
    box = widgets.lazy_section("Upload predictions (admin)", key=UPLOAD_OPEN)
    if not box:
        return
    with box:
        upload = st.file_uploader(
            "Predictions (JSONL, one a line: paper_id, question_id, system, solver, prediction)",
            type=["jsonl"], key="rs_aib_upload", max_upload_size=aibench_store.MAX_UPLOAD_MB)
        label = st.text_input("Stored as (default: the file's name)", key="rs_aib_upload_label", max_chars=64)
        if st.button("Store the predictions", type="primary", disabled=upload is None, key="rs_aib_upload_go"):
            try:
                stored, count = aibench_store.upload_predictions(name, upload.getvalue(), upload.name, label)
            except aibench_dataset.ImportFailed as error:
                st.error(views.describe_failure(upload.name, error))
                return
            ui.flash("success", f"Stored {count:,} predictions as {stored!r} with the data set {name!r}.")
            st.rerun()


@st.fragment(run_every=1.0)
def synthetic_progress() -> None:
    """The background job's progress, polled each second; the page reruns when it ends."""
    status = aibench_store.synthetic_status()
    if status.state == "running":
        st.progress(status.done / max(1, status.total),
                    text=f"Making the synthetic AIBench set (once, in the background): {status.step}, "
                         f"{status.done:,} of {status.total:,}")
    else:  # ready or failed: the whole page shows it
        st.rerun()


def synthetic_failed(status) -> None:
    st.error(f"The synthetic AIBench set could not be made: {safe_text.markdown_text(status.error)}. "
             "It is tried again when the server restarts.")


def drill(data, rows: pd.DataFrame) -> None:
    """The questions of one system, solver and level, with the image of one: in a box drawn only while
    open (opening it reruns the page)."""
    box = widgets.lazy_section("Questions behind a cell", key=DRILL_OPEN, icon=":material/table_rows:")
    if box:
        with box:
            drill_questions(data, rows)


def drill_questions(data, rows: pd.DataFrame) -> None:
    left, middle, right = st.columns(3)
    system = left.selectbox("System", data.systems, key="rs_aib_system")
    solver = middle.selectbox("Solver", sorted(rows["solver"].unique()), key="rs_aib_solver")
    level = right.selectbox("Level", [1, 2, 3, 4], key="rs_aib_level",
                            format_func=views.level_label)
    items = views.drill_down(rows, data, show_keys=True, system=system, solver=solver, level=level)
    if not items:
        widgets.info("No question of this level for this system and solver.")
        return
    frame = pd.DataFrame(items)
    frame["options"] = frame["options"].map(" | ".join)
    frame["level"] = frame["level"].map(views.level_label)
    st.dataframe(frame.drop(columns=["image"]), hide_index=True, key="rs_aib_drill")
    pick = st.selectbox("Show the image of", range(len(items)), key="rs_aib_pick",
                        format_func=lambda i: f"{items[i]['paper_id']} {items[i]['question_id']}")
    item = items[pick]
    if item["image"]:
        st.image(str(aibench_store.dataset_path(st.session_state["rs_aib_data"]) / item["image"]),
                 caption=safe_text.markdown_text(f"{item['system']}, {item['paper_id']}: {item['question']}"),
                 width=640)


def aibench_page(db, user) -> None:
    """The AIBench part of the Results page."""
    ui.show_flash()
    can_see = access.can(access.role_of(user), "answers", access.public_mode(db))
    notes_place = apply_url(db, user, can_see)
    paper_tables()
    if not can_see:
        widgets.caption("Model results on AIBench data sets are shown to researchers and admins.")
        write_url(can_see=False, notes_place=notes_place)
        return
    results_section(db, user)
    write_url(can_see=True, notes_place=notes_place)


def _visible_datasets(db, user, ready: bool) -> list[str]:
    """The stored data sets this user may open here (none an open AIBench study draws from, for
    visitors and annotators: :func:`structext_core.aibench.visibility.visible_datasets`)."""
    names = [n for n in aibench_store.stored_datasets() if n != aibench_store.SYNTHETIC or ready]
    return visibility.visible_datasets(db, user, names)


def apply_url(db, user, can_see: bool):
    """Open the AIBench view a pasted link describes (once per link); what it gets wrong is
    ignored with a note (``structext_core.aibench.url_state``). Visitors' links set the paper's table only."""
    current, state = benchmark_choice.url_now(), st.session_state
    if not current or benchmark_choice.written_by_page(current) or current == state.get("rs_aib_url_read"):
        return show_url_notes()
    state["rs_aib_url_read"] = current
    options: dict[str, list] = {"benchmark": list(protocol.NAMES), "table": list(aibench_paper.TABLES)}
    if can_see:
        names = _visible_datasets(db, user, aibench_store.synthetic_ready())
        options.update(data=names, heatmap=list(HEATMAPS))
        name = url_state.read_url(current, options).values.get("data") or (names[0] if names else None)
        if name is not None:
            data, rows, _ = _scored(name, _signature(name))
            options.update(system=list(data.systems),
                           solver=sorted(rows["solver"].unique()) if rows is not None else [])
    read = url_state.read_url(current, options)
    for key in (*URL_WIDGETS.values(), "rs_aib_pick"):
        state.pop(key, None)
    if can_see and {"system", "solver", "level"} & set(current):  # a link into the drill-down opens it
        state[DRILL_OPEN] = True
    for key, value in read.values.items():
        if key in URL_WIDGETS:
            state[URL_WIDGETS[key]] = value
    state["rs_aib_url_notes"] = (read.notes, None)
    return show_url_notes()


def show_url_notes():
    """What the last link opened got wrong, until the view is changed (a rerun alone keeps it);
    its place on the page, which :func:`write_url` empties when this run changed the view."""
    place = light_panel.placeholder()
    notes, _ = st.session_state.get("rs_aib_url_notes", ((), None))
    if notes:
        place.caption("Ignored in this link: " + safe_text.markdown_text("; ".join(notes)) + ".")
    return place


def write_url(can_see: bool, notes_place=None) -> None:
    """Put this run's AIBench controls in the URL (when they changed), so the view can be shared."""
    state = st.session_state
    keys = URL_WIDGETS if can_see else {"table": URL_WIDGETS["table"]}
    wanted = url_state.write_url({"benchmark": "aibench", **{k: state.get(w) for k, w in keys.items()}})
    as_lists = {key: [value] for key, value in wanted.items()}
    if as_lists != benchmark_choice.url_now():
        st.query_params.from_dict(wanted)
    state[benchmark_choice.RESULTS_URL_WRITTEN] = as_lists
    notes, shown_for = state.get("rs_aib_url_notes", ((), None))
    if notes and shown_for is None:
        state["rs_aib_url_notes"] = (notes, as_lists)
    elif notes and shown_for != as_lists:
        del state["rs_aib_url_notes"]
        if notes_place is not None:
            notes_place.empty()
