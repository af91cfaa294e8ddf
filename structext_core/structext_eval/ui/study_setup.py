"""The lead's form that opens a StrucText-Eval study (its member's ``STUDY_SETUP_VIEW``, called by
Study admin with ``(db, user, annotators)``)."""

from __future__ import annotations

import streamlit as st

from structext_core.structext_eval import samples, suites
from structext_core.structext_eval import study as structext_study
from structext_core.studio import study
from structext_core.ui.study_setup import created, form_key, quality_inputs


def structext_setup(db, user: dict, annotators: list[dict]) -> None:
    """A study drawn from a StrucText suite: free-text answers beside the sample's text."""
    suite_dir = suites.data_dir()
    with st.form(form_key("sa_new_study")):
        name = st.text_input("Study name", placeholder="e.g. hard-500-spring")
        left, middle, right = st.columns(3)
        suite_name = left.selectbox(
            "Suite", structext_study.available_suites(suite_dir),
            help=f"Test-Hard and Test are generated on first use; other suites are the "
                 f".jsonl files in {suite_dir}.",
        )
        n_items = middle.number_input("Number of questions", min_value=1, value=structext_study.DEFAULT_N_ITEMS, step=10)
        seed = right.number_input("Seed of the draw", min_value=0, value=0, step=1)
        chosen = st.multiselect(
            "Annotators", annotators, format_func=lambda u: u["username"],
            help="Every annotator gets the same questions, each in an own shuffled order.",
        )
        rule_text = st.text_area("Rule shown before the first question", value=structext_study.DEFAULT_RULE, height=110)
        show_correctness = st.checkbox(
            "Tell annotators after each answer whether it was correct", value=False,
            help="Off by default: feedback can change how people answer.",
        )
        quality = quality_inputs()
        st.caption("Questions are drawn in proportion to format x task x (depth, width); practice and gold "
                   "items come from the rest of the suite.")
        submitted = st.form_submit_button("Create study", type="primary")
    if submitted:
        create_study(db, user, name, suite_name, int(n_items), int(seed), chosen, rule_text, show_correctness,
                     **quality)


def create_study(db, user: dict, name, suite_name, n_items, seed, chosen, rule_text, show_correctness,
                 practice_items=0, gold_items=0, gold_pass=study.DEFAULT_GOLD_PASS) -> None:
    annotator_ids = [u["id"] for u in chosen]
    try:
        study.validate_setup(db, name, rule_text, annotator_ids)
        bar = st.progress(0.0, text=f"Loading {suite_name}…")
        pool = suites.load_or_generate(
            suite_name,
            progress=lambda done, total: bar.progress(done / total, text=f"Generating {suite_name}: {done:,} of {total:,}"),
        )
        bar.empty()
        study_id = structext_study.create_study(
            db, name=name, suite=suite_name, samples=pool, n_items=n_items, annotator_ids=annotator_ids,
            rule_text=rule_text, seed=seed, show_correctness=show_correctness, created_by=user["id"],
            practice_items=practice_items, gold_items=gold_items, gold_pass=gold_pass,
        )
    except (study.StudyError, samples.SampleError) as error:
        st.error(f"The study was not created. {error}")
        return
    created(db, study_id)
