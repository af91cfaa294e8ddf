"""A campaign's items and an annotator's queue: which items, in which order, which one next,
and what counts as done.
"""

from __future__ import annotations

import json

import sqlite_utils

from structext_core.structext_eval.campaign.rules import DONE, EDITABLE, CampaignError, oversees
from structext_core.structext_eval.campaign.setup import list_campaigns

_ITEM_COLUMNS = ("i.id, i.campaign_id, i.position, i.sample_id, i.language, i.task_id, i.depth, i.scenario, "
                 "i.annotator_id, u.username AS annotator, i.status")


def list_items(db: sqlite_utils.Database, campaign_id: int, annotator_id: int | None = None,
               status: str | None = None) -> list[dict]:
    """Items of a campaign in queue order, optionally of one annotator or one status."""
    clauses, args = ["i.campaign_id = ?"], [campaign_id]
    if annotator_id is not None:
        clauses.append("i.annotator_id = ?")
        args.append(annotator_id)
    if status is not None:
        clauses.append("i.status = ?")
        args.append(status)
    return list(db.query(f"SELECT {_ITEM_COLUMNS} FROM rewrite_items i JOIN users u ON u.id = i.annotator_id "
                         f"WHERE {' AND '.join(clauses)} ORDER BY i.position", args))


def get_item(db: sqlite_utils.Database, item_id: int) -> dict:
    """One item with its source ``sample`` (dict); :class:`CampaignError` if unknown."""
    rows = list(db.query(f"SELECT {_ITEM_COLUMNS}, i.sample_json FROM rewrite_items i "
                         "JOIN users u ON u.id = i.annotator_id WHERE i.id = ?", [item_id]))
    if not rows:
        raise CampaignError(f"There is no rewrite item {item_id}.")
    row = rows[0]
    row["sample"] = json.loads(row.pop("sample_json"))
    return row


def campaigns_for(db: sqlite_utils.Database, user: dict) -> list[dict]:
    """The campaigns ``user`` works in (newest first): every one for an overseer, else those
    with items assigned to them; archived ones are left out."""
    return list_campaigns(db, None if oversees(user) else user["id"], include_archived=False)


def has_campaign(db: sqlite_utils.Database, user: dict) -> bool:
    """Whether :func:`campaigns_for` lists a campaign for ``user`` (the navigation lists the page only then)."""
    return bool(campaigns_for(db, user))


def queue(db: sqlite_utils.Database, campaign_id: int, user: dict, everyone: bool = False) -> list[dict]:
    """The items of ``user`` in a campaign, in queue order; with ``everyone`` an overseer gets
    every annotator's items (anyone else still gets only their own)."""
    return list_items(db, campaign_id, annotator_id=None if everyone and oversees(user) else user["id"])


def done_count(items: list[dict]) -> int:
    """How many of ``items`` are done (submitted or approved: nothing left for the annotator)."""
    return sum(item["status"] in DONE for item in items)


def first_to_do(items: list[dict]) -> int | None:
    """The item to open first: the first one still editable in queue order, else the first
    (None for an empty queue)."""
    return next((i["id"] for i in items if i["status"] in EDITABLE), items[0]["id"] if items else None)


def next_to_do(items: list[dict], item_id: int) -> int | None:
    """The item to open after ``item_id``: the next one still editable after it in queue order,
    then from the start; None when no other item is left to do (or ``item_id`` is not queued)."""
    ids = [i["id"] for i in items]
    if item_id not in ids:
        return None
    at = ids.index(item_id)
    later = items[at + 1:] + items[:at]
    return next((i["id"] for i in later if i["status"] in EDITABLE), None)
