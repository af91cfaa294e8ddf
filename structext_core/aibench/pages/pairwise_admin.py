"""Pairwise studies (the lead's page): create a blind pairwise study over a stored AIBench set,
follow its progress and flags, read the human rank with everything measured about it, and manage
the study (people, open or closed, archive) with every change in the audit log.

UI only; the study and its results live in ``structext_core.aibench.pairwise`` and
``structext_core.aibench.pairwise.ranking``.
"""

import time

import pandas as pd
import streamlit as st

from structext_core import ui
from structext_core.aibench import pairwise as pws
from structext_core.aibench import store as aibench_store
from structext_core.aibench.ui import people as people_ui
from structext_core.studio import accounts
from structext_core.text import safe_text
from structext_core.text.safe_text import markdown_text
from structext_core.ui import light_form, widgets
from structext_core.ui.frame import ensure_frame

ensure_frame()
admin = ui.require_page("pairwise_admin")
db = ui.get_db()


def create(sent: dict) -> None:
    """Create the study the set-up form sent; its error (nothing written) or the study chosen on the rerun."""
    try:
        study_id = pws.create_study(
            ui.get_db(), sent["name"], sent["dataset"], sent["people"], n_pairs=sent["pairs"], systems=sent["systems"] or None,
            practice=sent["practice"], repeat_share=sent["repeat"], seed=sent["seed"], by_user=admin["id"])
    except pws.StudyError as error:
        st.error(str(error))
        return
    st.session_state["pwa_study"] = study_id
    light_form.clear("pwa_create")
    ui.flash("success", f"Created the pairwise study {sent['name']!r}.")
    st.rerun()


def _lead_act(success: str, function, *args, **kwargs) -> bool:
    """Run a lead action on the study; its error (nothing written) or ``success`` on the next drawing."""
    try:
        function(ui.get_db(), *args, by_user=admin["id"], **kwargs)
    except pws.StudyError as error:
        ui.flash("error", str(error))
        return False
    ui.flash("success", success)
    return True


def on_status(study_id: int, status: str) -> None:
    _lead_act(f"The study is now {status}.", pws.set_status, study_id, status)


def on_archive(study_id: int, archived: bool) -> None:
    if _lead_act("The study is archived: hidden from its annotators, no votes taken; nothing was deleted." if archived
                 else "The study is back from the archive.", pws.set_archived, study_id, archived) and archived:
        st.session_state["pwa_show_archived"] = True  # keep it in the chooser


def on_add_person(study_id: int) -> None:
    person = st.session_state.get("pwa_add_person")
    if person is None:
        ui.flash("error", "Choose the annotator to add.")
        return
    _lead_act(f"{person['username']} now votes in this study (the same pairs, in their own order and with their own sides).",
              pws.add_annotator, study_id, person["id"])


def on_remove_person(study_id: int) -> None:
    person = st.session_state.get("pwa_remove_person")
    if person is None:
        ui.flash("error", "Choose the annotator to take off.")
        return
    _lead_act(f"{person['username']} is taken off this study; their votes so far are kept.",
              pws.remove_annotator, study_id, person["user_id"])


def on_resolve(flag_id: int) -> None:
    try:
        pws.resolve_flag(ui.get_db(), flag_id, admin, st.session_state.get(f"pwa_resolution_{flag_id}", ""))
        ui.flash("success", "Flag resolved.")
    except pws.StudyError as error:
        ui.flash("error", str(error))


st.title("Pairwise studies")
ui.show_flash()


def new_study() -> None:
    """The new study's form (or what is missing for one: a data set, annotators)."""
    datasets = aibench_store.stored_datasets()
    annotators = accounts.list_users(db, role="annotator")
    if not datasets:
        st.info("No AIBench data set is stored yet: open Results → AIBench once (it makes the synthetic set) or "
                "import one with `python -m structext_core aibench import`.")
    elif not annotators:
        st.info("There are no annotator accounts yet: create them on the **Accounts** page (Admin) first.")
    else:
        sent = light_form.form("pwa_create", [
            light_form.Choice("dataset", "AIBench data set", {name: name for name in datasets}),
            light_form.Choices("systems", "Systems (all when none chosen)", {}, follows="dataset",
                               options_by={d: {name: name for name in pws.dataset_systems(d)} for d in datasets}),
            light_form.Text("name", "Name", max_chars=pws.MAX_NAME_CHARS),
            light_form.Choices("people", "Annotators", {u["id"]: u["username"] for u in annotators},
                               help="Every annotator judges every pair, each in their own order and with their own sides."),
            (light_form.Number("pairs", "Counted pairs", 30, min_value=1, max_value=pws.MAX_PAIRS),
             light_form.Number("practice", "Practice pairs", 2, min_value=0, max_value=10),
             light_form.Number("repeat", "Share repeated, sides swapped", 0.1, min_value=0.0, max_value=0.5,
                               step=0.05),
             light_form.Number("seed", "Seed", 0, min_value=0, max_value=2**31 - 1)),
        ], submit="Create study")
        if sent is not None:
            create(sent)
        st.caption(f"Blinding: both images of a pair are served on one {pws.CANVAS[0]} x {pws.CANVAS[1]} canvas "
                   "(scaled down to fit when larger, the rest white) and padded to one byte size, so neither size, "
                   "shape nor file names a system; each annotator gets files and addresses of their own, which "
                   "stop answering when their page moves on. Papers an annotator opened in the question review "
                   "are left out of the pairs.")


every_study = pws.list_studies(db)
widgets.new_form_section("New pairwise study", "pwa_new_open", new_study, first=not every_study,
                         first_line="No pairwise study yet: create the first one here.")

show_archived = False
if any(s.archived for s in every_study):
    show_archived = st.toggle("Show archived studies", key="pwa_show_archived",
                              help="Archived studies are hidden from their annotators and from this list; "
                                   "they are kept whole.")
studies = [s for s in every_study if show_archived or not s.archived]
if not studies:
    st.info("Every pairwise study is archived: turn on **Show archived studies** to see them.")
    st.stop()
ids = [s.id for s in studies]
if st.session_state.get("pwa_study") not in ids:
    st.session_state["pwa_study"] = ids[0]
study_id = st.selectbox("Study", ids, key="pwa_study",
                        format_func=lambda i: next(pws.lead_label(s.name, s.status, s.archived, s.pairs, s.practice_pairs,
                                                                  s.dataset) for s in studies if s.id == i))
study = pws.get_study(db, study_id)
if study.archived:
    st.info("This study is archived: hidden from its annotators, and no votes are taken. Its votes and results are "
            "kept; bring it back under **Manage**.", icon=":material/inventory_2:")

progress_tab, results_tab, flags_tab, manage_tab, history_tab = st.tabs(
    ["Progress", "Results", "Flags", "Manage", "History"])
with progress_tab:
    st.caption("**counted votes** of each person's **pairs** (the first vote on each; practice is never counted, "
               "a repeat only measures consistency); **repeats** and **practice**: done of theirs.")
    st.dataframe(pws.progress(db, study.id), hide_index=True)
with manage_tab:
    status_col, archive_col = st.columns(2, gap="large")
    with status_col:
        st.caption("A closed study takes no votes; its annotators see that it is closed." if study.status == "open"
                   else "The study is closed: no votes are taken. Reopen it to let its annotators go on.")
        st.button("Close the study" if study.status == "open" else "Reopen the study", on_click=on_status,
                  args=(study.id, "closed" if study.status == "open" else "open"), key="pwa_status")
    with archive_col:
        st.caption("Archived: hidden from annotators and from the study list (unless **Show archived studies** is "
                   "on). Nothing was deleted." if study.archived else
                   "Archiving hides the study from its annotators and from the study list, and no votes are taken. "
                   "Its votes, results and downloads are kept.")
        st.button("Bring back from the archive" if study.archived else "Archive the study", on_click=on_archive,
                  args=(study.id, not study.archived), key="pwa_archive")
    people = pws.members(db, study.id)
    st.markdown("**People**")
    st.dataframe(pd.DataFrame([{"annotator": m["username"], "taken off": m["removed"]} for m in people],
                              columns=["annotator", "taken off"]), hide_index=True)
    add_col, remove_col = st.columns(2, gap="large")
    taking_part = {m["user_id"] for m in people}
    addable = [u for u in accounts.list_users(db, role="annotator") if u["id"] not in taking_part]
    with add_col:
        st.selectbox("Add an annotator", addable, index=None, format_func=lambda u: u["username"],
                     key="pwa_add_person", placeholder="Choose an annotator",
                     help="They judge the same pairs, in their own order and with their own sides.")
        st.button("Add", key="pwa_add", on_click=on_add_person, args=(study.id,), disabled=not addable)
    removable = [m for m in people if not m["removed"]]
    with remove_col:
        st.selectbox("Take an annotator off", removable, index=None, format_func=lambda m: m["username"],
                     key="pwa_remove_person", placeholder="Choose an annotator",
                     help="They no longer see the study or vote in it; their votes so far are kept and count.")
        st.button("Take off", key="pwa_remove", on_click=on_remove_person, args=(study.id,), disabled=not removable)
with history_tab:
    changed = pws.history(db, study.id)
    if not changed:
        st.caption("No change recorded yet.")
    else:
        st.dataframe(pd.DataFrame([{"when": time.strftime("%Y-%m-%d %H:%M", time.localtime(c.at)), "by": c.by or "(no account: a script)",
                                    "action": c.action, "detail": "; ".join(f"{k}: {v}" for k, v in c.detail.items())}
                                   for c in changed]),
                     hide_index=True)
with flags_tab:
    flags = pws.flags_frame(db, study.id)
    if flags.empty:
        st.caption("No flags.")
    for flag in flags.itertuples():
        with st.container(border=True):
            st.markdown(markdown_text(f"**{flag.annotator or '(deleted account)'}** on {flag.paper_id}: {flag.system_a} vs {flag.system_b} "
                                      f"— {pws.FLAG_KINDS.get(flag.kind, flag.kind)}. {flag.note}"))
            if flag.resolution:
                st.caption(markdown_text(f"Resolved: {flag.resolution}"))
            else:
                st.text_input("Resolution", key=f"pwa_resolution_{flag.id}")
                st.button("Resolve", key=f"pwa_resolve_{flag.id}", on_click=on_resolve, args=(flag.id,))
with results_tab:
    if not pws.counted_votes(db, study.id):
        st.info("No counted votes yet.")
    else:
        res = pws.results(db, study.id)
        people_ui.rank_block(res, "pwa", headings=True)
        st.download_button("Votes (CSV)", pws.votes_csv(db, study.id), file_name=f"pairwise-{study.id}-votes.csv",
                           mime="text/csv")
        st.download_button("Human rank (CSV)", safe_text.frame_csv(res.ranking.table),
                           file_name=f"pairwise-{study.id}-rank.csv", mime="text/csv")
