"""The checks of a reviewed AIBench question, as the expert-review page runs them while typing.

:func:`check_question` returns the problems that block submitting (the answer is one of the
options, options distinct, 2-4 options, the "not enough information" option present on levels
2-4, a question text) and the warnings that do not: on levels 1-3, where the logic graph decides
the question by rule, a warning when the reviewer's answer is not the graph's.

Which rule a question follows is read from its text: the question templates of the synthetic
set (:data:`structext_core.aibench.synthetic.questions.TEXTS`) are matched exactly, and the
graph's answer is :func:`structext_core.aibench.synthetic.rules.right_answer` on the paper's own
logic graph. A question in other words, or one the graph does not single out an answer to
(the rule gives "insufficient"), gets no graph warning: the graph does not decide it by rule.

Pure functions over bounded input (every text is cut to the import's limits first); no database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from structext_core.aibench import limits
from structext_core.aibench.model import INSUFFICIENT, LETTERS, LEVELS, LogicGraph, Question
from structext_core.aibench.synthetic import questions as synthetic_questions
from structext_core.aibench.synthetic import rules

#: The levels on which the logic graph may decide a question by rule.
RULED_LEVELS = (1, 2, 3)
_FIELD = r"(?P<{name}>.{{1,1000}}?)"


def _template_pattern(template: str) -> re.Pattern:
    parts = re.split(r"(\{[a-z]+\})", template)
    out = []
    for part in parts:
        name = re.fullmatch(r"\{([a-z]+)\}", part)
        out.append(_FIELD.format(name=name.group(1)) if name else re.escape(part))
    return re.compile("".join(out))


_TEMPLATES: tuple[tuple[str, re.Pattern], ...] = tuple(
    (kind, _template_pattern(text)) for kind, text in synthetic_questions.TEXTS.items()
    if kind not in ("task", "modality"))
_RULE_LEVELS = {"exists": 1, "successor": 2, "predecessor": 2, "fan_out": 3, "fan_in": 3, "feedback": 3,
                "in_phase": 3}


@dataclass(frozen=True)
class Check:
    """What the checks found: ``problems`` block submitting, ``warnings`` do not."""

    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    graph_answer: str | None = None  # the option text the logic graph gives, where it decides
    rule: dict | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return not self.problems


def rule_of(text: str) -> dict | None:
    """The rule a question's text follows (``{"kind": ..., ...}``), or None when it follows none."""
    text = (text or "").strip()[: limits.MAX_QUESTION_CHARS]
    for kind, pattern in _TEMPLATES:
        found = pattern.fullmatch(text)
        if found:
            return {"kind": kind, **found.groupdict()}
    return None


def graph_answer(question: Question, graph: LogicGraph | None) -> tuple[str | None, dict | None]:
    """(the option text the logic graph gives, the rule) where the graph decides ``question`` by
    rule on levels 1-3; (None, rule or None) otherwise."""
    if graph is None or question.level not in RULED_LEVELS:
        return None, None
    rule = rule_of(question.question)
    if rule is None or _RULE_LEVELS[rule["kind"]] != question.level:
        return None, rule
    options = list(question.options)
    if rule["kind"] == "exists":
        if sorted(options) != ["No", "Yes"]:
            return None, rule
    elif INSUFFICIENT not in options:
        return None, rule
    try:
        letter = rules.right_answer(rule, options, graph)
    except (KeyError, ValueError):  # a graph whose edges name unknown nodes: no rule applies
        return None, rule
    text = options[LETTERS.index(letter)]
    if rule["kind"] != "exists" and text == INSUFFICIENT:
        return None, rule  # the graph does not single out one option
    return text, rule


def check_question(question: Question, graph: LogicGraph | None) -> Check:
    """The problems and warnings of one question as a reviewer left it (see the module)."""
    problems: list[str] = []
    if question.level not in LEVELS:
        problems.append(f"the level must be 1-4, not {question.level!r}")
    if not question.question.strip():
        problems.append("the question text is empty")
    elif len(question.question) > limits.MAX_QUESTION_CHARS:
        problems.append(f"the question has {len(question.question):,} characters; at most "
                        f"{limits.MAX_QUESTION_CHARS:,}")
    options = [o.strip() for o in question.options]
    if not 2 <= len(options) <= len(LETTERS):
        problems.append(f"a question needs 2-{len(LETTERS)} options, this one has {len(options)}")
    if any(not o for o in options):
        problems.append("an option is empty")
    if any(len(o) > limits.MAX_LABEL_CHARS for o in options):
        problems.append(f"an option is longer than {limits.MAX_LABEL_CHARS:,} characters")
    lowered = [o.casefold() for o in options if o]
    if len(set(lowered)) != len(lowered):
        problems.append("two options are the same: options must be distinct")
    if question.answer not in LETTERS[: len(options)]:
        problems.append(f"the answer {question.answer!r} is not one of the options "
                        f"({', '.join(LETTERS[: len(options)])})")
    if question.level in (2, 3, 4) and INSUFFICIENT not in options:
        problems.append(f'level {question.level} needs the option "{INSUFFICIENT}"')
    warnings: list[str] = []
    text, rule = (None, None) if problems else graph_answer(question, graph)
    if text is not None and options[LETTERS.index(question.answer)] != text:
        warnings.append(f'The logic graph answers this question with "{text}" (rule: {rule["kind"]}), '
                        f'not "{options[LETTERS.index(question.answer)]}". Check the figure and the graph.')
    return Check(tuple(problems), tuple(warnings), text, rule)
