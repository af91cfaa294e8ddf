"""The Real-Test rewriting pages' widgets (the rewriter's page and the lead's review): a sample's
texts, the original beside its rewrite, what a rewrite changed (Streamlit; the data come from the core)."""

from __future__ import annotations

import streamlit as st

from structext_core.structext_eval import rewrite
from structext_core.structext_eval.formats import HIGHLIGHT
from structext_core.text.safe_text import markdown_text


def texts_panel(title: str, texts: rewrite.Texts, language: str, requirement: str | None = None) -> None:
    """A sample's reference (highlighted as ``language``, numbered lines), question (with the
    ``requirement`` under it, if given) and answer, under a bold ``title``."""
    st.markdown(f"**{title}**")
    st.code(texts.reference, language=HIGHLIGHT.get(language, "text"), line_numbers=True, wrap_lines=True)
    st.markdown(f"**Question:** {markdown_text(texts.question)}"
                + (f"  \n*{markdown_text(requirement)}*" if requirement else ""))
    st.markdown("**Answer**")
    st.code(texts.answer, language="text")


def original_panel(sample: dict) -> None:
    """The abstract original of a rewrite: :func:`texts_panel` of the source ``sample``."""
    texts_panel("Original", rewrite.original_texts(sample), sample["language"], sample.get("requirement"))


def original_and_rewrite(sample: dict, rewritten: rewrite.Texts | None, title: str = "Rewrite") -> None:
    """The original beside its rewrite (``title`` over it; nothing on that side for None). The
    rewrite keeps the original's requirement: both sides show it, so they stay level."""
    left, right = st.columns(2, gap="large")
    with left:
        original_panel(sample)
    with right:
        if rewritten is not None:
            texts_panel(title, rewritten, sample["language"], sample.get("requirement"))


def rewrite_diff(diffs: list[rewrite.TextDiff]) -> None:
    """What a rewrite changed (:func:`structext_core.structext_eval.rewrite.diff_texts`): one unified
    diff a part, removed lines marked ``-`` (red) and added ones ``+`` (green), under a line
    that counts them; a part not compared, or cut, says so."""
    st.markdown("**What changed** (original → rewrite, line by line)")
    for diff in diffs:
        part = diff.part.capitalize()
        if not diff.compared:
            st.caption(f"{part}: {diff.note}")
            continue
        st.caption(f"{part}: {diff.summary}." + (f" {diff.note}" if diff.note else ""))
        if not diff.identical:
            with st.container(height=420 if diff.text.count("\n") > 16 else "content"):
                st.code(diff.text, language="diff", wrap_lines=True)
