"""The reference as an annotator works with it on the human-baseline page (issue 13, long
answers): numbered lines, search, a window of lines around one, lines X to Y taken verbatim
and appended to the answer, and the answer's size. Pure data for ``pages/human_baseline.py`` (drawn by
``structext_core/ui/question_screen/reference_viewer.py``).

Test-Hard answers are long (JSON answers average about 3,900 characters; one takes 216
excerpts of the reference), so copying by hand into the answer box is the slow part of the
work. These functions make "take lines 42 to 47" one action, and keep it verbatim.

What a line is: the text up to a ``"\\n"`` (the viewer, ``st.code``, numbers lines the same
way). A final ``"\\n"`` ends the last line and opens no new one; a ``"\\r"`` before a
``"\\n"`` stays part of its line, so taken lines are exactly the reference's characters.

Costs, for references up to the limits' 1,000,000 characters: :meth:`Lines.of` is one split
(the line offsets, a running sum, are worked out only once a search needs them);
:func:`search` is ``str.count`` and ``str.find`` (no regular expression is ever built from
the annotator's text), at most ``limit`` hits located by bisection; :func:`window` and
:func:`take` touch only the lines asked for. Every size an annotator controls is bounded
(query length, hits listed, window radius, lines taken at once, answer length).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

#: Longest search text (a search is for a key or a value, not a paragraph).
MAX_QUERY_CHARS = 200
#: Most hits listed for one search; the total is still counted and stated.
MAX_HITS = 200
#: Characters of a line shown with a hit (around the match).
EXCERPT_CHARS = 90
#: Lines shown before and after the line jumped to (more after: the line stays near the
#: top of the view, where the eye lands), and the most a caller may ask for on either side.
WINDOW_BEFORE = 6
WINDOW_AFTER = 18
MAX_WINDOW_RADIUS = 200
#: Characters of one line shown in a window (minified JSON can be one line of 100,000).
MAX_ROW_CHARS = 1_000
#: Most lines taken into the answer at once (the longest Test-Hard reference has about 11,000).
MAX_TAKE_LINES = 20_000
#: The answer box's height (drawn in the browser, structext_core/ui/light_answer.py): one row per line of the
#: answer and one to type on, at least / at most this many rows, and what a row takes in pixels.
MIN_BOX_ROWS = 8
MAX_BOX_ROWS = 26
BOX_ROW_PX = 24

# ``str.lower`` keeps a string's length except for one character, "İ" (U+0130), which it
# turns into two. Mapping it to "i" first keeps offsets in the lowered text equal to
# offsets in the reference (tests/views/test_reference.py checks every code point).
_SAME_LENGTH_LOWER = {0x130: "i"}


class ReferenceInputError(ValueError):
    """A line number, range or search text typed by the annotator that cannot be used; the
    message says which number or text, and why."""


def _lower(text: str) -> str:
    return (text.translate(_SAME_LENGTH_LOWER) if "\u0130" in text else text).lower()


@dataclass(frozen=True, eq=False)
class Lines:
    """A reference split once into numbered lines (1 to ``len(lines)``)."""

    text: str
    lines: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Lines:
        """Split ``text`` into lines (see the module notes for what a line is)."""
        if not isinstance(text, str):
            raise TypeError(f"a reference is text, got {type(text).__name__}")
        lines = text.split("\n")
        if text == "" or text.endswith("\n"):
            lines.pop()
        return cls(text, tuple(lines))

    @cached_property
    def starts(self) -> tuple[int, ...]:
        """Offset in ``text`` where each line starts (worked out when a search first needs it:
        taking lines does not, and it costs more than the split)."""
        return tuple(accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0)) if self.lines else ()

    def __len__(self) -> int:
        return len(self.lines)

    def numbered(self, first: int = 1, last: int | None = None) -> list[tuple[int, str]]:
        """``(number, line)`` for lines ``first`` to ``last`` (clamped to the reference)."""
        last = len(self) if last is None else min(last, len(self))
        first = max(1, first)
        return [(number, self.lines[number - 1]) for number in range(first, last + 1)]

    def locate(self, offset: int) -> tuple[int, int]:
        """``(line, column)`` of a character offset, both counted from 1."""
        index = bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


# ---------------------------------------------------------------- line numbers


def check_line(value: object, lines: Lines, name: str = "Line") -> int:
    """``value`` as a line number of ``lines``; :class:`ReferenceInputError` naming ``name``
    and the bad number otherwise."""
    if value is None or value == "":
        raise ReferenceInputError(f"Type a line number in '{name}'.")
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or value != int(value)):
        raise ReferenceInputError(f"'{name}' must be a whole line number, got {value!r}.")
    number = int(value)
    if number < 1:
        raise ReferenceInputError(f"'{name}' is {number}: line numbers start at 1.")
    if number > len(lines):
        raise ReferenceInputError(
            f"'{name}' is {number:,}, past the end: the reference has {_count(len(lines), 'line')}."
        )
    return number


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


# ---------------------------------------------------------------- search


@dataclass(frozen=True)
class Hit:
    """One match: where it is and the line around it."""

    line: int
    #: Character column of the match's first character, from 1.
    column: int
    #: Characters of the match on its line (a match running over a line break is cut there).
    length: int
    #: The line around the match, at most about :data:`EXCERPT_CHARS`, "…" where cut.
    excerpt: str
    #: Where the match is in ``excerpt`` (``excerpt[start:end]``).
    start: int
    end: int

    @property
    def label(self) -> str:
        """``Line 42, column 7: …"name": "Ada"…``: one line, for a list of hits."""
        return f"Line {self.line:,}, column {self.column:,}: {self.excerpt}"


@dataclass(frozen=True)
class Search:
    """The hits of a search: all counted (``total``), the first ``limit`` listed."""

    query: str
    case_sensitive: bool
    total: int
    hits: tuple[Hit, ...]

    @property
    def truncated(self) -> bool:
        """True when more matches exist than are listed."""
        return self.total > len(self.hits)

    @property
    def summary(self) -> str:
        """``No match``, ``1 match``, ``12 matches``, ``1,234 matches (the first 200 listed)``."""
        if not self.total:
            return "No match"
        said = _count(self.total, "match", "matches")
        return f"{said} (the first {len(self.hits):,} listed)" if self.truncated else said


def search(lines: Lines, query: str, *, case_sensitive: bool = False, limit: int = MAX_HITS) -> Search:
    """Every occurrence of ``query`` in the reference, as plain text (no pattern syntax).

    Matches do not overlap (as ``str.count`` counts them); case-insensitive by default. An
    empty query finds nothing. Raises :class:`ReferenceInputError` for a query over
    :data:`MAX_QUERY_CHARS` characters.
    """
    if not isinstance(query, str):
        raise ReferenceInputError("The search text must be text.")
    if len(query) > MAX_QUERY_CHARS:
        raise ReferenceInputError(
            f"The search text has {len(query):,} characters; the limit is {MAX_QUERY_CHARS}. "
            "Search for a shorter piece."
        )
    if not query:
        return Search(query, case_sensitive, 0, ())
    haystack, needle = (lines.text, query) if case_sensitive else (_lower(lines.text), _lower(query))
    total = haystack.count(needle)
    hits, offset = [], haystack.find(needle)
    while offset != -1 and len(hits) < max(0, limit):
        hits.append(_hit(lines, offset, len(needle)))
        offset = haystack.find(needle, offset + len(needle))
    return Search(query, case_sensitive, total, tuple(hits))


def _hit(lines: Lines, offset: int, size: int) -> Hit:
    number, column = lines.locate(offset)
    line = lines.lines[number - 1]
    begin = column - 1
    length = min(size, len(line) - begin)
    room = max(0, EXCERPT_CHARS - length)
    left = max(0, begin - room // 2)
    right = min(len(line), max(begin + length, left + EXCERPT_CHARS))
    left = max(0, min(left, right - EXCERPT_CHARS))
    head = "…" if left > 0 else ""
    tail = "…" if right < len(line) else ""
    excerpt = head + line[left:right] + tail
    start = len(head) + begin - left
    return Hit(number, column, length, excerpt, start, start + length)


# ---------------------------------------------------------------- a window of lines


@dataclass(frozen=True)
class Row:
    """One numbered line of a window, cut to :data:`MAX_ROW_CHARS` around what matters."""

    number: int
    text: str
    #: Characters of the line left out before and after ``text``.
    cut_before: int
    cut_after: int
    #: The hit's span in ``text`` (the target line of a search only).
    mark: tuple[int, int] | None = None


@dataclass(frozen=True)
class Window:
    """Lines ``first`` to ``last`` around ``target``."""

    first: int
    last: int
    target: int
    rows: tuple[Row, ...]

    @property
    def caption(self) -> str:
        """``Lines 30–54, around line 42``."""
        return f"Lines {self.first:,}–{self.last:,}, around line {self.target:,}"


def window(
    lines: Lines, target: object, *, before: int = WINDOW_BEFORE, after: int = WINDOW_AFTER,
    hit: Hit | None = None,
) -> Window:
    """The lines around ``target``: ``before`` lines before it and ``after`` after (fewer at
    the ends; each at most :data:`MAX_WINDOW_RADIUS`). With a ``hit`` on the target line,
    its match is marked and the line is cut around it.

    Raises :class:`ReferenceInputError` for a target that is not a line of the reference.
    """
    number = check_line(target, lines, "Go to line")
    before, after = (max(0, min(int(n), MAX_WINDOW_RADIUS)) for n in (before, after))
    first, last = max(1, number - before), min(len(lines), number + after)
    rows = []
    for n in range(first, last + 1):
        focus = hit if hit is not None and hit.line == n else None
        rows.append(_row(n, lines.lines[n - 1], focus))
    return Window(first, last, number, tuple(rows))


def _row(number: int, line: str, hit: Hit | None) -> Row:
    if len(line) <= MAX_ROW_CHARS:
        left, right = 0, len(line)
    else:
        middle = 0 if hit is None else hit.column - 1 + hit.length // 2
        left = max(0, min(middle - MAX_ROW_CHARS // 2, len(line) - MAX_ROW_CHARS))
        right = left + MAX_ROW_CHARS
    mark = None
    if hit is not None:
        begin = max(left, hit.column - 1)
        end = min(right, hit.column - 1 + hit.length)
        mark = (begin - left, end - left) if end > begin else None
    return Row(number, line[left:right], left, len(line) - right, mark)


def window_data(view: Window) -> dict:
    """The window as plain data for the page's reference-window component, which puts every
    text on the page as text (``textContent``), never as HTML: ``rows`` of ``[number, text,
    mark or None, cut_before, cut_after]`` (``mark``: the match's ``[begin, end]`` in
    ``text``), and the ``target`` line."""
    return {
        "target": view.target,
        "rows": [[row.number, row.text, list(row.mark) if row.mark else None, row.cut_before, row.cut_after]
                 for row in view.rows],
    }


# ---------------------------------------------------------------- taking lines into the answer


def take(lines: Lines, first: object, last: object, *, max_lines: int = MAX_TAKE_LINES) -> str:
    """Lines ``first`` to ``last`` (both included) exactly as in the reference, joined by
    ``"\\n"`` and without a final line break.

    Raises :class:`ReferenceInputError` naming the bad number unless
    1 <= first <= last <= the number of lines and the range has at most ``max_lines`` lines.
    """
    start = check_line(first, lines, "From line")
    end = check_line(last, lines, "To line")
    if start > end:
        raise ReferenceInputError(
            f"'From line' ({start:,}) is after 'To line' ({end:,}): give the first line first."
        )
    if end - start + 1 > max_lines:
        raise ReferenceInputError(
            f"Lines {start:,}–{end:,} are {end - start + 1:,} lines; at most {max_lines:,} are added at "
            "once. Add them in parts."
        )
    return "\n".join(lines.lines[start - 1:end])


def append(answer: str, addition: str, *, max_chars: int | None = None) -> str:
    """The answer with ``addition`` added at its end, on a line of its own.

    The rule: an empty answer becomes ``addition``; an answer that ends with a line break
    gets ``addition`` right after it; any other answer gets one ``"\\n"`` and then
    ``addition``. So the added lines always start a new line, no blank line is inserted,
    and the answer's own text is never changed.

    Raises :class:`ReferenceInputError` when the result would be longer than ``max_chars``.
    """
    answer = answer or ""
    joined = answer + addition if answer == "" or answer.endswith("\n") else answer + "\n" + addition
    if max_chars is not None and len(joined) > max_chars:
        raise ReferenceInputError(
            f"With these lines your answer would have {len(joined):,} characters; the limit is "
            f"{max_chars:,}. Add fewer lines."
        )
    return joined


# ---------------------------------------------------------------- the answer's size


@dataclass(frozen=True)
class AnswerSize:
    """How long the answer is, counted the way the reference's lines are."""

    lines: int
    chars: int

    def __str__(self) -> str:
        return f"{_count(self.lines, 'line')} · {_count(self.chars, 'character')}"


def answer_size(text: str) -> AnswerSize:
    """Lines and characters of ``text`` (``""``: 0 lines; ``"a\\n"``: 1 line)."""
    text = text or ""
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return AnswerSize(lines, len(text))
