"""A set brought from the page (Study admin, Set up a study, The lab's own: "Bring a set"): the
uploaded file's bytes written to a temporary folder of their own, then checked and imported by the
very functions ``labset check`` and ``labset import`` run (:func:`structext_core.labset.cli.check_set`,
:func:`~structext_core.labset.cli.import_file`): the same reading, the same checks, each image decoded
in a sandbox worker, the same copy into the sets folder with its mapping beside it, never over a file.

What the command line takes and a page cannot: a ``datasets`` folder (save_to_disk), and a set that
names images (they are files beside it, and one file is uploaded). Both are refused with what to run
instead. An upload is bounded before it is read: no more bytes than a set's file may hold
(:data:`MAX_BYTES`, ``dataset.LIMITS["file_bytes"]``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from structext_core.labset import cli, dataset, inspect_rules, layouts, study

#: The most bytes an uploaded set may hold (a set's file limit, as ``labset check`` reads it).
MAX_BYTES = dataset.LIMITS["file_bytes"]
#: The file kinds a set is uploaded in (a ``datasets`` folder is no file: the command line takes it).
SUFFIXES = study.SET_SUFFIXES
COMMAND = "python -m structext_core labset import FILE"
#: The problem of an image named but not beside the set (dataset.Images): the set names images.
_NO_IMAGE = "does not exist beside the dataset file"
_FORMATS = {"choice": "multiple choice", "short": "short answer"}


class UploadRefused(cli.LabSetCommandError):
    """An upload that is not checked or imported, and why; ``mapping``: the mapping to write (JSON)
    when its layout was not recognised; ``problems``: the lines at fault, when it was read."""

    def __init__(self, message: str, problems: list | None = None, mapping: dict | None = None):
        super().__init__(message, problems)
        self.mapping = mapping


def refuse_size(size: int, file_name: str = "the file") -> None:
    """An :class:`UploadRefused` when ``size`` bytes are more than a set may hold (before reading them)."""
    if size > MAX_BYTES:
        raise UploadRefused(f"{file_name}: {size:,} bytes; a set's file holds at most {MAX_BYTES:,} bytes "
                            "(a larger set is checked and imported on the server: "
                            f"`{COMMAND}`)")


def parse_options(rule: str = "normalised", strata: str = "subject", mapping_text: str = "",
                  seed: int | None = None) -> cli.Options:
    """The command line's options from the page's fields: the rule for short answers, the strata
    field, a mapping as JSON text (as ``--mapping``'s file holds it), the GPQA seed; an
    :class:`UploadRefused` naming the field at fault otherwise."""
    try:
        inspect_rules.parse_rule(rule)
    except ValueError as error:
        raise UploadRefused(f"the rule for short answers: {error}") from None
    mapping = None
    if mapping_text and mapping_text.strip():
        if len(mapping_text) > 100_000:
            raise UploadRefused("the mapping: more than 100,000 characters")
        try:
            mapping = layouts.Mapping.from_json(json.loads(mapping_text))
        except ValueError as error:  # not JSON, or a MappingError
            raise UploadRefused(f"the mapping: {error}") from None
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise UploadRefused("the seed: a whole number, 0 or more")
    return cli.Options(rule=rule, strata=(strata or "").strip() or None, mapping=mapping, seed=seed)


def _file_name(file_name: str) -> str:
    name = Path(str(file_name or "")).name[:200]
    if Path(name).suffix.lower() not in SUFFIXES or name.startswith(".") or name.endswith(".mapping.json"):
        raise UploadRefused(f"{name or 'the file'}: a set is uploaded as one {', '.join(SUFFIXES)} file (a "
                            f"datasets folder is brought on the server: `{COMMAND}`)")
    return name


@contextmanager
def staged(data: bytes, file_name: str) -> Iterator[Path]:
    """The uploaded bytes as the file ``file_name`` alone in a new temporary folder (removed after)."""
    name = _file_name(file_name)
    refuse_size(len(data), name)
    with tempfile.TemporaryDirectory(prefix="structext-upload-") as folder:
        path = Path(folder) / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        yield path


def _refused(error: cli.LabSetCommandError, name: str) -> UploadRefused:
    """The check's refusal, said for an upload: a set naming images, a layout to map."""
    problems = error.problems
    imaged = [p for p in problems if _NO_IMAGE in p.message]
    if imaged:
        first = imaged[0].describe(name)
        return UploadRefused(f"{name} names images ({first}; {len(imaged)} such line(s)): a set with images "
                             "cannot be uploaded as a single file. Bring it with its images beside it on the "
                             f"server: `{COMMAND}`.", problems)
    mapping = next((m for p in problems if (m := layouts.suggested_mapping(p.message)) is not None), None)
    return UploadRefused(str(error), problems, mapping)


@dataclass
class Report:
    """What the check says of an uploaded set that can be imported."""

    file_name: str
    lines: list  # as ``labset check`` prints them
    formats: dict  # "multiple choice" / "short answer" -> count
    strata: list  # (value, count), by value
    strata_fields: list  # the metadata fields the strata were read from (as dataset.read_set chooses them)
    layout: str  # the layout recognised, as the check says it
    questions: list  # the first three items, as the question screen shows them
    read: dataset.ReadSet


def check_bytes(data: bytes, file_name: str, options: cli.Options) -> Report:
    """``labset check`` on uploaded bytes: the :class:`Report`, or an :class:`UploadRefused` naming
    every line at fault (with the mapping to write when the layout is not recognised)."""
    with staged(data, file_name) as path:
        try:
            read = cli.check_set(path, options, label=path.name)
        except cli.LabSetCommandError as error:
            raise _refused(error, path.name) from None
    items = read.items
    formats = Counter(item["format"] for item in items)
    lines = cli.check_report(path.name, read)
    layout = next((line.strip() for line in lines if line.strip().startswith("layout: ")), "")
    fields = [options.strata] if options.strata else []
    if read.layout.strata and (options.strata not in read.source.columns or options.strata in read.layout.strata):
        fields = list(read.layout.strata)  # the mapping's, as dataset.read_set reads them
    return Report(path.name, lines, {_FORMATS[k]: formats.get(k, 0) for k in _FORMATS},
                  sorted(Counter(item["stratum"] for item in items if item["stratum"]).items()), fields,
                  layout.removeprefix("layout: "), items[:3], read)


def import_bytes(data: bytes, file_name: str, options: cli.Options, name: str, folder: Path | None = None
                 ) -> cli.Imported:
    """``labset import`` on uploaded bytes: checked again and copied into ``folder`` (default: the sets
    folder) as ``name``, with its mapping beside it; an :class:`UploadRefused` (or the import's
    :class:`~structext_core.labset.cli.LabSetCommandError`), nothing written, on any problem, a set
    or another file of that name there already among them."""
    folder = study.sets_dir() if folder is None else Path(folder)
    name = (name or "").strip()
    with staged(data, file_name) as path:
        try:
            return cli.import_file(path, folder, name or path.name, options, label=path.name)
        except cli.LabSetCommandError as error:
            if error.problems:
                raise _refused(error, path.name) from None
            raise
