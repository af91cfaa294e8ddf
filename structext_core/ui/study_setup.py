"""What the lead's forms that open a study share: the fields every form ends with (the annotators, the rule,
correctness after each answer, practice and gold), declared once as rows of a light form
(:mod:`structext_core.ui.light_form`) and read back into ``create_items_study``'s keyword arguments; where a
form's help may name the server's folders; what a created study says. Each benchmark's form is its own (its
member's ``STUDY_SETUP_VIEW``, called by Study admin with ``(db, user, annotators)``), one light form each."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from structext_core.studio import access, study
from structext_core.text import limits
from structext_core.ui import light_form

#: What gold items are, as a form's help says it (a benchmark may say it in its own words).
GOLD_HELP = "Items with short, clear answers mixed in at random places; annotators cannot tell them apart."
#: The rule shown before the first question, unless a benchmark words its own.
DEFAULT_RULE = "Answer on your own, without help."


def quality_fields(gold_help: str = GOLD_HELP) -> tuple[light_form.Number, ...]:
    """Practice round and gold items of a new study, declared once: a row of a light form (read back with
    :func:`quality_values`)."""
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


def people_and_rule_fields(annotators: list[dict], *, rule: str = DEFAULT_RULE,
                           gold_help: str = GOLD_HELP) -> list[light_form.Row]:
    """The rows every study form ends with: the annotators (by user id), the rule shown before the first
    question (``rule`` to start with), correctness after each answer, practice and gold."""
    return [
        light_form.Choices("annotators", "Annotators", {u["id"]: u["username"] for u in annotators},
                           help="Every annotator gets the same questions, each in their own shuffled order."),
        light_form.Text("rule_text", "Rule shown before the first question", value=rule,
                        max_chars=limits.MAX_NOTE_CHARS, lines=4),
        light_form.Check("show_correctness", "Tell annotators after each answer whether it was correct",
                         help="Off by default: feedback can change how people answer."),
        quality_fields(gold_help),
    ]


def people_and_rule_values(sent: dict) -> dict:
    """The keyword arguments of ``create_items_study`` (but ``created_by``) that :func:`people_and_rule_fields`
    ask for, from what the form sent."""
    return {"annotator_ids": list(sent["annotators"]), "rule_text": sent["rule_text"],
            "show_correctness": sent["show_correctness"], **quality_values(sent)}


def files_help(user: dict, what: str, folder: Path, otherwise: str) -> str:
    """A form's words on where ``what`` (e.g. "the .jsonl files") come from: ``folder`` on the server for those
    who may see the server's paths (the admin), ``otherwise`` (who adds them, and where) for everyone else."""
    return f"{what} in {folder}." if access.can(access.role_of(user), "server_paths") else otherwise


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
