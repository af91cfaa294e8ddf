"""The lab's own benchmark's section of Results (Streamlit glue only; every number comes from
:mod:`structext_core.labset.results`): people beside the models' answers kept with the set, on the
same items, with intervals, broken down by format and stratum."""

from __future__ import annotations

import streamlit as st

from structext_core.labset import dataset
from structext_core.labset import results as lab_results
from structext_core.labset.study import sets_dir
from structext_core.studio import access
from structext_core.text import safe_text
from structext_core.views import charts, people_vs_models

PERCENT = {c: st.column_config.NumberColumn(c, format="%.1f") for c in ("mean", "ci_low", "ci_high")}


@st.cache_resource(max_entries=4, show_spinner="Reading the set and the models' answers…")
def _scored(set_name: str, signature: tuple):
    items = dataset.load_set(sets_dir() / set_name)
    return items, lab_results.model_rows(set_name, items)


def results_view(db, user) -> None:
    st.subheader("The lab's own: people beside models")
    role = access.role_of(user)
    if not access.can(role, "answers", access.public_mode(db)):
        st.caption("Results on a lab's sets are shown to researchers and admins.")
        return
    visible = access.results_studies(db, user)
    names = lab_results.sets_with_studies(db, visible)
    if not names:
        st.info("No study of a lab's set has answers yet (or none you may see).")
        return
    name = st.selectbox("Set", names, key="rs_lab_set")
    people = lab_results.people_rows(db, name, visible)
    if people.empty:
        st.info("No counted answers of people on this set yet: they show here once people answer.")
        return
    try:
        _, models = _scored(name, lab_results.files_signature(name))
    except (dataset.LabSetError, OSError) as error:
        st.warning(safe_text.markdown_text(f"The set {name!r} cannot be read from {sets_dir()} now, so no model's "
                                           f"answers are shown beside the people: {str(error)[:1000]}"))
        models = lab_results.Models(lab_results.combined(people.iloc[:0], people.iloc[:0]))
    for problem in models.problems:
        st.warning(safe_text.markdown_text(f"Left out: {problem}"))
    where = lab_results.predictions_dir(name)
    if models.rows.empty:
        st.caption(safe_text.markdown_text(f"No models' answers kept for this set: put JSON-lines predictions "
                                           f"({{id, model, answer}}) or Inspect AI logs (.eval) in {where}."))
    else:
        st.caption(safe_text.markdown_text(f"Models' answers from {', '.join(models.files)} (in {where})."))
    frame = lab_results.combined(people, models.rows)
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    breakdown = left.segmented_control("Break down by", list(lab_results.BREAKDOWNS), default="Overall",
                                       key="rs_lab_by") or "Overall"
    each = right.toggle("Each person apart", key="rs_lab_each")
    table = lab_results.beside(frame, breakdown, each_person=each)
    scope = people_vs_models.ItemScope(people_vs_models.POOL, people_vs_models.answered_items(frame))
    st.caption(safe_text.markdown_text(scope.sentence(frame)) + " Accuracy in percent with a 95% bootstrap "
               "interval; n: answers (people) or items (models; a model's epochs on an item averaged).")
    label = breakdown.lower() if breakdown != "Overall" else "overall"
    st.dataframe(table.rename(columns={"group_of": label}), hide_index=True, key="rs_lab_table",
                 column_config=PERCENT)
    chart = charts.interval_bars_chart(table, "group_of", "model", f"People beside models: {label}",
                                       "accuracy (%)", label)
    st.altair_chart(chart, width="content", key="rs_lab_chart")  # its own width: the legend stays in view
