"""How a person's visit to a study ends, and the platform's code and address they are sent back with.

Outcomes (``study_annotators.outcome``, with ``outcome_at``): ``completed``, ``screened_out``,
``timed_out`` and ``declined`` (:func:`structext_core.studio.crowd.consent.decline`). The first
outcome recorded is the one that stands (:func:`record_outcome`).

What ends a visit (:func:`end_state`, asked on every run of the annotator's page):

- **queue done**: every question dealt to the person is answered (or given up) -> ``completed``;
- **time is up**: the lead set a time budget (``study_crowd.time_budget_seconds``) and the person's
  active time in the study reached it -> ``completed`` (the screen says the time is up). Active time
  is the honest clock's, as the person's own progress panel counts it
  (:func:`structext_core.studio.study.own_progress`): every question of the study, practice included,
  the open one as its clock stands. It is checked on each run of the page, so a question open when
  the budget runs out can still be answered;
- **screened out by gold**: only in a study whose lead set a screen-out code or address (a lab's own
  study keeps its people and flags them on the dashboard, as before). Once the person has answered
  :data:`MIN_GOLD_ANSWERS` gold questions (or every gold question dealt to them, when they have
  fewer), and after each gold answer from then on, their share of gold answers passed (a lead's
  override counts, as in :func:`structext_core.studio.study.gold_report`) below the study's gold pass
  mark -> ``screened_out``. A screen-out is checked before the other two;
- **timed out**: the lead set a time-out (``study_crowd.timeout_seconds``, the platform's "maximum
  time allowed") and a person who came by a study link has not finished that long after arriving
  (``participants.enrolled_at``; wall time, as the platform counts it) -> ``timed_out``. Checked
  last: a person whose queue is done or whose budget is used up has completed, however late. A
  person timed out no longer holds a place of the link (:mod:`.links`), so the place goes to someone
  else; what they answered stays. There is no background thread: :func:`time_out_overdue` records
  every time-out due when someone opens a study link (before the places are counted) and when the
  lead opens the study; the person's own page records theirs on its next run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio.crowd import dealing
from structext_core.studio.crowd.settings import CrowdSettings, crowd_settings
from structext_core.studio.errors import StudyError
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.progress import own_progress
from structext_core.studio.study.scores import OVERRIDE_JOIN, _score_rows, automatic_score, final_score
from structext_core.studio.study.store import PASS_THRESHOLD

OUTCOMES = ("completed", "screened_out", "timed_out", "declined")
#: Gold answers a person gives before gold can screen them out (fewer when fewer gold questions are theirs).
MIN_GOLD_ANSWERS = 3


class OutcomeError(StudyError):
    """An outcome that cannot be recorded; the message says why."""


@dataclass(frozen=True)
class EndScreen:
    """What the person's last screen shows: the outcome, the platform's code for it and the address
    to send them back to (each None when the lead set none: the screen then says they are done and
    can close the tab). ``reason``: ``done`` (queue done), ``time_up``, ``gold`` (screened out),
    ``declined`` or ``timed_out``. ``participant``: the person came by a study link."""

    outcome: str
    code: str | None
    url: str | None
    reason: str = ""
    participant: bool = False


def _screen(settings: CrowdSettings, outcome: str, reason: str, participant: bool) -> EndScreen:
    code, url = {
        "completed": (settings.completion_code, settings.completion_url),
        "screened_out": (settings.screenout_code, settings.screenout_url),
        "declined": (settings.no_consent_code, settings.no_consent_url),
    }.get(outcome, (None, None))
    return EndScreen(outcome, code, url, reason, participant)


def turned_away(db: sqlite_utils.Database, study_id: int) -> EndScreen:
    """The end of a visit the study's link refused (:data:`links.TURNED_AWAY <structext_core.studio.crowd.links.TURNED_AWAY>`:
    full, closed or expired when the person came): the study's screen-out code and address, as for a
    person screened out, since the platform must be told they could not take part. Nothing is recorded:
    no account was made."""
    return _screen(crowd_settings(db, study_id), "screened_out", "turned_away", participant=True)


def queue_done(db: sqlite_utils.Database, study_id: int, user_id: int) -> bool:
    """True when the person has answered (or given up on) every question dealt to them, at least one,
    and nothing more may be dealt to them (a study dealing k per item deals one question at a time:
    :func:`structext_core.studio.crowd.dealing.queue_done`)."""
    answered = db.execute("SELECT COUNT(*) FROM responses WHERE study_id = ? AND user_id = ?",
                          [study_id, user_id]).fetchone()[0]
    return answered > 0 and dealing.queue_done(db, study_id, user_id)


def active_seconds(db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None) -> float:
    """The person's active time in the study on the honest clock (practice included, the open question
    as its clock stands): what the time budget and the payment export count."""
    return own_progress(db, study_id, user_id, at=at).active_seconds


def gold_standing(db: sqlite_utils.Database, study_id: int, user_id: int) -> tuple[int, int, int]:
    """``(dealt, answered, passed)``: the person's gold questions, their answers to them, and the
    answers that passed (the score that counts at or above the pass threshold)."""
    dealt = db.execute(
        "SELECT COUNT(*) FROM assignments WHERE study_id = ? AND user_id = ? AND item_id IN"
        " (SELECT id FROM study_items WHERE study_id = ? AND kind = 'gold')",
        [study_id, user_id, study_id]).fetchone()[0]
    if not dealt:
        return 0, 0, 0
    rows = db.execute(
        f"SELECT r.id, r.rouge_l, o.score FROM responses r {OVERRIDE_JOIN}"
        " WHERE r.study_id = ? AND r.user_id = ? AND r.item_id IN"
        " (SELECT id FROM study_items WHERE study_id = ? AND kind = 'gold')",
        [study_id, user_id, study_id]).fetchall()
    unscored = [response_id for response_id, rouge, _ in rows if rouge is None]
    scored = _score_rows(db, unscored) if unscored else {}
    passed = 0
    for response_id, rouge, override in rows:
        rouge = scored[response_id][0] if rouge is None else rouge
        passed += final_score(automatic_score(rouge), override) >= PASS_THRESHOLD
    return dealt, len(rows), passed


def screened_out(db: sqlite_utils.Database, study_id: int, user_id: int,
                 settings: CrowdSettings | None = None) -> bool:
    """Whether gold screens the person out now (the rule in the module notes)."""
    settings = settings or crowd_settings(db, study_id)
    if not (settings.screenout_code or settings.screenout_url):
        return False
    dealt, answered, passed = gold_standing(db, study_id, user_id)
    if not answered or answered < min(MIN_GOLD_ANSWERS, dealt):
        return False
    gold_pass = db.execute("SELECT gold_pass FROM studies WHERE id = ?", [study_id]).fetchone()[0]
    return passed / answered < float(gold_pass)


def _enrolled_at(db: sqlite_utils.Database, study_id: int, user_id: int) -> float | None:
    """When the person arrived by a study link; None for someone who did not come by one."""
    row = db.execute("SELECT enrolled_at FROM participants WHERE user_id = ? AND study_id = ?",
                     [user_id, study_id]).fetchone()
    return None if row is None else row[0]


def deadline(db: sqlite_utils.Database, study_id: int, user_id: int) -> float | None:
    """When the person's time-out falls (seconds since the epoch): None without a time-out or for someone
    who did not come by a study link."""
    timeout = crowd_settings(db, study_id).timeout_seconds
    enrolled_at = _enrolled_at(db, study_id, user_id) if timeout else None
    return None if enrolled_at is None else enrolled_at + timeout


def end_state(db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None) -> EndScreen | None:
    """How the person's visit ends, if it has: the outcome recorded already (it stands), else one
    reached now (module notes); None while they go on, and for someone not in the study or taken
    off it. Reads only: :func:`record_outcome` (or :func:`settle`) records it."""
    row = db.execute("SELECT outcome, removed_at FROM study_annotators WHERE study_id = ? AND user_id = ?",
                     [study_id, user_id]).fetchone()
    if row is None:
        return None
    outcome, removed_at = row
    settings = crowd_settings(db, study_id)
    enrolled_at = _enrolled_at(db, study_id, user_id)
    participant = enrolled_at is not None
    if outcome is not None:
        reason = {"screened_out": "gold", "declined": "declined", "timed_out": "timed_out"}.get(outcome)
        if reason is None:
            reason = "done" if queue_done(db, study_id, user_id) else "time_up"
        return _screen(settings, outcome, reason, participant)
    if removed_at is not None:
        return None
    if screened_out(db, study_id, user_id, settings):
        return _screen(settings, "screened_out", "gold", participant)
    if queue_done(db, study_id, user_id):
        return _screen(settings, "completed", "done", participant)
    if settings.time_budget_seconds and active_seconds(db, study_id, user_id, at) >= settings.time_budget_seconds:
        return _screen(settings, "completed", "time_up", participant)
    moment = time.time() if at is None else at
    if participant and settings.timeout_seconds and moment >= enrolled_at + settings.timeout_seconds:
        return _screen(settings, "timed_out", "timed_out", participant)
    return None


def record_outcome(db: sqlite_utils.Database, study_id: int, user_id: int, outcome: str,
                   at: float | None = None) -> str:
    """Record how the person's visit ended, once: the first outcome recorded stands (a second call
    changes nothing). Returns the outcome in force. :class:`OutcomeError` for an unknown outcome or
    someone not in the study."""
    if outcome not in OUTCOMES:
        raise OutcomeError(f"An outcome is one of {', '.join(OUTCOMES)}; got {str(outcome)[:40]!r}.")
    with write_transaction(db):
        row = db.execute("SELECT outcome FROM study_annotators WHERE study_id = ? AND user_id = ?",
                         [study_id, user_id]).fetchone()
        if row is None:
            raise OutcomeError("That person does not take part in this study.")
        if row[0] is not None:
            return row[0]
        db.execute("UPDATE study_annotators SET outcome = ?, outcome_at = ? WHERE study_id = ? AND user_id = ?"
                   " AND outcome IS NULL", [outcome, time.time() if at is None else at, study_id, user_id])
    return outcome


def settle(db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None) -> EndScreen | None:
    """:func:`end_state`, recorded when newly reached; the screen of the outcome that stands."""
    end = end_state(db, study_id, user_id, at)
    if end is None:
        return None
    if record_outcome(db, study_id, user_id, end.outcome, at) != end.outcome:  # another run recorded first
        return end_state(db, study_id, user_id, at)
    return end


def time_out_overdue(db: sqlite_utils.Database, study_id: int, at: float | None = None) -> list[int]:
    """Record the end of every person who came by a study link and is past the study's time-out with no
    outcome yet (:func:`settle`: ``timed_out``, or ``completed`` for one who had finished); the ids of
    those timed out. Nothing when the study has no time-out. Inside the caller's transaction when it
    holds one opened with ``enclosing=True`` (a link counting its places)."""
    timeout = crowd_settings(db, study_id).timeout_seconds
    if not timeout:
        return []
    at = time.time() if at is None else at
    overdue = db.execute(
        "SELECT p.user_id FROM participants p JOIN study_annotators sa ON sa.study_id = p.study_id"
        " AND sa.user_id = p.user_id WHERE p.study_id = ? AND sa.outcome IS NULL AND sa.removed_at IS NULL"
        " AND p.enrolled_at + ? <= ? ORDER BY p.enrolled_at", [study_id, timeout, at]).fetchall()
    timed_out = []
    for (user_id,) in overdue:
        end = settle(db, study_id, user_id, at)
        if end is not None and end.outcome == "timed_out":
            timed_out.append(user_id)
    return timed_out
