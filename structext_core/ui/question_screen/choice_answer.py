"""A multiple-choice question: a question with lettered options, and an image where its benchmark
draws one. The image arrives as blinded pixels asked for by the assignment's id (nothing that names
its maker, source or file), the chosen option is the draft saved on the server (a reload shows it
chosen), the option letters choose and Enter submits (``structext_core.ui.option_keys``).
"""

from __future__ import annotations

import secrets

import streamlit as st

from structext_core import ui
from structext_core.evaluation import choices
from structext_core.studio import study
from structext_core.text.safe_text import markdown_text
from structext_core.ui.question_screen.common import (
    Screen,
    after_answer,
    confirm_give_up,
    on_give_up_asked,
    question_name,
    report,
    show_messages,
)
from structext_core.ui.question_screen.flag import flag_box
from structext_core.ui.question_screen.watches import activity_watch, progress_and_clock

IMAGE_LAYOUTS = {"beside": "Beside the question", "wide": "Full width"}


def _option_key(assignment_id: int, letter: str) -> str:
    return f"hb_opt_{letter}_{assignment_id}"


def option_label(letter: str, text: str) -> str:
    """An option's button as the question screen draws it: its letter in bold, a middle dot, then its
    text (two spaces collapsed in the browser, so options that are letters themselves read "A E")."""
    return f"**{letter}** · {markdown_text(text)}"


def on_choose(screen: Screen, assignment_id: int, letter: str) -> None:
    """An option chosen (click or key): saved on the server as the draft, at once."""
    status = report(screen, study.record_activity, assignment_id, screen.tab, draft=letter, settings=screen.settings)
    if status is not None and status.draft_saved:
        st.session_state["hb_chosen"] = (assignment_id, letter)


def on_submit_choice(screen: Screen, assignment_id: int, name: str) -> None:
    """Submit the option saved as chosen (the server's draft, never an older one on the page)."""
    after_answer(screen, report(screen, study.submit_draft, assignment_id, tab=screen.tab, settings=screen.settings),
                 name)


def on_pause_choice(screen: Screen, assignment_id: int) -> None:
    report(screen, study.pause_question, assignment_id, None, tab=screen.tab)


def image_question_screen(screen: Screen, view: study.QuestionView) -> None:
    """A multiple-choice question: the image alone (when the item has one), and the question with
    its options A-D: nothing names the system, the paper or the image's file. Keys: A-D choose,
    Enter submits."""
    aid = view.assignment_id
    progress_and_clock(screen, view)
    show_messages()
    if not view.has_image:  # a text question with options: the options take the page's width
        options_panel(screen, view)
        return
    layout = st.segmented_control("Image", list(IMAGE_LAYOUTS), format_func=IMAGE_LAYOUTS.get, default="beside",
                                  key="hb_image_layout", help="Full width shows the image as large as the page "
                                  "allows; the button at its top right shows it on the whole screen.")
    if layout == "wide":
        image_box(screen, aid)
        options_panel(screen, view)
    else:
        image_column, question_column = st.columns([3, 2], gap="medium")
        with image_column:
            image_box(screen, aid)
        with question_column:
            options_panel(screen, view)


def image_box(screen: Screen, assignment_id: int) -> None:
    """The question's image in a frame (a blank image still shows where it is), as blinded pixels."""
    with st.container(border=True):
        try:
            # a file of this viewer's own: padding drawn from their session's nonce and the question
            nonce = st.session_state.setdefault("hb_media_nonce", secrets.token_bytes(16)) + str(assignment_id).encode()
            st.image(study.item_image(ui.get_db(), screen.user_id, assignment_id, nonce), width="stretch",
                     output_format="PNG")
        except study.StudyError as error:
            st.error(f"The image of this question cannot be shown: {error}")


def options_panel(screen: Screen, view: study.QuestionView) -> None:
    aid = view.assignment_id
    chosen = view.draft.strip().upper()
    kept = st.session_state.get("hb_chosen")
    if kept and kept[0] == aid:  # chosen in this run's callback (the view was read after it, so they agree)
        chosen = kept[1]
    st.markdown("**Question**")
    st.text(view.question)
    letters = tuple(choices.LETTERS[:len(view.options)])
    for letter, text in zip(letters, view.options):
        st.button(option_label(letter, text), key=_option_key(aid, letter), width="stretch", wrap=True,
                  type="primary" if letter == chosen else "secondary", on_click=on_choose,
                  args=(screen, aid, letter), help=f"Key {letter}")
    confirming = st.session_state.get("hb_confirm_give_up") == aid
    buttons = st.container(horizontal=True)
    name = question_name(view, with_total=False)
    buttons.button(f"Submit {chosen}" if chosen in letters else "Submit", key=f"hb_submit_{aid}", type="primary",
                   width="stretch", disabled=confirming or chosen not in letters,
                   on_click=on_submit_choice, args=(screen, aid, name))
    buttons.button("Pause", key=f"hb_pause_{aid}", width="stretch", disabled=confirming,
                   on_click=on_pause_choice, args=(screen, aid))
    buttons.button("Give up", key=f"hb_give_up_{aid}", width="stretch", disabled=confirming,
                   on_click=on_give_up_asked, args=(screen, aid))
    if confirming:
        confirm_give_up(screen, aid, name)
    else:
        keys = ", ".join(letters)
        st.caption(f"Keys: **{keys}** choose an option, **Enter** submits the chosen one. "
                   "Your choice is saved as soon as you make it.")
    screen.option_keys(key=f"hb_keys_{aid}", data={"keys": {**{letter: _option_key(aid, letter) for letter in letters},
                                                           **({} if confirming else {"Enter": f"hb_submit_{aid}"})},
                                                  "notes": choices.absent_option_notes(
                                                      len(letters), choices.LETTERS[:max(4, len(letters))])})
    activity_watch(screen, aid)
    flag_box(screen, view)
