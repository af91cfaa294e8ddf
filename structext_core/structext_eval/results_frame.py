"""The stored model results read back as one frame, with the human baseline's rows
(:func:`structext_core.studio.study.human_results`: one row per answer, model ``human:<annotator>``;
views pool them as ``human`` when asked, never beside the per-person rows); files come in through
:mod:`structext_core.structext_eval.results_store`; the imported files' table and the note on files scored
with another ROUGE-L before import."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import sqlite_utils

from structext_core.evaluation import scoring
from structext_core.structext_eval.results_store import HUMAN_SOURCE_PREFIX, LOAD_COLUMNS
from structext_core.studio import study
from structext_core.text.words import plural, series
from structext_core.views.result_options import ROUGE_DESCRIPTIONS, ValueChoice

#: Each part of the fingerprint its own scalar query: SQLite reads a lone MAX from an index (migration 17)
#: and counts on the narrowest one, where several aggregates in one SELECT scan the table's rows.
_VERSION_SQL = "SELECT " + ", ".join(f"(SELECT {part} FROM {table})" for table, part in (
    ("results", "COUNT(*)"), ("results", "MAX(id)"), ("results", "MAX(imported_at)"),
    ("responses", "COUNT(*)"), ("responses", "MAX(id)"), ("responses", "MAX(submitted_at)"),
    ("responses", "MAX(scored_at)"), ("score_overrides", "COUNT(*)"), ("score_overrides", "MAX(id)")))


def data_version(db: sqlite_utils.Database) -> tuple:
    """A cheap fingerprint of the stored results, human responses and score overrides, for cache keys:
    their counts, latest ids and latest times, read from indexes alone."""
    return tuple(db.execute(_VERSION_SQL).fetchone())


def has_results(version: tuple) -> bool:
    """Whether a :func:`data_version` fingerprint counts any stored result or human response."""
    return bool(version[0]) or bool(version[3])


def load_results(db: sqlite_utils.Database, include_humans: bool = True) -> pd.DataFrame:
    """Every stored model result (without the texts) plus, when asked, the human baseline.

    Columns :data:`LOAD_COLUMNS` (the sample's format in ``format``). Human rows come from
    :func:`structext_core.studio.study.human_results` for every study with responses, read live;
    ``human-study:`` is their source label, so stored rows under that label are left out.
    ``row_id`` is the ``results`` id (None for human rows, which carry their ``response``
    instead).
    """
    cursor = db.conn.execute(
        "SELECT id AS row_id, source, upload_id, sample_id, model, prompt, suite, language AS format, task,"
        " task_id, depth, width, rouge_l, score, exact_match, bleu, rouge_l_paper FROM results"
        f" WHERE source IS NULL OR source NOT LIKE '{HUMAN_SOURCE_PREFIX}%'"
    )
    frame = pd.DataFrame.from_records(cursor.fetchall(), columns=LOAD_COLUMNS)
    if include_humans:
        human = human_frame(db)
        if len(human):
            frame = pd.concat([frame, human], ignore_index=True) if len(frame) else human
    return _typed(frame)


def human_frame(db: sqlite_utils.Database) -> pd.DataFrame:
    """The human baseline of every study whose answers are model results (its kind's ``model_results``),
    in the model-result schema (with ``response``).

    ``rouge_l_paper`` is the paper's ROUGE-L of each response against its item's answer
    (0 for a question given up), computed here: the study stores the strict one only. A lead's
    override in force takes the place of both ROUGE-L versions (see ``human_results``)."""
    parts = []
    for item in study.list_studies(db):
        if not study.kind_of(item.benchmark).model_results:
            continue  # its answers are not results of this schema: its benchmark's own view reads them
        rows = study.human_results(db, item.id, pool=False)
        if rows:
            part = pd.DataFrame(rows).rename(columns={"language": "format"})
            part["source"] = f"{HUMAN_SOURCE_PREFIX}{item.name}"
            part["row_id"] = None
            part["upload_id"] = None
            part["bleu"] = np.nan
            part["rouge_l_paper"] = _paper_rouge_of_people(db, item.id, part)
            override = pd.to_numeric(part["score_override"], errors="coerce")
            part["rouge_l_paper"] = override.where(override.notna(), part["rouge_l_paper"])
            parts.append(part[[*LOAD_COLUMNS, "response"]])
    if not parts:
        return pd.DataFrame(columns=[*LOAD_COLUMNS, "response"])
    return pd.concat(parts, ignore_index=True)


def _paper_rouge_of_people(db: sqlite_utils.Database, study_id: int, part: pd.DataFrame) -> list[float]:
    answers = dict(db.execute(
        "SELECT sample_id, json_extract(sample_json, '$.answer') FROM study_items WHERE study_id = ?", [study_id]))
    # people who gave the same response to an item: each (item, response) is scored once
    pairs = sorted({(str(s), str(r)) for s, r in zip(part["sample_id"], part["response"])})
    scored = scoring.score_many([(str(answers.get(s) or ""), r) for s, r in pairs], with_bleu=False)
    paper = {pair: values["rouge_l_paper"] for pair, values in zip(pairs, scored)}
    gave_up = part["gave_up"] if "gave_up" in part.columns else [False] * len(part)
    return [0.0 if quit_ else paper[(str(s), str(r))]
            for s, r, quit_ in zip(part["sample_id"], part["response"], gave_up)]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    for column in ("rouge_l", "score", "exact_match", "bleu", "rouge_l_paper"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    for column in ("depth", "width", "task_id"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    for column in ("model", "prompt", "suite", "format", "task", "sample_id", "source"):
        frame[column] = frame[column].astype("string").fillna("")
    return frame


def source_count(frame: pd.DataFrame) -> int:
    """How many rows :func:`describe_sources` has, without making them (the page's note counts the
    sources on every run; the table is made when its box is opened)."""
    return int(frame["source"].nunique()) if len(frame) else 0


def sources_said(frame: pd.DataFrame) -> str:
    """Where the rows of ``frame`` come from, in the page's words: "3,000 scored results from 2 imported files
    (kept in the database) and 1 human-baseline study (models `human:<annotator>` and the pool `human`)", each
    kind named only when some row comes from it."""
    sources = [str(s) for s in frame["source"].dropna().unique()] if len(frame) else []
    studies = sum(s.startswith(HUMAN_SOURCE_PREFIX) for s in sources)
    kinds = [f"{plural(len(sources) - studies, 'imported file')} (kept in the database)"] if len(sources) > studies else []
    if studies:
        kinds.append(f"{plural(studies, 'human-baseline study')} (models `human:<annotator>` and the pool `human`)")
    return f"{plural(len(frame), 'scored result')} from {series(kinds)}." if kinds else "No scored result yet."


def describe_sources(frame: pd.DataFrame) -> pd.DataFrame:
    """Per source (file or study): rows, models, prompts and suites, for the page's data note."""
    if frame.empty:
        return pd.DataFrame(columns=["source", "rows", "models", "prompts", "suites"])
    rows = frame.groupby("source", sort=True, observed=True).size().rename("rows")
    parts = [rows]
    for column, title in (("model", "models"), ("prompt", "prompts"), ("suite", "suites")):
        # distinct pairs first: joining 100,000 strings per source would be slow
        pairs = frame[["source", column]].drop_duplicates().sort_values(["source", column])
        parts.append(pairs.groupby("source", sort=True)[column].agg(", ".join).rename(title))
    return pd.concat(parts, axis=1).reset_index()


def uploads_table(uploads: Sequence) -> pd.DataFrame:
    """Stored uploads (:class:`~structext_core.structext_eval.results_store.StoredUpload`) as the page's
    table: which file, how many rows, how many of them carry the paper's ROUGE-L, which metric the
    file was scored with before it came here (empty for a file of responses only), when."""
    return pd.DataFrame(
        [{"id": u.id, "filename": u.filename, "source": u.source, "model": u.model, "rows_stored": u.rows_stored,
          "with_paper_metric": u.with_paper_metric, "scored_with": u.scored_with or "", "uploaded": u.uploaded}
         for u in uploads],
        columns=["id", "filename", "source", "model", "rows_stored", "with_paper_metric", "scored_with", "uploaded"],
    )


def scored_otherwise(uploads: Sequence, choice: ValueChoice) -> str | None:
    """A note for the page when files were scored with another ROUGE-L than the one the view
    shows: which files, with which metric, and which the view uses (every stored row has both,
    so the view's figures are the view's metric). None when nothing differs or the view shows
    no ROUGE-L."""
    if choice.metric != "rouge_l":
        return None
    other = [u for u in uploads if u.scored_with and u.scored_with != choice.rouge]
    if not other:
        return None
    names = ", ".join(f"{u.filename} ({u.scored_with})" for u in other[:5])
    more = f" and {len(other) - 5} more" if len(other) > 5 else ""
    return (f"Scored with another metric before import: {names}{more}. This view shows the "
            f"{ROUGE_DESCRIPTIONS[choice.rouge]}; every stored row carries both ROUGE-Ls, so its "
            f"figures for those files are {choice.rouge}, not the file's own `score`.")
