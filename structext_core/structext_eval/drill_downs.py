"""Drill-downs: the rows behind one heatmap cell, a search of samples, and the responses of
those samples with their scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import sqlite_utils

from structext_core.views.heatmaps import _labels


def cell_rows(frame: pd.DataFrame, row: str, row_value: str, col: str, col_value: str) -> pd.DataFrame:
    """The result rows behind one heatmap cell (values compared as their labels)."""
    mask = (_labels(frame[row]) == str(row_value)) & (_labels(frame[col]) == str(col_value))
    return frame[mask.to_numpy()]


def find_samples(
    sample_ids: Iterable[str],
    db: sqlite_utils.Database | None = None,
    data_dir: str | Path | None = None,
) -> dict[str, dict]:
    """The samples with these ids, from the suite files in ``data_dir`` (``*.jsonl``) and the
    human-baseline studies' stored items. Ids not found are simply absent."""
    from structext_core.structext_eval import suites  # local: suites pulls in every format module

    wanted = {str(s) for s in sample_ids}
    found: dict[str, dict] = {}
    if db is not None and wanted:
        placeholders = ", ".join("?" * len(wanted))
        for sample_id, sample_json in db.execute(
            f"SELECT sample_id, sample_json FROM study_items WHERE sample_id IN ({placeholders})", list(wanted)
        ):
            found.setdefault(sample_id, json.loads(sample_json))
    missing = wanted - set(found)
    folder = Path(data_dir) if data_dir is not None else suites.data_dir()
    if missing and folder.is_dir():
        for path in sorted(folder.glob("*.jsonl")):
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    head = line[:200]  # "id" is the first key of a sample line
                    if not any(f'"{sid}"' in head for sid in missing):
                        continue
                    sample = json.loads(line)
                    if sample.get("id") in missing:
                        found[sample["id"]] = sample
                        missing.discard(sample["id"])
            if not missing:
                break
    return found


DRILL_COLUMNS = ("sample_id", "model", "prompt", "suite", "format", "task", "depth", "width", "value", "rouge_l",
                 "rouge_l_paper", "exact_match", "bleu", "question", "requirement", "answer", "answer_extracted",
                 "response", "reference")


def drill_down(
    rows: pd.DataFrame,
    db: sqlite_utils.Database | None = None,
    data_dir: str | Path | None = None,
    limit: int = 200,
) -> pd.DataFrame:
    """The samples behind a cell, worst first: reference, question, answer, response and scores.

    Responses of model results are read from the ``results`` table; human rows carry theirs.
    At most ``limit`` rows.
    """
    part = rows.sort_values(["value", "sample_id"], kind="stable").head(limit).copy()
    texts: dict[int, tuple[str, str]] = {}
    ids = [int(i) for i in part["row_id"].dropna()] if "row_id" in part.columns else []
    if db is not None and ids:
        placeholders = ", ".join("?" * len(ids))
        for row_id, response, extracted in db.execute(
            f"SELECT id, response, answer_extracted FROM results WHERE id IN ({placeholders})", ids
        ):
            texts[row_id] = (response or "", extracted or "")
    responses, extracted_answers = [], []
    for row_id, own in zip(part.get("row_id", [None] * len(part)),
                           part["response"] if "response" in part.columns else [None] * len(part)):
        if row_id is not None and not pd.isna(row_id) and int(row_id) in texts:
            response, extracted = texts[int(row_id)]
        else:
            response = "" if own is None or (isinstance(own, float) and math.isnan(own)) else str(own)
            extracted = response
        responses.append(response)
        extracted_answers.append(extracted)
    part["response"] = responses
    part["answer_extracted"] = extracted_answers
    samples = find_samples(part["sample_id"], db=db, data_dir=data_dir)
    for field_name in ("question", "requirement", "answer", "reference"):
        part[field_name] = [str(samples.get(s, {}).get(field_name, "(sample not found)")) for s in part["sample_id"]]
    return part[[c for c in DRILL_COLUMNS if c in part.columns]].reset_index(drop=True)
