"""A lab's own question set read from a file: JSONL, CSV, or an Inspect AI dataset file.

**JSONL** (and Inspect's ``json_dataset`` files, one JSON object a line, or a ``.json`` array):
``input`` (a string, or a list of chat messages ``{"role", "content"}`` whose content is a string or
a list of ``{"type": "text", "text"}`` and ``{"type": "image", "image": <path>}`` items, the path
relative to the dataset file, as Inspect resolves it), ``choices`` (a list of option texts; absent
for a short answer), ``target`` (a string or a list of strings: for a multiple-choice question the
key's letter, ``A`` for the first option; for a short answer the accepted answers), ``id`` (a string
or an integer; the line number when absent) and ``metadata`` (an object). An ``image`` field beside
``input`` names an image too.

**CSV**: a header row with ``input`` and ``target``; optional ``id``, ``image`` and option columns
``A`` to ``J``; several accepted short answers in ``target`` are separated by `` | ``; every other
column is metadata.

Checked more strictly than Inspect's loaders, which accept all of these: duplicate ids, a question
with one option, a key outside the options, an image path leaving the dataset's folder (``..``,
absolute, or a symlink out), and bounded sizes (:data:`LIMITS`). Every problem is reported with its
line and field; a file with any problem gives no item.

An item is identified by its content (:func:`content_id`: question, options, targets, image bytes),
not by the set's name or the id the file gives it (kept as ``source_id``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import struct
from pathlib import Path

from structext_core.evaluation.choices import LETTERS
from structext_core.evaluation.matching import Problem, ResultsImportError
from structext_core.labset import inspect_rules

#: Bounds on what a file may hold.
LIMITS = {
    "file_bytes": 20_000_000, "line_chars": 200_000, "items": 20_000, "json_depth": 16,
    "image_bytes": 5_000_000, "image_pixels": 4096 * 4096, "choices": len(LETTERS),
    "question_chars": 20_000, "choice_chars": 2_000, "target_chars": 1_000, "targets": 20,
    "stratum_chars": 100, "id_chars": 200, "messages": 20,
}
#: The rules a short answer may be scored by, offered by name (:mod:`structext_core.labset.inspect_rules`
#: gives their syntax; any rule it parses is accepted, and an item carries its canonical form).
RULES = inspect_rules.RULES


class LabSetError(ResultsImportError):
    """A question set that cannot be imported; ``problems`` lists each line and field at fault."""


def content_id(question: str, choices, targets, image_sha: str | None) -> str:
    """The item's identity: a hash of what it asks and expects (never of the set's name)."""
    text = json.dumps([question, list(choices), list(targets), image_sha or ""], ensure_ascii=False)
    return "ls-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def json_depth_exceeds(text: str, limit: int) -> bool:
    """Whether ``text``'s JSON nests deeper than ``limit`` (linear, strings skipped; before parsing)."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG or JPEG from its header, or None when it is neither."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    if data[:2] == b"\xff\xd8":
        at = 2
        while at + 9 < len(data):
            if data[at] != 0xFF:
                return None
            marker, length = data[at + 1], struct.unpack(">H", data[at + 2:at + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                height, width = struct.unpack(">HH", data[at + 5:at + 9])
                return width, height
            at += 2 + length
    return None


def check_image(folder: Path, relative, where: str, problems: list, line: int) -> tuple[str, str] | None:
    """(path relative to the folder, sha256 of its bytes) of a checked image, or None (a problem noted)."""
    if not isinstance(relative, str) or not relative.strip():
        problems.append(Problem(line, f"{where}: an image must be a path (a text), got {relative!r}"))
        return None
    if relative.startswith("data:"):
        problems.append(Problem(line, f"{where}: an embedded image (data: URL) is not read; give a file path "
                                      "relative to the dataset file"))
        return None
    path = Path(relative)
    if path.is_absolute() or ".." in path.parts or "\\" in relative:
        problems.append(Problem(line, f"{where}: image path {relative!r} leaves the dataset's folder "
                                      "(absolute, '..' or a backslash): give a path inside it"))
        return None
    full = folder / path
    try:
        resolved = full.resolve(strict=True)
    except OSError:
        problems.append(Problem(line, f"{where}: image {relative!r} does not exist beside the dataset file"))
        return None
    if folder.resolve() not in resolved.parents or not resolved.is_file():
        problems.append(Problem(line, f"{where}: image {relative!r} is not a file inside the dataset's folder "
                                      "(a link out of it?)"))
        return None
    size = resolved.stat().st_size
    if size > LIMITS["image_bytes"]:
        problems.append(Problem(line, f"{where}: image {relative!r} has {size} bytes, more than "
                                      f"{LIMITS['image_bytes']}"))
        return None
    data = resolved.read_bytes()
    dims = image_size(data)
    if dims is None:
        problems.append(Problem(line, f"{where}: image {relative!r} is not a PNG or JPEG"))
        return None
    if dims[0] < 1 or dims[1] < 1 or dims[0] * dims[1] > LIMITS["image_pixels"]:
        problems.append(Problem(line, f"{where}: image {relative!r} is {dims[0]}x{dims[1]} pixels; at most "
                                      f"{LIMITS['image_pixels']} pixels are read"))
        return None
    return path.as_posix(), hashlib.sha256(data).hexdigest()


def _text(value, field: str, limit: str, problems: list, line: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem(line, f"field {field!r}: must be a non-empty text, got {str(value)[:60]!r}"))
        return None
    if len(value) > LIMITS[limit]:
        problems.append(Problem(line, f"field {field!r}: {len(value)} characters, more than {LIMITS[limit]}"))
        return None
    return value


def _read_input(value, problems: list, line: int) -> tuple[str | None, list[str]]:
    """(the question's text, the image paths it names) of an Inspect ``input``."""
    if isinstance(value, str):
        return _text(value, "input", "question_chars", problems, line), []
    if not isinstance(value, list) or not value or len(value) > LIMITS["messages"]:
        problems.append(Problem(line, f"field 'input': must be a text or a list of 1 to {LIMITS['messages']} "
                                      "chat messages"))
        return None, []
    texts, images = [], []
    for n, message in enumerate(value):
        where = f"field 'input[{n}]'"
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            problems.append(Problem(line, f"{where}: must be a message with a role system, user or assistant"))
            return None, []
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            problems.append(Problem(line, f"{where}.content: must be a text or a list of content items"))
            return None, []
        for k, part in enumerate(parts):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "image":
                images.append((f"{where}.content[{k}].image", part.get("image")))
            else:
                problems.append(Problem(line, f"{where}.content[{k}]: only text and image items are read, got "
                                              f"{str(kind)[:30]!r}"))
                return None, []
    text = "\n\n".join(t for t in texts if t.strip())
    return _text(text, "input", "question_chars", problems, line), images


def _item(record, line: int, folder: Path, rule: str, strata_key: str | None, problems: list) -> dict | None:
    """One checked item of ``record`` (a JSON object or a CSV row made one), or None (problems noted)."""
    before = len(problems)
    if not isinstance(record, dict):
        problems.append(Problem(line, f"must be a JSON object, got {type(record).__name__}"))
        return None
    question, images = _read_input(record.get("input"), problems, line)
    if "image" in record and record["image"] not in (None, ""):
        images.append(("field 'image'", record["image"]))
    if len(images) > 1:
        problems.append(Problem(line, "field 'input': at most one image a question"))
    image = check_image(folder, images[0][1], images[0][0], problems, line) if len(images) == 1 else None
    choices = record.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not 2 <= len(choices) <= LIMITS["choices"]:
            problems.append(Problem(line, f"field 'choices': must be a list of 2 to {LIMITS['choices']} options "
                                          f"(a question with one option asks nothing), got {str(choices)[:60]!r}"))
            choices = None
        else:
            choices = [_text(c, f"choices[{n}]", "choice_chars", problems, line) for n, c in enumerate(choices)]
    target = record.get("target")
    targets = target if isinstance(target, list) else [target]
    if not targets or len(targets) > LIMITS["targets"]:
        problems.append(Problem(line, f"field 'target': 1 to {LIMITS['targets']} targets"))
        targets = []
    targets = [_text(t, "target", "target_chars", problems, line) for t in targets]
    if isinstance(choices, list) and None not in choices and None not in targets and targets:
        offered = LETTERS[:len(choices)]
        keys = [t.strip().upper() for t in targets]
        if len(keys) != 1 or keys[0] not in offered:
            problems.append(Problem(line, f"field 'target': must be one letter among {', '.join(offered)} "
                                          f"(the key of {len(choices)} options), got {target!r}"))
        targets = keys
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        problems.append(Problem(line, "field 'metadata': must be an object"))
        metadata = {}
    stratum = ""
    if strata_key is not None and strata_key in metadata:
        value = metadata[strata_key]
        if isinstance(value, bool) or not isinstance(value, (str, int)) or len(str(value)) > LIMITS["stratum_chars"]:
            problems.append(Problem(line, f"field 'metadata.{strata_key}': a stratum must be a text or an integer "
                                          f"of at most {LIMITS['stratum_chars']} characters"))
        else:
            stratum = str(value)
    item_rule = metadata.get("answer_rule", rule)
    try:
        item_rule = inspect_rules.key_rule(inspect_rules.parse_rule(item_rule))
    except ValueError as error:
        problems.append(Problem(line, f"field 'metadata.answer_rule': {error}"))
    source_id = line if record.get("id") is None else record["id"]  # Inspect's null id: none given
    if isinstance(source_id, bool) or not isinstance(source_id, (str, int)) or not str(source_id).strip() \
            or len(str(source_id)) > LIMITS["id_chars"]:
        problems.append(Problem(line, f"field 'id': must be a non-empty text or an integer, got {str(source_id)[:60]!r}"))
    if len(problems) > before:
        return None
    image_path, image_sha = image if image else (None, None)
    return {"id": content_id(question, choices or [], targets, image_sha), "source_id": str(source_id),
            "question": question, "choices": list(choices or []), "target": targets,
            "format": "choice" if choices else "short", "image": image_path, "image_sha256": image_sha,
            "stratum": stratum, "rule": item_rule, "line": line}


def _records(path: Path, problems: list) -> list[tuple[int, object]]:
    """(line, record) of the file, by its format (``.csv``, ``.json`` array, else JSONL)."""
    text = path.read_bytes().decode("utf-8-sig", errors="strict")
    if path.suffix.lower() == ".csv":
        return _csv_records(text, problems)
    if path.suffix.lower() == ".json":
        if json_depth_exceeds(text, LIMITS["json_depth"] + 1):
            problems.append(Problem(0, f"nests deeper than {LIMITS['json_depth']} levels"))
            return []
        data = json.loads(text)
        if not isinstance(data, list):
            problems.append(Problem(0, "a .json dataset must be a list of samples"))
            return []
        return list(enumerate(data, 1))
    records = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        if len(raw) > LIMITS["line_chars"]:
            problems.append(Problem(number, f"{len(raw)} characters, more than {LIMITS['line_chars']}"))
        elif json_depth_exceeds(raw, LIMITS["json_depth"]):
            problems.append(Problem(number, f"nests deeper than {LIMITS['json_depth']} levels"))
        else:
            try:
                records.append((number, json.loads(raw)))
            except json.JSONDecodeError as error:
                problems.append(Problem(number, f"not JSON: {error.msg} (column {error.colno})"))
    return records


def _csv_records(text: str, problems: list) -> list[tuple[int, dict]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return []
    missing = [f for f in ("input", "target") if f not in header]
    if missing:
        problems.append(Problem(1, f"the header has no column {', '.join(missing)}"))
        return []
    records = []
    for row in reader:
        number = reader.line_num
        if len(row) != len(header):
            problems.append(Problem(number, f"{len(row)} cells, the header has {len(header)}"))
            continue
        cells = dict(zip(header, row))
        record: dict = {"input": cells.pop("input"), "target": [t.strip() for t in cells.pop("target").split(" | ")]}
        if "id" in cells:
            record["id"] = cells.pop("id")
        if cells.get("image"):
            record["image"] = cells.pop("image")
        cells.pop("image", None)
        options = [cells.pop(letter) for letter in LETTERS if letter in cells]
        options = [o for o in options if o != ""]
        if options:
            record["choices"] = options
        record["metadata"] = cells
        records.append((number, record))
    return records


def load_set(path, *, rule: str = "normalised", strata_key: str | None = "subject") -> list[dict]:
    """The checked items of the question set at ``path``; a :class:`LabSetError` listing every line
    and field at fault otherwise (then no item). ``rule``: how its short answers are scored unless an
    item's ``metadata.answer_rule`` says otherwise; ``strata_key``: the metadata field its strata are."""
    path = Path(path)
    source = path.name
    try:
        inspect_rules.parse_rule(rule)
    except ValueError as error:
        raise LabSetError(source, [Problem(0, str(error))]) from None
    problems: list[Problem] = []
    try:
        size = os.stat(path).st_size
    except OSError as error:
        raise LabSetError(source, [Problem(0, f"cannot be read: {error.strerror}")]) from None
    if size > LIMITS["file_bytes"]:
        raise LabSetError(source, [Problem(0, f"{size} bytes, more than {LIMITS['file_bytes']}")])
    try:
        records = _records(path, problems)
    except (UnicodeDecodeError, json.JSONDecodeError, csv.Error) as error:
        raise LabSetError(source, [Problem(0, f"cannot be read: {str(error)[:200]}")]) from None
    if len(records) > LIMITS["items"]:
        raise LabSetError(source, [Problem(0, f"{len(records)} questions, more than {LIMITS['items']}")])
    folder = path.parent
    items, seen_ids, seen_content = [], {}, {}
    for number, record in records:
        item = _item(record, number, folder, rule, strata_key, problems)
        if item is None:
            continue
        if item["source_id"] in seen_ids:
            problems.append(Problem(number, f"field 'id': {item['source_id']!r} is already the id of line "
                                            f"{seen_ids[item['source_id']]}"))
        elif item["id"] in seen_content:
            problems.append(Problem(number, f"the same question, options and target as line {seen_content[item['id']]}"))
        seen_ids.setdefault(item["source_id"], number)
        seen_content.setdefault(item["id"], number)
        items.append(item)
    if not records and not problems:
        problems.append(Problem(0, "holds no question"))
    if problems:
        raise LabSetError(source, problems)
    return items
