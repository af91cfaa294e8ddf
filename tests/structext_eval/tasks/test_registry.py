"""Registry-wide: for every task, the answer computed from the abstract tree at
generation equals the answer the solver reads from the reference text."""

import pytest

from structext_core.structext_eval import suites
from structext_core.structext_eval.tasks import CATEGORIES, TASKS, answers_agree

GRID = [(d, w) for d in (1, 2, 3) for w in (1, 2, 3)]
#: Two seeds beside the ones the suites use (the generated Test suite, 3,712 samples, is audited
#: against the solvers in tests/cli/test_cli.py): 3,132 samples over the whole grid.
SEEDS = [1, 2024]


@pytest.mark.parametrize("task_id", sorted(TASKS))
@pytest.mark.parametrize("depth,width", GRID)
def test_generated_answer_equals_solver(task_id, depth, width):
    task = TASKS[task_id]
    # Fewer seeds on the largest cell keeps the whole grid under a few seconds per task.
    n = 2 if (depth, width) == (3, 3) else 6
    for seed in SEEDS:
        for sample in suites.generate_cell(task_id, depth, width, n, seed=seed):
            solved = task.solve_text(sample["reference"], sample["question"], depth, width)
            assert answers_agree(task, sample["answer"], solved), (sample["id"], seed, sample["answer"][:300], solved[:300])


def test_registry_has_the_29_tasks_of_the_spec():
    assert sorted(TASKS) == list(range(1, 30))
    by_language = {}
    for t in TASKS.values():
        by_language.setdefault(t.language, []).append(t.task_id)
        assert t.category in CATEGORIES
        assert t.rule_hint and t.requirement
    assert by_language == {
        "csv": [1, 2, 3, 4], "tree": [5, 6, 7], "json": [8, 9, 10, 11, 12], "yaml": [13, 14, 15, 16, 17],
        "xml": [18, 19, 20], "markdown": [21, 22, 23], "latex": [24, 25, 26], "org": [27, 28, 29],
    }


def test_the_package_shows_the_registry_api():
    """Every name the rest of the code imports from the package, one family module per kind."""
    from structext_core.structext_eval import tasks
    from structext_core.structext_eval.tasks import _csv, _markup, _structured, _tree, _xml

    for name in ("TASKS", "Task", "ABBREVIATIONS", "CATEGORIES", "FOLDER_CATEGORIES", "task_for", "answers_agree"):
        assert hasattr(tasks, name), name
    families = {_csv: {"csv"}, _tree: {"tree"}, _structured: {"json", "yaml"}, _xml: {"xml"},
                _markup: {"markdown", "latex", "org"}}
    for module, languages in families.items():
        assert {t.language for t in TASKS.values() if t.solve.__module__ == module.__name__
                or t.sample.__module__ == module.__name__} == languages, module.__name__
    assert tasks.task_for("yaml", 3).task_id == 16
