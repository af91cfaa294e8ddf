"""What an AIBench item is: a paper with its logic graph and questions, and how a question is
put to a vision-language model (the paper's prompt) and how its reply is read.

A :class:`Paper` holds a :class:`LogicGraph` (phases, nodes, edges; cycles allowed) and its
:class:`Question` list. Each question has a level 1-4, 2-4 options and one answer among them;
options are lettered A, B, C, D in their order.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

#: The four levels: number -> the paper's name.
LEVELS: dict[int, str] = {
    1: "Component Existence",
    2: "Local Topology",
    3: "Phase Architecture",
    4: "Global Semantics",
}
#: The short column names of the paper's tables (C, T, P, S; A for aesthetics, O for overall).
LEVEL_COLUMNS: dict[int, str] = {1: "C", 2: "T", 3: "P", 4: "S"}
LETTERS = "ABCD"
#: The option levels 2-4 always include (at a varying letter).
INSUFFICIENT = ("The image does not contain sufficient information to answer or none of the other "
                "options are correct.")
NODE_TYPES = ("model", "data", "process", "decision")
SYSTEM_PROMPT = "You are a helpful assistant."
#: The paper's user prompt (Sec. 4); ``option_text`` is one ``A. text`` line per option.
USER_PROMPT = ("Question: {question}\nOptions:\n{option_text}\n\n"
               "Based on the given image only, answer with the option's letter from the given choices directly.")
#: The "system" that is the paper's own figure.
ORIGINAL_SYSTEM = "Original Image"


@dataclass(frozen=True)
class Phase:
    id: str
    label: str


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    phase_id: str | None
    type: str
    icon_hint: str = ""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str = ""


@dataclass(frozen=True)
class LogicGraph:
    """G = (V, E, P) as the authors write it; edges may form cycles."""

    phases: tuple[Phase, ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    title: str = ""
    layout_direction: str = ""

    def node(self, node_id: str) -> Node:
        """The node with this id (KeyError when there is none)."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)


@dataclass(frozen=True)
class Question:
    """One multiple-choice question: ``answer`` is the letter of the right option."""

    id: str
    level: int
    question: str
    options: tuple[str, ...]
    answer: str
    rationale: str = ""

    @property
    def chance(self) -> float:
        """The accuracy of guessing uniformly among the options, in [0, 1]."""
        return 1.0 / len(self.options)

    def option_text(self) -> str:
        """The options as the paper's prompt lists them, one ``A. text`` a line."""
        return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(self.options))


@dataclass(frozen=True)
class Paper:
    """One paper: its method text, original figure (a path relative to the import folder), graph
    and questions."""

    id: str
    conference: str
    year: int
    method_text: str
    original_figure: str
    graph: LogicGraph
    questions: tuple[Question, ...] = field(default=())


def solver_prompt(question: Question) -> str:
    """The paper's user prompt for ``question`` (the image is attached beside it)."""
    return USER_PROMPT.format(question=question.question, option_text=question.option_text())


#: A letter standing alone (``B``, ``(B)``, ``[B]``, ``**B**``), not part of a word (``B's``, ``U-Net``).
_MENTION = re.compile(r"(?<![A-Za-z0-9'’])[(\[]?\*{0,2}([A-Za-z])\*{0,2}[)\]]?(?![A-Za-z0-9'’-])")
#: After a letter: a lower-case word that makes it prose (the article "A good...", "I think"), unless
#: the word is one that a letter named as the answer is followed by (``B is correct``, ``A or B``).
_PROSE_AFTER = re.compile(r"[ \t]+([a-z]+)")
_ANSWER_WORDS_AFTER_LETTER = frozenset({
    "is", "are", "was", "were", "seems", "looks", "appears", "would", "could", "might", "may", "must", "should", "because",
    "since", "as", "and", "or", "nor", "but", "not", "vs", "versus", "fits", "matches"})
#: Before a letter: a word naming it as the answer (``The answer is``, ``Answer:``, ``option``).
_ANSWER_BEFORE = re.compile(r"(?i)\b(?:answer|option|choice)s?\b(?:[^\n.]{0,30}?\b(?:is|be|are))?[\s:=*-]*$")
#: Between two letters: a list or an alternative (``B, C``, ``B or C``, ``B, not C``, ``(B) / (C)``).
_JOINED = re.compile(r"(?i)[\s,;/&()\[\]*]*(?:(?:or|and|nor|not|but|vs\.?|versus|rather than|instead of)"
                     r"[\s,;/&()\[\]*]*)*")
#: Before a letter on its line: nothing but markup (``> ``, ``- ``, ``**``, quotes).
_LINE_START = re.compile(r"(?:^|\n)[ \t>#*\-\"'`]*$")


def named_letters(reply: str, n_options: int = 4) -> list[str]:
    """The letters a reply names as its answer, in order, upper-cased (see :func:`parse_letter`).

    A letter is *named as the answer* where it stands alone (not inside a word, not the article
    or pronoun of a sentence: ``A good question``, ``I think``) and it starts the reply or a line
    of it (``B``, ``(B)``, ``**B**``, ``B. text``), or follows ``answer``, ``option`` or ``choice``
    (``The answer is B``, ``Answer: (B)``), or is joined to a letter named so by a list or an
    alternative (``B, C``, ``B or C``, ``B, not C``). A lower-case letter counts only within the
    options (so ``e.g.`` names nothing). Linear in the reply's length."""
    named: list[str] = []
    previous_end: int | None = None  # where the last letter named as the answer ends
    for found in _MENTION.finditer(reply):
        letter = found.group(1)
        if letter.islower() and letter.upper() not in LETTERS[:n_options]:
            continue
        prose = _PROSE_AFTER.match(reply, found.end())
        if prose and prose.group(1) not in _ANSWER_WORDS_AFTER_LETTER:
            continue
        start = found.start()
        counted = _LINE_START.search(reply, max(0, start - 40), start) is not None \
            or _ANSWER_BEFORE.search(reply, max(0, start - 60), start) is not None \
            or (previous_end is not None and _JOINED.fullmatch(reply, previous_end, start) is not None)
        if counted:
            named.append(letter.upper())
            previous_end = found.end()
    return named


def parse_letter(reply: str, n_options: int = 4) -> str | None:
    """The option letter a reply gives, or None when it gives no clear one: the one rule for
    model replies (``aibench score``, the Inspect scorer) and people's answers alike.

    Clear means: the reply names exactly one letter as its answer (:func:`named_letters`), and
    that letter is one of the question's options. Two different letters (``B, C``, ``B or C``,
    ``B`` and ``C`` on two lines, ``The answer is B, not C``), a letter beyond the options, or none: no clear letter.
    Nothing is guessed. Upper and lower case name the same option (``b``, ``(b)``).
    """
    if len(reply) <= _CACHED_REPLY_CHARS:  # replies repeat ("B", "The answer is C."): read each once
        return _parse_short(reply, n_options)
    return _parse_letter(reply, n_options)


_CACHED_REPLY_CHARS = 200


@functools.lru_cache(maxsize=8192)
def _parse_short(reply: str, n_options: int) -> str | None:
    return _parse_letter(reply, n_options)


def _parse_letter(reply: str, n_options: int = 4) -> str | None:
    """:func:`parse_letter` without its cache."""
    letters = set(named_letters(reply, n_options))
    if len(letters) != 1:
        return None
    letter = letters.pop()
    return letter if letter in LETTERS[:n_options] else None


def absent_option_notes(n_options: int) -> dict[str, str]:
    """What the key of a letter a question does not offer says, by letter: for two options
    ``{"C": "This question has options A and B; C is not one of them.", "D": …}`` (a key that
    did nothing and said nothing left people pressing it again)."""
    offered = list(LETTERS[:max(0, n_options)])
    if not offered:
        return {}
    names = offered[0] if len(offered) == 1 else ", ".join(offered[:-1]) + " and " + offered[-1]
    has = f"option {names}" if len(offered) == 1 else f"options {names}"
    return {letter: f"This question has {has}; {letter} is not one of them." for letter in LETTERS[len(offered):]}
