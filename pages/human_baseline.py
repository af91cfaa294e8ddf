"""Human baseline: answer the study's questions one at a time, against the clock.

UI only; the clock, the blinding and every write live in ``structext_core.study``.
"""

import streamlit as st

from structext_core import study, ui
from structext_core.formats import DISPLAY_NAMES
from structext_core.ui_frame import ensure_frame

REFERENCE_HEIGHT = 560
REFERENCE_FIT_LINES = 24

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_role("annotator", "admin")
db = ui.get_db()


# ---------------------------------------------------------------- actions (callbacks)
# Callbacks run before the page is drawn, so the page always shows the state after them.


def _answer_text(assignment_id: int) -> str:
    return st.session_state.get(f"hb_text_{assignment_id}", "") or ""


def _report(action, *args) -> study.Submission | None:
    """Run a study action; user errors become a message on the next drawing of the page."""
    try:
        return action(ui.get_db(), user["id"], *args)
    except study.StaleQuestionError as error:
        st.session_state["hb_notice"] = str(error)
    except study.StudyError as error:
        st.session_state["hb_error"] = str(error)
    return None


def _after_answer(submission: study.Submission | None, seq: int) -> None:
    if submission is None:
        return
    verb = "Gave up on" if submission.gave_up else "Saved your answer to"
    st.session_state["hb_saved"] = (
        f"{verb} question {seq} (time {study.format_duration(submission.elapsed_seconds)})."
    )
    feedback = study.response_feedback(ui.get_db(), user["id"], submission.response_id)
    if feedback is not None:
        st.session_state["hb_feedback"] = feedback


def on_submit(assignment_id: int, seq: int) -> None:
    _after_answer(_report(study.submit_answer, assignment_id, _answer_text(assignment_id)), seq)


def on_pause(assignment_id: int) -> None:
    _report(study.pause_question, assignment_id, _answer_text(assignment_id))


def on_resume(assignment_id: int) -> None:
    _report(study.resume_question, assignment_id)


def on_give_up_asked(assignment_id: int) -> None:
    st.session_state["hb_confirm_give_up"] = assignment_id


def on_give_up_confirmed(assignment_id: int, seq: int) -> None:
    st.session_state.pop("hb_confirm_give_up", None)
    _after_answer(_report(study.give_up, assignment_id), seq)


def on_give_up_cancelled() -> None:
    st.session_state.pop("hb_confirm_give_up", None)


def on_accept_rule(study_id: int) -> None:
    _report(lambda db, user_id: study.accept_rule(db, study_id, user_id))


# ---------------------------------------------------------------- pieces of the page


@st.fragment(run_every=1)
def clock(view: study.QuestionView) -> None:
    """The item's time so far; the server's clock is the truth, this only shows it."""
    st.metric("Time on this question", study.format_duration(view.elapsed()),
              help="Counts from the first time this question was shown, even with the tab "
                   "closed. Paused time does not count.")


def show_messages() -> None:
    if error := st.session_state.pop("hb_error", None):
        st.error(error)
    if notice := st.session_state.pop("hb_notice", None):
        st.info(notice)
    if saved := st.session_state.pop("hb_saved", None):
        st.toast(saved)
    if feedback := st.session_state.pop("hb_feedback", None):
        verdict = "correct" if feedback["correct"] else "not correct"
        text = f"Your previous answer was **{verdict}** (ROUGE-L {feedback['rouge_l']:.2f})."
        (st.success if feedback["correct"] else st.warning)(text)


def choose_study(studies: list[dict]) -> dict:
    if len(studies) == 1:
        return studies[0]
    unfinished = [s for s in studies if s["answered"] < s["n_items"]]
    default = studies.index(unfinished[0]) if unfinished else 0
    return st.selectbox(
        "Study", studies, index=default, key="hb_study",
        format_func=lambda s: f"{s['name']} ({s['answered']} of {s['n_items']} answered)",
    )


def rule_screen(chosen: dict) -> None:
    st.subheader(f"Before you start: the rule of {chosen['name']}")
    with st.container(border=True):
        st.markdown(chosen["rule_text"])
    st.markdown(
        f"- You will answer **{chosen['n_items']} questions**, one at a time, in your own order.\n"
        "- Each question's clock starts when the question is first shown and stops when you "
        "submit. It keeps running if you close the tab or lose the connection; you come back "
        "to the same question.\n"
        "- Taking a break? Press **Pause**: the question is hidden and its clock stops.\n"
        "- If you cannot answer, press **Give up**; that is recorded too.\n"
        "- Press **Ctrl+Enter** (⌘+Enter on a Mac) in the answer box to submit."
    )
    st.button("I have read the rule: start", type="primary", on_click=on_accept_rule,
              args=(chosen["id"],))


def finished_screen(chosen: dict) -> None:
    progress = study.annotator_progress(db, chosen["id"], user["id"])
    st.success(
        f"You have answered all {progress['total']} questions of {chosen['name']} "
        f"({progress['gave_up']} given up). Thank you!"
    )
    st.write(f"Time spent answering, pauses excluded: **{study.format_duration(progress['seconds'])}**.")


def paused_screen(view: study.QuestionView) -> None:
    with st.container(border=True):
        st.subheader(f"Paused: question {view.seq} of {view.total}")
        st.write(
            f"The question is hidden and its clock stands at "
            f"**{study.format_duration(view.elapsed())}**. Your draft answer is saved."
        )
        st.button("Resume", type="primary", on_click=on_resume, args=(view.assignment_id,))


def question_screen(view: study.QuestionView) -> None:
    top_left, top_right = st.columns([4, 1], vertical_alignment="bottom")
    with top_left:
        st.progress((view.seq - 1) / view.total,
                    text=f"Question **{view.seq}** of {view.total}")
    with top_right:
        clock(view)
    show_messages()

    reference_column, answer_column = st.columns([3, 2], gap="medium")
    with reference_column:
        lines = len(view.reference.splitlines())
        head_left, head_right = st.columns([3, 1], vertical_alignment="center")
        head_left.markdown(
            f"**Reference** · {DISPLAY_NAMES.get(view.language, view.language)} · "
            f"{lines:,} lines · {len(view.reference):,} characters"
        )
        wrap = head_right.toggle("Wrap lines", key="hb_wrap")
        # A fixed, scrolling height for long references; short ones take their own height.
        height = REFERENCE_HEIGHT if lines > REFERENCE_FIT_LINES else "content"
        st.code(view.reference, language=None, line_numbers=True, wrap_lines=wrap, height=height)
    with answer_column:
        st.markdown("**Question**")
        st.text(view.question)
        if view.requirement:
            st.markdown("**Requirement**")
            st.text(view.requirement)
        answer_form(view)


def answer_form(view: study.QuestionView) -> None:
    confirming = st.session_state.get("hb_confirm_give_up") == view.assignment_id
    with st.form(f"hb_form_{view.assignment_id}", border=False):
        st.text_area(
            "Your answer", value=view.draft, height=220, key=f"hb_text_{view.assignment_id}",
            placeholder="Type or paste your answer here", disabled=confirming,
        )
        submit_col, pause_col, give_up_col = st.columns([3, 2, 2])
        # The first submit button is the one Ctrl+Enter presses.
        submit_col.form_submit_button(
            "Submit answer", type="primary", width="stretch", disabled=confirming,
            on_click=on_submit, args=(view.assignment_id, view.seq),
        )
        pause_col.form_submit_button("Pause", width="stretch", disabled=confirming,
                                     on_click=on_pause, args=(view.assignment_id,))
        give_up_col.form_submit_button("Give up", width="stretch", disabled=confirming,
                                       on_click=on_give_up_asked, args=(view.assignment_id,))
    if confirming:
        st.warning("Give up on this question? It is recorded as given up and cannot be answered later.")
        yes, no = st.columns(2)
        yes.button("Yes, give up", type="primary", width="stretch",
                   on_click=on_give_up_confirmed, args=(view.assignment_id, view.seq))
        no.button("No, keep answering", width="stretch", on_click=on_give_up_cancelled)
    else:
        st.caption("Ctrl+Enter (⌘+Enter on a Mac) submits. Pause keeps your draft.")


# ---------------------------------------------------------------- the page

st.title("Human baseline")
studies = study.studies_for_annotator(db, user["id"])
if not studies:
    show_messages()
    if user["role"] == "admin":
        st.info("Admins do not answer in studies: they can see the answers. This is the annotators' page; "
                "set up and follow studies under **Studies** (Admin).")
    else:
        st.info("You do not take part in an open study. The study lead adds you when a study is set up.")
    st.stop()

chosen = choose_study(studies)
if chosen["rule_accepted_at"] is None:
    show_messages()
    rule_screen(chosen)
    st.stop()

try:
    current = study.open_question(db, chosen["id"], user["id"])
except study.StudyError as error:
    st.error(str(error))
    st.stop()

if current is None:
    show_messages()
    finished_screen(chosen)
elif current.paused:
    show_messages()
    paused_screen(current)
else:
    with st.expander("Study rule"):
        st.markdown(chosen["rule_text"])
    question_screen(current)
