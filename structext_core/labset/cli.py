"""``structext labset check|import``: a lab's question set checked, and brought into the app's sets folder.

``check FILE`` reads the set as the app does (:func:`structext_core.labset.dataset.load_set`: every
problem with its line and field, exit 2) and says what it holds: questions by format, with images,
strata, and how its answers are scored. ``import FILE`` checks it the same way, then copies the file
and every image it names (at the same paths relative to it) into the sets folder
(``<STRUCTEXT_DATA_DIR>/labsets``, where Study admin and Results find it). Nothing is copied when the
set has a problem, when a set of that name is there already, or when another file lies where one of
its images would go (a file with the same bytes is left as it is); a copy that fails half-way is
taken back, so the folder holds the whole set or none of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

from structext_core.labset import dataset, inspect_rules, member, study
from structext_core.text.words import plural


class LabSetCommandError(Exception):
    """What is wrong and where; nothing was written."""


def _load(path: Path, rule: str, strata: str | None) -> list[dict]:
    if not path.is_file():
        raise LabSetCommandError(f"{path}: no such file")
    if path.suffix.lower() not in study.SET_SUFFIXES:
        raise LabSetCommandError(f"{path}: a set is a {', '.join(study.SET_SUFFIXES)} file")
    try:
        return dataset.load_set(path, rule=rule, strata_key=strata)
    except dataset.LabSetError as error:
        raise LabSetCommandError(f"{path}: not imported, nothing written:\n{error}") from None


def summary(items: list[dict]) -> list[str]:
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
    return lines


def import_set(source: Path, items: list[dict], folder: Path, name: str, rule: str = "normalised",
               strata: str | None = "subject") -> list[Path]:
    """Copy the checked set at ``source`` and its images into ``folder`` as ``name``; the files written
    (the images, then the set). ``rule`` and ``strata``: as it was checked."""
    target = folder / name
    if target.exists():
        raise LabSetCommandError(f"{target}: a set of that name is there already (nothing written; "
                                 "import it under another name with --name)")
    images = sorted({item["image"] for item in items if item["image"]})
    plan = []
    for relative in images:
        there = folder / relative
        if there.exists() or there.is_symlink():
            if there.is_file() and not there.is_symlink() \
                    and there.read_bytes() == (source.parent / relative).read_bytes():
                continue  # the same image, brought by an earlier set: shared as it is
            raise LabSetCommandError(f"{there}: another file is there already, where the set's image "
                                     f"{relative!r} would go (nothing written)")
        plan.append(relative)
    written: list[Path] = []
    try:
        for relative in plan:
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            _copy_new(source.parent / relative, folder / relative)
            written.append(folder / relative)
        _copy_new(source, target)
        written.append(target)
        dataset.load_set(target, rule=rule, strata_key=strata)  # the copy reads as the original did
    except (OSError, dataset.LabSetError) as error:
        for path in reversed(written):
            path.unlink(missing_ok=True)
        raise LabSetCommandError(f"{target}: the copy failed ({error}); nothing is left of it") from None
    return written


def _copy_new(source: Path, target: Path) -> None:
    """Copy ``source`` to the new file ``target`` (never over a file: ``x`` mode)."""
    with source.open("rb") as reading, target.open("xb") as writing:
        shutil.copyfileobj(reading, writing)
    os.chmod(target, 0o644)


def run_check(args) -> int:
    path = Path(args.file)
    try:
        items = _load(path, args.rule, args.strata)
    except LabSetCommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{path}: can be imported")
    for line in summary(items):
        print(f"  {line}")
    return 0


def run_import(args) -> int:
    path = Path(args.file)
    folder = Path(args.to) if args.to else study.sets_dir()
    name = args.name or path.name
    try:
        if Path(name).name != name or Path(name).suffix.lower() != path.suffix.lower():
            raise LabSetCommandError(f"--name {name!r}: a file name, without folders, ending as the set "
                                     f"does ({path.suffix})")
        items = _load(path, args.rule, args.strata)
        folder.mkdir(parents=True, exist_ok=True)
        written = import_set(path, items, folder, name, args.rule, args.strata)
    except LabSetCommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{folder / name}: imported ({plural(len(items), 'question')}, "
          f"{plural(len(written) - 1, 'image')} copied); Study admin offers it as {name!r}")
    for line in summary(items):
        print(f"  {line}")
    return 0


def _rule(text: str) -> str:
    """``--rule``'s value, checked (:func:`structext_core.labset.inspect_rules.parse_rule`)."""
    try:
        inspect_rules.parse_rule(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def register(subparsers) -> None:
    """``labset check FILE`` and ``labset import FILE [--name] [--to]``."""
    parser = subparsers.add_parser("labset", help="the lab's own benchmark: check a question set, import it",
                                   description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="labset_command", required=True, metavar="VERB")

    def common(verb: argparse.ArgumentParser) -> None:
        verb.add_argument("file", help="the set: JSONL, CSV or an Inspect AI dataset file (.jsonl, .json, .csv)")
        verb.add_argument("--rule", type=_rule, default="normalised", metavar="RULE",
                          help="how short answers are scored unless an item's metadata.answer_rule says "
                               f"(default: normalised): one of {', '.join(dataset.RULES)}, or any rule of the "
                               "syntax, e.g. 'match(location=any, numeric=true)' or 'pattern(ANSWER: (\\w+))' "
                               "(docs/reference/scoring.md)")
        verb.add_argument("--strata", default="subject",
                          help="the metadata field that holds an item's stratum (default: subject)")

    check = verbs.add_parser("check", help="check a set as the app reads it and say what it holds")
    common(check)
    check.set_defaults(func=run_check)
    imported = verbs.add_parser("import", help="check a set, then copy it and its images into the sets folder")
    common(imported)
    imported.add_argument("--name", help="the set's file name in the sets folder (default: the file's own)")
    imported.add_argument("--to", help="the sets folder (default: <STRUCTEXT_DATA_DIR>/labsets)")
    imported.set_defaults(func=run_import)
