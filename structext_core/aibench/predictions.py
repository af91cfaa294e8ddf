"""Solver predictions for AIBench, one JSON object a line:
``{"paper_id", "question_id", "system", "solver", "prediction"}``. The output of ``aibench run``
is read as it is: there ``response`` is the prediction and ``model`` the solver.

``prediction`` is the solver's reply as it came (a letter, or a longer text); the letter is read
from it by :func:`structext_core.aibench.model.parse_letter`, and a reply without a clear letter
is kept as such (``letter`` None), never guessed. Every line is checked against the data set
before any is returned: unknown paper, question or system, a duplicate (paper, question, system,
solver), a missing field: each is a problem naming its line and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from structext_core.aibench import limits
from structext_core.aibench.dataset import Dataset, ImportFailed
from structext_core.aibench.model import parse_letter
from structext_core.aibench.papers import Problem

FIELDS = ("paper_id", "question_id", "system", "solver", "prediction")


@dataclass(frozen=True)
class Prediction:
    """One solver's reply to one question about one system's image; ``letter`` None: no clear letter."""

    paper_id: str
    question_id: str
    system: str
    solver: str
    reply: str
    letter: str | None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.system, self.solver, self.paper_id, self.question_id)


def parse_predictions(text: str, dataset: Dataset, file: str = "predictions.jsonl") -> list[Prediction]:
    """The predictions in ``text``, checked against ``dataset``; :class:`ImportFailed` naming
    every problem otherwise. Their order is the file's (scores never depend on it)."""
    problems: list[Problem] = []
    found: dict[tuple, Prediction] = {}
    systems = set(dataset.systems)
    options = {(p.id, q.id): len(q.options) for p in dataset.papers.values() for q in p.questions}
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"line {number}"
        if not line.strip():
            continue
        if len(line) > limits.MAX_PREDICTION_LINE_CHARS:
            problems.append(Problem(file, where, f"{len(line):,} characters; at most "
                                                 f"{limits.MAX_PREDICTION_LINE_CHARS:,}"))
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            problems.append(Problem(file, where, "not a JSON object"))
            continue
        if not isinstance(row, dict):
            problems.append(Problem(file, where, "not a JSON object"))
            continue
        if "prediction" not in row and "response" in row:  # a line of our runner's output (aibench run)
            row = {**row, "prediction": row["response"], "solver": row.get("solver", row.get("model"))}
        bad = [f for f in FIELDS if not isinstance(row.get(f), str)]
        if bad:
            problems.append(Problem(file, f"{where}.{bad[0]}", "missing or not text"))
            continue
        paper_id, question_id, system = row["paper_id"], row["question_id"], row["system"]
        if paper_id not in dataset.papers:
            problems.append(Problem(file, f"{where}.paper_id", f"{paper_id[:60]!r} is not a paper of the data set"))
            continue
        if (paper_id, question_id) not in options:
            problems.append(Problem(file, f"{where}.question_id",
                                    f"{question_id[:60]!r} is not a question of paper {paper_id!r}"))
            continue
        if system not in systems:
            problems.append(Problem(file, f"{where}.system", f"{system[:60]!r} has no images in the data set"))
            continue
        prediction = Prediction(paper_id, question_id, system, row["solver"], row["prediction"],
                                parse_letter(row["prediction"], options[(paper_id, question_id)]))
        if prediction.key in found:
            problems.append(Problem(file, where, f"a second prediction for {paper_id}/{question_id} by "
                                                 f"{row['solver']!r} on {system!r}"))
            continue
        found[prediction.key] = prediction
    if problems:
        raise ImportFailed(problems)
    return list(found.values())


def read_predictions(path: str | Path, dataset: Dataset) -> list[Prediction]:
    """:func:`parse_predictions` of the file at ``path`` (size bounded before reading)."""
    path = Path(path)
    size = path.stat().st_size
    if size > limits.MAX_PREDICTIONS_FILE_BYTES:
        raise ImportFailed([Problem(path.name, "", f"{size:,} bytes; at most {limits.MAX_PREDICTIONS_FILE_BYTES:,}")])
    return parse_predictions(path.read_text("utf-8", errors="replace"), dataset, path.name)


def to_jsonl(predictions: list[Prediction]) -> str:
    """The predictions as JSONL lines in the import's shape."""
    return "".join(json.dumps({"paper_id": p.paper_id, "question_id": p.question_id, "system": p.system,
                               "solver": p.solver, "prediction": p.reply}, ensure_ascii=False) + "\n"
                   for p in predictions)
