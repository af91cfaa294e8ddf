"""``structext labset check|import``: a lab's question set checked, and brought into the app's sets folder.

``check FILE`` reads the set as the app does (:func:`structext_core.labset.dataset.read_set`: JSONL,
JSON, CSV, Parquet, an Arrow stream or a ``datasets`` folder, in a layout recognised or mapped; every
problem with its line and field, exit 2), decodes each distinct image once in a sandbox worker, and
says what it holds: questions by format, with images, strata, its layout and how its answers are
scored. ``import FILE`` checks it the same way, then writes the very bytes it checked (the set's file,
every image it names at the same paths relative to it, and its mapping as ``<set>.mapping.json``)
into the sets folder (``<STRUCTEXT_DATA_DIR>/labsets``, where Study admin and Results find it). Every
file is read once, without following links, and written new (never over a file, never through a
link). Nothing is written when the set has a problem, when a set of that name is there already, or
when another file lies where one of its images would go (a file with the same bytes is left as it
is); a copy that fails half-way is taken back, so the folder holds the whole set or none of it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from structext_core.evaluation.matching import Problem
from structext_core.labset import dataset, inspect_rules, layouts, member, readers, study
from structext_core.labset import images as lab_images
from structext_core.text.words import plural

#: The metadata field the app reads a set's strata from unless its mapping names others.
DEFAULT_STRATA = "subject"


class LabSetCommandError(Exception):
    """What is wrong and where; nothing was written. ``problems``: the set's lines and fields at fault
    (:class:`~structext_core.evaluation.matching.Problem`), when it was read."""

    def __init__(self, message: str, problems: list | None = None):
        super().__init__(message)
        self.problems = list(problems or [])


@dataclass(frozen=True)
class Options:
    """How a set is read, as the command line's options say: ``--rule``, ``--strata``, the mapping
    (``--map`` / ``--mapping``), ``--split``, ``--seed``."""

    rule: str = "normalised"
    strata: str | None = DEFAULT_STRATA
    mapping: layouts.Mapping | None = None
    split: str | None = None
    seed: int | None = None


def options_of(args) -> Options:
    """The :class:`Options` of parsed ``labset`` arguments."""
    return Options(args.rule, args.strata, _mapping(args), args.split, args.seed)


def _mapping(args) -> layouts.Mapping | None:
    base = None
    if getattr(args, "mapping", None):
        try:
            base = json.loads(readers.open_nofollow(Path(args.mapping), 100_000))
        except (OSError, ValueError) as error:
            raise LabSetCommandError(f"--mapping {args.mapping}: cannot be read ({error})") from None
    if base is None and not getattr(args, "map", None):
        return None
    try:
        return layouts.Mapping.from_args(args.map or [], base if base is not None else {})
    except layouts.MappingError as error:
        raise LabSetCommandError(f"the mapping: {error}") from None


def decode_images(read: dataset.ReadSet) -> list[Problem]:
    """Each distinct image of the set decoded fully once, in a sandbox worker (its perceptual hash
    put on the items naming it): :func:`structext_core.labset.images.decode_images`."""
    try:
        return lab_images.decode_images(read)
    except lab_images.ImageChanged as error:
        raise LabSetCommandError(str(error)) from None


def _reread(read: dataset.ReadSet, found: dataset.Image) -> bytes:
    """An image not kept in memory, read again: only the bytes checked (the same sha256) are used."""
    try:
        return lab_images.reread(read, found)
    except lab_images.ImageChanged as error:
        raise LabSetCommandError(str(error)) from None


def check_set(path: Path, options: Options, keep: bool = False, label: str | None = None) -> dataset.ReadSet:
    """The set at ``path`` read and checked as ``labset check`` does (:func:`dataset.read_set`, then
    each image decoded in a sandbox worker); a :class:`LabSetCommandError` naming every line at fault
    otherwise. ``keep``: keep the images' bytes (to copy them); ``label``: how messages name the set
    (default: its path)."""
    label = str(path) if label is None else label
    if not path.exists() and not path.is_symlink():
        raise LabSetCommandError(f"{label}: no such file")
    if not readers.is_datasets_folder(path) and path.suffix.lower() not in study.SET_SUFFIXES:
        raise LabSetCommandError(f"{label}: a set is a {', '.join(study.SET_SUFFIXES)} file or a datasets folder "
                                 "(save_to_disk)")
    try:
        read = dataset.read_set(path, rule=options.rule, strata_key=options.strata, mapping=options.mapping,
                                split=options.split, seed=options.seed, keep=keep)
        problems = decode_images(read)
        if problems:
            raise dataset.LabSetError(path.name, problems)
    except dataset.LabSetError as error:
        raise LabSetCommandError(f"{label}: not imported, nothing written:\n{error}", error.problems) from None
    return read


def check_report(label: str, read: dataset.ReadSet) -> list[str]:
    """What ``labset check`` prints of a set that can be imported, a line a fact."""
    return [f"{label}: can be imported", *(f"  {line}" for line in summary(read.items, read))]


def summary(items: list[dict], read: dataset.ReadSet | None = None) -> list[str]:
    """What a set holds, a line a fact, as ``check`` prints it."""
    formats = Counter(item["format"] for item in items)
    strata = Counter(item["stratum"] for item in items if item["stratum"])
    lines = [f"{plural(len(items), 'question')}: {formats['choice']} multiple choice, {formats['short']} short "
             f"answer; {sum(1 for item in items if item['image'])} on an image"]
    if strata:
        shown = ", ".join(f"{name} {count}" for name, count in sorted(strata.items())[:20])
        lines.append(f"{plural(len(strata), 'stratum', 'strata')}: {shown}" + (" ..." if len(strata) > 20 else ""))
    else:
        lines.append("no strata (no item has the strata field in its metadata)")
    lines += [f"scored: {sentence}" for sentence in member.describe_rules(items)]
    if read is not None:
        layout = read.layout
        parts = [f"{name} {value if isinstance(value, str) else ', '.join(value)}" for name, value in
                 (("question", layout.question), ("options", layout.options), ("key", layout.key), ("id", layout.id))
                 if value]
        lines.append(f"layout: {layout.name}" + (f" ({'; '.join(parts)})" if parts else ""))
        if any(item.get("permutation") for item in items):
            lines.append(f"options shown in an order drawn from seed {read.seed} and each item's id, recorded "
                         "on each item (permutation)")
    return lines


def _write_inside(folder: Path, relative: str, data: bytes, made: list) -> Path:
    """Write ``data`` as the new file ``folder/relative``: folders made as needed, no part of the path
    followed as a link, never over a file (``O_EXCL``). ``made`` gets each file and folder made."""
    parts = Path(relative).parts
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    fd = os.open(folder, flags)
    try:
        here = folder
        for part in parts[:-1]:
            here = here / part
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
                made.append(here)
            except FileExistsError:
                pass
            inner = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd)
        made.append(here / parts[-1])
        with os.fdopen(out, "wb") as writing:
            writing.write(data)
        return here / parts[-1]
    finally:
        os.close(fd)


def _same_file(path: Path, data: bytes) -> bool:
    try:
        return readers.open_nofollow(path, len(data)) == data
    except (OSError, ValueError):
        return False


def _set_bytes(read: dataset.ReadSet) -> bytes:
    """The set's own file as checked; a datasets folder's split as one Arrow stream (its one file's bytes)."""
    files = read.source.files
    if len(files) == 1:
        return next(iter(files.values()))
    import pyarrow as pa
    tables = [pa.ipc.open_stream(pa.BufferReader(data)).read_all() for data in files.values()]
    sink = pa.BufferOutputStream()
    table = pa.concat_tables(tables)
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def import_set(source: Path, read: dataset.ReadSet, folder: Path, name: str, rule: str = "normalised",
               strata: str | None = "subject") -> list[Path]:
    """Write the checked set ``read`` (of ``source``) into ``folder`` as ``name``: the bytes checked of
    its images, then of the set, then its mapping; the files written. ``rule`` and ``strata``: as it
    was checked."""
    target = folder / name
    beside = dataset.sidecar(target)
    for there in (target, beside):
        if there.exists() or there.is_symlink():
            raise LabSetCommandError(f"{there}: a set of that name is there already (nothing written; "
                                     "import it under another name, --name on the command line)")
    plan = []
    for relative, found in sorted(read.images.found.items()):
        data = found.data if found.data is not None else _reread(read, found)
        there = folder / relative
        if there.exists() or there.is_symlink():
            if _same_file(there, data):
                continue  # the same image, brought by an earlier set: shared as it is
            raise LabSetCommandError(f"{there}: another file is there already, where the set's image "
                                     f"{relative!r} would go (nothing written)")
        plan.append((relative, data))
    sidecar = None
    kept = read.mapping.to_json() if read.mapping is not None else {}
    if strata and strata != DEFAULT_STRATA and not kept.get("strata") and any(item["stratum"] for item in read.items):
        kept["strata"] = [strata]  # the app reads the set with its default field: the one chosen is kept
    if kept or any(item.get("permutation") for item in read.items):
        sidecar = json.dumps({**kept, "seed": read.seed}, ensure_ascii=False, indent=1).encode("utf-8")
    made: list[Path] = []
    try:
        for relative, data in plan:
            _write_inside(folder, relative, data, made)
            del data
        _write_inside(folder, name, _set_bytes(read), made)
        if sidecar is not None:
            _write_inside(folder, beside.name, sidecar, made)
        dataset.read_set(target, rule=rule, strata_key=strata)  # the copy reads as the original did
    except (OSError, dataset.LabSetError) as error:
        for path in reversed(made):
            if path.is_dir() and not path.is_symlink():
                path.rmdir() if not any(path.iterdir()) else None
            else:
                path.unlink(missing_ok=True)
        raise LabSetCommandError(f"{target}: the copy failed ({error}); nothing is left of it") from None
    return [p for p in made if not p.is_dir()]


def run_check(args) -> int:
    path = Path(args.file)
    try:
        read = check_set(path, options_of(args))
    except LabSetCommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(check_report(str(path), read)))
    return 0


def _default_name(path: Path, args) -> str:
    if readers.is_datasets_folder(path):
        return f"{path.name}-{args.split}.arrow" if args.split else f"{path.name}.arrow"
    return path.name


@dataclass
class Imported:
    """A set imported: what was checked, the files written, and what ``labset import`` prints."""

    read: dataset.ReadSet
    written: list
    lines: list


def import_file(path: Path, folder: Path, name: str, options: Options, label: str | None = None) -> Imported:
    """``labset import``: the set at ``path`` checked (:func:`check_set`), then copied into ``folder``
    as ``name`` with its images and its mapping (:func:`import_set`); a :class:`LabSetCommandError`,
    nothing written, on any problem (a name that is no plain file name ending as the set does, a set
    or another file of that name there already). ``label``: how messages name the set."""
    suffix = ".arrow" if readers.is_datasets_folder(path) else path.suffix.lower()
    if Path(name).name != name or Path(name).suffix.lower() != suffix \
            or name.endswith((".mapping.json", ".task.json")) or name.startswith("."):
        raise LabSetCommandError(f"the name {name!r}: a file name, without folders, ending as the set does "
                                 f"({suffix})")
    read = check_set(path, options, keep=True, label=label)
    folder.mkdir(parents=True, exist_ok=True)
    written = import_set(path, read, folder, name, options.rule, options.strata)
    images = sum(1 for p in written if p.name != name and not p.name.endswith(".mapping.json"))
    lines = [f"{folder / name}: imported ({plural(len(read.items), 'question')}, "
             f"{plural(images, 'image')} copied); Study admin offers it as {name!r}",
             *(f"  {line}" for line in summary(read.items, read))]
    return Imported(read, written, lines)


def run_import(args) -> int:
    path = Path(args.file)
    folder = Path(args.to) if args.to else study.sets_dir()
    try:
        done = import_file(path, folder, args.name or _default_name(path, args), options_of(args))
    except LabSetCommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(done.lines))
    return 0


def _rule(text: str) -> str:
    """``--rule``'s value, checked (:func:`structext_core.labset.inspect_rules.parse_rule`)."""
    try:
        inspect_rules.parse_rule(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


EPILOG = """layouts recognised without a mapping:
  Inspect      input, choices, target (a letter), id, metadata (CSV: input, target, A..J)
  MMLU         question, choices (a list), answer (a letter or an index); or question, A..J, answer
  GPQA         Question, Correct Answer, Incorrect Answer 1..3 (options in a seeded order, --seed)
  columns      question, choice_a.. or option_1.., answer|target|label (a letter, an index or an option's text)
anything else, or a layout that is ambiguous (refused with the mapping to write), by a mapping:
  --map question=prompt --map options=opt1,opt2,opt3 --map key=gold:letter --map id=qid
  --map strata=subject,difficulty --map image=img --map ignore=notes
  key kinds: letter, index (from 0), index1 (from 1), text (an option's text), answers (short answers);
  options: a list of columns, or one field holding a list. --mapping FILE: the same as a JSON object,
  e.g. {"question": "prompt", "options": ["opt1", "opt2"], "key": "gold:letter", "strata": ["subject"]}.
  An import keeps the mapping beside the set as <set>.mapping.json; the app reads the set by it."""


def register(subparsers) -> None:
    """``labset check FILE`` and ``labset import FILE [--name] [--to]``, with the layout's options; ``labset
    import-task TASK`` (:mod:`structext_core.labset.inspect_task`)."""
    parser = subparsers.add_parser("labset", help="the lab's own benchmark: check a question set, import it",
                                   description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="labset_command", required=True, metavar="VERB")

    def common(verb: argparse.ArgumentParser) -> None:
        verb.add_argument("file", help="the set: .jsonl, .json, .csv, .parquet or .arrow, or a Hugging Face "
                                       "datasets folder (save_to_disk)")
        verb.add_argument("--rule", type=_rule, default="normalised", metavar="RULE",
                          help="how short answers are scored unless an item's metadata.answer_rule says "
                               f"(default: normalised): one of {', '.join(dataset.RULES)}, or any rule of the "
                               "syntax, e.g. 'match(location=any, numeric=true)' or 'pattern(ANSWER: (\\w+))' "
                               "(docs/reference/scoring.md)")
        verb.add_argument("--strata", default="subject",
                          help="the metadata field that holds an item's stratum (default: subject; else the "
                               "mapping's first strata field)")
        verb.add_argument("--map", action="append", metavar="NAME=VALUE",
                          help="which field holds what: question, options (columns separated by commas, or "
                               "one list field), key (FIELD or FIELD:KIND), id, image, strata, ignore, seed "
                               "(repeat it; over --mapping)")
        verb.add_argument("--mapping", metavar="FILE", help="the mapping as a JSON file (see below)")
        verb.add_argument("--split", help="a datasets folder of several splits: the one read (default: test)")
        verb.add_argument("--seed", type=int, help="the seed of the options' order in a GPQA-like set "
                                                   "(default: the mapping's, else 0)")

    formatter = argparse.RawDescriptionHelpFormatter
    check = verbs.add_parser("check", help="check a set as the app reads it and say what it holds",
                             epilog=EPILOG, formatter_class=formatter)
    common(check)
    check.set_defaults(func=run_check)
    imported = verbs.add_parser("import", help="check a set, then copy it and its images into the sets folder",
                                epilog=EPILOG, formatter_class=formatter)
    common(imported)
    imported.add_argument("--name", help="the set's file name in the sets folder (default: the file's own; a "
                                         "datasets folder: <folder>[-<split>].arrow)")
    imported.add_argument("--to", help="the sets folder (default: <STRUCTEXT_DATA_DIR>/labsets)")
    imported.set_defaults(func=run_import)
    from structext_core.labset import inspect_task
    inspect_task.register(verbs)
