"""Inspect AI logs read as harness entries (:mod:`structext_core.evaluation.harness` is the public reader).

* ``.eval`` logs: a zip archive (``header.json`` or ``_journal/start.json`` for the run,
  ``samples/<id>_epoch_<n>.json`` per sample and epoch; members compressed with deflate or, since
  inspect-ai 0.3.1xx, zstandard). The archive is checked (member count, declared total size,
  compression ratio, per-member size) before any member is read; members are read one at a time.
* ``.json`` logs: one object ``{version, status, eval, ..., samples: [...]}``, read as a stream:
  each sample is decoded on its own, so a log of several hundred MB never sits in memory as one
  parsed tree.

Inspect AI itself is not imported.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
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
    _where,
)
from structext_core.evaluation.matching import Problem
from structext_core.settings import limit as _env_int

#: Members an Inspect .eval archive may hold at most.
MAX_ZIP_MEMBERS = _env_int("MAX_HARNESS_ZIP_MEMBERS", 200_000)
#: Declared uncompressed size of all members together (bytes).
MAX_ZIP_TOTAL_BYTES = _env_int("MAX_HARNESS_ZIP_BYTES", 8 * 1024 ** 3)
#: Declared uncompressed size over compressed file size, at most.
MAX_ZIP_RATIO = _env_int("MAX_HARNESS_ZIP_RATIO", 1000)
_JSON_CHUNK = 1 << 20  # characters read at a time from a .json log
_ZIP_MAGIC = b"PK\x03\x04"
_ZIP_ZSTANDARD = 93
_ATTACHMENT = "attachment://"


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


#: Inspect's letter grades as numbers, as its ``value_to_float`` reads them: correct, incorrect,
#: partial, no answer.
INSPECT_GRADES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


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
        value = INSPECT_GRADES.get(value, value) if isinstance(value, str) else value
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
        if info.file_size > harness_entries.MAX_ENTRY_BYTES:
            raise _Stop(_where(f"member {info.filename}", f"{info.file_size:,} bytes uncompressed; the limit "
                                                           f"is {harness_entries.MAX_ENTRY_BYTES:,} per member "
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
            if len(self.buffer) - self.pos > harness_entries.MAX_ENTRY_BYTES:
                raise _Stop(_where(where, f"longer than {harness_entries.MAX_ENTRY_BYTES:,} characters "
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
