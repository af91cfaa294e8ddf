"""A lab's set file read into records, before its layout is known: ``(line, record)`` pairs and the
columns found, from JSONL, a JSON array, CSV, Parquet, an Arrow stream (``.arrow``) or a Hugging Face
``datasets`` folder made by ``save_to_disk`` (its Arrow files read with pyarrow; ``datasets`` itself is
never imported).

Every file is opened once, without following a link (``O_NOFOLLOW``), and its bytes are kept
(:attr:`Source.files`): what is checked is what an import writes. Text is UTF-8 (a byte that is not is
named by its line), JSON lines are split on ``\\n`` only (a U+2028 inside a string is no line break),
and a JSON array's samples are numbered by the line each begins on. A table's rows are numbered from 1.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from structext_core.evaluation.matching import Problem
from structext_core.labset import dataset as _dataset

#: The kinds of file a set may be, by suffix (a ``datasets`` folder has none).
SUFFIXES = (".jsonl", ".csv", ".json", ".parquet", ".arrow")
TABLE_SUFFIXES = (".parquet", ".arrow")


@dataclass
class Source:
    """What a set's file holds before its layout is known."""

    kind: str  # jsonl, json, csv, parquet, arrow or datasets
    records: list = field(default_factory=list)  # (line, record)
    columns: list = field(default_factory=list)  # every field or column name, first seen first
    files: dict = field(default_factory=dict)  # name -> the bytes read (one file, or a folder's Arrow files)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def json_depth_exceeds(text: str, limit: int) -> bool:
    """Whether ``text``'s JSON nests deeper than ``limit`` (linear, strings skipped; before parsing)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def is_datasets_folder(path: Path) -> bool:
    """Whether ``path`` is a folder ``datasets``' ``save_to_disk`` made (a Dataset or a DatasetDict)."""
    return path.is_dir() and any((path / n).is_file() for n in ("state.json", "dataset_dict.json"))


def open_nofollow(path: Path, limit: int, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (a link is refused: ``O_NOFOLLOW``), at most ``limit``
    of them; an ``OSError`` or a ``ValueError`` saying why not."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == 40:  # ELOOP: the last part is a link
            raise ValueError("is a link (a set's files are read only as plain files)") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("is not a plain file")
        if info.st_size > limit:
            raise ValueError(f"has {info.st_size} bytes, more than {limit}")
        with os.fdopen(os.dup(fd), "rb") as reading:
            data = reading.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"has more than {limit} bytes")
        return data
    finally:
        os.close(fd)


def decode(data: bytes, problems: list) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped); each line holding a byte that is not UTF-8 is a
    problem (the rest is decoded with replacement characters, so the other lines are still checked)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for number, raw in enumerate(data.split(b"\n"), 1):  # no UTF-8 sequence holds a \n byte
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(Problem(number, f"not UTF-8: byte 0x{raw[error.start]:02x} at byte {error.start + 1} "
                                            "of the line (save the file as UTF-8)"))
    return data.decode("utf-8", errors="replace")


def _columns(records) -> list[str]:
    seen: dict[str, None] = {}
    for _, record in records:
        if isinstance(record, dict):
            for name in record:
                seen.setdefault(str(name), None)
    return list(seen)


def _jsonl(text: str, problems: list) -> list:
    records = []
    for number, raw in enumerate(text.split("\n"), 1):
        raw = raw.removesuffix("\r")
        if not raw.strip():
            continue
        if len(raw) > _dataset.LIMITS["line_chars"]:
            problems.append(Problem(number, f"{len(raw)} characters, more than {_dataset.LIMITS['line_chars']}"))
        elif json_depth_exceeds(raw, _dataset.LIMITS["json_depth"]):
            problems.append(Problem(number, f"nests deeper than {_dataset.LIMITS['json_depth']} levels"))
        else:
            try:
                records.append((number, json.loads(raw)))
            except json.JSONDecodeError as error:
                problems.append(Problem(number, f"not JSON: {error.msg} (column {error.colno})"))
    return records


def _json_array(text: str, problems: list) -> list:
    """The samples of a JSON array, each numbered by the line it begins on."""
    if json_depth_exceeds(text, _dataset.LIMITS["json_depth"] + 1):
        problems.append(Problem(0, f"nests deeper than {_dataset.LIMITS['json_depth']} levels"))
        return []
    decoder, spaces = json.JSONDecoder(), re.compile(r"[ \t\r\n]*")
    at = spaces.match(text, 0).end()
    if text[at:at + 1] != "[":
        problems.append(Problem(0, "a .json dataset must be a list of samples"))
        return []
    records, line, counted = [], 1, 0
    at = spaces.match(text, at + 1).end()
    while text[at:at + 1] != "]":
        if records:
            if text[at:at + 1] != ",":
                problems.append(Problem(line + text.count("\n", counted, at), "not JSON: expected ',' or ']'"))
                return records
            at = spaces.match(text, at + 1).end()
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as error:
            problems.append(Problem(error.lineno, f"not JSON: {error.msg} (column {error.colno})"))
            return records
        line += text.count("\n", counted, at)
        counted = at
        records.append((line, value))
        at = spaces.match(text, end).end()
    if text[at + 1:].strip():
        problems.append(Problem(line + text.count("\n", counted, at), "not JSON: text after the list"))
    return records


def _csv(text: str, problems: list) -> tuple[list, list]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return [], []
    except csv.Error as error:
        problems.append(Problem(1, f"cannot be read as CSV: {error}"))
        return [], []
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice or "" in header:
        problems.append(Problem(1, "every column needs a name of its own: " + (
            f"{', '.join(map(repr, twice))} appear more than once" if twice else "a column has no name")))
        return [], header
    records = []
    try:
        for row in reader:
            number = reader.line_num
            if len(row) != len(header):
                problems.append(Problem(number, f"{len(row)} cells, the header has {len(header)}"))
                continue
            records.append((number, dict(zip(header, row))))
    except csv.Error as error:
        problems.append(Problem(reader.line_num, f"cannot be read as CSV: {error}"))
    return records, header


def _table_rows(table, problems: list) -> tuple[list, list]:
    columns = [str(name) for name in table.column_names]
    if len(set(columns)) != len(columns):
        problems.append(Problem(0, "every column needs a name of its own"))
        return [], columns
    if table.num_rows > _dataset.LIMITS["items"]:
        problems.append(Problem(0, f"{table.num_rows} questions, more than {_dataset.LIMITS['items']}"))
        return [], columns
    return list(enumerate(table.to_pylist(), 1)), columns


def _arrow(data: bytes):
    import pyarrow as pa
    try:
        return pa.ipc.open_stream(pa.BufferReader(data)).read_all()
    except pa.ArrowInvalid:
        return pa.ipc.open_file(pa.BufferReader(data)).read_all()


def _datasets_folder(path: Path, split: str | None, problems: list) -> Source:
    """A ``save_to_disk`` folder: the Dataset's Arrow files, or those of one split of a DatasetDict."""
    source = Source("datasets")
    folder = path
    try:
        if (path / "dataset_dict.json").is_file():
            splits = json.loads(open_nofollow(path / "dataset_dict.json", 100_000)).get("splits")
            if not isinstance(splits, list) or not all(isinstance(s, str) and s and "/" not in s and s not in (".", "..")
                                                        for s in splits):
                problems.append(Problem(0, "dataset_dict.json: its 'splits' are no list of split names"))
                return source
            chosen = split or ("test" if "test" in splits else None)
            if chosen is None:
                problems.append(Problem(0, f"a DatasetDict folder of splits {', '.join(splits)}: choose one with "
                                           "--split (test is taken when there is one)"))
                return source
            if chosen not in splits:
                problems.append(Problem(0, f"no split {chosen!r}; the splits are {', '.join(splits)}"))
                return source
            folder = path / chosen
        elif split is not None:
            problems.append(Problem(0, "--split: this folder holds one Dataset, not a DatasetDict of splits"))
            return source
        state = json.loads(open_nofollow(folder / "state.json", 1_000_000))
        names = [entry.get("filename") for entry in state.get("_data_files", []) if isinstance(entry, dict)]
    except (OSError, ValueError, AttributeError) as error:
        problems.append(Problem(0, f"not a datasets folder that can be read ({error})"))
        return source
    if not names or not all(isinstance(n, str) and re.fullmatch(r"[\w.-]+\.arrow", n) for n in names):
        problems.append(Problem(0, "state.json: its _data_files name no Arrow file of the folder"))
        return source
    total = 0
    import pyarrow as pa
    tables = []
    for name in names:
        try:
            data = open_nofollow(folder / name, _dataset.LIMITS["file_bytes"] - total)
            tables.append(_arrow(data))
        except (OSError, ValueError, pa.ArrowException) as error:
            problems.append(Problem(0, f"{name}: cannot be read ({error})"))
            return source
        total += len(data)
        source.files[name] = data
    try:
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    except pa.ArrowException as error:
        problems.append(Problem(0, f"its Arrow files do not hold one table ({error})"))
        return source
    source.records, source.columns = _table_rows(table, problems)
    return source


def read_source(path: Path, problems: list, split: str | None = None) -> Source:
    """The records and columns of the set at ``path`` (problems noted; a problem of the whole file
    leaves no record)."""
    if is_datasets_folder(path):
        return _datasets_folder(path, split, problems)
    suffix = path.suffix.lower()
    kind = suffix.lstrip(".") if suffix in SUFFIXES else "jsonl"
    source = Source(kind)
    if split is not None:
        problems.append(Problem(0, "--split is for a datasets folder (save_to_disk) of several splits"))
        return source
    try:
        data = open_nofollow(path, _dataset.LIMITS["file_bytes"])
    except ValueError as error:
        problems.append(Problem(0, f"cannot be read: {error}" if "link" in str(error) or "plain" in str(error)
                                else f"{str(error).removeprefix('has ')}"))
        return source
    except OSError as error:
        problems.append(Problem(0, f"cannot be read: {error.strerror or error}"))
        return source
    source.files[path.name] = data
    if suffix in TABLE_SUFFIXES:
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            table = pq.read_table(pa.BufferReader(data)) if suffix == ".parquet" else _arrow(data)
        except (pa.ArrowException, OSError) as error:
            problems.append(Problem(0, f"not a {suffix[1:]} file pyarrow reads ({str(error)[:200]})"))
            return source
        source.records, source.columns = _table_rows(table, problems)
        return source
    text = decode(data, problems)
    if kind == "csv":
        source.records, source.columns = _csv(text, problems)
    else:
        source.records = _json_array(text, problems) if kind == "json" else _jsonl(text, problems)
        source.columns = _columns(source.records)
    return source
