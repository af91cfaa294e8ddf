"""What a rewrite changed, line by line: the reviewer's diff of original and rewrite.

A reviewer reads the rewritten reference, question and answer against the abstract original.
Side by side they look alike for hundreds of lines; a unified diff (``difflib``) shows only
what changed, removed lines marked ``-`` and added ones ``+``, with a little context.

Bounded, since a draft is text a person typed: a part longer than :data:`MAX_DIFF_INPUT_CHARS`
or :data:`MAX_DIFF_INPUT_LINES` is not compared at all (``difflib`` takes quadratic time at
worst: 2,000 lines changed every other line take half a second; Test references have at most
99 lines), and a diff longer than :data:`MAX_DIFF_LINES` is cut, with a note saying so.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from structext_core.structext_eval.rewrite.mapping import Texts

#: A part (reference, question, answer) longer than this on either side is not compared.
MAX_DIFF_INPUT_CHARS = 100_000
MAX_DIFF_INPUT_LINES = 2_000
#: A diff longer than this many lines is cut (the rest is counted in the note).
MAX_DIFF_LINES = 600
#: Unchanged lines shown around each change.
CONTEXT_LINES = 2
PARTS = ("reference", "question", "answer")


@dataclass(frozen=True)
class TextDiff:
    """The diff of one part: ``text`` in unified form (``---``/``+++`` header, ``@@`` hunks,
    ``-`` removed, ``+`` added, `` `` context), how many lines were ``added`` and ``removed``,
    and a ``note`` when the diff was cut or not made (then ``compared`` is False)."""

    part: str
    text: str
    added: int
    removed: int
    compared: bool = True
    note: str | None = None

    @property
    def identical(self) -> bool:
        """Nothing changed (only meaningful when ``compared``)."""
        return self.compared and not self.added and not self.removed

    @property
    def summary(self) -> str:
        """``"+12 / -12 lines"``, ``"unchanged"`` or ``"not compared"``."""
        if not self.compared:
            return "not compared"
        return "unchanged" if self.identical else f"+{self.added} / -{self.removed} lines"


def diff_text(part: str, original: str, rewritten: str, *, max_lines: int = MAX_DIFF_LINES) -> TextDiff:
    """The unified diff of ``original`` and ``rewritten`` (one part of a sample), within the bounds."""
    for who, text in (("original", original), ("rewrite", rewritten)):
        lines = text.count("\n") + 1
        if len(text) > MAX_DIFF_INPUT_CHARS or lines > MAX_DIFF_INPUT_LINES:
            return TextDiff(part, "", 0, 0, compared=False,
                            note=f"Not compared: the {who}'s {part} has {len(text):,} characters in {lines:,} lines; "
                                 f"a diff is made up to {MAX_DIFF_INPUT_CHARS:,} characters and "
                                 f"{MAX_DIFF_INPUT_LINES:,} lines. Read the two side by side below.")
    if original == rewritten:
        return TextDiff(part, "", 0, 0)
    lines = list(difflib.unified_diff(original.split("\n"), rewritten.split("\n"), f"original {part}",
                                      f"rewritten {part}", n=CONTEXT_LINES, lineterm=""))
    body = lines[2:]  # after the two header lines
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    note = None
    if len(lines) > max_lines:
        note = (f"The diff has {len(lines):,} lines; the first {max_lines:,} are shown "
                f"({added:,} added and {removed:,} removed in all).")
        lines = lines[:max_lines]
    return TextDiff(part, "\n".join(lines), added, removed, note=note)


def diff_texts(original: Texts, rewritten: Texts, *, max_lines: int = MAX_DIFF_LINES) -> list[TextDiff]:
    """The diff of each part (reference, question, answer), in that order."""
    return [diff_text(part, getattr(original, part), getattr(rewritten, part), max_lines=max_lines)
            for part in PARTS]
