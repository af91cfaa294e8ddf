"""Human baseline: answer the study's questions one at a time, against the clock.

UI only; the clock, the blinding and every write live in ``structext_core.studio.study``.

The honest clock without a server run per second: the time on screen ticks in the browser
(the ``clock`` component, given the server's active time and whether it runs), and the
server hears from the page only when something happens: a heartbeat of the clock component
every ``STRUCTEXT_HEARTBEAT_SECONDS`` (its reply reruns the page when the question was taken
over, paused or answered elsewhere), an input report of the activity component (input, and
the answer as typed: a few seconds after the last keystroke at the latest), or an action
(submit, pause, ...). ``pause_watch`` on the pause screen sends the same heartbeats.

A multiple-choice question (:func:`image_question_screen`) is a question with lettered options,
and an image where its benchmark draws one: the image arrives as blinded pixels asked for by the
assignment's id (nothing that names its maker, source or file), the chosen option is the draft saved
on the server (a reload shows it chosen), the option letters choose and Enter submits
(``structext_core.ui.option_keys``).
"""

import secrets

import streamlit as st

from structext_core import ui
from structext_core.evaluation import choices
from structext_core.studio import durations, study
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import activity, option_keys
from structext_core.ui import clock as clock_widget
from structext_core.ui.frame import ensure_frame
from structext_core.views import reference as viewer

REFERENCE_HEIGHT = 560
REFERENCE_FIT_LINES = 24
GO_TO_WIDTH = 160  # px: the Go to line box beside the search box
ANSWER_LABEL = "Your answer"
#: The activity component reports typed text at most this often, other input less often.
TEXT_REPORT_MS = 2500
ACTIVITY_REPORT_MS = 10_000
#: A report due at once still waits this long after the input that made it due (see structext_core.ui.activity.ACTIVITY_JS).
SETTLE_MS = 400


# The lines around a match or a line of the reference, the match marked. Every text of the
# reference is put on the page with `textContent`: nothing from it is read as HTML.
WINDOW_CSS = """
.hb-window { font-family: "Source Code Pro", monospace; font-size: .8rem; line-height: 1.6; overflow: auto;
             padding: .75rem 0; border-radius: .5rem; border: 1px solid rgba(128,128,128,.25); }
.hb-row { display: flex; }
.hb-row.hb-target { background: rgba(255,200,0,.18); }
.hb-number { flex: none; min-width: 4.5em; padding-right: 1em; text-align: right; opacity: .5; user-select: none; }
.hb-text { white-space: pre; word-break: break-all; }
.hb-window.hb-wrap .hb-text { white-space: pre-wrap; }
.hb-cut { opacity: .55; }
mark { padding: 0; border-radius: 2px; }
"""
WINDOW_JS = """
export default function (component) {
  const { data, parentElement } = component;
  // The root also holds the component's style sheet: only the window's own box is replaced.
  let box = parentElement.querySelector(".hb-window");
  if (!box) { box = document.createElement("div"); parentElement.appendChild(box); }
  box.replaceChildren();
  box.className = "hb-window" + (data.wrap ? " hb-wrap" : "");
  box.style.maxHeight = `${Number(data.max_height) || 560}px`;
  const span = (cls, text) => { const el = document.createElement("span"); el.className = cls;
                                el.textContent = text; return el; };
  for (const [number, text, mark, cutBefore, cutAfter] of data.rows) {
    const row = document.createElement("div");
    row.className = "hb-row" + (number === data.target ? " hb-target" : "");
    row.appendChild(span("hb-number", String(number)));
    const body = span("hb-text", "");
    if (cutBefore) body.appendChild(span("hb-cut", `[… ${cutBefore.toLocaleString("en")} characters] `));
    if (mark) {
      body.appendChild(document.createTextNode(text.slice(0, mark[0])));
      const marked = document.createElement("mark");
      marked.textContent = text.slice(mark[0], mark[1]);
      body.appendChild(marked);
      body.appendChild(document.createTextNode(text.slice(mark[1])));
    } else {
      body.appendChild(document.createTextNode(text || " "));
    }
    if (cutAfter) body.appendChild(span("hb-cut", ` [… ${cutAfter.toLocaleString("en")} characters]`));
    row.appendChild(body);
    box.appendChild(row);
  }
}
"""

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
_activity = activity.component()
_clock = clock_widget.component()
_window = st.components.v2.component("structext_reference_window", css=WINDOW_CSS, js=WINDOW_JS)
_option_keys = option_keys.component()
user = ui.require_page("human_baseline")
db = ui.get_db()
# This browser tab: a reload or a new tab is a new Streamlit session, so a new tab id.
tab_id = st.session_state.setdefault("hb_tab", secrets.token_hex(8))


# ---------------------------------------------------------------- actions (callbacks)
# Callbacks run before the page is drawn, so the page always shows the state after them.


def _text_key(assignment_id: int) -> str:
    return f"hb_text_{assignment_id}"


def _answer_text(assignment_id: int) -> str:
    return st.session_state.get(_text_key(assignment_id), "") or ""


def _key(name: str, assignment_id: int) -> str:
    """A page key of one question's reference tools (a new question starts them afresh)."""
    return f"hb_{name}_{assignment_id}"


def _remember_answer(assignment_id: int, text: str | None = None) -> None:
    """The answer as this page last knew it (the form's text, an input report's text, or
    the text after "Add lines"): what the answer box's height and the size note follow."""
    st.session_state["hb_answer_seen"] = (assignment_id, _answer_text(assignment_id) if text is None else text)


def _forget_box() -> None:
    """The answer box is not on screen (paused, taken over, feedback, finished): forget what
    this session's box held. The draft saved in the database is the text from now on, so the
    box drawn again (Resume, Continue here) shows it, not a text from before the break."""
    for key in [key for key in st.session_state if str(key).startswith("hb_text_")]:
        del st.session_state[key]
    for key in ("hb_answer_seen", "hb_answer_drawn"):
        st.session_state.pop(key, None)


def _known_answer(assignment_id: int) -> str:
    seen = st.session_state.get("hb_answer_seen")
    return seen[1] if seen and seen[0] == assignment_id else _answer_text(assignment_id)


def on_search_changed(assignment_id: int) -> None:
    """A new search: no match is chosen yet; the window stays where it was, unmarked."""
    st.session_state[_key("hit", assignment_id)] = None
    target = st.session_state.get(_key("target", assignment_id))
    if target is not None:
        st.session_state[_key("target", assignment_id)] = (target[0], None)


def _show_line(assignment_id: int, line: int, hit: viewer.Hit | None) -> None:
    """Show the window around ``line``; From / To line start there, ready to take it."""
    st.session_state[_key("target", assignment_id)] = (line, hit)
    st.session_state[_key("from", assignment_id)] = line
    st.session_state[_key("to", assignment_id)] = line


def on_hit_chosen(assignment_id: int, hits: tuple[viewer.Hit, ...]) -> None:
    chosen = st.session_state.get(_key("hit", assignment_id))
    if chosen is not None and 0 <= chosen < len(hits):
        _show_line(assignment_id, hits[chosen].line, hits[chosen])


def on_go_to(assignment_id: int) -> None:
    line = st.session_state.get(_key("goto", assignment_id))
    if line is not None:  # checked against the reference when the window is drawn
        _show_line(assignment_id, int(line) if float(line).is_integer() else line, None)


def on_whole_reference(assignment_id: int) -> None:
    st.session_state[_key("target", assignment_id)] = None
    st.session_state[_key("goto", assignment_id)] = None
    st.session_state[_key("hit", assignment_id)] = None


def on_add_lines(assignment_id: int, reference: str) -> None:
    """"Add lines X–Y to the answer": the lines verbatim at the end of the answer (the rule of
    :func:`viewer.append`), saved as the draft as typing is. The form sent the text as typed
    so far with the click, so nothing typed is lost. A bad range changes nothing."""
    text = _answer_text(assignment_id)
    first, last = (st.session_state.get(_key(name, assignment_id)) for name in ("from", "to"))
    try:
        lines = viewer.take(viewer.Lines.of(reference), first, last)
        combined = viewer.append(text, lines, max_chars=study.MAX_RESPONSE_CHARS)
    except viewer.ReferenceInputError as error:
        st.session_state[_key("take_error", assignment_id)] = f"Nothing was added. {error}"
        return
    st.session_state[_text_key(assignment_id)] = combined
    _remember_answer(assignment_id, combined)
    try:
        status = study.record_activity(ui.get_db(), user["id"], assignment_id, tab_id, draft=combined,
                                       settings=settings)
    except study.StudyError as error:
        _note(error)
        return
    if status.state == "elsewhere":
        st.session_state["hb_carry"] = (assignment_id, combined)  # for "Continue here", as on_submit keeps it
    ui.flash("toast", f"Added lines {int(first):,}–{int(last):,} to your answer.")


def _note(error: study.StudyError) -> None:
    """Keep a user error for the next drawing of the page (a stale question is only a notice)."""
    ui.flash("info" if isinstance(error, study.StaleQuestionError) else "error", str(error))


def _report(action, *args, **options) -> study.Submission | None:
    """Run a study action; user errors become a message on the next drawing of the page."""
    try:
        return action(ui.get_db(), user["id"], *args, **options)
    except study.StudyError as error:
        _note(error)
    return None


def question_name(view: study.QuestionView, with_total: bool = True) -> str:
    """How the page names a question: "practice question 2 of 3", "question 4 of 12"."""
    name = f"{'practice question' if view.practice else 'question'} {view.seq}"
    return f"{name} of {view.total}" if with_total else name


def _after_answer(submission: study.Submission | None, name: str) -> None:
    if submission is None:
        return
    verb = "Gave up on" if submission.gave_up else "Saved your answer to"
    ui.flash("toast", f"{verb} {name} (time {study.format_duration(submission.elapsed_seconds)}).")
    if study.practice_feedback(ui.get_db(), user["id"], submission.response_id) is not None:
        return  # a practice answer: its feedback is a screen of its own before the next question
    feedback = study.response_feedback(ui.get_db(), user["id"], submission.response_id)
    if feedback is not None:
        st.session_state["hb_feedback"] = feedback


def on_submit(assignment_id: int, name: str) -> None:
    text = _answer_text(assignment_id)
    try:
        submission = study.submit_answer(ui.get_db(), user["id"], assignment_id, text, tab=tab_id)
    except study.StudyError as error:
        if isinstance(error, study.TakenOverError):
            # Kept for "Continue here": the answer box is not drawn while another tab holds it.
            st.session_state["hb_carry"] = (assignment_id, text)
        _note(error)
    else:
        _after_answer(submission, name)


def on_pause(assignment_id: int) -> None:
    _report(study.pause_question, assignment_id, _answer_text(assignment_id), tab=tab_id)


def on_choose(assignment_id: int, letter: str) -> None:
    """An option chosen (click or key): saved on the server as the draft, at once."""
    status = _report(study.record_activity, assignment_id, tab_id, draft=letter, settings=settings)
    if status is not None and status.draft_saved:
        st.session_state["hb_chosen"] = (assignment_id, letter)


def on_submit_choice(assignment_id: int, name: str) -> None:
    """Submit the option saved as chosen (the server's draft, never an older one on the page)."""
    _after_answer(_report(study.submit_draft, assignment_id, tab=tab_id, settings=settings), name)


def on_pause_choice(assignment_id: int) -> None:
    _report(study.pause_question, assignment_id, None, tab=tab_id)


def on_resume(assignment_id: int) -> None:
    _report(study.resume_question, assignment_id, tab=tab_id)


def on_give_up_asked(assignment_id: int) -> None:
    st.session_state["hb_confirm_give_up"] = assignment_id
    # An image question has no answer box: its draft (the chosen letter) is saved already.
    typed = st.session_state.get(_text_key(assignment_id))
    _report(study.record_activity, assignment_id, tab_id, draft=typed)


def on_give_up_confirmed(assignment_id: int, name: str) -> None:
    st.session_state.pop("hb_confirm_give_up", None)
    _after_answer(_report(study.give_up, assignment_id, tab=tab_id), name)


def on_give_up_cancelled() -> None:
    st.session_state.pop("hb_confirm_give_up", None)


def on_continue_here(study_id: int) -> None:
    try:
        study.take_over(ui.get_db(), study_id, user["id"], tab_id)
    except study.StudyError as error:
        _note(error)
        return
    carried = st.session_state.pop("hb_carry", None)
    if carried is not None:
        assignment_id, text = carried
        _report(study.record_activity, assignment_id, tab_id, draft=text)
        st.session_state.pop(_text_key(assignment_id), None)


def on_practice_seen(response_id: int) -> None:
    """"Next practice question" / "Start the study": this page run shows the next question
    (which is what ends the feedback screen for good, in every tab and after a reload)."""
    st.session_state["hb_practice_seen"] = response_id


def _flag_keys(assignment_id: int) -> tuple[str, str, str]:
    return f"hb_flag_kind_{assignment_id}", f"hb_flag_note_{assignment_id}", f"hb_flag_said_{assignment_id}"


def on_flag(study_id: int, item_id: int, assignment_id: int) -> None:
    """Send the report; nothing else changes (no pause, no submission, the draft stays)."""
    kind_key, note_key, said_key = _flag_keys(assignment_id)
    try:
        study.flag_question(ui.get_db(), study_id, user["id"], item_id, st.session_state.get(kind_key),
                            st.session_state.get(note_key, ""))
    except study.StudyError as error:
        st.session_state[said_key] = ("error", f"The report was not sent. {error}")
    else:
        st.session_state[note_key] = ""
        st.session_state[said_key] = ("success", "Thank you: the study lead will look at this question. "
                                                 "Carry on answering it; its clock and your answer are as they were.")


def on_accept_rule(study_id: int) -> None:
    _report(lambda db, user_id: study.accept_rule(db, study_id, user_id))


def _ignore() -> None:
    """The activity component's state is read in its fragment, not in a callback."""


# ---------------------------------------------------------------- pieces of the page


def _must_leave(state: str) -> bool:
    return state not in ("active", "hidden")


def _check_logged_in() -> None:
    """In a fragment run: when this session was logged out meanwhile (Log out's callback can
    run in a fragment's run), the whole page reruns, logged out, instead of this fragment."""
    if ui.current_user() is None:
        st.rerun(scope="app")


CLOCK_LABEL = "Time on this question"
CLOCK_HELP = ("Counts while this question is on screen in this tab. It stops when the tab is closed, "
              "hidden or loses its connection, and while paused.")


def _clock_data(assignment_id: int, status: study.ClockStatus, *, show: bool = True) -> dict:
    """What the clock component is told: the active time as of now, whether it runs, and how
    often to send a heartbeat. ``stamp`` tells a new reply from a redraw of the same one. The
    heartbeats go to the clock's route; the page stays as it is while the clock is active or
    hidden (on the question) or paused (on the pause screen)."""
    stay = ("active", "hidden") if show else ("paused",)
    return clock_widget.data(assignment_id, status.seconds, running=status.state == "active", settings=settings,
                             stamp_key="hb_clock_stamp", show=show, label=CLOCK_LABEL, help=CLOCK_HELP,
                             beat=clock_widget.beat_route(ui.get_db(), "study", assignment_id, tab_id, stay))


def _beat_visible(key: str) -> bool:
    """Whether the tab is visible, as the clock's latest heartbeat says (else the latest report)."""
    state = st.session_state.get(key)
    beat = state.get("beat") if isinstance(state, dict) else getattr(state, "beat", None)
    if isinstance(beat, dict) and isinstance(beat.get("visible"), bool):
        st.session_state["hb_visible"] = beat["visible"]
    return st.session_state.get("hb_visible", True)


@ui.fragment
def clock(assignment_id: int) -> None:
    """The question's active time, ticking in the browser. The component's heartbeat (every
    ``heartbeat_seconds``) reruns this fragment alone: a heartbeat of this tab (written when
    due); when the question was taken over, paused or answered elsewhere, the whole page
    reruns so that it hides the question. A page run redraws it too (showing the question
    was a heartbeat: nothing more is written)."""
    _check_logged_in()
    key = f"hb_clock_{assignment_id}"
    status = study.heartbeat(ui.get_db(), user["id"], assignment_id, tab_id, visible=_beat_visible(key),
                             settings=settings)
    if _must_leave(status.state):
        st.rerun(scope="app")
    _clock(key=key, data=_clock_data(assignment_id, status), default={"beat": None}, on_beat_change=_ignore)


@ui.fragment
def activity_watch(assignment_id: int, answer_size: bool = True) -> None:
    """Input reports from the page: they keep the idle pause away and save the draft."""
    _check_logged_in()
    result = _activity(
        key=f"hb_activity_{assignment_id}",
        data={"assignment": assignment_id, "label": ANSWER_LABEL, "text_ms": TEXT_REPORT_MS,
              "activity_ms": ACTIVITY_REPORT_MS, "settle_ms": SETTLE_MS},
        default={"report": None}, on_report_change=_ignore,
    )
    report = study.ActivityReport.parse(result.report, assignment_id)
    # Not this question's, or already handled (this fragment also runs with every page run).
    if report is not None and report.seq != st.session_state.get("hb_report_seq"):
        _take_report(assignment_id, report)
    if answer_size:
        st.caption(f"Your answer: {viewer.answer_size(_known_answer(assignment_id))}",
                   help="As last sent by this page: it follows your typing every few seconds.")


def _take_report(assignment_id: int, report: study.ActivityReport) -> None:
    st.session_state["hb_report_seq"] = report.seq
    if report.text is not None:
        _remember_answer(assignment_id, report.text)
    st.session_state["hb_visible"] = report.visible
    status = study.record_activity(ui.get_db(), user["id"], assignment_id, tab_id, draft=report.text,
                                   visible=report.visible, input_age=report.input_age, settings=settings)
    if _must_leave(status.state):
        st.rerun(scope="app")
    if status.draft_saved is False:
        st.warning(f"Your answer is over {study.MAX_RESPONSE_CHARS:,} characters, so the draft is no "
                   "longer saved as you type. Shorten it.")


@ui.fragment
def flag_box(view: study.QuestionView) -> None:
    """"Report a problem with this question". A fragment: sending a report reruns only this
    box, so the answer box (and what is typed in it) and the clock are left alone."""
    kind_key, note_key, said_key = _flag_keys(view.assignment_id)
    # Its form is built only while it is open (opening it reruns this fragment): every submit
    # draws the question page (benchmarks/bench_annotators.py: with the Account box, 6% less CPU
    # per answer).
    box = st.expander("Report a problem with this question", key=f"hb_flag_open_{view.assignment_id}",
                      on_change="rerun")
    if not box.open:
        return
    with box:
        with st.form(f"hb_flag_form_{view.assignment_id}", border=False):
            st.selectbox("What is wrong", list(study.FLAG_KINDS), format_func=study.FLAG_KINDS.get, key=kind_key)
            st.text_area("Note for the study lead (optional)", key=note_key, height=80,
                         max_chars=study.MAX_FLAG_NOTE_CHARS, placeholder="What looks wrong, and where")
            st.form_submit_button("Send report", on_click=on_flag,
                                  args=(view.study_id, view.item_id, view.assignment_id))
        if said := st.session_state.get(said_key):
            (st.success if said[0] == "success" else st.error)(said[1])


@ui.fragment
def pause_watch(assignment_id: int) -> None:
    """On the pause screen: the clock component's heartbeats (nothing shown) rerun this
    fragment, which reruns the page when the question was resumed (or answered) elsewhere."""
    _check_logged_in()
    key = f"hb_pause_clock_{assignment_id}"
    status = study.heartbeat(ui.get_db(), user["id"], assignment_id, tab_id, settings=settings)
    if status.state != "paused":
        st.rerun(scope="app")
    _clock(key=key, data=_clock_data(assignment_id, status, show=False), default={"beat": None},
           on_beat_change=_ignore)


def own_progress_panel(study_id: int) -> None:
    """The annotator's own day in the study (sidebar): answered of the counted questions,
    active time, breaks (Pause, and idle auto-pauses apart). Nothing about any item. Drawn
    with each page run (a new question, a pause, a resume): no run of its own."""
    mine = study.own_progress(ui.get_db(), study_id, user["id"], grace_seconds=settings.grace_seconds)
    with st.container(border=True):
        st.markdown("**Your progress**")
        st.markdown("  \n".join(f"{label}: **{value}**" for label, value in mine.rows),
                    help="Active time counts every question of this study so far, the open one up to "
                         "when this page last changed (a new question, a pause, a resume). "
                         "Pauses: with the Pause button; idle auto-pauses: after no input.")


def show_messages() -> None:
    ui.show_flash()
    if feedback := st.session_state.pop("hb_feedback", None):
        if feedback.withheld:
            st.info("Whether your previous answer was correct is not shown: the same question is still open "
                    "for you in another study.")
            return
        verdict = "correct" if feedback.correct else "not correct"
        text = f"Your previous answer was **{verdict}**" + (
            "." if feedback.letter else f" (ROUGE-L {feedback.rouge_l:.2f}).")
        (st.success if feedback.correct else st.warning)(text)


STUDY_PARAM = "study"


def on_study_chosen() -> None:
    """Keep the chosen study for this tab (and in the URL, for a reload)."""
    chosen = st.session_state.get("hb_study")
    if isinstance(chosen, int):
        st.session_state["hb_study_id"] = chosen
        st.query_params[STUDY_PARAM] = str(chosen)


def on_study_picked(study_id: int) -> None:
    st.session_state["hb_study_id"] = study_id
    st.query_params[STUDY_PARAM] = str(study_id)


def study_picker(studies: list[study.AnnotatorStudy]) -> None:
    """In two studies or more, the tab starts here: each study with the person's progress and a
    button. Nothing opens, and no clock starts, until they choose."""
    st.subheader("Choose a study")
    st.caption(f"You take part in {len(studies)} open studies. A question opens, and its clock starts, only "
               "once you choose a study; you can switch between them at the top of the page later.")
    first = study.first_unfinished(studies)
    for index, item in enumerate(studies):
        with st.container(border=True):
            left, right = st.columns([4, 1], vertical_alignment="center")
            left.markdown(f"**{markdown_text(item.name)}**")
            left.caption(item.progress_words + (" · finished" if item.finished else ""))
            verb = "Start" if not item.answered and item.rule_accepted_at is None else "Continue"
            right.button(verb if not item.finished else "Open", key=f"hb_pick_{item.id}", width="stretch",
                         type="primary" if index == first else "secondary",
                         on_click=on_study_picked, args=(item.id,))


def choose_study(studies: list[study.AnnotatorStudy]) -> study.AnnotatorStudy | None:
    """The study this tab works in: the one chosen here (or named in the URL); None while a
    person in two studies or more has not chosen (:func:`study_picker`). The chooser's labels
    carry progress, which changes with every answer; the choice is kept by study id, so an answer
    never switches the study under the annotator."""
    by_id = {item.id: item for item in studies}
    wanted = st.session_state.get("hb_study_id")
    if wanted is None:
        named = st.query_params.get(STUDY_PARAM, "")
        wanted = int(named) if named.isascii() and named.isdigit() and len(named) < 12 else None
    if wanted not in by_id:
        if len(studies) > 1:
            return None
        wanted = studies[0].id
    st.session_state["hb_study_id"] = wanted
    if len(studies) == 1:
        return studies[0]
    ids = list(by_id)
    # The widget's own value is set from the kept choice on every run: a label that changed
    # since the last run (a new count of answers) would otherwise reset it to the first study.
    st.session_state["hb_study"] = wanted
    chosen = st.selectbox("Study", ids, key="hb_study", on_change=on_study_chosen,
                          format_func=lambda sid: by_id[sid].label if sid in by_id else str(sid))
    return by_id.get(chosen, by_id[wanted])


def _idle_time() -> str:
    """The idle auto-pause time in words: "5 min", "1 min 30 s"."""
    return durations.words(settings.idle_pause_seconds)


def rule_screen(chosen: study.AnnotatorStudy) -> None:
    st.subheader(markdown_text(f"Before you start: the rule of {chosen.name}"))
    with st.container(border=True):
        st.markdown(markdown_text(chosen.rule_text))
    idle = (f" After {_idle_time()} without any input (keys, mouse, scrolling) the question "
            "pauses by itself." if settings.idle_pause_seconds else "")
    counts = chosen.counts
    practice = (f"- First come **{plural(counts.practice, 'practice question')}**: not counted, and after "
                "each you see your score and the answer key.\n" if counts.practice else "")
    st.markdown(
        practice +
        f"- Then you answer the **{counts.for_annotator}**, one at a time, in your own order.\n"
        "- Each question's clock counts while the question is on screen in your tab. It stops "
        "when you close the tab, hide it or lose the connection; you come back to the same "
        "question, the same clock and your answer as typed.\n"
        "- Open the study in one tab at a time: opening it in another tab moves the question there.\n"
        f"- Taking a break? Press **Pause**: the question is hidden and its clock stops.{idle}\n"
        "- If you cannot answer, press **Give up**; that is recorded too.\n"
        + f"- {study.kind_of(chosen.benchmark).how_to_answer}"
    )
    st.button("I have read the rule: start", type="primary", on_click=on_accept_rule,
              args=(chosen.id,))


def _option_text(options: tuple[str, ...], letter: str) -> str:
    index = choices.LETTERS.find(letter) if letter else -1
    return f"**{letter}** · {markdown_text(options[index])}" if 0 <= index < len(options) else markdown_text(letter)


def _text_feedback(feedback: study.PracticeFeedback) -> None:
    """A typed answer's practice feedback: its ROUGE-L and exact match, and the answer key."""
    if feedback.gave_up:
        st.warning("You gave up on this one." + ("" if feedback.key_withheld else
                                                 " Here is the answer the study expects."))
    else:
        verdict = "passed" if feedback.passed else "did not pass"
        (st.success if feedback.passed else st.warning)(
            f"Your answer **{verdict}**: ROUGE-L {feedback.rouge_l:.2f} (the pass mark is "
            f"{study.PASS_THRESHOLD:.2f}), exact match {'yes' if feedback.exact_match else 'no'}.")
        st.markdown("**Your answer**")
        st.code(feedback.response, language=None)
    if feedback.key_withheld:
        st.info(study.KEY_WITHHELD, icon=":material/lock:")
    else:
        st.markdown("**The answer key**")
        st.code(feedback.answer, language=None)


def _letter_feedback(feedback: study.PracticeFeedback) -> None:
    """An image question's practice feedback: correct or not, the chosen option and the key's,
    beside the image and the question again (so the key can be checked against the figure)."""
    image_column, text_column = st.columns([3, 2], gap="medium")
    with text_column:
        if feedback.gave_up:
            st.warning("You gave up on this one.")
        else:
            (st.success if feedback.passed else st.warning)(
                f"Your answer is **{'correct' if feedback.passed else 'not correct'}**.")
        st.markdown("**Question**")
        st.text(feedback.question)
        if not feedback.gave_up:
            st.markdown(f"Your answer: {_option_text(feedback.options, feedback.response)}")
        if feedback.key_withheld:
            st.info(study.KEY_WITHHELD, icon=":material/lock:")
        else:
            st.markdown(f"The answer key: {_option_text(feedback.options, feedback.answer)}")
    with image_column:
        image_box(feedback.assignment_id)


def practice_feedback_screen(feedback: study.PracticeFeedback) -> None:
    """After a practice question: the score and the answer key, before the next question is
    shown (so reading this counts on no question's clock)."""
    with st.container(border=True):
        st.subheader(f"Practice question {feedback.seq} of {feedback.total}: how you did")
        (_letter_feedback if feedback.options else _text_feedback)(feedback)
        last = feedback.seq >= feedback.total
        st.caption("Practice is not counted. " + ("Next come the study's questions; their answers are not shown."
                                                   if last else ""))
        st.button("Start the study" if last else "Next practice question", type="primary",
                  on_click=on_practice_seen, args=(feedback.response_id,))


def finished_screen(chosen: study.AnnotatorStudy, studies: list[study.AnnotatorStudy]) -> None:
    progress = study.annotator_progress(db, chosen.id, user["id"])
    counts = chosen.counts
    practice = f", after {plural(counts.practice, 'practice question')}" if counts.practice else ""
    st.success(markdown_text(
        f"You have answered all {counts.for_annotator} of {chosen.name}{practice} "
        f"({progress.gave_up:,} given up). Thank you!"
    ))
    st.write(f"Time spent answering, pauses excluded: **{study.format_duration(progress.seconds)}**.")
    waiting = [item.name for item in studies if item.id != chosen.id and not item.finished]
    if waiting:
        st.info(f"Still to answer: {', '.join(waiting)}. Choose it under **Study** above.")


def paused_screen(view: study.QuestionView) -> None:
    with st.container(border=True):
        st.subheader(f"Paused: {question_name(view)}")
        why = (f"It paused by itself after {_idle_time()} without any input. "
               if view.pause_reason == "idle" else "")
        st.write(
            f"{why}The question is hidden, in every tab, and its clock stands at "
            f"**{study.format_duration(view.elapsed())}**. Your draft answer is saved."
        )
        st.button("Resume", type="primary", on_click=on_resume, args=(view.assignment_id,))
    pause_watch(view.assignment_id)


def taken_over_screen(view: study.QuestionView) -> None:
    with st.container(border=True):
        st.subheader("This question is open in another tab")
        st.write(
            f"{question_name(view).capitalize()} was opened in another tab or window, so it is "
            "hidden here and its clock counts there. Carry on in that tab, or continue here: "
            "the other tab then hides it, and your answer as last saved comes with it."
        )
        st.button("Continue here", type="primary", on_click=on_continue_here, args=(view.study_id,))


def question_screen(view: study.QuestionView) -> None:
    if view.options:
        image_question_screen(view)
        return
    top_left, top_right = st.columns([4, 1], vertical_alignment="bottom")
    with top_left:
        st.progress((view.seq - 1) / view.total,
                    text=f"{'Practice question' if view.practice else 'Question'} **{view.seq}** of {view.total}")
    with top_right:
        clock(view.assignment_id)
    show_messages()

    if view.has_reference_panel:  # its benchmark declares a reference panel
        reference_column, answer_column = st.columns([3, 2], gap="medium")
        with reference_column:
            reference_panel(view)
    elif view.has_image:  # a short answer on an image: the image beside the question
        image_column, answer_column = st.columns([3, 2], gap="medium")
        with image_column:
            image_box(view.assignment_id)
    else:  # a short answer with no reference: no empty reference panel
        answer_column = st.container()
    with answer_column:
        st.markdown("**Question**")
        st.text(view.question)
        if view.requirement:
            st.markdown("**Requirement**")
            st.text(view.requirement)
        answer_form(view)
        activity_watch(view.assignment_id)
        flag_box(view)


def reference_panel(view: study.QuestionView) -> None:
    """The reference with line numbers and the tools for long answers: search (the number of
    matches; choosing one shows the lines around it, marked) and go to a line. The lines
    "Add lines" takes are set beside the answer box (:func:`line_range`). Everything is
    computed from the reference alone (:mod:`structext_core.views.reference`)."""
    aid = view.assignment_id
    lines = viewer.Lines.of(view.reference)
    # Rows are horizontal containers, not columns: one block each instead of one per column
    # (the page is drawn anew for every question, and each block is a message and a cursor).
    head = st.container(horizontal=True, vertical_alignment="center", gap="medium")
    # No length or other figure that would single the sample out elsewhere in the app.
    head.markdown(f"**Reference** · {view.reference_label}")
    matching = head.toggle("Match case", key=_key("case", aid), on_change=on_search_changed, args=(aid,),
                           width="content")
    wrap = head.toggle("Wrap lines", key="hb_wrap", width="content")
    find_row = st.container(horizontal=True, vertical_alignment="bottom")
    query = find_row.text_input("Search the reference", key=_key("find", aid), max_chars=viewer.MAX_QUERY_CHARS,
                                placeholder="A key or a value, as plain text", on_change=on_search_changed,
                                args=(aid,))
    # Line boxes hold floats shown as whole numbers: Streamlit resets a non-finite value (a forged
    # NaN) of a float box to its default, where a whole-number box fails before the page runs.
    find_row.number_input("Go to line", value=None, step=1.0, format="%.0f", key=_key("goto", aid),
                          placeholder="Line", on_change=on_go_to, args=(aid,), width=GO_TO_WIDTH)
    if query:
        search_results(aid, lines, query, matching)
    reference_view(view, lines, wrap)


def line_range(aid: int) -> None:
    """From / To line, right under the "Add lines" button they set (outside the answer's
    form: Enter in a box of the form would press its first button, Submit)."""
    row = st.container(horizontal=True)
    row.number_input("From line", value=None, step=1.0, format="%.0f", key=_key("from", aid),
                     placeholder="First line",
                     help="Lines From to To of the reference go into your answer, exactly as they "
                          "are, with **Add lines**. Choosing a match or a line fills both.")
    row.number_input("To line", value=None, step=1.0, format="%.0f", key=_key("to", aid),
                     placeholder="Last line")


def search_results(aid: int, lines: viewer.Lines, query: str, matching: bool) -> None:
    try:
        found = viewer.search(lines, query, case_sensitive=matching)
    except viewer.ReferenceInputError as error:
        st.error(str(error))
        return
    if not found.hits:
        st.caption(found.summary)
        return
    st.selectbox(found.summary, list(range(len(found.hits))), index=None, key=_key("hit", aid),
                 format_func=lambda i: found.hits[i].label, placeholder="Choose a match to show it",
                 on_change=on_hit_chosen, args=(aid, found.hits))


def reference_view(view: study.QuestionView, lines: viewer.Lines, wrap: bool) -> None:
    """The lines around the chosen match or line (the match marked), else the whole reference."""
    aid = view.assignment_id
    target = st.session_state.get(_key("target", aid))
    if target is not None:
        line, hit = target
        try:
            around = viewer.window(lines, line, hit=hit)
        except viewer.ReferenceInputError as error:
            st.error(str(error))
        else:
            caption_col, back_col = st.columns([3, 1], vertical_alignment="center")
            caption_col.caption(around.caption)
            back_col.button("Whole reference", key=_key("whole", aid), width="stretch",
                            on_click=on_whole_reference, args=(aid,))
            _window(key=_key("window", aid),
                    data={**viewer.window_data(around), "wrap": wrap, "max_height": REFERENCE_HEIGHT})
            return
    # A fixed, scrolling height for long references; short ones take their own height.
    height = REFERENCE_HEIGHT if len(lines) > REFERENCE_FIT_LINES else "content"
    st.code(view.reference, language=None, line_numbers=True, wrap_lines=wrap, height=height)


def answer_form(view: study.QuestionView) -> None:
    aid = view.assignment_id
    confirming = st.session_state.get("hb_confirm_give_up") == view.assignment_id
    # The draft as last saved fills a box this session has not drawn yet (reload, new tab,
    # after a pause); a box it has drawn keeps its own text.
    st.session_state.setdefault(_text_key(view.assignment_id), view.draft)
    if st.session_state.get("hb_answer_drawn") != (aid, _answer_text(aid)):
        _remember_answer(aid)  # the form sent this text (or the box is new): the newest known
    st.session_state["hb_answer_drawn"] = (aid, _answer_text(aid))
    with st.form(f"hb_form_{view.assignment_id}", border=False):
        # Never disabled: Streamlit drops the value a disabled widget receives, which is how
        # "Give up" (it submits the form) used to lose the text typed so far. Its height
        # follows the answer's lines (within bounds) each time the page is drawn.
        st.text_area(
            ANSWER_LABEL, height=viewer.answer_box_height(_known_answer(aid)), key=_text_key(view.assignment_id),
            placeholder="Type or paste your answer here",
        )
        buttons = st.container(horizontal=True)
        # The first submit button is the one Ctrl+Enter presses.
        buttons.form_submit_button(
            "Submit answer", type="primary", width="stretch", disabled=confirming,
            on_click=on_submit, args=(view.assignment_id, question_name(view, with_total=False)),
        )
        buttons.form_submit_button("Pause", width="stretch", disabled=confirming,
                                   on_click=on_pause, args=(view.assignment_id,))
        buttons.form_submit_button("Give up", width="stretch", disabled=confirming,
                                   on_click=on_give_up_asked, args=(view.assignment_id,))
        # A button of the form, so the text typed so far comes with the click; after the
        # first one (Ctrl+Enter presses Submit). Keyed: a new label keeps the same button.
        first, last = (st.session_state.get(_key(name, aid)) for name in ("from", "to"))
        span = f" {first:,.0f}–{last:,.0f}" if first is not None and last is not None else ""
        if view.reference:  # lines to take from it
            st.form_submit_button(
                f"Add lines{span} to the answer", key=_key("add", aid), width="stretch", disabled=confirming,
                on_click=on_add_lines, args=(aid, view.reference),
                help="Adds lines From to To of the reference (set below), exactly as they are, on a "
                     "new line at the end of your answer. Saved as your draft.",
            )
    if view.reference:
        line_range(aid)
    if take_error := st.session_state.pop(_key("take_error", aid), None):
        st.error(take_error)
    if confirming:
        st.warning("Give up on this question? It is recorded as given up and cannot be answered later.")
        yes, no = st.columns(2)
        yes.button("Yes, give up", type="primary", width="stretch",
                   on_click=on_give_up_confirmed, args=(view.assignment_id, question_name(view, with_total=False)))
        no.button("No, keep answering", width="stretch", on_click=on_give_up_cancelled)
    else:
        st.caption("Ctrl+Enter (⌘+Enter on a Mac) submits. Your answer is saved as you type.")


# ---------------------------------------------------------------- a multiple-choice question (with or without an image)

IMAGE_LAYOUTS = {"beside": "Beside the question", "wide": "Full width"}


def _option_key(assignment_id: int, letter: str) -> str:
    return f"hb_opt_{letter}_{assignment_id}"


def image_question_screen(view: study.QuestionView) -> None:
    """A multiple-choice question: the image alone (when the item has one), and the question with
    its options A-D: nothing names the system, the paper or the image's file. Keys: A-D choose,
    Enter submits."""
    aid = view.assignment_id
    top_left, top_right = st.columns([4, 1], vertical_alignment="bottom")
    with top_left:
        st.progress((view.seq - 1) / view.total,
                    text=f"{'Practice question' if view.practice else 'Question'} **{view.seq}** of {view.total}")
    with top_right:
        clock(aid)
    show_messages()
    if not view.has_image:  # a text question with options: the options take the page's width
        options_panel(view)
        return
    layout = st.segmented_control("Image", list(IMAGE_LAYOUTS), format_func=IMAGE_LAYOUTS.get, default="beside",
                                  key="hb_image_layout", help="Full width shows the image as large as the page "
                                  "allows; the button at its top right shows it on the whole screen.")
    if layout == "wide":
        image_box(aid)
        options_panel(view)
    else:
        image_column, question_column = st.columns([3, 2], gap="medium")
        with image_column:
            image_box(aid)
        with question_column:
            options_panel(view)


def image_box(assignment_id: int) -> None:
    """The question's image in a frame (a blank image still shows where it is), as blinded pixels."""
    with st.container(border=True):
        try:
            # a file of this viewer's own: padding drawn from their session's nonce and the question
            nonce = st.session_state.setdefault("hb_media_nonce", secrets.token_bytes(16)) + str(assignment_id).encode()
            st.image(study.item_image(db, user["id"], assignment_id, nonce), width="stretch", output_format="PNG")
        except study.StudyError as error:
            st.error(f"The image of this question cannot be shown: {error}")


def options_panel(view: study.QuestionView) -> None:
    aid = view.assignment_id
    chosen = view.draft.strip().upper()
    kept = st.session_state.get("hb_chosen")
    if kept and kept[0] == aid:  # chosen in this run's callback (the view was read after it, so they agree)
        chosen = kept[1]
    st.markdown("**Question**")
    st.text(view.question)
    letters = tuple(choices.LETTERS[:len(view.options)])
    for letter, text in zip(letters, view.options):
        st.button(f"**{letter}**  {markdown_text(text)}", key=_option_key(aid, letter), width="stretch", wrap=True,
                  type="primary" if letter == chosen else "secondary", on_click=on_choose, args=(aid, letter),
                  help=f"Key {letter}")
    confirming = st.session_state.get("hb_confirm_give_up") == aid
    buttons = st.container(horizontal=True)
    name = question_name(view, with_total=False)
    buttons.button(f"Submit {chosen}" if chosen in letters else "Submit", key=f"hb_submit_{aid}", type="primary",
                   width="stretch", disabled=confirming or chosen not in letters,
                   on_click=on_submit_choice, args=(aid, name))
    buttons.button("Pause", key=f"hb_pause_{aid}", width="stretch", disabled=confirming,
                   on_click=on_pause_choice, args=(aid,))
    buttons.button("Give up", key=f"hb_give_up_{aid}", width="stretch", disabled=confirming,
                   on_click=on_give_up_asked, args=(aid,))
    if confirming:
        st.warning("Give up on this question? It is recorded as given up and cannot be answered later.")
        yes, no = st.columns(2)
        yes.button("Yes, give up", type="primary", width="stretch", on_click=on_give_up_confirmed, args=(aid, name))
        no.button("No, keep answering", width="stretch", on_click=on_give_up_cancelled)
    else:
        keys = ", ".join(letters)
        st.caption(f"Keys: **{keys}** choose an option, **Enter** submits the chosen one. "
                   "Your choice is saved as soon as you make it.")
    _option_keys(key=f"hb_keys_{aid}", data={"keys": {**{letter: _option_key(aid, letter) for letter in letters},
                                                     **({} if confirming else {"Enter": f"hb_submit_{aid}"})},
                                            "notes": choices.absent_option_notes(
                                                len(letters), choices.LETTERS[:max(4, len(letters))])})
    activity_watch(aid, answer_size=False)
    flag_box(view)


# ---------------------------------------------------------------- the page

st.title("Human baseline")
try:
    settings = study.clock_settings()
except study.StudyError as error:
    st.error(f"The study clock is misconfigured on the server: {error} Tell the study lead.")
    st.stop()
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
if chosen is None:
    show_messages()
    study_picker(studies)
    st.stop()
if chosen.rule_accepted_at is None:
    show_messages()
    rule_screen(chosen)
    st.stop()

with st.sidebar:
    own_progress_panel(chosen.id)

practice = study.pending_practice_feedback(db, chosen.id, user["id"])
if practice is not None and practice.response_id != st.session_state.get("hb_practice_seen"):
    _forget_box()
    show_messages()
    practice_feedback_screen(practice)
    st.stop()

# Studies this tab has shown: it takes no question of those back from another tab unasked.
seen = st.session_state.setdefault("hb_seen_studies", [])
try:
    current = study.open_question(db, chosen.id, user["id"], tab=tab_id,
                                  take_over=chosen.id not in seen, settings=settings)
except study.StudyError as error:
    st.error(str(error))
    st.stop()

if current is not None and not current.held_elsewhere and chosen.id not in seen:
    seen.append(chosen.id)
if current is None or current.held_elsewhere or current.paused:
    _forget_box()
    show_messages()
if current is None:
    finished_screen(chosen, studies)
elif current.held_elsewhere:
    taken_over_screen(current)
elif current.paused:
    paused_screen(current)
else:
    with st.expander("Study rule"):
        st.markdown(markdown_text(chosen.rule_text))
    question_screen(current)
