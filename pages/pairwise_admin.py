"""Pairwise studies (the lead's page): create a blind pairwise study over a stored AIBench set,
follow its progress and flags, and read the human rank with everything measured about it.

UI only; the study and its results live in ``structext_core.studio.pairwise`` and
``structext_core.evaluation.pairwise``.
"""

import streamlit as st

from pages import ui
from pages.ui.frame import ensure_frame
from structext_core.benchmark import safe_text
from structext_core.benchmark.safe_text import markdown_text
from structext_core.studio import accounts, aibench_store
from structext_core.studio import pairwise as pws

ensure_frame()
admin = ui.require_page("pairwise_admin")
db = ui.get_db()


def on_create() -> None:
    s = st.session_state
    try:
        study_id = pws.create_study(
            ui.get_db(), s.get("pwa_name", ""), s.get("pwa_dataset") or "", [u["id"] for u in s.get("pwa_people", [])],
            n_pairs=int(s.get("pwa_pairs", 30)), systems=s.get("pwa_systems") or None,
            practice=int(s.get("pwa_practice", 2)), repeat_share=float(s.get("pwa_repeat", 0.1)),
            seed=int(s.get("pwa_seed", 0)), by_user=admin["id"])
        s["pwa_study"] = study_id
        ui.flash("success", f"Created the pairwise study {s.get('pwa_name', '')!r}.")
    except pws.StudyError as error:
        ui.flash("error", str(error))


def on_status(study_id: int, status: str) -> None:
    pws.set_status(ui.get_db(), study_id, status)
    ui.flash("success", f"The study is now {status}.")


def on_resolve(flag_id: int) -> None:
    try:
        pws.resolve_flag(ui.get_db(), flag_id, admin, st.session_state.get(f"pwa_resolution_{flag_id}", ""))
        ui.flash("success", "Flag resolved.")
    except pws.StudyError as error:
        ui.flash("error", str(error))


st.title("Pairwise studies")
ui.show_flash()

with st.expander("New pairwise study", expanded=not pws.list_studies(db)):
    datasets = aibench_store.stored_datasets()
    annotators = accounts.list_users(db, role="annotator")
    if not datasets:
        st.info("No AIBench data set is stored yet: open Results → AIBench once (it makes the synthetic set) or "
                "import one with `python -m structext_core aibench import`.")
    elif not annotators:
        st.info("There are no annotator accounts yet: create them under **Accounts** first.")
    else:
        dataset = st.selectbox("AIBench data set", datasets, key="pwa_dataset")
        systems = pws.dataset_systems(dataset)
        st.multiselect("Systems (all when none chosen)", systems, key="pwa_systems")
        with st.form("pwa_create"):
            st.text_input("Name", key="pwa_name", max_chars=pws.MAX_NAME_CHARS)
            st.multiselect("Annotators", annotators, format_func=lambda u: u["username"], key="pwa_people",
                           help="Every annotator judges every pair, each in an own order with own sides.")
            c1, c2, c3, c4 = st.columns(4)
            c1.number_input("Counted pairs", 1, pws.MAX_PAIRS, 30, key="pwa_pairs")
            c2.number_input("Practice pairs", 0, 10, 2, key="pwa_practice")
            c3.number_input("Share repeated, sides swapped", 0.0, 0.5, 0.1, 0.05, key="pwa_repeat")
            c4.number_input("Seed", 0, 2**31 - 1, 0, key="pwa_seed")
            st.form_submit_button("Create study", type="primary", on_click=on_create)

studies = pws.list_studies(db)
if not studies:
    st.stop()
ids = [s.id for s in studies]
if st.session_state.get("pwa_study") not in ids:
    st.session_state["pwa_study"] = ids[0]
study_id = st.selectbox("Study", ids, key="pwa_study",
                        format_func=lambda i: next(f"{s.name} ({s.status}, {s.pairs} pairs, {s.dataset})"
                                                   for s in studies if s.id == i))
study = pws.get_study(db, study_id)
st.button("Close the study" if study.status == "open" else "Reopen the study", on_click=on_status,
          args=(study.id, "closed" if study.status == "open" else "open"))

progress_tab, results_tab, flags_tab = st.tabs(["Progress", "Results", "Flags"])
with progress_tab:
    st.dataframe(pws.progress(db, study.id), hide_index=True)
with flags_tab:
    flags = pws.flags_frame(db, study.id)
    if flags.empty:
        st.caption("No flags.")
    for flag in flags.itertuples():
        with st.container(border=True):
            st.markdown(markdown_text(f"**{flag.annotator}** on {flag.paper_id}: {flag.system_a} vs {flag.system_b} "
                                      f"— {pws.FLAG_KINDS.get(flag.kind, flag.kind)}. {flag.note}"))
            if flag.resolution:
                st.caption(markdown_text(f"Resolved: {flag.resolution}"))
            else:
                st.text_input("Resolution", key=f"pwa_resolution_{flag.id}")
                st.button("Resolve", key=f"pwa_resolve_{flag.id}", on_click=on_resolve, args=(flag.id,))
with results_tab:
    if not len(pws.votes_frame(db, study.id)):
        st.info("No counted votes yet.")
    else:
        res = pws.results(db, study.id)
        st.markdown(f"**{res.votes}** counted votes (each person's first on a pair) by **{res.annotators}** people. "
                    "Ties count half a win to each side; *both bad* is left out of the strengths and shown apart. "
                    f"Intervals: {res.ranking.n_boot} bootstrap resamples of the votes (seed {res.ranking.seed}).")
        st.subheader("Human rank: Bradley-Terry strengths")
        st.dataframe(res.ranking.table.round(3), hide_index=True)
        m1, m2, m3 = st.columns(3)
        m1.metric("Per-pair agreement", "–" if res.agreement["rater_pairs"] == 0 else
                  f"{res.agreement['agreement']:.0%}", help=f"{res.agreement['pairs']} pairs judged by two or more")
        m2.metric("Kendall's W", "undefined" if res.kendall_w["w"] is None else f"{res.kendall_w['w']:.2f}",
                  help=f"over {res.kendall_w['raters']} people who compared every system")
        m3.metric("Swap consistency", "–" if res.consistency["repeats"] == 0 else
                  f"{res.consistency['consistency']:.0%}", help=f"{res.consistency['repeats']} repeated pairs")
        st.subheader("Table 2 rebuilt: aesthetic metrics and the human rank")
        if res.table2.shape[1] <= 3:
            st.caption("This data set has no imported aesthetic metric.")
        st.dataframe(res.table2.round(3), hide_index=True)
        st.subheader("Fig. 6b rebuilt: each judge against the human rank")
        st.dataframe(res.fig6b.round(3), hide_index=True)
        st.download_button("Votes (CSV)", pws.votes_csv(db, study.id), file_name=f"pairwise-{study.id}-votes.csv",
                           mime="text/csv")
        st.download_button("Human rank (CSV)", safe_text.frame_csv(res.ranking.table),
                           file_name=f"pairwise-{study.id}-rank.csv", mime="text/csv")
