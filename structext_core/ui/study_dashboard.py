"""What the Studies dashboard reads, cached by the study's data version, and its lazy sections.

The figures come from :mod:`structext_core.studio.study` and :mod:`structext_core.studio.crowd.status`;
each is cached under :func:`structext_core.studio.study.data_version` (one cheap fingerprint of the
study's people, places, answers and overrides), so a rerun that changes nothing in the study (a tab,
an expander, a chooser) reads none of them again, and any answer, override or change of people reads
them afresh. ``st.cache_data`` hands each run its own copy: nothing here is shared between sessions.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import sqlite_utils
import streamlit as st

from structext_core.studio import study
from structext_core.studio.crowd import status
from structext_core.ui import widgets
from structext_core.views import dashboard

_CACHED = {"max_entries": 8, "show_spinner": False}


def version(db: sqlite_utils.Database, study_id: int) -> tuple[str, str]:
    """The study's data version in its database's file: the key of every figure below. A digest of the
    fingerprint (``study.data_version``), not the fingerprint itself: Streamlit hashes a cached function's
    arguments on every call, and hashing the fingerprint's rows took Studies about 1 ms a call, seven calls
    a run (issue 46)."""
    path = db.execute("PRAGMA database_list").fetchone()[2]
    return (path, hashlib.blake2b(repr(study.data_version(db, study_id)).encode(), digest_size=16).hexdigest())


@st.cache_data(**_CACHED)
def progress(_db: sqlite_utils.Database, study_id: int, version: tuple) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The progress table as the dashboard's two tables (counts, times): :func:`dashboard.progress_tables`."""
    return dashboard.progress_tables(study.progress_table(_db, study_id))


@st.cache_data(**_CACHED)
def statuses(_db: sqlite_utils.Database, study_id: int, version: tuple) -> pd.DataFrame:
    """Where each person stands (:func:`status.statuses`)."""
    return status.statuses(_db, study_id)


@st.cache_data(**_CACHED)
def coverage(_db: sqlite_utils.Database, study_id: int, version: tuple) -> pd.DataFrame:
    """How far the study's items are covered (:func:`status.coverage`)."""
    return status.coverage(_db, study_id)


@st.cache_data(**_CACHED)
def members(_db: sqlite_utils.Database, study_id: int, version: tuple) -> list[study.StudyMember]:
    """Everyone who takes or took part (:func:`study.study_members`)."""
    return study.study_members(_db, study_id)


@st.cache_data(**_CACHED)
def responses(_db: sqlite_utils.Database, study_id: int, version: tuple) -> pd.DataFrame:
    """The counted answers (:func:`study.responses_frame`)."""
    return study.responses_frame(_db, study_id)


#: The texts of the answers and of their keys: no figure of the dashboard reads them (its list of fast answers
#: reads :func:`responses` itself).
TEXT_COLUMNS = ("response", "answer")


@st.cache_data(max_entries=8, show_spinner="Scoring new answers…")
def answers(_db: sqlite_utils.Database, study_id: int, version: tuple) -> pd.DataFrame:
    """The counted answers without their texts (:data:`TEXT_COLUMNS`), as the dashboard's figures read them: each
    run is handed its own copy of a cached frame, and with the texts a study of 3,000 answers was 13 MB to copy
    on every run of Studies (3 ms; issue 46). The spinner shows only while the frame is read: ``st.spinner``
    around the call sent the browser its end on every run, the frame read or not."""
    return responses(_db, study_id, version).drop(columns=list(TEXT_COLUMNS), errors="ignore")


@st.cache_data(**_CACHED)
def headline(_db: sqlite_utils.Database, study_id: int, version: tuple) -> dict:
    """The paper's headline figures (:func:`study.annotator_summary`)."""
    return study.annotator_summary(responses(_db, study_id, version))


@st.cache_data(**_CACHED)
def accuracy(_db: sqlite_utils.Database, study_id: int, version: tuple, by: tuple[str, ...]) -> pd.DataFrame:
    """Accuracy grouped ``by`` (:func:`study.accuracy_by`)."""
    return study.accuracy_by(responses(_db, study_id, version), list(by))


@st.cache_data(**_CACHED)
def agreement(_db: sqlite_utils.Database, study_id: int, version: tuple, pairwise: bool) -> dict:
    """Agreement on pass/fail (:func:`study.agreement_summary`); the pairs' table only with ``pairwise``."""
    return study.agreement_summary(responses(_db, study_id, version), pairwise=pairwise)


@st.cache_data(**_CACHED)
def times(_db: sqlite_utils.Database, study_id: int, version: tuple, cells: tuple[str, ...]) -> dict:
    """Time per question (:func:`study.time_summary`)."""
    return study.time_summary(responses(_db, study_id, version), list(cells))


@st.cache_data(**_CACHED)
def gold(_db: sqlite_utils.Database, study_id: int, version: tuple) -> pd.DataFrame:
    """The gold report (:func:`study.gold_report`)."""
    return study.gold_report(_db, study_id)


@st.cache_data(**_CACHED)
def fast(_db: sqlite_utils.Database, study_id: int, version: tuple, min_seconds: float,
         fraction_of_median: float) -> pd.DataFrame:
    """The answers flagged as implausibly fast with these thresholds (:func:`study.flag_fast`)."""
    return study.flag_fast(responses(_db, study_id, version), min_seconds=min_seconds,
                           fraction_of_median=fraction_of_median)


@st.cache_data(**_CACHED)
def adjudication_items(_db: sqlite_utils.Database, study_id: int, version: tuple, order: str,
                       kinds: tuple[str, ...] | None) -> list[study.ItemSummary]:
    """Adjudication's list of the study's questions in ``order`` (:func:`study.adjudication_items`)."""
    return study.adjudication_items(_db, study_id, order=order, kinds=kinds)


lazy = widgets.lazy_section  # an expander whose content is drawn only while it is open
