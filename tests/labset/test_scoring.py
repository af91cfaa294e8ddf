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
    ("verbatim", " Paris ", ["Paris"], True),  # the rule called exact before Inspect's came
    ("verbatim", "paris", ["Paris"], False),
    ("verbatim", "Paris.", ["Paris"], False),
    ("exact", "paris.", ["Paris"], True),  # Inspect's exact(): normalised
    ("exact", "the Paris", ["Paris"], True),
    ("exact", "Paris France", ["Paris"], False),
    ("match", "It is Paris.", ["Paris"], True),  # at the end, by default
    ("match(location=begin)", "It is Paris.", ["Paris"], False),
    ("match(numeric=true)", "about 1,000.0", ["1000"], True),
    ("includes(ignore_case=false)", "in paris", ["Paris"], False),
    ("answer(letter)", "I think so.\nANSWER: b", ["B"], True),
    ("pattern(ANSWER: (\\w+))", "ANSWER: Paris", ["paris"], True),
])
def test_a_short_answer_is_scored_by_its_declared_rule(rule, reply, targets, right):
    assert scoring.score({"choices": [], "target": targets, "rule": rule}, reply) == float(right)


def test_each_rule_is_described_to_the_lead():
    assert "case ignored" in scoring.describe_rule("normalised") and "articles" in scoring.describe_rule("normalised")
    assert "character for character" in scoring.describe_rule("verbatim")
    assert "exact()" in scoring.describe_rule("exact") and "articles" in scoring.describe_rule("exact")
    assert "two different letters" in scoring.describe_choice()
    with pytest.raises(ValueError, match="fuzzy"):
        scoring.describe_rule("fuzzy")


@pytest.mark.parametrize(("item", "response", "right"), [
    (MC, "B", True), (MC, "C", False),
    ({"choices": [], "target": ["Paris", "Lyon"], "rule": "normalised"}, "lyon!", True),
    ({"choices": [], "target": ["Paris", "Lyon"], "rule": "verbatim"}, "lyon", False),
    ({"choices": [], "target": ["Paris", "Lyon"], "rule": "exact"}, "lyon", True),
    ({"choices": [], "target": ["A"], "rule": "verbatim"}, "A", True),
    ({"choices": [], "target": ["42"], "rule": "match(numeric=true)"}, "It is 42.0", True),
    ({"choices": [], "target": ["a: b"], "rule": "pattern(ANSWER: (.*))"}, "ANSWER: A: B", True),
    ({"choices": [], "target": ["x"], "rule": "pattern(ANSWER: (.*))"}, "ANSWER: y", False),
])
def test_a_study_key_scores_as_the_item_does(item, response, right):
    key = scoring.study_key(item)
    assert scoring.score_key(key, response) is right
    assert scoring.score(item, response) == float(right)


@pytest.mark.parametrize(("key", "response", "right"), [
    ("exact: Paris | Lyon", " Lyon ", True),  # a key written before Inspect's rules: verbatim, as then
    ("exact: Paris | Lyon", "lyon", False),
    ("exact: Paris", "Paris.", False),
    ("normalised: Paris | Lyon", "lyon!", True),
    ("exact(): Paris", "paris.", True),  # Inspect's exact(), as keys are written now
    ("B", "b", True), ("B", "C", False),
])
def test_a_key_written_before_keeps_its_meaning(key, response, right):
    assert scoring.score_key(key, response) is right


def test_a_study_key_carries_the_rule_spelt_out():
    item = {"choices": [], "target": ["Paris", "Lyon"], "rule": "match(any)"}
    assert scoring.study_key(item) == "match(location=any, ignore_case=true, numeric=false): Paris | Lyon"
    assert scoring.study_key({**item, "rule": "exact"}) == "exact(): Paris | Lyon"
    assert scoring.study_key({**item, "rule": "verbatim"}) == "verbatim: Paris | Lyon"
