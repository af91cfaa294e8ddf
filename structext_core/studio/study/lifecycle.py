"""A study's lifecycle once it exists: rename, archive, clone, and its members (who answers it,
removed or replaced).

Each change is one write transaction that re-reads what it checks, and writes its record in
the audit log (structext_core.studio.changes) in the same transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import changes
from structext_core.studio.crowd import consent as crowd_consent
from structext_core.studio.crowd import dealing
from structext_core.studio.crowd import settings as crowd_settings
from structext_core.studio.storage import write_transaction
from structext_core.studio.study import leads
from structext_core.studio.study.store import (
    StudyError,
    _assign,
    _check_annotators,
    get_study,
    now,
    progress_words,
)
from structext_core.text import limits


def _check_new_name(db: sqlite_utils.Database, name: str, keep_id: int | None = None) -> str:
    """The cleaned study name, or :class:`StudyError` (empty, too long, taken by another study)."""
    name = (name or "").strip()
    if not name:
        raise StudyError("Study name is empty: give the study a name, e.g. 'pilot-1'.")
    try:
        limits.check_name("study name", name)
    except limits.LimitError as exc:
        raise StudyError(str(exc)) from None
    if db.execute("SELECT 1 FROM studies WHERE name = ? COLLATE NOCASE AND id IS NOT ?", [name, keep_id]).fetchone():
        raise StudyError(f"A study named {name!r} already exists: choose another name.")
    return name


def rename_study(db: sqlite_utils.Database, study_id: int, name: str, *, by_user: int | None) -> str:
    leads.check_runs(db, by_user, study_id, "rename the study")
    """Give a study a new name (unique, any case); returns the name as stored."""
    with write_transaction(db):
        old = get_study(db, study_id).name
        name = _check_new_name(db, name, keep_id=study_id)
        if name == old:
            raise StudyError(f"The study is called {name!r} already: type another name.")
        try:
            db.execute("UPDATE studies SET name = ? WHERE id = ?", [name, study_id])
        except sqlite3.IntegrityError:  # the unique index, should the check above ever miss
            raise StudyError(f"A study named {name!r} already exists: choose another name.") from None
        changes.record(db, by_user, "study.rename", f"study:{study_id}", old=old, new=name)
    return name


def set_study_archived(db: sqlite_utils.Database, study_id: int, archived: bool, *, by_user: int | None) -> None:
    """Archive a study (hidden from its annotators and from the default chooser, closed for
    answering, kept whole: answers, export and Results are unchanged) or bring it back."""
    leads.check_runs(db, by_user, study_id, "archive or bring back the study")
    with write_transaction(db):
        study = get_study(db, study_id)
        if study.archived == archived:
            raise StudyError(f"Study {study.name!r} is {'archived' if archived else 'not archived'} already.")
        db.execute("UPDATE studies SET archived_at = ? WHERE id = ?", [now() if archived else None, study_id])
        changes.record(db, by_user, "study.archive" if archived else "study.unarchive", f"study:{study_id}")


def clone_study(
    db: sqlite_utils.Database, study_id: int, *, name: str, annotator_ids: Sequence[int] = (),
    by_user: int | None,
) -> int:
    """A new open study with the same suite, settings (the crowd's too: consent text, questionnaire,
    platform codes and addresses, time budget, bonus, dealing), rule and items (practice and gold
    included, same positions) as ``study_id``, under a new ``name``; no answers, no study link, and only the
    annotators chosen here (none is fine: add them later), each with a new order of their own.
    Returns its id. The copy is led by the source's leads and by ``by_user`` when a lead."""
    leads.check_runs(db, by_user, study_id, "copy the study")
    with write_transaction(db):
        source = get_study(db, study_id)
        name = _check_new_name(db, name)
        _check_annotators(db, annotator_ids)
        created = now()
        new_id = db.execute(
            "INSERT INTO studies (name, suite, n_items, seed, rule_text, show_correctness, status,"
            " created_by, created_at, results_when_closed, practice_items, gold_items, gold_pass, benchmark)"
            " SELECT ?, suite, n_items, seed, rule_text, show_correctness, 'open', ?, ?,"
            " results_when_closed, practice_items, gold_items, gold_pass, benchmark FROM studies WHERE id = ?",
            [name, by_user, created, study_id],
        ).lastrowid
        db.execute(
            "INSERT INTO study_items (study_id, position, sample_id, strata, reference_chars, sample_json, kind)"
            " SELECT ?, position, sample_id, strata, reference_chars, sample_json, kind FROM study_items"
            " WHERE study_id = ?"
            " ORDER BY position",
            [new_id, study_id],
        )
        for user_id in dict.fromkeys(annotator_ids):
            _assign(db, new_id, source.seed, user_id, created)
        leads.copy_leads(db, study_id, new_id, by_user, created)
        leads.add_creator(db, new_id, by_user, created)
        crowd_settings.copy_settings(db, study_id, new_id, by_user, created)
        crowd_consent.copy_consent(db, study_id, new_id, by_user, created)
        changes.record(db, by_user, "study.clone", f"study:{new_id}", source=study_id,
                       annotators=list(dict.fromkeys(annotator_ids)))
    return new_id


@dataclass(frozen=True)
class StudyMember:
    """An annotator of a study, as the lead manages them: still taking part or removed."""

    user_id: int
    username: str
    added_at: float
    #: When they were removed from the study (None: taking part), and who took their place.
    removed_at: float | None
    replaced_by: str | None
    answered: int
    total: int
    #: Of ``answered`` and ``total``: the practice questions, and the gold ones.
    practice_answered: int = 0
    practice: int = 0
    gold_answered: int = 0
    gold: int = 0

    @property
    def progress_words(self) -> str:
        """The lead's words for their progress: "5 of 11 study questions answered (gold 1 of 1
        among them) · practice 1 of 1" (:func:`progress_words`)."""
        return progress_words(self.answered - self.practice_answered, self.total - self.practice,
                              self.practice_answered, self.practice, self.gold_answered, self.gold)

    @property
    def removed(self) -> bool:
        """True once the annotator was removed from the study."""
        return self.removed_at is not None

    @property
    def status(self) -> str:
        """``taking part``, ``removed`` or ``removed, replaced by <name>``."""
        if not self.removed:
            return "taking part"
        return f"removed, replaced by {self.replaced_by}" if self.replaced_by else "removed"


def study_members(db: sqlite_utils.Database, study_id: int) -> list[StudyMember]:
    """Everyone who takes or took part in the study, by name, with their answers so far."""
    rows = db.query(
        """
        SELECT sa.user_id, u.username, sa.added_at, sa.removed_at, r.username AS replaced_by,
               (SELECT COUNT(*) FROM responses x WHERE x.study_id = sa.study_id AND x.user_id = sa.user_id)
                 AS answered,
               (SELECT COUNT(*) FROM assignments a WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id)
                 AS total,
               (SELECT COUNT(r.id) FROM assignments a JOIN study_items i ON i.id = a.item_id
                  LEFT JOIN responses r ON r.assignment_id = a.id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'practice')
                 AS practice_answered,
               (SELECT COUNT(*) FROM assignments a JOIN study_items i ON i.id = a.item_id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'practice') AS practice,
               (SELECT COUNT(r.id) FROM assignments a JOIN study_items i ON i.id = a.item_id
                  LEFT JOIN responses r ON r.assignment_id = a.id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'gold') AS gold_answered,
               (SELECT COUNT(*) FROM assignments a JOIN study_items i ON i.id = a.item_id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'gold') AS gold
        FROM study_annotators sa JOIN users u ON u.id = sa.user_id
        LEFT JOIN users r ON r.id = sa.replaced_by
        WHERE sa.study_id = ? ORDER BY u.username COLLATE NOCASE
        """,
        [study_id],
    )
    plans = dealing.plans(db, study_id)  # dealt one at a time: what may still be dealt counts too
    return [StudyMember(**{**row, "total": row["total"] + (plans[row["user_id"]].counted_left
                                                           if row["user_id"] in plans else 0)})
            for row in rows]


def _member_to_remove(db: sqlite_utils.Database, study_id: int, user_id: int) -> str:
    row = db.execute(
        "SELECT u.username, sa.removed_at FROM study_annotators sa JOIN users u ON u.id = sa.user_id"
        " WHERE sa.study_id = ? AND sa.user_id = ?", [study_id, user_id],
    ).fetchone()
    if row is None:
        raise StudyError("That account does not take part in this study.")
    if row[1] is not None:
        raise StudyError(f"{row[0]!r} was removed from this study already.")
    return row[0]


def remove_annotator(db: sqlite_utils.Database, study_id: int, user_id: int, *, by_user: int | None) -> int:
    """Take an annotator off a study: they no longer see it or answer in it; their answers so
    far are kept (dashboard, Results, and the export, marked ``annotator_removed``). Returns
    how many answers they keep."""
    leads.check_runs(db, by_user, study_id, "take an annotator off the study")
    with write_transaction(db):
        get_study(db, study_id)
        _member_to_remove(db, study_id, user_id)
        answered = _remove(db, study_id, user_id, None)
        changes.record(db, by_user, "study.remove_annotator", f"study:{study_id}", user_id=user_id,
                       answers_kept=answered)
    return answered


def replace_annotator(
    db: sqlite_utils.Database, study_id: int, user_id: int, replacement_id: int, *, by_user: int | None
) -> int:
    """Remove an annotator (as :func:`remove_annotator`) and give ``replacement_id`` the same
    questions in the same order as they had (practice first, as for everyone). The removed
    person's answers stay theirs; the replacement answers every question afresh, so the
    study keeps a full set of answers per person. Returns how many questions the replacement got."""
    leads.check_runs(db, by_user, study_id, "replace an annotator")
    with write_transaction(db):
        get_study(db, study_id)
        _member_to_remove(db, study_id, user_id)
        _check_annotators(db, [replacement_id])
        there = db.execute("SELECT removed_at FROM study_annotators WHERE study_id = ? AND user_id = ?",
                           [study_id, replacement_id]).fetchone()
        if there is not None:
            raise StudyError("The replacement already takes part in this study." if there[0] is None else
                             "The replacement was removed from this study before: choose someone else.")
        answered = _remove(db, study_id, user_id, replacement_id)
        db.execute("INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (?, ?, ?)",
                   [study_id, replacement_id, now()])
        given = db.execute(
            "INSERT INTO assignments (study_id, user_id, item_id, seq)"
            " SELECT study_id, ?, item_id, seq FROM assignments WHERE study_id = ? AND user_id = ? ORDER BY seq",
            [replacement_id, study_id, user_id],
        ).rowcount
        changes.record(db, by_user, "study.replace_annotator", f"study:{study_id}", user_id=user_id,
                       replacement_id=replacement_id, answers_kept=answered, questions_given=given)
    return given


def _remove(db: sqlite_utils.Database, study_id: int, user_id: int, replacement_id: int | None) -> int:
    """Inside a write transaction: mark the membership removed (its tab loses the question)."""
    db.execute(
        "UPDATE study_annotators SET removed_at = ?, replaced_by = ?, active_tab = NULL"
        " WHERE study_id = ? AND user_id = ?", [now(), replacement_id, study_id, user_id],
    )
    return db.execute("SELECT COUNT(*) FROM responses WHERE study_id = ? AND user_id = ?",
                      [study_id, user_id]).fetchone()[0]
