"""Question review: its names, its error, who leads it, the bounds of what people type."""

from __future__ import annotations

from structext_core.studio import access

LEAD_PAGE = "question_review_admin"
REVIEW_PAGE = "question_review"
ACTIONS = ("accept", "edit", "remove")
EDITABLE = ("todo", "draft", "returned")
STATUSES = ("todo", "draft", "submitted", "returned", "approved")
MAX_REASON_CHARS = 2_000
MAX_NAME_CHARS = 200
MAX_ADDED = 50
#: The share of papers reviewed twice when the lead says nothing (and there are two reviewers or more).
DEFAULT_DOUBLE_SHARE = 0.2
ADDED_PREFIX = "added-"
#: What a question becomes in the curated set (provenance).
GENERATED, REVISED, ADDED, REMOVED = "generated", "revised", "added", "removed"
_CLOCK = ("first_shown_at", "last_beat_at", "hidden_at", "paused_at", "pause_count", "paused_seconds",
          "active_seconds", "away_seconds", "idle_seconds", "last_input_at", "active_at_last_input")


class ReviewError(ValueError):
    """A user-caused problem of a review campaign; nothing was written."""


def oversees(user: dict | None) -> bool:
    """Whether ``user`` leads review campaigns (may open the lead's page)."""
    return user is not None and access.can_open(access.role_of(user), LEAD_PAGE)


def _require_lead(user: dict | None) -> None:
    if not oversees(user):
        raise ReviewError("Only a review lead (admin) may do this.")


def _text(what: str, value: str | None, limit: int = MAX_REASON_CHARS) -> str:
    value = (value or "").strip()
    if len(value) > limit:
        raise ReviewError(f"The {what} has {len(value):,} characters; keep it under {limit:,}.")
    return value


def _require_access(item: dict, user: dict) -> None:
    if item["reviewer_id"] != user["id"] and not oversees(user):
        raise ReviewError(f"Paper {item['paper_id']!r} of this campaign is another reviewer's.")


def _require_editable(item: dict) -> None:
    if item["archived_at"] is not None:
        raise ReviewError(f"Campaign {item['campaign_name']!r} is archived: nothing can be changed.")
    if item["status"] not in EDITABLE:
        raise ReviewError(f"Paper {item['paper_id']!r} is {item['status']}: it can no longer be changed.")
