"""Pairwise studies: setup (the draw of pairs, create, people, open or close, archive) and listing."""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import seal
from structext_core.aibench import store as aibench_store
from structext_core.aibench.pairwise.common import MAX_NAME_CHARS, MAX_PAIRS
from structext_core.aibench.pairwise.counts import person_counts
from structext_core.studio import changes
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.store import StudyError, _check_annotators, annotator_order, now
from structext_core.text import limits as safe_text_limits
from structext_core.text.words import plural

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
    """Add an annotator to a study (the same pairs, in their own order and with their own sides)."""
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


def has_study(db: sqlite_utils.Database, user: dict) -> bool:
    """Whether :func:`studies_for_annotator` lists a study for ``user`` (the navigation lists the page only then)."""
    return db.execute("SELECT 1 FROM pairwise_members m JOIN pairwise_studies s ON s.id = m.study_id WHERE m.user_id = ?"
                      " AND s.archived_at IS NULL AND m.removed_at IS NULL LIMIT 1", [user["id"]]).fetchone() is not None


def studies_for_annotator(db: sqlite_utils.Database, user_id: int) -> list[tuple[int, str, int, int, str]]:
    """(study id, name, judged, judgements, status) of the studies ``user_id`` votes in: judged of
    what counts after practice (:class:`counts.PersonCounts`: the study's pairs and their repeats)."""
    out = []
    for study_id, name, status in db.execute(
            "SELECT s.id, s.name, s.status FROM pairwise_members m JOIN pairwise_studies s ON s.id = m.study_id"
            " WHERE m.user_id = ? AND s.archived_at IS NULL AND m.removed_at IS NULL ORDER BY s.id", [user_id]):
        mine = person_counts(db, study_id, user_id)[0]
        out.append((study_id, name, mine.judged, mine.judgements, status))
    return out
