"""AIBench on the Results page (Streamlit glue; every number comes from
``structext_core.views.aibench_results``, ``structext_core.aibench`` and
``structext_core.studio.aibench_store``).

Everyone sees the paper's AIBench tables, exactly as printed. Who may see answers (researchers
and admins; ``access.can(role, "answers")``) also sees the stored data sets' results: Table 3
with n and intervals, heatmaps, the solvers' agreement and a drill-down to each question with
its image, key, letter read and reply. The synthetic set (and its perfect-reader predictions) is
made the first time such a person opens this view.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from structext_core import benchmarks
from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import paper as aibench_paper
from structext_core.aibench import scoring
from structext_core.benchmark import safe_text
from structext_core.studio import access, aibench_store
from structext_core.views import aibench_results as views

HEATMAPS = {"system x level": ("system", "level"), "system x conference": ("system", "conference"),
            "solver x system": ("solver", "system"), "system x kind of question": ("system", "kind")}


def choose_benchmark() -> str:
    """The benchmark whose results the page shows (a choice over the registry)."""
    return st.selectbox("Benchmark", benchmarks.NAMES, key="rs_benchmark",
                        format_func=lambda name: benchmarks.REGISTRY[name].display_name)


def paper_tables() -> None:
    st.subheader("The AIBench paper's tables")
    key = st.selectbox("Table", list(aibench_paper.TABLES), key="rs_aib_paper",
                       format_func=lambda k: aibench_paper.TABLES[k].title)
    info = aibench_paper.TABLES[key]
    st.caption(info.caption + " Shown exactly as printed.")
    st.dataframe(aibench_paper.load_table(key), hide_index=True, key="rs_aib_paper_table")
    if key == "table2":
        st.caption("Each metric against the human rank. With 5 systems Spearman's rho takes only 21 values "
                   "(0.9 is one swap of neighbours from 1.0), so three metrics tie at 0.9; p is the exact "
                   "one-sided permutation p over all 120 orderings.")
        st.dataframe(aibench_paper.metric_rank_correlations(), hide_index=True, key="rs_aib_rank_corr")
    with st.expander("Where these figures come from"):
        st.markdown(aibench_paper.source_note())


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


def results_section() -> None:
    st.subheader("Results on stored data sets")
    if aibench_store.SYNTHETIC not in aibench_store.stored_datasets():
        with st.spinner("Making the synthetic AIBench set (once)…"):
            aibench_store.add_reference_predictions()
    names = aibench_store.stored_datasets()
    name = st.selectbox("Data set", names, key="rs_aib_data")
    data, rows, table = _scored(name, _signature(name))
    st.caption(f"{len(data.papers)} papers, {sum(len(p.questions) for p in data.papers.values())} questions, "
               f"{len(data.systems)} systems.")
    if rows is None:
        st.info("No predictions stored for this data set yet: `python -m structext_core aibench run` asks a "
                "model, `aibench add-predictions` stores a file.")
        return
    numbers = {c: st.column_config.NumberColumn(c, format="%.2f") for c in ("C", "T", "P", "S", "A", "O")}
    st.dataframe(table, hide_index=True, key="rs_aib_table3", column_config=numbers)
    st.caption("C, T, P, S: accuracy (%) per level pooled over its questions, n and Wilson 95% interval; "
               "A: aesthetics as imported (none for the synthetic set); O: the mean of the five with a "
               "bootstrap interval over papers. A question without a clear letter counts as not correct.")
    choice = st.selectbox("Heatmap", list(HEATMAPS), key="rs_aib_heatmap")
    row_axis, column_axis = HEATMAPS[choice]
    st.altair_chart(views.heatmap_chart(views.heatmap(rows, row_axis, column_axis), row_axis, column_axis),
                    width="stretch")
    agreement = views.solver_rank_agreement(rows)
    if not agreement.empty:
        st.caption("Does the ranking of systems change with the solver? Kendall's tau between solvers.")
        st.dataframe(agreement, hide_index=True, key="rs_aib_agreement")
    drill(data, rows)


def drill(data, rows: pd.DataFrame) -> None:
    st.subheader("Questions behind a cell")
    left, middle, right = st.columns(3)
    system = left.selectbox("System", data.systems, key="rs_aib_system")
    solver = middle.selectbox("Solver", sorted(rows["solver"].unique()), key="rs_aib_solver")
    level = right.selectbox("Level", [1, 2, 3, 4], key="rs_aib_level",
                            format_func=lambda lv: f"{lv}: {scoring.LEVELS[lv]}")
    items = views.drill_down(rows, data, show_keys=True, system=system, solver=solver, level=level)
    if not items:
        st.info("No question of this level for this system and solver.")
        return
    frame = pd.DataFrame(items)
    frame["options"] = frame["options"].map(" | ".join)
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
    paper_tables()
    if not access.can(access.role_of(user), "answers", access.public_mode(db)):
        st.caption("Model results on AIBench data sets are shown to researchers and admins.")
        return
    results_section()
