"""How a reply to one of a lab's questions is scored.

A multiple-choice question: by its letter, read by the shared rule
(:func:`structext_core.evaluation.choices.parse_letter`): a reply naming two different letters, a
letter beyond the options, or none, is wrong (never its first letter). A short answer: by the set's
declared rule (:data:`structext_core.labset.dataset.RULES`), against any of its accepted answers.
"""

from __future__ import annotations

import re
import unicodedata

from structext_core.evaluation.choices import parse_letter

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` as the rule ``normalised`` compares it: Unicode NFKC, case-folded, every punctuation
    character (Unicode category P*) removed, the English articles *a*, *an*, *the* removed as
    words, runs of white space made one space, and the ends stripped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    return _SPACES.sub(" ", _ARTICLES.sub(" ", text)).strip()


def describe_rule(rule: str) -> str:
    """The rule ``rule`` in one sentence, as the lead is shown it."""
    if rule == "exact":
        return ("A short answer is right when, white space at its ends aside, it is character for character "
                "one of the question's accepted answers.")
    if rule == "normalised":
        return ("A short answer is right when it equals one of the question's accepted answers after both are "
                "normalised: Unicode NFKC, case ignored, punctuation removed, the articles a, an and the "
                "removed, and white space collapsed.")
    raise ValueError(f"no answer rule {rule!r}")


def describe_choice() -> str:
    """How a multiple-choice answer is scored, in one sentence."""
    return ("A multiple-choice answer is right when it names exactly one letter and that letter is the key; "
            "two different letters, a letter beyond the options, or none, are wrong.")


def short_right(reply: str, targets, rule: str) -> bool:
    """Whether ``reply`` is one of ``targets`` by ``rule``."""
    if rule == "exact":
        return reply.strip() in {t.strip() for t in targets}
    if rule == "normalised":
        said = normalise(reply)
        return bool(said) and said in {normalise(t) for t in targets}
    raise ValueError(f"no answer rule {rule!r}")


def score(item, reply: str) -> float:
    """1.0 when ``reply`` is right for ``item`` (a :func:`~structext_core.labset.dataset.load_set` item), else 0.0."""
    if item["choices"]:
        return 1.0 if parse_letter(reply, len(item["choices"])) == item["target"][0] else 0.0
    return 1.0 if short_right(reply, item["target"], item["rule"]) else 0.0


#: How a short answer's key is written in a study (``study_answer``): ``"<rule>: t1 | t2"``.
KEY_SEPARATOR = " | "


def study_key(item) -> str:
    """The key a person's answer is scored against in a study: the letter, or ``"<rule>: <targets>"``."""
    if item["choices"]:
        return item["target"][0]
    return f"{item['rule']}: " + KEY_SEPARATOR.join(item["target"])


def score_key(key: str, response: str) -> bool:
    """Whether ``response`` is right against a :func:`study_key` key."""
    rule, sep, targets = key.partition(": ")
    if sep and rule in ("exact", "normalised"):
        return short_right(response, targets.split(KEY_SEPARATOR), rule)
    return parse_letter(response, 10) == key.strip().upper()
