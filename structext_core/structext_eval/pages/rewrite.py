"""Real-Test rewriting: the annotator's queue and workspace.

UI only: tokens, mapping, the live checks and every write live in
``structext_core.structext_eval.rewrite`` and ``structext_core.structext_eval.campaign``.
"""

import datetime as dt

import pandas as pd
import streamlit as st

from structext_core import ui
from structext_core.structext_eval import campaign, rewrite
from structext_core.structext_eval.formats import DISPLAY_NAMES
from structext_core.structext_eval.ui.rewrite_widgets import original_and_rewrite, original_panel
from structext_core.studio import data_scope, sandbox
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui.frame import ensure_frame

STATUS_LABELS = {"todo": "to do", "draft": "draft", "submitted": "submitted", "returned": "returned",
                 "approved": "approved"}

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("rewrite")
oversees = campaign.oversees(user)  # sees every annotator's items, may accept a structure exception
db = ui.get_db()


# ---------------------------------------------------------------- session keys of one item

def k(name: str, item_id: int) -> str:
    return f"rw_{name}_{item_id}"


def load_item_state(item_id: int) -> None:
    """Fill the workspace from the saved draft (or the original) the first time an item is shown."""
    if k("ref", item_id) in st.session_state and k("base", item_id) in st.session_state:
        return
    texts, mapping = campaign.working_copy(db, item_id)
    set_texts(item_id, texts)
    st.session_state[k("base", item_id)] = dict(mapping)
    st.session_state.setdefault(k("ver", item_id), 0)


def current_texts(item_id: int) -> rewrite.Texts:
    return rewrite.Texts(st.session_state[k("ref", item_id)], st.session_state[k("q", item_id)],
                         st.session_state[k("a", item_id)])


def editor_key(item_id: int) -> str:
    return f"rw_editor_{item_id}_{st.session_state.get(k('ver', item_id), 0)}"


def current_mapping(item_id: int, tokens: list[rewrite.Token]) -> dict[str, str]:
    """The saved mapping with the table's unsaved cell edits on top."""
    edits = st.session_state.get(editor_key(item_id)) or {}
    return campaign.table_mapping(st.session_state.get(k("base", item_id), {}), tokens, edits.get("edited_rows"))


def set_texts(item_id: int, texts: rewrite.Texts) -> None:
    st.session_state[k("ref", item_id)] = texts.reference
    st.session_state[k("q", item_id)] = texts.question
    st.session_state[k("a", item_id)] = texts.answer


def new_table(item_id: int) -> None:
    """Draw the mapping table afresh (its unsaved edits dropped) on the next run."""
    st.session_state[k("ver", item_id)] = st.session_state.get(k("ver", item_id), 0) + 1


def done(message: str) -> None:
    """A success, said once, as a toast: it shows wherever the page is scrolled (a box at the page
    top as well said every confirmation twice)."""
    ui.flash("toast", message)


# ---------------------------------------------------------------- callbacks (run before the page is drawn)

def save(item_id: int, tokens: list[rewrite.Token]) -> None:
    mapping = current_mapping(item_id, tokens)
    try:
        saved = campaign.save_draft(ui.get_db(), item_id, user, current_texts(item_id), mapping)
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    st.session_state[k("saved", item_id)] = saved


def on_apply_mapping(item_id: int, sample: dict, tokens: list[rewrite.Token]) -> None:
    mapping = current_mapping(item_id, tokens)
    applied_before = st.session_state.get(k("applied", item_id), st.session_state.get(k("base", item_id), {}))
    try:
        new = campaign.mapped_texts(sample, current_texts(item_id), mapping, applied_before,
                                    replace_free_edits=bool(st.session_state.get(k("confirm", item_id))))
    except campaign.FreeEditsAtRisk as warning:
        ui.flash("warning", str(warning))
        return
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    set_texts(item_id, new)
    st.session_state[k("applied", item_id)] = mapping
    st.session_state[k("confirm", item_id)] = False
    save(item_id, tokens)
    done(f"Applied {plural(len(mapping), 'replacement')} to the reference, the question and the answer.")


def on_paste(item_id: int, tokens: list[rewrite.Token]) -> None:
    try:
        mapping, pasted = campaign.paste_mapping(st.session_state.get(k("paste", item_id), ""), tokens,
                                                 current_mapping(item_id, tokens))
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    st.session_state[k("base", item_id)] = mapping
    new_table(item_id)
    st.session_state[k("paste", item_id)] = ""
    save(item_id, tokens)
    done(f"Added {plural(pasted, 'row')} to the mapping table. Press 'Apply mapping' to use them.")


def on_reset(item_id: int) -> None:
    try:
        campaign.reset_draft(ui.get_db(), item_id, user)
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    for name in ("ref", "q", "a", "base", "applied", "saved"):
        st.session_state.pop(k(name, item_id), None)
    new_table(item_id)
    done("Started again from the original.")


def on_submit(item_id: int, tokens: list[rewrite.Token], position: int) -> None:
    reason = st.session_state.get(k("exception", item_id), "") if oversees else None
    try:
        campaign.submit(ui.get_db(), item_id, user, current_texts(item_id), current_mapping(item_id, tokens),
                        exception_reason=reason)
    except campaign.CampaignError as error:  # refused: said beside the button, where the user looks
        st.session_state[k("refused", item_id)] = str(error)
        return
    done(f"Submitted item #{position} for review.")
    items = campaign.queue(ui.get_db(), st.session_state["rw_campaign"], user, st.session_state.get("rw_all", False))
    upcoming = campaign.next_to_do(items, item_id)
    if upcoming is not None:
        st.session_state["rw_item"] = upcoming


def on_flag(item_id: int) -> None:
    try:
        campaign.flag_sample(ui.get_db(), item_id, user, st.session_state.get(k("flag", item_id), ""))
    except campaign.CampaignError as error:
        ui.flash("error", str(error))
        return
    st.session_state[k("flag", item_id)] = ""
    done("Thank you: the source sample is flagged for the admin.")


# ---------------------------------------------------------------- pieces of the page

def show_guidelines(expanded: bool) -> None:
    with st.expander("Guidelines", expanded=expanded, icon=":material/menu_book:"):
        st.markdown("\n".join(f"- {g}" for g in rewrite.GUIDELINES))
        st.caption("Work in two ways that combine: map every abstract token to a real-world value (the table "
                   "applies each one everywhere at once), then polish the result by hand. The checks run on "
                   "every change; submitting needs both to pass.")


def show_mapping(item_id: int, sample: dict, tokens: list[rewrite.Token]) -> None:
    st.markdown("**1 · Map values**")
    base = st.session_state.get(k("base", item_id), {})
    table = pd.DataFrame({
        "token": [t.text for t in tokens],
        "role": [", ".join(t.kinds) for t in tokens],
        "uses": [t.count for t in tokens],
        "replacement": [base.get(t.text, "") for t in tokens],
    })
    st.data_editor(
        table, key=editor_key(item_id), hide_index=True, width="stretch", num_rows="fixed",
        height=min(38 + 35 * len(tokens), 420), disabled=["token", "role", "uses"],
        column_config={
            "token": st.column_config.TextColumn("Abstract token", help="As it stands in the sample."),
            "role": st.column_config.TextColumn("Role", help="Where the token stands: id, key, value, cell, "
                                                            "heading, word, file, number, question ..."),
            "uses": st.column_config.NumberColumn("Uses", help="How often the reference has it."),
            "replacement": st.column_config.TextColumn("Real-world value", help="Leave empty to keep the token."),
        },
        on_change=save, args=(item_id, tokens),
    )
    with st.expander("Paste mapping lines", icon=":material/content_paste:", key=k("paste_box", item_id)):
        st.text_area("One `token -> real-world value` a line", key=k("paste", item_id), height=120,
                     placeholder="k -> Stadium\nZ -> City\nw -> Eugene")
        st.button("Add to the table", key=k("paste_btn", item_id), on_click=on_paste, args=(item_id, tokens))
    mapping = current_mapping(item_id, tokens)
    problems = rewrite.validate_mapping(sample, mapping)
    if problems:
        st.error("The mapping cannot be applied yet:\n" + "\n".join(f"- {p}" for p in problems))
    left, right = st.columns([1, 1])
    left.button("Apply mapping", key=k("apply", item_id), type="primary", icon=":material/sync_alt:",
                on_click=on_apply_mapping, args=(item_id, sample, tokens), disabled=bool(problems),
                help="Replaces each token everywhere in the reference, the question and the answer.")
    right.checkbox("Replace my free edits", key=k("confirm", item_id),
                   help="Applying rebuilds the result from the original; free edits are lost.")


def show_editor(item_id: int, sample: dict, tokens: list[rewrite.Token]) -> None:
    st.markdown("**2 · Edit the result**")
    # Tall enough for the whole reference (long markup lines wrap), never taller than a screen.
    rows = sum(1 + len(line) // 70 for line in st.session_state[k("ref", item_id)].split("\n"))
    st.text_area("Reference", key=k("ref", item_id), height=min(max(120, 24 * rows + 20), 560),
                 on_change=save, args=(item_id, tokens))
    st.text_area("Question", key=k("q", item_id), height=80, on_change=save, args=(item_id, tokens),
                 help="Keep the sentence; change only its values.")
    # As tall as its text, whatever its lines: a computed height cut the last one.
    st.text_area("Answer", key=k("a", item_id), height="content", on_change=save, args=(item_id, tokens))
    saved = st.session_state.get(k("saved", item_id))
    if saved:
        st.caption(f"Draft saved at {dt.datetime.fromtimestamp(saved):%H:%M:%S}")
    st.button("Start again from the original", key=k("reset", item_id), icon=":material/restart_alt:",
              on_click=on_reset, args=(item_id,))


def show_checks(report: rewrite.CheckReport | sandbox.Unchecked | None) -> None:
    """The live checks' results; None for an untouched original, which would pass its own checks."""
    st.markdown("**Checks**")
    if report is None:
        st.info(f"Not rewritten yet: {campaign.NOT_REWRITTEN} The checks run once it differs.",
                icon=":material/edit_note:")
        return
    if isinstance(report, sandbox.Unchecked):  # the text stays editable: fix it and the checks run again
        fix = ": shorten or simplify the reference, or start again from the original" if report.too_big else ""
        st.error(f"{report.message} The text stays editable{fix}.", icon=":material/report:")
        return
    if report.structure_ok:
        st.success("Structure: reads as the original does; same skeleton.", icon=":material/check_circle:")
    else:
        st.error("Structure:\n" + "\n".join(f"- {p}" for p in report.parse + report.structure),
                 icon=":material/error:")
    if not report.answer_checked:  # withheld from this person, or the structure fails first
        st.info(report.answer_note, icon=":material/lock:" if report.structure_ok else ":material/info:")
    elif report.answer_ok:
        st.success("Answer: the solver derives the rewritten answer from the rewritten reference.",
                   icon=":material/check_circle:")
    else:
        st.error("Answer:\n" + "\n".join(f"- {p}" for p in report.answer), icon=":material/error:")
    for warning in report.warnings:
        st.warning(warning, icon=":material/info:")


def show_actions(item: dict, report: rewrite.CheckReport | sandbox.Unchecked | None,
                 tokens: list[rewrite.Token]) -> None:
    item_id = item["id"]
    if campaign.may_accept_exception(user, report):
        st.text_input("Exception reason (admin only)", key=k("exception", item_id),
                      help="Accept this rewrite although the structure check fails; say why.")
    untouched = report is None
    st.button("Submit for review", key=k("submit", item_id), type="primary", icon=":material/send:",
              on_click=on_submit, args=(item_id, tokens, item["position"]), disabled=untouched,
              help="Nothing to submit yet: the reference is still the abstract original." if untouched else None)
    refused = st.session_state.pop(k("refused", item_id), None)
    if refused:
        st.error(refused, icon=":material/block:")
    elif untouched:
        st.caption("Submitting opens once the reference is rewritten: it is still the abstract original.")
    elif not isinstance(report, rewrite.CheckReport) or not report.ok:
        st.caption("Submitting is refused until both checks pass.")
    elif not report.answer_checked:
        st.caption("Submitting needs the structure check to pass; the answer is checked at review.")


def show_flag(item_id: int) -> None:
    with st.expander("Flag the source sample as wrong", icon=":material/flag:"):
        st.text_area("What is wrong with the original sample?", key=k("flag", item_id), height=80)
        st.button("Flag for the admin", key=k("flag_btn", item_id), on_click=on_flag, args=(item_id,))


def show_read_only(item: dict) -> None:
    submission = campaign.latest_submission(db, item["id"])
    review = campaign.latest_review(db, item["id"])
    if item["status"] == "approved":
        st.success(f"Approved by {review['reviewer'] if review else 'an admin'}.", icon=":material/verified:")
    else:
        st.info("Submitted: waiting for review. You can open it again if it is returned.", icon=":material/hourglass_top:")
    original_and_rewrite(item["sample"], campaign.submitted_texts(submission) if submission else None,
                         "Your rewrite")


def workspace(item: dict) -> None:
    sample = item["sample"]
    item_id = item["id"]
    st.subheader(markdown_text(f"#{item['position']} · {item['scenario']}"))
    st.caption(f"{DISPLAY_NAMES[item['language']]} · {sample['task']} (task {item['task_id']}) · depth "
               f"{item['depth']} · source {item['sample_id']} · {STATUS_LABELS[item['status']]}"
               + (f" · assigned to {item['annotator']}" if item["annotator_id"] != user["id"] else ""))
    sealed = data_scope.rewrite_answer_refusal(db, user, sample)
    if sealed:  # the sample is also a question this annotator may still have to answer
        st.warning(markdown_text(sealed), icon=":material/lock:")
        return
    if item["status"] not in campaign.EDITABLE:
        show_read_only(item)
        return
    review = campaign.latest_review(db, item_id)
    if item["status"] == "returned" and review:
        st.warning(markdown_text(f"Returned by {review['reviewer']}: {review['comment']}"), icon=":material/undo:")
    show_guidelines(expanded=item["status"] == "todo")
    load_item_state(item_id)
    tokens = rewrite.extract_tokens(sample)
    top_left, top_right = st.columns(2, gap="large")
    with top_left:
        original_panel(sample)
    with top_right:
        show_mapping(item_id, sample, tokens)
    bottom_left, bottom_right = st.columns(2, gap="large")
    with bottom_left:
        show_editor(item_id, sample, tokens)
    with bottom_right:
        texts = current_texts(item_id)
        report = (None if campaign.not_rewritten(sample, texts)  # nothing to check: the original passes its own
                  else campaign.live_check(db, item, user, texts))
        show_checks(report)
        show_actions(item, report, tokens)
        show_flag(item_id)


# ---------------------------------------------------------------- the page

st.title("Real-Test rewriting")
st.caption("Rewrite abstract samples into real-world scenarios, keeping the structure and the answer.")
ui.show_flash()

campaigns = campaign.campaigns_for(db, user)
if not campaigns:
    st.info("No rewrite campaign has items for you yet. An admin sets campaigns up on the "
            "'Rewrite campaigns' page.", icon=":material/inbox:")
    st.stop()

names = {c["id"]: c["name"] for c in campaigns}
campaign_id = st.selectbox("Campaign", list(names), format_func=names.get, key="rw_campaign")
everyone = st.toggle("Show every annotator's items", key="rw_all") if oversees else False
items = campaign.queue(db, campaign_id, user, everyone)
if not items:
    st.info("You have no items in this campaign." + (" Turn on 'Show every annotator's items' to see all."
                                                     if oversees else ""), icon=":material/inbox:")
    st.stop()

finished = campaign.done_count(items)
st.progress(finished / len(items), text=f"{finished} of {len(items)} submitted or approved")
with st.expander(f"Queue ({plural(len(items), 'item')})", icon=":material/list:"):
    st.dataframe(pd.DataFrame([{"#": i["position"], "format": DISPLAY_NAMES[i["language"]], "task": i["task_id"],
                                "depth": i["depth"], "scenario": i["scenario"], "annotator": i["annotator"],
                                "status": STATUS_LABELS[i["status"]]} for i in items]),
                 hide_index=True, width="stretch")

by_id = {i["id"]: i for i in items}
if st.session_state.get("rw_item") not in by_id:
    st.session_state["rw_item"] = campaign.first_to_do(items)
item_id = st.selectbox(
    "Item", list(by_id), key="rw_item",
    format_func=lambda i: (f"#{by_id[i]['position']} · {DISPLAY_NAMES[by_id[i]['language']]} · task "
                           f"{by_id[i]['task_id']} · depth {by_id[i]['depth']} · {by_id[i]['scenario']} · "
                           f"{STATUS_LABELS[by_id[i]['status']]}"))
st.divider()
workspace(campaign.get_item(db, item_id))
