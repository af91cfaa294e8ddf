"""What the lead's forms that open a study share (practice and gold fields, for an ``st.form`` or a light
form). Each benchmark's form is its own (its member's ``STUDY_SETUP_VIEW``, called by Study admin with
``(db, user, annotators)``)."""

from __future__ import annotations

import streamlit as st

from structext_core.studio import study
from structext_core.ui import light_form

#: What gold items are, as a form's help says it (a benchmark may say it in its own words).
GOLD_HELP = "Items with short, clear answers mixed in at random places; annotators cannot tell them apart."


def quality_fields(gold_help: str = GOLD_HELP) -> tuple[light_form.Number, ...]:
    """Practice round and gold items of a new study, declared once: drawn inside an ``st.form`` by
    :func:`quality_inputs`, or as a row of a light form (read back with :func:`quality_values`)."""
    return (
        light_form.Number("practice_items", "Practice items", 0, min_value=0, max_value=study.MAX_PRACTICE_ITEMS,
                          help="Answered first by every annotator, who then sees the score and the answer key. "
                               "Not counted anywhere."),
        light_form.Number("gold_items", "Gold items", 0, min_value=0,
                          help=f"{gold_help} Not counted in the baseline: they show whose work to check."),
        light_form.Number("gold_pass", "Gold pass mark (%)", round(100 * study.DEFAULT_GOLD_PASS), min_value=0,
                          max_value=100, step=5,
                          help="An annotator whose share of gold items passed is below this is flagged on the dashboard."),
    )


def quality_values(values: dict) -> dict:
    """The keyword arguments of ``create_items_study`` that :func:`quality_fields` ask for, from their values."""
    return {"practice_items": int(values["practice_items"]), "gold_items": int(values["gold_items"]),
            "gold_pass": values["gold_pass"] / 100}


def quality_inputs(gold_help: str = GOLD_HELP) -> dict:
    """Practice round and gold items of a new study, as Streamlit's widgets (inside an ``st.form``)."""
    return quality_values({f.name: column.number_input(f.label, min_value=f.min_value, max_value=f.max_value,
                                                       value=f.value, step=f.step, help=f.help)
                           for column, f in zip(st.columns(3), quality_fields(gold_help))})


def people_and_rule(annotators: list[dict]) -> dict:
    """The inputs every study form ends with (inside the form): the annotators, the rule shown before
    the first question, correctness after each answer, practice and gold. Keyword arguments of
    ``create_items_study`` but for ``created_by``."""
    chosen = st.multiselect("Annotators", annotators, format_func=lambda u: u["username"])
    rule_text = st.text_area("Rule shown before the first question", value="Answer on your own, without help.",
                             height=80)
    show_correctness = st.checkbox("Tell annotators after each answer whether it was correct", value=False)
    return {"annotator_ids": [u["id"] for u in chosen], "rule_text": rule_text,
            "show_correctness": show_correctness, **quality_inputs()}


#: Session key of the study forms' turn: a study created, the next form is a new one (empty, its defaults).
FORM_TURN = "sa_form_turn"


def form_key(name: str) -> str:
    """The key of a benchmark's study form, new after each study created (so its inputs start empty
    again rather than inviting a second Create)."""
    return f"{name}_{st.session_state.get(FORM_TURN, 0)}"


def created_sentence(db, study_id: int, note: str = "") -> str:
    """What every benchmark's form says when a study is created, read from the study as stored: its
    name, its data set, its annotators and what each answers."""
    from structext_core.text.words import plural
    made = study.get_study(db, study_id)
    data = study.kind_of(made.benchmark).source_label.format(suite=made.suite)
    people = (f"for {plural(made.n_annotators, 'annotator')}" if made.n_annotators
              else "with no annotator yet (add people on its dashboard, or make a study link on its Crowd tab)")
    return " ".join(part for part in (f"Study {made.name!r} ({data}) created {people}: each answers "
                                      f"{made.counts.breakdown}.", note.strip()) if part)


def created(db, study_id: int, note: str = "") -> None:
    """Say that the study was created (:func:`created_sentence`, the same for every benchmark), show it on
    Study admin (the form's contract: the new study's id in ``sa_study_id``), clear the form, rerun."""
    from structext_core import ui
    ui.flash("success", created_sentence(db, study_id, note))
    st.session_state["sa_study_id"] = study_id
    st.session_state[FORM_TURN] = st.session_state.get(FORM_TURN, 0) + 1
    st.rerun()
