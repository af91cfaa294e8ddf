"""The lead's form that opens a StrucText-Eval study (its member's ``STUDY_SETUP_VIEW``, called by
Study admin with ``(db, user, annotators)``)."""

from __future__ import annotations

import streamlit as st

from structext_core.structext_eval import samples, suites
from structext_core.structext_eval import study as structext_study
from structext_core.studio import study
from structext_core.text import limits
from structext_core.ui import light_form
from structext_core.ui.study_setup import created, files_help, form_key, people_and_rule_fields, people_and_rule_values


def structext_setup(db, user: dict, annotators: list[dict]) -> None:
    """A study drawn from a StrucText suite: free-text answers beside the sample's text. One light form (one
    element, where an ``st.form`` of eleven widgets made the lead's click on the tab wait for each widget's
    code; issue 46)."""
    suite_dir = suites.data_dir()
    available = structext_study.available_suites(suite_dir)
    sent = light_form.form(form_key("sa_new_study"), [
        light_form.Text("name", "Study name", placeholder="e.g. hard-500-spring", max_chars=limits.MAX_NAME_CHARS),
        (light_form.Choice("suite", "Suite", {name: name for name in available},
                           help="Test-Hard and Test are generated on first use; other suites are "
                                + files_help(user, "the .jsonl files", suite_dir, "the .jsonl files an admin adds on Home.")),
         light_form.Number("n_items", "Number of questions", structext_study.DEFAULT_N_ITEMS, min_value=1,
                           help="Drawn in proportion to format x task x (depth, width); practice and gold items come "
                                "from the rest of the suite."),
         light_form.Number("seed", "Seed of the draw", 0, min_value=0)),
        *people_and_rule_fields(annotators, rule=structext_study.DEFAULT_RULE),
    ], "Create study")
    if sent is not None:
        create_study(db, user, sent["name"], sent["suite"], sent["n_items"], sent["seed"], **people_and_rule_values(sent))


def create_study(db, user: dict, name, suite_name, n_items, seed, annotator_ids, rule_text, show_correctness,
                 practice_items=0, gold_items=0, gold_pass=study.DEFAULT_GOLD_PASS) -> None:
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
