"""Widgets more than one page draws (Streamlit; the data they show comes from the core)."""

from __future__ import annotations

import streamlit as st

from structext_core.studio import study


def pick_study(studies: list[study.Study], key: str, label: str = "Study") -> study.Study:
    """A chooser of ``studies`` (name, suite, size, annotators, status); its choice is kept under ``key``."""
    return st.selectbox(label, studies, key=key, format_func=lambda s: s.label)
