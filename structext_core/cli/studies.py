"""``structext study inspect-log``: a human-baseline study's answers as an Inspect AI eval log, for
any benchmark's study (:mod:`structext_core.studio.study.inspect_log`).

The study is named by its id or its name; ``--out`` is a new ``.eval`` or ``.json`` file, or a folder
(the log is named there as Inspect names its own). A file already there is never overwritten, and
nothing is written when the study has no counted answer or Inspect AI is not installed (the
extra: ``pip install 'structext-studio[inspect]'``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from structext_core.text.words import plural


def find_study(db, named: str):
    """The study whose id or name is ``named`` (a ``StudyError`` listing a few names otherwise)."""
    from structext_core.studio import study
    every = study.list_studies(db)
    found = [s for s in every if s.name == named] or [s for s in every if named.isdigit() and s.id == int(named)]
    if not found:
        names = ", ".join(repr(s.name) for s in every[:10]) or "none yet"
        raise study.StudyError(f"no study is named or numbered {named[:80]!r} (studies: {names})")
    return found[0]


def cmd_inspect_log(args: argparse.Namespace) -> int:
    from structext_core.cli.main import UsageError
    from structext_core.cli.progress import ProgressLine
    from structext_core.studio import storage, study
    db_path = Path(args.db) if args.db else storage.default_db_path()
    if not db_path.is_file():
        raise UsageError(f"--db {db_path}: no such database file")
    progress = ProgressLine("writing the log", total=1)
    try:
        with storage.opened(db_path) as db:
            chosen = find_study(db, args.study)
            path = study.write_inspect_log(db, chosen.id, args.out)
            answers = len(study.responses_frame(db, chosen.id))
        progress(1)
    except study.StudyError as error:
        raise UsageError(str(error)) from None
    finally:
        progress.close()
    print(f"wrote {plural(answers, 'answer')} of study {chosen.name!r} as model human/{chosen.name} to {path}")
    return 0


def register(subparsers) -> None:
    """Add ``study inspect-log`` (every benchmark's studies)."""
    top = subparsers.add_parser("study", help="a human-baseline study's answers, for any benchmark")
    verbs = top.add_subparsers(dest="study_command", required=True)
    log = verbs.add_parser("inspect-log", help="write a study's answers as an Inspect AI eval log",
                           description=__doc__.split("\n\n")[1].replace("``", ""))
    log.add_argument("study", help="the study's name or id")
    log.add_argument("--out", required=True, help="a new .eval or .json file, or a folder")
    log.add_argument("--db", help="the database file (default: $STRUCTEXT_DB, else annotations/structext.db)")
    log.set_defaults(func=cmd_inspect_log)
