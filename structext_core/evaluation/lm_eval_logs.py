"""lm-evaluation-harness logs read as harness entries (:mod:`structext_core.evaluation.harness` is the
public reader): ``samples_<task>_<date>.jsonl`` (``--log_samples``), one ``{doc_id, doc, arguments,
resps, filtered_resps, ...}`` a line, each line read up to a bound; the model name and the settings
come from the ``results_<date>.json`` beside it. lm-eval itself is not imported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from structext_core.evaluation import harness_entries
from structext_core.evaluation.harness_entries import (
    _Entry,
    _loads,
    _message_text,
    _numeric_scores,
    _object,
    _Stop,
    _text_or_none,
)
from structext_core.evaluation.matching import Problem
from structext_core.text import limits

_LM_EVAL_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


def _model_args(value) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        pairs = (part.split("=", 1) for part in value.split(",") if "=" in part)
        return {k.strip(): v.strip() for k, v in pairs}
    return {}


@dataclass(frozen=True)
class _LmEvalRun:
    model: str
    settings: dict  # task name -> setting recorded in the task's metadata


def _lm_eval_run(results: Mapping | None, folder_name: str) -> _LmEvalRun:
    results = results or {}
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    args = _model_args(config.get("model_args"))
    model = (_text_or_none(args.get("pretrained")) or _text_or_none(args.get("model"))
             or _text_or_none(config.get("model")) or folder_name or "lm-eval")
    settings = {}
    configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    for name, task_config in configs.items():
        metadata = task_config.get("metadata") if isinstance(task_config, dict) else None
        if isinstance(metadata, dict) and _text_or_none(metadata.get("setting")):
            settings[name] = metadata["setting"]
    return _LmEvalRun(model=model, settings=settings)


def _read_small_json(path: Path, what: str):
    try:
        with open(path, "rb") as handle:
            data = handle.read(harness_entries.MAX_ENTRY_BYTES + 1)
    except OSError as exc:
        raise _Stop(Problem(0, f"cannot open {what} {path} ({exc.strerror or exc})")) from None
    if len(data) > harness_entries.MAX_ENTRY_BYTES:
        raise _Stop(Problem(0, f"{what} {path} is larger than {harness_entries.MAX_ENTRY_BYTES:,} bytes"))
    try:
        return _loads(data.decode("utf-8-sig"), f"{what} {path.name}")
    except UnicodeDecodeError:
        raise _Stop(Problem(0, f"{what} {path.name} is not UTF-8 text")) from None


def _lm_eval_results_beside(path: Path) -> dict | None:
    """The ``results_<date>.json`` of the run that wrote the samples file ``path``, if beside it."""
    match = _LM_EVAL_SAMPLES_NAME.match(path.name)
    same_run = path.with_name(f"results_{match.group('stamp')}.json") if match else None
    if same_run is None or not same_run.is_file():
        others = sorted(path.parent.glob("results_*.json"))
        same_run = others[0] if len(others) == 1 else None  # several runs: none is known to be this one
    if same_run is None:
        return None
    value = _read_small_json(same_run, "results file")
    return value if isinstance(value, dict) else None


def _lm_eval_prompt(arguments) -> str:
    if not isinstance(arguments, dict) or not arguments:
        return ""
    first = arguments.get("gen_args_0", next(iter(arguments.values())))
    text = first.get("arg_0") if isinstance(first, dict) else None
    if not isinstance(text, str):
        return ""
    if text.startswith("[{"):  # a chat-templated context, kept as a JSON list of messages
        try:
            messages = json.loads(text)
            return "\n\n".join(_message_text(m.get("content")) for m in messages if isinstance(m, dict))
        except (json.JSONDecodeError, RecursionError, AttributeError):
            return text
    return text


def _lm_eval_entries(handle: IO[str], task: str, run: _LmEvalRun) -> Iterator[_Entry]:
    seen: set[int] = set()
    for number, line in limits.read_record_lines(handle, harness_entries.MAX_ENTRY_BYTES):
        location = f"line {number}"
        if line is None:
            raise _Stop(Problem(number, f"longer than {harness_entries.MAX_ENTRY_BYTES:,} characters "
                                        "(STRUCTEXT_LIMIT_MAX_HARNESS_ENTRY_BYTES raises it)"))
        if not line.strip():
            continue
        try:
            record = _object(_loads(line, location), location, "a line")
        except _Stop as stop:
            raise _Stop(Problem(number, stop.problem.message.removeprefix(f"{location}: "))) from None
        problem = _lm_eval_problem(record)
        if problem:
            raise _Stop(Problem(number, problem))
        if record["doc_id"] in seen:  # the same document again, under another filter
            continue
        seen.add(record["doc_id"])
        doc = record["doc"]
        harness_id = next((doc[k] for k in ("id", "sample_id") if isinstance(doc.get(k), (str, int))
                           and not isinstance(doc.get(k), bool)), record["doc_id"])
        scores = _numeric_scores({m: record.get(m) for m in record.get("metrics", []) if isinstance(m, str)})
        for epoch, response in enumerate(record["resps"][0], start=1):
            yield _Entry(
                where=location, harness_id=harness_id, epoch=epoch, model=run.model,
                setting=_text_or_none(doc.get("setting")) or run.settings.get(task), task=task,
                response=response, failed=False, prompt_text=_lm_eval_prompt(record.get("arguments")),
                harness="lm-eval", doc=doc,
                scores=scores if epoch == 1 else {},  # lm-eval scores the first repeat only
            )


def _lm_eval_problem(record: Mapping) -> str | None:
    if not isinstance(record.get("doc_id"), int) or isinstance(record.get("doc_id"), bool):
        return "field 'doc_id' must be an integer (lm-eval samples line)"
    if not isinstance(record.get("doc"), dict):
        return "field 'doc' must be an object"
    resps = record.get("resps")
    if not isinstance(resps, list) or not resps or not isinstance(resps[0], list) \
            or not all(isinstance(r, str) for r in resps[0]):
        return "field 'resps' must be a list holding a list of response strings (a generate_until task)"
    if not isinstance(record.get("metrics", []), list):
        return "field 'metrics' must be a list"
    return None
