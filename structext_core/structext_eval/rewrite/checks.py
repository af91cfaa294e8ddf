"""The live checks of a rewrite: it reads in its format as the original does, its skeleton
equals the original's, and the answer the core's solver derives from the rewritten reference
equals the rewritten answer.

Reading and comparing skeletons is each format's knowledge (``parse_error``,
``line_signature`` and ``compare_structure`` in :mod:`structext_core.structext_eval.formats`);
the order of the checks, the limits and the answer check are the same for every format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from structext_core.structext_eval.formats import TOKEN_RE, Problem, ReadError, get_module
from structext_core.structext_eval.rewrite.tokens import extract_tokens
from structext_core.structext_eval.tasks import TASKS, answers_agree
from structext_core.text import limits

#: A document that does not parse is compared line by line; this many differing lines are named.
MAX_LINE_PROBLEMS = 5

#: When the answer check runs (see :func:`check_rewrite`): always (a reviewer, an admin who may
#: accept a structure exception), only once the structure check passes (an annotator), or never
#: (an annotator with open questions in the rewrite's format or task category: :mod:`structext_core.studio.seal`).
ANSWER_ALWAYS, ANSWER_AFTER_STRUCTURE, ANSWER_WITHHELD = "always", "after_structure", "withheld"
ANSWER_MODES = (ANSWER_ALWAYS, ANSWER_AFTER_STRUCTURE, ANSWER_WITHHELD)
#: Said where the answer check's result would be when the structure check failed first.
ANSWER_AFTER_STRUCTURE_NOTE = "Answer: checked once the structure check passes."


@dataclass
class CheckReport:
    """The live checks of one rewrite."""

    parse: list[Problem] = field(default_factory=list)
    structure: list[Problem] = field(default_factory=list)
    answer: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    solved: str | None = None
    #: Why the answer check did not run (None when it ran): the structure check failed first,
    #: or the answer check is withheld from this person (:mod:`structext_core.studio.seal`).
    answer_note: str | None = None

    @property
    def structure_ok(self) -> bool:
        """The rewrite reads as the original does and has the original's skeleton."""
        return not self.parse and not self.structure

    @property
    def answer_ok(self) -> bool:
        """No answer problem was found (also when the answer check did not run: see ``answer_checked``)."""
        return not self.answer

    @property
    def answer_checked(self) -> bool:
        """The answer check ran."""
        return self.answer_note is None

    def without_answer(self, note: str) -> CheckReport:
        """This report as someone sees it who may not see the answer check: its result and the
        solver's answer left out, ``note`` in their place."""
        return CheckReport(parse=list(self.parse), structure=list(self.structure), answer=[],
                           warnings=list(self.warnings), solved=None, answer_note=note)

    @property
    def ok(self) -> bool:
        return self.structure_ok and self.answer_ok

    @property
    def problems(self) -> list[Problem]:
        return self.parse + self.structure + self.answer


def check_structure(language: str, original: str, rewrite: str) -> tuple[list[Problem], list[Problem]]:
    """(parse problems, skeleton problems) of ``rewrite`` against ``original``.

    Either text beyond a limit of :mod:`structext_core.text.limits` (size, lines, nesting, aliases,
    entities, control characters...) is one parse problem naming the limit and where; no
    parser sees it."""
    for who, text in (("original", original), ("rewrite", rewrite)):
        try:
            limits.check_reference(language, text, f"the {who}")
        except limits.ParseLimitError as exc:
            return [Problem("parse", who, f"cannot be checked: {exc}")], []
    module = get_module(language)
    o_error, r_error = module.parse_error(original), module.parse_error(rewrite)
    if o_error is None and r_error is not None:
        return [Problem("parse", "rewrite", f"does not read as {language}: {r_error}")], []
    if o_error is not None:
        # A Syntax sample with its injected error: the rewrite keeps the error and the layout.
        parse = []
        if r_error is None:
            parse.append(Problem("parse", "rewrite", f"the original has a structural error ({o_error}); the "
                                                     "rewrite must keep it, but it reads without error"))
        return parse, _compare_lines(module.line_signature, original, rewrite)
    try:
        return [], module.compare_structure(original, rewrite)
    except ReadError as exc:
        return [Problem("parse", "rewrite", str(exc))], []


def _compare_lines(signature, original: str, rewrite: str) -> list[Problem]:
    """Line by line, each line's shape with the data masked (``signature``)."""
    o_lines, r_lines = original.split("\n"), rewrite.split("\n")
    problems = []
    for n, (o, r) in enumerate(zip(o_lines, r_lines), 1):
        so, sr = signature(o), signature(r)
        if so != sr:
            problems.append(Problem("structure", f"line {n}", f"shaped {sr!r} in the rewrite, {so!r} in the original"))
            if len(problems) >= MAX_LINE_PROBLEMS:
                return problems
    if len(o_lines) != len(r_lines):
        problems.append(Problem("structure", "document", f"{len(o_lines)} lines in the original, {len(r_lines)} in "
                                                         "the rewrite"))
    return problems


def _first_difference(expected: str, got: str) -> str:
    e_lines, g_lines = expected.split("\n"), got.split("\n")
    for n, (e, g) in enumerate(zip(e_lines, g_lines), 1):
        if e != g:
            return f"line {n} of the answer reads {g!r}; the solver has {e!r}"
    if len(e_lines) != len(g_lines):
        return f"the answer has {len(g_lines)} line(s); the solver's has {len(e_lines)}"
    return "they differ in order or spacing"


def _refused_input(question: str, answer: str) -> Problem | None:
    """The question or answer beyond a limit, as the answer check's problem."""
    try:
        limits.check_question(question)
        if len(answer) > limits.MAX_INPUT_CHARS:
            limits.refuse("MAX_INPUT_CHARS", len(answer), f"the answer has {len(answer):,} characters")
    except limits.ParseLimitError as exc:
        return Problem("answer", "answer" if exc.limit == "MAX_INPUT_CHARS" else "question", str(exc))
    return None


def check_answer(sample: dict, reference: str, question: str, answer: str) -> tuple[list[Problem], str | None]:
    """Solve the rewritten question from the rewritten reference; compare with the rewritten answer."""
    task = TASKS[sample["task_id"]]
    refused = _refused_input(question, answer)
    if refused:
        return [refused], None
    try:
        task.parse(question)
    except ReadError as exc:
        return [Problem("answer", "question", f"the question can no longer be read ({exc}); keep the original "
                                              "sentence and change only its values")], None
    try:
        solved = task.solve_text(reference, question, sample.get("depth") or 0, sample.get("width") or 0)
    except (ReadError, KeyError, IndexError, ValueError) as exc:
        # Solvers raise ReadError for what they cannot read; a lost column may surface as KeyError.
        reason = f"no column {exc}" if isinstance(exc, KeyError) else str(exc)
        return [Problem("answer", "reference", f"the solver cannot answer the question from the rewrite: "
                                               f"{reason}")], None
    if answers_agree(task, answer, solved):
        return [], solved
    if "\n" in solved or "\n" in answer:
        detail = _first_difference(solved, answer)
    else:
        detail = f"the rewritten answer is {answer!r}, the solver derives {solved!r} from the rewritten reference"
    return [Problem("answer", "answer", detail)], solved


_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.]")  # starts a word: linear on any text
_PHONE = re.compile(r"\b\d{3}[-. ]\d{3}[-. ]\d{4}\b")


def _warnings(sample: dict, reference: str, question: str, answer: str) -> list[str]:
    """Abstract tokens left in the reference, and what looks like contact details."""
    warnings = []
    present = set(TOKEN_RE.findall(reference))  # one pass, not one search per token
    left = [t.text for t in extract_tokens(sample) if len(t.text) > 1 and t.text in present]
    if left:
        shown = ", ".join(left[:8]) + (" …" if len(left) > 8 else "")
        warnings.append(f"{len(left)} abstract token(s) of two or more letters are still in the reference: {shown}")
    for part, text in (("reference", reference), ("question", question), ("answer", answer)):
        if _EMAIL.search(text) or _PHONE.search(text):
            warnings.append(f"the {part} seems to hold an e-mail address or a phone number: use no "
                            "identifying information")
    return warnings


def check_rewrite(sample: dict, reference: str, question: str, answer: str,
                  answer_mode: str = ANSWER_ALWAYS, withheld_note: str = "") -> CheckReport:
    """All live checks of a rewrite of ``sample``: parse, skeleton, answer (and warnings).

    ``answer_mode`` says when the answer check runs: :data:`ANSWER_ALWAYS`,
    :data:`ANSWER_AFTER_STRUCTURE` (not when the structure check fails: a document of another
    shape is no rewrite of this one) or :data:`ANSWER_WITHHELD` (never; ``withheld_note`` says
    why). When it does not run, no answer is worked out at all and ``answer_note`` says why."""
    if answer_mode not in ANSWER_MODES:
        raise ValueError(f"unknown answer mode {answer_mode!r}: one of {', '.join(ANSWER_MODES)}")
    report = CheckReport()
    report.parse, report.structure = check_structure(sample["language"], sample["reference"], reference)
    if answer_mode == ANSWER_WITHHELD:
        report.answer_note = withheld_note or "Answer: checked at review."
    elif answer_mode == ANSWER_AFTER_STRUCTURE and not report.structure_ok:
        report.answer_note = ANSWER_AFTER_STRUCTURE_NOTE
    else:
        report.answer, report.solved = check_answer(sample, reference, question, answer)
    if max(len(reference), len(question), len(answer)) <= limits.MAX_INPUT_CHARS:
        # (beyond it, refused above; not searched for tokens or addresses either)
        report.warnings = _warnings(sample, reference, question, answer)
    return report
