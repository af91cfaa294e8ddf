"""Drafts and the workspace's steps: saving and resetting a draft, the mapping table's edits,
pasted mapping lines, and applying a mapping without losing free edits (the steps write nothing:
the page saves with :func:`save_draft`).
"""

from __future__ import annotations

import json
import time

import sqlite_utils

from structext_core.structext_eval import rewrite
from structext_core.structext_eval.campaign.items import get_item
from structext_core.structext_eval.campaign.rules import (
    CampaignError,
    _require_access,
    _require_draft_sizes,
    _require_editable,
    _require_length,
    _require_open_campaign,
    oversees,
)
from structext_core.studio import sandbox
from structext_core.studio.storage import write_transaction


def get_draft(db: sqlite_utils.Database, item_id: int) -> dict | None:
    """The saved draft ``{reference, question, answer, mapping, saved_at}`` or None."""
    rows = list(db.query("SELECT reference, question, answer, mapping_json, saved_at FROM rewrite_drafts "
                         "WHERE item_id = ?", [item_id]))
    if not rows:
        return None
    row = rows[0]
    row["mapping"] = json.loads(row.pop("mapping_json"))
    return row


def working_copy(db: sqlite_utils.Database, item_id: int) -> tuple[rewrite.Texts, dict[str, str]]:
    """What the workspace starts from: the draft, else the original with an empty mapping."""
    draft = get_draft(db, item_id)
    if draft is None:
        return rewrite.original_texts(get_item(db, item_id)["sample"]), {}
    return rewrite.Texts(draft["reference"], draft["question"], draft["answer"]), draft["mapping"]


def _write_draft(db: sqlite_utils.Database, item_id: int, user: dict, texts: rewrite.Texts,
                 mapping: dict[str, str | None], now: float) -> None:
    """Insert or replace the item's draft (inside the caller's write transaction)."""
    db.execute(
        "INSERT INTO rewrite_drafts (item_id, reference, question, answer, mapping_json, saved_by, saved_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(item_id) DO UPDATE SET reference = excluded.reference, "
        "question = excluded.question, answer = excluded.answer, mapping_json = excluded.mapping_json, "
        "saved_by = excluded.saved_by, saved_at = excluded.saved_at",
        [item_id, texts.reference, texts.question, texts.answer,
         json.dumps(rewrite.clean_mapping(mapping), ensure_ascii=False), user["id"], now])


def save_draft(db: sqlite_utils.Database, item_id: int, user: dict, texts: rewrite.Texts,
               mapping: dict[str, str | None]) -> float:
    """Save the working copy (committed at once); returns the time saved."""
    _require_draft_sizes(texts, mapping)
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    _require_open_campaign(db, item)
    now = time.time()
    with write_transaction(db):
        _write_draft(db, item_id, user, texts, mapping, now)
        db.execute("UPDATE rewrite_items SET status = 'draft' WHERE id = ? AND status = 'todo'", [item_id])
    return now


def reset_draft(db: sqlite_utils.Database, item_id: int, user: dict) -> None:
    """Throw the draft away: the workspace starts again from the original."""
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    _require_open_campaign(db, item)
    with write_transaction(db):
        db.execute("DELETE FROM rewrite_drafts WHERE item_id = ?", [item_id])


class FreeEditsAtRisk(CampaignError):
    """Applying the mapping would throw away free edits the annotator has not agreed to lose."""


def _bullets(problems: list) -> str:
    return "\n".join(f"- {p}" for p in problems)


def table_mapping(saved: dict[str, str], tokens: list[rewrite.Token], row_edits: dict | None) -> dict[str, str]:
    """The mapping the table shows: ``saved`` with its unsaved cell edits on top.

    ``row_edits`` is ``{row: {column: value}}`` (row as the table hands it over, number or text),
    row ``n`` being ``tokens[n]``; an edit of another column, or of a row the table does not
    have, is ignored, and an emptied cell keeps the token.
    """
    mapping = dict(saved)
    for row, change in (row_edits or {}).items():
        row = int(row)
        if "replacement" in change and 0 <= row < len(tokens):
            mapping[tokens[row].text] = change["replacement"] or ""
    return rewrite.clean_mapping(mapping)


def paste_mapping(text: str, tokens: list[rewrite.Token], mapping: dict[str, str]) -> tuple[dict[str, str], int]:
    """``mapping`` with pasted ``token -> value`` lines on top, and how many lines were read.

    Raises :class:`CampaignError` (nothing changed) for text over ``MAX_DRAFT_CHARS``, a line
    that does not read, or a token the sample does not have.
    """
    _require_length("pasted mapping lines", text or "", "MAX_DRAFT_CHARS")
    try:
        pasted = rewrite.parse_mapping_text(text or "")
    except rewrite.MappingError as error:
        raise CampaignError("The pasted lines were not read; nothing changed:\n" + _bullets(error.problems)) from None
    known = {t.text for t in tokens}
    unknown = [old for old in pasted if old not in known]
    if unknown:
        raise CampaignError(f"Not tokens of this sample: {', '.join(repr(u) for u in unknown)}; nothing changed.")
    return {**mapping, **pasted}, len(pasted)


def mapped_texts(sample: dict, texts: rewrite.Texts, mapping: dict[str, str | None],
                 applied_before: dict[str, str | None], replace_free_edits: bool = False) -> rewrite.Texts:
    """The workspace's texts after applying ``mapping`` to the original ``sample``.

    ``texts`` are the current texts, ``applied_before`` the mapping they were last built from.
    Raises :class:`FreeEditsAtRisk` when ``texts`` hold edits by hand that the mapping would
    replace and ``replace_free_edits`` is off, and :class:`CampaignError` listing the problems
    when the mapping cannot be applied; either way nothing changed.
    """
    if (not replace_free_edits and texts != rewrite.original_texts(sample)
            and rewrite.has_free_edits(sample, applied_before, texts)):
        raise FreeEditsAtRisk("The result has free edits that applying the mapping would replace. Tick "
                              "'Replace my free edits' and apply again, or keep editing by hand.")
    try:
        return rewrite.apply_mapping(sample, mapping)
    except rewrite.MappingError as error:
        raise CampaignError("The mapping was not applied; nothing changed:\n" + _bullets(error.problems)) from None


def may_accept_exception(user: dict | None, report: rewrite.CheckReport | sandbox.Unchecked) -> bool:
    """Whether ``user`` may submit this rewrite with a structure exception: an overseer, and a
    report that ran, whose answer check passes and structure check fails."""
    return (oversees(user) and isinstance(report, rewrite.CheckReport) and report.answer_ok
            and not report.structure_ok)
