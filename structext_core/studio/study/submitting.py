"""Submitting: an annotator's answer (or give-up) committed and scored in one transaction, the
feedback on it where the study shows it, and an annotator's progress."""

from dataclasses import dataclass

import sqlite_utils

from structext_core.evaluation.choices import parse_letter
from structext_core.studio import clock, seal
from structext_core.studio.clock import ClockSettings, TakenOverError, clock_settings
from structext_core.studio.crowd import dealing
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.answering import _open_assignment, _update_assignment
from structext_core.studio.study.kinds import kind_of
from structext_core.studio.study.scores import _score, _score_rows
from structext_core.studio.study.store import MAX_RESPONSE_CHARS, PASS_THRESHOLD, StudyError, now, seal_view


@dataclass(frozen=True)
class Submission:
    """A committed answer (or give-up) and the time it took."""

    response_id: int
    assignment_id: int
    elapsed_seconds: float
    gave_up: bool


#: An answer sent after the person's visit ended (their outcome is recorded: every question answered,
#: the time budget used up, screened out by gold): the outcome stands, and so do their answers and pay.
ENDED = "Your part in this study has ended, so this answer was not recorded: your earlier answers are kept."


def submit_answer(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    response: str,
    at: float | None = None,
    *,
    tab: str | None = None,
    settings: ClockSettings | None = None,
) -> Submission:
    """Commit the answer to the item, scored in the same transaction; its clock stops now.

    Raises :class:`StudyError` for an empty or overlong answer or a paused item,
    :class:`TakenOverError` when another tab holds the question, and
    :class:`StaleQuestionError` when the item was already answered (nothing is changed).
    """
    response = response or ""
    benchmark, _answer, n_options, _item = _item_of(db, user_id, assignment_id)
    refusal = kind_of(benchmark).refuse_response(response, n_options)
    if refusal:
        raise StudyError(refusal)
    if not response.strip():
        raise StudyError("Your answer is empty: type an answer in the box, or use 'Give up'.")
    if len(response) > MAX_RESPONSE_CHARS:
        raise StudyError(
            f"Your answer has {len(response):,} characters; the limit is {MAX_RESPONSE_CHARS:,}."
        )
    if n_options:  # a letter: stored as the key is written, read by the one rule of every scorer
        response = parse_letter(response, n_options) or response
    return _record(db, user_id, assignment_id, response, False, at, tab, settings)


def submit_draft(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    at: float | None = None,
    *,
    tab: str | None = None,
    settings: ClockSettings | None = None,
) -> Submission:
    """Commit the answer as last saved on the server (the draft): a multiple-choice item's
    chosen letter, so a submit key pressed right after a choice never sends an older one. As
    :func:`submit_answer` otherwise."""
    found = db.execute("SELECT draft FROM assignments WHERE id = ? AND user_id = ?", [assignment_id, user_id]).fetchone()
    if found is None:
        raise dealing.released_question(db, user_id, assignment_id) or StudyError("That question is not one of yours.")
    return submit_answer(db, user_id, assignment_id, found[0] or "", at, tab=tab, settings=settings)


def give_up(
    db: sqlite_utils.Database,
    user_id: int,
    assignment_id: int,
    at: float | None = None,
    *,
    tab: str | None = None,
    settings: ClockSettings | None = None,
) -> Submission:
    """Record that the annotator gave up on the item, with the time spent on it."""
    return _record(db, user_id, assignment_id, "", True, at, tab, settings)


def _record(
    db: sqlite_utils.Database, user_id: int, assignment_id: int, response: str, gave_up: bool,
    at: float | None, tab: str | None, settings: ClockSettings | None,
) -> Submission:
    at = now() if at is None else at
    settings = settings or clock_settings()
    benchmark, answer, _n_options, item = _item_of(db, user_id, assignment_id)
    rouge, exact = _score(answer, response, gave_up, benchmark, item)
    with write_transaction(db):
        row = _open_assignment(db, user_id, assignment_id)
        if row["outcome"] is not None:  # the end screen was shown (a stale tab, or a crafted submit)
            raise StudyError(ENDED)
        if clock.held_elsewhere(row, tab):
            raise TakenOverError(
                "This question is open in another tab, so it was not submitted here. "
                "Answer it in that tab, or press 'Continue here'."
            )
        if row["paused_at"] is not None:
            raise StudyError("This question is paused: resume it before you answer.")
        final = {**row, **clock.advance(row, at, settings.grace_seconds)}
        idle_pauses = db.execute(
            "SELECT COUNT(*) FROM pauses WHERE assignment_id = ? AND reason = 'idle'", [assignment_id]
        ).fetchone()[0]
        response_id = db.execute(
            "INSERT INTO responses (assignment_id, study_id, user_id, item_id, response, gave_up,"
            " submitted_at, elapsed_seconds, paused_seconds, away_seconds, idle_seconds, wall_seconds,"
            " idle_pauses, takeovers, rouge_l, exact_match, scored_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                assignment_id, row["study_id"], user_id, row["item_id"], response, int(gave_up), at,
                final["active_seconds"], row["paused_seconds"], final["away_seconds"],
                final["idle_seconds"], max(0.0, at - row["first_shown_at"]), idle_pauses,
                row["takeovers"], rouge, exact, at,
            ],
        ).lastrowid
        _update_assignment(db, assignment_id, {key: final[key] for key in
                                               ("last_beat_at", "hidden_at", "active_seconds", "away_seconds")})
    return Submission(response_id, assignment_id, final["active_seconds"], gave_up)


def _item_of(db: sqlite_utils.Database, user_id: int, assignment_id: int) -> tuple[str, str, int, str | None]:
    """The benchmark, the ground truth, the number of options (0: free text) and the kept item (its
    JSON, for a benchmark scored on the whole item) of the user's assignment (for checking and
    scoring on the server only)."""
    found = db.execute(
        "SELECT s.benchmark, json_extract(i.sample_json, '$.answer'),"
        " COALESCE(json_array_length(i.sample_json, '$.options'), 0), json_extract(i.sample_json, '$.kept.item')"
        " FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id JOIN studies s ON s.id = a.study_id"
        " WHERE a.id = ? AND a.user_id = ?",
        [assignment_id, user_id],
    ).fetchone()
    if found is None:
        raise dealing.released_question(db, user_id, assignment_id) or StudyError("That question is not one of yours.")
    return found[0], found[1] or "", int(found[2]), found[3]


@dataclass(frozen=True)
class Feedback:
    """Whether the annotator's committed answer passed (only where the study shows it)."""

    correct: bool
    rouge_l: float
    exact_match: int
    #: True when the same question is still open for the annotator in another study: then
    #: nothing about its correctness is given (``correct`` False, scores 0), only that note.
    withheld: bool = False
    #: The answer was an option's letter (a multiple-choice item): ``correct`` is all there is to say.
    letter: bool = False


def response_feedback(db: sqlite_utils.Database, user_id: int, response_id: int) -> Feedback | None:
    """Correctness of the annotator's own committed answer.

    None when the study does not show correctness (the default), so nothing about the
    ground truth leaves the server; ``withheld`` (and no verdict) while the same sample is an
    open item of the annotator in any study (:mod:`structext_core.studio.seal`).
    """
    rows = list(
        db.query(
            "SELECT r.id, r.rouge_l, r.exact_match, s.show_correctness, s.suite, i.sample_id,"
            " COALESCE(json_array_length(i.sample_json, '$.options'), 0) AS n_options,"
            " i.strata,"
            " json_extract(i.sample_json, '$.reference') AS reference, s.benchmark,"
            " json_extract(i.sample_json, '$.question') AS question, json_extract(i.sample_json, '$.options') AS options,"
            " i.sample_json"
            " FROM responses r"
            " JOIN studies s ON s.id = r.study_id JOIN study_items i ON i.id = r.item_id"
            " WHERE r.id = ? AND r.user_id = ?",
            [response_id, user_id],
        )
    )
    if not rows or not rows[0]["show_correctness"]:
        return None
    row = rows[0]
    if seal.key_withheld(db, user_id, seal_view(row), row["benchmark"]):
        return Feedback(correct=False, rouge_l=0.0, exact_match=0, withheld=True)
    rouge, exact = rows[0]["rouge_l"], rows[0]["exact_match"]
    if rouge is None or exact is None:  # committed before answers were scored on commit
        rouge, exact = _score_rows(db, [response_id])[response_id]
    return Feedback(correct=rouge >= PASS_THRESHOLD, rouge_l=rouge, exact_match=exact,
                    letter=bool(rows[0]["n_options"]))


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's progress in one study (``seconds``: active time on answered items)."""

    answered: int
    gave_up: int
    total: int
    seconds: float


def annotator_progress(db: sqlite_utils.Database, study_id: int, user_id: int) -> AnnotatorProgress:
    """How far one annotator is in one study."""
    answered, gave_up_count, seconds = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(gave_up), 0), COALESCE(SUM(elapsed_seconds), 0)"
        " FROM responses WHERE study_id = ? AND user_id = ?",
        [study_id, user_id],
    ).fetchone()
    total = db.execute(
        "SELECT COUNT(*) FROM assignments WHERE study_id = ? AND user_id = ?", [study_id, user_id]
    ).fetchone()[0]
    if (plan := dealing.plan(db, study_id, user_id)) is not None:
        total += plan.counted_left  # a study dealing k per item: the questions still to be dealt
    return AnnotatorProgress(answered=answered, gave_up=gave_up_count, total=total, seconds=seconds)
