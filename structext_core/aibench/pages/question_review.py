"""AIBench question review: one paper at a time, its figure, method text, logic graph and questions.

UI only; the campaign, the checks, the clock and every write live in
``structext_core.aibench.question_review``. Every decision is saved as it is made (a draft).

The questions are a fragment: a decision redraws them, not the figure, the logic graph or the
clock. The next question without a decision has buttons the keys A (accept), E (edit) and R
(remove) click (``structext_core.ui.option_keys``, as on the human baseline); one button accepts every
question still without a decision. The figure's column stays beside the questions as the page
scrolls.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from structext_core import ui
from structext_core.aibench import question_review as qr
from structext_core.aibench.model import LETTERS, LEVELS, Question
from structext_core.studio import durations
from structext_core.studio.clock import ActivityReport, clock_settings
from structext_core.studio.study.store import StudyError
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import activity, option_keys, widgets
from structext_core.ui.frame import ensure_frame

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page(qr.REVIEW_PAGE)
st.title("AIBench question review")
ui.show_flash()
db = ui.get_db()
try:
    settings = clock_settings()
except StudyError as error:
    st.error(f"The review clock is misconfigured on the server: {error} Tell the review lead.")
    st.stop()

ACTION_LABELS = {"accept": "Accept", "edit": "Edit", "remove": "Remove"}
#: The keys that decide the next question without a decision (each clicks that question's button).
DECISION_KEYS = {"accept": "A", "edit": "E", "remove": "R"}
RERUN_PAGE = "qr_rerun_page"  # set by an action in the questions fragment that changes the whole page
st.session_state.pop(RERUN_PAGE, None)  # this is a run of the whole page already
# The figure's column sticks beside the questions while the page scrolls (and scrolls by itself
# when taller than the window); where a browser ignores it, the page simply scrolls as before.
FIGURE_CSS = """<style>
div[data-testid="stColumn"]:has(.st-key-qr_figure) {
  position: sticky; top: 3.75rem; align-self: flex-start; max-height: calc(100vh - 4.5rem); overflow-y: auto;
}
</style>"""


def _keys(item_id: int, qid: str) -> dict[str, str]:
    base = f"qr_{item_id}_{qid}"
    return {"action": f"{base}_action", "text": f"{base}_text", "level": f"{base}_level", "answer": f"{base}_answer",
            "reason": f"{base}_reason", **{f"opt{k}": f"{base}_opt{k}" for k in range(len(LETTERS))}}


def _typed_question(keys: dict[str, str], qid: str) -> Question:
    options = tuple(st.session_state.get(keys[f"opt{k}"], "").strip() for k in range(len(LETTERS)))
    while options and not options[-1]:
        options = options[:-1]
    return Question(qid, int(st.session_state[keys["level"]]), st.session_state.get(keys["text"], ""), options,
                    st.session_state.get(keys["answer"], "A"))


def _act(function, *args, **kwargs) -> None:
    try:
        function(ui.get_db(), *args, **kwargs)
    except qr.ReviewError as error:
        ui.flash("error", str(error))


def on_decision(item_id: int, qid: str, original: Question | None) -> None:
    keys = _keys(item_id, qid)
    action = st.session_state[keys["action"]] if original is not None else "add"
    question = None
    if action in ("edit", "add"):
        question = _typed_question(keys, qid) if keys["text"] in st.session_state else original
    _act(qr.save_decision, item_id, user, qid, action, question, st.session_state.get(keys["reason"], ""),
         settings=settings)


def on_add(item_id: int) -> None:
    keys = _keys(item_id, "new")
    try:
        question = _typed_question(keys, "new")
    except (TypeError, ValueError):
        ui.flash("error", "Choose a level for the new question.")
        return
    if not question.question.strip():
        ui.flash("error", "Write the new question's text first.")
        return
    try:
        qid = qr.add_question(ui.get_db(), item_id, user, question, st.session_state.get(keys["reason"], ""),
                              settings=settings)
    except qr.ReviewError as error:
        ui.flash("error", str(error))
        return
    for key in keys.values():
        st.session_state.pop(key, None)
    ui.flash("success", f"Question {qid} added (a draft until you submit the paper).")


def on_delete_added(item_id: int, qid: str) -> None:
    _act(qr.delete_added, item_id, user, qid)


def on_quick(item_id: int, qid: str, action: str, original: Question) -> None:
    """A decision from the next question's buttons (or their keys): what choosing it in its card does."""
    try:
        qr.save_decision(ui.get_db(), item_id, user, qid, action, original if action == "edit" else None, "",
                         settings=settings)
    except qr.ReviewError as error:
        ui.flash("error", str(error))
    else:
        st.session_state[_keys(item_id, qid)["action"]] = action  # the card shows the choice


def on_accept_remaining(item_id: int) -> None:
    try:
        accepted = qr.accept_remaining(ui.get_db(), item_id, user, settings=settings)
    except qr.ReviewError as error:
        ui.flash("error", f"Nothing was accepted. {error}")
        return
    for qid, decision in qr.decisions(ui.get_db(), item_id).items():
        if decision.action in ACTION_LABELS:  # the cards' choices follow what is saved
            st.session_state[_keys(item_id, qid)["action"]] = decision.action
    ui.flash("success", f"Accepted {plural(accepted, 'question')} that had no decision; the decisions you had "
             "made are unchanged." if accepted else "Every question has a decision already: nothing to accept.")


def on_submit(item_id: int) -> None:
    try:
        qr.submit(ui.get_db(), item_id, user, settings=settings)
    except qr.ReviewError as error:
        ui.flash("error", str(error))
    else:
        ui.flash("success", "Submitted: the review lead will look at it. The next paper is open.")
        st.session_state.pop("qr_item", None)
        st.session_state[RERUN_PAGE] = True


def on_pause(item_id: int) -> None:
    _act(qr.pause, item_id, user, settings=settings)


def on_resume(item_id: int) -> None:
    _act(qr.resume, item_id, user)


def on_flag(item_id: int) -> None:
    qid = st.session_state.get(f"qr_flag_q_{item_id}") or None
    try:
        qr.flag(ui.get_db(), item_id, user, st.session_state.get(f"qr_flag_reason_{item_id}", ""),
                None if qid == "(the whole paper)" else qid)
    except qr.ReviewError as error:
        ui.flash("error", f"The flag was not sent. {error}")
    else:
        st.session_state[f"qr_flag_reason_{item_id}"] = ""
        ui.flash("success", "Flag sent to the review lead.")


_activity = activity.component()
_option_keys = option_keys.component()


def _ignore() -> None:
    """The activity component's state is read in its fragment, not in a callback."""


@ui.fragment
def activity_watch(item_id: int) -> None:
    """Input anywhere on the page and the tab's visibility: they keep the idle pause away, and a
    hidden tab's time counts as away."""
    result = _activity(key=f"qr_activity_{item_id}", default={"report": None}, on_report_change=_ignore,
                       data={"assignment": item_id, "label": "", "text_ms": 2500, "activity_ms": 10_000,
                             "settle_ms": 400})
    report = ActivityReport.parse(result.report, item_id)
    if report is None or report.seq == st.session_state.get("qr_report_seq"):
        return
    st.session_state["qr_report_seq"] = report.seq
    st.session_state["qr_visible"] = report.visible
    state = qr.record_activity(ui.get_db(), item_id, user, visible=report.visible, input_age=report.input_age,
                               settings=settings)
    if state["is_paused"]:
        st.rerun(scope="app")


@ui.fragment(run_every=settings.heartbeat_seconds)
def clock(item_id: int) -> None:
    """The paper's time; each run is a heartbeat. An idle pause reruns the page to its pause screen."""
    state = qr.heartbeat(ui.get_db(), item_id, user, settings=settings,
                         visible=st.session_state.get("qr_visible", True))
    if state["is_paused"]:
        st.rerun(scope="app")
    widgets.figures([("Time on this paper", durations.clock(state["active"]),
                      "Counts while this paper is on screen; stops when the tab is closed or hidden, and while "
                      f"paused. After {durations.words(settings.idle_pause_seconds)} without input it pauses by itself.")])


def question_editor(item_id: int, row: qr.Row) -> None:
    keys = _keys(item_id, row.question_id)
    q = row.current
    if keys["text"] not in st.session_state:
        st.session_state[keys["text"]] = q.question
        st.session_state[keys["level"]] = q.level
        st.session_state[keys["answer"]] = q.answer
        for k in range(len(LETTERS)):
            st.session_state[keys[f"opt{k}"]] = q.options[k] if k < len(q.options) else ""
        st.session_state[keys["reason"]] = row.reason
    args = (item_id, row.question_id, row.original)
    st.text_area("Question", key=keys["text"], on_change=on_decision, args=args, height=68)
    cols = st.columns(len(LETTERS))
    for k, col in enumerate(cols):
        col.text_input(f"Option {LETTERS[k]}", key=keys[f"opt{k}"], on_change=on_decision, args=args)
    left, right = st.columns(2)
    left.selectbox("Answer", list(LETTERS), key=keys["answer"], on_change=on_decision, args=args)
    right.selectbox("Level", list(LEVELS), format_func=lambda v: f"{v} {LEVELS[v]}", key=keys["level"],
                    on_change=on_decision, args=args)


def question_card(item_id: int, row: qr.Row, open_for_edit: bool, sent_back: list[dict] = (),
                  is_next: bool = False) -> None:
    q = row.current
    with st.container(border=True):
        origin = "added by you" if row.original is None else "generated"
        st.markdown(f"{'▶ ' if is_next else ''}**{row.question_id}** · level {q.level} {LEVELS.get(q.level, '')} · "
                    f"{origin}{' · **next to decide** (keys A, E, R)' if is_next else ''}")
        for sent in sent_back:
            st.warning(markdown_text(f"Sent back to review by {sent['lead']}: {sent['reason']}  \n"
                                     f"Evidence: {qr.describe_evidence(sent['evidence'])}"),
                       icon=":material/undo:")
        st.markdown(markdown_text(q.question))
        st.markdown("  \n".join(
            f"{'**' if LETTERS[k] == q.answer else ''}{LETTERS[k]}. {markdown_text(o)}"
            f"{' ✓ (key)**' if LETTERS[k] == q.answer else ''}" for k, o in enumerate(q.options)))
        keys = _keys(item_id, row.question_id)
        if open_for_edit and row.original is not None:
            start = {} if keys["action"] in st.session_state else {
                "index": list(ACTION_LABELS).index(row.action) if row.action else None}
            st.radio("Decision", list(ACTION_LABELS), format_func=ACTION_LABELS.get, key=keys["action"],
                     horizontal=True, on_change=on_decision, args=(item_id, row.question_id, row.original), **start)
        elif row.original is not None:
            st.caption(f"Decision: {ACTION_LABELS.get(row.action, 'none')}")
        if open_for_edit and row.action in ("edit", "add"):
            question_editor(item_id, row)
        if open_for_edit and row.action in ("edit", "remove", "add"):
            if keys["reason"] not in st.session_state:
                st.session_state[keys["reason"]] = row.reason
            st.text_input("Reason", key=keys["reason"], on_change=on_decision,
                          args=(item_id, row.question_id, row.original),
                          placeholder="why this edit, removal or new question")
        for problem in row.check.problems if row.action in ("edit", "add") else ():
            st.error(problem)
        for warning in row.check.warnings:
            st.warning(warning)
        if open_for_edit and row.original is None:
            st.button("Delete this added question", key=f"qr_del_{item_id}_{row.question_id}",
                      on_click=on_delete_added, args=(item_id, row.question_id))


@st.dialog("Original figure", width="large")
def figure_dialog(path: str, width: int) -> None:
    st.image(path, width=width)


def figure_panel(item: dict, paper) -> None:
    """The figure at the column's full width, with a button that opens it at its own size; then
    the method text and the logic graph."""
    path = qr.figure_path(item)
    st.subheader("Original figure")
    if path is None or not path.is_file():
        st.info("This paper has no original figure in the data set.")
    else:
        width = qr.load_dataset(item["dataset"]).images[(qr.ORIGINAL_SYSTEM, item["paper_id"])].width
        st.image(str(path), width="stretch")
        if st.button("Open the figure at full size", key=f"qr_figure_full_{item['id']}",
                     icon=":material/open_in_full:"):
            figure_dialog(str(path), width)
    with st.expander("Method text", expanded=False):
        st.markdown(markdown_text(paper.method_text))
    st.subheader("Logic graph")
    g = paper.graph
    phases = {p.id: p.label for p in g.phases}
    labels = {n.id: n.label for n in g.nodes}
    if g.title:
        st.caption(f"Title: {g.title}")
    st.dataframe(pd.DataFrame([{"node": n.label, "type": n.type, "phase": phases.get(n.phase_id, "")}
                               for n in g.nodes]), hide_index=True, width="stretch")
    st.dataframe(pd.DataFrame([{"from": labels.get(e.source, e.source), "to": labels.get(e.target, e.target),
                                "label": e.label} for e in g.edges]), hide_index=True, width="stretch")


def decide_bar(item_id: int, todo: list[qr.Row]) -> None:
    """Buttons for the next question without a decision (the keys A, E and R click them), and one
    that accepts every question still without a decision."""
    keys = {}
    if todo:
        following = todo[0]
        bar = st.container(horizontal=True)
        for action, key in DECISION_KEYS.items():
            element = f"qr_next_{action}_{item_id}"
            bar.button(f"{ACTION_LABELS[action]} {following.question_id}", key=element, help=f"Key {key}",
                       on_click=on_quick, args=(item_id, following.question_id, action, following.original))
            keys[key] = element
        bar.button(f"Accept the {plural(len(todo), 'remaining question')}", key=f"qr_accept_rest_{item_id}",
                   icon=":material/done_all:", on_click=on_accept_remaining, args=(item_id,),
                   help="Accepts every generated question that has no decision yet, in one step; "
                        "the decisions you made stay as they are.")
        st.caption(f"Keys: **A** accepts, **E** edits, **R** removes the next question without a decision "
                   f"({following.question_id}, marked ▶); an edit or a removal then needs a reason.")
    else:
        st.caption("Every generated question has a decision.")
    _option_keys(key=f"qr_keys_{item_id}", data={"keys": keys})


@ui.fragment
def questions_panel(item_id: int, paper) -> None:
    """The questions, their decisions and the paper's submit: a decision reruns only this."""
    if st.session_state.pop(RERUN_PAGE, False):
        st.rerun(scope="app")  # submitted: the whole page moves on to the next paper
    ui.show_flash()  # what this panel's own actions said, when only the panel reran
    db = ui.get_db()
    editable = qr.get_item(db, item_id)["status"] in qr.EDITABLE
    st.subheader("Questions")
    rows = qr.review_rows(paper, qr.decisions(db, item_id))
    todo = qr.undecided(rows)
    if editable:
        decide_bar(item_id, todo)
    sent_back = qr.sendbacks_for_item(db, qr.get_item(db, item_id))  # from Results, with the evidence
    for row in rows:
        question_card(item_id, row, editable, sent_back.get(row.question_id, []),
                      is_next=editable and bool(todo) and row is todo[0])
    if editable:
        add_form(item_id)
        blockers = qr.blocking(rows)
        if blockers:
            st.caption(f"Before submitting ({len(blockers)}): " + " ".join(blockers[:5]))
        st.button("Submit paper", type="primary", disabled=bool(blockers), on_click=on_submit, args=(item_id,))
    with st.expander("Flag a problem for the lead"):
        st.selectbox("About", ["(the whole paper)"] + [r.question_id for r in rows], key=f"qr_flag_q_{item_id}")
        st.text_input("What is wrong", key=f"qr_flag_reason_{item_id}")
        st.button("Send flag", on_click=on_flag, args=(item_id,))


def add_form(item_id: int) -> None:
    keys = _keys(item_id, "new")
    with st.expander("Add a question"):
        with st.form(f"qr_add_{item_id}"):
            st.text_area("Question", key=keys["text"], height=68)
            cols = st.columns(len(LETTERS))
            for k, col in enumerate(cols):
                col.text_input(f"Option {LETTERS[k]}", key=keys[f"opt{k}"])
            left, right = st.columns(2)
            left.selectbox("Answer", list(LETTERS), key=keys["answer"])
            right.selectbox("Level", list(LEVELS), format_func=lambda v: f"{v} {LEVELS[v]}", key=keys["level"])
            st.text_input("Reason", key=keys["reason"], placeholder="what the new question adds")
            st.form_submit_button("Add question", on_click=on_add, args=(item_id,))


campaigns = qr.list_campaigns(db, None if qr.oversees(user) else user["id"])
campaigns = [c for c in campaigns if c["archived_at"] is None]
if not campaigns:
    st.info("No AIBench review campaign has papers for you yet. The review lead deals them out.")
    st.stop()
names = {c["id"]: c["name"] for c in campaigns}
cid = st.selectbox("Campaign", list(names), format_func=names.get, key="qr_campaign")
mine = qr.list_items(db, cid, user["id"])
if not mine:
    st.info("This campaign has no papers for you.")
    st.stop()
done = sum(i["status"] in ("submitted", "approved") for i in mine)
st.caption(f"{done:,} of {plural(len(mine), 'paper')} submitted. One paper at a time: decide on every question "
           "(accept, edit with a reason, remove with a reason), add questions that are missing, then submit.")
suggested = qr.next_item(db, cid, user["id"])
labels = {i["id"]: f"#{i['position']} {i['paper_id']} · {i['status']}" for i in mine}
if st.session_state.get("qr_item") not in labels:
    st.session_state["qr_item"] = (suggested or mine[0])["id"]
item_id = st.selectbox("Paper", list(labels), format_func=labels.get, key="qr_item")
item = qr.get_item(db, item_id)
try:
    paper = qr.paper_for(db, item, user)
except qr.ReviewError as error:
    st.info(str(error), icon=":material/lock:")
    st.stop()
editable = item["status"] in qr.EDITABLE
if item["status"] == "returned" and (sent := qr.latest_review(db, item_id)):
    st.warning(f"Sent back by {sent['lead']}: {markdown_text(sent['comment'])}")
if item["paused_at"] is not None and editable:
    state = qr.clock_of(item, settings)
    st.info(f"Paused. The paper is hidden and its clock stands at {durations.clock(state['active'])}.")
    st.button("Resume", type="primary", on_click=on_resume, args=(item_id,))
    st.stop()
if editable:
    top_left, top_right = st.columns([3, 1])
    with top_right:
        clock(item_id)
        activity_watch(item_id)
        st.button("Pause", on_click=on_pause, args=(item_id,))
    top_left.subheader(f"{paper.id} · {paper.conference} {paper.year}")
else:
    st.subheader(f"{paper.id} · {paper.conference} {paper.year}")
    st.info(f"This paper is {item['status']}: shown as submitted, no longer editable.")

st.html(FIGURE_CSS)
left, right = st.columns(2, gap="medium")
with left, st.container(key="qr_figure"):
    figure_panel(item, paper)
with right:
    questions_panel(item_id, paper)
