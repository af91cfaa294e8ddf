"""The lead's form that opens a study of a lab's set (its member's ``STUDY_SETUP_VIEW``, called by
Study admin with ``(db, user, annotators)``): "Bring a set" above it (a set uploaded, checked and
imported, :mod:`structext_core.labset.ui.bring_set`), then the set chosen from the sets folder, read
and checked, its scoring rules shown, then drawn."""

from __future__ import annotations

import streamlit as st

from structext_core.labset import dataset, member
from structext_core.labset import study as lab_study
from structext_core.labset.ui.bring_set import IMPORTED, bring_set_section
from structext_core.studio import study
from structext_core.ui.study_setup import created, form_key, people_and_rule


def labset_setup(db, user: dict, annotators: list[dict]) -> None:
    folder = lab_study.sets_dir()
    bring_set_section(db, user, expanded=not lab_study.available_sets(folder))
    names = lab_study.available_sets(folder)  # with a set just brought
    if not names:
        st.info(f"No set yet: bring one above, or import one on the server with `labset import FILE` (JSONL, "
                f"JSON, CSV, Parquet or a datasets folder), or put a .jsonl, .csv or Inspect .json file (with its "
                f"images beside it) in {folder}.")
        return
    brought = st.session_state.get(IMPORTED) or {}
    brought_rule = brought.get("rule", dataset.RULES[0])
    # The set is chosen before the form, so a set with no short answer is asked no rule for them. No
    # key: a set just brought is a new list of names, so a new box, which starts on that set.
    set_name = st.selectbox("Set", names, help=f"The files in {folder}.",
                            index=names.index(brought["name"]) if brought.get("name") in names else 0)
    no_short_answer = lab_study.short_answers(folder / set_name) == 0
    with st.form(form_key("sa_new_labset_study")):
        name = st.text_input("Study name", placeholder="e.g. lab-set-pilot")
        left, right = st.columns(2)
        n_items = left.number_input("Number of questions", min_value=1, value=40, step=10)
        seed = right.number_input("Seed of the draw", min_value=0, value=0, step=1)
        if no_short_answer:
            rule, own_rule = dataset.RULES[0], ""
            st.caption(f"No short answer in {set_name}, so no rule to score them by.")
        else:
            rule = st.selectbox("Short answers are scored", dataset.RULES,
                                index=dataset.RULES.index(brought_rule) if brought_rule in dataset.RULES else 0,
                                help="Unless a question's metadata.answer_rule says otherwise. exact, match, "
                                     "includes and answer are Inspect AI's scorers of those names, as its "
                                     "version pinned here scores.")
            own_rule = st.text_input("Or a rule of your own",
                                     placeholder=r"e.g. pattern(ANSWER: (\w+), match_all=true)",
                                     value="" if brought_rule in dataset.RULES else brought_rule,
                                     help="Any rule of the syntax (docs/reference/scoring.md); when given, it is "
                                          "the rule instead of the one chosen above.")
        strata_key = st.text_input("Metadata field of the strata", value=brought.get("strata", "subject"))
        setup = people_and_rule(annotators)
        submitted = st.form_submit_button("Create study", type="primary")
    if not submitted:
        return
    try:
        items = lab_study.load_for_study(folder / set_name, rule=own_rule.strip() or rule,
                                         strata_key=strata_key.strip() or None)
        for sentence in member.describe_rules(items):
            st.caption(sentence)
        study_id, note = lab_study.create_study(
            db, items=items, name=name, source=set_name, n_items=int(n_items), seed=int(seed),
            created_by=user["id"], **setup)
    except dataset.LabSetError as error:
        st.error(f"The set was not read, and no study was created. {error}")
        return
    except study.StudyError as error:
        st.error(f"The study was not created. {error}")
        return
    created(db, study_id, note)
