"""Answering: the question an annotator sees (blinded), heartbeats, pause and resume (submitting,
giving up and feedback: :mod:`structext_core.studio.study.submitting`)."""

import dataclasses
import json
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import clock
from structext_core.studio.clock import (
    DEFAULT_HEARTBEAT_SECONDS,
    GRACE_FACTOR,
    PAUSE_REASONS,
    ClockSettings,
    clock_settings,
    shown_seconds,
)
from structext_core.studio.crowd import consent as crowd_consent
from structext_core.studio.crowd import dealing
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.kinds import kind_of
from structext_core.studio.study.store import (
    MAX_RESPONSE_CHARS,
    StaleQuestionError,
    StudyError,
    now,
    practice_items,
)

# ---------------------------------------------------------------- answering


@dataclass(frozen=True)
class QuestionView:
    """Everything an annotator's page may show for the current item: no answer, no hint."""

    assignment_id: int
    study_id: int
    seq: int
    total: int
    #: Whether the item's benchmark shows a reference panel (its kind declares ``reference_view``),
    #: and how the panel names the reference (never a stratum that is not the reference's own: a
    #: view carries nothing that names a system or a data set).
    has_reference_panel: bool
    reference_label: str
    reference: str
    question: str
    requirement: str
    first_shown_at: float
    paused_seconds: float
    paused_at: float | None
    draft: str
    active_seconds: float = 0.0
    last_beat_at: float | None = None
    hidden_at: float | None = None
    grace_seconds: float = GRACE_FACTOR * DEFAULT_HEARTBEAT_SECONDS
    #: True when another tab of the annotator holds the question (this one must not show it).
    held_elsewhere: bool = False
    #: Why the question is paused: ``button`` or ``idle`` (None when running).
    pause_reason: str | None = None
    item_id: int = 0
    #: A practice question (``seq`` and ``total`` then count the practice round). A gold
    #: item looks like any other question: nothing here tells them apart.
    practice: bool = False
    #: The study's benchmark (:mod:`structext_core.studio.study.kinds`). A multiple-choice item has
    #: ``options`` (lettered A, B, ...), its ``question``, an empty ``reference`` and, where its
    #: benchmark draws one, an image served by :func:`structext_core.studio.study.images.item_image`;
    #: the draft is the chosen letter. Nothing here names what the image was made by or its file.
    benchmark: str = ""
    options: tuple[str, ...] = ()
    #: The item shows an image beside its question (asked for by the assignment's id).
    has_image: bool = False

    @property
    def paused(self) -> bool:
        """True while the annotator has paused this item."""
        return self.paused_at is not None

    def elapsed(self, at: float | None = None) -> float:
        """Active seconds on the item so far (the honest clock; see the module notes)."""
        return shown_seconds(
            {"active_seconds": self.active_seconds, "last_beat_at": self.last_beat_at,
             "paused_at": self.paused_at, "hidden_at": self.hidden_at},
            self.grace_seconds, now() if at is None else at,
        )


@dataclass(frozen=True)
class ClockStatus:
    """What a heartbeat or an input report found.

    ``state``: ``active`` (this tab holds the running question), ``hidden`` (it holds it,
    but the tab is not visible), ``elsewhere`` (another tab took it over), ``paused``
    (paused in any tab, or just now for idleness), ``answered`` (submitted, here or in
    another tab), ``closed`` (the study was closed) or ``released`` (it went back to the pool while
    its person was away: :mod:`structext_core.studio.crowd.dealing`). ``seconds``: the active time.
    ``draft_saved``: whether a draft sent along was stored (None when none was sent).
    """

    state: str
    seconds: float
    draft_saved: bool | None = None



def accept_rule(db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None) -> None:
    """Record that the annotator has read the study rule (once; the first time counts). Refused
    while they must consent or answer the questionnaire, or once their visit has ended."""
    _membership(db, study_id, user_id)
    if (why := crowd_consent.before_questions(db, study_id, user_id)) is not None:
        raise StudyError(why)
    with write_transaction(db):
        db.execute(
            "UPDATE study_annotators SET rule_accepted_at = ?"
            " WHERE study_id = ? AND user_id = ? AND rule_accepted_at IS NULL",
            [now() if at is None else at, study_id, user_id],
        )


def _membership(db: sqlite_utils.Database, study_id: int, user_id: int) -> dict:
    rows = list(
        db.query(
            "SELECT s.status, s.n_items, sa.rule_accepted_at, sa.removed_at, s.archived_at FROM study_annotators sa"
            " JOIN studies s ON s.id = sa.study_id WHERE sa.study_id = ? AND sa.user_id = ?",
            [study_id, user_id],
        )
    )
    if not rows:
        raise StudyError("You do not take part in this study.")
    if rows[0]["removed_at"] is not None:
        raise StudyError("The study lead has taken you off this study; your answers so far are kept.")
    if rows[0]["archived_at"] is not None:
        raise StudyError("This study has been archived by the study lead; answers are no longer taken.")
    if rows[0]["status"] != "open":
        raise StudyError("This study has been closed by the study lead; answers are no longer taken.")
    return rows[0]


_CLOCK_COLUMNS = """
    a.id, a.study_id, a.user_id, a.item_id, a.seq, a.first_shown_at, a.paused_at, a.paused_seconds,
    a.pause_count, a.draft, a.last_beat_at, a.hidden_at, a.active_seconds, a.away_seconds,
    a.idle_seconds, a.last_input_at, a.active_at_last_input, a.takeovers, sa.active_tab,
    (SELECT p.reason FROM pauses p WHERE p.assignment_id = a.id AND p.ended_at IS NULL
      ORDER BY p.id DESC LIMIT 1) AS pause_reason
"""

_CURRENT_SQL = f"""
    SELECT {_CLOCK_COLUMNS}, i.strata, i.kind = 'practice' AS practice,
           (SELECT COUNT(*) FROM assignments p
             WHERE p.study_id = a.study_id AND p.user_id = a.user_id
               AND p.item_id IN ({practice_items("a.study_id")})) AS n_practice,
           (SELECT COUNT(*) FROM assignments p
             WHERE p.study_id = a.study_id AND p.user_id = a.user_id) AS n_assigned,
           json_extract(i.sample_json, '$.reference') AS reference,
           json_extract(i.sample_json, '$.question') AS question,
           json_extract(i.sample_json, '$.requirement') AS requirement,
           json_extract(i.sample_json, '$.options') AS options,
           json_extract(i.sample_json, '$.image') IS NOT NULL AS has_image, s.benchmark
    FROM assignments a
    JOIN study_annotators sa ON sa.study_id = a.study_id AND sa.user_id = a.user_id
    JOIN studies s ON s.id = a.study_id
    JOIN study_items i ON i.id = a.item_id
    LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE a.study_id = ? AND a.user_id = ? AND r.id IS NULL
    ORDER BY a.seq
    LIMIT 1
"""

_ASSIGNMENT_SQL = f"""
    SELECT {_CLOCK_COLUMNS}, r.id AS response_id, sa.outcome,
           -- archived, or taken off the study: closed for this annotator
           CASE WHEN s.archived_at IS NOT NULL OR sa.removed_at IS NOT NULL THEN 'closed' ELSE s.status END AS status
    FROM assignments a
    JOIN study_annotators sa ON sa.study_id = a.study_id AND sa.user_id = a.user_id
    JOIN studies s ON s.id = a.study_id
    LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE a.id = ? AND a.user_id = ?
"""


def open_question(
    db: sqlite_utils.Database,
    study_id: int,
    user_id: int,
    at: float | None = None,
    *,
    tab: str | None = None,
    take_over: bool = True,
    settings: ClockSettings | None = None,
) -> QuestionView | None:
    """The annotator's current item, shown to the browser tab ``tab``.

    The first showing starts the item's clock. With a ``tab``, the tab claims the
    annotator's study (one active tab per annotator and study): a tab that never showed the
    study takes it over (``take_over=True``); a tab that did and was taken over since
    (``take_over=False``) gets a view with ``held_elsewhere`` set and must not show the item.
    Showing a running item is a heartbeat. Without a ``tab`` (scripts) no tab is tracked.

    Returns None when every item is answered. Raises :class:`StudyError` when the
    annotator is not in the study, the study is closed, they must still consent or answer
    the questionnaire (:func:`structext_core.studio.crowd.consent.before_questions`), the
    rule is not accepted yet, or their visit has ended with a question left.
    Only the reference, question and requirement of the sample are read.
    """
    at = now() if at is None else at
    settings = settings or clock_settings()
    member = _membership(db, study_id, user_id)
    why = crowd_consent.before_questions(db, study_id, user_id)
    if why is not None and why != crowd_consent.ENDED:
        raise StudyError(why)
    if member["rule_accepted_at"] is None:
        raise StudyError("Read and accept the study rule before the first question.")
    if why is None:  # a study dealing k per item: the next question, when due (none once the visit ended)
        dealing.deal(db, study_id, user_id, at)
    rows = list(db.query(_CURRENT_SQL, [study_id, user_id]))
    if not rows:
        return None
    if why is not None:  # ended (completed, screened out, timed out): no new question
        raise StudyError(why)
    row, elsewhere = clock.open_item(db, _ITEMS, rows[0], tab, at, settings, take_over=take_over)
    view = _view(row, settings, elsewhere)
    if not view.practice and (plan := dealing.plan(db, study_id, user_id)) is not None:
        # Dealt one at a time: "question 3 of 10" counts the questions had and those still to come.
        seq = dealing.position(db, study_id, user_id, row["seq"])
        view = dataclasses.replace(view, seq=seq, total=max(seq, row["n_assigned"] - row["n_practice"]
                                                               + plan.counted_left))
    return view


def _update_assignment(db: sqlite_utils.Database, assignment_id: int, changes: dict) -> None:
    if changes:
        columns = ", ".join(f"{column} = ?" for column in changes)
        db.execute(f"UPDATE assignments SET {columns} WHERE id = ?", [*changes.values(), assignment_id])


def _hold(db: sqlite_utils.Database, row: dict, tab: str, at: float) -> None:
    """``tab`` holds the annotator's study (one active tab per annotator and study)."""
    db.execute(
        "UPDATE study_annotators SET active_tab = ?, tab_claimed_at = ? WHERE study_id = ? AND user_id = ?",
        [tab, at, row["study_id"], row["user_id"]],
    )


def _pause_row(db: sqlite_utils.Database, row: dict, at: float, reason: str) -> dict:
    """A pause of a question is a row of ``pauses`` (its reason, its end when resumed)."""
    db.execute("INSERT INTO pauses (assignment_id, started_at, reason) VALUES (?, ?, ?)", [row["id"], at, reason])
    return {}


def _end_pause(db: sqlite_utils.Database, row: dict, at: float) -> dict:
    db.execute("UPDATE pauses SET ended_at = ? WHERE assignment_id = ? AND ended_at IS NULL", [at, row["id"]])
    return {}


#: Where a study's questions keep their clocks (the honest clock of :mod:`structext_core.studio.clock`).
_ITEMS = clock.TimedItems(
    read=lambda db, row: _clock_row(db, row["user_id"], row["id"]),
    write=_update_assignment,
    hold=_hold,
    refusal=lambda row, tab: _clock_state(row, tab),
    done=lambda row: row["response_id"] is not None,
    on_pause=_pause_row,
    on_resume=_end_pause,
)


def take_over(
    db: sqlite_utils.Database, study_id: int, user_id: int, tab: str,
    at: float | None = None, settings: ClockSettings | None = None,
) -> None:
    """"Continue here": ``tab`` takes the study's current question over from another tab."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    _membership(db, study_id, user_id)
    if (why := crowd_consent.before_questions(db, study_id, user_id)) is not None:
        raise StudyError(why)
    with write_transaction(db):
        rows = list(db.query(_CURRENT_SQL, [study_id, user_id]))
        if rows:
            clock.show(db, _ITEMS, _clock_row(db, user_id, rows[0]["id"]), tab, at, settings)


def _view(row: dict, settings: ClockSettings, held_elsewhere: bool) -> QuestionView:
    reference_view = kind_of(row["benchmark"]).reference_view
    # Practice questions come first (seq 1 to n_practice) and are counted on their own.
    practice, n_practice = bool(row["practice"]), row["n_practice"]
    return QuestionView(
        assignment_id=row["id"],
        study_id=row["study_id"],
        seq=row["seq"] if practice else row["seq"] - n_practice,
        total=n_practice if practice else row["n_assigned"] - n_practice,
        has_reference_panel=reference_view is not None,
        reference_label="" if reference_view is None else reference_view(json.loads(row["strata"] or "{}"))[0],
        reference="" if held_elsewhere else row["reference"] or "",
        question="" if held_elsewhere else row["question"],
        requirement="" if held_elsewhere else row["requirement"] or "",
        first_shown_at=row["first_shown_at"],
        paused_seconds=row["paused_seconds"],
        paused_at=row["paused_at"],
        draft="" if held_elsewhere else row["draft"] or "",
        active_seconds=row["active_seconds"],
        last_beat_at=row["last_beat_at"],
        hidden_at=row["hidden_at"],
        grace_seconds=settings.grace_seconds,
        held_elsewhere=held_elsewhere,
        pause_reason=row["pause_reason"],
        item_id=row["item_id"],
        practice=practice,
        benchmark=row["benchmark"],
        options=() if held_elsewhere or not row["options"] else tuple(str(o) for o in json.loads(row["options"])),
        has_image=bool(row["has_image"]) and not held_elsewhere,
    )


def _clock_row(db: sqlite_utils.Database, user_id: int, assignment_id: int) -> dict:
    rows = list(db.query(_ASSIGNMENT_SQL, [assignment_id, user_id]))
    if not rows:
        raise dealing.released_question(db, user_id, assignment_id) or StudyError("That question is not one of yours.")
    return rows[0]


def _clock_state(row: dict, tab: str | None) -> str | None:
    """Why a tab may not run this question's clock now (None: it may)."""
    if row["response_id"] is not None:
        return "answered"
    if row["status"] != "open":
        return "closed"
    if row["paused_at"] is not None:
        return "paused"
    if row["first_shown_at"] is None:
        return "answered"  # not this tab's question yet: the page reloads the current one
    if tab is not None and row["active_tab"] not in (None, tab):
        return "elsewhere"
    return None


def heartbeat(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    tab: str | None,
    at: float | None = None,
    *,
    visible: bool = True,
    settings: ClockSettings | None = None,
) -> ClockStatus:
    """The page is alive and shows the question in ``tab`` (``visible``: the tab is on screen).

    Books the time since the last heartbeat (at most one write per ``heartbeat_seconds``),
    pauses the question with reason ``idle`` after ``idle_pause_seconds`` without input,
    and tells the tab when it must stop showing the question (``elsewhere``, ``paused``,
    ``answered``, ``closed``): only the active tab's heartbeats count.
    """
    at = now() if at is None else at
    settings = settings or clock_settings()
    try:
        row = _clock_row(db, user_id, assignment_id)
    except dealing.ReleasedError:
        return ClockStatus("released", 0.0)  # it went back to the pool: the page shows the next question
    state, seconds = clock.beat(db, _ITEMS, row, tab, at, settings, visible=visible)
    return ClockStatus(state, seconds)


def record_activity(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    tab: str | None,
    at: float | None = None,
    *,
    draft: str | None = None,
    visible: bool = True,
    input_age: float = 0.0,
    settings: ClockSettings | None = None,
) -> ClockStatus:
    """Input in ``tab`` (keys, mouse, scroll, typing) and, when given, the answer as typed so far.

    A visible report is input (it resets the idle time): the last input was ``input_age``
    seconds before ``at`` (reports are throttled; the page says how old its last input is,
    trusted up to :data:`MAX_INPUT_AGE` seconds). A hidden report only says the tab left
    the screen. The draft is kept only for the tab that holds the question and only up to
    ``MAX_RESPONSE_CHARS`` (``draft_saved`` is False otherwise). Nothing is written for a
    tab that lost the question or for a paused, answered or closed one.
    """
    at = now() if at is None else at
    settings = settings or clock_settings()
    saved = None if draft is None else len(draft) <= MAX_RESPONSE_CHARS
    also = {"draft": draft, "draft_saved_at": at} if saved else {}
    try:
        state, seconds, written = clock.report_input(db, _ITEMS, {"id": assignment_id, "user_id": user_id}, tab, at,
                                                     settings, visible=visible, input_age=input_age, also=also)
    except dealing.ReleasedError:
        return ClockStatus("released", 0.0, None if draft is None else False)
    return ClockStatus(state, seconds, saved if written else (None if draft is None else False))


def _open_assignment(db: sqlite_utils.Database, user_id: int, assignment_id: int) -> dict:
    """Inside a write transaction: the assignment if it is this user's open, shown item."""
    row = _clock_row(db, user_id, assignment_id)
    if row["response_id"] is not None:
        raise StaleQuestionError(
            "That question was already submitted (a second click or another tab); "
            "here is your next question."
        )
    if row["first_shown_at"] is None:
        raise StaleQuestionError("That question has not been shown yet; here is your current one.")
    if row["status"] != "open":
        raise StudyError("This study has been closed by the study lead; answers are no longer taken.")
    return row


def pause_question(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    draft: str | None = "",
    at: float | None = None,
    *,
    tab: str | None = None,
    reason: str = "button",
    settings: ClockSettings | None = None,
) -> None:
    """Stop the item's clock and keep the draft answer; pausing twice changes nothing more.

    A pause hides the question in every tab of the annotator. The draft is kept when
    ``tab`` holds the question (or no tab is given), so a tab that lost the question does
    not overwrite the other tab's draft; ``draft=None`` leaves the saved draft as it is (an
    multiple-choice item's chosen letter, saved when chosen).
    """
    if reason not in PAUSE_REASONS:
        raise StudyError(f"A pause's reason is one of {', '.join(PAUSE_REASONS)}, got {reason!r}.")
    if len(draft or "") > MAX_RESPONSE_CHARS:
        raise StudyError(
            f"Your draft has {len(draft):,} characters; the limit is {MAX_RESPONSE_CHARS:,}. "
            "Shorten it before you pause."
        )
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        row = _open_assignment(db, user_id, assignment_id)
        if draft is not None and (tab is None or row["active_tab"] in (None, tab)):
            _update_assignment(db, assignment_id, {"draft": draft, "draft_saved_at": at})
        if row["paused_at"] is None:
            clock.pause(db, _ITEMS, row, at, reason, settings)


def resume_question(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    at: float | None = None,
    *,
    tab: str | None = None,
    settings: ClockSettings | None = None,
) -> None:
    """Restart the item's clock in ``tab`` (which takes the question over); the paused
    interval is added to its paused time."""
    at = now() if at is None else at
    settings = settings or clock_settings()
    with write_transaction(db):
        clock.resume(db, _ITEMS, _open_assignment(db, user_id, assignment_id), tab, at, settings)
