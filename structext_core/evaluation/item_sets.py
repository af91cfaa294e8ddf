"""Where any benchmark's item files and its models' answers are kept, and how those answers are read
and scored: the shared place every member gets by default (:mod:`structext_core.protocol`).

**Item files**: ``<data dir>/<DATA_FOLDER>/`` (``DATA_FOLDER`` of the member, by default
``benchmarks/<name>``), each file one data set, read by the member's ``load_items`` (files ending in
one of its ``ITEM_SUFFIXES``, by default ``.jsonl``).

**Models' answers**: ``<item folder>/predictions/<item file name>/``, each file one or more models'
answers to that data set: JSON lines ``{"id", "model", "answer"}`` (:func:`read_predictions`; the id
one the member knows the item by, :func:`item_names`) or an Inspect AI log, ``.eval`` or ``.json``
(:func:`read_inspect_log`). Each answer is scored by the member's ``score_answer``; one row an answer,
with the item's strata. Every line or sample at fault is named, and nothing of the file is kept then.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from structext_core import protocol, settings
from structext_core.evaluation.matching import Problem, ResultsImportError
from structext_core.text import limits

#: At most this many prediction lines a file, and this many characters an answer.
MAX_PREDICTIONS = 200_000
MAX_ANSWER_CHARS = 20_000
#: The most prediction files read for one data set, and the files read as predictions, by suffix.
MAX_PREDICTION_FILES = 50
PREDICTION_SUFFIXES = (".jsonl", ".eval", ".json")
#: The most item files listed for a benchmark.
MAX_ITEM_FILES = 500


def data_dir(name: str) -> Path:
    """The folder of the benchmark ``name``'s item files (see the module notes)."""
    folder = protocol.option(protocol.get_module(name), "DATA_FOLDER") or f"benchmarks/{name}"
    return settings.suites_dir() / folder


def item_files(name: str) -> list[str]:
    """The benchmark's item files, by name (at most :data:`MAX_ITEM_FILES`)."""
    folder = data_dir(name)
    if not folder.is_dir():
        return []
    suffixes = tuple(protocol.option(protocol.get_module(name), "ITEM_SUFFIXES"))
    return sorted(p.name for p in folder.iterdir() if p.suffix.lower() in suffixes and p.is_file()
                  and not p.name.endswith((".mapping.json", ".task.json")))[:MAX_ITEM_FILES]  # sidecars: no sets


def load(name: str, file_name: str, for_study: bool = False) -> list:
    """The items of the benchmark's file ``file_name`` (one of :func:`item_files`), through its
    ``load_items`` (``for_study``: its ``load_for_study`` when it declares one): a ``ValueError``
    naming the file, line and field when it cannot be read."""
    if file_name not in item_files(name):
        raise ValueError(f"{file_name!r} is no item file of {protocol.display_name(name)} in {data_dir(name)}")
    member = protocol.get_module(name)
    loader = (for_study and protocol.option(member, "load_for_study")) or protocol.option(member, "load_items")
    if loader is None:
        raise ValueError(f"{protocol.display_name(name)} reads no item files (its member has no load_items)")
    try:
        return list(loader(data_dir(name) / file_name))
    except OSError as error:
        raise ValueError(f"{file_name}: cannot be read ({error.strerror or error})") from None


#: The most items one item file holds, and the largest such file (bytes).
MAX_ITEMS = 100_000
MAX_ITEM_FILE_BYTES = 50 * 1024 * 1024


def read_jsonl(path, fields: Mapping[str, type | tuple[type, ...]]) -> list[dict]:
    """The items of a JSON-lines file, one object a line, each with every field of ``fields``
    (name -> type or types; ``int`` admits no ``bool``, ``float`` admits an ``int``), read within
    bounds (file size, line length, JSON depth and size, :mod:`structext_core.text.limits`). A
    ``ValueError`` names every line and field at fault (the first 20), and no item is returned then.
    The bounded reader a benchmark's ``load_items`` may use as it is."""
    path = Path(path)
    problems: list[str] = []
    items: list[dict] = []
    try:
        if path.stat().st_size > MAX_ITEM_FILE_BYTES:
            raise ValueError(f"{path.name}: {path.stat().st_size:,} bytes; an item file has at most "
                             f"{MAX_ITEM_FILE_BYTES:,}")
        with path.open(encoding="utf-8") as handle:
            for number, line in limits.read_record_lines(handle):
                where = f"{path.name}:{number}"
                if line is None:
                    problems.append(f"{where}: {limits.record_too_long()}")
                elif line.strip():
                    try:
                        record = limits.loads_json(line, f"line {number}")
                    except (json.JSONDecodeError, limits.LimitError) as error:
                        problems.append(f"{where}: not a JSON line ({error})")
                        continue
                    problem = _field_problem(record, fields)
                    if problem:
                        problems.append(f"{where}: {problem}")
                    elif len(items) >= MAX_ITEMS:
                        problems.append(f"{where}: more than {MAX_ITEMS:,} items")
                        break
                    else:
                        items.append(record)
    except UnicodeDecodeError as error:
        problems.append(f"{path.name}: not UTF-8 text ({error.reason} at byte {error.start})")
    if problems:
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise ValueError("; ".join(problems[:20]) + more)
    if not items:
        raise ValueError(f"{path.name}: no item in the file")
    return items


def _field_problem(record, fields: Mapping[str, type | tuple[type, ...]]) -> str | None:
    if not isinstance(record, dict):
        return "an item is a JSON object"
    for field, kinds in fields.items():
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        if float in kinds:
            kinds = (*kinds, int)
        value = record.get(field)
        if field not in record or not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join({str: "a text", int: "an integer", float: "a number", list: "a list",
                                 bool: "true or false", dict: "an object"}.get(k, k.__name__) for k in kinds if k is not int
                                 or float not in kinds)
            return f"field {field!r}: missing, or not {names}"
    return None


def predictions_dir(name: str, file_name: str) -> Path:
    """Where the models' answers to the benchmark's item file ``file_name`` are kept."""
    return data_dir(name) / "predictions" / file_name


def prediction_files(name: str, file_name: str) -> tuple[list[Path], list[str]]:
    """(the prediction files kept for ``file_name``, by name; the problems of the listing)."""
    where = predictions_dir(name, file_name)
    found = sorted(p for p in where.iterdir() if p.suffix.lower() in PREDICTION_SUFFIXES and p.is_file()) \
        if where.is_dir() else []
    if len(found) > MAX_PREDICTION_FILES:
        return found[:MAX_PREDICTION_FILES], [f"{where}: more than {MAX_PREDICTION_FILES} files; the first "
                                              f"{MAX_PREDICTION_FILES} by name are read"]
    return found, []


def files_signature(name: str, file_name: str) -> tuple:
    """What changes when the item file or its models' files change (a cache key): names, sizes, times."""
    files = [data_dir(name) / file_name, *prediction_files(name, file_name)[0]]
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files if p.is_file())


def item_names(member, item: Mapping) -> tuple[str, ...]:
    """The ids a file of answers may name ``item`` by: the member's ``item_names(item)`` when it
    declares one (a set's own id beside our content id, say), else its ``item_id``."""
    names = protocol.option(member, "item_names")
    return tuple(str(n) for n in (names(item) if names is not None else (member.item_id(item),)))


def _index(member, items) -> dict[str, Mapping]:
    by_name: dict[str, Mapping] = {}
    for item in items:
        for each in item_names(member, item):
            by_name.setdefault(each, item)
    return by_name


def _row(member, model: str, item: Mapping, score: float, **more) -> dict:
    strata = {key: item[key] for key in member.STRATA}
    return {"model": model, "id": member.item_id(item), **strata, "score": float(score), **more}


#: The names a predictions line may give its fields (the first of each pair is ours): ``{id, model,
#: answer}``, or ``sample_id`` and ``response`` as our own results files and many harnesses write them.
FIELD_NAMES = {"id": ("id", "sample_id"), "answer": ("answer", "response"), "model": ("model",)}


def _fields(record: dict) -> tuple[dict, str | None]:
    """``record``'s id, model and answer under our names, or why they cannot be read (a field missing,
    or given under both its names)."""
    out = {}
    for ours, names in FIELD_NAMES.items():
        given = [n for n in names if n in record]
        if len(given) > 1:
            return {}, f"fields {' and '.join(map(repr, given))} both given: keep one"
        value = record.get(given[0]) if given else None
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            return {}, f"field {' or '.join(map(repr, names))}: missing, or not a text"
        out[ours] = str(value)
    return out, None


def read_predictions(name: str, path, items) -> list[dict]:
    """One row a line of the JSON-lines file ``path``: ``{model, id, <strata>, score}``, in the
    file's order (``id``: the item's id; ``score`` by the member's ``score_answer``). A line is
    ``{id, model, answer}`` (or ``sample_id`` and ``response``, :data:`FIELD_NAMES`); an lm-eval
    samples file (``--log_samples``) is read by :func:`read_inspect_log`'s rules. An item answered
    twice by one model is refused; a :class:`ResultsImportError` names every line at fault."""
    from structext_core.evaluation.harness import FORMAT_LM_EVAL, detect_path
    if detect_path(path) == FORMAT_LM_EVAL:
        return read_inspect_log(name, path, items)
    member, path = protocol.get_module(name), Path(path)
    by_name = _index(member, items)
    problems: list[Problem] = []
    rows, seen = [], {}
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in limits.read_record_lines(handle):
                if line is None:
                    problems.append(Problem(number, limits.record_too_long()))
                    continue
                if not line.strip():
                    continue
                if len(rows) >= MAX_PREDICTIONS:
                    problems.append(Problem(number, f"more than {MAX_PREDICTIONS} predictions"))
                    break
                try:
                    record = limits.loads_json(line, f"line {number}")
                except (json.JSONDecodeError, limits.LimitError) as exc:
                    problems.append(Problem(number, f"not a JSON line ({exc})"))
                    continue
                if not isinstance(record, dict):
                    problems.append(Problem(number, "a prediction is a JSON object"))
                    continue
                fields, problem = _fields(record)
                if problem:
                    problems.append(Problem(number, problem))
                    continue
                answer, model, key = fields["answer"], fields["model"], fields["id"]
                if len(answer) > MAX_ANSWER_CHARS or not model.strip() or len(model) > 200:
                    problems.append(Problem(number, f"field 'answer' longer than {MAX_ANSWER_CHARS} characters, "
                                                    "or field 'model' empty or longer than 200"))
                    continue
                item = by_name.get(key)
                if item is None:
                    problems.append(Problem(number, f"field 'id': {key[:80]!r} is no item of the set"))
                    continue
                own = member.item_id(item)
                if (model, own) in seen:
                    problems.append(Problem(number, f"{model!r} answered {key[:80]!r} already (line "
                                                    f"{seen[model, own]})"))
                    continue
                seen[model, own] = number
                rows.append(_row(member, model, item, member.score_answer(item, answer)))
    except UnicodeDecodeError as exc:
        problems.append(Problem(0, f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
    except OSError as exc:
        problems.append(Problem(0, f"cannot be read ({exc.strerror})"))
    if problems:
        raise ResultsImportError(path.name, problems)
    return rows


def read_inspect_log(name: str, path, items) -> list[dict]:
    """A model's answers in an Inspect AI log (``.eval`` or ``.json``) or an lm-eval samples file,
    read with the shared readers (:func:`structext_core.evaluation.harness.inspect_log_entries`,
    ``lm_eval_log_entries``: their checks and bounds), matched
    to the items by the sample's id (:func:`item_names`) and scored by the member's
    ``score_answer``: one row ``{model, id, <strata>, score, epoch, logged}`` a sample and epoch
    (``logged``: the score the log itself gives the sample, its first scorer's, or None). A failed
    sample scores 0. Every sample that is no item of the set is named; nothing is kept then."""
    from structext_core.evaluation.harness import FORMAT_LM_EVAL, detect_path, inspect_log_entries, lm_eval_log_entries
    member, path = protocol.get_module(name), Path(path)
    by_name = _index(member, items)
    problems: list[Problem] = []
    rows = []
    read = lm_eval_log_entries if detect_path(path) == FORMAT_LM_EVAL else inspect_log_entries
    for entry in read(path):
        item = by_name.get(str(entry["id"]))
        if item is None:
            problems.append(Problem(0, f"{entry['where']}: sample id {str(entry['id'])[:80]!r} is no item of the set"))
            continue
        score = 0.0 if entry["failed"] else member.score_answer(item, entry["response"] or "")
        logged = next(iter(entry["scores"].values()), None)  # the log's own score (its first scorer's)
        rows.append(_row(member, entry["model"], item, score, epoch=entry["epoch"], logged=logged))
    if problems:
        raise ResultsImportError(path.name, problems)
    return rows


#: The most bytes of one models' answers file stored from the page (larger: put it in the folder).
MAX_PREDICTION_UPLOAD_BYTES = 50 * 1024 * 1024


def _refuse(upload: str, problems: list[Problem]) -> ValueError:
    shown = "\n".join(p.describe(upload) for p in problems[:20])
    more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
    return ValueError(f"{upload}: not stored, {len(problems)} problem(s):\n{shown}{more}")


def store_predictions(name: str, file_name: str, upload_name: str, data: bytes) -> Path:
    """Models' answers uploaded for the benchmark's item file ``file_name``: read and checked against
    its items by the readers Results reads them with (:func:`read_predictions` for ``.jsonl``,
    :func:`read_inspect_log` for an Inspect log, ``.eval`` or ``.json``) before anything is stored,
    then written into :func:`predictions_dir` under the upload's own name, never over another file.
    The path written; a ``ValueError`` saying why (the first 20 lines at fault), nothing written."""
    upload = Path(str(upload_name or "")).name[:200]
    suffix = Path(upload).suffix.lower()
    if suffix not in PREDICTION_SUFFIXES or upload.startswith("."):
        raise ValueError(f"{upload or 'the file'}: models' answers are a JSON-lines file (.jsonl: "
                         "{id, model, answer} a line) or an Inspect AI log (.eval, .json)")
    if len(data) > MAX_PREDICTION_UPLOAD_BYTES:
        raise ValueError(f"{upload}: {len(data):,} bytes; the page stores at most {MAX_PREDICTION_UPLOAD_BYTES:,} "
                         f"(put a larger file in {predictions_dir(name, file_name)})")
    items = load(name, file_name)
    where = predictions_dir(name, file_name)
    target = where / upload
    if target.exists() or target.is_symlink():
        raise ValueError(f"{upload}: a file of that name is kept for {file_name} already (nothing written; "
                         "rename the file to store it beside the other)")
    if len(prediction_files(name, file_name)[0]) >= MAX_PREDICTION_FILES:
        raise ValueError(f"{upload}: {file_name} has {MAX_PREDICTION_FILES} files of models' answers already, "
                         "the most read (nothing written)")
    read = read_predictions if suffix == ".jsonl" else read_inspect_log
    with tempfile.TemporaryDirectory(prefix="structext-predictions-") as folder:
        staged = Path(folder) / upload
        staged.write_bytes(data)
        try:
            rows = read(name, staged, items)
        except ResultsImportError as error:
            raise _refuse(upload, error.problems) from None
        except (ValueError, OSError) as error:
            raise _refuse(upload, [Problem(0, str(error)[:1000])]) from None
    if not rows:
        raise _refuse(upload, [Problem(0, "holds no answer")])
    where.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=".upload-", suffix=".part", dir=where)  # no suffix read as answers
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.link(part, target)  # the whole file appears at once, and never over one
    except FileExistsError:
        raise ValueError(f"{upload}: a file of that name is kept for {file_name} already (nothing written; "
                         "rename the file to store it beside the other)") from None
    finally:
        os.unlink(part)
    return target
