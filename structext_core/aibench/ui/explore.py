"""Explore's choice of benchmark, and AIBench's stored data sets on it (Streamlit glue; what a
user may see comes from ``structext_core.structext_eval.explore``, which asks ``access`` and ``seal``)."""

from __future__ import annotations

import streamlit as st

from structext_core.aibench import explore as aibench_explore
from structext_core.aibench import views as aibench_results
from structext_core.studio import access
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural


def aibench_view(db, user) -> None:
    """A stored AIBench data set, one paper at a time: method text, original figure, questions
    (with their keys where the seal allows)."""
    names = aibench_explore.aibench_datasets(db, user)
    if not names:
        if access.restricted(access.role_of(user)):
            st.info("Every stored AIBench data set holds papers of an open study, so it stays sealed until "
                    "the study is closed.")
        else:
            st.info("No AIBench data set is stored yet: the synthetic set is made at the app's first start "
                    "(Results → AIBench shows its progress); `python -m structext_core aibench import` stores one.")
        return
    if access.restricted(access.role_of(user)):
        st.caption("Public read-only mode: AIBench data sets holding papers of open studies are not shown.")
    name = st.selectbox("Data set", names, key="explore_aib_data")
    papers = aibench_explore.aibench_paper_ids(db, user, name)
    if not papers:
        st.info("Every paper of this data set is one you still have to answer or vote on in an open study.")
        return
    paper_id = st.selectbox(f"Paper ({plural(len(papers), 'paper')})", papers, key="explore_aib_paper")
    paper = aibench_explore.aibench_paper(db, user, name, paper_id)
    st.subheader(markdown_text(paper.paper_id))
    st.caption(markdown_text(f"{paper.conference} {paper.year} · {plural(len(paper.questions), 'question')}"))
    left, right = st.columns(2)
    with left:
        st.markdown("**Original figure**")
        if paper.figure is None:
            st.info("This paper has no original figure in the data set.")
        else:
            st.image(str(paper.figure), width="stretch")
    with right:
        st.markdown("**Method text**")
        with st.container(height=420, key="explore_aib_method"):
            st.markdown(markdown_text(paper.method_text))
    st.markdown("**Questions**")
    for question in paper.questions:
        with st.container(border=True):
            st.markdown(markdown_text(f"{question['id']} · {aibench_results.level_label(question['level'])}: "
                                      f"{question['question']}"))
            st.markdown("\n".join(f"- {markdown_text(option)}" for option in question["options"]))
            if paper.keys_shown:
                st.markdown(f"Key: **{markdown_text(question['key'])}**"
                            + (f" ({markdown_text(question['rationale'])})" if question.get("rationale") else ""))
    if not paper.keys_shown:
        st.caption("The answer keys are shown to researchers and admins.")
