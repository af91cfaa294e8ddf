"""What every campaign action checks, and the campaign's constants: the errors, who oversees
the campaigns, who may work on an item, which items can still change, and the length limits.

Who counts as an admin here is read from the one role table (:mod:`structext_core.studio.access`):
whoever may open the Rewrite campaigns page oversees every campaign (:func:`oversees`).
A refused action raises :class:`CampaignError` with a message saying what and where, and writes nothing.
"""

from __future__ import annotations

import json

import sqlite_utils

from structext_core import settings
from structext_core.structext_eval import rewrite
from structext_core.studio import access
from structext_core.text import limits

SCENARIO_FILE = settings.scenario_file()
PAPER_PER_STRATUM = 16
SUITE_NAME = "real-test"
EDITABLE = ("todo", "draft", "returned")
DONE = ("submitted", "approved")  # what counts as done in an annotator's queue
STATUSES = ("todo", "draft", "submitted", "returned", "approved")
MAX_SCENARIO_LENGTH = 120


class CampaignError(ValueError):
    """A user-caused campaign problem; nothing was written."""


class SubmissionRefused(CampaignError):
    """A submission whose rewrite fails a check; carries the check report."""

    def __init__(self, message: str, report: rewrite.CheckReport):
        super().__init__(message)
        self.report = report


def oversees(user: dict | None) -> bool:
    """Whether ``user`` oversees the campaigns (sets them up, reviews, sees and may work on every
    item, accepts a structure exception): whoever the role table lets open the Rewrite campaigns
    page (:data:`structext_core.studio.access.PAGES`)."""
    return user is not None and access.can_open(access.role_of(user), "campaign_admin")


def _require_admin(user: dict) -> None:
    if not oversees(user):
        raise CampaignError("Only an admin can do this.")


def _require_access(item: dict, user: dict) -> None:
    if not oversees(user) and item["annotator_id"] != user["id"]:
        raise CampaignError(f"Item {item['position']} of this campaign is assigned to {item['annotator']}, not to you.")


def _require_editable(item: dict) -> None:
    if item["status"] not in EDITABLE:
        raise CampaignError(f"Item {item['position']} is {item['status']}: it can no longer be changed.")


def _require_length(field: str, text: str, limit_name: str) -> None:
    """:class:`CampaignError` when ``text`` is longer than the stored-field limit ``limit_name``."""
    try:
        limits.check_length(field, text, limit_name)
    except limits.LimitError as exc:
        raise CampaignError(str(exc)) from None


def _require_draft_sizes(texts: rewrite.Texts, mapping: dict[str, str | None]) -> None:
    """Each text and the stored mapping within ``MAX_DRAFT_CHARS`` (before any check runs on them)."""
    for part in ("reference", "question", "answer"):
        _require_length(f"rewritten {part}", getattr(texts, part), "MAX_DRAFT_CHARS")
    stored = json.dumps(rewrite.clean_mapping(mapping), ensure_ascii=False)
    _require_length("value mapping (as stored)", stored, "MAX_DRAFT_CHARS")


def _require_open_campaign(db: sqlite_utils.Database, item: dict) -> None:
    row = db.execute("SELECT name, archived_at FROM rewrite_campaigns WHERE id = ?", [item["campaign_id"]]).fetchone()
    if row is not None and row[1] is not None:
        raise CampaignError(f"Campaign {row[0]!r} is archived: nothing in it can be changed until an admin "
                            "brings it back.")
