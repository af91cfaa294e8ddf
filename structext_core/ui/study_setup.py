"""The lead's forms that open a study, one a benchmark (its member's ``STUDY_SETUP_VIEW``, called
by Study admin with ``(db, user, annotators)``), and what they share (practice and gold inputs)."""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.aibench import store as aibench_store
from structext_core.structext_eval import samples, suites
from structext_core.studio import study
from structext_core.text.words import plural


def structext_setup(db, user: dict, annotators: list[dict]) -> None:
    """A study drawn from a StrucText suite: free-text answers beside the sample's text."""
    suite_dir = suites.data_dir()
    with st.form("sa_new_study"):
        name = st.text_input("Study name", placeholder="e.g. hard-500-spring")
        left, middle, right = st.columns(3)
        suite_name = left.selectbox(
            "Suite", study.available_suites(suite_dir),
            help=f"Test-Hard and Test are generated on first use; other suites are the "
                 f".jsonl files in {suite_dir}.",
        )
        n_items = middle.number_input("Number of questions", min_value=1, value=study.DEFAULT_N_ITEMS, step=10)
        seed = right.number_input("Seed of the draw", min_value=0, value=0, step=1)
        chosen = st.multiselect(
            "Annotators", annotators, format_func=lambda u: u["username"],
            help="Every annotator gets the same questions, each in an own shuffled order.",
        )
        rule_text = st.text_area("Rule shown before the first question", value=study.DEFAULT_RULE, height=110)
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


def aibench_setup(db, user: dict, annotators: list[dict]) -> None:
    """A study whose items are (a system's image of a paper, one of its questions)."""
    datasets = aibench_store.stored_datasets()
    if not datasets:
        st.info("There is no stored AIBench data set yet: import one, or let the app build the synthetic one, under "
                "**Results** (AIBench).")
        return
    with st.form("sa_new_aibench_study"):
        name = st.text_input("Study name", placeholder="e.g. images-pilot")
        left, middle, right = st.columns(3)
        dataset = left.selectbox("Data set", datasets, help="A stored AIBench data set: papers, questions and "
                                                            "every system's image of each paper.")
        n_items = middle.number_input("Number of questions", min_value=1, value=60, step=10)
        seed = right.number_input("Seed of the draw", min_value=0, value=0, step=1)
        chosen = st.multiselect("Annotators", annotators, format_func=lambda u: u["username"],
                                help="Every annotator gets the same questions, each in an own shuffled order.")
        rule_text = st.text_area("Rule shown before the first question", value=study.DEFAULT_AIBENCH_RULE, height=110)
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
            study_id = study.create_aibench_study(
                db, name=name, dataset=dataset, n_items=int(n_items), annotator_ids=annotator_ids,
                rule_text=rule_text, seed=int(seed), show_correctness=show_correctness, created_by=user["id"],
                **quality)
        except study.StudyError as error:
            st.error(f"The study was not created. {error}")
            return
        counts = study.get_study(db, study_id).counts
        ui.flash("success", f"Study {name.strip()!r} created over {dataset} for "
                            f"{plural(len(annotator_ids), 'annotator')}: each answers {counts.breakdown}.")
        st.session_state["sa_study_id"] = study_id
        st.rerun()


def quality_inputs(gold_help: str = "Items with short, clear answers mixed in at random places; annotators cannot "
                                    "tell them apart.") -> dict:
    """Practice round and gold items of a new study (inside the setup form)."""
    practice_col, gold_col, pass_col = st.columns(3)
    practice = practice_col.number_input(
        "Practice items", min_value=0, max_value=study.MAX_PRACTICE_ITEMS, value=0, step=1,
        help="Answered first by every annotator, who then sees the score and the answer key. "
             "Not counted anywhere.")
    gold = gold_col.number_input(
        "Gold items", min_value=0, value=0, step=1,
        help=f"{gold_help} Not counted in the baseline: they show whose work to check.")
    gold_pass = pass_col.number_input(
        "Gold pass mark (%)", min_value=0, max_value=100, value=round(100 * study.DEFAULT_GOLD_PASS), step=5,
        help="An annotator whose share of gold items passed is below this is flagged on the dashboard.")
    return {"practice_items": int(practice), "gold_items": int(gold), "gold_pass": gold_pass / 100}


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
        study_id = study.create_study(
            db, name=name, suite=suite_name, samples=pool, n_items=n_items, annotator_ids=annotator_ids,
            rule_text=rule_text, seed=seed, show_correctness=show_correctness, created_by=user["id"],
            practice_items=practice_items, gold_items=gold_items, gold_pass=gold_pass,
        )
    except (study.StudyError, samples.SampleError) as error:
        st.error(f"The study was not created. {error}")
        return
    counts = study.QuestionCounts(n_items, gold_items, practice_items)
    ui.flash("success", f"Study {name.strip()!r} created for "
                        f"{plural(len(annotator_ids), 'annotator')}: each answers {counts.breakdown}.")
    st.session_state["sa_study_id"] = study_id
    st.rerun()
