"""The registry: what a task is, the table of all 29, and how answers are compared."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable

from structext_core.structext_eval.formats import Document
from structext_core.text import limits

CATEGORIES = ["PathCompose", "PathWalk", "Syntax", "TextRetrieval", "Join", "Statistic", "NodeDepth", "TreeHeight"]
ABBREVIATIONS = {"PathCompose": "PC", "PathWalk": "PW", "Syntax": "SY", "TextRetrieval": "TR", "Join": "JO",
                 "Statistic": "ST", "NodeDepth": "ND", "TreeHeight": "TH"}
# Folder names of the authors' released layout.
RELEASED_FOLDERS = {"Statistic": "Statistics", "NodeDepth": "Tree.Depth", "TreeHeight": "Tree.Height"}
FOLDER_CATEGORIES = {v: k for k, v in RELEASED_FOLDERS.items()}


@dataclass(frozen=True)
class Task:
    """One of the 29 tasks."""

    task_id: int
    language: str
    category: str
    slug: str
    file_index: int  # the task's position within its format in the released file names
    requirement: str
    rule_hint: str
    sample: Callable[[random.Random, Document], dict]
    question: Callable[[dict], str]
    expected: Callable[[Document, dict], str]
    parse: Callable[[str], dict]
    solve: Callable[[str, dict, int, int], str]
    answer_kind: str = "text"  # "text", "lines" (a set of lines) or "blocks" (a set of blank-line blocks)
    inject_errors: bool = False

    @property
    def folder(self) -> str:
        """The task's category folder in the authors' released layout."""
        return RELEASED_FOLDERS.get(self.category, self.category)

    def solve_text(self, reference: str, question: str, depth: int = 0, width: int = 0) -> str:
        """Solve from the reference text and the question wording.

        Text beyond a limit of :mod:`structext_core.text.limits` raises its ``ParseLimitError``
        (a ``ReadError``), as does every other text the solver cannot read."""
        return self.solve(reference, self.parse(limits.check_question(question)), depth, width)


TASKS: dict[int, Task] = {}


def register(task: Task) -> Task:
    """Add ``task`` to :data:`TASKS` (each task id once)."""
    if task.task_id in TASKS:
        raise ValueError(f"task {task.task_id} registered twice")
    TASKS[task.task_id] = task
    return task


def task_for(language: str, file_index: int) -> Task:
    """The task at ``file_index`` of ``language`` in the released layout."""
    for task in TASKS.values():
        if task.language == language and task.file_index == file_index:
            return task
    raise KeyError(f"no task {file_index} for format {language}")


# "No image file is included in the file.", "No bold texts presented in file." and the like.
_EMPTY_LIST = re.compile(r"^No [\w ]+? (?:(?:is|are) )?(?:included|found|presented)\b[^\n]*$", re.I)


def normalise(answer: str, kind: str) -> object:
    """The comparable form of an answer: released list answers came in arbitrary order."""
    text = answer.replace("\r\n", "\n").strip()
    if kind == "lines" and _EMPTY_LIST.match(text):
        return []
    if kind == "lines":
        return sorted(line.strip() for line in text.split("\n") if line.strip())
    if kind == "blocks":
        return sorted(block.strip() for block in re.split(r"\n\s*\n", text) if block.strip())
    return text


def answers_agree(task: Task, claimed: str, solved: str) -> bool:
    """Whether two answers to ``task`` are the same once normalised (list answers in any order)."""
    return normalise(claimed, task.answer_kind) == normalise(solved, task.answer_kind)
