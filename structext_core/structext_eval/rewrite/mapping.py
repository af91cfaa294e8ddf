"""A rewrite's value mapping: which replacements may stand where, and applying them.

A mapping replaces whole tokens consistently in reference, question and answer; the
question is re-worded through the task's own template, so its frame is never touched. The
rules every format shares are here; what a value may hold in one format is that format's
``value_problem``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from structext_core.structext_eval.formats import NUMBER_RE, TOKEN_RE, Problem, get_module, tokens_in
from structext_core.structext_eval.rewrite.tokens import RESERVED, Token, extract_tokens, question_params
from structext_core.structext_eval.tasks import TASKS

FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z0-9]+$")
#: Task categories whose answer is a count or True/False: a mapping never touches it.
FIXED_ANSWER_CATEGORIES = frozenset({"Statistic", "Join", "NodeDepth", "TreeHeight", "Syntax"})
#: Tasks whose answer is a count or True/False (read from the task registry).
FIXED_ANSWER_TASKS = frozenset(t.task_id for t in TASKS.values() if t.category in FIXED_ANSWER_CATEGORIES)
#: Roles whose values name things: two of them may never end up with the same name.
IDENTIFIER_KINDS = frozenset({"node", "id", "key", "tag", "attribute", "primeKey", "file"})

GUIDELINES = [
    "Keep the data structure and format: do not change nesting or relationships.",
    "Use real-world values that fit the scenario.",
    "Keep related fields consistent (a city and its state, a height and a weight).",
    "Keep values consistent within the reference: the same thing has the same name everywhere.",
    "No sensitive or identifying information: no real people's names with personal data, "
    "no e-mail addresses, phone numbers or account numbers.",
]


class MappingError(ValueError):
    """A mapping that cannot be applied; holds every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def _character_problem(language: str, kinds: list[str], new: str) -> str | None:
    """Why ``new`` cannot stand where a token of these roles stands, or None: the rules every
    format shares first, then the format's own (``value_problem``)."""
    if "\n" in new or "\r" in new or "\t" in new:
        return "a line break or tab would break the layout"
    if "number" in kinds and not NUMBER_RE.match(new):
        return f"this is a number the answer depends on: write digits only (like 1250 or 72.5), not {new!r}"
    if "file" in kinds and not FILE_NAME_RE.match(new):
        return "a file name needs a name and an extension, without spaces (like finish_line.jpg)"
    return get_module(language).value_problem(new, set(kinds))


def clean_mapping(mapping: dict[str, str | None]) -> dict[str, str]:
    """Drop empty and unchanged entries; strip surrounding spaces from replacements."""
    out: dict[str, str] = {}
    for old, new in mapping.items():
        if new is None:
            continue
        new = str(new).strip()
        if new and new != old:
            out[str(old)] = new
    return out


def validate_mapping(sample: dict, mapping: dict[str, str | None]) -> list[Problem]:
    """Every reason ``mapping`` cannot be applied to ``sample`` (empty list: it can)."""
    tokens = {t.text: t for t in extract_tokens(sample)}
    cleaned = clean_mapping(mapping)
    problems = [p for old, new in cleaned.items() for p in _row_problems(sample["language"], tokens, old, new)]
    return problems + _name_clashes(tokens, cleaned)


def _row_problems(language: str, tokens: dict[str, Token], old: str, new: str) -> list[Problem]:
    """What is wrong with the one mapping row ``old -> new`` (at most one problem)."""
    where = f"mapping row {old!r} -> {new!r}"
    if old not in tokens:
        return [Problem("mapping", where, f"{old!r} is not an abstract token of this sample")]
    if new in RESERVED.get(language, frozenset()):
        return [Problem("mapping", where, f"{new!r} is a word of the {language} syntax; choose another")]
    reason = _character_problem(language, tokens[old].kinds, new)
    return [Problem("mapping", where, reason)] if reason else []


def _name_clashes(tokens: dict[str, Token], cleaned: dict[str, str]) -> list[Problem]:
    """Names must stay distinct: two ids (keys, tags, nodes, files...) may not end up the same."""
    problems: list[Problem] = []
    final: dict[str, str] = {}
    for token in tokens.values():
        kinds = set(token.kinds) & IDENTIFIER_KINDS
        if not kinds:
            continue
        name = cleaned.get(token.text, token.text)
        if name in final:
            problems.append(Problem("mapping", f"mapping rows {final[name]!r} and {token.text!r}",
                                    f"both would be named {name!r}; {'/'.join(sorted(kinds))} names must stay "
                                    "distinct"))
        else:
            final[name] = token.text
    return problems


def parse_mapping_text(text: str) -> dict[str, str]:
    """Read pasted mapping lines ``token -> replacement`` (blank lines and ``#`` comments skipped).

    Raises :class:`MappingError` naming every line that is not of that shape.
    """
    mapping: dict[str, str] = {}
    problems: list[Problem] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        old, arrow, new = line.partition("->")
        if not arrow or not old.strip() or not new.strip():
            problems.append(Problem("mapping", f"line {lineno}", f"expected 'token -> replacement', got {raw!r}"))
            continue
        if old.strip() in mapping and mapping[old.strip()] != new.strip():
            problems.append(Problem("mapping", f"line {lineno}", f"{old.strip()!r} is mapped twice"))
            continue
        mapping[old.strip()] = new.strip()
    if problems:
        raise MappingError(problems)
    return mapping


def substitute(text: str, mapping: dict[str, str], language: str | None = None) -> str:
    """Replace whole tokens of ``text`` that ``mapping`` names (one pass, never chained). In a
    ``language`` whose format has its own ``substitute`` (the markup formats: a word cut by an
    image or a bold run is one word), that one."""
    if not mapping:
        return text
    module = get_module(language) if language is not None else None
    if module is not None and hasattr(module, "substitute"):
        return module.substitute(text, mapping)
    return TOKEN_RE.sub(lambda m: mapping.get(m.group(), m.group()), text)


@dataclass(frozen=True)
class Texts:
    """The three parts a rewrite changes."""

    reference: str
    question: str
    answer: str

    def as_dict(self) -> dict:
        return {"reference": self.reference, "question": self.question, "answer": self.answer}


def rewrite_question(sample: dict, mapping: dict[str, str]) -> str:
    """The question with its parameters mapped, worded by the task's own template."""
    task = TASKS[sample["task_id"]]
    params = dict(sample.get("params") or {})
    try:
        templated = task.question(params) == sample["question"]
    except (KeyError, TypeError, ValueError):
        templated = False
    if templated:
        for name, value in question_params(sample).items():
            params[name] = substitute(value, mapping)
        return task.question(params)
    # A question not worded by our template: map only its parameter tokens.
    allowed = {t for v in question_params(sample).values() for t in tokens_in(v)}
    return substitute(sample["question"], {k: v for k, v in mapping.items() if k in allowed})


def apply_mapping(sample: dict, mapping: dict[str, str | None]) -> Texts:
    """Reference, question and answer of ``sample`` with ``mapping`` applied to each.

    Raises :class:`MappingError` (listing every problem) when the mapping is invalid.
    """
    problems = validate_mapping(sample, mapping)
    if problems:
        raise MappingError(problems)
    cleaned = clean_mapping(mapping)
    answer, language = sample["answer"], sample["language"]
    if sample["task_id"] not in FIXED_ANSWER_TASKS:
        answer = substitute(answer, cleaned, language)
    return Texts(substitute(sample["reference"], cleaned, language), rewrite_question(sample, cleaned), answer)


def original_texts(sample: dict) -> Texts:
    return Texts(sample["reference"], sample["question"], sample["answer"])


def has_free_edits(sample: dict, mapping: dict[str, str | None], texts: Texts) -> bool:
    """True when ``texts`` differ from what ``mapping`` alone makes of ``sample``."""
    try:
        return apply_mapping(sample, mapping) != texts
    except MappingError:
        return True
