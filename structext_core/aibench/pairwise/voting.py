"""Pairwise studies: the annotator's side (blind): the current pair, its honest clock (:mod:`structext_core.studio.clock`), the vote, flags."""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from structext_core.aibench.pairwise.common import CHOICES, FLAG_KINDS
from structext_core.aibench.pairwise.counts import person_counts
from structext_core.studio import clock
from structext_core.studio.clock import ClockSettings, TakenOverError, clock_settings, shown_seconds
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.quality import _bounded_note
from structext_core.studio.study.store import StudyError, now

# ---------------------------------------------------------------- the annotator's side (blind)

@dataclass(frozen=True)
class TaskView:
    """What the voting page may know of the current task: an opaque token, never a name."""

    token: str
    #: The pair's number among the practice pairs (``practice``), else among what counts: the study's
    #: pairs and their repeats (:attr:`counts.PersonCounts.judgements`, ``total``); ``done`` before it.
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
    rows = _current_rows(db, study_id, user_id)
    if not rows:
        return None
    row, elsewhere = clock.open_item(db, _ITEMS, rows[0], tab, at, settings, take_over=take_over)
    counts = person_counts(db, study_id, user_id)[0]
    # numbered apart: the practice pairs, then what counts (the study's pairs and their repeats)
    position = row["position"] if row["kind"] == "practice" else row["position"] - counts.practice
    total = counts.practice if row["kind"] == "practice" else counts.judgements
    return TaskView("" if elsewhere else row["token"], position, total, position - 1,
                    row["kind"] == "practice", row["paused_at"] is not None,
                    shown_seconds(row, settings.grace_seconds, at), elsewhere, row["pause_reason"])


def take_over(db: sqlite_utils.Database, study_id: int, user_id: int, tab: str, at: float | None = None,
              settings: ClockSettings | None = None) -> None:
    """"Continue here": ``tab`` takes the study's current pair over from another tab."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    _membership(db, study_id, user_id)
    with write_transaction(db):
        rows = _current_rows(db, study_id, user_id)
        if rows:
            clock.show(db, _ITEMS, rows[0], tab, at, settings)


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


def _hold(db: sqlite_utils.Database, row: dict, tab: str, at: float) -> None:
    """``tab`` holds the person's pairs of the study (as ``study_annotators.active_tab``)."""
    db.execute("UPDATE pairwise_members SET active_tab = ?, tab_claimed_at = ? WHERE study_id = ? AND user_id = ?",
               [tab, at, row["study_id"], row["user_id"]])


def _pause_columns(db: sqlite_utils.Database, row: dict, at: float, reason: str) -> dict:
    """A pair's pause keeps its reason and the count of idle pauses."""
    return {"pause_reason": reason, "idle_pauses": row["idle_pauses"] + (reason == "idle")}


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


#: Where pairwise tasks keep their clocks (the honest clock of :mod:`structext_core.studio.clock`).
_ITEMS = clock.TimedItems(
    read=lambda db, row: _task_rows(db, "t.id = ?", [row["id"]])[0],
    write=lambda db, task_id, changes: _update(db, task_id, changes),
    hold=_hold,
    refusal=lambda row, tab: _beat_state(row, tab),
    done=lambda row: row["vote_id"] is not None,
    on_pause=_pause_columns,
    on_resume=lambda db, row, at: {"pause_reason": None},
)


def heartbeat(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None, *, visible: bool = True,
              tab: str | None = None, settings: ClockSettings | None = None) -> tuple[str, float]:
    """The page shows the pair in ``tab``: book the gap (written at most once per heartbeat
    interval, as a study question's clock does); pause as idle after the idle limit. The state
    (``active``, ``hidden``, ``paused``, ``voted``, ``closed`` or ``elsewhere``: only the tab
    that holds the pair runs its clock) and the active seconds so far."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    return clock.beat(db, _ITEMS, _own_task(db, user_id, token), tab, at, settings, visible=visible)


def beat(db: sqlite_utils.Database, user_id: int, item: int | str, tab: str, visible: bool) -> tuple[str, float]:
    """A heartbeat posted to the clock's route (the member's ``CLOCK_BEATS``, kind ``pairwise``:
    :mod:`structext_core.studio.clock_beat`), booked as :func:`heartbeat` books the page's."""
    return heartbeat(db, user_id, str(item), visible=visible, tab=tab, settings=clock_settings())


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
    state, seconds, _ = clock.report_input(db, _ITEMS, _own_task(db, user_id, token), tab, at, settings,
                                           visible=visible, input_age=input_age)
    return state, seconds


def pause(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None,
          settings: ClockSettings | None = None) -> None:
    """Pause the pair (the Pause button): hidden in every tab, its clock stopped."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        row = _open_task(db, user_id, token)
        if row["paused_at"] is None:
            clock.pause(db, _ITEMS, row, at, "button", settings)


def resume(db: sqlite_utils.Database, user_id: int, token: str, at: float | None = None, *,
           tab: str | None = None, settings: ClockSettings | None = None) -> None:
    """Run the pair's clock again in ``tab`` (which takes the pair over)."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        clock.resume(db, _ITEMS, _open_task(db, user_id, token), tab, at, settings)


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
        if clock.held_elsewhere(row, tab):
            raise TakenOverError("This pair is open in another tab, so your vote was not taken here. Vote in that "
                                 "tab, or press 'Continue here'.")
        if row["paused_at"] is not None:
            raise StudyError("The pair is paused; resume it before you vote.")
        row = {**row, **clock.advance(row, at, settings.grace_seconds)}
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
