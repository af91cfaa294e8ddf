"""The JSON, YAML and XML families: their Syntax tasks."""

from structext_core.structext_eval import suites


def test_syntax_tasks_produce_both_answers():
    # Errors are injected with probability 0.2 per node, so both answers must occur.
    for task_id in (10, 15, 20):
        answers = {s["answer"] for s in suites.generate_cell(task_id, 2, 1, 40)}
        assert answers == {"True", "False"}, task_id
