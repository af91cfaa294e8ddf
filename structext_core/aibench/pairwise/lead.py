"""Pairwise studies: the lead's side (progress, votes, results, flags)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import scoring as aibench_scoring
from structext_core.aibench import store as aibench_store
from structext_core.aibench.pairwise import ranking as pw
from structext_core.aibench.pairwise.common import DEFAULT_BOOT, LEAD_PAGE
from structext_core.aibench.pairwise.counts import person_counts
from structext_core.aibench.pairwise.images import _image_records
from structext_core.aibench.pairwise.setup import get_study
from structext_core.studio import access, changes
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.quality import _bounded_note
from structext_core.studio.study.store import StudyError, now
from structext_core.text import safe_text
from structext_core.views import cells

# ---------------------------------------------------------------- the lead's side

def progress(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """Per annotator (:func:`person_counts`): counted votes of the study's pairs, repeats and
    practice done of theirs, median active seconds per vote, pauses (idle ones apart), take-overs
    by a second tab, open flags, and whether the lead took them off the study."""
    counts = {c.annotator: c for c in person_counts(db, study_id)}
    rows = db.execute(
        """
        SELECT u.username,
               (SELECT SUM(t.pause_count) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               (SELECT COUNT(*) FROM pairwise_flags f WHERE f.study_id = m.study_id AND f.user_id = m.user_id
                 AND f.resolved_at IS NULL),
               (SELECT SUM(t.idle_pauses) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               (SELECT SUM(t.takeovers) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               m.removed_at IS NOT NULL
        FROM pairwise_members m JOIN users u ON u.id = m.user_id WHERE m.study_id = ? ORDER BY u.username
        """, [study_id]).fetchall()
    seconds = votes_frame(db, study_id).groupby("annotator")["active_seconds"].median()
    columns = ["annotator", "counted votes", "pairs", "repeats", "practice", "pauses", "idle pauses", "take-overs",
               "open flags", "median active s", "taken off"]
    return pd.DataFrame([{"annotator": r[0], "counted votes": counts[r[0]].votes, "pairs": counts[r[0]].pairs,
                          "repeats": f"{counts[r[0]].repeats_done} of {counts[r[0]].repeats}",
                          "practice": f"{counts[r[0]].practice_done} of {counts[r[0]].practice}",
                          "pauses": r[1] or 0, "idle pauses": r[3] or 0, "take-overs": r[4] or 0, "open flags": r[2],
                          "median active s": cells.number_text(seconds.get(r[0], math.nan), 1),
                          "taken off": bool(r[5])}
                         for r in rows], columns=columns)


def votes_frame(db: sqlite_utils.Database, study_id: int, include_practice: bool = False) -> pd.DataFrame:
    """Every vote of the study with names (the lead's view): one row per vote, in vote order."""
    kinds = "('study', 'practice')" if include_practice else "('study')"
    cursor = db.execute(
        f"""
        SELECT u.username AS annotator, p.paper_id, p.system_a, p.system_b, p.kind,
               CASE WHEN t.left_is_a = 1 THEN p.system_a ELSE p.system_b END AS left_system,
               CASE WHEN t.left_is_a = 1 THEN p.system_b ELSE p.system_a END AS right_system,
               v.choice, v.outcome, t.repeat_of IS NOT NULL AS repeat, v.active_seconds, v.away_seconds,
               v.idle_seconds, v.paused_seconds, v.wall_seconds, v.idle_pauses, v.takeovers, v.at
        FROM pairwise_votes v JOIN pairwise_tasks t ON t.id = v.task_id JOIN pairwise_pairs p ON p.id = t.pair_id
        JOIN users u ON u.id = t.user_id WHERE t.study_id = ? AND p.kind IN {kinds} ORDER BY v.at, v.id
        """, [study_id])
    return pd.DataFrame(cursor.fetchall(), columns=[d[0] for d in cursor.description])


def votes_csv(db: sqlite_utils.Database, study_id: int) -> str:
    """The lead's download: every vote on the study's pairs (safe CSV): practice left out, a repeat
    kept and marked in ``repeat`` (it measures consistency; the counted votes are the others)."""
    return safe_text.frame_csv(votes_frame(db, study_id))


def votes_of(frame: pd.DataFrame) -> list[pw.Vote]:
    """The frame's votes for :mod:`structext_core.aibench.pairwise.ranking` (``first`` = system a)."""
    names = {"a": "first", "b": "second", "tie": "tie", "both_bad": "both_bad"}
    return [pw.Vote(r.annotator, r.paper_id, r.system_a, r.system_b, names[r.outcome]) for r in frame.itertuples()]


@dataclass(frozen=True)
class Results:
    ranking: pw.Ranking
    agreement: dict
    kendall_w: dict
    consistency: dict
    correlations: pd.DataFrame
    table2: pd.DataFrame
    fig6b: pd.DataFrame
    votes: int
    annotators: int


def metric_means(data: aibench_dataset.Dataset) -> dict[str, dict[str, float]]:
    """Each imported aesthetic metric's mean per system."""
    sums: dict[str, dict[str, list[float]]] = {}
    for (system, _paper, metric), value in data.aesthetics.items():
        sums.setdefault(metric, {}).setdefault(system, []).append(value)
    return {m: {s: sum(v) / len(v) for s, v in by.items()} for m, by in sorted(sums.items())}


def aibench_overall(data: aibench_dataset.Dataset, dataset: str) -> dict[str, dict[str, float]]:
    """AIBench's overall score per system, one judge per stored solver (``AIBench (<solver>)``);
    where no aesthetic score is imported, the mean of the four levels' accuracies, named
    ``AIBench levels only (<solver>)`` so it is never mistaken for the overall."""
    scores = aibench_scoring.score_systems(data, aibench_store.load_predictions(dataset), n_boot=0)
    out: dict[str, dict[str, float]] = {}
    for s in scores:
        if s.overall is not None:
            out.setdefault(f"AIBench ({s.solver})", {})[s.system] = s.overall
        elif len(s.levels) == len(aibench_scoring.LEVELS):
            mean = sum(level.accuracy for level in s.levels.values()) / len(s.levels)
            out.setdefault(f"AIBench levels only ({s.solver})", {})[s.system] = mean
    return out


def results(db: sqlite_utils.Database, study_id: int, *, n_boot: int = DEFAULT_BOOT, seed: int = 0) -> Results:
    """The human rank of the study's systems and everything measured about it (see the module)."""
    study = get_study(db, study_id)
    frame = votes_frame(db, study_id)
    all_votes = votes_of(frame)
    counted = pw.first_votes(all_votes)
    ranking = pw.human_ranking(counted, n_boot=n_boot, seed=seed)
    data = aibench_dataset.load_dataset(aibench_store.dataset_path(study.dataset))
    means = metric_means(data)
    judges = {**aibench_overall(data, study.dataset), **means}
    return Results(ranking, pw.pair_agreement(counted), pw.kendall_w(counted), pw.swap_consistency(all_votes),
                   pw.correlation_with_rank(ranking, judges), pw.table2(ranking, means), pw.fig6b(ranking, judges),
                   len(counted), frame["annotator"].nunique() if len(frame) else 0)


def image_path_for_lead(db: sqlite_utils.Database, study_id: int, paper_id: str, system: str) -> Path | None:
    """The stored image of ``system`` on ``paper_id`` (the lead's drill-down)."""
    study = get_study(db, study_id)
    folder = aibench_store.dataset_path(study.dataset)
    record = _image_records(str(folder)).get((system, paper_id))
    return folder / record if record else None


def flags_frame(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """The study's flags, oldest first, with the pair's paper and systems (the lead's view)."""
    cursor = db.execute(
        """
        SELECT f.id, u.username AS annotator, p.paper_id, p.system_a, p.system_b, f.kind, f.note, f.created_at,
               f.resolution
        FROM pairwise_flags f JOIN pairwise_tasks t ON t.id = f.task_id JOIN pairwise_pairs p ON p.id = t.pair_id
        LEFT JOIN users u ON u.id = f.user_id WHERE f.study_id = ? ORDER BY f.id
        """, [study_id])
    return pd.DataFrame(cursor.fetchall(), columns=[d[0] for d in cursor.description])


def resolve_flag(db: sqlite_utils.Database, flag_id: int, admin: dict | None, resolution: str) -> None:
    """The lead's answer to a flag (a note is required), with its row in the audit log."""
    if not admin or not access.can_open(access.role_of(admin), LEAD_PAGE):
        raise StudyError("Only the study lead (an admin) resolves flags.")
    resolution = _bounded_note("resolution", resolution)
    if not resolution:
        raise StudyError("Say how the flag was resolved.")
    with write_transaction(db):
        row = db.execute("SELECT study_id, resolved_at FROM pairwise_flags WHERE id = ?", [flag_id]).fetchone()
        if row is None:
            raise StudyError(f"There is no flag with id {flag_id}.")
        if row[1] is not None:
            raise StudyError(f"Flag {flag_id} is resolved already.")
        db.execute("UPDATE pairwise_flags SET resolved_by = ?, resolved_at = ?, resolution = ? WHERE id = ?",
                   [admin["id"], now(), resolution, flag_id])
        changes.record(db, admin["id"], "pairwise.resolve_flag", f"pairwise:{row[0]}", flag=flag_id,
                       resolution=resolution)


def dataset_systems(dataset: str) -> list[str]:
    """The systems with images in the stored data set ``dataset`` (empty when it cannot be read), read once
    per version of its files (the new study's form lists those of every stored set)."""
    try:
        folder = aibench_store.dataset_path(dataset)
        stamps = tuple((folder / name).stat().st_mtime_ns for name in (aibench_dataset.STORED_MARKER, "images.jsonl"))
        return list(_systems(str(folder), stamps))
    except (ValueError, OSError):
        return []


@functools.lru_cache(maxsize=64)
def _systems(folder: str, stamps: tuple) -> tuple[str, ...]:
    return tuple(aibench_dataset.load_dataset(folder).systems)
