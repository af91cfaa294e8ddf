"""Setting campaigns up: the scenario catalogue, the stratified draw, creating a campaign and
dealing its items, listing campaigns, and their lifecycle (rename, archive, clone).

A campaign draws samples from Test stratified by task and depth (as the paper: 928 =
29 tasks x 2 depths x 16), gives each its own scenario from the catalogue (no repeats),
and deals them to annotators in balance. Every write is one committed transaction.
"""

from __future__ import annotations

import json
import random
import time

import sqlite_utils

from structext_core.evaluation import draws
from structext_core.structext_eval.campaign.rules import (
    MAX_SCENARIO_LENGTH,
    SCENARIO_FILE,
    CampaignError,
    _require_admin,
    _require_length,
)
from structext_core.studio import accounts, changes
from structext_core.studio.storage import write_transaction
from structext_core.text import limits
from structext_core.text.words import plural


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


def draw_stratified(samples: list[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` samples drawn evenly over (task, depth) strata (16 each for 928 of Test).

    When ``n`` does not divide evenly, the remaining samples go to strata chosen at
    random (seeded); a stratum that runs out passes its share to the others
    (:func:`structext_core.evaluation.draws.stratified_draw`, ``even``).
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
