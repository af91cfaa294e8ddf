"""``labset import-task TASK``: a lab's Inspect task brought as a set, its people scored by the task's own scorer.

A lab that evaluates its models with Inspect AI holds its benchmark as a task (an ``@task`` function in
its own file, or in an installed package). Brought as a task, the set is what the task's models were
given: its dataset read through the task itself (the very samples, after its ``record_to_sample`` and
any ``shuffle_choices``, ids as Inspect's eval numbers them), and each answer scored by the task's own
scorer, reproduced exactly (:mod:`structext_core.labset.inspect_rules`):

- ``choice()`` (multiple choice): a person's answer by its letter, as the set's multiple-choice
  questions always are; every sample must have options.
- ``match(...)``, ``exact()``, ``includes(...)``, ``answer(...)``, ``pattern(...)``: the rule of the same
  name and parameters, written on every item (``metadata.answer_rule``); every sample a short answer.
- Any other scorer (model-graded, ``f1``, a lab's own ``@scorer``), several scorers, or none: refused,
  naming it: people could not be scored as the models were, and no other rule stands in for it.

TASK is named as Inspect's CLI names it: ``path/to/file.py@task_name``, ``file.py`` holding one task,
or ``package.module@task_name``; ``-T name=value`` are its arguments, read as ``inspect eval -T`` reads
them. The lab's code runs only in a child process (:mod:`structext_core.labset._task_child`: a
timeout, no standard input, its own process group, killed whole when late), never in the app's
process; this command is reached from the command line only.

The samples are written as a set in Inspect's JSONL form to a temporary folder, then imported as
``labset import`` imports a file (:func:`structext_core.labset.cli.import_set`: the same checks, never
over another set); beside the set, ``<set>.task.json`` records the task (its reference, arguments,
file and the file's sha256, its solvers) and its scorer (name and parameters) and the rule it maps to.
A sample whose input holds an image (or audio, video, files) is refused, naming it: such a set is
brought with ``labset import``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from structext_core import settings
from structext_core.labset import dataset, inspect_rules

#: How long the lab's task may take to load and give its samples (seconds).
TIMEOUT = 120.0
#: The most bytes the child may write (its JSON) and the most of its standard error kept.
MAX_OUTPUT = 200_000_000
SIDECAR = ".task.json"
#: Inspect's scorers reproduced by a rule of the same name (:mod:`structext_core.labset.inspect_rules`).
RULE_SCORERS = ("match", "exact", "includes", "answer", "pattern")


class TaskImportError(Exception):
    """Why the task cannot be brought, in one line; nothing was written."""


def task_sidecar(path) -> Path:
    """The record of the task a set was brought from: ``<set>.task.json``."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR)


def _sha256(path: str | None) -> str | None:
    if not path:
        return None
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError:
        return None


def run_child(spec: str, args: list[str], timeout: float = TIMEOUT, limit: int | None = None) -> dict:
    """What the child process says of the task ``spec`` with the ``-T`` texts ``args``
    (:mod:`structext_core.labset._task_child`); a :class:`TaskImportError` when it fails or is late."""
    env = dict(os.environ)
    root = str(settings.PROJECT_ROOT)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env.setdefault("INSPECT_DISPLAY", "none")
    limit = dataset.LIMITS["items"] if limit is None else limit
    command = [sys.executable, "-m", "structext_core.labset._task_child", spec, json.dumps(args), str(limit)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                   start_new_session=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise TaskImportError(f"{spec}: the task did not load within {timeout:g} seconds (stopped); "
                                  "nothing written") from None
        _kill_group(process)  # anything the lab's code left running
        out.seek(0)
        data = out.read(MAX_OUTPUT + 1)
        err.seek(0)
        tail = err.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
    if len(data) > MAX_OUTPUT:
        raise TaskImportError(f"{spec}: the task's samples are more than {MAX_OUTPUT:,} bytes; nothing written")
    try:
        result = json.loads(data)
    except ValueError:
        why = f" ({tail[-1][:300]})" if tail else ""
        raise TaskImportError(f"{spec}: the task's process ended without an answer (exit "
                              f"{process.returncode}){why}; nothing written") from None
    if not isinstance(result, dict) or not result.get("ok"):
        raise TaskImportError(f"{spec}: {result.get('error') if isinstance(result, dict) else result}; "
                              "nothing written")
    return result


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _short_name(name: str) -> str:
    return name.removeprefix("inspect_ai/")


def scorer_rule(scorer: dict) -> str:
    """The rule (canonical) reproducing the Inspect scorer ``{"name", "params"}``, or ``"choice"``; a
    :class:`TaskImportError` naming a scorer that is not reproduced."""
    name, params = scorer["name"], scorer.get("params") or {}
    short = _short_name(name)
    shown = f"{short}({', '.join(f'{k}={v!r}' for k, v in sorted(params.items()))})"
    if not name.startswith("inspect_ai/") or (short not in RULE_SCORERS and short != "choice"):
        raise TaskImportError(f"the task's scorer {name}() is not one of Inspect's scorers the app reproduces "
                              f"(choice, {', '.join(RULE_SCORERS)}): people could not be scored as its models "
                              "were; nothing written")
    if short == "choice":
        return "choice"
    try:
        if short == "exact":
            rule = "exact"
        elif short == "match":
            rule = f"match(location={params['location']}, ignore_case={_truth(params['ignore_case'])}, " \
                   f"numeric={_truth(params['numeric'])})"
        elif short == "includes":
            rule = f"includes(ignore_case={_truth(params['ignore_case'])})"
        elif short == "answer":
            rule = f"answer({params['pattern']})"
        else:
            rule = (f"pattern({params['pattern']}, ignore_case={_truth(params['ignore_case'])}, "
                    f"match_all={_truth(params['match_all'])})")
        parsed = inspect_rules.parse_rule(rule)
        if short == "pattern" and parsed.regex != params["pattern"]:
            raise ValueError("its regular expression cannot be written as a rule")
        return inspect_rules.key_rule(parsed)
    except (KeyError, TypeError, ValueError) as error:
        raise TaskImportError(f"the task's scorer {shown}: not reproduced ({error}); people could not be "
                              "scored as its models were; nothing written") from None


def _truth(value) -> str:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true or false")
    return "true" if value else "false"


def _ids(samples, limit: int = 5) -> str:
    """``sample 'a'`` or ``samples 'a', 'b' and 3 more``."""
    shown = ", ".join(repr(s["id"]) for s in samples[:limit])
    more = f" and {len(samples) - limit} more" if len(samples) > limit else ""
    return f"sample{'s' if len(samples) > 1 else ''} {shown}{more}"


def task_rule(found: dict) -> tuple[dict, str]:
    """(the task's one scorer, its rule or ``choice``), checked against its samples: ``choice()`` scores
    only samples with options, the other rules only short answers."""
    scorers = found["scorers"]
    if len(scorers) != 1:
        names = ", ".join(_short_name(s["name"]) for s in scorers)
        raise TaskImportError(f"the task has {len(scorers)} scorers{': ' + names if names else ''}; one of Inspect's "
                              f"scorers the app reproduces (choice, {', '.join(RULE_SCORERS)}) is needed to score "
                              "people as its models were; nothing written")
    (scorer,) = scorers
    rule = scorer_rule(scorer)
    samples = found["samples"]
    if rule == "choice":
        wrong = [s for s in samples if not s["choices"]]
        how = "no options, but the task scores by choice() (a multiple-choice letter)"
    else:
        wrong = [s for s in samples if s["choices"]]
        how = (f"options, but the task scores by {_short_name(scorer['name'])}(): a person's answer "
               "would be scored by its letter, not as the models' replies were")
    if wrong:
        raise TaskImportError(f"{_ids(wrong)}: {how}; nothing written")
    clash = [s for s in samples if rule != "choice" and "answer_rule" in s["metadata"]
             and s["metadata"]["answer_rule"] != rule]
    if clash:
        raise TaskImportError(f"{_ids(clash)}: metadata.answer_rule is the lab's own field, where the "
                              "set keeps the task's scorer's rule; nothing written")
    return scorer, rule


def records(samples: list[dict], rule: str) -> list[dict]:
    """The samples as lines of an Inspect-form JSONL set, each short answer carrying ``rule``."""
    out = []
    for sample in samples:
        record = {"id": sample["id"], "input": sample["input"], "target": sample["target"]}
        if sample["choices"]:
            record["choices"] = sample["choices"]
        metadata = dict(sample["metadata"])
        if rule != "choice":
            metadata["answer_rule"] = rule
        if metadata:
            record["metadata"] = metadata
        out.append(record)
    return out


def bring(spec: str, args: list[str], folder: Path, name: str | None = None, timeout: float = TIMEOUT,
          strata: str | None = "subject") -> tuple[Path, list[dict], dict]:
    """Bring the task ``spec`` into ``folder``: (the set's path, its items, the task's record). A
    :class:`TaskImportError` (nothing written) or a ``cli.LabSetCommandError`` from the import."""
    from structext_core.labset import cli
    where = spec.rpartition("@")[0] if "@" in spec else spec
    before = _sha256(where) if os.path.isfile(where) else None
    found = run_child(spec, args, timeout)
    if found["problems"]:
        more = f" (and {len(found['problems']) - 1} more)" if len(found["problems"]) > 1 else ""
        raise TaskImportError(f"{spec}: {found['problems'][0]}{more}; nothing written")
    scorer, rule = task_rule(found)
    file_sha = _sha256(found.get("file"))
    if before is not None and before != file_sha:
        raise TaskImportError(f"{where}: the task's file changed while it was read; nothing written")
    name = name or f"{found['name']}.jsonl"
    if Path(name).name != name or not name.endswith(".jsonl") or name.endswith((".mapping.json", SIDECAR)):
        raise TaskImportError(f"--name {name!r}: a file name, without folders, ending .jsonl")
    target = folder / name
    beside = task_sidecar(target)
    if beside.exists() or beside.is_symlink():
        raise TaskImportError(f"{beside}: a set of that name is there already (nothing written; import it under "
                              "another name with --name)")
    record = {"task": spec, "args": found["args"], "task_name": found["task_name"], "version": found["version"],
              "file": found.get("file"), "file_sha256": file_sha, "solvers": found["solvers"],
              "scorer": {"name": scorer["name"], "params": scorer["params"]}, "rule": rule,
              "samples": len(found["samples"])}
    with tempfile.TemporaryDirectory() as temporary:
        path = Path(temporary) / name
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(found["samples"], rule)),
                        encoding="utf-8")
        try:
            read = dataset.read_set(path, strata_key=strata, keep=True)
        except dataset.LabSetError as error:
            raise TaskImportError(f"{spec}: its samples are not a set the app reads, nothing written:\n{error}") \
                from None
        folder.mkdir(parents=True, exist_ok=True)
        written = cli.import_set(path, read, folder, name, strata=strata)
    made: list[Path] = []
    try:
        cli._write_inside(folder, beside.name, json.dumps(record, ensure_ascii=False, indent=1).encode(), made)
    except OSError as error:
        for there in written + made:
            there.unlink(missing_ok=True)
        raise TaskImportError(f"{beside}: cannot be written ({error}); nothing is left of the set") from None
    return target, read.items, record


def run_import_task(args) -> int:
    """``labset import-task TASK [-T name=value ...] [--name SET.jsonl] [--to FOLDER]``."""
    from structext_core.labset import cli, study
    from structext_core.text.words import plural
    folder = Path(args.to) if args.to else study.sets_dir()
    try:
        target, items, record = bring(args.task, args.T or [], folder, args.name, args.timeout, args.strata)
    except (TaskImportError, cli.LabSetCommandError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    scorer = _short_name(record["scorer"]["name"])
    print(f"{target}: imported from the task {record['task']} ({plural(len(items), 'question')}); Study admin "
          f"offers it as {target.name!r}; people are scored as its {scorer}() scorer scored its models")
    for line in cli.summary(items):
        print(f"  {line}")
    print(f"  the task recorded in {task_sidecar(target).name}")
    return 0


def register(verbs) -> None:
    """Add the verb ``import-task`` to ``labset``."""
    verb = verbs.add_parser("import-task", help="bring a lab's Inspect task: its samples as the models saw them, "
                                                "people scored by its own scorer",
                            description=__doc__.split("\n\n")[0])
    verb.add_argument("task", help="FILE.py@TASK, FILE.py (one @task), or package.module@TASK, as Inspect names it")
    verb.add_argument("-T", action="append", metavar="NAME=VALUE", help="a task argument, as inspect eval -T reads it")
    verb.add_argument("--name", help="the set's file name in the sets folder (default: <task>.jsonl)")
    verb.add_argument("--to", help="the sets folder (default: <STRUCTEXT_DATA_DIR>/labsets)")
    verb.add_argument("--strata", default="subject", help="the metadata field that holds an item's stratum "
                                                          "(default: subject)")
    verb.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds the task may take to load "
                                                                     f"(default: {TIMEOUT:g})")
    verb.set_defaults(func=run_import_task)
