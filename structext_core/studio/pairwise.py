"""Blind pairwise comparison of AIBench systems' images (issue 22, item 3): the study, the
annotator's votes with the honest clock, the blinded images, and the lead's results.

A *pairwise study* is drawn from a stored AIBench data set (:mod:`structext_core.aibench.store`):
pairs of (one paper, two systems' images), a few *practice* pairs first (not counted), and a list
of annotators. Every annotator judges every pair, each in an own seeded order; which system is on
the left is drawn per person and pair from the study's seed and stored. A seeded share of each
person's pairs (``repeat_share``) comes again later with the sides swapped: the consistency check.

Blinding. The annotator's page never gets a system's name or anything that carries it: a task is
named by an opaque random ``token`` (:func:`current_task` returns no name, no paper id, no file
path), and :func:`task_image` returns the pixels re-encoded as a plain PNG (no metadata) padded to
a multiple of :data:`SIZE_BUCKET` bytes, so neither the file name (Streamlit serves media under a
hash of the bytes) nor its size names the system. Names are not shown after a vote either: during
a study an annotator sees no system name at all; the lead sees them on the results.

The clock is the one of :mod:`structext_core.studio.study.clock` (its settings, its booking of
each gap as active or away, idle auto-pause after the idle limit, Pause/Resume), kept per task,
through the same column functions as a study's questions: one browser tab holds a person's pair
(``pairwise_members.active_tab``, as ``study_annotators.active_tab``); a second tab takes it over
(counted in ``takeovers``) and the first learns so at its next heartbeat; the page's input reports
(the activity component) keep the idle auto-pause away and set the last input.

Every lead action (create, add or take off a person, open or close, archive, resolve a flag) is
one transaction with its row in the audit log (:mod:`structext_core.studio.changes`), target
``pairwise:<study id>``.

Votes count by the rules of :mod:`structext_core.evaluation.pairwise`: each person's first vote on
a pair (repeats only measure consistency), ties as half a win each, "both bad" apart.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import os
import random
import secrets
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import pandas as pd
import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import scoring as aibench_scoring
from structext_core.aibench import store as aibench_store
from structext_core.evaluation import pairwise as pw
from structext_core.studio import access, changes, seal
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.clock import (
    ClockSettings,
    TakenOverError,
    _advance,
    _beat_due,
    _is_idle,
    activity_columns,
    beat_columns,
    claim_columns,
    clock_settings,
    paused_columns,
    resume_columns,
    shown_seconds,
)
from structext_core.studio.study.quality import _bounded_note
from structext_core.studio.study.store import StudyError, _check_annotators, annotator_order, now
from structext_core.text import limits as safe_text_limits
from structext_core.text import safe_text
from structext_core.text.words import plural

CHOICES = {"left": "Left is better", "right": "Right is better", "tie": "Equally good", "both_bad": "Both bad"}
FLAG_KINDS = {"broken": "An image does not show or is cut off", "unclear": "I cannot judge this pair",
              "other": "Other (say what in the note)"}
#: Served image sizes are padded up to a multiple of this many bytes.
SIZE_BUCKET = 256 * 1024
#: Both images of a pair are served on this canvas (width, height), letterboxed: the paper's
#: floor for generated figures (1024 x 1024), so a figure drawn at the floor is served as drawn.
CANVAS = (1024, 1024)
MAX_PAIRS = 2_000
#: Served images are at most this wide (Streamlit's widest image, 2 x 730 px).
MAX_SERVED_WIDTH = 1460
MAX_NAME_CHARS = 80
DEFAULT_BOOT = 500
#: The lead's page (who may open it leads pairwise studies: the one role table).
LEAD_PAGE = "pairwise_admin"


# ---------------------------------------------------------------- setup

@dataclass(frozen=True)
class PairwiseStudy:
    id: int
    name: str
    dataset: str
    seed: int
    repeat_share: float
    practice_pairs: int
    status: str
    created_at: float
    pairs: int
    archived_at: float | None = None

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


def draw_pairs(data: aibench_dataset.Dataset, systems: Sequence[str] | None, n_pairs: int, practice: int,
               seed: int, left_out: set[str] | frozenset = frozenset(),
               ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(counted, practice) pairs ``(paper_id, system_a, system_b)`` (a < b): every pair of the chosen
    systems on every paper with both images (but the papers ``left_out``), in a seeded order,
    balanced over system pairs (round robin over the pairs of systems), the first ``n_pairs``
    counted and the next ``practice`` for practice."""
    chosen = sorted(set(systems or data.systems))
    by_systems: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for a, b in combinations(chosen, 2):
        papers = [pid for pid in sorted(data.papers)
                  if pid not in left_out and (a, pid) in data.images and (b, pid) in data.images]
        random.Random(f"{seed}|{a}|{b}").shuffle(papers)
        by_systems[(a, b)] = [(pid, a, b) for pid in papers]
    ordered: list[tuple[str, str, str]] = []
    depth = max((len(v) for v in by_systems.values()), default=0)
    for k in range(depth):
        ordered.extend(v[k] for v in by_systems.values() if k < len(v))
    if len(ordered) < n_pairs + practice:
        without = (f" without the {plural(len(left_out), 'paper')} whose original figures and keys the annotators saw in "
                   "the question review" if left_out else "")
        raise StudyError(f"The data set has {plural(len(ordered), 'pair')} of images of the chosen systems{without}; "
                         f"{n_pairs:,} counted and {plural(practice, 'practice pair')} were asked for.")
    return ordered[:n_pairs], ordered[n_pairs:n_pairs + practice]


def create_study(db: sqlite_utils.Database, name: str, dataset: str, annotator_ids: Sequence[int], *,
                 n_pairs: int, systems: Sequence[str] | None = None, practice: int = 2, repeat_share: float = 0.1,
                 seed: int = 0, by_user: int | None = None) -> int:
    """Create a pairwise study over the stored data set ``dataset``; its id. Raises
    :class:`StudyError` saying what is wrong (nothing written then)."""
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME_CHARS:
        raise StudyError(f"A study needs a name of 1 to {MAX_NAME_CHARS} characters.")
    try:
        safe_text_limits.check_name("study name", name)
    except safe_text_limits.LimitError as error:
        raise StudyError(str(error)) from None
    if not 1 <= n_pairs <= MAX_PAIRS:
        raise StudyError(f"Between 1 and {MAX_PAIRS:,} counted pairs, not {n_pairs}.")
    if not 0 <= practice <= 10:
        raise StudyError(f"Between 0 and 10 practice pairs, not {practice}.")
    if not 0 <= repeat_share <= 0.5:
        raise StudyError(f"The share of repeated pairs is between 0 and 0.5, not {repeat_share}.")
    if not annotator_ids:
        raise StudyError("Choose at least one annotator.")
    if name in {r[0] for r in db.execute("SELECT name FROM pairwise_studies")}:
        raise StudyError(f"A pairwise study named {name!r} exists; choose another name.")
    try:
        data = aibench_dataset.load_dataset(aibench_store.dataset_path(dataset))
    except (ValueError, OSError) as error:
        raise StudyError(f"The AIBench data set {dataset[:60]!r} cannot be read: {str(error)[:300]}") from None
    unknown = sorted(set(systems or ()) - set(data.systems))
    if unknown:
        raise StudyError(f"{dataset!r} has no images of {', '.join(map(repr, unknown))}.")
    if len(set(systems or data.systems)) < 2:
        raise StudyError("A comparison needs at least two systems.")
    _check_annotators(db, annotator_ids)
    # A paper an annotator opened in the question review (its original figure and keys shown), in
    # any copy of the set, is in no pair: an image resembling the original would name its side.
    reviewed = seal.seen_keys(db, annotator_ids).papers
    left_out = {pid for pid in data.papers if seal.paper_key(dataset, pid) in reviewed}
    counted, practice_pairs = draw_pairs(data, systems, n_pairs, practice, seed, left_out)
    at = now()
    with write_transaction(db):
        study_id = int(db.execute(
            "INSERT INTO pairwise_studies (name, dataset, seed, repeat_share, practice_pairs, created_by, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)", [name, dataset, seed, repeat_share, practice, by_user, at]).lastrowid)
        for kind, pairs in (("practice", practice_pairs), ("study", counted)):
            for paper_id, a, b in pairs:
                db.execute("INSERT INTO pairwise_pairs (study_id, paper_id, system_a, system_b, kind)"
                           " VALUES (?, ?, ?, ?, ?)", [study_id, paper_id, a, b, kind])
        for user_id in dict.fromkeys(annotator_ids):
            _assign(db, study_id, seed, repeat_share, user_id, at)
        changes.record(db, by_user, "pairwise.create", f"pairwise:{study_id}", name=name, dataset=dataset,
                       pairs=len(counted), practice=len(practice_pairs), repeat_share=repeat_share, seed=seed,
                       annotators=list(dict.fromkeys(annotator_ids)))
    return study_id


def _assign(db: sqlite_utils.Database, study_id: int, seed: int, repeat_share: float, user_id: int,
            at: float) -> None:
    """Inside a write transaction: the member, their order (practice first), sides and repeats."""
    db.execute("INSERT INTO pairwise_members (study_id, user_id, added_at) VALUES (?, ?, ?)", [study_id, user_id, at])
    rows = db.execute("SELECT id, kind FROM pairwise_pairs WHERE study_id = ? ORDER BY id", [study_id]).fetchall()
    practice = annotator_order([r[0] for r in rows if r[1] == "practice"], seed, study_id, user_id)
    counted = annotator_order([r[0] for r in rows if r[1] == "study"], seed, study_id, user_id)
    rng = random.Random(f"{seed}|{study_id}|{user_id}|sides")
    sides = {pair_id: rng.random() < 0.5 for pair_id in practice + counted}
    repeats = set(rng.sample(counted, round(repeat_share * len(counted)))) if counted else set()
    # each repeat goes to a random later place (after its first showing, never right after it when avoidable)
    order: list[tuple[int, bool, bool]] = [(p, sides[p], False) for p in counted]
    for pair_id in sorted(repeats):
        first = next(i for i, entry in enumerate(order) if entry[0] == pair_id and not entry[2])
        low = min(first + 2, len(order))
        order.insert(rng.randint(low, len(order)), (pair_id, not sides[pair_id], True))
    position = 0
    firsts: dict[int, int] = {}
    for pair_id, left_is_a, is_repeat in [(p, sides[p], False) for p in practice] + order:
        position += 1
        task_id = int(db.execute(
            "INSERT INTO pairwise_tasks (study_id, user_id, pair_id, position, left_is_a, repeat_of, token)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [study_id, user_id, pair_id, position, int(left_is_a), firsts.get(pair_id) if is_repeat else None,
             secrets.token_urlsafe(16)]).lastrowid)
        firsts.setdefault(pair_id, task_id)


def add_annotator(db: sqlite_utils.Database, study_id: int, user_id: int, *, by_user: int | None) -> None:
    """Add an annotator to a study (the same pairs, an own order and sides)."""
    study = get_study(db, study_id)
    _check_annotators(db, [user_id])
    taken = db.execute("SELECT removed_at FROM pairwise_members WHERE study_id = ? AND user_id = ?",
                       [study_id, user_id]).fetchone()
    if taken and taken[0] is not None:
        raise StudyError("That annotator was taken off this study: their votes are kept, and they cannot "
                         "join it again.")
    if taken:
        raise StudyError("That annotator already takes part in this study.")
    if (why := reviewed_refusal(db, study_id, user_id)) is not None:
        raise StudyError(why)
    with write_transaction(db):
        _assign(db, study_id, study.seed, study.repeat_share, user_id, now())
        changes.record(db, by_user, "pairwise.add_annotator", f"pairwise:{study_id}", user_id=user_id)


def reviewed_refusal(db: sqlite_utils.Database, study_id: int, user_id: int) -> str | None:
    """Why ``user_id`` may not vote in the study: they opened some of its papers (in any copy) in the
    question review, which shows a paper's original figure and keys. None when they did not."""
    reviewed = seal.seen_keys(db, [user_id]).papers
    if not reviewed:
        return None
    dataset = get_study(db, study_id).dataset
    papers = sorted({row[0] for row in db.execute("SELECT DISTINCT paper_id FROM pairwise_pairs WHERE study_id = ?",
                                                  [study_id]) if seal.paper_key(dataset, row[0]) in reviewed})
    if not papers:
        return None
    name = db.execute("SELECT username FROM users WHERE id = ?", [user_id]).fetchone()
    shown = ", ".join(papers[:5]) + (", ..." if len(papers) > 5 else "")
    return (f"{name[0] if name else f'User {user_id}'!r} opened {len(papers):,} of this study's papers in the "
            f"question review ({shown}), which showed their original figures: their votes on those pairs would "
            "not be blind, so they cannot join it. Add someone else, or set up a new study for them: a new "
            "study leaves out the papers its annotators reviewed.")


def remove_annotator(db: sqlite_utils.Database, study_id: int, user_id: int, *, by_user: int | None) -> int:
    """Take an annotator off a study: they no longer see it or vote in it; their votes so far are
    kept (and count). Returns how many votes they keep."""
    with write_transaction(db):
        get_study(db, study_id)
        row = db.execute("SELECT u.username, m.removed_at FROM pairwise_members m JOIN users u ON u.id = m.user_id"
                         " WHERE m.study_id = ? AND m.user_id = ?", [study_id, user_id]).fetchone()
        if row is None:
            raise StudyError("That account does not take part in this study.")
        if row[1] is not None:
            raise StudyError(f"{row[0]!r} was taken off this study already.")
        db.execute("UPDATE pairwise_members SET removed_at = ?, active_tab = NULL WHERE study_id = ? AND user_id = ?",
                   [now(), study_id, user_id])
        kept = db.execute("SELECT COUNT(*) FROM pairwise_votes v JOIN pairwise_tasks t ON t.id = v.task_id"
                          " WHERE t.study_id = ? AND t.user_id = ?", [study_id, user_id]).fetchone()[0]
        changes.record(db, by_user, "pairwise.remove_annotator", f"pairwise:{study_id}", user_id=user_id,
                       votes_kept=kept)
    return kept


def members(db: sqlite_utils.Database, study_id: int) -> list[dict]:
    """The study's people: ``user_id``, ``username``, ``removed`` (taken off), by name."""
    return [{"user_id": r[0], "username": r[1], "removed": r[2] is not None} for r in db.execute(
        "SELECT m.user_id, u.username, m.removed_at FROM pairwise_members m JOIN users u ON u.id = m.user_id"
        " WHERE m.study_id = ? ORDER BY u.username", [study_id])]


def get_study(db: sqlite_utils.Database, study_id: int) -> PairwiseStudy:
    row = db.execute(
        "SELECT id, name, dataset, seed, repeat_share, practice_pairs, status, created_at,"
        " (SELECT COUNT(*) FROM pairwise_pairs p WHERE p.study_id = s.id AND p.kind = 'study'), archived_at"
        " FROM pairwise_studies s WHERE id = ?", [study_id]).fetchone()
    if row is None:
        raise StudyError(f"There is no pairwise study with id {study_id}.")
    return PairwiseStudy(*row)


def list_studies(db: sqlite_utils.Database, *, include_archived: bool = True) -> list[PairwiseStudy]:
    """Studies, newest first; the archived ones too unless ``include_archived`` is off."""
    where = "" if include_archived else " WHERE archived_at IS NULL"
    return [get_study(db, r[0]) for r in db.execute(f"SELECT id FROM pairwise_studies{where} ORDER BY id DESC")]


def set_status(db: sqlite_utils.Database, study_id: int, status: str, *, by_user: int | None) -> None:
    """Open or close a study (no votes are taken in a closed one)."""
    if status not in ("open", "closed"):
        raise StudyError(f"A study is open or closed, not {status!r}.")
    with write_transaction(db):
        study = get_study(db, study_id)
        if study.status == status:
            raise StudyError(f"Pairwise study {study.name!r} is {status} already.")
        db.execute("UPDATE pairwise_studies SET status = ? WHERE id = ?", [status, study_id])
        changes.record(db, by_user, f"pairwise.{'open' if status == 'open' else 'close'}", f"pairwise:{study_id}")


def set_archived(db: sqlite_utils.Database, study_id: int, archived: bool, *, by_user: int | None) -> None:
    """Archive a study (hidden from its annotators and from the lead's default chooser, no votes
    taken; kept whole: votes, results and downloads unchanged) or bring it back."""
    with write_transaction(db):
        study = get_study(db, study_id)
        if study.archived == archived:
            raise StudyError(f"Pairwise study {study.name!r} is {'archived' if archived else 'not archived'} already.")
        db.execute("UPDATE pairwise_studies SET archived_at = ? WHERE id = ?", [now() if archived else None, study_id])
        changes.record(db, by_user, "pairwise.archive" if archived else "pairwise.unarchive", f"pairwise:{study_id}")


def history(db: sqlite_utils.Database, study_id: int) -> list[changes.Change]:
    """The lead's changes to the study, newest first (the audit log)."""
    return changes.history(db, f"pairwise:{study_id}")


def studies_for_annotator(db: sqlite_utils.Database, user_id: int) -> list[tuple[int, str, int, int, str]]:
    """(study id, name, votes given, tasks, status) of the studies ``user_id`` votes in."""
    return [tuple(r) for r in db.execute(
        """
        SELECT s.id, s.name,
               (SELECT COUNT(*) FROM pairwise_tasks t JOIN pairwise_votes v ON v.task_id = t.id
                 WHERE t.study_id = s.id AND t.user_id = m.user_id),
               (SELECT COUNT(*) FROM pairwise_tasks t WHERE t.study_id = s.id AND t.user_id = m.user_id),
               s.status
        FROM pairwise_members m JOIN pairwise_studies s ON s.id = m.study_id
        WHERE m.user_id = ? AND s.archived_at IS NULL AND m.removed_at IS NULL ORDER BY s.id
        """, [user_id])]


# ---------------------------------------------------------------- the annotator's side (blind)

@dataclass(frozen=True)
class TaskView:
    """What the voting page may know of the current task: an opaque token, never a name."""

    token: str
    position: int
    total: int
    done: int
    practice: bool
    paused: bool
    active_seconds: float
    #: True when another tab of the person holds the pair (this one must not show it; ``token`` is empty).
    held_elsewhere: bool = False
    #: Why the pair is paused: ``button`` or ``idle`` (None when it runs).
    pause_reason: str | None = None


_TASK_COLUMNS = ("t.id, t.study_id, t.user_id, t.pair_id, t.position, t.left_is_a, t.token, t.first_shown_at,"
                 " t.last_beat_at, t.hidden_at, t.paused_at, t.pause_count, t.paused_seconds, t.active_seconds,"
                 " t.away_seconds, t.idle_seconds, t.last_input_at, t.active_at_last_input, t.takeovers,"
                 " t.pause_reason, t.idle_pauses, m.active_tab, p.kind,"
                 " CASE WHEN m.removed_at IS NOT NULL THEN 'removed' WHEN s.archived_at IS NOT NULL THEN 'archived'"
                 " ELSE s.status END AS status,"
                 " (SELECT id FROM pairwise_votes v WHERE v.task_id = t.id) AS vote_id")
#: Why a person may not vote, by the task's ``status``.
_NOT_OPEN = {
    "closed": "This study has been closed by the study lead; votes are no longer taken.",
    "archived": "This study has been archived by the study lead; votes are no longer taken.",
    "removed": "The study lead has taken you off this study; your votes so far are kept.",
}


def _task_rows(db: sqlite_utils.Database, where: str, params: list) -> list[dict]:
    cursor = db.execute(f"SELECT {_TASK_COLUMNS} FROM pairwise_tasks t JOIN pairwise_pairs p ON p.id = t.pair_id"
                        " JOIN pairwise_studies s ON s.id = t.study_id"
                        " JOIN pairwise_members m ON m.study_id = t.study_id AND m.user_id = t.user_id"
                        f" WHERE {where}", params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _own_task(db: sqlite_utils.Database, user_id: int, token: str) -> dict:
    rows = _task_rows(db, "t.token = ? AND t.user_id = ?", [str(token)[:64], user_id])
    if not rows:
        raise StudyError("That pair is not one of yours.")
    return rows[0]


def _current_rows(db: sqlite_utils.Database, study_id: int, user_id: int) -> list[dict]:
    return _task_rows(db, "t.study_id = ? AND t.user_id = ? AND NOT EXISTS (SELECT 1 FROM pairwise_votes v"
                          " WHERE v.task_id = t.id) ORDER BY t.position LIMIT 1", [study_id, user_id])


def _membership(db: sqlite_utils.Database, study_id: int, user_id: int) -> None:
    row = db.execute("SELECT CASE WHEN m.removed_at IS NOT NULL THEN 'removed' WHEN s.archived_at IS NOT NULL"
                     " THEN 'archived' ELSE s.status END FROM pairwise_members m JOIN pairwise_studies s"
                     " ON s.id = m.study_id WHERE m.study_id = ? AND m.user_id = ?", [study_id, user_id]).fetchone()
    if row is None:
        raise StudyError("You do not take part in that pairwise study.")
    if row[0] != "open":
        raise StudyError(_NOT_OPEN[row[0]])


def current_task(db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None,
                 settings: ClockSettings | None = None, *, tab: str | None = None,
                 take_over: bool = True) -> TaskView | None:
    """The person's next pair without a vote, shown to the browser tab ``tab``; None when all are done.

    As a study's question (:func:`structext_core.studio.study.answering.open_question`): the first
    showing starts the pair's clock; with a ``tab``, the tab claims the person's study (one tab
    holds it): a tab that never showed the study takes it over (``take_over=True``); one that did
    and lost it since (``take_over=False``) gets a view with ``held_elsewhere`` set and no token.
    Showing a running pair is a heartbeat of the tab that holds it. Without a ``tab`` (scripts)
    no tab is tracked."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    _membership(db, study_id, user_id)
    total = db.execute("SELECT COUNT(*) FROM pairwise_tasks WHERE study_id = ? AND user_id = ?",
                       [study_id, user_id]).fetchone()[0]
    rows = _current_rows(db, study_id, user_id)
    if not rows:
        return None
    row = rows[0]
    # A paused pair is hidden in every tab anyway; the tab that resumes it claims it.
    elsewhere = (tab is not None and row["active_tab"] not in (None, tab) and not take_over
                 and row["paused_at"] is None)
    if not elsewhere and _show_needs_write(row, tab, at, settings):
        with write_transaction(db):
            fresh = _task_rows(db, "t.id = ?", [row["id"]])[0]
            if fresh["vote_id"] is None:
                _show(db, fresh, tab, at, settings)
            row = _task_rows(db, "t.id = ?", [row["id"]])[0]
    return TaskView("" if elsewhere else row["token"], row["position"], total, row["position"] - 1,
                    row["kind"] == "practice", row["paused_at"] is not None,
                    shown_seconds(row, settings.grace_seconds, at), elsewhere, row["pause_reason"])


def _show_needs_write(row: dict, tab: str | None, at: float, settings: ClockSettings) -> bool:
    if row["first_shown_at"] is None:
        return True
    if row["paused_at"] is not None:
        return False  # a paused pair is claimed by the tab that resumes it
    if tab is not None and row["active_tab"] != tab:
        return True
    return _beat_due(row, at, settings, True)


def _show(db: sqlite_utils.Database, row: dict, tab: str | None, at: float, settings: ClockSettings) -> None:
    """Inside a write transaction: the pair is on screen in ``tab`` at ``at``."""
    if row["first_shown_at"] is None:
        _update(db, row["id"], {"first_shown_at": at, "last_beat_at": at, "last_input_at": at,
                                "active_at_last_input": 0.0})
        row = _task_rows(db, "t.id = ?", [row["id"]])[0]
    if row["paused_at"] is not None:
        return
    if tab is not None and row["active_tab"] != tab:
        _claim(db, row, tab, at, settings)
    else:
        _update(db, row["id"], _advance(row, at, settings.grace_seconds))


def _claim(db: sqlite_utils.Database, row: dict, tab: str, at: float, settings: ClockSettings) -> None:
    """Inside a write transaction: ``tab`` takes the person's study over (the tab that held it
    learns so at its next heartbeat)."""
    db.execute("UPDATE pairwise_members SET active_tab = ?, tab_claimed_at = ? WHERE study_id = ? AND user_id = ?",
               [tab, at, row["study_id"], row["user_id"]])
    _update(db, row["id"], claim_columns(row, at, settings))


def take_over(db: sqlite_utils.Database, study_id: int, user_id: int, tab: str, at: float | None = None,
              settings: ClockSettings | None = None) -> None:
    """"Continue here": ``tab`` takes the study's current pair over from another tab."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    _membership(db, study_id, user_id)
    with write_transaction(db):
        rows = _current_rows(db, study_id, user_id)
        if rows:
            _show(db, rows[0], tab, at, settings)


def _system_on(row: dict, side: str, pair: tuple[str, str, str]) -> str:
    _, a, b = pair
    left, right = (a, b) if row["left_is_a"] else (b, a)
    return left if side == "left" else right


def task_image(db: sqlite_utils.Database, user_id: int, token: str, side: str, nonce: bytes = b"") -> bytes:
    """The blinded PNG of the ``left`` or ``right`` image of the person's own task ``token``: both
    sides on one canvas and of one byte length (:func:`served_pair`), padded with bytes drawn from
    ``nonce`` (the page gives each viewer and task its own, so no two viewers get the same file or
    URL: Streamlit names a media file by a hash of its bytes)."""
    if side not in ("left", "right"):
        raise StudyError(f"A side is left or right, not {side!r}.")
    row = _own_task(db, user_id, token)
    dataset, paper_id, a, b = db.execute(
        "SELECT s.dataset, p.paper_id, p.system_a, p.system_b FROM pairwise_pairs p JOIN pairwise_studies s"
        " ON s.id = p.study_id WHERE p.id = ?", [row["pair_id"]]).fetchone()
    folder = aibench_store.dataset_path(dataset)
    records = _image_records(str(folder))
    paths = [records.get((_system_on(row, s, (paper_id, a, b)), paper_id)) for s in ("left", "right")]
    if None in paths:
        raise StudyError("That image is no longer stored; tell the study lead.")
    left, right = served_pair(str(folder / paths[0]), str(folder / paths[1]))
    size = _bucket(max(len(left), len(right)) + PAD_OVERHEAD)
    return pad_png(left if side == "left" else right, size, pad_fill(nonce, side))


def _image_records(folder: str) -> dict[tuple[str, str], str]:
    """(system, paper) -> the stored image's path, read again when ``images.jsonl`` changes (``aibench
    draw`` adds a system to a stored set while the app runs)."""
    try:
        stamp = os.stat(Path(folder) / "images.jsonl").st_mtime_ns
    except OSError:
        stamp = 0
    return _records_at(folder, stamp)


@functools.lru_cache(maxsize=8)
def _records_at(folder: str, stamp: int) -> dict[tuple[str, str], str]:
    data = aibench_dataset.load_dataset(folder)
    return {key: record.path for key, record in data.images.items()}


def _pixels(path: str, box: tuple[int, int]):
    """The stored image's pixels (RGB), scaled down to fit ``box`` when larger, aspect kept."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = image.convert("RGB")
    scale = min(box[0] / pixels.width, box[1] / pixels.height, 1.0)
    if scale < 1.0:
        pixels = pixels.resize((max(1, round(pixels.width * scale)), max(1, round(pixels.height * scale))),
                               Image.LANCZOS)
    return pixels


def _png(pixels) -> bytes:
    from PIL import Image

    clean = Image.frombytes("RGB", pixels.size, pixels.tobytes())  # pixels only: no name, text or profile
    out = io.BytesIO()
    clean.save(out, "PNG", compress_level=6)
    return out.getvalue()


@functools.lru_cache(maxsize=64)
def blinded_png(path: str) -> bytes:
    """The pixels of the stored image at ``path`` (at most :data:`MAX_SERVED_WIDTH` wide) as a plain
    PNG (nothing but IHDR, IDAT and IEND), not yet padded (:func:`pad_png`)."""
    return _png(_pixels(path, (MAX_SERVED_WIDTH, 10 * MAX_SERVED_WIDTH)))


@functools.lru_cache(maxsize=64)
def served_pair(left: str, right: str) -> tuple[bytes, bytes]:
    """Both images of a pair as plain PNGs on one :data:`CANVAS` (each scaled down to fit when
    larger, centred, the rest white): a pair's two files have the same dimensions whatever sizes and
    shapes the systems drew, so neither names its system. Not yet padded (:func:`pad_png`)."""
    from PIL import Image

    served = []
    for path in (left, right):
        pixels = _pixels(path, CANVAS)
        canvas = Image.new("RGB", CANVAS, (255, 255, 255))
        canvas.paste(pixels, ((CANVAS[0] - pixels.width) // 2, (CANVAS[1] - pixels.height) // 2))
        served.append(_png(canvas))
    return served[0], served[1]


#: Bytes a padding chunk adds besides its body (length, type, CRC).
PAD_OVERHEAD = 12


def _bucket(length: int) -> int:
    """``length`` rounded up to a multiple of :data:`SIZE_BUCKET`."""
    return -(-length // SIZE_BUCKET) * SIZE_BUCKET


def pad_fill(nonce: bytes, label: str) -> Callable[[int], bytes] | None:
    """Padding drawn from ``nonce`` (SHAKE-256 of it and ``label``), or None for zeros (no nonce)."""
    if not nonce:
        return None
    return lambda n: hashlib.shake_256(nonce + b"|" + label.encode()).digest(n)


def pad_png(png: bytes, size: int | None = None, fill: Callable[[int], bytes] | None = None) -> bytes:
    """``png`` with a private ancillary chunk (``pdNg``; decoders skip it) before IEND, so it is
    ``size`` bytes long (default: the next multiple of :data:`SIZE_BUCKET`, at least
    :data:`PAD_OVERHEAD` bytes more). The chunk holds zeros, or ``fill(n)``'s bytes."""
    size = _bucket(len(png) + PAD_OVERHEAD) if size is None else size
    if size < len(png) + PAD_OVERHEAD:
        raise ValueError(f"a {len(png):,}-byte PNG cannot be padded to {size:,} bytes")
    end = png.rindex(b"IEND") - 4
    length = size - len(png) - PAD_OVERHEAD
    body = fill(length) if fill is not None else b"\x00" * length
    chunk = struct.pack(">I", length) + b"pdNg" + body + struct.pack(">I", zlib.crc32(b"pdNg" + body))
    return png[:end] + chunk + png[end:]


def _open_task(db: sqlite_utils.Database, user_id: int, token: str) -> dict:
    row = _own_task(db, user_id, token)
    if row["vote_id"] is not None:
        raise StudyError("That pair already has your vote (a second key press or another tab); here is the next one.")
    if row["status"] != "open":
        raise StudyError(_NOT_OPEN[row["status"]])
    if row["first_shown_at"] is None:
        raise StudyError("That pair has not been shown yet; here is your current one.")
    return row


def _update(db: sqlite_utils.Database, task_id: int, changes: dict) -> None:
    if changes:
        db.execute(f"UPDATE pairwise_tasks SET {', '.join(f'{c} = ?' for c in changes)} WHERE id = ?",
                   [*changes.values(), task_id])


def _paused(row: dict, at: float, reason: str, settings: ClockSettings) -> dict:
    """The columns of a pause (the study clock's) with its reason and the count of idle pauses."""
    return {**paused_columns(row, at, reason, settings.grace_seconds), "pause_reason": reason,
            "idle_pauses": row["idle_pauses"] + (reason == "idle")}


def _beat_state(row: dict, tab: str | None) -> str | None:
    """Why a tab may not run this pair's clock now (None: it may): ``voted``, ``closed``,
    ``paused`` or ``elsewhere`` (another tab holds it)."""
    if row["vote_id"] is not None or row["first_shown_at"] is None:
        return "voted"  # or not this tab's pair yet: the page shows the current one
    if row["status"] != "open":
        return "closed"
    if row["paused_at"] is not None:
        return "paused"
    if tab is not None and row["active_tab"] not in (None, tab):
        return "elsewhere"
    return None


def heartbeat(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None, *, visible: bool = True,
              tab: str | None = None, settings: ClockSettings | None = None) -> tuple[str, float]:
    """The page shows the pair in ``tab``: book the gap (written at most once per heartbeat
    interval, as a study question's clock does); pause as idle after the idle limit. The state
    (``active``, ``hidden``, ``paused``, ``voted``, ``closed`` or ``elsewhere``: only the tab
    that holds the pair runs its clock) and the active seconds so far."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    row = _own_task(db, user_id, token)
    state = _beat_state(row, tab)
    if state is None and not (_is_idle(row, at, settings, visible) or _beat_due(row, at, settings, visible)):
        state = "active" if visible else "hidden"
    if state is not None:
        return state, shown_seconds(row, settings.grace_seconds, at)
    with write_transaction(db):
        row = _own_task(db, user_id, token)
        if (state := _beat_state(row, tab)) is not None:
            return state, shown_seconds(row, settings.grace_seconds, at)
        state, changes = beat_columns(row, at, settings, visible)
        if state == "paused":
            changes = _paused(row, at, "idle", settings)
        _update(db, row["id"], changes)
    return state, {**row, **changes}["active_seconds"]


def record_activity(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None, *,
                    tab: str | None = None, visible: bool = True, input_age: float = 0.0,
                    settings: ClockSettings | None = None) -> tuple[str, float]:
    """An input report of the page in ``tab`` (the activity component, as on a study's question
    page): the time booked up to ``at`` and, from a visible tab, an input ``input_age`` seconds
    before ``at``, which keeps the idle pause away. Nothing is written for a tab that lost the
    pair or for a paused, voted or closed one. The state and the active seconds, as
    :func:`heartbeat` gives them."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        row = _own_task(db, user_id, token)
        if (state := _beat_state(row, tab)) is not None:
            return state, shown_seconds(row, settings.grace_seconds, at)
        changes = activity_columns(row, at, settings, visible, input_age)
        _update(db, row["id"], changes)
    return ("active" if visible else "hidden"), {**row, **changes}["active_seconds"]


def pause(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None,
          settings: ClockSettings | None = None) -> None:
    """Pause the pair (the Pause button): hidden in every tab, its clock stopped."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        row = _open_task(db, user_id, token)
        if row["paused_at"] is None:
            _update(db, row["id"], _paused(row, at, "button", settings))


def resume(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None, *,
           tab: str | None = None, settings: ClockSettings | None = None) -> None:
    """Run the pair's clock again in ``tab`` (which takes the pair over)."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        row = _open_task(db, user_id, token)
        if row["paused_at"] is not None:
            _update(db, row["id"], {**resume_columns(row, at), "pause_reason": None})
            row = _own_task(db, user_id, token)
        if tab is not None and row["active_tab"] != tab:
            _claim(db, row, tab, at, settings)


def vote(db: sqlite_utils.Database, user_id: int, token: str, choice: str, at: float | None = None,
         settings: ClockSettings | None = None, *, tab: str | None = None) -> None:
    """Record the person's choice on their open task ``token`` with the clock's totals. Refused
    (:class:`TakenOverError`) from a tab that does not hold the pair."""
    if choice not in CHOICES:
        raise StudyError(f"A choice is one of {', '.join(CHOICES)}, not {str(choice)[:20]!r}.")
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        row = _open_task(db, user_id, token)
        if tab is not None and row["active_tab"] not in (None, tab):
            raise TakenOverError("This pair is open in another tab, so your vote was not taken here. Vote in that "
                                 "tab, or press 'Continue here'.")
        if row["paused_at"] is not None:
            raise StudyError("The pair is paused; resume it before you vote.")
        row = {**row, **_advance(row, at, settings.grace_seconds)}
        left_is_a = bool(row["left_is_a"])
        outcome = {"left": "a" if left_is_a else "b", "right": "b" if left_is_a else "a"}.get(choice, choice)
        db.execute("INSERT INTO pairwise_votes (task_id, choice, outcome, active_seconds, away_seconds, idle_seconds,"
                   " paused_seconds, wall_seconds, at, takeovers, idle_pauses) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [row["id"], choice, outcome, row["active_seconds"], row["away_seconds"], row["idle_seconds"],
                    row["paused_seconds"], max(0.0, at - row["first_shown_at"]), at, row["takeovers"],
                    row["idle_pauses"]])
        _update(db, row["id"], {k: row[k] for k in ("active_seconds", "away_seconds", "last_beat_at")})



def flag_pair(db: sqlite_utils.Database, user_id: int, token: str, kind: str, note: str = "") -> int:
    """A person's flag on their own pair; nothing else changes (the clock runs on)."""
    if kind not in FLAG_KINDS:
        raise StudyError(f"Unknown kind of problem {str(kind)[:20]!r}: choose one of {', '.join(FLAG_KINDS)}.")
    note = _bounded_note("note", note)
    if kind == "other" and not note:
        raise StudyError("Say in the note what the problem is (the kind is 'other').")
    row = _own_task(db, user_id, token)
    with write_transaction(db):
        return int(db.execute("INSERT INTO pairwise_flags (study_id, task_id, user_id, kind, note, created_at)"
                              " VALUES (?, ?, ?, ?, ?, ?)",
                              [row["study_id"], row["id"], user_id, kind, note, now()]).lastrowid)


# ---------------------------------------------------------------- the lead's side

def progress(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """Per annotator: votes, tasks, median active seconds per vote, pauses (idle ones apart),
    take-overs by a second tab, open flags, and whether the lead took them off the study."""
    rows = db.execute(
        """
        SELECT u.username,
               (SELECT COUNT(*) FROM pairwise_tasks t JOIN pairwise_votes v ON v.task_id = t.id
                 WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               (SELECT COUNT(*) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               (SELECT SUM(t.pause_count) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               (SELECT COUNT(*) FROM pairwise_flags f WHERE f.study_id = m.study_id AND f.user_id = m.user_id
                 AND f.resolved_at IS NULL),
               (SELECT SUM(t.idle_pauses) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               (SELECT SUM(t.takeovers) FROM pairwise_tasks t WHERE t.study_id = m.study_id AND t.user_id = m.user_id),
               m.removed_at IS NOT NULL
        FROM pairwise_members m JOIN users u ON u.id = m.user_id WHERE m.study_id = ? ORDER BY u.username
        """, [study_id]).fetchall()
    seconds = votes_frame(db, study_id, include_practice=True).groupby("annotator")["active_seconds"].median()
    columns = ["annotator", "votes", "pairs", "pauses", "idle pauses", "take-overs", "open flags", "median active s",
               "taken off"]
    return pd.DataFrame([{"annotator": r[0], "votes": r[1], "pairs": r[2], "pauses": r[3] or 0,
                          "idle pauses": r[5] or 0, "take-overs": r[6] or 0, "open flags": r[4],
                          "median active s": round(float(seconds.get(r[0], math.nan)), 1), "taken off": bool(r[7])}
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
    """The lead's download: every counted vote (safe CSV)."""
    return safe_text.frame_csv(votes_frame(db, study_id))


def votes_of(frame: pd.DataFrame) -> list[pw.Vote]:
    """The frame's votes for :mod:`structext_core.evaluation.pairwise` (``first`` = system a)."""
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
    """The systems with images in the stored data set ``dataset`` (empty when it cannot be read)."""
    try:
        return aibench_dataset.load_dataset(aibench_store.dataset_path(dataset)).systems
    except (ValueError, OSError):
        return []
