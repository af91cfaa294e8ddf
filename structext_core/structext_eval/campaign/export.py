"""A campaign's progress and its export: the approved rewrites as Real-Test samples, audited,
written as ``real-test.jsonl`` and the authors' layout (and optionally as a suite).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from structext_core import settings
from structext_core.structext_eval import official
from structext_core.structext_eval.audit import AGREE, audit, audit_sample
from structext_core.structext_eval.campaign.items import get_item, list_items
from structext_core.structext_eval.campaign.rules import STATUSES, SUITE_NAME, CampaignError
from structext_core.structext_eval.campaign.submissions import latest_submission
from structext_core.structext_eval.samples import FIELDS, to_jsonl_line, write_jsonl
from structext_core.structext_eval.tasks import TASKS
from structext_core.text import outputs


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
    marker, see :mod:`structext_core.text.outputs`): only that export's files are replaced, nothing
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
