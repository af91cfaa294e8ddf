"""Logs of Inspect AI and lm-evaluation-harness, read as result rows in our schema.

Recognised by their content, never by the file name (:func:`detect_format`):

* **Inspect AI** ``.eval`` logs: a zip archive (``header.json`` or ``_journal/start.json`` for
  the run, ``samples/<id>_epoch_<n>.json`` per sample and epoch; members compressed with
  deflate or, since inspect-ai 0.3.1xx, zstandard). Members are read one at a time.
* **Inspect AI** ``.json`` logs: one object ``{version, status, eval, ..., samples: [...]}``,
  read as a stream: each sample is decoded on its own, so a log of several hundred MB never
  sits in memory as one parsed tree.
* **lm-evaluation-harness** ``samples_<task>_<date>.jsonl`` (``--log_samples``), one
  ``{doc_id, doc, arguments, resps, filtered_resps, ...}`` a line; the model name and the
  settings come from the ``results_<date>.json`` beside it. A ``results_*.json`` given
  instead reads the sample files of the same run.

Each response becomes one row ``{sample_id, model, prompt, response, epoch, harness,
harness_id, harness_scores, failed}``: ``prompt`` is the prompt setting (the ``--prompt``
label when given, else the setting the exported task recorded, else the harness task name);
``epoch`` counts Inspect epochs and lm-eval repeats from 1; ``harness_scores`` holds the
numeric per-sample scores the harness computed. A sample is found by its id when the harness
kept ours, otherwise from the prompt text (the last ``### Question:`` block and the reference
after it, as our prompts and the original's are built). :func:`average_epochs` turns the
scored rows of several epochs into one row per sample.

The formats are read by :mod:`structext_core.evaluation.inspect_ai_logs` and
:mod:`structext_core.evaluation.lm_eval_logs` (sharing :mod:`structext_core.evaluation.harness_entries`);
this module recognises them, matches their entries to samples and is what callers use.

Every file is treated as hostile: zip archives are checked (member count, declared total
size, compression ratio, per-member size) before any member is read; a member or line is
read up to a bound; JSON nested too deeply, wrong types and missing fields are problems
naming the file and the member, line or sample. Any problem means nothing is imported
(:class:`structext_core.evaluation.matching.ResultsImportError`). Neither harness is imported here.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO

from structext_core.evaluation.harness_entries import _Entry, _Stop, _where
from structext_core.evaluation.inspect_ai_logs import _ZIP_MAGIC, _inspect_eval_entries, _inspect_json_entries
from structext_core.evaluation.lm_eval_logs import (
    _LM_EVAL_SAMPLES_NAME,
    _lm_eval_entries,
    _lm_eval_results_beside,
    _lm_eval_run,
)
from structext_core.evaluation.matching import Problem, ResultsImportError, SampleIndex

FORMAT_INSPECT_EVAL = "inspect-eval"
FORMAT_INSPECT_JSON = "inspect-json"
FORMAT_LM_EVAL = "lm-eval-samples"
FORMAT_LM_EVAL_RESULTS = "lm-eval-results"
FORMATS = (FORMAT_INSPECT_EVAL, FORMAT_INSPECT_JSON, FORMAT_LM_EVAL, FORMAT_LM_EVAL_RESULTS)
#: Problems collected before reading stops.
MAX_PROBLEMS = 200
_HEAD_BYTES = 65536
_INSPECT_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_LM_EVAL_SAMPLE_HEAD = re.compile(rb'^\s*\{\s*"doc_id"\s*:')
_LM_EVAL_RESULTS_HEAD = re.compile(rb'^\s*\{\s*"results"\s*:\s*\{')
_LM_EVAL_RESULTS_NAME = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")


def detect_format(head: bytes) -> str | None:
    """The harness format of a file from its first bytes, or None (ours, the original's, or unknown)."""
    head = head.removeprefix(b"\xef\xbb\xbf")
    if head.startswith(_ZIP_MAGIC):
        return FORMAT_INSPECT_EVAL
    if _INSPECT_JSON_HEAD.match(head):
        return FORMAT_INSPECT_JSON
    if _LM_EVAL_SAMPLE_HEAD.match(head):
        return FORMAT_LM_EVAL
    if _LM_EVAL_RESULTS_HEAD.match(head):
        return FORMAT_LM_EVAL_RESULTS
    return None


def detect_path(path: str | os.PathLike) -> str | None:
    """:func:`detect_format` of a file on disk (None when it cannot be opened)."""
    try:
        with open(path, "rb") as handle:
            return detect_format(handle.read(_HEAD_BYTES))
    except OSError:
        return None


class _PromptMatcher:
    """Samples found from a prompt's text: the last ``### Question:`` block and the reference after it."""

    _QUESTION = "### Question:"
    _REFERENCE = "### Reference:"

    def __init__(self, index: SampleIndex):
        self.by_question: dict[str, list[Mapping]] = {}
        for sample in index.by_id.values():
            self.by_question.setdefault(str(sample.get("question", "")).strip(), []).append(sample)

    def find(self, text: str, doc: Mapping | None) -> list[Mapping]:
        """Samples whose question and reference the prompt (or the harness's record) holds."""
        if doc and isinstance(doc.get("question"), str) and isinstance(doc.get("reference"), str):
            found = [s for s in self.by_question.get(doc["question"].strip(), [])
                     if str(s.get("reference", "")).strip() == doc["reference"].strip()]
            if found:
                return found
        start = text.rfind(self._QUESTION)
        end = text.find(self._REFERENCE, start) if start >= 0 else -1
        if end < 0:
            return []
        question = text[start + len(self._QUESTION):end].strip()
        body = text[end + len(self._REFERENCE):]
        return [s for s in self.by_question.get(question, []) if str(s.get("reference", "")).strip() in body]


def _label(entry: _Entry, prompt: str | None) -> str:
    return prompt or entry.setting or entry.task


def _match(entries: Iterable[_Entry], index: SampleIndex, prompt: str | None, problems: list[Problem]) -> list[dict]:
    matcher = None
    rows = []
    seen: dict[tuple, str] = {}
    used: dict[tuple, set] = {}
    for entry in entries:
        key_id = str(entry.harness_id)
        if key_id in index.by_id:
            sample_id = key_id
        else:
            matcher = matcher or _PromptMatcher(index)
            taken = used.setdefault((entry.model, _label(entry, prompt), entry.epoch), set())
            candidates = [s for s in matcher.find(entry.prompt_text, entry.doc) if s["id"] not in taken]
            if not candidates:
                problems.append(_where(entry.where, f"no sample matches harness sample {repr(entry.harness_id)[:80]}: "
                                                    "its id is not in the samples file and its prompt holds "
                                                    "no sample's question and reference; is it the samples "
                                                    "file the run was made on?"))
                if len(problems) >= MAX_PROBLEMS:
                    break
                continue
            sample_id = str(candidates[0]["id"])
            taken.add(sample_id)
        label = _label(entry, prompt)
        key = (sample_id, entry.model, label, entry.epoch)
        if key in seen:
            problems.append(_where(entry.where, f"second response for sample {sample_id!r}, model {entry.model!r}, "
                                                f"prompt {label!r}, epoch {entry.epoch} (first at {seen[key]})"))
            continue
        seen[key] = entry.where
        rows.append({
            "sample_id": sample_id, "model": entry.model, "prompt": label, "response": entry.response,
            "epoch": entry.epoch, "failed": entry.failed, "harness": entry.harness,
            "harness_id": entry.harness_id, "harness_scores": entry.scores,
        })
    return rows


def _entries_from_text_handle(file_format: str, handle: IO[str], path: Path | None) -> Iterator[_Entry]:
    if file_format == FORMAT_INSPECT_JSON:
        return _inspect_json_entries(handle)
    name = path.name if path else ""
    match = _LM_EVAL_SAMPLES_NAME.match(name)
    task = match.group("task") if match else (Path(name).stem or "lm-eval-task")
    results = _lm_eval_results_beside(path) if path else None
    return _lm_eval_entries(handle, task, _lm_eval_run(results, path.parent.name if path else ""))


def _collect(entries: Iterable[_Entry], index: SampleIndex, source: str, prompt: str | None) -> list[dict]:
    problems: list[Problem] = []
    try:
        rows = _match(entries, index, prompt, problems)
    except _Stop as stop:
        problems.append(stop.problem)
        rows = []
    except UnicodeDecodeError as exc:
        problems.append(Problem(0, f"not UTF-8 text ({exc.reason})"))
        rows = []
    if not problems and not rows:
        problems.append(Problem(0, "no responses in the log"))
    if problems:
        raise ResultsImportError(source, sorted(problems, key=lambda p: p.line))
    return rows


def _lm_eval_results_runs(path: Path) -> list[Path]:
    match = _LM_EVAL_RESULTS_NAME.match(path.name)
    stamp = match.group("stamp") if match else None
    return sorted(p for p in path.parent.glob("samples_*.jsonl")
                  if stamp is None or p.name.endswith(f"_{stamp}.jsonl"))


def read_log(path: str | os.PathLike, samples: SampleIndex | Iterable[Mapping],
             prompt: str | None = None) -> tuple[str, list[dict]]:
    """Read a harness log from disk, streaming: (format, result rows in our schema).

    ``prompt`` labels every row's prompt setting. Raises :class:`ResultsImportError` naming the
    file and the member, line or sample at fault; nothing is returned then.
    """
    path = Path(path)
    source = str(path)
    index = SampleIndex.of(samples)
    file_format = detect_path(path)
    if file_format is None:
        raise ResultsImportError(source, [Problem(0, "not an Inspect AI log or an lm-evaluation-harness file")])
    try:
        if file_format == FORMAT_INSPECT_EVAL:
            with open(path, "rb") as handle:
                return file_format, _collect(_inspect_eval_entries(handle, path.stat().st_size), index, source, prompt)
        if file_format == FORMAT_LM_EVAL_RESULTS:
            rows = []
            runs = _lm_eval_results_runs(path)
            if not runs:
                raise ResultsImportError(source, [Problem(0, (
                    "an lm-evaluation-harness results file holds no per-sample responses and no "
                    "samples_*.jsonl of the same run lies beside it; run lm_eval with --log_samples "
                    "and score the samples file"))])
            for run in runs:
                rows += read_log(run, index, prompt)[1]
            return file_format, rows
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return file_format, _collect(_entries_from_text_handle(file_format, handle, path), index, source, prompt)
    except OSError as exc:
        raise ResultsImportError(source, [Problem(0, f"cannot read ({exc.strerror or exc})")]) from None


def _as_rows(entries, source: str) -> list[dict]:
    """A harness log's entries as :func:`inspect_log_entries` gives them; a refusal when there are none."""
    out = [{"where": entry.where, "id": entry.harness_id, "epoch": entry.epoch, "model": entry.model,
            "response": entry.response, "failed": entry.failed, "metadata": dict(entry.doc or {}),
            "scores": dict(entry.scores)} for entry in entries]
    if not out:
        raise ResultsImportError(source, [Problem(0, "no responses in the log")])
    return out


def lm_eval_log_entries(path: str | os.PathLike) -> list[dict]:
    """Every response of an lm-eval samples file (``samples_<task>_<time>.jsonl``, written with
    ``--log_samples``) as it came, as :func:`inspect_log_entries` gives an Inspect log's: ``{where,
    id, epoch, model, response, failed, metadata, scores}`` (``id``: the document's ``id`` or
    ``sample_id``, else its ``doc_id``). The same checks and bounds as :func:`read_log`."""
    path = Path(path)
    source = str(path)
    if detect_path(path) != FORMAT_LM_EVAL:
        raise ResultsImportError(source, [Problem(0, "not an lm-eval samples file (a JSON line with doc_id)")])
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            entries = [*_entries_from_text_handle(FORMAT_LM_EVAL, handle, path)]
    except _Stop as stop:
        raise ResultsImportError(source, [stop.problem]) from None
    except UnicodeDecodeError as exc:
        raise ResultsImportError(source, [Problem(0, f"not UTF-8 text ({exc.reason})")]) from None
    except OSError as exc:
        raise ResultsImportError(source, [Problem(0, f"cannot read ({exc.strerror or exc})")]) from None
    return _as_rows(entries, source)


def inspect_log_entries(path: str | os.PathLike) -> list[dict]:
    """Every response of an Inspect AI log (``.eval`` or ``.json``) as it came, not matched to any
    StrucText sample: ``{where, id, epoch, model, response, failed, metadata, scores}``. The same
    checks and bounds as :func:`read_log`; :class:`ResultsImportError` naming the file and the
    member or sample at fault (also for a file that is not an Inspect log)."""
    path = Path(path)
    source = str(path)
    file_format = detect_path(path)
    if file_format not in (FORMAT_INSPECT_EVAL, FORMAT_INSPECT_JSON):
        raise ResultsImportError(source, [Problem(0, "not an Inspect AI log (.eval or .json)")])
    try:
        if file_format == FORMAT_INSPECT_EVAL:
            with open(path, "rb") as handle:
                entries = [*_inspect_eval_entries(handle, path.stat().st_size)]
        else:
            with open(path, encoding="utf-8-sig", newline="") as handle:
                entries = [*_inspect_json_entries(handle)]
    except _Stop as stop:
        raise ResultsImportError(source, [stop.problem]) from None
    except UnicodeDecodeError as exc:
        raise ResultsImportError(source, [Problem(0, f"not UTF-8 text ({exc.reason})")]) from None
    except OSError as exc:
        raise ResultsImportError(source, [Problem(0, f"cannot read ({exc.strerror or exc})")]) from None
    return _as_rows(entries, source)


def parse_bytes(data: bytes, filename: str, samples: SampleIndex | Iterable[Mapping],
                prompt: str | None = None) -> tuple[str, list[dict]]:
    """Read a harness log held in memory (an upload): (format, result rows); see :func:`read_log`.

    An lm-eval samples file read this way has no results file beside it: its model is the
    one its records name, else ``lm-eval``.
    """
    index = SampleIndex.of(samples)
    file_format = detect_format(data[:_HEAD_BYTES])
    if file_format is None:
        raise ResultsImportError(filename, [Problem(0, "not an Inspect AI log or an lm-evaluation-harness file")])
    if file_format == FORMAT_LM_EVAL_RESULTS:
        raise ResultsImportError(filename, [Problem(0, (
            "an lm-evaluation-harness results file holds no per-sample responses: upload the "
            "samples_*.jsonl file of the run (written with --log_samples), or put both in the results folder"))])
    if file_format == FORMAT_INSPECT_EVAL:
        entries = _inspect_eval_entries(io.BytesIO(data), len(data))
    else:
        handle = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
        match = _LM_EVAL_SAMPLES_NAME.match(Path(filename).name)
        task = match.group("task") if match else "lm-eval-task"
        entries = (_inspect_json_entries(handle) if file_format == FORMAT_INSPECT_JSON
                   else _lm_eval_entries(handle, task, _lm_eval_run(None, "")))
    return file_format, _collect(entries, index, filename, prompt)


AVERAGED_FIELDS = ("rouge_l", "score", "score_strict", "exact_match", "bleu", "rouge_l_full", "score_full",
                   "rouge_l_paper", "score_paper", "has_marker")
"""Per-epoch fields averaged by :func:`average_epochs` (``has_marker`` becomes a fraction)."""


def average_epochs(scored: Iterable[Mapping]) -> list[dict]:
    """One row per (sample, model, prompt): scores averaged over its epochs.

    Rows without an ``epoch`` pass through unchanged. An averaged row keeps the first epoch's
    response and extracted answer, and says how many epochs it stands for in ``epochs``
    (``failed_epochs`` of them failed; ``failed`` only when all did); ``epoch`` is dropped. Row order follows each sample's first appearance.
    Rows marked ``authors_left_out`` (``score --as-authors``) are left out of the average unless
    every epoch is, and ``authors_left_out_epochs`` counts them.
    """
    groups: dict[tuple, list[Mapping]] = {}
    order: list[tuple | int] = []
    plain: list[Mapping] = []
    for row in scored:
        if "epoch" not in row:
            order.append(len(plain))
            plain.append(row)
            continue
        key = (row["sample_id"], row["model"], row["prompt"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(row)
    averaged = []
    for item in order:
        if isinstance(item, int):
            averaged.append(dict(plain[item]))
            continue
        rows = everything = sorted(groups[item], key=lambda r: r["epoch"])
        merged = {k: v for k, v in rows[0].items() if k != "epoch"}
        merged["epochs"] = len(rows)
        if "authors_left_out" in rows[0]:  # --as-authors: the epochs their script would score
            counted = [r for r in rows if not r.get("authors_left_out")]
            merged["authors_left_out"] = None if counted else rows[0]["authors_left_out"]
            merged["authors_left_out_epochs"] = len(rows) - len(counted)
            rows = counted or rows
        for name in AVERAGED_FIELDS:
            values = [float(r[name]) for r in rows if r.get(name) is not None]
            if values:
                merged[name] = sum(values) / len(values)
        if any("failed" in r for r in everything):
            merged["failed_epochs"] = sum(bool(r.get("failed")) for r in everything)
            merged["failed"] = merged["failed_epochs"] == len(everything)
        averaged.append(merged)
    return averaged
