"""Scoring a lab's questions: a letter for multiple choice, a declared rule for short answers."""
from __future__ import annotations

import pytest

from structext_core.labset import scoring

MC = {"choices": ["red", "green", "blue"], "target": ["B"], "rule": "normalised"}


@pytest.mark.parametrize(("reply", "right"), [
    ("B", True), ("(b)", True), ("The answer is B.", True), ("**B**", True),
    ("B or C", False), ("The answer is B, not C", False), ("B\nC", False),  # two letters: wrong, not the first
    ("A", False), ("D", False), ("", False), ("green", False),
])
def test_multiple_choice_is_scored_by_its_one_clear_letter(reply, right):
    assert scoring.score(MC, reply) == float(right)


@pytest.mark.parametrize(("rule", "reply", "targets", "right"), [
    ("normalised", "  The  Eiffel-Tower! ", ["eiffel tower"], True),
    ("normalised", "PARIS", ["Paris"], True),
    ("normalised", "an apple", ["Apple"], True),
    ("normalised", "Ｐａｒｉｓ", ["paris"], True),  # NFKC
    ("normalised", "Paris France", ["Paris"], False),
    ("normalised", "the", ["a"], False),  # nothing left is no answer
    ("normalised", "Lyon", ["Paris", "Lyon"], True),  # any of several targets
    ("exact", " Paris ", ["Paris"], True),
    ("exact", "paris", ["Paris"], False),
    ("exact", "Paris.", ["Paris"], False),
])
def test_a_short_answer_is_scored_by_its_declared_rule(rule, reply, targets, right):
    assert scoring.score({"choices": [], "target": targets, "rule": rule}, reply) == float(right)


def test_each_rule_is_described_to_the_lead():
    assert "case ignored" in scoring.describe_rule("normalised") and "articles" in scoring.describe_rule("normalised")
    assert "character for character" in scoring.describe_rule("exact")
    assert "two different letters" in scoring.describe_choice()
    with pytest.raises(ValueError, match="fuzzy"):
        scoring.describe_rule("fuzzy")


@pytest.mark.parametrize(("item", "response", "right"), [
    (MC, "B", True), (MC, "C", False),
    ({"choices": [], "target": ["Paris", "Lyon"], "rule": "normalised"}, "lyon!", True),
    ({"choices": [], "target": ["Paris", "Lyon"], "rule": "exact"}, "lyon", False),
    ({"choices": [], "target": ["A"], "rule": "exact"}, "A", True),
])
def test_a_study_key_scores_as_the_item_does(item, response, right):
    key = scoring.study_key(item)
    assert scoring.score_key(key, response) is right
    assert scoring.score(item, response) == float(right)
