"""The lead's form that opens an AIBench study (its member's ``STUDY_SETUP_VIEW``, called by
Study admin with ``(db, user, annotators)``)."""

from __future__ import annotations

import streamlit as st

from structext_core.aibench import store as aibench_store
from structext_core.aibench import study as aibench_study
from structext_core.studio import study
from structext_core.ui.study_setup import created, form_key, quality_inputs


def aibench_setup(db, user: dict, annotators: list[dict]) -> None:
    """A study whose items are (a system's image of a paper, one of its questions)."""
    datasets = aibench_store.stored_datasets()
    if not datasets:
        st.info("There is no stored AIBench data set yet: import one, or let the app build the synthetic one, under "
                "**Results** (AIBench).")
        return
    with st.form(form_key("sa_new_aibench_study")):
        name = st.text_input("Study name", placeholder="e.g. images-pilot")
        left, middle, right = st.columns(3)
        dataset = left.selectbox("Data set", datasets, help="A stored AIBench data set: papers, questions and "
                                                            "every system's image of each paper.")
        n_items = middle.number_input("Number of questions", min_value=1, value=60, step=10)
        seed = right.number_input("Seed of the draw", min_value=0, value=0, step=1)
        chosen = st.multiselect("Annotators", annotators, format_func=lambda u: u["username"],
                                help="Every annotator gets the same questions, each in an own shuffled order.")
        rule_text = st.text_area("Rule shown before the first question", value=aibench_study.DEFAULT_AIBENCH_RULE, height=110)
        show_correctness = st.checkbox("Tell annotators after each answer whether it was correct", value=False,
                                       help="Off by default: feedback can change how people answer.")
        quality = quality_inputs(gold_help="Level-1 questions (is this component in the figure?) on original "
                                           "figures, mixed in at random places; annotators cannot tell them apart.")
        st.caption("Each paper is shown through one system's image only (seen once, an image would help with "
                   "another image of the same paper); systems are dealt to papers in turn within each conference. "
                   "Questions are drawn in proportion to level x system x conference. Practice and gold use papers "
                   "of their own, on the original figure, where the key is certain.")
        submitted = st.form_submit_button("Create study", type="primary")
    if submitted:
        annotator_ids = [u["id"] for u in chosen]
        try:
            study_id = aibench_study.create_aibench_study(
                db, name=name, dataset=dataset, n_items=int(n_items), annotator_ids=annotator_ids,
                rule_text=rule_text, seed=int(seed), show_correctness=show_correctness, created_by=user["id"],
                **quality)
        except study.StudyError as error:
            st.error(f"The study was not created. {error}")
            return
        created(db, study_id)
