"""StrucText-Eval's verbs of ``python -m structext_core`` (registered by its member module):

- ``generate``, ``audit``, ``stats`` (:mod:`.suites`): its suites;
- ``score``, ``prompts``, ``run`` (:mod:`.model_runs`) and ``export-task`` (:mod:`.harness`): models'
  results. Their modules load pandas and the harness readers, so they are imported only when the
  command asks for one of them, or for the whole list (``--help``).
"""

from __future__ import annotations

#: Its verbs, in the order the command lists them.
SUITE_COMMANDS = ("generate", "audit", "stats")
RESULT_COMMANDS = ("score", "prompts", "run", "export-task")
COMMANDS = SUITE_COMMANDS + RESULT_COMMANDS


def register(subparsers, command: str | None = None) -> None:
    """Add its verbs to the command's subparsers. ``command``: the verb being run when it is a known
    one (None: the whole list is wanted); unless it is one of the result verbs, those are left out
    (they load pandas)."""
    from structext_core.structext_eval.cli import suites

    suites.register(subparsers)
    if command is None or command in RESULT_COMMANDS:
        from structext_core.structext_eval.cli import model_runs

        model_runs.register(subparsers)
