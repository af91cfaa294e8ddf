"""The child process of ``labset import-task`` (:mod:`structext_core.labset.inspect_task`): the only place
a lab's task code runs. Never imported by the app; run as ``python -m structext_core.labset._task_child
SPEC ARGS LIMIT`` with ``ARGS`` a JSON list of ``name=value`` texts (Inspect's ``-T``).

It loads the task with Inspect's own loader, as ``inspect eval SPEC -T ...`` does (a file's ``@task``
created in the file's folder; ``package.module@name``: the module imported, its ``@task`` created by
its registry name), reads ``task.dataset`` (the samples after the task's ``record_to_sample`` and any
``shuffle_choices``: what its models were given, ids given by Inspect's own numbering where a sample
has none) and describes its scorers (registry name and parameters, every default spelt out) and its
solvers. It writes one JSON object to its standard output, ``{"ok": true, ...}`` or ``{"ok": false,
"error": ...}``; whatever the lab's code prints goes to standard error. Only the standard library and
Inspect are imported here.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

from structext_core.text.words import plural


class Refused(Exception):
    """What is wrong with the task, in one line."""


def _jsonable(value):
    return json.loads(json.dumps(value, default=lambda o: repr(o)[:200]))


def _name(obj) -> str:
    from inspect_ai._util.registry import is_registry_object, registry_info
    if is_registry_object(obj):
        return registry_info(obj).name
    return getattr(obj, "__qualname__", type(obj).__name__)


def _task_files(path: str) -> list[str]:
    from pathlib import Path

    from inspect_ai import list_tasks
    return [info.name for info in list_tasks(os.path.basename(path), root_dir=Path(path).parent)]


def _check_params(name: str, args: dict) -> None:
    from inspect_ai._util.registry import registry_info, registry_lookup
    found = registry_lookup("task", name)
    if found is None:
        raise Refused(f"no @task named {name!r}")
    params = registry_info(found).metadata.get("params") or []
    unknown = [key for key in args if key not in params]
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in _signature(found).parameters.values()):
        raise Refused(f"-T {unknown[0]}: the task {name!r} takes no such parameter (its parameters: "
                      f"{', '.join(params) or 'none'})")


def _signature(fn):
    import inspect
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return inspect.Signature()


def load(spec: str, args: dict):
    """(the task, the file its code is in, its @task name) of ``spec``."""
    from inspect_ai._eval.loader import create_file_tasks, load_file_tasks
    from inspect_ai._eval.registry import task_create
    from inspect_ai._util.registry import is_registry_object, registry_info
    where, _, name = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if where.endswith(".py") or os.path.sep in where or os.path.exists(where):
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise Refused("no such file")
        names = _task_files(path)
        if not name:
            if len(names) != 1:
                raise Refused(f"the file holds {'no @task' if not names else 'several tasks: ' + ', '.join(names)}; "
                              "name one as FILE.py@TASK")
            name = names[0]
        elif name not in names:
            raise Refused(f"no @task named {name!r} in the file (its tasks: {', '.join(names) or 'none'})")
        from pathlib import Path
        load_file_tasks(Path(path))
        _check_params(name, args)
        (task,) = create_file_tasks(Path(path), [name], args)
        return task, path, name
    if not name:
        raise Refused("name a task as FILE.py@TASK, FILE.py, or package.module@TASK")
    import importlib
    try:
        module = importlib.import_module(where)
    except ModuleNotFoundError as error:
        raise Refused(f"neither a file nor an importable module ({error})") from None
    found = getattr(module, name, None)
    if found is None or not is_registry_object(found, "task"):
        raise Refused(f"no @task named {name!r} in the module {where}")
    registered = registry_info(found).name
    _check_params(registered, args)
    return task_create(registered, **args), getattr(module, "__file__", None), name


def _input(sample, problems: list):
    if isinstance(sample.input, str):
        return sample.input
    messages = []
    for message in sample.input:
        if message.role not in ("system", "user", "assistant"):
            problems.append(f"sample {sample.id!r}: a {message.role} message in its input (only system, user and "
                            "assistant messages are shown to people)")
            return None
        content = message.content
        if isinstance(content, str):
            messages.append({"role": message.role, "content": content})
            continue
        parts = []
        for part in content:
            if part.type == "text":
                parts.append({"type": "text", "text": part.text})
            else:
                how = (" (a set with images is brought with `labset import`, its images as files beside it)"
                       if part.type == "image" else "")
                problems.append(f"sample {sample.id!r}: its input holds {part.type} content, not brought by "
                                f"import-task{how}")
                return None
        messages.append({"role": message.role, "content": parts})
    return messages


def samples(task, limit: int) -> tuple[list[dict], list[str]]:
    """The task's samples as Inspect gives them to its models, ids numbered as its eval numbers them."""
    out, problems, seen, auto = [], [], set(), 0
    for sample in task.dataset:
        if len(out) >= limit:
            problems.append(f"the task's dataset holds more than {plural(limit, 'sample')}")
            break
        if sample.id is None:  # Inspect's eval numbers a sample without an id so (its run.py)
            auto += 1
            while str(auto) in seen:
                auto += 1
            sample.id = auto
        seen.add(str(sample.id))
        if sample.files or sample.setup:
            problems.append(f"sample {sample.id!r}: gives the model files or a setup script people would not see")
            continue
        given = _input(sample, problems)
        if given is None:
            continue
        out.append({"id": sample.id, "input": given, "choices": list(sample.choices) if sample.choices else None,
                    "target": sample.target, "metadata": _jsonable(sample.metadata or {})})
    return out, problems


def scorer(obj) -> dict:
    """A scorer's registry name and its parameters, each default of its factory filled in."""
    from inspect_ai._util.registry import is_registry_object, registry_info, registry_lookup, registry_params
    if not is_registry_object(obj):
        return {"name": _name(obj), "params": {}}
    name = registry_info(obj).name
    params = {}
    factory = registry_lookup("scorer", name)
    for key, parameter in _signature(factory).parameters.items() if factory is not None else ():
        if parameter.default is not parameter.empty and parameter.kind != parameter.VAR_KEYWORD:
            params[key] = parameter.default
    params.update(registry_params(obj))
    return {"name": name, "params": _jsonable(params)}


def solvers(task) -> list[str]:
    solver = task.solver
    try:
        return [_name(s) for s in solver]  # a chain
    except TypeError:
        return [_name(solver)]


def main(argv: list[str]) -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the lab's prints go to standard error
    sys.stdout = sys.stderr
    try:
        spec, raw_args, limit = argv[1], json.loads(argv[2]), int(argv[3])
        from inspect_ai._util.config import parse_cli_args
        args = parse_cli_args(raw_args)
        task, path, name = load(spec, args)
        found, problems = samples(task, limit)
        scorers = [scorer(s) for s in (task.scorer or [])]
        result = {"ok": True, "name": name, "task_name": task.name, "version": _jsonable(task.version),
                  "args": _jsonable(args), "file": path, "samples": found, "problems": problems,
                  "scorers": scorers, "solvers": solvers(task)}
    except Refused as error:
        result = {"ok": False, "error": str(error)}
    except BaseException as error:  # the lab's code raised: its last frame, in one line
        frames = traceback.extract_tb(error.__traceback__)
        at = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
        message = " ".join(str(error).split())[:300]
        result = {"ok": False, "error": f"the task's code raised {type(error).__name__}: {message}{at}"}
    out.write(json.dumps(result, ensure_ascii=False, default=repr))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
