"""Who the people are, on the pages (Streamlit): the dashboard's *By who answered* block and Results'
*Split people by* choice. The figures come from :mod:`structext_core.studio.crowd.profiles`, the
chart from :mod:`structext_core.views.dashboard`; a page calls one function here."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from structext_core.studio.crowd import profiles
from structext_core.text.safe_text import markdown_text
from structext_core.views import dashboard

#: How number answers are grouped, in the words a lead reads.
RANGES_NOTE = (f"A number is grouped into at most {profiles.MAX_RANGES} ranges holding about as many people "
               "each; a range is labelled by the smallest and largest answer in it.")


def who_answered_block(db, study_id: int, frame: pd.DataFrame) -> None:
    """The dashboard's accuracy by each choice or number field of the study's questionnaire, over
    ``frame`` (the dashboard's counted answers, each once, with the final score): a table with the
    people and answers of each group, and the chart. Nothing when the study asks no such field."""
    axes = profiles.axes(db, study_id)
    if not axes:
        return
    fields = markdown_text(", ".join(axis.name for axis in axes))
    box = st.expander(f"By who answered: accuracy by the questionnaire's {fields}", key="sa_open_who",
                      on_change="rerun")
    if not box.open:  # drawn only while open (opening it reruns the page)
        return
    with box:
        _who_answered(db, study_id, frame, axes)


def _who_answered(db, study_id: int, frame: pd.DataFrame, axes: list[profiles.Axis]) -> None:
    by_name = {axis.name: axis for axis in axes}
    chosen = st.segmented_control("Questionnaire field", list(by_name), default=axes[0].name,
                                  key=f"sa_who_{study_id}") or axes[0].name
    axis = by_name[chosen]
    st.caption(markdown_text(f"**{axis.name}**: {axis.label}") + "  \nThe counted answers, each once, with their "
               "final score (adjudication counts), by the person's answer. people: who answered a counted "
               f"question in the group; n: their answers. {RANGES_NOTE if axis.kind == 'number' else ''}")
    table = profiles.accuracy_by_answers(db, study_id, frame, axis)
    percent = st.column_config.NumberColumn(format="%.1f")
    st.dataframe(table, hide_index=True, key=f"sa_who_table_{study_id}", column_config={
        "n": st.column_config.NumberColumn("answers"), "score": percent,
        "score_low": st.column_config.NumberColumn("score CI low", format="%.1f"),
        "score_high": st.column_config.NumberColumn("score CI high", format="%.1f"),
        "exact_match": st.column_config.NumberColumn("exact match", format="%.1f"),
        "em_low": st.column_config.NumberColumn("EM CI low", format="%.1f"),
        "em_high": st.column_config.NumberColumn("EM CI high", format="%.1f"),
    })
    st.altair_chart(dashboard.accuracy_chart(table.astype({axis.name: str}), [axis.name]), width="stretch")


#: The choice of Results that keeps people as they were.
NO_SPLIT = "nothing"


def split_people_by(axes: list[profiles.Axis], key: str, where=st) -> str | None:
    """Results' *Split people by*: one of the questionnaire fields of the studies shown (``axes``), or
    None (people as before). Drawn in ``where``; nothing drawn when there is no field."""
    if not axes:
        return None
    return where.selectbox(
        "Split people by", [None, *(axis.name for axis in axes)], key=key,
        format_func=lambda name: NO_SPLIT if name is None else name,
        help="A field of the studies' questionnaire: each group of people is a row beside the models "
             f"(people who gave no answer are the group '{profiles.NO_ANSWER}'). {RANGES_NOTE}")
