"""How a reply to a multiple-choice question is read: the letters it names as its answer, and the
one clear letter or none (:func:`parse_letter`). One rule for every benchmark's multiple-choice
questions, for models' replies and people's answers alike.

Options are lettered A, B, C, ... in their order (:data:`LETTERS`, up to ten); a question with
``n_options`` options offers the first ``n_options`` letters.
"""

from __future__ import annotations

import functools
import re

from structext_core.text.words import series

#: The letters of options, in order (a question with n options offers the first n).
LETTERS = "ABCDEFGHIJ"


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
    model replies (a benchmark's ``score`` verb, the Inspect scorer) and people's answers alike.

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


def absent_option_notes(n_options: int, letters: str = LETTERS) -> dict[str, str]:
    """What the key of a letter a question does not offer says, by letter of ``letters`` (the keys
    the screen listens to): for two options ``{"C": "This question has options A and B; C is not one
    of them.", ...}`` (a key that did nothing and said nothing left people pressing it again)."""
    offered = list(letters[:max(0, n_options)])
    if not offered:
        return {}
    names = series(offered)
    has = f"option {names}" if len(offered) == 1 else f"options {names}"
    return {letter: f"This question has {has}; {letter} is not one of them." for letter in letters[len(offered):]}
