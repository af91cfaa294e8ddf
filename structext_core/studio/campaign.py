"""Real-Test rewrite campaigns: setup, drafts, submission, review, flags and export.

A campaign draws samples from Test stratified by task and depth (as the paper: 928 =
29 tasks x 2 depths x 16), gives each its own scenario from the catalogue (no repeats),
and deals them to annotators in balance. Annotators save drafts as they work and
submit; a submission is refused unless the rewrite passes the structure and answer
checks of :mod:`structext_core.studio.rewrite` (an admin may accept a structure exception with
a written reason; the answer check is never waived, so every exported sample audits).
Admins approve or return submissions with a comment; anyone may flag a source sample.
Who counts as an admin here is read from the one role table (:mod:`structext_core.studio.access`):
whoever may open the Rewrite campaigns page oversees every campaign (:func:`oversees`).

The annotator's queue (which items, in which order, which one next, what counts as done)
and the workspace's steps (the mapping table's edits, pasted mapping lines, applying a
mapping without losing free edits) are here too, so the pages only draw them.

Every write is one committed transaction (:func:`structext_core.studio.storage.write_transaction`);
a refused action raises :class:`CampaignError` with a message saying what and where,
and writes nothing.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from structext_core import settings
from structext_core.benchmark import draws, official, outputs
from structext_core.benchmark.audit import AGREE, audit, audit_sample
from structext_core.benchmark.samples import FIELDS, to_jsonl_line, write_jsonl
from structext_core.benchmark.tasks import TASKS
from structext_core.studio import access, accounts, changes, rewrite, sandbox, seal
from structext_core.studio.storage import write_transaction
from structext_core.text import limits
from structext_core.text.words import plural

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


# ---- scenarios -------------------------------------------------------------------

def shipped_scenarios() -> list[str]:
    """The scenario catalogue shipped with the app (one a line)."""
    lines = SCENARIO_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def scenario_catalogue(db: sqlite_utils.Database) -> list[str]:
    """Shipped scenarios, then those admins added, without duplicates (case-insensitive)."""
    seen: set[str] = set()
    out: list[str] = []
    added = [r["name"] for r in db.query("SELECT name FROM rewrite_scenarios ORDER BY id")]
    for name in shipped_scenarios() + added:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out


def add_scenarios(db: sqlite_utils.Database, text: str, user: dict) -> tuple[list[str], list[str]]:
    """Add scenarios (one a line) to the catalogue; returns (added, already present)."""
    _require_admin(user)
    _require_length("list of scenarios", text or "", "MAX_DRAFT_CHARS")
    names = [line.strip() for line in text.splitlines() if line.strip()]
    if not names:
        raise CampaignError("No scenario given: write one scenario a line, like 'bakery: bread recipes'.")
    for n, name in enumerate(names, 1):
        if len(name) > MAX_SCENARIO_LENGTH:
            raise CampaignError(f"Line {n}: the scenario is {len(name)} characters long; keep it under "
                                f"{MAX_SCENARIO_LENGTH}.")
    known = {s.lower() for s in scenario_catalogue(db)}
    added, present = [], []
    with write_transaction(db):
        for name in names:
            if name.lower() in known:
                present.append(name)
                continue
            db.execute("INSERT INTO rewrite_scenarios (name, added_by, added_at) VALUES (?, ?, ?)",
                       [name, user["id"], time.time()])
            known.add(name.lower())
            added.append(name)
    return added, present


# ---- setup -----------------------------------------------------------------------

def draw_stratified(samples: list[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` samples drawn evenly over (task, depth) strata (16 each for 928 of Test).

    When ``n`` does not divide evenly, the remaining samples go to strata chosen at
    random (seeded); a stratum that runs out passes its share to the others
    (:func:`structext_core.benchmark.draws.stratified_draw`, ``even``).
    """
    if n < 1:
        raise CampaignError("Draw at least one sample.")
    if n > len(samples):
        raise CampaignError(f"The source suite holds {plural(len(samples), 'sample')}; cannot draw {n:,}.")
    return draws.stratified_draw(samples, n, stratum=lambda s: (s["task_id"], s["depth"]),
                                 seed=f"real-test|draw|{seed}", allocation=draws.EVEN)


def create_campaign(db: sqlite_utils.Database, name: str, samples: list[dict], n: int,
                    annotator_ids: list[int], user: dict, seed: int = 0, source_suite: str = "test") -> int:
    """Create a campaign: stratified draw, one scenario per sample, balanced assignment.

    Returns the campaign id. Raises :class:`CampaignError` (nothing written) for an
    empty or taken name, no annotators, too few samples or too few scenarios.
    """
    _require_admin(user)
    name = (name or "").strip()
    if not name:
        raise CampaignError("The campaign needs a name, like 'Real-Test 2026'.")
    _require_length("campaign name", name, "MAX_NAME_CHARS")
    annotators = _check_people(db, annotator_ids)
    drawn = draw_stratified(samples, n, seed)
    scenarios = scenario_catalogue(db)
    if len(scenarios) < len(drawn):
        raise CampaignError(f"The catalogue has {plural(len(scenarios), 'scenario')} but {plural(len(drawn), 'sample')} "
                            f"need one each (no repeats): add {plural(len(drawn) - len(scenarios), 'more scenario')}, or draw fewer samples.")
    rng = random.Random(f"real-test|assign|{seed}")
    chosen = rng.sample(scenarios, len(drawn))
    owner = _deal(drawn, annotators)
    order = list(drawn)
    rng.shuffle(order)  # queue order: formats mixed
    if db.execute("SELECT 1 FROM rewrite_campaigns WHERE name = ? COLLATE NOCASE", [name]).fetchone():
        raise CampaignError(f"A campaign named {name!r} exists already: choose another name.")
    with write_transaction(db):
        cursor = db.execute(
            "INSERT INTO rewrite_campaigns (name, source_suite, n_items, seed, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)", [name, source_suite, len(drawn), seed, user["id"], time.time()])
        campaign_id = cursor.lastrowid
        for position, (s, scenario) in enumerate(zip(order, chosen), 1):
            db.execute(
                "INSERT INTO rewrite_items (campaign_id, position, sample_id, language, task_id, depth, scenario, "
                "sample_json, annotator_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [campaign_id, position, s["id"], s["language"], s["task_id"], s["depth"], scenario,
                 json.dumps(s, ensure_ascii=False), owner[s["id"]]])
        changes.record(db, user["id"], "campaign.create", f"campaign:{campaign_id}", n_items=len(drawn))
    return campaign_id


def _check_people(db: sqlite_utils.Database, annotator_ids: list[int]) -> list[int]:
    """The chosen annotators, sorted; :class:`CampaignError` for none, an unknown id, or an
    account that is disabled or deleted."""
    annotators = sorted(set(annotator_ids))
    if not annotators:
        raise CampaignError("Choose at least one annotator.")
    statuses = {a: accounts.account_status(db, a) for a in annotators}
    unknown = [a for a, status in statuses.items() if status is None]
    if unknown:
        raise CampaignError(f"Unknown user id(s) {unknown}.")
    inactive = [a for a, status in statuses.items() if status != "active"]
    if inactive:
        names = [db.execute("SELECT username FROM users WHERE id = ?", [a]).fetchone()[0] for a in inactive]
        raise CampaignError(f"{', '.join(repr(n) for n in names)}: disabled or deleted account(s) cannot be "
                            "given rewrite items. Enable them first, or choose others.")
    return annotators


def _deal(samples: list[dict], annotators: list[int]) -> dict[str, int]:
    """Who rewrites which sample: dealt in turn in stratum order, so every annotator gets a like
    mix of formats, tasks and depths."""
    dealt = sorted(samples, key=lambda s: (s["language"], s["task_id"], s["depth"], s["id"]))
    return {s["id"]: annotators[i % len(annotators)] for i, s in enumerate(dealt)}


def list_campaigns(db: sqlite_utils.Database, annotator_id: int | None = None, *,
                   include_archived: bool = True) -> list[dict]:
    """Campaigns (newest first) with item counts; only those with items for ``annotator_id`` if
    given; the archived ones (``archived_at`` set) too unless ``include_archived`` is off."""
    clauses, args = [], []
    if annotator_id is not None:
        clauses.append("c.id IN (SELECT campaign_id FROM rewrite_items WHERE annotator_id = ?)")
        args.append(annotator_id)
    if not include_archived:
        clauses.append("c.archived_at IS NULL")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return list(db.query(
        f"SELECT c.id, c.name, c.source_suite, c.n_items, c.seed, c.created_at, c.archived_at, "
        f"(SELECT COUNT(*) FROM rewrite_items i WHERE i.campaign_id = c.id AND i.status = 'approved') AS approved "
        f"FROM rewrite_campaigns c {where} ORDER BY c.id DESC", args))


# ---- lifecycle: rename, archive, clone -----------------------------------------------

def _campaign(db: sqlite_utils.Database, campaign_id: int) -> dict:
    rows = list(db.query("SELECT * FROM rewrite_campaigns WHERE id = ?", [campaign_id]))
    if not rows:
        raise CampaignError(f"There is no campaign with id {campaign_id}.")
    return rows[0]


def _new_campaign_name(db: sqlite_utils.Database, name: str, keep_id: int | None = None) -> str:
    name = (name or "").strip()
    if not name:
        raise CampaignError("The campaign needs a name, like 'Real-Test 2026'.")
    try:
        limits.check_name("campaign name", name)
    except limits.LimitError as exc:
        raise CampaignError(str(exc)) from None
    if db.execute("SELECT 1 FROM rewrite_campaigns WHERE name = ? COLLATE NOCASE AND id IS NOT ?",
                  [name, keep_id]).fetchone():
        raise CampaignError(f"A campaign named {name!r} exists already: choose another name.")
    return name


def rename_campaign(db: sqlite_utils.Database, campaign_id: int, name: str, user: dict) -> str:
    """Give a campaign a new name (unique, any case); returns it. Its next export goes to the
    new name's folder and suite file (:func:`default_export_dir`, :func:`suite_file`); files
    already exported keep theirs."""
    _require_admin(user)
    with write_transaction(db):
        old = _campaign(db, campaign_id)["name"]
        name = _new_campaign_name(db, name, keep_id=campaign_id)
        if name == old:
            raise CampaignError(f"The campaign is called {name!r} already: type another name.")
        db.execute("UPDATE rewrite_campaigns SET name = ? WHERE id = ?", [name, campaign_id])
        changes.record(db, user["id"], "campaign.rename", f"campaign:{campaign_id}", old=old, new=name)
    return name


def set_campaign_archived(db: sqlite_utils.Database, campaign_id: int, archived: bool, user: dict) -> None:
    """Archive a campaign (hidden from annotators and from the default chooser, no more drafts,
    submissions, reviews or flags; kept whole and still exported) or bring it back."""
    _require_admin(user)
    with write_transaction(db):
        row = _campaign(db, campaign_id)
        if (row["archived_at"] is not None) == archived:
            raise CampaignError(f"Campaign {row['name']!r} is {'archived' if archived else 'not archived'} already.")
        db.execute("UPDATE rewrite_campaigns SET archived_at = ? WHERE id = ?",
                   [time.time() if archived else None, campaign_id])
        changes.record(db, user["id"], "campaign.archive" if archived else "campaign.unarchive",
                       f"campaign:{campaign_id}")


def clone_campaign(db: sqlite_utils.Database, campaign_id: int, name: str, annotator_ids: list[int],
                   user: dict) -> int:
    """A new campaign with the same samples, scenarios and queue order as ``campaign_id``, under
    a new ``name``, dealt afresh to the annotators chosen here (every item needs one), all items
    to do: no drafts, submissions or reviews are copied. Returns its id."""
    _require_admin(user)
    name = _new_campaign_name(db, name)
    annotators = _check_people(db, annotator_ids)
    with write_transaction(db):
        source = _campaign(db, campaign_id)
        name = _new_campaign_name(db, name)  # again inside the lock: another admin may have taken it
        items = list(db.query("SELECT position, sample_id, language, task_id, depth, scenario, sample_json "
                              "FROM rewrite_items WHERE campaign_id = ? ORDER BY position", [campaign_id]))
        samples = [json.loads(item["sample_json"]) for item in items]
        owner = _deal(samples, annotators)
        new_id = db.execute(
            "INSERT INTO rewrite_campaigns (name, source_suite, n_items, seed, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [name, source["source_suite"], source["n_items"], source["seed"], user["id"], time.time()]).lastrowid
        for item, sample in zip(items, samples):
            db.execute(
                "INSERT INTO rewrite_items (campaign_id, position, sample_id, language, task_id, depth, scenario, "
                "sample_json, annotator_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [new_id, item["position"], item["sample_id"], item["language"], item["task_id"], item["depth"],
                 item["scenario"], item["sample_json"], owner[sample["id"]]])
        changes.record(db, user["id"], "campaign.clone", f"campaign:{new_id}", source=campaign_id,
                       annotators=annotators)
    return new_id


def _require_open_campaign(db: sqlite_utils.Database, item: dict) -> None:
    row = db.execute("SELECT name, archived_at FROM rewrite_campaigns WHERE id = ?", [item["campaign_id"]]).fetchone()
    if row is not None and row[1] is not None:
        raise CampaignError(f"Campaign {row[0]!r} is archived: nothing in it can be changed until an admin "
                            "brings it back.")


# ---- items, drafts ------------------------------------------------------------------

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


# ---- the annotator's queue ----------------------------------------------------------

def campaigns_for(db: sqlite_utils.Database, user: dict) -> list[dict]:
    """The campaigns ``user`` works in (newest first): every one for an overseer, else those
    with items assigned to them; archived ones are left out."""
    return list_campaigns(db, None if oversees(user) else user["id"], include_archived=False)


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


# ---- the workspace's steps (nothing written: the page saves with save_draft) ----------------

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


# ---- submit, review -----------------------------------------------------------------

#: Why an untouched original is no rewrite: said before Submit (the workspace) and by a refused Submit.
NOT_REWRITTEN = ("the reference is still the abstract original. Rewrite its values into the scenario first "
                 "(Map values, or Edit the result).")


def not_rewritten(sample: dict, texts: rewrite.Texts) -> bool:
    """Whether ``texts`` leave the reference of ``sample`` as it is: nothing to check yet (the
    original passes its own checks trivially) and nothing :func:`submit` accepts."""
    return texts.reference == sample["reference"]


def answer_mode(db: sqlite_utils.Database, user: dict | None, language: str,
                category: str | None = None) -> tuple[str, str]:
    """When the answer check of a rewrite in ``language`` (of the task category ``category``)
    runs for ``user`` (and, when it is withheld, why): always for an overseer (they review, and
    may accept a structure exception); never while the user has an open study question in that
    format or category (:mod:`structext_core.studio.seal`); otherwise once the structure check passes."""
    if oversees(user):
        return rewrite.ANSWER_ALWAYS, ""
    why = seal.answer_check_withheld(db, user, language, category)
    return (rewrite.ANSWER_WITHHELD, why) if why else (rewrite.ANSWER_AFTER_STRUCTURE, "")


def live_check(db: sqlite_utils.Database, item: dict, user: dict | None,
               texts: rewrite.Texts) -> rewrite.CheckReport | sandbox.Unchecked:
    """The live checks of ``texts`` as ``user`` may see them (:func:`answer_mode`), run in a
    check worker: a withheld answer check is not run at all."""
    mode, why = answer_mode(db, user, item["sample"]["language"], item["sample"].get("task"))
    return sandbox.check_rewrite(item["sample"], texts.reference, texts.question, texts.answer, mode, why)


def submit(db: sqlite_utils.Database, item_id: int, user: dict, texts: rewrite.Texts,
           mapping: dict[str, str | None], exception_reason: str | None = None) -> rewrite.CheckReport:
    """Submit a rewrite for review; refused (:class:`SubmissionRefused`) unless both checks pass
    and the reference differs from the abstract original.

    An admin may submit a rewrite whose structure check fails with a written
    ``exception_reason``; the answer check is never waived (the export must audit).

    The refusal says only what the submitter may see (:func:`answer_mode`): a rewrite whose
    answer check is withheld from them is accepted on its structure, its answer check is
    stored for the reviewer, and approving it needs that check to pass (:func:`review`).
    The returned report is the submitter's view.
    """
    _require_draft_sizes(texts, mapping)
    _require_length("exception reason", exception_reason or "", "MAX_NOTE_CHARS")
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_editable(item)
    _require_open_campaign(db, item)
    full = sandbox.check_rewrite(item["sample"], texts.reference, texts.question, texts.answer)
    if isinstance(full, sandbox.Unchecked):  # a check that cannot complete never lets a text through
        raise CampaignError(f"Submission refused: {full.message} Nothing was submitted; the saved draft stays as it is.")
    mode, why = answer_mode(db, user, item["sample"]["language"], item["sample"].get("task"))
    report = full
    if mode == rewrite.ANSWER_WITHHELD:
        report = full.without_answer(why)
    elif mode == rewrite.ANSWER_AFTER_STRUCTURE and not full.structure_ok:
        report = full.without_answer(rewrite.ANSWER_AFTER_STRUCTURE_NOTE)
    reason = (exception_reason or "").strip()
    if not_rewritten(item["sample"], texts):
        raise SubmissionRefused(f"Submission refused: {NOT_REWRITTEN}", report)
    if not report.answer_ok:
        raise SubmissionRefused("Submission refused: the answer check fails (" +
                                "; ".join(str(p) for p in report.answer) + "). The answer check cannot be waived.",
                                report)
    if not report.structure_ok:
        if not reason:
            raise SubmissionRefused("Submission refused: the structure check fails (" +
                                    "; ".join(str(p) for p in report.parse + report.structure) + ").", report)
        if not oversees(user):
            raise SubmissionRefused("Submission refused: only an admin can accept an exception to the structure "
                                    "check.", report)
    elif reason:
        reason = ""  # nothing to except
    now = time.time()
    with write_transaction(db):
        _write_draft(db, item_id, user, texts, mapping, now)
        db.execute(
            "INSERT INTO rewrite_submissions (item_id, reference, question, answer, mapping_json, structure_ok, "
            "answer_ok, exception_reason, submitted_by, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [item_id, texts.reference, texts.question, texts.answer,
             json.dumps(rewrite.clean_mapping(mapping), ensure_ascii=False), int(full.structure_ok),
             int(full.answer_ok), reason or None, user["id"], now])
        db.execute("UPDATE rewrite_items SET status = 'submitted' WHERE id = ?", [item_id])
    return report


def latest_submission(db: sqlite_utils.Database, item_id: int) -> dict | None:
    rows = list(db.query("SELECT s.*, u.username AS submitted_by_name FROM rewrite_submissions s "
                         "LEFT JOIN users u ON u.id = s.submitted_by WHERE item_id = ? ORDER BY s.id DESC LIMIT 1",
                         [item_id]))
    return rows[0] if rows else None


def submitted_texts(submission: dict) -> rewrite.Texts:
    """The reference, question and answer of a submission (a row of :func:`latest_submission`)."""
    return rewrite.Texts(submission["reference"], submission["question"], submission["answer"])


def check_submission(item: dict, submission: dict) -> rewrite.CheckReport | sandbox.Unchecked:
    """The checks of a submitted rewrite, run again for the reviewer (the sandbox's answer when
    they cannot complete). The checks are deterministic, so their warnings (abstract tokens left,
    contact details) are the ones the annotator saw when submitting these texts: nothing more
    is stored for them."""
    texts = submitted_texts(submission)
    return sandbox.check_rewrite(item["sample"], texts.reference, texts.question, texts.answer)


def submission_diff(item: dict, submission: dict) -> list[rewrite.TextDiff]:
    """What the submitted rewrite changed in the original's reference, question and answer
    (:func:`structext_core.studio.rewrite.diff_texts`, bounded)."""
    return rewrite.diff_texts(rewrite.original_texts(item["sample"]), submitted_texts(submission))


def latest_review(db: sqlite_utils.Database, item_id: int) -> dict | None:
    rows = list(db.query("SELECT r.*, u.username AS reviewer FROM rewrite_reviews r LEFT JOIN users u "
                         "ON u.id = r.reviewer_id WHERE item_id = ? ORDER BY r.id DESC LIMIT 1", [item_id]))
    return rows[0] if rows else None


def review(db: sqlite_utils.Database, item_id: int, user: dict, decision: str, comment: str = "") -> None:
    """Approve a submitted rewrite, or return it to its annotator with a comment."""
    _require_admin(user)
    if decision not in ("approved", "returned"):
        raise CampaignError(f"Unknown decision {decision!r}: approve or return.")
    comment = (comment or "").strip()
    _require_length("review comment", comment, "MAX_NOTE_CHARS")
    if decision == "returned" and not comment:
        raise CampaignError("Say what to change: returning a rewrite needs a comment for the annotator.")
    item = get_item(db, item_id)
    _require_open_campaign(db, item)
    if item["status"] != "submitted":
        raise CampaignError(f"Item {item['position']} is {item['status']}, not waiting for review.")
    submission = latest_submission(db, item_id)
    if decision == "approved":  # the answer check is never waived, also where the annotator could not see it
        report = check_submission(item, submission)
        if isinstance(report, sandbox.Unchecked):
            raise CampaignError(f"Not approved: {report.message}")
        if not report.answer_ok:
            raise CampaignError("Not approved: the answer check fails (" + "; ".join(str(p) for p in report.answer)
                                + "). Send it back; say that the answer does not follow from the reference, "
                                  "without giving the answer.")
    with write_transaction(db):
        db.execute("INSERT INTO rewrite_reviews (item_id, submission_id, reviewer_id, decision, comment, reviewed_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", [item_id, submission["id"], user["id"], decision, comment,
                                                 time.time()])
        db.execute("UPDATE rewrite_items SET status = ? WHERE id = ?", [decision, item_id])


# ---- flags ----------------------------------------------------------------------------

def flag_sample(db: sqlite_utils.Database, item_id: int, user: dict, reason: str) -> int:
    """Flag the source sample of an item as wrong; the admin sees it in the flag list."""
    reason = (reason or "").strip()
    _require_length("flag reason", reason, "MAX_NOTE_CHARS")
    if len(reason) < 5:
        raise CampaignError("Say what is wrong with the source sample (at least a few words).")
    item = get_item(db, item_id)
    _require_access(item, user)
    _require_open_campaign(db, item)
    with write_transaction(db):
        cursor = db.execute("INSERT INTO rewrite_flags (item_id, sample_id, user_id, reason, created_at) "
                            "VALUES (?, ?, ?, ?, ?)", [item_id, item["sample_id"], user["id"], reason, time.time()])
    return cursor.lastrowid


def list_flags(db: sqlite_utils.Database, campaign_id: int | None = None, open_only: bool = False) -> list[dict]:
    clauses, args = [], []
    if campaign_id is not None:
        clauses.append("i.campaign_id = ?")
        args.append(campaign_id)
    if open_only:
        clauses.append("f.resolved_at IS NULL")
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    return list(db.query(
        "SELECT f.id, f.item_id, i.position, f.sample_id, u.username AS flagged_by, f.reason, f.created_at, "
        "r.username AS resolved_by, f.resolved_at, f.resolution FROM rewrite_flags f "
        "JOIN rewrite_items i ON i.id = f.item_id LEFT JOIN users u ON u.id = f.user_id "
        f"LEFT JOIN users r ON r.id = f.resolved_by {where} ORDER BY f.id", args))


def resolve_flag(db: sqlite_utils.Database, flag_id: int, user: dict, resolution: str) -> None:
    _require_admin(user)
    resolution = (resolution or "").strip()
    _require_length("flag resolution", resolution, "MAX_NOTE_CHARS")
    if not resolution:
        raise CampaignError("Write what was done about the flag.")
    with write_transaction(db):
        cursor = db.execute("UPDATE rewrite_flags SET resolved_by = ?, resolved_at = ?, resolution = ? "
                            "WHERE id = ? AND resolved_at IS NULL", [user["id"], time.time(), resolution, flag_id])
    if cursor.rowcount == 0:
        raise CampaignError(f"Flag {flag_id} does not exist or is resolved already.")


# ---- progress, export -------------------------------------------------------------------

def progress(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """Per annotator: how many items in each status."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in list_items(db, campaign_id):
        counts[row["annotator"]][row["status"]] += 1
    return [{"annotator": name, **{s: c[s] for s in STATUSES}, "total": sum(c.values())}
            for name, c in sorted(counts.items())]


def real_test_sample(item: dict, submission: dict, number: int) -> dict:
    """The approved rewrite in the sample schema, with its source id and scenario."""
    source = item["sample"]
    task = TASKS[source["task_id"]]
    params = {k: (int(v) if isinstance(v, float) and v.is_integer() else v)
              for k, v in task.parse(submission["question"]).items()}
    out = {k: source[k] for k in ("language", "task", "task_id", "depth", "width", "col", "seed", "requirement",
                                  "rule_hint")}
    out.update({
        "id": f"{SUITE_NAME}-t{source['task_id']:02d}-d{source['depth']}w{source['width']}-{number:03d}",
        "suite": SUITE_NAME,
        "reference": submission["reference"],
        "question": submission["question"],
        "answer": submission["answer"],
        "params": params,
        "source_id": source["id"],
        "scenario": item["scenario"],
    })
    if submission.get("exception_reason"):
        out["exception"] = submission["exception_reason"]
    return {k: out[k] for k in FIELDS} | {k: v for k, v in out.items() if k not in FIELDS}


@dataclass
class ExportResult:
    jsonl: Path
    layout: Path
    count: int
    suite: Path | None = None  # the copy in the suites folder, when one was asked for


def suite_file(db: sqlite_utils.Database, campaign_id: int, suites_dir: str | Path) -> Path:
    """Where a campaign's Real-Test suite lives among the suites: ``real-test-<campaign name>.jsonl``."""
    row = db.execute("SELECT name FROM rewrite_campaigns WHERE id = ?", [campaign_id]).fetchone()
    return Path(suites_dir) / f"{SUITE_NAME}-{_slug(row[0] if row else '') or campaign_id}.jsonl"


def _slug(name: str) -> str:
    """``name`` as a file name: lower case, each run of other characters than a-z, 0-9, _ and -
    one dash, no dash at either end (may be empty)."""
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-")


def default_export_dir(name: str, campaign_id: int) -> Path:
    """Where the export of campaign ``name`` goes unless the admin names another folder:
    ``exports/<name as a file name>`` beside the database."""
    return settings.exports_dir() / (_slug(name) or f"campaign-{campaign_id}")


def export_audit(result: ExportResult) -> list[str]:
    """The audit of what :func:`export_campaign` wrote, one line a layout, as the command line
    says it: ``real-test.jsonl: audited 3 samples: 3 agree, ...`` and ``official/: ...``."""
    return [f"{result.jsonl.name}: {audit([result.jsonl]).line()}",
            f"{result.layout.name}/: {audit([result.layout]).line()}"]


def export_samples(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """The approved rewrites of a campaign as Real-Test samples (queue order)."""
    samples, counters = [], Counter()
    for row in list_items(db, campaign_id, status="approved"):
        item = get_item(db, row["id"])
        key = (item["task_id"], item["depth"])
        samples.append(real_test_sample(item, latest_submission(db, row["id"]), counters[key]))
        counters[key] += 1
    return samples


def audited_samples(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """The approved rewrites as Real-Test samples (:func:`export_samples`), each audited from its
    text; :class:`CampaignError` when there is none yet or the audit disagrees on any."""
    samples = export_samples(db, campaign_id)
    if not samples:
        raise CampaignError("No approved rewrite to export yet.")
    bad = [(s["id"], v.reason) for s in samples if (v := audit_sample(s, s["id"])).status != AGREE]
    if bad:
        raise CampaignError("Not exported: the audit disagrees on " +
                            "; ".join(f"{sid} ({reason})" for sid, reason in bad[:5]))
    return samples


def export_jsonl(db: sqlite_utils.Database, campaign_id: int) -> str:
    """``real-test.jsonl`` as text, the same file :func:`export_campaign` writes (for a download);
    :class:`CampaignError` as :func:`audited_samples`."""
    return "".join(to_jsonl_line(sample) for sample in audited_samples(db, campaign_id))


def export_campaign(db: sqlite_utils.Database, campaign_id: int, directory: str | Path,
                    suites_dir: str | Path | None = None) -> ExportResult:
    """Write ``real-test.jsonl`` and the authors' layout (``official/``) under ``directory``.

    ``directory`` must be new, empty or hold an earlier export (its ``.structext-export``
    marker, see :mod:`structext_core.benchmark.outputs`): only that export's files are replaced, nothing
    else is touched. Every sample is audited first; if any disagrees, or the folder is refused,
    nothing is written and the :class:`CampaignError` says why. With ``suites_dir`` the samples
    are also written there as :func:`suite_file`, a suite like Test and Test-Hard.
    """
    try:
        outputs.check_export_folder(directory)
    except outputs.OutputError as exc:
        raise CampaignError(str(exc)) from None
    samples = audited_samples(db, campaign_id)
    directory = Path(directory)
    try:
        with outputs.export_into(directory, writer=f"Real-Test export of campaign {campaign_id}") as stage:
            write_jsonl(stage / f"{SUITE_NAME}.jsonl", samples)
            official.write_layout(samples, stage / "official")
    except outputs.OutputError as exc:
        raise CampaignError(str(exc)) from None
    suite = None
    if suites_dir is not None:  # the suite the rest of the app sees: prompts, run, score, Results
        suite = suite_file(db, campaign_id, suites_dir)
        try:
            write_jsonl(suite, samples)  # all or nothing
        except OSError as exc:
            raise CampaignError(f"Exported to {directory}, but the suite could not be written to {suite}: "
                                f"{exc.strerror or exc}") from None
    return ExportResult(directory / f"{SUITE_NAME}.jsonl", directory / "official", len(samples), suite)
