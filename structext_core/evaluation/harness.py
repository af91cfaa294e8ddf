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

Every file is treated as hostile: zip archives are checked (member count, declared total
size, compression ratio, per-member size) before any member is read; a member or line is
read up to a bound; JSON nested too deeply, wrong types and missing fields are problems
naming the file and the member, line or sample. Any problem means nothing is imported
(:class:`structext_core.evaluation.results.ResultsImportError`). Neither harness is imported here.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from structext_core.evaluation.results import Problem, ResultsImportError, SampleIndex
from structext_core.settings import limit as _env_int
from structext_core.text import limits

FORMAT_INSPECT_EVAL = "inspect-eval"
FORMAT_INSPECT_JSON = "inspect-json"
FORMAT_LM_EVAL = "lm-eval-samples"
FORMAT_LM_EVAL_RESULTS = "lm-eval-results"
FORMATS = (FORMAT_INSPECT_EVAL, FORMAT_INSPECT_JSON, FORMAT_LM_EVAL, FORMAT_LM_EVAL_RESULTS)

#: Members an Inspect .eval archive may hold at most.
MAX_ZIP_MEMBERS = _env_int("MAX_HARNESS_ZIP_MEMBERS", 200_000)
#: Declared uncompressed size of all members together (bytes).
MAX_ZIP_TOTAL_BYTES = _env_int("MAX_HARNESS_ZIP_BYTES", 8 * 1024 ** 3)
#: Declared uncompressed size over compressed file size, at most.
MAX_ZIP_RATIO = _env_int("MAX_HARNESS_ZIP_RATIO", 1000)
#: One archive member, one JSON line, one sample of a .json log (bytes / characters).
MAX_ENTRY_BYTES = _env_int("MAX_HARNESS_ENTRY_BYTES", 256 * 1024 ** 2)
#: Problems collected before reading stops.
MAX_PROBLEMS = 200

_JSON_CHUNK = 1 << 20  # characters read at a time from a .json log
_ZIP_MAGIC = b"PK\x03\x04"
_ZIP_ZSTANDARD = 93
_HEAD_BYTES = 65536
_INSPECT_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_LM_EVAL_SAMPLE_HEAD = re.compile(rb'^\s*\{\s*"doc_id"\s*:')
_LM_EVAL_RESULTS_HEAD = re.compile(rb'^\s*\{\s*"results"\s*:\s*\{')
_LM_EVAL_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_LM_EVAL_RESULTS_NAME = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")
_ATTACHMENT = "attachment://"


class _Stop(Exception):
    """A problem after which the file cannot be read further."""

    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem


# ------------------------------------------------------------------ recognising

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


# ------------------------------------------------------------------ entries

@dataclass
class _Entry:
    """One harness response before it is matched to a sample."""

    where: str
    harness_id: object
    epoch: int
    model: str
    setting: str | None
    task: str
    response: str
    failed: bool
    prompt_text: str
    harness: str = "inspect"
    doc: Mapping | None = None
    scores: dict = field(default_factory=dict)


def _where(location: str, message: str) -> Problem:
    return Problem(0, f"{location}: {message}")


def _loads(text: str, location: str):
    """One JSON text of known extent, its nesting checked (no recursion) before it is decoded."""
    try:
        return limits.loads_json(text, location)
    except json.JSONDecodeError as exc:
        raise _Stop(_where(location, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})")) from None
    except limits.LimitError as exc:
        raise _Stop(_where(location, str(exc))) from None
    except RecursionError:
        raise _Stop(_where(location, "JSON nested too deeply")) from None


def _object(value, location: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise _Stop(_where(location, f"{what} must be a JSON object, got {type(value).__name__}"))
    return value


def _text_or_none(value) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _numeric_scores(values: Mapping, prefix: str = "") -> dict:
    """The values that are numbers (not booleans, not integers too large for a float)."""
    scores = {}
    for key, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                scores[f"{prefix}{key}"] = float(value)
            except OverflowError:
                continue
    return scores


# ------------------------------------------------------------------ Inspect

def _message_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return ""


def _resolve(text: str, attachments: Mapping) -> str:
    if text.startswith(_ATTACHMENT):
        value = attachments.get(text[len(_ATTACHMENT):])
        return value if isinstance(value, str) else ""
    return text


def _inspect_input(value, attachments: Mapping) -> str:
    if isinstance(value, str):
        return _resolve(value, attachments)
    if isinstance(value, list):
        texts = [_resolve(_message_text(m.get("content")), attachments) for m in value
                 if isinstance(m, dict) and m.get("role") == "user"]
        return "\n\n".join(texts)
    return ""


def _inspect_response(output, attachments: Mapping) -> str | None:
    if not isinstance(output, dict):
        return None
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return _resolve(completion, attachments)
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return _resolve(_message_text(message.get("content")), attachments)
    return completion if isinstance(completion, str) else None


@dataclass(frozen=True)
class _InspectRun:
    model: str
    task: str
    setting: str | None


def _inspect_run(header: Mapping, location: str) -> _InspectRun:
    spec = _object(header.get("eval"), location, "'eval'")
    model = _text_or_none(spec.get("model"))
    if model is None:
        raise _Stop(_where(location, "'eval.model' must be a non-empty string"))
    task = _text_or_none(spec.get("task")) or "inspect-task"
    setting = None
    for holder in (spec.get("task_args"), spec.get("metadata")):
        if isinstance(holder, dict) and _text_or_none(holder.get("setting")):
            setting = holder["setting"]
            break
    return _InspectRun(model=model, task=task, setting=setting)


def _inspect_entry(sample, run: _InspectRun, location: str) -> _Entry:
    sample = _object(sample, location, "a sample")
    harness_id = sample.get("id")
    if not isinstance(harness_id, (str, int)) or isinstance(harness_id, bool):
        raise _Stop(_where(location, f"sample 'id' must be a string or an integer, got {harness_id!r}"[:200]))
    epoch = sample.get("epoch", 1)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise _Stop(_where(location, f"sample 'epoch' must be a positive integer, got {epoch!r}"[:200]))
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    response = _inspect_response(sample.get("output"), attachments)
    failed = sample.get("error") is not None or response is None
    if response is None and sample.get("error") is None:
        raise _Stop(_where(location, "sample has no 'output' with a completion and no 'error'"))
    metadata = sample.get("metadata") if isinstance(sample.get("metadata"), dict) else {}
    scores = {}
    raw_scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    for name, score in raw_scores.items():
        value = score.get("value") if isinstance(score, dict) else None
        if isinstance(value, dict):
            scores.update(_numeric_scores(value, "" if len(raw_scores) == 1 else f"{name}."))
        else:
            scores.update(_numeric_scores({name: value}))
    return _Entry(
        where=location, harness_id=harness_id, epoch=epoch, model=run.model,
        setting=_text_or_none(metadata.get("setting")) or run.setting, task=run.task,
        response=response or "", failed=failed,
        prompt_text=_inspect_input(sample.get("input"), attachments), doc=metadata, scores=scores,
    )


def _zip_checks(archive: zipfile.ZipFile, size: int) -> list[zipfile.ZipInfo]:
    members = archive.infolist()
    declared = sum(info.file_size for info in members)
    if declared > MAX_ZIP_TOTAL_BYTES:
        raise _Stop(Problem(0, f"the archive declares {declared:,} bytes uncompressed; the limit is "
                               f"{MAX_ZIP_TOTAL_BYTES:,} (STRUCTEXT_LIMIT_MAX_HARNESS_ZIP_BYTES raises it)"))
    if size and declared > MAX_ZIP_RATIO * size:
        raise _Stop(Problem(0, f"the archive expands {declared / size:,.0f} times ({declared:,} bytes from "
                               f"{size:,}); the limit is {MAX_ZIP_RATIO:,} times: not a log, a zip bomb?"))
    seen: dict[str, int] = {}
    for info in members:
        seen[info.filename] = seen.get(info.filename, 0) + 1
    for name, times in seen.items():
        if times > 1:  # zipfile's by-name lookup silently takes the last one
            raise _Stop(_where(f"member {name}", f"the archive holds {times} members of this name: which one is "
                                                 "the log's is ambiguous, so none is read"))
    for info in members:
        if info.flag_bits & 0x1:
            raise _Stop(_where(f"member {info.filename}", "encrypted archives are not read"))
        if info.file_size > MAX_ENTRY_BYTES:
            raise _Stop(_where(f"member {info.filename}", f"{info.file_size:,} bytes uncompressed; the limit "
                                                           f"is {MAX_ENTRY_BYTES:,} per member "
                                                           "(STRUCTEXT_LIMIT_MAX_HARNESS_ENTRY_BYTES)"))
    return members


def _count_members(handle: IO[bytes]) -> int:
    """The member count from the archive's end record, read before the directory is loaded."""
    end = zipfile._EndRecData(handle)  # the stdlib's own reader of the end-of-archive record
    if end is None:
        raise _Stop(Problem(0, "a zip archive without its end record: cut short or not an archive"))
    return int(end[zipfile._ECD_ENTRIES_TOTAL])


def _zstd_member(handle: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise _Stop(_where(f"member {info.filename}", "compressed with zstandard: install the 'zstandard' "
                                                       "package (pip install zstandard) to read it")) from None
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) != 30 or not local.startswith(_ZIP_MAGIC):
        raise _Stop(_where(f"member {info.filename}", "damaged archive (no local header)"))
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    compressed = handle.read(info.compress_size)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(compressed), read_across_frames=True)
        return reader.read(info.file_size + 1)
    except zstandard.ZstdError as exc:
        raise _Stop(_where(f"member {info.filename}", f"damaged zstandard data ({exc})")) from None


def _read_member(archive: zipfile.ZipFile, handle: IO[bytes], info: zipfile.ZipInfo) -> str:
    location = f"member {info.filename}"
    try:
        if info.compress_type == _ZIP_ZSTANDARD:
            data = _zstd_member(handle, info)
        else:
            with archive.open(info) as member:
                data = member.read(info.file_size + 1)
    except NotImplementedError as exc:
        raise _Stop(_where(location, f"unsupported compression ({exc})")) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise _Stop(_where(location, f"damaged archive ({exc})")) from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise _Stop(_where(location, "damaged archive (size or checksum differs from the directory)"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Stop(_where(location, f"not UTF-8 text ({exc.reason} at byte {exc.start})")) from None


def _sample_sort_key(name: str) -> tuple:
    match = re.search(r"_epoch_(\d+)\.json$", name)
    return (int(match.group(1)) if match else 0, name)


def _inspect_eval_entries(handle: IO[bytes], size: int) -> Iterator[_Entry]:
    try:
        count = _count_members(handle)
        if count > MAX_ZIP_MEMBERS:
            raise _Stop(Problem(0, f"the archive holds {count:,} members; the limit is {MAX_ZIP_MEMBERS:,} "
                                   "(STRUCTEXT_LIMIT_MAX_HARNESS_ZIP_MEMBERS raises it)"))
        handle.seek(0)
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError, struct.error) as exc:
        raise _Stop(Problem(0, f"not a readable zip archive ({exc})")) from None
    with archive:
        members = _zip_checks(archive, size)
        by_name = {info.filename: info for info in members}
        header_name = "header.json" if "header.json" in by_name else "_journal/start.json"
        if header_name not in by_name:
            raise _Stop(Problem(0, "a zip archive, but not an Inspect log (no header.json or _journal/start.json)"))
        header = _object(_loads(_read_member(archive, handle, by_name[header_name]), f"member {header_name}"),
                         f"member {header_name}", "the header")
        run = _inspect_run(header, f"member {header_name}")
        names = sorted((n for n in by_name if n.startswith("samples/") and n.endswith(".json")), key=_sample_sort_key)
        for name in names:
            location = f"member {name}"
            yield _inspect_entry(_loads(_read_member(archive, handle, by_name[name]), location), run, location)


class _JsonStream:
    """Top-level keys of one large JSON object, with the array under one key read element by element."""

    _WHITESPACE = re.compile(r"[ \t\n\r]*")

    def __init__(self, handle: IO[str], chunk: int):
        self.handle = handle
        self.chunk = chunk
        self.buffer = ""
        self.pos = 0
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _fill(self) -> None:
        if self.pos > self.chunk:
            self.buffer, self.pos = self.buffer[self.pos:], 0
        data = self.handle.read(max(self.chunk, len(self.buffer) - self.pos))
        if not data:
            self.eof = True
        self.buffer += data

    def _skip_whitespace(self) -> None:
        while True:
            self.pos = self._WHITESPACE.match(self.buffer, self.pos).end()
            if self.pos < len(self.buffer) or self.eof:
                return
            self._fill()

    def peek(self) -> str:
        self._skip_whitespace()
        return self.buffer[self.pos:self.pos + 1]

    def expect(self, char: str, where: str) -> None:
        if self.peek() != char:
            found = repr(self.buffer[self.pos:self.pos + 20]) if self.pos < len(self.buffer) else "the end of the file"
            raise _Stop(_where(where, f"expected {char!r}, found {found}"))
        self.pos += 1

    def value(self, where: str):
        """The next JSON value, decoded on its own (at most ``MAX_ENTRY_BYTES`` characters)."""
        self._skip_whitespace()
        if self.pos >= len(self.buffer) and self.eof:
            raise _Stop(_where(where, "the file ends too early (cut short?)"))
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise _Stop(_where(where, f"not valid JSON ({exc.msg})")) from None
            except RecursionError:
                raise _Stop(_where(where, "JSON nested too deeply")) from None
            else:
                if end < len(self.buffer) or self.eof:
                    self.pos = end
                    return value
            if len(self.buffer) - self.pos > MAX_ENTRY_BYTES:
                raise _Stop(_where(where, f"longer than {MAX_ENTRY_BYTES:,} characters "
                                          "(STRUCTEXT_LIMIT_MAX_HARNESS_ENTRY_BYTES raises it)"))
            self._fill()


def _inspect_json_entries(handle: IO[str]) -> Iterator[_Entry]:
    stream = _JsonStream(handle, _JSON_CHUNK)
    stream.expect("{", "the log")
    header: dict = {}
    run = None
    while stream.peek() != "}":
        if header or run is not None:
            stream.expect(",", "the log")
        key = stream.value("the log")
        if not isinstance(key, str):
            raise _Stop(_where("the log", "a key of the top-level object is not a string"))
        stream.expect(":", f"key {key!r}")
        if key != "samples":
            header[key] = stream.value(f"key {key!r}")
            continue
        run = _inspect_run(header, "the log")
        if stream.peek() == "n" and stream.value("'samples'") is None:
            continue  # "samples": null, a log written without samples
        stream.expect("[", "'samples'")
        number = 0
        while stream.peek() != "]":
            if number:
                stream.expect(",", f"samples[{number}]")
            location = f"samples[{number}]"
            yield _inspect_entry(stream.value(location), run, location)
            number += 1
        stream.expect("]", "'samples'")
    stream.expect("}", "the log")
    if run is None:
        _inspect_run(header, "the log")
        raise _Stop(Problem(0, "the log holds no samples (was it written with --no-log-samples?)"))


# ------------------------------------------------------------------ lm-evaluation-harness

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
            data = handle.read(MAX_ENTRY_BYTES + 1)
    except OSError as exc:
        raise _Stop(Problem(0, f"cannot open {what} {path} ({exc.strerror or exc})")) from None
    if len(data) > MAX_ENTRY_BYTES:
        raise _Stop(Problem(0, f"{what} {path} is larger than {MAX_ENTRY_BYTES:,} bytes"))
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
    for number, line in limits.read_record_lines(handle, MAX_ENTRY_BYTES):
        location = f"line {number}"
        if line is None:
            raise _Stop(Problem(number, f"longer than {MAX_ENTRY_BYTES:,} characters "
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


# ------------------------------------------------------------------ matching

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


# ------------------------------------------------------------------ public

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
    index = samples if isinstance(samples, SampleIndex) else SampleIndex(samples)
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
    out: list[dict] = []
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
    for entry in entries:
        out.append({"where": entry.where, "id": entry.harness_id, "epoch": entry.epoch, "model": entry.model,
                    "response": entry.response, "failed": entry.failed, "metadata": dict(entry.doc or {}),
                    "scores": dict(entry.scores)})
    if not out:
        raise ResultsImportError(source, [Problem(0, "no responses in the log")])
    return out


def parse_bytes(data: bytes, filename: str, samples: SampleIndex | Iterable[Mapping],
                prompt: str | None = None) -> tuple[str, list[dict]]:
    """Read a harness log held in memory (an upload): (format, result rows); see :func:`read_log`.

    An lm-eval samples file read this way has no results file beside it: its model is the
    one its records name, else ``lm-eval``.
    """
    index = samples if isinstance(samples, SampleIndex) else SampleIndex(samples)
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


# ------------------------------------------------------------------ epochs

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
