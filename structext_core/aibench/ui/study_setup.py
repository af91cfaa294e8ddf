"""The lead's form that opens an AIBench study (its member's ``STUDY_SETUP_VIEW``, called by
Study admin with ``(db, user, annotators)``)."""

from __future__ import annotations

import streamlit as st

from structext_core.aibench import store as aibench_store
from structext_core.aibench import study as aibench_study
from structext_core.studio import study
from structext_core.text import limits
from structext_core.ui import light_form
from structext_core.ui.study_setup import created, form_key, people_and_rule_fields, people_and_rule_values

#: Gold items in an AIBench study, as the form's help says it.
GOLD_HELP = ("Level-1 questions (is this component in the figure?) on original figures, mixed in at random places; "
             "annotators cannot tell them apart.")


def aibench_setup(db, user: dict, annotators: list[dict]) -> None:
    """A study whose items are (a system's image of a paper, one of its questions)."""
    datasets = aibench_store.stored_datasets()
    if not datasets:
        st.info("There is no stored AIBench data set yet: import one, or let the app build the synthetic one, under "
                "**Results** (AIBench).")
        return
    st.caption("Each paper is shown through one system's image only (seen once, an image would help with another "
               "image of the same paper); systems are dealt to papers in turn within each conference. Questions are "
               "drawn in proportion to level x system x conference. Practice and gold use papers of their own, on the "
               "original figure, where the key is certain.")
    # One light form (one element, where an st.form of Streamlit's widgets made the lead's click on the tab
    # wait for each widget's code; issue 46).
    sent = light_form.form(form_key("sa_new_aibench_study"), [
        light_form.Text("name", "Study name", placeholder="e.g. images-pilot", max_chars=limits.MAX_NAME_CHARS),
        (light_form.Choice("dataset", "Data set", {name: name for name in datasets},
                           help="A stored AIBench data set: papers, questions and every system's image of each paper."),
         light_form.Number("n_items", "Number of questions", 60, min_value=1),
         light_form.Number("seed", "Seed of the draw", 0, min_value=0)),
        *people_and_rule_fields(annotators, rule=aibench_study.DEFAULT_AIBENCH_RULE, gold_help=GOLD_HELP),
    ], "Create study")
    if sent is None:
        return
    try:
        study_id = aibench_study.create_aibench_study(
            db, name=sent["name"], dataset=sent["dataset"], n_items=sent["n_items"], seed=sent["seed"],
            created_by=user["id"], **people_and_rule_values(sent))
    except study.StudyError as error:
        st.error(f"The study was not created. {error}")
        return
    created(db, study_id)
