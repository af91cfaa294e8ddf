"""``structext study``: human-baseline studies from a script, for any benchmark.

``study create`` opens a study over one of a benchmark's item files (its shared place,
:mod:`structext_core.evaluation.item_sets`) with the same checks as the lead's form;
``study add-annotators`` gives it more people; ``study close`` and ``study reopen`` end or resume
answering. ``study inspect-log`` writes a study's answers as an Inspect AI eval log
(:mod:`structext_core.studio.study.inspect_log`).

The study is named by its id or its name; ``--out`` is a new ``.eval`` or ``.json`` file, or a folder
(the log is named there as Inspect names its own). A file already there is never overwritten, and
nothing is written when the study has no counted answer or Inspect AI is not installed (the
extra ``.[inspect]``, which ``bash start.sh`` installs). An ``--out`` in a system folder (/proc, /sys,
/dev, /etc, /usr, ...) is refused, and so is a ``--db`` that is not a database of this app.
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


def _database(args) -> Path:
    """The database file of ``--db`` (or the default), once :func:`~structext_core.cli.safe_paths.check_our_database`
    has found it is ours: another program's SQLite file, a text file or a system file is refused before
    it is opened (opening migrates, which would write our tables into it)."""
    from structext_core.cli.safe_paths import check_our_database
    from structext_core.studio import storage
    return check_our_database(Path(args.db) if args.db else storage.default_db_path())


def _opened(args):
    from structext_core.studio import storage
    return storage.opened(_database(args))


def _people(db, names) -> list[dict]:
    """The annotator accounts named ``names`` (a ``StudyError`` naming each one that is none)."""
    from structext_core.studio import accounts, study
    found, missing = [], []
    for name in names:
        user = accounts.get_user(db, name)
        (found.append(user) if user is not None and user["role"] == "annotator" else missing.append(name))
    if missing:
        raise study.StudyError(f"no annotator account named {', '.join(repr(n[:80]) for n in missing)}")
    return found


def cmd_create(args: argparse.Namespace) -> int:
    from structext_core import protocol
    from structext_core.cli.main import UsageError
    from structext_core.evaluation import item_sets
    from structext_core.studio import study
    try:
        member = protocol.get_module(args.benchmark)
    except KeyError as error:
        raise UsageError(f"--benchmark: {error.args[0]}") from None
    if protocol.declared_study(member) is None or not callable(getattr(member, "load_items", None)):
        raise UsageError(f"--benchmark {args.benchmark}: {member.DISPLAY_NAME} reads no item files; open its "
                         "studies on Study admin")
    try:
        with _opened(args) as db:
            people = _people(db, args.annotator)
            items = item_sets.load(args.benchmark, args.items, for_study=True)
            study_id = study.create_items_study(
                db, benchmark=args.benchmark, name=args.name, source=args.items, items=items,
                n_items=args.questions, annotator_ids=[p["id"] for p in people], rule_text=args.rule,
                seed=args.seed, show_correctness=args.show_correctness, practice_items=args.practice,
                gold_items=args.gold, gold_pass=args.gold_pass / 100)
    except (study.StudyError, ValueError) as error:
        raise UsageError(f"no study was created: {error}") from None
    print(f"created study {args.name.strip()!r} (id {study_id}): {plural(args.questions, 'question')} of "
          f"{args.items} for {plural(len(people), 'annotator')}")
    return 0


def cmd_add_annotators(args: argparse.Namespace) -> int:
    from structext_core.cli.main import UsageError
    from structext_core.studio import study
    try:
        with _opened(args) as db:
            chosen = find_study(db, args.study)
            people = _people(db, args.annotator)
            for person in people:
                study.add_annotator(db, chosen.id, person["id"])
    except study.StudyError as error:
        raise UsageError(str(error)) from None
    print(f"{plural(len(people), 'annotator')} added to study {chosen.name!r}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from structext_core.cli.main import UsageError
    from structext_core.studio import study
    status = "closed" if args.study_command == "close" else "open"
    try:
        with _opened(args) as db:
            chosen = find_study(db, args.study)
            study.set_study_status(db, chosen.id, status)
    except study.StudyError as error:
        raise UsageError(str(error)) from None
    print(f"study {chosen.name!r} is {status}")
    return 0


def cmd_inspect_log(args: argparse.Namespace) -> int:
    from structext_core.cli.main import UsageError
    from structext_core.cli.progress import ProgressLine
    from structext_core.cli.safe_paths import refuse_system_path
    from structext_core.studio import storage, study
    refuse_system_path(args.out, "--out")
    db_path = _database(args)
    progress = ProgressLine("writing the log", total=1)
    try:
        with storage.opened(db_path) as db:
            chosen = find_study(db, args.study)
            path = study.write_inspect_log(db, chosen.id, args.out)
            answers = len(study.responses_frame(db, chosen.id))
        progress(1)
    except study.StudyError as error:
        raise UsageError(str(error)) from None
    except OSError as error:  # a folder one may not write in, a full disk: said, not a traceback
        where = f" ({error.filename})" if error.filename else ""
        raise UsageError(f"--out {str(args.out)[:200]!r}: the log could not be written{where}: "
                         f"{error.strerror or error}; nothing was written") from None
    finally:
        progress.close()
    print(f"wrote {plural(answers, 'answer')} of study {chosen.name!r} as model human/{chosen.name} to {path}")
    return 0


def register(subparsers) -> None:
    """Add ``study create|add-annotators|close|reopen|inspect-log`` (every benchmark's studies)."""
    top = subparsers.add_parser("study", help="human-baseline studies of any benchmark, from a script")
    verbs = top.add_subparsers(dest="study_command", required=True)
    db_help = "the database file (default: $STRUCTEXT_DB, else annotations/structext.db)"
    create = verbs.add_parser("create", help="open a study over one of a benchmark's item files",
                              description="Open a study over one of a benchmark's item files (in its folder under "
                                          "the data folder), with the checks of the lead's form on Study admin.")
    create.add_argument("name", help="the study's name")
    create.add_argument("--benchmark", required=True, help="the benchmark's name (see --help of items score)")
    create.add_argument("--items", required=True, help="the item file's name in the benchmark's folder")
    create.add_argument("--questions", type=int, required=True, help="how many counted questions to draw")
    create.add_argument("--annotator", action="append", default=[], metavar="NAME",
                        help="an annotator's account name (repeat for more)")
    create.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    create.add_argument("--rule", default="Answer on your own, without help.",
                        help="the rule shown before the first question")
    create.add_argument("--practice", type=int, default=0, help="practice questions, answered first, not counted")
    create.add_argument("--gold", type=int, default=0, help="gold questions, mixed in, not counted")
    create.add_argument("--gold-pass", type=float, default=50, help="the gold pass mark in percent (default 50)")
    create.add_argument("--show-correctness", action="store_true",
                        help="tell annotators after each answer whether it was right")
    create.add_argument("--db", help=db_help)
    create.set_defaults(func=cmd_create)
    add = verbs.add_parser("add-annotators", help="give a study more annotators")
    add.add_argument("study", help="the study's name or id")
    add.add_argument("annotator", nargs="+", help="annotators' account names")
    add.add_argument("--db", help=db_help)
    add.set_defaults(func=cmd_add_annotators)
    for verb, says in (("close", "close a study: no more answers"), ("reopen", "open a closed study again")):
        status = verbs.add_parser(verb, help=says)
        status.add_argument("study", help="the study's name or id")
        status.add_argument("--db", help=db_help)
        status.set_defaults(func=cmd_status)
    log = verbs.add_parser("inspect-log", help="write a study's answers as an Inspect AI eval log",
                           description=__doc__.split("\n\n")[1].replace("``", ""))
    log.add_argument("study", help="the study's name or id")
    log.add_argument("--out", required=True, help="a new .eval or .json file, or a folder")
    log.add_argument("--db", help="the database file (default: $STRUCTEXT_DB, else annotations/structext.db)")
    log.set_defaults(func=cmd_inspect_log)
