"""Before and beside the questions: the studies an annotator takes part in (a chooser, and a list to
start from in two studies or more), the study's rule to accept before the first question, and the
annotator's own progress in the sidebar.
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import access, study
from structext_core.text.safe_text import box_html, markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_choice, widgets
from structext_core.ui.question_screen.common import Screen, idle_time, report
from structext_core.views import your_studies
from structext_core.views.your_studies import STUDY_PARAM


def on_study_chosen() -> None:
    """Keep the chosen study for this tab (and in the URL, for a reload)."""
    chosen = st.session_state.get("hb_study")
    if isinstance(chosen, int):
        st.session_state["hb_study_id"] = chosen
        st.query_params[STUDY_PARAM] = str(chosen)


def on_accept_rule(screen: Screen, study_id: int) -> None:
    report(screen, lambda db, user_id: study.accept_rule(db, study_id, user_id))


def study_picker(studies: list[study.AnnotatorStudy]) -> None:
    """In two studies or more, the tab starts here: each study with the person's progress and a link
    that opens it (its id in the address). Nothing opens, and no clock starts, until they choose."""
    st.subheader("Choose a study")
    st.caption(f"You take part in {len(studies)} open studies. A question opens, and its clock starts, only "
               "once you choose a study; you can switch between them at the top of the page later.")
    # every study in one block: a frame, a link and a progress bar each (views/your_studies.py)
    widgets.html_block(your_studies.studies_html(studies, access.page("human_baseline").url_path,
                                                 open_finished=True))


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
    # The chooser's value is set from the kept choice on every run (by the study's id: its label changes
    # with every answer). A light element, where st.selectbox made the browser load its code (a score of
    # files) on every question page of a person in two studies (issue 46).
    st.session_state["hb_study"] = wanted
    chosen = light_choice.choose("Study", ids, key="hb_study", on_change=on_study_chosen, ident=str,
                                 format_func=lambda sid: by_id[sid].label if sid in by_id else str(sid))
    return by_id.get(chosen, by_id[wanted])


def rule_screen(screen: Screen, chosen: study.AnnotatorStudy) -> None:
    rule_text(screen.settings, chosen)
    st.button("I have read the rule: start", type="primary", on_click=on_accept_rule,
              args=(screen, chosen.id))


def rule_text(settings: study.ClockSettings, chosen: study.AnnotatorStudy) -> None:
    """The study's rule and how the questions go, as a new annotator reads it (also the lead's preview)."""
    st.subheader(markdown_text(f"Before you start: the rule of {chosen.name}"))
    with st.container(border=True):
        st.markdown(markdown_text(chosen.rule_text))
    idle = (f" After {idle_time(settings)} without any input (keys, mouse, scrolling) the question "
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


PROGRESS_HELP = ("Active time counts every question of this study so far, the open one up to when this page last "
                 "changed (a new question, a pause, a resume). Pauses: with the Pause button; idle auto-pauses: "
                 "after no input.")


def own_progress_panel(screen: Screen, study_id: int) -> None:
    """The annotator's own day in the study (sidebar): answered of the counted questions,
    active time, breaks (Pause, and idle auto-pauses apart). Nothing about any item. Drawn
    with each page run (a new question, a pause, a resume): no run of its own."""
    mine = study.own_progress(ui.get_db(), study_id, screen.user_id, grace_seconds=screen.settings.grace_seconds)
    # one light block, where a bordered container held two Markdown elements (issue 46)
    widgets.html_block(box_html("Your progress", mine.rows, help=PROGRESS_HELP), st.sidebar, light=True)
