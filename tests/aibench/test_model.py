"""Reading the option letter from a solver's reply: a reply without a clear letter is never guessed."""
from __future__ import annotations

import pytest

from structext_core.aibench import model

#: Reply forms and what each reads as (None: no clear letter), the table of docs/reference/scoring.md's "Reading a
#: reply". Issue 31: every form naming two letters read as its first one on 820246e (hedging paid).
READING = [
    # one letter, standing alone or named as the answer
    ("B", "B"), (" (C) ", "C"), ("[A]", "A"), ("**B**", "B"), ("> B", "B"), ("- C", "C"),
    ("D. The image does not contain...", "D"), ("C) The decoder", "C"), ("A\nbecause the encoder", "A"),
    ("B is correct", "B"), ("B because the figure shows it", "B"), ("The answer is C.", "C"),
    ("Answer: (A)", "A"), ("answer: B", "B"), ("Final answer: **C**", "C"), ("The correct option is (D).", "D"),
    ("I think the answer is B", "B"), ("B. A decoder is drawn", "B"), ("B\n\nExplanation: module C is there", "B"),
    # lower case names the same option
    ("b", "B"), ("(b)", "B"), ("answer: b", "B"), ("a", "A"),
    # two different letters: no clear letter (issue 31's forms first)
    ("B, A", None), ("B,C", None), ("(B) or (C)", None), ("Answer: B or C", None), ("B\nC", None),
    ("The answer is B, not C", None), ("A/B", None), ("My answer: C (not B)", None), ("B and C", None),
    ("Options B and C are plausible", None), ("Option A or option B, hard to say.", None),
    # no letter, or a letter beyond the options
    ("", None), ("I cannot tell from the image.", None), ("A good question; the figure shows a decoder.", None),
    ("ABC", None), ("B's encoder", None), ("U-Net", None), ("E", None), ("The answer is E.", None),
]


@pytest.mark.parametrize("reply, letter", READING)
def test_reading_rule(reply, letter):
    assert model.parse_letter(reply) == letter


def test_reading_is_linear_in_the_reply():
    """A 64 KiB reply of letters and connectors is read in one pass (no backtracking blow-up)."""
    assert model.parse_letter("B" + " or C" * 13_000) is None
    assert model.parse_letter("x" * 65_536 + "\nAnswer: D") == "D"


@pytest.mark.parametrize("response, correct", [("B", 1), ("b", 1), ("(B)", 1), ("C", 0), ("B, C", 0)])
def test_people_are_read_by_the_same_rule(response, correct):
    """A person's answer is scored by the rule of every scorer (studio/study/kinds.py)."""
    from structext_core.studio.study.kinds import kind_of
    kind = kind_of("aibench")
    assert kind.score("B", response, False) == (float(correct), correct)
    assert (kind.refuse_response(response, 4) is None) == (model.parse_letter(response) is not None)


def test_a_letter_beyond_the_options_is_not_clear():
    assert model.parse_letter("C", n_options=2) is None
    assert model.parse_letter("B", n_options=2) == "B"


def test_chance_and_option_text():
    q = model.Question("q", 1, "Is the encoder drawn?", ("No", "Yes"), "B")
    assert q.chance == 0.5
    assert q.option_text() == "A. No\nB. Yes"


def test_a_key_for_an_option_the_question_lacks_has_a_note():
    """Regression (issue item 9f): D on a two-option question did nothing and said nothing."""
    assert model.absent_option_notes(2) == {"C": "This question has options A and B; C is not one of them.",
                                            "D": "This question has options A and B; D is not one of them."}
    assert model.absent_option_notes(3) == {"D": "This question has options A, B and C; D is not one of them."}
    assert model.absent_option_notes(4) == {}
