"""A lab's own question set read from a file and checked: JSONL, a JSON array, CSV, Parquet, an Arrow
stream or a Hugging Face ``datasets`` folder (:mod:`structext_core.labset.readers`), in any layout
:mod:`structext_core.labset.layouts` recognises or an explicit mapping names.

**Inspect**'s form (JSONL, ``.json`` arrays and CSV): ``input`` (a string, or a list of chat messages
``{"role", "content"}`` whose content is a string or a list of ``{"type": "text", "text"}`` and
``{"type": "image", "image": <path>}`` items, the path relative to the dataset file, as Inspect resolves
it), ``choices`` (a list of option texts; absent for a short answer), ``target`` (a string or a list of
strings: for a multiple-choice question the key's letter, ``A`` for the first option; for a short answer
the accepted answers), ``id`` (a string or an integer; the line number when absent) and ``metadata`` (an
object). An ``image`` field beside ``input`` names an image too. In a CSV: ``input`` and ``target``,
optional ``id``, ``image`` and option columns ``A`` to ``J``; several accepted short answers in ``target``
are separated by `` | ``; every other column is metadata.

Checked more strictly than Inspect's loaders, which accept all of these: duplicate ids (also ids that
differ only by Unicode normalisation), a question with one option, a key outside the options, NUL
characters and lone surrogates in any text, an image path leaving the dataset's folder (``..``,
absolute, or a link: every part of its path is opened without following links), and bounded sizes
(:data:`LIMITS`). Every problem is reported with its line and field, in one pass; a file with any
problem gives no item. Each distinct image is read and hashed once, however many questions name it.

An item is identified by its content (:func:`content_id`: question, options, targets, image bytes),
not by the set's name or the id the file gives it (kept as ``source_id``). Every metadata field is
kept on the item (``metadata``); ``stratum`` is the one ``strata_key`` names.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import struct
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from structext_core.evaluation.choices import LETTERS
from structext_core.evaluation.matching import Problem, ResultsImportError
from structext_core.labset import inspect_rules, layouts, readers
from structext_core.labset.readers import json_depth_exceeds  # noqa: F401 (the module's API)

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


#: Bounds added since (kept apart from the table above).
LIMITS["metadata_chars"] = 50_000
#: The most image bytes a check keeps to copy (beyond, an import reads an image again and copies it
#: only when its sha256 is still the one checked).
KEPT_IMAGE_BYTES = 512_000_000
_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")


def sidecar(path) -> Path:
    """The mapping file kept beside the set ``path``: ``<set>.mapping.json``."""
    path = Path(path)
    return path.with_name(path.name + ".mapping.json")


@dataclass
class Image:
    """A checked image: its path relative to the set, its sha256, its bytes (None beyond the budget),
    and once decoded in a sandbox worker its perceptual hash
    (:func:`structext_core.labset.images.decode_images`)."""

    path: str
    sha256: str
    data: bytes | None
    phash: str | None = None


def read_inside(folder: Path, relative: Path, limit: int) -> bytes:
    """The bytes of ``folder/relative``, each part of the path opened without following a link."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    fd = os.open(folder, flags)
    try:
        for part in relative.parts[:-1]:
            try:
                inner = os.open(part, flags | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise ValueError("is a link") from None
                raise
            os.close(fd)
            fd = inner
        return readers.open_nofollow(Path(relative.parts[-1]), limit, dir_fd=fd)
    finally:
        os.close(fd)


class Images:
    """The images of one set, each distinct path read, checked and hashed once."""

    def __init__(self, folder: Path, keep: bool = False):
        self.folder, self.keep, self.kept = folder, keep, 0
        self.found: dict[str, Image | str] = {}
        self.first: dict[str, tuple[int, str]] = {}  # path -> the first line and field naming it

    def check(self, relative, where: str, problems: list, line: int) -> Image | None:
        known = self.found.get(relative) if isinstance(relative, str) else None
        if isinstance(known, Image):  # checked already, by the same spelling
            return known
        if not isinstance(relative, str) or not relative.strip():
            problems.append(Problem(line, f"{where}: an image must be a path (a text), got {str(relative)[:60]!r}"))
            return None
        if relative.startswith("data:"):
            problems.append(Problem(line, f"{where}: an embedded image (data: URL) is not read; give a file path "
                                          "relative to the dataset file"))
            return None
        path = Path(relative)
        if path.is_absolute() or ".." in path.parts or "\\" in relative or _BAD_TEXT.search(relative):
            problems.append(Problem(line, f"{where}: image path {relative!r} leaves the dataset's folder "
                                          "(absolute, '..' or a backslash): give a path inside it"))
            return None
        key = path.as_posix()
        if key not in self.found:
            self.found[key] = self._read(path)
            self.first[key] = (line, where)
        found = self.found[key]
        if isinstance(found, str):
            problems.append(Problem(line, f"{where}: image {relative!r} {found}"))
            return None
        return found

    def _read(self, path: Path) -> Image | str:
        try:
            data = read_inside(self.folder, path, LIMITS["image_bytes"])
        except FileNotFoundError:
            return "does not exist beside the dataset file"
        except ValueError as error:
            if "bytes" in str(error):
                return f"{error}"
            return "is a link or not a file inside the dataset's folder (a link out of it?)"
        except OSError as error:
            return f"cannot be read ({error.strerror or error})"
        dims = image_size(data)
        if dims is None:
            return "is not a PNG or JPEG"
        if dims[0] < 1 or dims[1] < 1 or dims[0] * dims[1] > LIMITS["image_pixels"]:
            return f"is {dims[0]}x{dims[1]} pixels; at most {LIMITS['image_pixels']} pixels are read"
        keep = self.keep and self.kept + len(data) <= KEPT_IMAGE_BYTES
        self.kept += len(data) if keep else 0
        return Image(path.as_posix(), hashlib.sha256(data).hexdigest(), data if keep else None)


def check_image(folder: Path, relative, where: str, problems: list, line: int) -> tuple[str, str] | None:
    """(path relative to the folder, sha256 of its bytes) of a checked image, or None (a problem noted)."""
    found = Images(folder).check(relative, where, problems, line)
    return (found.path, found.sha256) if found else None


def read_image(folder: Path, relative) -> tuple[str, str, bytes] | None:
    """(path, sha256, the very bytes checked) of the image ``relative`` in ``folder``, or None."""
    found = Images(folder, keep=True).check(relative, "image", [], 0)
    return (found.path, found.sha256, found.data) if found and found.data is not None else None


def _bad_text(value, where: str, problems: list, line: int, depth: int = 0) -> bool:
    """Whether ``value`` (any JSON) holds a NUL or a lone surrogate in a text (each noted, with the
    field's path ``where``)."""
    if isinstance(value, str):
        found = _BAD_TEXT.search(value)
        if found:
            what = "a NUL character" if found.group() == "\x00" else f"a lone surrogate (U+{ord(found.group()):04X})"
            problems.append(Problem(line, f"field {where!r}: holds {what} at character {found.start() + 1}; a "
                                          "set's text is plain Unicode"))
            return True
        return False
    if isinstance(value, dict) and depth < 20:
        return any([_bad_text(k, f"{where} (a key)", problems, line, depth + 1)
                    or _bad_text(v, f"{where}.{_plain(k)}", problems, line, depth + 1) for k, v in value.items()])
    if isinstance(value, list) and depth < 20:
        return any([_bad_text(v, f"{where}[{n}]", problems, line, depth + 1) for n, v in enumerate(value)])
    return False


def _plain(name) -> str:
    return _BAD_TEXT.sub("?", str(name))[:60]


def _text(value, field: str, limit: str, problems: list, line: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem(line, f"field {field!r}: must be a non-empty text, got {_plain(value)!r}"))
        return None
    if len(value) > LIMITS[limit]:
        problems.append(Problem(line, f"field {field!r}: {len(value)} characters, more than {LIMITS[limit]}"))
        return None
    return value


def content_id(question: str, choices, targets, image_sha: str | None) -> str:
    """The item's identity: a hash of what it asks and expects (never of the set's name)."""
    text = json.dumps([question, list(choices), list(targets), image_sha or ""], ensure_ascii=False)
    return "ls-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


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


def _read_input(value, problems: list, line: int, name: str = "input") -> tuple[str | None, list[str]]:
    """(the question's text, the image paths it names) of an Inspect ``input``."""
    if isinstance(value, str):
        return _text(value, name, "question_chars", problems, line), []
    if not isinstance(value, list) or not value or len(value) > LIMITS["messages"]:
        problems.append(Problem(line, f"field {name!r}: must be a text or a list of 1 to {LIMITS['messages']} "
                                      "chat messages"))
        return None, []
    texts, images = [], []
    for n, message in enumerate(value):
        where = f"field '{name}[{n}]'"
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
    return _text(text, name, "question_chars", problems, line), images


def _stratum(metadata: dict, key: str, problems: list, line: int) -> str:
    value = metadata[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)) or len(str(value)) > LIMITS["stratum_chars"]:
        problems.append(Problem(line, f"field 'metadata.{_plain(key)}': a stratum must be a text or an integer "
                                      f"of at most {LIMITS['stratum_chars']} characters"))
        return ""
    return str(value)


def _item(record: dict, line: int, images: Images, rule: str, strata: list, problems: list) -> dict | None:
    """One checked item of ``record`` (a sample of :func:`layouts.convert`), or None (problems noted)."""
    before = len(problems)
    names = record.get("names") or {}
    for part in ("input", "target", "id", "image", "metadata"):
        _bad_text(record.get(part), _plain(names.get(part, part)), problems, line)
    if isinstance(record.get("choices"), list):
        option_names = names.get("choices") or []
        for n, option in enumerate(record["choices"]):
            _bad_text(option, option_names[n] if n < len(option_names) else f"choices[{n}]", problems, line)
    if len(problems) > before:
        return None
    question_field = names.get("input", "input")
    question, found = _read_input(record.get("input"), problems, line, question_field)
    if "image" in record and record["image"] not in (None, ""):
        found.append((f"field {names.get('image', 'image')!r}", record["image"]))
    if len(found) > 1:
        problems.append(Problem(line, f"field {question_field!r}: at most one image a question"))
    image = images.check(found[0][1], found[0][0], problems, line) if len(found) == 1 else None
    choices = record.get("choices")
    field_names = names.get("choices") or [f"choices[{n}]" for n in range(len(choices or []))]
    if choices is not None:
        if not isinstance(choices, list) or not 2 <= len(choices) <= LIMITS["choices"]:
            problems.append(Problem(line, f"field 'choices': must be a list of 2 to {LIMITS['choices']} options "
                                          f"(a question with one option asks nothing), got {_plain(choices)!r}"))
            choices = None
        else:
            choices = [_text(c, n, "choice_chars", problems, line) for n, c in zip(field_names, choices)]
    target = record.get("target")
    target_field = names.get("target", "target")
    targets = target if isinstance(target, list) else [target]
    if not targets or len(targets) > LIMITS["targets"]:
        problems.append(Problem(line, f"field {target_field!r}: 1 to {LIMITS['targets']} targets"))
        targets = []
    targets = [_text(t, target_field, "target_chars", problems, line) for t in targets]
    if isinstance(choices, list) and None not in choices and None not in targets and targets:
        offered = LETTERS[:len(choices)]
        keys = [t.strip().upper() for t in targets]
        if len(keys) != 1 or keys[0] not in offered:
            problems.append(Problem(line, f"field {target_field!r}: must be one letter among {', '.join(offered)} "
                                          f"(the key of {len(choices)} options), got {_plain(target)!r}"))
        targets = keys
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        problems.append(Problem(line, "field 'metadata': must be an object"))
        metadata = {}
    elif len(json.dumps(metadata, ensure_ascii=False)) > LIMITS["metadata_chars"]:
        problems.append(Problem(line, f"field 'metadata': more than {LIMITS['metadata_chars']} characters"))
    stratum = ""
    for n, key in enumerate(strata):
        if key in metadata:
            value = _stratum(metadata, key, problems, line)
            stratum = stratum or (value if n == 0 or not stratum else stratum)
    item_rule = metadata.get("answer_rule", rule)
    try:
        item_rule = inspect_rules.key_rule(inspect_rules.parse_rule(item_rule))
    except ValueError as error:
        problems.append(Problem(line, f"field 'metadata.answer_rule': {error}"))
    source_id = line if record.get("id") is None else record["id"]  # Inspect's null id: none given
    if isinstance(source_id, bool) or not isinstance(source_id, (str, int)) or not str(source_id).strip() \
            or len(str(source_id)) > LIMITS["id_chars"]:
        problems.append(Problem(line, f"field {names.get('id', 'id')!r}: must be a non-empty text or an integer, "
                                      f"got {_plain(source_id)!r}"))
    if len(problems) > before:
        return None
    image_path, image_sha = (image.path, image.sha256) if image else (None, None)
    return {"id": content_id(question, choices or [], targets, image_sha), "source_id": str(source_id),
            "question": question, "choices": list(choices or []), "target": targets,
            "format": "choice" if choices else "short", "image": image_path, "image_sha256": image_sha,
            "stratum": stratum, "rule": item_rule, "line": line, "metadata": metadata,
            "permutation": record.get("permutation")}


@dataclass
class ReadSet:
    """A checked set: its items, the bytes of its file(s) as read, its images, its layout and mapping."""

    items: list
    source: readers.Source
    images: Images
    layout: layouts.Layout
    mapping: layouts.Mapping | None
    seed: int = 0
    problems: list = field(default_factory=list)


def read_mapping(path: Path) -> layouts.Mapping | None:
    """The mapping kept beside the set ``path`` (:func:`sidecar`), or None; a :class:`LabSetError` when
    it cannot be read."""
    beside = sidecar(path)
    if not beside.exists() and not beside.is_symlink():
        return None
    try:
        return layouts.Mapping.from_json(json.loads(readers.open_nofollow(beside, 100_000)))
    except (OSError, ValueError) as error:
        raise LabSetError(beside.name, [Problem(0, f"the set's mapping cannot be read: {error}")]) from None


def read_set(path, *, rule: str = "normalised", strata_key: str | None = "subject",
             mapping: layouts.Mapping | None = None, split: str | None = None, seed: int | None = None,
             keep: bool = False) -> ReadSet:
    """The checked set at ``path`` (a file or a ``datasets`` folder), read once; a
    :class:`LabSetError` listing every line and field at fault otherwise. ``mapping``: the layout's
    fields (default: the set's sidecar, else recognised); ``seed``: of GPQA-like option orders
    (default: the mapping's, else 0); ``keep``: keep the images' bytes (to copy what was checked)."""
    path = Path(path)
    source_name = path.name
    try:
        inspect_rules.parse_rule(rule)
    except ValueError as error:
        raise LabSetError(source_name, [Problem(0, str(error))]) from None
    if mapping is None:
        mapping = read_mapping(path)
    seed = seed if seed is not None else (mapping.seed if mapping and mapping.seed is not None else 0)
    problems: list[Problem] = []
    if not path.exists() and not path.is_symlink():
        raise LabSetError(source_name, [Problem(0, "cannot be read: no such file")])
    source = readers.read_source(path, problems, split)
    if problems and not source.records:
        raise LabSetError(source_name, problems)
    if len(source.records) > LIMITS["items"]:
        raise LabSetError(source_name, [Problem(0, f"{len(source.records)} questions, more than {LIMITS['items']}")])
    layout, undecided = layouts.detect(source.columns, source.kind, mapping)
    if layout is None:
        raise LabSetError(source_name, problems + [Problem(0, layouts.refusal(source.columns, undecided,
                                                                              source.records[:200]))])
    records = layouts.convert(layout, source.records, source.kind, seed, problems)
    strata = [strata_key] if strata_key else []
    if layout.strata and (strata_key not in source.columns or strata_key in layout.strata):
        strata = list(layout.strata)
    images = Images(path if source.kind == "datasets" else path.parent, keep)
    items, seen_ids, seen_content = [], {}, {}
    for number, record in records:
        item = _item(record, number, images, rule, strata, problems)
        if item is None:
            continue
        same = unicodedata.normalize("NFKC", item["source_id"])
        if same in seen_ids:
            first, spelled = seen_ids[same]
            how = "" if spelled == item["source_id"] else f" (as {spelled!r}: the same id once Unicode-normalised)"
            problems.append(Problem(number, f"field {(record.get('names') or {}).get('id', 'id')!r}: "
                                            f"{item['source_id']!r} is already the id of line {first}{how}"))
        elif item["id"] in seen_content:
            problems.append(Problem(number, f"the same question, options and target as line {seen_content[item['id']]}"))
        seen_ids.setdefault(same, (number, item["source_id"]))
        seen_content.setdefault(item["id"], number)
        items.append(item)
    if not source.records and not problems:
        problems.append(Problem(0, "holds no question"))
    if problems:
        raise LabSetError(source_name, sorted(problems, key=lambda p: p.line))
    return ReadSet(items, source, images, layout, mapping if mapping and mapping.maps_fields() else None, seed)


def load_set(path, *, rule: str = "normalised", strata_key: str | None = "subject",
             mapping: layouts.Mapping | None = None, split: str | None = None, seed: int | None = None) -> list[dict]:
    """The checked items of the question set at ``path``; a :class:`LabSetError` listing every line
    and field at fault otherwise (then no item). ``rule``: how its short answers are scored unless an
    item's ``metadata.answer_rule`` says otherwise; ``strata_key``: the metadata field its strata are;
    ``mapping``, ``split``, ``seed``: as :func:`read_set`'s."""
    return read_set(path, rule=rule, strata_key=strata_key, mapping=mapping, split=split, seed=seed).items
