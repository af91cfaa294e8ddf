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
import re
from dataclasses import dataclass
from pathlib import Path

from structext_core.aibench import limits
from structext_core.aibench.dataset import Dataset, ImportFailed
from structext_core.aibench.model import parse_letter
from structext_core.aibench.papers import Problem
from structext_core.text import limits as safe_limits

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
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
    scan = json.JSONDecoder().scan_once  # the C scanner; a line must be one JSON value and nothing else
    papers = dataset.papers
    for number, line in enumerate(text.splitlines(), start=1):
        if not line or line.isspace():
            continue
        if len(line) > limits.MAX_PREDICTION_LINE_CHARS:
            problems.append(Problem(file, f"line {number}", f"{len(line):,} characters; at most "
                                                            f"{limits.MAX_PREDICTION_LINE_CHARS:,}"))
            continue
        try:
            start = len(line) - len(line.lstrip())
            row, end = scan(line, start)
            if end != len(line) and not line[end:].isspace():
                raise json.JSONDecodeError("extra data", line, end)
            if "\\u" in line and _SURROGATE_ESCAPE.search(line):
                safe_limits.loads_json(line, "the line")  # refuses a lone surrogate, saying where
        except (json.JSONDecodeError, StopIteration, RecursionError):
            problems.append(Problem(file, f"line {number}", "not a JSON object"))
            continue
        except safe_limits.ParseLimitError as error:
            problems.append(Problem(file, f"line {number}", str(error)))
            continue
        if type(row) is not dict:
            problems.append(Problem(file, f"line {number}", "not a JSON object"))
            continue
        if "prediction" not in row and "response" in row:  # a line of our runner's output (aibench run)
            row = {**row, "prediction": row["response"], "solver": row.get("solver", row.get("model"))}
        paper_id, question_id, system = row.get("paper_id"), row.get("question_id"), row.get("system")
        solver, reply = row.get("solver"), row.get("prediction")
        if type(paper_id) is int:  # ids as the import reads them: the authors' integers too
            paper_id = str(paper_id)
        if type(question_id) is int:
            question_id = str(question_id)
        if not (type(paper_id) is str and type(question_id) is str and type(system) is str
                and type(solver) is str and type(reply) is str):
            bad = next(f for f, v in zip(FIELDS, (paper_id, question_id, system, solver, reply)) if type(v) is not str)
            problems.append(Problem(file, f"line {number}.{bad}", "missing or not text"))
            continue
        if paper_id not in papers:
            problems.append(Problem(file, f"line {number}.paper_id",
                                    f"{paper_id[:60]!r} is not a paper of the data set"))
            continue
        n_options = options.get((paper_id, question_id))
        if n_options is None:
            problems.append(Problem(file, f"line {number}.question_id",
                                    f"{question_id[:60]!r} is not a question of paper {paper_id!r}"))
            continue
        if system not in systems:
            problems.append(Problem(file, f"line {number}.system", f"{system[:60]!r} has no images in the data set"))
            continue
        key = (system, solver, paper_id, question_id)
        if key in found:
            problems.append(Problem(file, f"line {number}", f"a second prediction for {paper_id}/{question_id} by "
                                                            f"{solver!r} on {system!r}"))
            continue
        found[key] = Prediction(paper_id, question_id, system, solver, reply, parse_letter(reply, n_options))
    if not problems and not found:
        problems.append(Problem(file, "", "holds no predictions (no line with a JSON object)"))
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
