"""Question review: the curated set, the review log and their export."""

from __future__ import annotations

import io
import json
import os
import shutil
import uuid
import zipfile
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import sqlite_utils

from structext_core.aibench import store as aibench_store
from structext_core.aibench.model import ORIGINAL_SYSTEM, Paper
from structext_core.aibench.papers import paper_to_dict
from structext_core.aibench.question_review.adjudication import _same, agreement, latest_adjudication
from structext_core.aibench.question_review.campaigns import campaign, list_items
from structext_core.aibench.question_review.common import ADDED, GENERATED, REMOVED, REVISED, ReviewError, _require_lead
from structext_core.aibench.question_review.drafts import question_from, question_json
from structext_core.aibench.question_review.papers import load_dataset
from structext_core.aibench.question_review.reviewing import latest_submission, list_flags
from structext_core.studio import changes
from structext_core.studio.storage import write_transaction

# ---- the curated set and its export -----------------------------------------------------------

@dataclass
class Curated:
    papers: list[Paper]
    provenance: list[dict]
    left_out: dict[str, str]  # paper id -> why it is not (yet) in the curated set


def curated(db: sqlite_utils.Database, campaign_id: int) -> Curated:
    """The curated questions of every paper whose reviews are all approved and whose disagreements
    are all adjudicated, with one provenance row per question (removed ones too)."""
    row = campaign(db, campaign_id)
    data = load_dataset(row["dataset"])
    items: dict[str, list[dict]] = defaultdict(list)
    for item in list_items(db, campaign_id):
        items[item["paper_id"]].append(item)
    papers, provenance, left_out = [], [], {}
    for paper_id in sorted(items):
        paper = data.papers.get(paper_id)
        if paper is None:
            left_out[paper_id] = "no longer in the data set"
            continue
        waiting = [i["reviewer"] for i in items[paper_id] if i["status"] != "approved"]
        if waiting:
            left_out[paper_id] = f"not approved yet ({', '.join(waiting)})"
            continue
        subs = [(i, latest_submission(db, i["id"])) for i in items[paper_id]]
        kept, rows, open_questions = [], [], []
        for q in paper.questions:
            votes = [(i, s, next((d for d in s["decisions"] if d["question_id"] == q.id), None)) for i, s in subs]
            first = votes[0][2]
            if all(v[2] is not None and _same(first, v[2]) for v in votes):
                action, qdata = first["action"], first["question"]
                by = ", ".join(v[0]["reviewer"] for v in votes)
                at = max(v[1]["submitted_at"] for v in votes)
                reason = " | ".join(v[2]["reason"] for v in votes if v[2]["reason"])
            else:
                adj = latest_adjudication(db, campaign_id, paper_id, q.id)
                if adj is None:
                    open_questions.append(q.id)
                    continue
                action, by, at, reason = adj["action"], f"{adj['lead']} (adjudicated)", adj["at"], adj["reason"]
                qdata = json.loads(adj["question_json"]) if adj["question_json"] else None
            final = question_from(qdata, q.id) if action == "edit" else q
            status = {"accept": GENERATED, "edit": REVISED, "remove": REMOVED}[action]
            if action != "remove":
                kept.append(final)
            rows.append({"paper_id": paper_id, "question_id": q.id, "status": status, "by": by, "at": at,
                         "reason": reason, "level": final.level,
                         "original": json.loads(question_json(q)) if action != "accept" else None})
        if open_questions:
            left_out[paper_id] = f"disagreements not adjudicated yet: {', '.join(open_questions)}"
            continue
        for item, sub in subs:
            for d in sub["decisions"]:
                if d["action"] == "add":
                    added = question_from(d["question"], d["question_id"])
                    kept.append(added)
                    rows.append({"paper_id": paper_id, "question_id": added.id, "status": ADDED,
                                 "by": item["reviewer"], "at": sub["submitted_at"], "reason": d["reason"],
                                 "level": added.level, "original": None})
        papers.append(replace(paper, questions=tuple(kept)))
        provenance.extend(rows)
    return Curated(papers, provenance, left_out)


def review_log(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """Every submission, review, adjudication, flag and lead action of the campaign, oldest first."""
    log = []
    for item in list_items(db, campaign_id):
        for s in db.query("SELECT s.*, u.username FROM qreview_submissions s LEFT JOIN users u ON u.id = "
                          "s.submitted_by WHERE item_id = ? ORDER BY id", [item["id"]]):
            log.append({"at": s["submitted_at"], "event": "submitted", "by": s["username"], "paper_id": item["paper_id"],
                        "active_seconds": round(s["active_seconds"], 1), "away_seconds": round(s["away_seconds"], 1),
                        "idle_seconds": round(s["idle_seconds"], 1), "paused_seconds": round(s["paused_seconds"], 1),
                        "decisions": json.loads(s["decisions_json"])})
        for r in db.query("SELECT r.*, u.username FROM qreview_reviews r LEFT JOIN users u ON u.id = r.reviewer_id "
                          "WHERE item_id = ? ORDER BY id", [item["id"]]):
            log.append({"at": r["reviewed_at"], "event": r["decision"], "by": r["username"],
                        "paper_id": item["paper_id"], "reviewer": item["reviewer"], "comment": r["comment"]})
    for a in db.query("SELECT a.*, u.username FROM qreview_adjudications a LEFT JOIN users u ON u.id = a.by_user "
                      "WHERE campaign_id = ? ORDER BY id", [campaign_id]):
        log.append({"at": a["at"], "event": "adjudicated", "by": a["username"], "paper_id": a["paper_id"],
                    "question_id": a["question_id"], "action": a["action"], "reason": a["reason"]})
    for f in list_flags(db, campaign_id):
        log.append({"at": f["created_at"], "event": "flagged", "by": f["flagged_by"], "paper_id": f["paper_id"],
                    "question_id": f["question_id"], "reason": f["reason"], "resolution": f["resolution"]})
    return sorted(log, key=lambda r: r["at"])


@dataclass
class ExportResult:
    folder: Path
    papers: int
    questions: int
    left_out: dict[str, str]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def export(db: sqlite_utils.Database, campaign_id: int, directory: str | Path, user: dict) -> ExportResult:
    """Write the curated set in the AIBench import format under ``directory`` (new or empty):
    ``papers/<id>.json``, ``figures/<id>.png`` (the original figures), ``images/<system>/<id>.png``,
    ``aesthetics.jsonl``, and ``review/provenance.jsonl``, ``review/review_log.jsonl``,
    ``review/agreement.json``. Written into a staging folder renamed into place: all or nothing."""
    _require_lead(user)
    row = campaign(db, campaign_id)
    result = curated(db, campaign_id)
    if not result.papers:
        raise ReviewError("Nothing to export yet: no paper has all its reviews approved and adjudicated.")
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ReviewError(f"{directory} exists and is not an empty folder: choose a new folder.")
    data = load_dataset(row["dataset"])
    source = aibench_store.dataset_path(row["dataset"])
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.parent / f".{directory.name}.exporting-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        keep = {p.id for p in result.papers}
        (staging / "papers").mkdir()
        (staging / "review").mkdir()
        for paper in result.papers:
            doc = paper_to_dict(replace(paper, original_figure=""))
            record = data.images.get((ORIGINAL_SYSTEM, paper.id))
            if record:
                doc["original_figure"] = f"figures/{paper.id}.png"
                (staging / "figures").mkdir(exist_ok=True)
                shutil.copyfile(source / record.path, staging / doc["original_figure"])
            (staging / "papers" / f"{paper.id}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                                                 "utf-8")
        for (system, paper_id), record in sorted(data.images.items()):
            if system != ORIGINAL_SYSTEM and paper_id in keep:
                (staging / "images" / system).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / record.path, staging / "images" / system / f"{paper_id}.png")
        scores = [{"system": s, "paper_id": p, "metric": m, "score": v}
                  for (s, p, m), v in sorted(data.aesthetics.items()) if p in keep]
        if scores:
            (staging / "aesthetics.jsonl").write_text(_jsonl(scores), "utf-8")
        (staging / "review" / "provenance.jsonl").write_text(_jsonl(result.provenance), "utf-8")
        (staging / "review" / "review_log.jsonl").write_text(_jsonl(review_log(db, campaign_id)), "utf-8")
        (staging / "review" / "agreement.json").write_text(json.dumps(
            {"campaign": row["name"], "dataset": row["dataset"], "agreement": agreement(db, campaign_id),
             "left_out": result.left_out}, ensure_ascii=False, indent=1) + "\n", "utf-8")
        if directory.exists():
            directory.rmdir()
        os.rename(staging, directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    with write_transaction(db):
        changes.record(db, user["id"], "qreview.export", f"qreview:{campaign_id}", folder=str(directory),
                       papers=len(result.papers))
    return ExportResult(directory, len(result.papers), sum(len(p.questions) for p in result.papers),
                        result.left_out)


def zip_folder(folder: str | Path) -> bytes:
    """An exported folder as one zip (for the download button)."""
    folder = Path(folder)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return out.getvalue()
