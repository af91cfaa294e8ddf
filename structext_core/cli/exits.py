"""What every benchmark's run and score verbs share: their exit statuses and the check of ``--out``
before any work (the verbs themselves are in each benchmark's package)."""

from __future__ import annotations

from structext_core.text import outputs

EXIT_OK = 0
EXIT_INCOMPLETE = 1  # run: some prompts still have no answer
EXIT_ERROR = 2  # a mistake in the command line or its inputs (as cli.py's UsageError)
EXIT_INTERRUPTED = 130


def _out_problem(path: str | None) -> str | None:
    """Why ``--out`` cannot be written (a folder, a device, no permission), or None: checked
    before any work, so a mistake costs nothing and writes nothing."""
    if path is None:
        return None
    try:
        outputs.check_output_file(path, "--out")
    except outputs.OutputError as exc:
        return str(exc)
    return None
