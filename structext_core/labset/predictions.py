"""Models' answers to a lab's set read in and scored: JSON lines ``{"id", "model", "answer"}``, the id
the set's own (``source_id``) or the item's content id. Checked as every import: every line at fault
named, nothing kept when any is; an item answered twice by one model is refused."""

from __future__ import annotations

import json
from pathlib import Path

from structext_core.evaluation.matching import Problem, ResultsImportError
from structext_core.labset.scoring import score
from structext_core.text import limits

#: At most this many prediction lines a file.
MAX_PREDICTIONS = 200_000
MAX_ANSWER_CHARS = 20_000


def read_predictions(path, items) -> list[dict]:
    """One row a line: ``{model, id, source_id, format, stratum, score}``, in the file's order."""
    path = Path(path)
    by_id = {item["source_id"]: item for item in items} | {item["id"]: item for item in items}
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
                bad = [f for f in ("id", "model", "answer") if not isinstance(record.get(f), (str, int))
                       or isinstance(record.get(f), bool)]
                if bad:
                    problems.append(Problem(number, f"field {bad[0]!r}: missing, or not a text"))
                    continue
                answer, model, key = str(record["answer"]), str(record["model"]), str(record["id"])
                if len(answer) > MAX_ANSWER_CHARS or not model.strip() or len(model) > 200:
                    problems.append(Problem(number, f"field 'answer' longer than {MAX_ANSWER_CHARS} characters, "
                                                    "or field 'model' empty or longer than 200"))
                    continue
                item = by_id.get(key)
                if item is None:
                    problems.append(Problem(number, f"field 'id': {key[:80]!r} is no item of the set"))
                    continue
                if (model, item["id"]) in seen:
                    problems.append(Problem(number, f"{model!r} answered {key[:80]!r} already (line "
                                                    f"{seen[model, item['id']]})"))
                    continue
                seen[model, item["id"]] = number
                rows.append({"model": model, "id": item["id"], "source_id": item["source_id"], "format": item["format"],
                             "stratum": item["stratum"], "score": score(item, answer)})
    except UnicodeDecodeError as exc:
        problems.append(Problem(0, f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
    except OSError as exc:
        problems.append(Problem(0, f"cannot be read ({exc.strerror})"))
    if problems:
        raise ResultsImportError(path.name, problems)
    return rows


def read_inspect_log(path, items) -> list[dict]:
    """A model's answers in an Inspect AI log (``.eval`` or ``.json``), read with the shared reader
    (:func:`structext_core.evaluation.harness.inspect_log_entries`, its checks and bounds), matched
    to the set's items by the sample's id (the set's id or the content id) and scored by the set's
    rule: one row ``{model, id, source_id, format, stratum, epoch, score}`` a sample and epoch. A
    failed sample scores 0. Every sample that is no item of the set is named; nothing is kept then."""
    from structext_core.evaluation.harness import inspect_log_entries
    path = Path(path)
    by_id = {item["source_id"]: item for item in items} | {item["id"]: item for item in items}
    problems: list[Problem] = []
    rows = []
    for entry in inspect_log_entries(path):
        item = by_id.get(str(entry["id"]))
        if item is None:
            problems.append(Problem(0, f"{entry['where']}: sample id {str(entry['id'])[:80]!r} is no item of the set"))
            continue
        answer = entry["response"] or ""
        rows.append({"model": entry["model"], "id": item["id"], "source_id": item["source_id"],
                     "format": item["format"], "stratum": item["stratum"], "epoch": entry["epoch"],
                     "score": 0.0 if entry["failed"] else score(item, answer)})
    if problems:
        raise ResultsImportError(path.name, problems)
    return rows
