"""The sample schema and JSONL reading and writing."""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, TextIO

from structext_core.text import limits

FIELDS = ["id", "suite", "language", "task", "task_id", "depth", "width", "col", "seed",
          "reference", "question", "requirement", "answer", "rule_hint", "params"]


class SampleError(ValueError):
    """A sample file or line that does not follow the schema."""


def to_jsonl_line(row: dict) -> str:
    """One sample as a JSONL line (UTF-8 text kept as is, keys in the row's order)."""
    return json.dumps(row, ensure_ascii=False) + "\n"


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> int:
    """Write one JSON object a line (UTF-8, keys in schema order); returns the count."""
    return write_jsonl_lines(path, (to_jsonl_line(row) for row in rows))


def write_jsonl_lines(path: str | Path, lines: Iterable[str]) -> int:
    """Write ready JSONL lines atomically: readers never see half a file. Returns the count."""
    n = 0
    with jsonl_writer(path) as fh:
        for line in lines:
            fh.write(line)
            n += 1
    return n


@contextmanager
def jsonl_writer(path: str | Path) -> Iterator[TextIO]:
    """A text file to write ``path`` through: a temporary file beside it, renamed to ``path``
    when the block ends without an error and removed when it does not (or on Ctrl-C), so
    ``path`` is either the old file or the complete new one. Creates missing folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name of this writer's own: two sessions generating at once never share a half file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            yield fh
        tmp.replace(path)  # a reader never sees half a file
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def validate(row: object, where: str) -> dict:
    """Check one sample against the schema; raise SampleError naming ``where``."""
    if not isinstance(row, dict):
        raise SampleError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [f for f in FIELDS if f not in row]
    if missing:
        raise SampleError(f"{where}: missing field(s) {', '.join(missing)}")
    for name in ("reference", "question", "answer", "language"):
        if not isinstance(row[name], str):
            raise SampleError(f"{where}: field {name!r} must be a string")
    for name in ("task_id", "depth", "width"):
        if not isinstance(row[name], int):
            raise SampleError(f"{where}: field {name!r} must be an integer")
    return row


def read_jsonl(path: str | Path, *, validate_rows: bool = True) -> list[dict]:
    """Read a sample file; a malformed line raises SampleError naming the file and line.

    Each line is held to the limits of :mod:`structext_core.text.limits` (its length, its JSON
    nesting, no lone surrogate) before it is decoded."""
    path = Path(path)
    rows = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise SampleError(f"{path}: cannot open ({exc.strerror})") from None
    with fh:
        try:
            for lineno, line in limits.read_record_lines(fh):
                where = f"{path}, line {lineno}"
                row = decode_line(line, where)
                if row is not None:
                    rows.append(validate(row, where) if validate_rows else row)
        except UnicodeDecodeError as exc:
            raise SampleError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return rows


def decode_line(line: str | None, where: str) -> object | None:
    """One JSONL line decoded within the limits (None for a blank line); SampleError naming
    ``where`` and the problem otherwise. ``line`` None stands for a line beyond MAX_RECORD_CHARS."""
    if line is None:
        raise SampleError(f"{where}: the line is {limits.record_too_long()}")
    if not line.strip():
        return None
    try:
        return limits.loads_json(line, "the line")
    except json.JSONDecodeError as exc:
        raise SampleError(f"{where}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # a limit, or a number of more than 4,300 digits
        raise SampleError(f"{where}: {exc}") from None
