"""A study as its annotators see it, for its lead: the consent text and the questionnaire (crowd studies),
the rule, the practice questions, the questions (with their images) and the end with its code, built from the study's items exactly as :func:`~.answering.open_question`
builds an annotator's view (:class:`~.answering.QuestionView`: the same blinding, no answer key, no rule
hint), and nothing written: no membership, no assignment, no clock, no answer, no audit row.

Only an admin or a lead of the study may preview it (:mod:`structext_core.studio.study.leads`). The
questions come in one annotator's kind of order: practice first, then the study's questions with the
gold ones mixed in (a preview order of its own: each annotator has another).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlite_utils

from structext_core.studio import access
from structext_core.studio.clock import ClockSettings, clock_settings
from structext_core.studio.errors import StudyError
from structext_core.studio.study import images, leads
from structext_core.studio.study.answering import QuestionView
from structext_core.studio.study.answering import _view as annotator_view
from structext_core.studio.study.kinds import kind_of
from structext_core.studio.study.store import AnnotatorStudy, annotator_order, get_study

if TYPE_CHECKING:  # the crowd's modules import the study package: read them when a preview is made
    from structext_core.studio.crowd.consent import Consent
    from structext_core.studio.crowd.outcomes import EndScreen
    from structext_core.studio.crowd.settings import CrowdSettings

#: The user id the preview's order is drawn for (no account has it: ids start at 1).
PREVIEW_ORDER_USER = 0

_ITEMS_SQL = """
    SELECT i.id AS item_id, i.kind, i.strata, s.benchmark, s.id AS study_id,
           json_extract(i.sample_json, '$.reference') AS reference,
           json_extract(i.sample_json, '$.question') AS question,
           json_extract(i.sample_json, '$.requirement') AS requirement,
           json_extract(i.sample_json, '$.options') AS options,
           json_extract(i.sample_json, '$.image') IS NOT NULL AS has_image
    FROM study_items i JOIN studies s ON s.id = i.study_id
    WHERE i.study_id = ? ORDER BY i.position
"""


@dataclass(frozen=True)
class Preview:
    """What an annotator of the study meets, in order. ``study`` is the study as a new annotator sees
    it (rule not accepted, nothing answered); ``questions`` are practice first, then the study's;
    ``crowd`` holds the end's codes and addresses; ``consent`` the current consent text (None: none is
    asked) and ``questionnaire`` its fields (none: none is asked)."""

    study: AnnotatorStudy
    how_to_answer: str
    questions: tuple[QuestionView, ...]
    crowd: CrowdSettings
    consent: Consent | None = None
    questionnaire: tuple[dict, ...] = ()

    def end(self, outcome: str = "completed") -> EndScreen:
        """The end screen a person reaches with ``outcome`` (``completed``, or ``declined`` at the consent):
        the platform's code and address the lead set for it."""
        from structext_core.studio.crowd.outcomes import EndScreen

        crowd = self.crowd
        code, url = ((crowd.no_consent_code, crowd.no_consent_url) if outcome == "declined"
                     else (crowd.completion_code, crowd.completion_url))
        return EndScreen(outcome, code, url, "declined" if outcome == "declined" else "done", participant=True)

    @property
    def practice(self) -> tuple[QuestionView, ...]:
        """The practice questions, first."""
        return tuple(q for q in self.questions if q.practice)

    @property
    def counted(self) -> tuple[QuestionView, ...]:
        """The study's questions (gold ones among them, not told apart)."""
        return tuple(q for q in self.questions if not q.practice)


def _check(db: sqlite_utils.Database, user: dict | None, study_id: int) -> None:
    if user is None or not access.can_open(access.role_of(user), "study_admin"):
        raise access.AccessError(f"Only {leads.WHO_MAY} may preview a study.")
    leads.check_runs(db, user, study_id, "preview the study")


def preview(db: sqlite_utils.Database, user: dict | None, study_id: int,
            settings: ClockSettings | None = None) -> Preview:
    """The study ``study_id`` as a new annotator meets it, for ``user`` (an admin or a lead of the study;
    :class:`~structext_core.studio.access.AccessError` otherwise). Reads only; writes nothing."""
    from structext_core.studio.crowd import consent, questionnaire
    from structext_core.studio.crowd import settings as crowd

    _check(db, user, study_id)
    chosen = get_study(db, study_id)
    settings = settings or clock_settings()
    rows = [dict(row) for row in db.query(_ITEMS_SQL, [study_id])]
    practice = [r["item_id"] for r in rows if r["kind"] == "practice"]
    others = [r["item_id"] for r in rows if r["kind"] != "practice"]
    order = [*annotator_order(practice, chosen.seed, study_id, PREVIEW_ORDER_USER),
             *annotator_order(others, chosen.seed, study_id, PREVIEW_ORDER_USER)]
    by_id = {r["item_id"]: r for r in rows}
    questions = []
    for seq, item_id in enumerate(order, 1):
        row = by_id[item_id]
        # The columns open_question reads for an annotator's current item, with a clock never started.
        questions.append(annotator_view({
            **row, "id": -item_id, "seq": seq, "practice": row["kind"] == "practice", "n_practice": len(practice),
            "n_assigned": len(order), "first_shown_at": None, "paused_seconds": 0.0, "paused_at": None,
            "draft": "", "active_seconds": 0.0, "last_beat_at": None, "hidden_at": None, "pause_reason": None,
        }, settings, False))
    as_annotator = AnnotatorStudy(id=chosen.id, name=chosen.name, rule_text=chosen.rule_text,
                                  show_correctness=bool(chosen.show_correctness), n_items=len(order),
                                  rule_accepted_at=None, answered=0, practice_items=len(practice),
                                  benchmark=chosen.benchmark)
    return Preview(as_annotator, kind_of(chosen.benchmark).how_to_answer, tuple(questions),
                   crowd.crowd_settings(db, study_id), consent.current_consent(db, study_id),
                   tuple(questionnaire.questionnaire(db, study_id)))


def preview_image(db: sqlite_utils.Database, user: dict | None, study_id: int, item_id: int,
                  nonce: bytes = b"") -> bytes:
    """The blinded image of a study item, exactly as an annotator receives it (pixels only, padded),
    for its preview; :class:`StudyError` for an item of another study or without an image."""
    _check(db, user, study_id)
    row = db.execute(
        "SELECT s.benchmark, s.suite, i.strata, i.sample_json FROM study_items i JOIN studies s ON s.id = i.study_id"
        " WHERE i.id = ? AND i.study_id = ?", [item_id, study_id],
    ).fetchone()
    image = None if row is None else images._image(db, row, nonce)
    if image is None:
        raise StudyError("That question of the preview shows no image.")
    return image
