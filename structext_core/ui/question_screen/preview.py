"""Preview as an annotator: the lead of a study (or an admin) walks through it exactly as its annotators
meet it (the consent text and the questionnaire of a crowd study, the rule, the practice questions, the
questions with their references or images, the end with the platform's code) and nothing is recorded: no answer, no clock, no assignment (the core's :func:`study.preview` reads
only; the answer boxes here live in this session and go nowhere).

Opened from the Studies page (``preview_button`` under the chosen study; ``show`` in place of the page
while a preview is open). The preview is a list of steps (:data:`STEPS`), each one screen or several,
in the order the annotator's page (``pages/human_baseline.py``, ``ui/crowd_gate.py``) shows them.
Another step is one more :class:`Step` in :data:`STEPS` at its place: ``screens(db, preview)`` says how
many screens it has in this study (0: the study has none, it is skipped), ``draw(run, index)`` draws one
of them with the annotator's own widgets, and :func:`next_screen` moves on (the annotator's own button,
e.g. "I agree: continue"). A screen that would write calls no core function that writes.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils
import streamlit as st

from structext_core.evaluation import choices
from structext_core.studio import access, study
from structext_core.studio.crowd import questionnaire
from structext_core.text.safe_text import markdown_text
from structext_core.ui import crowd_end, crowd_gate, light_answer, light_choice
from structext_core.ui.question_screen import text_answer
from structext_core.ui.question_screen.choice_answer import IMAGE_LAYOUTS, option_label
from structext_core.ui.question_screen.common import (
    ANSWER_LABEL,
    ANSWER_PLACEHOLDER,
    Screen,
    question_name,
    question_progress,
)
from structext_core.ui.question_screen.reference_viewer import reference_panel, window_component
from structext_core.ui.question_screen.screens import finished_screen
from structext_core.ui.question_screen.studies import rule_text

#: Session key of the open preview: ``{"study": id, "at": the screen's place}``.
PREVIEW_KEY = "pv_open"
#: The tab name the preview's reference tools are drawn for (no clock runs in it).
PREVIEW_TAB = "preview"
NOT_IN_PREVIEW = "Not in a preview: nothing is recorded."


@dataclass(frozen=True)
class PreviewRun:
    """One run of the preview: the database, who previews, what the study shows, and the question
    screen's :class:`~.common.Screen` (for the reference viewer; no clock, no tab holds anything)."""

    db: sqlite_utils.Database
    user: dict
    preview: study.Preview
    screen: Screen


@dataclass(frozen=True)
class Step:
    """A step an annotator goes through: ``screens(db, preview)`` screens (0: none in this study), each
    drawn by ``draw(run, index)``; ``title(index)`` names one in the preview's chooser."""

    key: str
    screens: Callable[[sqlite_utils.Database, study.Preview], int]
    draw: Callable[[PreviewRun, int], None]
    title: Callable[[study.Preview, int], str]


# ---------------------------------------------------------------- moving through it


def start(study_id: int) -> None:
    """Open the preview of ``study_id`` at its first screen."""
    st.session_state[PREVIEW_KEY] = {"study": study_id, "at": 0}
    st.session_state.pop("pv_declined", None)


def end() -> None:
    """Close the preview (back to the Studies page)."""
    st.session_state.pop(PREVIEW_KEY, None)
    st.session_state.pop("pv_declined", None)


def next_screen() -> None:
    """On to the next screen (the annotator's own button: start, submit, next)."""
    st.session_state[PREVIEW_KEY]["at"] += 1


def _go(delta: int) -> None:
    st.session_state[PREVIEW_KEY]["at"] += delta


def _jump() -> None:
    st.session_state[PREVIEW_KEY]["at"] = st.session_state["pv_jump"]


def preview_button(user: dict, chosen) -> None:
    """The button that opens the preview of ``chosen`` (a study the user runs)."""
    # The browser's own button (light_choice.actions): Streamlit's made the browser load its code on the
    # Studies dashboard's first view (issue 46).
    light_choice.actions(f"pv_start_{chosen.id}", [("preview", "Preview as an annotator", lambda: start(chosen.id))],
                         label="Preview", tips={"preview": "See the study exactly as its annotators do: the rule, "
                                                "practice, the questions and the end. Nothing is recorded: no "
                                                "answer, no clock, no place in the study."})


# ---------------------------------------------------------------- the steps


def _rule(run: PreviewRun, index: int) -> None:
    rule_text(run.screen.settings, run.preview.study)
    st.button("I have read the rule: start", type="primary", key="pv_rule_start", on_click=next_screen)


def _question_screens(kind: str):
    def screens(db, preview: study.Preview) -> int:
        return len(preview.practice if kind == "practice" else preview.counted)
    return screens


def _question_step(kind: str):
    def draw(run: PreviewRun, index: int) -> None:
        views = run.preview.practice if kind == "practice" else run.preview.counted
        question(run, views[index])
    return draw


def _question_title(kind: str):
    def title(preview: study.Preview, index: int) -> str:
        views = preview.practice if kind == "practice" else preview.counted
        return question_name(views[index]).capitalize()
    return title


def _declined(declined: bool) -> None:
    st.session_state["pv_declined"] = declined


def _consent(run: PreviewRun, index: int) -> None:
    """The consent text and its two answers (crowd_gate's screen); "I do not agree" shows the end a person
    who declines reaches, with the platform's no-consent code."""
    chosen, text = run.preview.study, run.preview.consent
    if st.session_state.get("pv_declined"):
        end_screen(run.preview.end("declined"))
        st.button("Back to the consent text", key="pv_undecline", on_click=_declined, args=(False,))
        return
    st.subheader(markdown_text(f"Before you start: consent to take part in {chosen.name}"))
    with st.container(border=True):
        st.markdown(markdown_text(text.text))
    st.caption("Nothing is timed yet: the study's questions and their clock start only after this.")
    agree, decline = st.columns(2)
    agree.button("I agree: continue", type="primary", width="stretch", key="pv_agree", on_click=next_screen)
    decline.button("I do not agree", width="stretch", key="pv_decline", on_click=_declined, args=(True,))


def _questionnaire(run: PreviewRun, index: int) -> None:
    """The questionnaire (crowd_gate's widgets); the answers are checked as the core checks them, kept nowhere."""
    chosen = run.preview.study
    st.subheader(markdown_text(f"A few questions about you, for {chosen.name}"))
    st.caption("Your answers describe who took part; they are not scored. Nothing is timed yet.")
    with st.form("pv_questionnaire"):
        values = {field["name"]: crowd_gate._field_widget(field) for field in run.preview.questionnaire}
        sent = st.form_submit_button("Continue", type="primary")
    if not sent:
        return
    try:
        for field in run.preview.questionnaire:
            questionnaire.check_answer(field, values[field["name"]])
    except study.StudyError as error:
        st.error(markdown_text(str(error)))
        return
    next_screen()
    st.rerun()


def end_screen(end) -> None:
    """The end of a visit as crowd_end draws it, without sending this tab to the platform: the button
    back to it is shown, and what the annotator's tab does is said."""
    crowd_end.end_screen(dataclasses.replace(end, url=None))
    if end.url:
        st.link_button(crowd_end.RETURN_LABEL, end.url, type="primary")
        st.caption(f"An annotator is taken back to the study platform in {crowd_end.REDIRECT_SECONDS} seconds "
                   "(not in a preview).")


def _end(run: PreviewRun, index: int) -> None:
    """The end: the platform's code and address when the lead set them (crowd_gate's end screen), else the
    study's own finished screen."""
    end = run.preview.end()
    if end.code or end.url:
        end_screen(end)
    else:
        finished_screen(run.screen, run.preview.study, [run.preview.study])


STEPS: tuple[Step, ...] = (
    Step("consent", lambda db, p: int(p.consent is not None), _consent, lambda p, i: "Consent"),
    Step("questionnaire", lambda db, p: int(bool(p.questionnaire)), _questionnaire, lambda p, i: "About you"),
    Step("rule", lambda db, p: 1, _rule, lambda p, i: "The rule"),
    Step("practice", _question_screens("practice"), _question_step("practice"), _question_title("practice")),
    Step("questions", _question_screens("questions"), _question_step("questions"), _question_title("questions")),
    Step("end", lambda db, p: 1, _end, lambda p, i: "The end"),
)


def screens_of(db: sqlite_utils.Database, preview: study.Preview,
               steps: tuple[Step, ...] = STEPS) -> list[tuple[Step, int]]:
    """Every screen of the preview, in order: (step, index within the step)."""
    return [(step, index) for step in steps for index in range(step.screens(db, preview))]


# ---------------------------------------------------------------- a question, as the annotator's screen draws it


def _image(run: PreviewRun, view: study.QuestionView) -> None:
    with st.container(border=True):
        try:
            nonce = st.session_state.setdefault("pv_media_nonce", secrets.token_bytes(16)) + str(view.item_id).encode()
            st.image(study.preview_image(run.db, run.user, view.study_id, view.item_id, nonce), width="stretch",
                     output_format="PNG")
        except study.StudyError as error:
            st.error(f"The image of this question cannot be shown: {error}")


def _choose(item_id: int, letter: str) -> None:
    st.session_state["pv_chosen"] = (item_id, letter)


def _options(run: PreviewRun, view: study.QuestionView) -> None:
    kept = st.session_state.get("pv_chosen")
    chosen = kept[1] if kept and kept[0] == view.item_id else ""
    st.markdown("**Question**")
    st.text(view.question)
    letters = tuple(choices.LETTERS[:len(view.options)])
    for letter, text in zip(letters, view.options):
        st.button(option_label(letter, text), key=f"pv_opt_{letter}_{view.item_id}", width="stretch", wrap=True,
                  type="primary" if letter == chosen else "secondary", on_click=_choose, args=(view.item_id, letter))
    buttons = st.container(horizontal=True)
    buttons.button(f"Submit {chosen}" if chosen in letters else "Submit", key=f"pv_submit_{view.item_id}",
                   type="primary", width="stretch", disabled=chosen not in letters, on_click=next_screen)
    buttons.button("Pause", key=f"pv_pause_{view.item_id}", width="stretch", disabled=True, help=NOT_IN_PREVIEW)
    buttons.button("Give up", key=f"pv_give_up_{view.item_id}", width="stretch", disabled=True, help=NOT_IN_PREVIEW)
    st.caption(f"Keys: **{', '.join(letters)}** choose an option, **Enter** submits the chosen one. "
               "Your choice is saved as soon as you make it.")


def _answer_box(view: study.QuestionView) -> None:
    """The annotator's answer element (:mod:`light_answer`), its question above: *Submit answer* moves on and
    records nothing; *Pause* and *Give up* take no click in a preview."""
    light_answer.box(
        f"pv_answer_{view.item_id}", label=ANSWER_LABEL, text="", version=0, blocks=text_answer.question_blocks(view),
        buttons=[light_answer.Button(text_answer.SUBMIT, "Submit answer", primary=True),
                 light_answer.Button(text_answer.PAUSE, "Pause", help=NOT_IN_PREVIEW, disabled=True),
                 light_answer.Button(text_answer.GIVE_UP, "Give up", help=NOT_IN_PREVIEW, disabled=True)],
        on_action=lambda sent: next_screen(), max_chars=text_answer.MAX_ANSWER_CHARS,
        rows=text_answer.ROWS, placeholder=ANSWER_PLACEHOLDER, hint=text_answer.HINT,
    )


def question(run: PreviewRun, view: study.QuestionView) -> None:
    """One question as the annotator's screen shows it: progress, the clock's place, the reference or
    image, the question and the answer's controls."""
    top_left, top_right = st.columns([4, 1], vertical_alignment="bottom")
    with top_left:
        question_progress(view)
    with top_right:
        st.markdown("**0:00**", help="The question's clock: it runs while the question is on an annotator's "
                                     "screen. Not in a preview.")
    with st.expander("Study rule"):
        st.markdown(markdown_text(run.preview.study.rule_text))
    if view.options:
        if not view.has_image:
            _options(run, view)
            return
        layout = st.segmented_control("Image", list(IMAGE_LAYOUTS), format_func=IMAGE_LAYOUTS.get, default="beside",
                                      key="pv_image_layout")
        if layout == "wide":
            _image(run, view)
            _options(run, view)
            return
        image_column, question_column = st.columns([3, 2], gap="medium")
        with image_column:
            _image(run, view)
        with question_column:
            _options(run, view)
        return
    if view.has_reference_panel:
        side, answer_column = st.columns([3, 2], gap="medium")
        with side:
            reference_panel(run.screen, view)
    elif view.has_image:
        side, answer_column = st.columns([3, 2], gap="medium")
        with side:
            _image(run, view)
    else:
        answer_column = st.container()
    with answer_column:
        _answer_box(view)
    if view.practice:
        st.caption("After a practice answer an annotator sees their score and the answer key (unless another "
                   "open study still asks the question), before the next question.")


# ---------------------------------------------------------------- the preview in place of the page


def show(db: sqlite_utils.Database, user: dict) -> bool:
    """Draw the open preview, if there is one (True: the page draws nothing else)."""
    state = st.session_state.get(PREVIEW_KEY)
    if state is None:
        return False
    try:
        shown = study.preview(db, user, state["study"])
    except (study.StudyError, access.AccessError) as error:
        end()
        st.error(f"The preview cannot be shown. {error}")
        return False
    places = screens_of(db, shown)
    at = max(0, min(int(state["at"]), len(places) - 1))
    state["at"] = at
    with st.container(border=True):
        st.markdown(markdown_text(f"**Preview of {shown.study.name}** as its annotators see it: nothing you do "
                                  "here is recorded (no answer, no clock, no place in the study)."))
        bar = st.container(horizontal=True, vertical_alignment="bottom")
        bar.button("Back", key="pv_back", disabled=at == 0, on_click=_go, args=(-1,), icon=":material/arrow_back:")
        st.session_state["pv_jump"] = at
        bar.selectbox("Screen", list(range(len(places))), key="pv_jump", on_change=_jump,
                      format_func=lambda i: f"{i + 1} of {len(places)}: {places[i][0].title(shown, places[i][1])}")
        bar.button("Next", key="pv_next", disabled=at >= len(places) - 1, on_click=_go, args=(1,),
                   icon=":material/arrow_forward:")
        bar.button("End the preview", key="pv_end", on_click=end, type="primary", icon=":material/close:")
    step, index = places[at]
    screen = Screen(user["id"], PREVIEW_TAB, study.clock_settings(), window=window_component())
    step.draw(PreviewRun(db, user, shown, screen), index)
    return True
