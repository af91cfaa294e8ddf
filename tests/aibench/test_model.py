"""Reading the option letter from a solver's reply: a reply without a clear letter is never guessed."""
from __future__ import annotations

import pytest

from structext_core.aibench import model


@pytest.mark.parametrize("reply, letter", [
    ("B", "B"), (" (C) ", "C"), ("D. The image does not contain...", "D"), ("A\nbecause the encoder", "A"),
    ("**B**", "B"), ("The answer is C.", "C"), ("Answer: (A)", "A"), ("answer: B", "B"),
])
def test_clear_letters(reply, letter):
    assert model.parse_letter(reply) == letter


@pytest.mark.parametrize("reply", [
    "", "I cannot tell from the image.", "A good question; the figure shows a decoder.",
    "Option A or option B, hard to say.", "E", "The answer is E.", "b", "ABC",
])
def test_no_clear_letter_is_none(reply):
    assert model.parse_letter(reply) is None


def test_a_letter_beyond_the_options_is_not_clear():
    assert model.parse_letter("C", n_options=2) is None
    assert model.parse_letter("B", n_options=2) == "B"


def test_chance_and_option_text():
    q = model.Question("q", 1, "Is the encoder drawn?", ("No", "Yes"), "B")
    assert q.chance == 0.5
    assert q.option_text() == "A. No\nB. Yes"
