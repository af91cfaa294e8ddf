"""Every size limit on text that a person or a file hands us, in one place.

Untrusted text (an upload, a rewrite, a released file, a pasted mapping, a name typed in a
form) is checked against these numbers before anything parses, stores or expands it. A
limit that is exceeded is a :class:`LimitError` whose message names the limit, the value
found, where (line and column when there is one) and how to raise it.

Each number can be raised deliberately with an environment variable
``STRUCTEXT_LIMIT_<NAME>`` (for example ``STRUCTEXT_LIMIT_MAX_DEPTH=400``); the README's
"Limits" section lists them.
"""

from __future__ import annotations

import os


class LimitError(ValueError):
    """Untrusted text exceeds one of the limits below; the message says which and where."""

    def __init__(self, message: str, *, limit: str = "", value: int | None = None,
                 line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.limit = limit
        self.value = value
        self.line = line
        self.column = column


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(f"STRUCTEXT_LIMIT_{name}")
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"STRUCTEXT_LIMIT_{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise ValueError(f"STRUCTEXT_LIMIT_{name}={raw!r} must be a positive whole number")
    return value


# ---------------------------------------------------------------- stored text fields
#: Names of studies, campaigns, suites, scenarios (characters).
MAX_NAME_CHARS = _env_int("MAX_NAME_CHARS", 200)
#: A study's written rule, a review comment, a flag reason or resolution, an exception reason.
MAX_NOTE_CHARS = _env_int("MAX_NOTE_CHARS", 10_000)
#: One draft or submitted rewrite text (reference, question or answer), one human answer.
MAX_DRAFT_CHARS = _env_int("MAX_DRAFT_CHARS", 1_000_000)
