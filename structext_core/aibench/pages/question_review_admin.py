"""AIBench review campaigns: the lead creates a campaign, follows progress, reviews submitted papers,
resolves flags, adjudicates disagreements of double-reviewed papers and exports the curated set;
archives a campaign or copies it (the same papers and settings) and reads its audit log.

UI only; everything is decided and written in ``structext_core.aibench.question_review``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import streamlit as st

from structext_core import settings, ui
from structext_core.aibench import question_review as qr
from structext_core.aibench import store as aibench_store
from structext_core.aibench import views as aibench_views
from structext_core.aibench.model import LETTERS, LEVELS
from structext_core.studio import access, accounts
from structext_core.text.safe_text import frame_csv, markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_form, widgets
from structext_core.ui.frame import ensure_frame

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page(qr.LEAD_PAGE)
st.title("AIBench review campaigns")
ui.show_flash()
db = ui.get_db()


def _act(success: str, function, *args, **kwargs) -> None:
    try:
        function(ui.get_db(), *args, **kwargs)
    except qr.ReviewError as error:
        ui.flash("error", str(error))
    else:
        ui.flash("success", success)


def on_review(item_id: int, decision: str) -> None:
    comment = st.session_state.get(f"qra_comment_{item_id}", "")
    _act("Approved." if decision == "approved" else "Sent back to the reviewer.", qr.review, item_id, user,
         decision, comment)


def on_adjudicate(cid: int, paper_id: str, qid: str, choices: dict) -> None:
    key = f"qra_adj_{paper_id}_{qid}"
    action, question = choices[st.session_state[key]]
    _act(f"{paper_id} {qid} adjudicated.", qr.adjudicate, cid, paper_id, qid, user, action, question,
         st.session_state.get(f"{key}_reason", ""))


def on_resolve(flag_id: int) -> None:
    _act("Flag resolved.", qr.resolve_flag, flag_id, user, st.session_state.get(f"qra_resolve_{flag_id}", ""))


def on_take_sendback(sendback_id: int, cid: int) -> None:
    _act("The question is in this campaign now; its reviewer sees it beside the question.", qr.move_send_back, user,
         sendback_id, cid)


def on_withdraw_sendback(sendback_id: int) -> None:
    _act("Send-back withdrawn.", qr.withdraw_send_back, user, sendback_id)


def on_archive(cid: int, archived: bool) -> None:
    try:
        qr.set_archived(ui.get_db(), cid, archived, user)
    except qr.ReviewError as error:
        ui.flash("error", str(error))
        return
    if archived:
        st.session_state["qra_show_archived"] = True  # keep it in the chooser
    ui.flash("success", "Archived: hidden from its reviewers, nothing in it can be changed; nothing was deleted."
             if archived else "The campaign is back from the archive.")


def on_copy(cid: int) -> None:
    name = st.session_state.get(f"qra_copy_name_{cid}", "")
    try:
        new = qr.copy_campaign(ui.get_db(), cid, name, st.session_state.get(f"qra_copy_people_{cid}", []), user)
    except qr.ReviewError as error:
        ui.flash("error", f"No copy was made. {error}")
        return
    st.session_state["qra_campaign"] = new
    ui.flash("success", f"Campaign {name.strip()!r} created as a copy: the same papers and settings, every paper to do.")


def on_export(cid: int) -> None:
    folder = st.session_state.get(f"qra_folder_{cid}", "").strip()
    if not folder:
        ui.flash("error", "Not exported: name the export folder.")
        return
    try:
        result = qr.export(ui.get_db(), cid, folder, user)
    except qr.ReviewError as error:
        ui.flash("error", f"Not exported: {error}")
        return
    st.session_state["qra_exported"] = str(result.folder)
    left = (f" {plural(len(result.left_out), 'paper')} left out (not yet approved or adjudicated)."
            if result.left_out else "")
    ui.flash("success", f"Exported {plural(result.papers, 'paper')}, {plural(result.questions, 'question')} "
                         f"to {result.folder}.{left}")


@ui.fragment
def new_campaign() -> None:
    """The creation form (a light form: one element of the browser's own inputs), in a fragment: its
    answer redraws only this, a created campaign the whole page."""
    sets = aibench_store.stored_datasets()
    people = {u["id"]: f"{u['username']} ({u['role']})" for u in accounts.list_users(ui.get_db())
              if u["role"] in ("annotator", "admin")}
    if not sets:
        st.info("No AIBench data set is stored yet: import one (aibench import), or open Results with the "
                "AIBench benchmark once to make the synthetic set.")
        return
    sent = light_form.form("qra_new", [
        light_form.Text("name", "Campaign name", placeholder="e.g. AIBench review 2026"),
        light_form.Choice("dataset", "Data set", {name: name for name in sets}),
        light_form.Choices("reviewers", "Reviewers", people),
        (light_form.Number("share", "Share of papers reviewed twice", qr.DEFAULT_DOUBLE_SHARE, min_value=0.0,
                           max_value=1.0, step=0.05,
                           help="Drawn with the seed; each goes to two different reviewers, who do not see each "
                                "other's work. Agreement (kappa) is measured on them. Needs two reviewers or "
                                "more: with one, each paper is reviewed once."),
         light_form.Number("seed", "Seed", 0, min_value=0, max_value=2**31 - 1)),
    ], submit="Create campaign")
    if sent is None:
        return
    reviewers = sent["reviewers"]
    share = sent["share"] if len(reviewers) >= 2 else qr.default_double_share(len(reviewers))
    try:
        new = qr.create_campaign(ui.get_db(), sent["name"], sent["dataset"], reviewers, user, double_share=share,
                                 seed=sent["seed"])
    except qr.ReviewError as error:
        st.error(f"No campaign was created. {error}")
        return
    st.session_state["qra_campaign"] = new
    light_form.clear("qra_new")
    once = " With one reviewer each paper is reviewed once." if len(reviewers) == 1 else ""
    ui.flash("success", f"Campaign {sent['name'].strip()!r} created.{once}")
    st.rerun(scope="app")


every_campaign = qr.list_campaigns(db)
widgets.new_form_section("New review campaign", "qra_new_open", new_campaign, first=not every_campaign,
                         first_line="No review campaign yet: create the first one here.")
show_archived = False
if any(c["archived_at"] is not None for c in every_campaign):
    show_archived = st.toggle("Show archived campaigns", key="qra_show_archived",
                              help="Archived campaigns are hidden from their reviewers and from this list; "
                                   "they are kept whole.")
campaigns = [c for c in every_campaign if show_archived or c["archived_at"] is None]
if not campaigns:
    st.info("Every review campaign is archived: turn on **Show archived campaigns** to see them.")
    st.stop()
names = {c["id"]: c["name"] + (" · archived" if c["archived_at"] is not None else "") for c in campaigns}
if st.session_state.get("qra_campaign") not in names:
    st.session_state["qra_campaign"] = campaigns[0]["id"]
cid = st.selectbox("Campaign", list(names), format_func=names.get, key="qra_campaign")
row = qr.campaign(db, cid)
st.caption(f"Data set {row['dataset']!r} · seed {row['seed']} · {row['double_share']:.0%} of the papers reviewed twice")
archived = row["archived_at"] is not None
if archived:
    st.info("This campaign is archived: hidden from its reviewers, and nothing in it can be changed (reviews, "
            "adjudications, flags). It is kept whole and can still be exported; bring it back under **Manage**.",
            icon=":material/inventory_2:")

with st.expander("Manage: archive, copy, history", expanded=archived):
    archive_col, copy_col = st.columns(2, gap="large")
    with archive_col:
        st.caption("Archived: hidden from reviewers and from the campaign list (unless **Show archived campaigns** "
                   "is on); nothing can be changed in it. Nothing was deleted." if archived else
                   "Archiving hides the campaign from its reviewers and from the campaign list and stops all "
                   "changes. It is kept whole and can still be exported.")
        st.button("Bring back from the archive" if archived else "Archive the campaign", key=f"qra_archive_{cid}",
                  on_click=on_archive, args=(cid, not archived))
    with copy_col, st.form(f"qra_copy_{cid}"):
        st.markdown("**Copy the campaign**")
        st.caption("A new campaign over the same data set and papers with the same settings (share reviewed twice, "
                   "seed), every paper to do: no decisions, reviews or adjudications are copied. The papers are "
                   "dealt to the reviewers chosen here (the same reviewers get the same deal).")
        reviewer_people = {u["id"]: f"{u['username']} ({u['role']})" for u in accounts.list_users(db)
                           if u["role"] in ("annotator", "admin")}
        if f"qra_copy_people_{cid}" not in st.session_state:
            st.session_state[f"qra_copy_people_{cid}"] = [r for r in qr.campaign_reviewers(db, cid)
                                                           if r in reviewer_people]
        st.text_input("Name of the copy", key=f"qra_copy_name_{cid}", placeholder=f"e.g. {row['name']} (2)")
        st.multiselect("Reviewers of the copy", list(reviewer_people), format_func=reviewer_people.get,
                       key=f"qra_copy_people_{cid}")
        st.form_submit_button("Create the copy", on_click=on_copy, args=(cid,))
    changed = qr.history(db, cid)
    st.markdown("**History** (the lead's changes, newest first)")
    if not changed:
        st.caption("No change recorded yet.")
    else:
        st.dataframe(pd.DataFrame([{"when": time.strftime("%Y-%m-%d %H:%M", time.localtime(c.at)), "by": c.by,
                                    "action": c.action,
                                    "detail": "; ".join(f"{k}: {v}" for k, v in c.detail.items())}
                                   for c in changed]), hide_index=True, width="stretch")

st.subheader("Progress")
st.dataframe(aibench_views.review_progress_table(qr.progress(db, cid)), hide_index=True, width="stretch")
items = qr.list_items(db, cid)
with st.expander("Every paper"):
    st.dataframe(pd.DataFrame([{"paper": i["paper_id"], "reviewer": i["reviewer"], "double": bool(i["double"]),
                                "status": i["status"]} for i in items]), hide_index=True, width="stretch")

st.subheader("Submitted papers")
waiting = [i for i in items if i["status"] == "submitted"]
if not waiting:
    st.caption("Nothing waits for review.")
for item in waiting:
    sub = qr.latest_submission(db, item["id"])
    with st.expander(f"{item['paper_id']} · {item['reviewer']}" + (" · double" if item["double"] else "")):
        st.caption(f"Active {sub['active_seconds'] / 60:.1f} min · away {sub['away_seconds'] / 60:.1f} min · "
                   f"idle {sub['idle_seconds'] / 60:.1f} min · paused {sub['paused_seconds'] / 60:.1f} min")
        st.dataframe(pd.DataFrame([{"question": r.question_id, "decision": r.action, "reason": r.reason,
                                    "text": r.current.question if r.action in ("edit", "add") else "",
                                    "answer": (r.current.options[LETTERS.index(r.current.answer)]
                                               if r.action in ("edit", "add") and r.check.ok else ""),
                                    "graph warning": " ".join(r.check.warnings)}
                                   for r in qr.submission_rows(db, item["id"])]),
                     hide_index=True, width="stretch")
        st.text_input("Comment for the reviewer", key=f"qra_comment_{item['id']}")
        a, b = st.columns(2)
        a.button("Approve", key=f"qra_approve_{item['id']}", type="primary", on_click=on_review,
                 args=(item["id"], "approved"))
        b.button("Send back", key=f"qra_return_{item['id']}", on_click=on_review, args=(item["id"], "returned"))

st.subheader("Agreement of double reviews")
st.caption("Cohen's kappa on accept / edit / remove, over the generated questions (*questions*) of the papers both "
           f"their reviewers submitted. Kappa is {aibench_views.UNDEFINED} where both reviewers made one same decision "
           "throughout (chance agreement is 1), and 0 where one of them did and the other did not always agree.")
st.dataframe(aibench_views.review_agreement_table(qr.agreement(db, cid)), hide_index=True, width="stretch")

st.subheader("Disagreements")
found = qr.disagreements(db, cid)
if not found:
    st.caption("No disagreement to adjudicate.")
for d in found:
    q = d["original"]
    done = d["adjudication"]
    title = f"{d['paper_id']} {d['question_id']} · level {d['level']} {LEVELS[d['level']]}"
    with st.expander(title + (f" · adjudicated: {done['action']}" if done else " · open"), expanded=not done):
        st.markdown(f"**Generated:** {markdown_text(q.question)}  \n" + "  \n".join(
            f"{LETTERS[k]}. {markdown_text(o)}{' (key)' if LETTERS[k] == q.answer else ''}"
            for k, o in enumerate(q.options)))
        choices = {"Keep the generated question": ("accept", None), "Remove it": ("remove", None)}
        for reviewer, decision in d["versions"]:
            said = f"**{reviewer}:** {decision['action']}"
            if decision["reason"]:
                said += f" — {markdown_text(decision['reason'])}"
            if decision["action"] == "edit":
                edited = qr.question_from(decision["question"], q.id)
                said += f"  \n{markdown_text(edited.question)}  \n" + "  \n".join(
                    f"{LETTERS[k]}. {markdown_text(o)}{' (key)' if LETTERS[k] == edited.answer else ''}"
                    for k, o in enumerate(edited.options))
                choices[f"Take {reviewer}'s edit"] = ("edit", edited)
            st.markdown(said)
        key = f"qra_adj_{d['paper_id']}_{d['question_id']}"
        st.radio("Final version", list(choices), key=key)
        st.text_input("Reason", key=f"{key}_reason")
        st.button("Adjudicate", key=f"{key}_go", on_click=on_adjudicate,
                  args=(cid, d["paper_id"], d["question_id"], choices))

st.subheader("Flags")
flags = qr.list_flags(db, cid)
if not flags:
    st.caption("No flags.")
for f in flags:
    line = f"**{f['paper_id']}** {f['question_id'] or ''} · {f['flagged_by']}: {markdown_text(f['reason'])}"
    if f["resolution"]:
        st.markdown(f"{line}  \nResolved by {f['resolved_by']}: {markdown_text(f['resolution'])}")
        continue
    st.markdown(line)
    st.text_input("Resolution", key=f"qra_resolve_{f['id']}")
    st.button("Resolve", key=f"qra_resolve_go_{f['id']}", on_click=on_resolve, args=(f["id"],))

st.subheader("Questions sent back from Results")
st.caption("Where people answering from the paper's own figure and a VLM solver part (Results → AIBench → People), "
           "the lead sends the question back here with the reason and the evidence (the letters people chose, as "
           "counts; the solver's letter; the key). The reviewer of the paper sees them beside the question.")
waiting = [b for b in qr.sendbacks(db, dataset=row["dataset"]) if b["campaign_id"] in (None, cid)]
if not waiting:
    st.caption("No question was sent back for this campaign's data set.")
papers_here = {i["paper_id"] for i in items}
for b in waiting:
    with st.container(border=True):
        st.markdown(markdown_text(f"**{b['paper_id']} {b['question_id']}** · {b['where']} · by {b['lead']}: "
                                  f"{b['reason']}"))
        st.caption(markdown_text(qr.describe_evidence(b["evidence"])))
        left, right = st.columns(2)
        if b["state"] == "queued" and b["paper_id"] in papers_here:
            left.button("Review it in this campaign", key=f"qra_sb_take_{b['id']}", on_click=on_take_sendback,
                        args=(b["id"], cid))
        if b["state"] != "reviewed":
            right.button("Withdraw", key=f"qra_sb_withdraw_{b['id']}", on_click=on_withdraw_sendback, args=(b["id"],))

st.subheader("Export")
curated = qr.curated(db, cid)
st.caption(f"{plural(len(curated.papers), 'paper')} ready (all reviews approved, disagreements adjudicated); "
           f"{len(curated.left_out)} not yet. The export is an AIBench import folder (it re-imports as a data set), "
           "with review/provenance.jsonl (generated, revised, added, removed; by whom, when, why), "
           "review/review_log.jsonl and review/agreement.json.")
if curated.left_out:
    st.dataframe(pd.DataFrame([{"paper": p, "why not yet": why} for p, why in curated.left_out.items()]),
                 hide_index=True, width="stretch")
if f"qra_folder_{cid}" not in st.session_state:
    st.session_state[f"qra_folder_{cid}"] = str(
        settings.exports_dir() / f"aibench-review-{cid}-{time.strftime('%Y%m%d-%H%M%S')}")
st.text_input("Export folder (new or empty)", key=f"qra_folder_{cid}")
st.button("Export curated set", type="primary", on_click=on_export, args=(cid,),
          disabled=not curated.papers)
exported = st.session_state.get("qra_exported")
if exported and access.can(access.role_of(user), "review_export"):
    if Path(exported).is_dir():
        st.download_button("Download the export (zip)", qr.zip_folder(exported), file_name=f"{Path(exported).name}.zip",
                           mime="application/zip")
if curated.provenance:
    st.download_button("Provenance (CSV)", frame_csv(pd.DataFrame(curated.provenance).drop(columns=["original"])),
                       file_name=f"aibench-review-{cid}-provenance.csv", mime="text/csv")
