"""What both harness log readers share: one harness response before it is matched to a sample
(``_Entry``), the problem that stops reading a file (``_Stop``), the bound on one member or line
(:data:`MAX_ENTRY_BYTES`), and the bounded JSON and value helpers. Read by
:mod:`structext_core.evaluation.inspect_ai_logs` and :mod:`structext_core.evaluation.lm_eval_logs`;
the public reader is :mod:`structext_core.evaluation.harness`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from structext_core.evaluation.matching import Problem
from structext_core.settings import limit as _env_int
from structext_core.text import limits

#: One archive member, one JSON line, one sample of a .json log (bytes / characters).
MAX_ENTRY_BYTES = _env_int("MAX_HARNESS_ENTRY_BYTES", 256 * 1024 ** 2)


class _Stop(Exception):
    """A problem after which the file cannot be read further."""

    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem


@dataclass
class _Entry:
    """One harness response before it is matched to a sample."""

    where: str
    harness_id: object
    epoch: int
    model: str
    setting: str | None
    task: str
    response: str
    failed: bool
    prompt_text: str
    harness: str = "inspect"
    doc: Mapping | None = None
    scores: dict = field(default_factory=dict)


def _where(location: str, message: str) -> Problem:
    return Problem(0, f"{location}: {message}")


def _loads(text: str, location: str):
    """One JSON text of known extent, its nesting checked (no recursion) before it is decoded."""
    try:
        return limits.loads_json(text, location)
    except json.JSONDecodeError as exc:
        raise _Stop(_where(location, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})")) from None
    except limits.LimitError as exc:
        raise _Stop(_where(location, str(exc))) from None
    except RecursionError:
        raise _Stop(_where(location, "JSON nested too deeply")) from None


def _object(value, location: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise _Stop(_where(location, f"{what} must be a JSON object, got {type(value).__name__}"))
    return value


def _text_or_none(value) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _numeric_scores(values: Mapping, prefix: str = "") -> dict:
    """The values that are numbers (not booleans, not integers too large for a float)."""
    scores = {}
    for key, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                scores[f"{prefix}{key}"] = float(value)
            except OverflowError:
                continue
    return scores


def _message_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return ""
