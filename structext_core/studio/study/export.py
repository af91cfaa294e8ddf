"""The export of a study: one row per answer, as CSV, JSONL and as human result rows."""


import json
import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

import pandas as pd
import sqlite_utils

from structext_core.studio.crowd import profiles
from structext_core.studio.study.dashboard import (
    COUNTED_KINDS,
    flag_fast,
    responses_frame,
    study_facets,
    study_strata,
)
from structext_core.studio.study.kinds import kind_of
from structext_core.text import safe_text
from structext_core.text.words import series

# ---------------------------------------------------------------- export


def _iso(seconds: float | None) -> str | None:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(timespec="milliseconds")


#: The export's columns around an item's own (its kind's ``item_columns``, after ``sample_id``).
EXPORT_COLUMNS = [
    "study", "suite", "annotator", "seq", "sample_id", "answer", "response", "gave_up", "first_shown_at",
    "submitted_at", "elapsed_seconds", "paused_seconds", "pause_count", "rouge_l", "score",
    "passed", "exact_match", "flagged_fast",
    # The honest clock (answers committed before it have None here).
    "idle_seconds", "away_seconds", "wall_seconds", "idle_pauses", "takeovers",
    # The lead's override in force (Adjudication): ``rouge_l``, ``score`` and ``passed`` follow it
    # when set (as in :func:`human_results`); ``rouge_l_auto`` and ``score_auto`` (paper rule) are
    # the automatic values beside it.
    "rouge_l_auto", "score_auto", "score_override", "override_reason", "override_by", "override_at",
    # ``study`` (counted), ``practice`` or ``gold`` (not counted; exported on request).
    "kind",
    # True when the annotator was removed from the study later (their answers are kept).
    "annotator_removed",
]


def export_columns(benchmark: str | None) -> list[str]:
    """The export's columns for a study of ``benchmark``: :data:`EXPORT_COLUMNS` with the item
    columns of its kind (:mod:`structext_core.studio.study.kinds`, by default its strata) after
    ``sample_id``. For a right-or-wrong kind, ``rouge_l``, ``score`` and ``exact_match`` are its
    correctness (1 or 0); for a multiple-choice item ``answer`` is the key's letter and
    ``response`` the chosen letter."""
    at = EXPORT_COLUMNS.index("sample_id") + 1
    return [*EXPORT_COLUMNS[:at], *kind_of(benchmark).item_columns, *EXPORT_COLUMNS[at:]]


def _names(columns: Sequence[str]) -> str:
    return series(f"`{c}`" for c in columns)


def export_description(db: sqlite_utils.Database, study_id: int, columns: Sequence[str] | None = None) -> str:
    """What a row of the study's export holds, in Markdown, from the columns the export has
    (:func:`study_export_columns`, or ``columns`` when the caller has them already): never a column of
    another benchmark."""
    columns = list(columns) if columns is not None else study_export_columns(db, study_id)
    kind = kind_of(_benchmark(db, study_id))
    own = columns[columns.index("sample_id") + 1:columns.index("answer")]
    about = f"; {_names(own)} describe it" if own else ""
    if kind.score_label:
        score = (f"`rouge_l` its {kind.score_label} against the key and `score` the same with the pass mark "
                 "applied (below it counts as 0)")
    else:
        score = "`score` 1 when it is right by the set's rule, 0 otherwise"
    return (f"Each row is one answer: `sample_id` is the item's id in its data set{about}; `response` is the "
            f"answer given, `answer` the key, and {score}. A lead's override in force is `score`; "
            "`score_auto` is the automatic one. Times are in seconds (`elapsed_seconds` active), moments in UTC.")


def export_rows(db: sqlite_utils.Database, study_id: int, kinds: Sequence[str] = COUNTED_KINDS) -> list[dict]:
    """Every response of the study with timing (ISO-8601 UTC) and scores, for CSV/JSONL.

    By default the counted responses only; ``kinds=("practice", "gold")`` lists the others
    (practice round, gold items) apart, with the same columns.

    ``elapsed_seconds`` is the active time; ``elapsed_seconds + paused_seconds +
    idle_seconds + away_seconds = wall_seconds`` (first showing to submission).

    A lead's override in force counts as in :func:`human_results`: it is ``score`` and takes the
    place of ``rouge_l``; the automatic values are ``rouge_l_auto`` and ``score_auto``. ``sample_id``
    is the id the data set gives the item (the lab's own id, where ours is a content hash). The
    person's questionnaire answers are the last columns, ``q_<field>`` (:func:`study_export_columns`).
    """
    df = responses_frame(db, study_id, kinds)
    columns = study_export_columns(db, study_id)
    _, answers = profiles.export_values(db, study_id)
    flagged = set(flag_fast(df)["response_id"]) if not df.empty else set()
    removed = {row[0] for row in db.execute(
        "SELECT user_id FROM study_annotators WHERE study_id = ? AND removed_at IS NOT NULL", [study_id])}
    rows = []
    for record in df.to_dict("records"):
        record["annotator_removed"] = record["user_id"] in removed
        record["sample_id"] = record["item"]  # the id the data set gives the item (the lab's own), not our hash
        record["first_shown_at"] = _iso(record["first_shown_at"])
        record["submitted_at"] = _iso(record["submitted_at"])
        record["override_at"] = _iso(record["override_at"])
        record["flagged_fast"] = record["response_id"] in flagged
        record["exact_match"] = int(record["exact_match"])
        record["rouge_l_auto"] = record["rouge_l"]
        if not pd.isna(record["score_override"]):
            record["rouge_l"] = float(record["score_override"])
        record["passed"] = bool(record["passed"])
        for column in ("idle_pauses", "takeovers"):
            record[column] = None if pd.isna(record[column]) else int(record[column])
        record.update(answers.get(record["user_id"], {}))
        rows.append({key: _plain(record.get(key)) for key in columns})
    return rows


def study_export_columns(db: sqlite_utils.Database, study_id: int) -> list[str]:
    """The columns of the study's export (:func:`export_rows`), in order: :func:`export_columns` of its
    benchmark, its items' more fields after the item's own columns, and one ``q_<name>`` column per
    field of its questionnaire at the end (:func:`structext_core.studio.crowd.profiles.export_values`)."""
    columns = export_columns(_benchmark(db, study_id))
    facets = [key for key in study_facets(db, study_id) if key not in columns]  # the items' more fields
    at = columns.index("sample_id") + 1 + len(kind_of(_benchmark(db, study_id)).item_columns)
    columns = [*columns[:at], *facets, *columns[at:]]
    asked, _ = profiles.export_values(db, study_id)
    return [*columns, *(name for name in asked if name not in columns)]


def _benchmark(db: sqlite_utils.Database, study_id: int) -> str | None:
    row = db.execute("SELECT benchmark FROM studies WHERE id = ?", [study_id]).fetchone()
    return row[0] if row else None


def _plain(value):
    """numpy scalars to Python values and NaN to None, for json.dumps and CSV."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and math.isnan(value) else value


def to_csv(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    """Rows as CSV text with a header (columns in the given or first row's order). A text
    cell a spreadsheet would run as a formula is written with a leading apostrophe
    (:func:`structext_core.text.safe_text.csv_cell`); :func:`to_jsonl` keeps every text exactly."""
    columns = list(columns or (rows[0].keys() if rows else EXPORT_COLUMNS))
    return safe_text.csv_rows(rows, columns)


def to_jsonl(rows: Iterable[dict]) -> str:
    """Rows as JSON Lines (UTF-8 text kept as is, keys in the row's order, one object a line)."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def human_results(db: sqlite_utils.Database, study_id: int, pool: bool = True) -> list[dict]:
    """The study's responses in the model-result schema, for the export and the results page.

    One row per response with ``model`` ``human:<annotator>``, and, with ``pool`` (the
    export's file), the same rows again with ``model`` ``human`` (the pool: its mean is the
    paper's human figure over all responses). Results reads them without the pool, so each
    answer is one row; it pools people itself (``views.people_vs_models.people_as``). ``prompt`` is ``naive``: people saw the question and requirement only.
    A lead's override in force counts: it is ``score`` and takes the place of ``rouge_l``
    too, so every view of Results (raw or thresholded) counts it; the automatic values stay
    in ``rouge_l_auto`` and ``score_auto``, the override in ``score_override``; the person's
    questionnaire answers, if the study asks any, last (``q_<field>``, as in :func:`export_rows`).

    Empty for a study whose benchmark keeps its answers out of the result rows (its
    kind's ``model_results`` is false: its Results section reads the study's own rows, see
    :mod:`structext_core.studio.study.kinds`).
    """
    if not kind_of(_benchmark(db, study_id)).model_results:
        return []
    df = responses_frame(db, study_id)
    strata = study_strata(db, study_id)
    _, answers = profiles.export_values(db, study_id)  # the person's questionnaire answers, q_<field>
    rows = []
    for pooled in (False, True) if pool else (False,):
        for record in df.to_dict("records"):
            override = None if pd.isna(record["score_override"]) else float(record["score_override"])
            rows.append({
                "sample_id": record["sample_id"],
                "model": "human" if pooled else f"human:{record['annotator']}",
                "prompt": "naive",
                "response": record["response"],
                "rouge_l": float(record["rouge_l"]) if override is None else override,
                "score": float(record["score"]),
                "exact_match": int(record["exact_match"]),
                "suite": record["suite"],
                **{key: _plain(record[key]) for key in strata},
                "annotator": record["annotator"],
                "study": record["study"],
                "gave_up": bool(record["gave_up"]),
                "elapsed_seconds": float(record["elapsed_seconds"]),
                "rouge_l_auto": float(record["rouge_l"]),
                "score_auto": float(record["score_auto"]),
                "score_override": override,
                **answers.get(record["user_id"], {}),
            })
    return rows
