"""Cached suite loading for the pages (imports Streamlit; the logic is in structext_core.structext_eval.explore)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from structext_core.structext_eval import explore, samples


@st.cache_data(max_entries=4, show_spinner="Loading samples…")
def _load(path: str, mtime: float) -> list[dict]:
    return samples.read_jsonl(path)


@st.cache_data(max_entries=4, show_spinner=False)
def _index(path: str, mtime: float) -> pd.DataFrame:
    return explore.index_frame(_load(path, mtime))


def load_suite(path: str | Path) -> list[dict]:
    """The samples of a suite file; reloaded when the file changes."""
    path = Path(path)
    return _load(str(path), path.stat().st_mtime)


def load_index(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    return _index(str(path), path.stat().st_mtime)


@st.cache_resource(max_entries=4, show_spinner=False)
def _summary(path: str, mtime: float) -> dict:
    index = _index(path, mtime)
    return {"samples": len(index), "formats": int(index["format"].nunique()),
            "tasks": int(index["task_id"].nunique()), "mean_reference": float(index["reference_chars"].mean()),
            **explore.suite_stats(index)}


def load_summary(path: str | Path) -> dict:
    """Home's figures of a suite file (counts, and the tables by format and by depth and width),
    computed once per file version and shared by every session: read them, never change them.
    A Home run (every log-in lands there) then reads no suite and groups nothing."""
    path = Path(path)
    return _summary(str(path), path.stat().st_mtime)
