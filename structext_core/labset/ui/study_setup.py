"""The lead's form that opens a study of a lab's set (its member's ``STUDY_SETUP_VIEW``, called by
Study admin with ``(db, user, annotators)``): "Bring a set" above it (a set uploaded, checked and
imported, :mod:`structext_core.labset.ui.bring_set`), then the set chosen from the sets folder, read
and checked, its scoring rules shown, then drawn."""

from __future__ import annotations

import zlib

import streamlit as st

from structext_core.labset import dataset, member
from structext_core.labset import study as lab_study
from structext_core.labset.ui.bring_set import IMPORTED, bring_set_section
from structext_core.studio import study
from structext_core.text import limits
from structext_core.text.safe_text import markdown_text
from structext_core.ui import light_choice, light_form
from structext_core.ui.study_setup import created, files_help, form_key, people_and_rule_fields, people_and_rule_values


def labset_setup(db, user: dict, annotators: list[dict]) -> None:
    folder = lab_study.sets_dir()
    bring_set_section(db, user, expanded=not lab_study.available_sets(folder))
    names = lab_study.available_sets(folder)  # with a set just brought
    if not names:
        st.info(markdown_text(
            "No set yet: bring one above" + files_help(
                user, ", or import one on the server with `labset import FILE` (JSONL, JSON, CSV, Parquet or a "
                      "datasets folder), or put a .jsonl, .csv or Inspect .json file (with its images beside it)",
                folder, ".")))
        return
    brought = st.session_state.get(IMPORTED) or {}
    brought_rule = brought.get("rule", dataset.RULES[0])
    # The set is chosen before the form, so a set with no short answer is asked no rule for them. Its key
    # names the list: a set just brought is a new list of names, so a new choice, which starts on that set.
    set_name = light_choice.choose(
        "Set", names, key=f"sa_labset_set_{zlib.crc32(chr(10).join(names).encode()):08x}",
        index=names.index(brought["name"]) if brought.get("name") in names else 0,
        help=files_help(user, "The files", folder, "The sets brought here or imported on the server."))
    no_short_answer = lab_study.short_answers(folder / set_name) == 0
    if no_short_answer:
        st.caption(markdown_text(f"No short answer in {set_name}, so no rule to score them by."))
        rules = []
    else:
        rules = [(light_form.Choice("rule", "Short answers are scored", {r: r for r in dataset.RULES},
                                    value=brought_rule if brought_rule in dataset.RULES else dataset.RULES[0],
                                    help="Unless a question's metadata.answer_rule says otherwise. exact, match, "
                                         "includes and answer are Inspect AI's scorers of those names, as its "
                                         "version pinned here scores."),
                  light_form.Text("own_rule", "Or a rule of your own",
                                  placeholder=r"e.g. pattern(ANSWER: (\w+), match_all=true)",
                                  value="" if brought_rule in dataset.RULES else brought_rule,
                                  max_chars=limits.MAX_NOTE_CHARS,
                                  help="Any rule of the syntax (docs/reference/scoring.md); when given, it is "
                                       "the rule instead of the one chosen above."))]
    # One light form (one element, where an st.form of Streamlit's widgets made the lead's click on the tab
    # wait for each widget's code; issue 46). Another set drawn in it keeps what was typed in the fields both ask.
    sent = light_form.form(form_key("sa_new_labset_study"), [
        light_form.Text("name", "Study name", placeholder="e.g. lab-set-pilot", max_chars=limits.MAX_NAME_CHARS),
        (light_form.Number("n_items", "Number of questions", 40, min_value=1),
         light_form.Number("seed", "Seed of the draw", 0, min_value=0)),
        *rules,
        light_form.Text("strata_key", "Metadata field of the strata", value=brought.get("strata", "subject"),
                        max_chars=limits.MAX_NAME_CHARS),
        *people_and_rule_fields(annotators),
    ], "Create study")
    if sent is None:
        return
    rule = (sent["own_rule"].strip() or sent["rule"]) if rules else dataset.RULES[0]
    try:
        items = lab_study.load_for_study(folder / set_name, rule=rule, strata_key=sent["strata_key"].strip() or None)
        for sentence in member.describe_rules(items):
            st.caption(sentence)
        study_id, note = lab_study.create_study(
            db, items=items, name=sent["name"], source=set_name, n_items=sent["n_items"], seed=sent["seed"],
            created_by=user["id"], **people_and_rule_values(sent))
    except dataset.LabSetError as error:
        st.error(f"The set was not read, and no study was created. {error}")
        return
    except study.StudyError as error:
        st.error(f"The study was not created. {error}")
        return
    created(db, study_id, note)
