"""Model results: import (two formats), validation, matching to samples, scoring.

Two input formats are read, one per file, recognised from the first non-blank line:

* **ours** (DESIGN.md): one JSON object a line with ``sample_id, model, prompt, response``
  (``prompt`` is the prompt setting, e.g. ``naive``) and anything else, which is kept.
* **original**: the evaluation output of the original StrucText-Eval repository, one
  ``{index, q, a, r, info: {type, task, depth, width, llm_engine, rule_hint, few_shot_num}}``
  a line. ``q`` is the whole prompt; the sample is found from the question and reference
  inside it. ``r == "<JUMP>"`` marks a failed call (the original scores it 0): it is kept
  as an empty response with ``failed: true`` unless a later line for the same ``index``
  and engine carries a real response. ``model`` is ``llm_engine``; ``prompt`` is derived
  (see :func:`original_prompt_label`) unless the caller names it.

Two lines for the same result (sample, model and prompt; for the original format, index,
engine and prompt) are a problem by default (``duplicates="refuse"``; in the original format a
real response still replaces a ``<JUMP>`` and an identical repeat is ignored). With
``duplicates="last"`` a later line replaces an earlier one, except that a ``<JUMP>`` never
replaces a response: the authors' ``get_evaluation_result.py`` skips a ``<JUMP>`` once the index
is registered.

``as_authors=True`` applies the whole of that script's rule (``score --metric paper --as-authors``):
every line is scored first, and a line whose scoring raises in their library
(:func:`structext_core.evaluation.paper_rouge.authors_failure`: an empty response, or a pair that
needs more recursion than Python allows) is skipped, as their ``except: continue`` does; then the
first line of an index registers it with 0, a ``<JUMP>`` keeps what is there and any other line
replaces it. An index whose every line raises is in none of their means: its row is kept (the
last such line) with ``authors_left_out`` set to the reason (``empty response``, ``recursion
limit``); every other row has ``authors_left_out`` None.

Validation collects every problem with its line number; a file with any problem imports
nothing (:class:`ResultsImportError` lists them all).

Scored rows carry the result's fields, the scores of :func:`structext_core.evaluation.scoring.score_response`
(``answer_extracted, has_marker, rouge_l, score, exact_match, bleu, rouge_l_full,
score_full``) and, joined from the sample, ``suite, language, task, task_id, depth, width``
(the format stays in ``language``, the Sample contract's name; aggregated views may call
it ``format``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from structext_core.evaluation.matching import Problem, ResultsImportError, SampleIndex
from structext_core.evaluation.paper_rouge import authors_failure
from structext_core.evaluation.scoring import DEFAULT_THRESHOLD, score_many, score_response  # noqa: F401 (results.score_response stays importable)
from structext_core.text import limits

SAMPLE_FIELDS = ("suite", "language", "task", "task_id", "depth", "width")
"""Sample fields copied into every scored row."""
COLUMN_ALIASES = {"format": "language"}
"""Other names of scored rows' columns that a summary may be grouped by (``score --by format``): a
scored row keeps the sample's format in ``language``, the sample schema's name."""

SCORE_FIELDS = (
    "answer_extracted", "has_marker", "rouge_l", "score", "exact_match", "bleu", "rouge_l_full", "score_full",
    "rouge_l_paper", "score_paper", "score_strict", "metric",
)
METRICS = ("strict", "paper")
"""Which thresholded ROUGE-L is ``score``: ``strict`` (rouge-score's tokens on the extracted
answer, ``score_strict``) or ``paper`` (the authors' pltrdy ``rouge`` on the whole response,
``score_paper``). Every scored row says which in ``metric``."""
DUPLICATES = ("refuse", "last")
"""What repeated lines for one result do: ``refuse`` (the default: a problem, except that an
original-format ``<JUMP>`` gives way to a real response and an identical repeat is ignored)
or ``last`` (a later line wins, but a ``<JUMP>`` never replaces a response, as in the authors'
script)."""
LEFT_OUT_FIELD = "authors_left_out"
"""With ``as_authors``: why the authors' script leaves a result out of every mean, or None."""
REQUIRED_FIELDS = ("sample_id", "model", "prompt", "response")
ORIGINAL_FIELDS = ("index", "q", "a", "r", "info")
ORIGINAL_INFO_FIELDS = ("type", "task", "depth", "width", "llm_engine", "rule_hint", "few_shot_num")
ORIGINAL_FAILED_RESPONSE = "<JUMP>"

FORMAT_OURS = "ours"
FORMAT_ORIGINAL = "original"

_MAX_PROBLEMS = 200


def find_original(samples: SampleIndex, question_text: str, reference: str, answer: str) -> list[Mapping]:
    """Samples with this reference whose question appears in ``question_text``.

    The released files fold the requirement into the question, so the sample's
    question must be contained in (not equal to) the prompt's question part. When
    several samples qualify, those with the same answer come first.
    """
    candidates = [
        s for s in samples.by_reference.get(reference.strip(), [])
        if str(s.get("question", "")).strip() and str(s["question"]).strip() in question_text
    ]
    return sorted(candidates, key=lambda s: str(s.get("answer", "")).strip() != answer.strip())


def split_original_prompt(prompt: str) -> tuple[str, str] | None:
    """(question, reference) of the evaluated sample inside an original-format prompt ``q``.

    The original builds ``... ### Question:\\n{question}\\n\\n### Reference:\\n{reference}\\n\\n### Answer:\\n``
    with any demonstrations before it, so the last question block is the sample's.
    """
    question_mark, reference_mark, answer_mark = "### Question:\n", "\n\n### Reference:\n", "\n\n### Answer:"
    end = prompt.rfind(answer_mark)
    question_at = prompt.rfind(question_mark, 0, end if end >= 0 else None)
    if end < 0 or question_at < 0:
        return None
    body = prompt[question_at + len(question_mark):end]
    reference_at = body.find(reference_mark)
    if reference_at < 0:
        return None
    return body[:reference_at].strip(), body[reference_at + len(reference_mark):]


def original_prompt_label(info: Mapping, file_name: str = "") -> str:
    """Our prompt-setting name for an original result line.

    The original names chain-of-thought runs by file suffix (``*.cot.jsonl``, ``*.ps.jsonl``)
    and marks hints and demonstrations in ``info``. Gives ``naive``, ``self-cot``,
    ``ps-cot``, ``hint``, ``few-shot`` or a ``+``-joined combination (``self-cot+hint``).
    """
    parts = Path(file_name).name.split(".")
    style = parts[-2] if len(parts) >= 2 else ""
    labels = {"cot": ["self-cot"], "ps": ["ps-cot"]}.get(style, [])
    if info.get("rule_hint"):
        labels.append("hint")
    if int(info.get("few_shot_num") or 0) > 0:
        labels.append("few-shot")
    return "+".join(labels) or "naive"


# ------------------------------------------------------------------ parsing

@dataclass
class _Parsed:
    rows: list[dict] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def problem(self, line: int, message: str) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(Problem(line, message))


def _is_text(value) -> bool:
    return isinstance(value, str)


def _detect_format(obj: Mapping) -> str | None:
    if "sample_id" in obj:
        return FORMAT_OURS
    if "q" in obj and "info" in obj:
        return FORMAT_ORIGINAL
    return None


def _check_ours(obj: Mapping) -> str | None:
    for key in REQUIRED_FIELDS:
        if key not in obj:
            return f"missing field {key!r}"
    for key in ("sample_id", "model", "prompt"):
        if not _is_text(obj[key]) or not obj[key].strip():
            return f"field {key!r} must be a non-empty string, got {obj[key]!r}"
    if not _is_text(obj["response"]):
        return f"field 'response' must be a string, got {type(obj['response']).__name__}"
    return None


def _check_original(obj: Mapping) -> str | None:
    for key in ORIGINAL_FIELDS:
        if key not in obj:
            return f"missing field {key!r} (original format)"
    if not isinstance(obj["index"], int) or isinstance(obj["index"], bool) or obj["index"] < 0:
        return f"field 'index' must be a non-negative integer, got {obj['index']!r}"
    for key in ("q", "a", "r"):
        if not _is_text(obj[key]):
            return f"field {key!r} must be a string, got {type(obj[key]).__name__}"
    info = obj["info"]
    if not isinstance(info, dict):
        return "field 'info' must be an object"
    for key in ORIGINAL_INFO_FIELDS:
        if key not in info:
            return f"missing field 'info.{key}'"
    if not _is_text(info["llm_engine"]) or not info["llm_engine"].strip():
        return "field 'info.llm_engine' must be a non-empty string"
    return None


def _parse_lines(lines: Iterable[str | None], parsed: _Parsed) -> str | None:
    """Decode and check every line (None: a line beyond MAX_RECORD_CHARS, not held in
    memory); returns the file's format. Each line is held to the limits of
    :mod:`structext_core.text.limits` before it is decoded."""
    file_format = None
    for number, line in enumerate(lines, start=1):
        if line is None or len(line) > limits.MAX_RECORD_CHARS:
            parsed.problem(number, f"the line is {limits.record_too_long()}")
            continue
        if not line.strip():
            continue
        try:
            obj = limits.loads_json(line, "the line")
        except json.JSONDecodeError as exc:
            parsed.problem(number, f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except ValueError as exc:  # a limit (nesting, lone surrogate) or a number of more than 4,300 digits
            parsed.problem(number, str(exc))
            continue
        if not isinstance(obj, dict):
            parsed.problem(number, f"expected a JSON object, got {type(obj).__name__}")
            continue
        line_format = _detect_format(obj)
        if line_format is None:
            parsed.problem(number, "neither a result line (sample_id, model, prompt, response) "
                                   "nor an original evaluation line (index, q, a, r, info)")
            continue
        if file_format is None:
            file_format = line_format
        elif line_format != file_format:
            parsed.problem(number, f"{line_format} format line in a file of {file_format} format lines")
            continue
        message = _check_ours(obj) if line_format == FORMAT_OURS else _check_original(obj)
        if message:
            parsed.problem(number, message)
            continue
        parsed.rows.append(obj)
        parsed.lines.append(number)
    return file_format


def _match_ours(parsed: _Parsed, samples: SampleIndex, duplicates: str = "refuse",
                as_authors: bool = False) -> list[dict]:
    seen: dict[tuple, int] = {}
    rows: dict[tuple, dict] = {}  # in the order of each result's first line
    raised: dict[tuple, dict] = {}  # as_authors: the last line of a result whose scoring raises
    for obj, number in zip(parsed.rows, parsed.lines):
        key = (obj["sample_id"], obj["model"], obj["prompt"])
        if obj["sample_id"] not in samples.by_id:
            parsed.problem(number, f"unknown sample_id {obj['sample_id']!r} (not in the samples file)")
        elif key in seen and duplicates != "last" and not as_authors:
            parsed.problem(number, f"second result for sample {key[0]!r}, model {key[1]!r}, "
                                   f"prompt {key[2]!r} (first on line {seen[key]})")
        elif as_authors and (reason := authors_failure(str(samples.by_id[obj["sample_id"]]["answer"]),
                                                       obj["response"])):
            seen.setdefault(key, number)
            raised[key] = {**obj, LEFT_OUT_FIELD: reason}
            rows.setdefault(key, None)  # type: ignore[arg-type]  # keeps the order of first lines
        else:
            seen.setdefault(key, number)
            rows[key] = {**obj, LEFT_OUT_FIELD: None} if as_authors else dict(obj)
    return [row if row is not None else raised[key] for key, row in rows.items()]


def _match_original(parsed: _Parsed, samples: SampleIndex, source: str, prompt: str | None,
                    duplicates: str = "refuse", as_authors: bool = False) -> list[dict]:
    # One result per (engine, index, setting): a real response supersedes a <JUMP>; with
    # duplicates="last" a later response supersedes an earlier one, and a <JUMP> never
    # supersedes a response (the authors' script skips it once the index is registered).
    chosen: dict[tuple, tuple[dict, int]] = {}
    raised: dict[tuple, tuple[dict, int, str]] = {}  # as_authors: lines whose scoring raises
    for obj, number in zip(parsed.rows, parsed.lines):
        label = prompt or original_prompt_label(obj["info"], source)
        key = (obj["info"]["llm_engine"], obj["index"], label)
        failed = obj["r"] == ORIGINAL_FAILED_RESPONSE
        if as_authors:
            # their loop scores the line's own answer `a` first, and skips the line if that raises
            reason = authors_failure(obj["a"], obj["r"])
            if reason:
                raised[key] = (obj, number, reason)
                continue
        if key in chosen and (duplicates != "last" and not as_authors):
            previous, previous_line = chosen[key]
            previous_failed = previous["r"] == ORIGINAL_FAILED_RESPONSE
            if failed or previous["r"] == obj["r"]:
                continue
            if not previous_failed:
                parsed.problem(number, f"second response for index {obj['index']} of {key[0]!r} "
                                       f"(first on line {previous_line})")
                continue
        elif key in chosen and failed:
            continue  # a <JUMP> keeps what is there
        chosen[key] = (obj, number)
    left_out: dict[tuple, str] = {}
    for key, (obj, number, reason) in raised.items():
        if key not in chosen:  # every line of the index raised: in none of the authors' means
            chosen[key] = (obj, number)
            left_out[key] = reason

    used: dict[tuple, set] = {}
    rows = []
    for (engine, index, label), (obj, number) in sorted(chosen.items(), key=lambda item: item[1][1]):
        split = split_original_prompt(obj["q"])
        if split is None:
            parsed.problem(number, "field 'q' holds no '### Question:' ... '### Reference:' ... "
                                   "'### Answer:' blocks")
            continue
        question, reference = split
        taken = used.setdefault((engine, label), set())
        candidates = [s for s in find_original(samples, question, reference, obj["a"]) if s["id"] not in taken]
        if not candidates:
            parsed.problem(number, f"no sample matches index {index} (question {question[:60]!r}); "
                                   "is it the samples file the run was made on?")
            continue
        sample = candidates[0]
        taken.add(sample["id"])
        failed = obj["r"] == ORIGINAL_FAILED_RESPONSE
        row = {
            "sample_id": sample["id"],
            "model": engine,
            "prompt": label,
            "response": "" if failed else obj["r"],
            "failed": failed,
            "original_index": index,
            "original_answer": obj["a"],
            "shots": int(obj["info"].get("few_shot_num") or 0),
        }
        if as_authors:
            row[LEFT_OUT_FIELD] = left_out.get((engine, index, label))
        rows.append(row)
    return rows


def parse_results(
    lines: Iterable[str],
    samples: SampleIndex | Iterable[Mapping],
    source: str = "<results>",
    prompt: str | None = None,
    duplicates: str = "refuse",
    as_authors: bool = False,
) -> tuple[str, list[dict]]:
    """Validate result lines and match them to samples: (format, result rows in our schema).

    ``prompt`` overrides the prompt-setting label of original-format lines; ``duplicates``
    (one of :data:`DUPLICATES`) says what repeated lines for one result do; ``as_authors``
    applies the authors' script's rules instead (see the module docstring). Raises
    :class:`ResultsImportError` naming every faulty line; nothing is returned then.
    """
    if duplicates not in DUPLICATES:
        raise ValueError(f"unknown duplicates rule {duplicates!r}: choose one of {', '.join(DUPLICATES)}")
    index = SampleIndex.of(samples)
    parsed = _Parsed()
    file_format = _parse_lines(lines, parsed)
    if file_format is None and not parsed.problems:
        raise ResultsImportError(source, [Problem(0, "no results in the file")])
    # Match the well-formed lines even when others are broken, so every problem is reported at once.
    if file_format == FORMAT_OURS:
        rows = _match_ours(parsed, index, duplicates, as_authors)
    elif file_format == FORMAT_ORIGINAL:
        rows = _match_original(parsed, index, source, prompt, duplicates, as_authors)
    else:
        rows = []
    if parsed.problems:
        raise ResultsImportError(source, sorted(parsed.problems, key=lambda p: p.line))
    return file_format, rows


def read_results(
    path: str | os.PathLike,
    samples: SampleIndex | Iterable[Mapping],
    prompt: str | None = None,
    duplicates: str = "refuse",
    as_authors: bool = False,
) -> list[dict]:
    """Read, validate and match a results file (either format); see :func:`parse_results`.

    Inspect AI logs and lm-evaluation-harness files, recognised by their content, are read
    by :func:`structext_core.evaluation.harness.read_log` (rows then carry ``epoch``; their
    repeats are epochs, so ``duplicates`` does not apply)."""
    from structext_core.evaluation import harness  # imported here: harness builds on this module

    path = Path(path)
    if harness.detect_path(path) is not None:
        rows = harness.read_log(path, samples, prompt=prompt)[1]
        if as_authors:  # no repeated lines but epochs: each response is scored, or raises, alone
            index = SampleIndex.of(samples)
            for row in rows:
                # a harness error stands for the authors' failed call, their <JUMP>
                response = ORIGINAL_FAILED_RESPONSE if row.get("failed") else row["response"]
                row[LEFT_OUT_FIELD] = authors_failure(str(index.by_id[row["sample_id"]]["answer"]), response)
        return rows
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ResultsImportError(str(path), [Problem(0, f"cannot open ({exc.strerror or exc})")]) from None
    try:
        with handle:
            lines = (line for _, line in limits.read_record_lines(handle))
            return parse_results(lines, samples, source=str(path), prompt=prompt, duplicates=duplicates,
                                 as_authors=as_authors)[1]
    except UnicodeDecodeError as exc:
        raise ResultsImportError(str(path), [Problem(0, f"not UTF-8 text ({exc.reason})")]) from None


# ------------------------------------------------------------------ scoring

def score_results(
    rows: Iterable[Mapping],
    samples: SampleIndex | Iterable[Mapping],
    threshold: float = DEFAULT_THRESHOLD,
    with_bleu: bool = True,
    progress: Callable[[int, int], None] | None = None,
    metric: str = "strict",
) -> list[dict]:
    """Score result rows against their samples' answers; see the module docstring for the fields.

    Every row's ``sample_id`` must be in ``samples`` (``read_results`` guarantees it);
    ``progress(done, total)`` is called as rows are scored (every 2,000 rows and at the end). ``metric`` (one of :data:`METRICS`)
    says which thresholded ROUGE-L becomes ``score``; both stay in the row as
    ``score_strict`` and ``score_paper``.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
    index = SampleIndex.of(samples)
    rows = list(rows)
    found = [index.by_id[row["sample_id"]] for row in rows]
    # scored grouped by answer, each answer prepared once (scoring.score_many)
    scores = score_many([(str(sample["answer"]), row["response"]) for sample, row in zip(found, rows)],
                        threshold, with_bleu, progress=progress)
    scored = []
    for row, sample, values in zip(rows, found, scores):
        result = dict(row)
        result.update(values)
        result["score_strict"] = result["score"]
        if metric == "paper":
            result["score"] = result["score_paper"]
        result["metric"] = metric
        result["threshold"] = threshold
        for key in SAMPLE_FIELDS:
            result[key] = sample.get(key)
        scored.append(result)
    return scored


def scored_frame(scored: Iterable[Mapping]) -> pd.DataFrame:
    """Scored rows as a DataFrame, ready for :func:`structext_core.evaluation.aggregate.aggregate`."""
    return pd.DataFrame(list(scored))
