"""The authors' released layout: ``<root>/<format>/<Category>/<n>.<stamp>_<k>.json``.

Reading turns a released file into our sample schema; writing produces the same
layout from our samples (requirement folded into the question, as released).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Iterable

from structext_core.structext_eval.formats import LANGUAGES
from structext_core.structext_eval.tasks import FOLDER_CATEGORIES, TASKS, Task, task_for
from structext_core.text import limits
from structext_core.text.outputs import export_into

LAYOUT_ROOT = "0Shotbenchmark"
_FILE_INDEX = re.compile(r"_(\d+)\.json$")
_REQUIREMENT_START = re.compile(
    r"\s*(?=(?:Answer should|The content should|Answer an integer|Answer the|If so,|Print those|Print the))")


class OfficialFileError(ValueError):
    """A released file that cannot be read as a sample."""


def split_question(text: str) -> tuple[str, str]:
    """Separate the folded requirement from the question."""
    m = _REQUIREMENT_START.search(text)
    if not m or m.start() == 0:
        return text.strip(), ""
    return text[:m.start()].strip(), text[m.end():].strip()


def identify_task(language: str, category: str, file_name: str, question: str) -> Task:
    """Which of the 29 tasks a released file holds: by its file index, else by its wording."""
    m = _FILE_INDEX.search(file_name)
    if m:
        try:
            task = task_for(language, int(m.group(1)))
            if task.category == category or not category:
                return task
        except KeyError:
            pass
    candidates = [t for t in TASKS.values() if t.language == language and (t.category == category or not category)]
    # Tasks whose question carries parameters can be recognised by its wording.
    worded = [t for t in candidates if _safe_parse(t, question)]
    if len(worded) == 1:
        return worded[0]
    if len(candidates) == 1:
        return candidates[0]
    raise OfficialFileError(f"cannot tell which {language} {category} task this is from its name or question")


def _safe_parse(task: Task, question: str) -> dict | None:
    try:
        return task.parse(limits.check_question(question))
    except ValueError:
        return None


def read_file(path: str | Path) -> dict:
    """One released file as a sample of our schema (suite ``official``)."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(limits.MAX_RECORD_CHARS + 1)  # never more than the limit in memory
        if len(text) > limits.MAX_RECORD_CHARS:
            raise OfficialFileError(f"{path}: the file is {limits.record_too_long()}")
        raw = limits.loads_json(text, "the file")
    except OSError as exc:
        raise OfficialFileError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise OfficialFileError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise OfficialFileError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # a limit (nesting, lone surrogate) or a number of more than 4,300 digits
        raise OfficialFileError(f"{path}: {exc}") from None
    if not isinstance(raw, dict):
        raise OfficialFileError(f"{path}: expected a JSON object")
    missing = [k for k in ("Question", "Answer", "Reference", "Label") if k not in raw]
    if missing:
        raise OfficialFileError(f"{path}: missing field(s) {', '.join(missing)}")
    label = raw["Label"] if isinstance(raw["Label"], dict) else {}
    language = str(label.get("typename", path.parent.parent.name)).lower()
    if language not in LANGUAGES:
        raise OfficialFileError(f"{path}: unknown format {language!r}")
    others = label.get("other_label_list")
    folder = others[0] if isinstance(others, list) and others and isinstance(others[0], str) else path.parent.name
    category = FOLDER_CATEGORIES.get(folder, folder)
    try:
        task = identify_task(language, category, path.name, str(raw["Question"]))
    except OfficialFileError as exc:
        raise OfficialFileError(f"{path}: {exc}") from None
    question, requirement = split_question(str(raw["Question"]))
    try:
        depth, width = int(label.get("node_number", 0)), int(label.get("n_ary_ratio", 0))
        col = int(label.get("para_len_ratio", 6))
    except (TypeError, ValueError):
        raise OfficialFileError(f"{path}: Label has a non-integer node_number, n_ary_ratio or para_len_ratio") from None
    return {
        "id": f"official-{language}-{path.parent.name}-{path.stem}",
        "suite": "official",
        "language": language,
        "task": task.category,
        "task_id": task.task_id,
        "depth": depth,
        "width": width,
        "col": col,
        "seed": None,
        "reference": str(raw["Reference"]),
        "question": question,
        "requirement": requirement or task.requirement,
        "answer": str(raw["Answer"]),
        "rule_hint": str(raw.get("RuleHint") or task.rule_hint),
        "params": {},
        "_folded_question": str(raw["Question"]),
    }


def find_files(root: str | Path) -> list[Path]:
    """Every released sample file below ``root``, in a stable order."""
    return sorted(Path(root).rglob("*.json"))


def to_official(sample: dict, number: int) -> tuple[str, dict]:
    """Relative path and content of ``sample`` in the authors' layout."""
    task = TASKS[sample["task_id"]]
    stamp = f"{sample['suite']}_d{sample['depth']}w{sample['width']}"
    rel = f"{LAYOUT_ROOT}/{task.language}/{task.folder}/{number}.{stamp}_{task.file_index}.json"
    question = sample["question"] + (" " + sample["requirement"] if sample.get("requirement") else "")
    content = {
        "Question": question,
        "Answer": sample["answer"],
        "Label": {
            "typename": task.language,
            "node_number": sample["depth"],
            "n_ary_ratio": sample["width"],
            "para_len_ratio": sample["col"],
            "few_shot_num": 0,
            "with_rule_hint": True,
            "other_label_list": [task.folder],
        },
        "Reference": sample["reference"],
        "timestamp": stamp,
        "input_hash": int(hashlib.sha256(sample["reference"].encode("utf-8")).hexdigest()[:15], 16),
        "RuleHint": sample["rule_hint"],
    }
    return rel, content


def write_layout(samples: Iterable[dict], directory: str | Path) -> int:
    """Write ``samples`` in the authors' layout below ``directory``; returns the file count.

    ``directory`` is an export folder (:func:`structext_core.text.outputs.export_into`): new, empty or
    holding our earlier export, whose files are replaced; anything else is refused with an
    :class:`~structext_core.text.outputs.OutputError` before a file is written. ``samples`` may be
    a generator: they are written one by one, never held together."""
    counters: dict[tuple, int] = {}
    with export_into(directory, writer="authors' layout") as stage:
        for sample in samples:
            key = (sample["task_id"], sample["depth"], sample["width"])
            number = counters.get(key, 0)
            counters[key] = number + 1
            rel, content = to_official(sample, number)
            path = stage / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content, ensure_ascii=False, indent=1), encoding="utf-8")
    return sum(counters.values())


def read_folder(root: str | Path) -> tuple[list[dict], list[str]]:
    """Every released sample below ``root`` in our schema, and a message per unreadable file."""
    rows, problems = [], []
    root = Path(root)
    if not root.is_dir():
        return [], [f"{root}: no such folder"]
    for path in find_files(root):
        try:
            rows.append(read_file(path))
        except OfficialFileError as exc:
            problems.append(str(exc))
    if not rows and not problems:
        problems.append(f"{root}: holds no .json sample files")
    return rows, problems
