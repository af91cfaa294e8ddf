"""Rewrite campaigns (admin): set up, review queue, flags, progress and export.

UI only: every rule and write lives in ``structext_core.structext_eval.campaign`` and ``structext_core.structext_eval.rewrite``.
"""

import pandas as pd
import streamlit as st

from structext_core import ui
from structext_core.structext_eval import campaign, suites
from structext_core.structext_eval.formats import DISPLAY_NAMES
from structext_core.structext_eval.ui.rewrite_widgets import original_and_rewrite, rewrite_diff
from structext_core.studio import accounts, sandbox
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_choice, light_form, widgets
from structext_core.ui.frame import ensure_frame

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("campaign_admin")
db = ui.get_db()


# ---------------------------------------------------------------- callbacks

def on_review(item_id: int, decision: str) -> None:
    comment = st.session_state.get(f"ca_comment_{item_id}", "")
    try:
        campaign.review(ui.get_db(), item_id, user, decision, comment)
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    ui.flash("success", "Approved." if decision == "approved" else "Returned to the annotator with your comment.")


def on_resolve(flag_id: int) -> None:
    try:
        campaign.resolve_flag(ui.get_db(), flag_id, user, st.session_state.get(f"ca_resolution_{flag_id}", ""))
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    ui.flash("success", f"Flag {flag_id} resolved.")


def on_add_scenarios() -> None:
    try:
        added, present = campaign.add_scenarios(ui.get_db(), st.session_state.get("ca_new_scenarios", ""), user)
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    st.session_state["ca_new_scenarios"] = ""
    note = f" ({len(present)} were in the catalogue already)" if present else ""
    ui.flash("success", f"Added {plural(len(added), 'scenario')}{note}.")


# ---------------------------------------------------------------- tabs

def setup_tab() -> None:
    st.markdown("Draw samples from **Test**, stratified by task and depth (the paper's Real-Test: 928 = 29 tasks "
                "× 2 depths × 16), give each its own scenario and deal them evenly to the annotators.")
    labels = annotator_labels()
    if not labels:
        st.info("There are no annotator accounts yet: create them on the **Accounts** page (Admin) first.")
    # The same fields, labels, order and defaults as the study set-up form: name, number, seed of
    # the draw, annotators (enabled annotator accounts by name, nobody chosen beforehand).
    sent = light_form.form("ca_setup", [
        light_form.Text("name", "Campaign name", placeholder="e.g. Real-Test 2026"),
        (light_form.Number("n", "Number of samples", 928, min_value=1, max_value=suites.SUITES["test"].size,
                           help="928 is the paper's size; any number is drawn as evenly as possible."),
         light_form.Number("seed", "Seed of the draw", 0, min_value=0, max_value=2**31 - 1)),
        light_form.Choices("annotators", "Annotators", labels,
                           help="The samples are dealt evenly to the annotators chosen here."),
    ], submit="Create campaign")
    if sent is None:
        return
    name, n, seed, chosen = sent["name"], sent["n"], sent["seed"], sent["annotators"]
    with st.spinner("Loading Test and drawing samples…"):
        try:
            samples = suites.load_or_generate("test")
            cid = campaign.create_campaign(db, name, samples, int(n), chosen, user, seed=int(seed))
        except campaign.CampaignError as error:
            st.error(str(error))
            return
    st.session_state["ca_select_next"] = cid  # the selector is drawn already: select it on the rerun
    st.session_state["ca_section"] = "Review queue"  # and open its queue
    light_form.clear("ca_setup")
    ui.flash("success", f"Campaign {name.strip()!r} created with {plural(int(n), 'item')}.")
    st.rerun()


def annotator_labels() -> dict[int, str]:
    """Enabled annotator accounts, id to name, ordered by name (as on the study set-up form)."""
    return {p["id"]: p["username"] for p in accounts.list_users(db, role="annotator")}


def manage_tab(chosen: dict) -> None:
    campaign_id, name = chosen["id"], chosen["name"]
    if chosen["archived_at"] is not None:
        st.info("This campaign is archived: hidden from its annotators and from the campaign list, and nothing in "
                "it can be changed. Its items and rewrites are kept, and it can still be exported.",
                icon=":material/inventory_2:")
    rename_col, archive_col = st.columns(2, gap="large")
    with rename_col, st.form(f"ca_rename_{campaign_id}"):
        new_name = st.text_input("New name", value=name, key=f"ca_rename_name_{campaign_id}")
        st.caption("The next export goes to the new name's folder and suite file "
                   f"(`{campaign.SUITE_NAME}-<name>.jsonl`); files exported before keep their names.")
        if st.form_submit_button("Rename"):
            try:
                stored = campaign.rename_campaign(db, campaign_id, new_name, user)
            except campaign.CampaignError as error:
                st.error(f"The campaign was not renamed. {error}")
            else:
                reselect(campaign_id, f"Campaign {name!r} is now called {stored!r}.")
    with archive_col:
        archived = chosen["archived_at"] is not None
        st.caption("Archived: hidden from annotators and from the campaign list (unless **Show archived "
                   "campaigns** is on); nothing can be changed in it. Nothing was deleted." if archived else
                   "Archiving hides the campaign from its annotators and from the campaign list and stops all "
                   "changes (drafts, submissions, reviews, flags). It is kept whole and can still be exported.")
        if st.button("Bring back from the archive" if archived else "Archive the campaign",
                     key=f"ca_archive_{campaign_id}"):
            try:
                campaign.set_campaign_archived(db, campaign_id, not archived, user)
            except campaign.CampaignError as error:
                st.error(str(error))
            else:
                reselect(campaign_id, f"Campaign {name!r} is back from the archive." if archived else
                         f"Campaign {name!r} is archived. Turn on Show archived campaigns to see it.")
    labels = annotator_labels()
    with st.form(f"ca_clone_{campaign_id}"):
        st.markdown("**Copy the campaign**")
        st.caption("A new campaign with the same samples, scenarios and queue order, every item to do: no "
                   "drafts, submissions or reviews are copied. The items are dealt evenly to the annotators "
                   "chosen here (every item needs one).")
        copy_name = st.text_input("Name of the copy", key=f"ca_clone_name_{campaign_id}",
                                  placeholder=f"e.g. {name} (2)")
        copy_people = st.multiselect("Annotators of the copy", list(labels), format_func=labels.get,
                                     key=f"ca_clone_annotators_{campaign_id}")
        if st.form_submit_button("Create the copy"):
            try:
                copy_id = campaign.clone_campaign(db, campaign_id, copy_name, copy_people, user)
            except campaign.CampaignError as error:
                st.error(f"No copy was made. {error}")
            else:
                reselect(copy_id, f"Campaign {copy_name.strip()!r} created as a copy of {name!r} for "
                                  f"{plural(len(copy_people), 'annotator')}.")


def reselect(campaign_id: int, message: str) -> None:
    """Say what was done and put ``campaign_id`` in the chooser on the rerun."""
    ui.flash("success", message)
    st.session_state["ca_select_next"] = campaign_id
    st.rerun()


def review_tab(campaign_id: int) -> None:
    queue = campaign.list_items(db, campaign_id, status="submitted")
    if not queue:
        st.info("Nothing waits for review.", icon=":material/done_all:")
        return
    by_id = {i["id"]: i for i in queue}
    item_id = st.selectbox("Submitted rewrite", list(by_id), key="ca_review_item",
                           format_func=lambda i: (f"#{by_id[i]['position']} · {DISPLAY_NAMES[by_id[i]['language']]} · "
                                                  f"task {by_id[i]['task_id']} · {by_id[i]['scenario']} · by "
                                                  f"{by_id[i]['annotator']}"))
    item = campaign.get_item(db, item_id)
    submission = campaign.latest_submission(db, item_id)
    report = campaign.check_submission(item, submission)
    if isinstance(report, sandbox.Unchecked):
        st.error(report.message, icon=":material/report:")
    elif report.ok:
        st.success("Both checks pass.", icon=":material/check_circle:")
    else:
        st.error("Checks:\n" + "\n".join(f"- {p}" for p in report.problems), icon=":material/error:")
    warnings = [] if isinstance(report, sandbox.Unchecked) else report.warnings
    if warnings:  # the checks are deterministic: the very warnings the annotator saw when submitting
        st.warning("The annotator saw these warnings when submitting:\n" + "\n".join(f"- {w}" for w in warnings),
                   icon=":material/info:")
    if submission["exception_reason"]:
        st.warning(markdown_text(f"Structure exception accepted by {submission['submitted_by_name']}: "
                                 f"{submission['exception_reason']}"), icon=":material/gavel:")
    st.caption(f"Scenario: **{markdown_text(item['scenario'])}** · source {markdown_text(item['sample_id'])}")
    changed, both = st.tabs(["What changed", "Side by side"])
    with changed:
        rewrite_diff(campaign.submission_diff(item, submission))
    with both:
        original_and_rewrite(item["sample"], campaign.submitted_texts(submission))
    st.text_area("Comment for the annotator (needed to send it back)", key=f"ca_comment_{item_id}", height=80)
    a, b = st.columns(2)
    a.button("Approve", key=f"ca_approve_{item_id}", type="primary", icon=":material/verified:",
             on_click=on_review, args=(item_id, "approved"))
    b.button("Send back", key=f"ca_return_{item_id}", icon=":material/undo:", on_click=on_review,
             args=(item_id, "returned"))


def flags_tab(campaign_id: int) -> None:
    flags = campaign.list_flags(db, campaign_id)
    if not flags:
        st.info("No source sample has been flagged.", icon=":material/flag:")
        return
    st.dataframe(pd.DataFrame([{"flag": f["id"], "#": f["position"], "sample": f["sample_id"],
                                "by": f["flagged_by"], "reason": f["reason"],
                                "resolution": f["resolution"] or "open"} for f in flags]),
                 hide_index=True, width="stretch")
    open_flags = campaign.list_flags(db, campaign_id, open_only=True)
    if not open_flags:
        return
    by_id = {f["id"]: f for f in open_flags}
    flag_id = st.selectbox("Open flag", list(by_id), key="ca_flag",
                           format_func=lambda i: f"flag {i} · {by_id[i]['sample_id']} · {by_id[i]['reason'][:60]}")
    st.text_input("What was done about it", key=f"ca_resolution_{flag_id}")
    st.button("Resolve", key=f"ca_resolve_{flag_id}", on_click=on_resolve, args=(flag_id,))


WRITE_LABEL = "Write approved rewrites to the server folder"


def export_tab(campaign_id: int, name: str) -> None:
    rows = campaign.progress(db, campaign_id)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    approved = sum(row["approved"] for row in rows)
    st.download_button("Download approved rewrites (real-test.jsonl)",
                       # nothing to build while none is approved (the button is disabled then)
                       ui.built_on_click(lambda db: campaign.export_jsonl(db, campaign_id)) if approved else b"",
                       file_name="real-test.jsonl", mime="application/jsonl",
                       icon=":material/download:", key="ca_download", on_click="ignore", disabled=not approved,
                       help="To your computer: the approved rewrites, audited, as the server folder's "
                            "real-test.jsonl. Nothing is written on the server.")
    if not approved:
        st.caption("No approved rewrite yet: approve some on the Review queue first.")
    st.markdown("**On the server**, for the command line and the other pages: `real-test.jsonl` and the authors' "
                "layout (`official/`) in this folder, both audited, and the suite in the suites folder "
                f"(`{suites.data_dir()}`).")
    directory = st.text_input("Export folder (on the server)",
                              value=str(campaign.default_export_dir(name, campaign_id)),
                              key=f"ca_export_dir_{campaign_id}")
    if not st.button(WRITE_LABEL, key="ca_export", type="primary", icon=":material/save:"):
        return
    try:
        result = campaign.export_campaign(db, campaign_id, directory, suites_dir=suites.data_dir())
    except (campaign.CampaignError, OSError) as error:
        st.error(f"Not exported: {error}")
        return
    audited = campaign.export_audit(result)
    st.success(f"Exported {plural(result.count, 'sample')} to {result.jsonl} and {result.layout} on the server, and "
               f"added the suite {result.suite.name} to the suites folder (prompts, run, score and the Results page "
               "use it).")
    st.code("\n".join(audited), language="text")


def scenarios_tab() -> None:
    catalogue = campaign.scenario_catalogue(db)
    st.markdown(f"The catalogue holds **{len(catalogue)}** scenarios ({len(campaign.shipped_scenarios())} shipped "
                "with the app); each campaign gives every sample a different one.")
    st.text_area("Add scenarios, one a line", key="ca_new_scenarios", height=100,
                 placeholder="bee keeping: hive inspections")
    st.button("Add to the catalogue", key="ca_add_scenarios", on_click=on_add_scenarios)
    # drawn only while open (opening it reruns the page): a grid costs the page about 0.6 s in the browser
    box = widgets.lazy_section(f"Browse the catalogue ({len(catalogue):,})", key="ca_catalogue_open")
    if box:
        box.dataframe(pd.DataFrame({"scenario": catalogue}), hide_index=True, width="stretch", height=300)


# ---------------------------------------------------------------- the page

st.title("Rewrite campaigns")
ui.show_flash()
every_campaign = campaign.list_campaigns(db)
show_archived = False
if any(c["archived_at"] is not None for c in every_campaign):
    show_archived = st.toggle("Show archived campaigns", key="ca_show_archived",
                              help="Archived campaigns are hidden from their annotators and from this list; "
                                   "they are kept whole.")
campaigns = [c for c in every_campaign if show_archived or c["archived_at"] is None]
campaign_id = plain_name = chosen_campaign = None
if campaigns:
    names = {c["id"]: f"{c['name']} ({c['approved']}/{c['n_items']} approved)"
                      + (" · archived" if c["archived_at"] is not None else "") for c in campaigns}
    if "ca_select_next" in st.session_state:
        st.session_state["ca_campaign"] = st.session_state.pop("ca_select_next")
    campaign_id = light_choice.choose("Campaign", list(names), format_func=names.get, key="ca_campaign",
                                      help="The campaign the review queue, flags and export tabs show.")
    chosen_campaign = next(c for c in campaigns if c["id"] == campaign_id)
    plain_name = chosen_campaign["name"]
# Only the open tab is drawn (a click on another runs the page again): each tab's widgets cost the browser
# its code and drawing, and the set-up's first view was all six tabs' (issue 46).
SECTIONS = {"Set up": setup_tab, "Review queue": review_tab, "Flags": flags_tab, "Progress & export": export_tab,
            "Manage": manage_tab, "Scenarios": scenarios_tab}
show = SECTIONS[light_choice.tabs(list(SECTIONS), key="ca_section", default="Review queue" if campaigns else "Set up")]
if show in (setup_tab, scenarios_tab):
    show()
elif campaign_id is None:
    st.info("Every campaign is archived: turn on **Show archived campaigns** to see them."
            if every_campaign else "Create a campaign first.", icon=":material/info:")
elif show is export_tab:
    export_tab(campaign_id, plain_name)
elif show is manage_tab:
    manage_tab(chosen_campaign)
else:
    show(campaign_id)
