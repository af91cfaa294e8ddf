"""The 29 tasks of StrucText-Eval in one registry.

Each task knows how to pick its parameters, word its question, compute the
expected answer from the abstract tree it was generated from, read its
parameters back from a question (ours or the released wording), and solve the
question from the reference *text* alone. Generation uses the first route,
audits use the second; the test-suite checks that both agree.

The registry and the comparison of answers live in ``_registry``; each family of tasks in
its own module, which registers its tasks when imported: ``_csv`` (tasks 1-4, the pair of
tables), ``_tree`` (5-7, the edge list), ``_structured`` (8-17, JSON and YAML), ``_xml``
(18-20) and ``_markup`` (21-29, Markdown, LaTeX and Org).
"""

from __future__ import annotations

from structext_core.structext_eval.tasks import _csv, _markup, _structured, _tree, _xml  # noqa: F401  (they register)
from structext_core.structext_eval.tasks._markup import empty_list_answer
from structext_core.structext_eval.tasks._registry import (
    ABBREVIATIONS,
    CATEGORIES,
    FOLDER_CATEGORIES,
    RELEASED_FOLDERS,
    TASKS,
    Task,
    answers_agree,
    normalise,
    register,
    task_for,
)

__all__ = [
    "ABBREVIATIONS", "CATEGORIES", "FOLDER_CATEGORIES", "RELEASED_FOLDERS", "TASKS", "Task", "answers_agree",
    "empty_list_answer", "normalise", "register", "task_for",
]

assert sorted(TASKS) == list(range(1, 30)), sorted(TASKS)
