"""How a reply to one of a lab's questions is scored.

A multiple-choice question: by its letter, read by the shared rule
(:func:`structext_core.evaluation.choices.parse_letter`): a reply naming two different letters, a
letter beyond the options, or none, is wrong (never its first letter). A short answer: by the set's
declared rule, against any of its accepted answers: the workbench's own ``normalised`` or ``verbatim``,
or one of Inspect AI's scorers, exactly as the pinned Inspect computes CORRECT
(:mod:`structext_core.labset.inspect_rules`, which also gives the rules' syntax).
"""

from __future__ import annotations

import re
import unicodedata

from structext_core.evaluation.choices import parse_letter
from structext_core.labset import inspect_rules
from structext_core.labset.inspect_rules import RULES, Rule, canonical_rule, parse_rule  # noqa: F401

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
    """The rule ``rule`` in one sentence, as the lead is shown it (a ``ValueError`` naming what is wrong
    when it is no rule)."""
    parsed = parse_rule(rule)
    if parsed.name == "verbatim":
        return ("A short answer is right when, white space at its ends aside, it is character for character "
                "one of the question's accepted answers.")
    if parsed.name == "normalised":
        return ("A short answer is right when it equals one of the question's accepted answers after both are "
                "normalised: Unicode NFKC, case ignored, punctuation removed, the articles a, an and the "
                "removed, and white space collapsed.")
    return inspect_rules.describe_inspect(parsed)


def describe_choice() -> str:
    """How a multiple-choice answer is scored, in one sentence."""
    return ("A multiple-choice answer is right when it names exactly one letter and that letter is the key; "
            "two different letters, a letter beyond the options, or none, are wrong.")


def short_right(reply: str, targets, rule: str | Rule) -> bool:
    """Whether ``reply`` is one of ``targets`` by ``rule`` (a rule as written, or parsed)."""
    parsed = rule if isinstance(rule, Rule) else parse_rule(rule)
    if parsed.name == "verbatim":
        return reply.strip() in {t.strip() for t in targets}
    if parsed.name == "normalised":
        said = normalise(reply)
        return bool(said) and said in {normalise(t) for t in targets}
    return inspect_rules.inspect_right(parsed, reply, targets)


def score(item, reply: str) -> float:
    """1.0 when ``reply`` is right for ``item`` (a :func:`~structext_core.labset.dataset.load_set` item), else 0.0."""
    if item["choices"]:
        return 1.0 if parse_letter(reply, len(item["choices"])) == item["target"][0] else 0.0
    return 1.0 if short_right(reply, item["target"], item["rule"]) else 0.0


#: How a short answer's key is written in a study (``study_answer``): ``"<rule>: t1 | t2"``.
KEY_SEPARATOR = inspect_rules.KEY_SEPARATOR


def study_key(item) -> str:
    """The key a person's answer is scored against in a study: the letter, or ``"<rule>: <targets>"``
    with the rule in its canonical form (:func:`~structext_core.labset.inspect_rules.key_rule`)."""
    if item["choices"]:
        return item["target"][0]
    return f"{inspect_rules.key_rule(parse_rule(item['rule']))}: " + KEY_SEPARATOR.join(item["target"])


def score_key(key: str, response: str) -> bool:
    """Whether ``response`` is right against a :func:`study_key` key. A key's bare ``exact`` is the rule
    written before Inspect's came, ``verbatim`` (:data:`~structext_core.labset.inspect_rules.LEGACY_KEY_RULES`)."""
    short = inspect_rules.split_key(key)
    if short is not None:
        return short_right(response, short[1], short[0])
    return parse_letter(response, 10) == key.strip().upper()
