"""What the lead's forms that open a study share (practice and gold inputs). Each benchmark's form is
its own (its member's ``STUDY_SETUP_VIEW``, called by Study admin with ``(db, user, annotators)``)."""

from __future__ import annotations

import streamlit as st

from structext_core.studio import study


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
