"""Explore: browse samples by format, task, depth and width; see them rendered and raw; export.

Researchers and admins see every suite; visitors and annotators only in public read-only mode,
and then only suites in no open study, without any sample of an open study (``access``).
"""

import streamlit as st

from pages import ui
from pages.ui import suites as ui_suites
from pages.ui.frame import ensure_frame
from structext_core.benchmark import suites
from structext_core.benchmark.formats import HIGHLIGHT
from structext_core.benchmark.tasks import TASKS
from structext_core.studio import access, sandbox
from structext_core.views import explore

ensure_frame()
user = ui.require_page("explore")
db = ui.get_db()

st.title("Explore samples")

files = suites.suite_files()
if not files:
    st.warning("No suites yet: open Home once to generate the default suites.")
    st.stop()
shown = access.visible_suites(db, user, [f.stem for f in files])
if not shown:
    st.info("Every suite is part of an open study, so its answers stay sealed until the study is closed.")
    st.stop()
if access.restricted(access.role_of(user)):
    st.caption("Public read-only mode: suites of open studies are not shown, nor any sample of an open study.")
files = [f for f in files if f.stem in shown]
hidden = access.hidden_samples(db, user)

names = [f.stem for f in files]
suite_name = st.selectbox("Suite", names, key="explore_suite")
suite_file = files[names.index(suite_name)]
rows = ui_suites.load_suite(suite_file)
index = ui_suites.load_index(suite_file)
if hidden:
    rows = hidden.keep(rows)
    index = index[index["id"].isin({r["id"] for r in rows})]
by_id = {r["id"]: r for r in rows}

c = st.columns([2, 3, 1, 1])
formats = c[0].multiselect("Format", explore.format_choices(index), key="explore_formats", placeholder="Any")
task_ids = c[1].multiselect("Task", explore.task_choices(index, formats), format_func=explore.task_label,
                            key="explore_tasks", placeholder="Any")
depths = c[2].multiselect("Depth", sorted(index["depth"].unique().tolist()), key="explore_depths", placeholder="Any")
widths = c[3].multiselect("Width", sorted(index["width"].unique().tolist()), key="explore_widths", placeholder="Any")

selected = explore.filter_index(index, formats, task_ids, depths, widths)
st.caption(f"{len(selected):,} of {len(index):,} samples match.")
if selected.empty:
    st.info("No sample matches these filters.")
    st.stop()

ids = selected["id"].tolist()
left, right = st.columns([4, 1])
right.download_button(
    f"Download {len(ids):,} as JSONL", data=lambda: explore.selection_jsonl(by_id[i] for i in ids),
    file_name=f"{suite_name}-selection.jsonl", mime="application/jsonl", key="explore_download")
current = st.session_state.get("explore_sample")
if current not in ids:
    st.session_state["explore_sample"] = ids[0]
sample_id = left.selectbox("Sample", ids, key="explore_sample",
                           format_func=lambda i: f"{i}  ({by_id[i]['language']}, {len(by_id[i]['reference']):,} chars)")
sample = by_id[sample_id]
task = TASKS[sample["task_id"]]

st.subheader(explore.task_label(task.task_id))
st.caption(f"format **{sample['language']}** · category **{sample['task']}** · depth **{sample['depth']}** · "
           f"width **{sample['width']}** · col **{sample['col']}** · seed **{sample['seed']}** · "
           f"{len(sample['reference']):,} characters")

q, a = st.columns(2)
with q:
    st.markdown("**Question**")
    st.write(sample["question"])
    st.markdown("**Requirement**")
    st.write(sample["requirement"])
    if sample.get("params"):
        st.markdown("**Built from**")
        st.json(sample["params"], expanded=True)
with a:
    st.markdown("**Answer**")
    st.code(sample["answer"], language=None)
    st.markdown("**Rule hint**")
    st.info(sample["rule_hint"])



def show_tables(tables) -> None:
    for table in tables:
        st.dataframe(table, hide_index=True, width="stretch")


# How each kind of preview is drawn (structext_core.benchmark.formats.Preview); "none" draws nothing.
SHOW_PREVIEW = {
    "markdown": st.markdown,
    "json": lambda data: st.json(data, expanded=2),
    "tables": show_tables,
    "graph": st.graphviz_chart,
}

st.markdown("**Reference**")
# Long references scroll inside a fixed frame; short ones take the space they need.
frame_height = 560 if sample["reference"].count("\n") > 24 else "content"
rendered, raw = st.tabs(["Rendered", "Raw text"])
with rendered:
    view = sandbox.preview(sample["language"], sample["reference"])  # in a worker: the file may be hostile
    if view.note:
        st.caption(view.note)
    with st.container(height=frame_height):
        SHOW_PREVIEW.get(view.kind, lambda data: None)(view.data)
with raw:
    lang = HIGHLIGHT.get(sample["language"])
    with st.container(height=frame_height):
        st.code(sample["reference"], language=lang, line_numbers=True)
