"""Question review: the papers of a stored AIBench data set (loaded once per change), sealed or not for a person."""

from __future__ import annotations

import functools
from pathlib import Path

import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import seal
from structext_core.aibench import store as aibench_store
from structext_core.aibench.model import ORIGINAL_SYSTEM, Paper
from structext_core.aibench.question_review.common import ReviewError, _require_access

# ---- the papers of a stored data set ----------------------------------------------------

@functools.lru_cache(maxsize=4)
def _dataset(folder: str, stamp: float) -> aibench_dataset.Dataset:
    return aibench_dataset.load_dataset(folder)


def load_dataset(name: str) -> aibench_dataset.Dataset:
    """The stored AIBench data set ``name`` (read once per version of its files)."""
    folder = aibench_store.dataset_path(name)
    marker = folder / aibench_dataset.STORED_MARKER
    if not marker.is_file():
        raise ReviewError(f"There is no stored AIBench data set {name[:60]!r}.")
    papers = folder / "papers"
    return _dataset(str(folder), max(marker.stat().st_mtime, papers.stat().st_mtime if papers.is_dir() else 0))


def paper_of(item: dict) -> Paper:
    """The paper an item reviews, as stored in its campaign's data set."""
    data = load_dataset(item["dataset"])
    if item["paper_id"] not in data.papers:
        raise ReviewError(f"Paper {item['paper_id']!r} is no longer in the data set {item['dataset']!r}.")
    return data.papers[item["paper_id"]]


#: What a reviewer is told instead of a paper whose questions they still answer in a study.
SEALED_PAPER = ("This paper's questions are also questions you still have to answer in an open AIBench study, or "
                "its images are in pairs you still have to judge in an open blind comparison, so its questions, "
                "answer keys and original figure stay hidden from you here until you have answered or judged them "
                "there (or the study is closed). Review another paper, or ask the review lead to give this one to "
                "someone else.")


def sealed_for(db: sqlite_utils.Database, item: dict, user: dict) -> str | None:
    """Why ``user`` may not be shown the item's paper (its questions and keys), or None when they
    may: the paper, in any copy, has an open AIBench study item of theirs or a pair they still vote
    on (:func:`structext_core.studio.seal.open_papers`)."""
    if seal.paper_key(item["dataset"], item["paper_id"]) in seal.open_papers(db, user.get("id")):
        return SEALED_PAPER
    return None


def paper_for(db: sqlite_utils.Database, item: dict, user: dict) -> Paper:
    """The item's paper for ``user`` to review: :func:`paper_of`, or :class:`ReviewError` saying why
    not (another reviewer's, or sealed by a study, see :func:`sealed_for`)."""
    _require_access(item, user)
    if (why := sealed_for(db, item, user)) is not None:
        raise ReviewError(why)
    return paper_of(item)


def figure_path(item: dict) -> Path | None:
    """The stored original figure of the item's paper (a PNG), or None when it has none."""
    record = load_dataset(item["dataset"]).images.get((ORIGINAL_SYSTEM, item["paper_id"]))
    return aibench_store.dataset_path(item["dataset"]) / record.path if record else None
