"""fast_bleu against sacrebleu itself: the same sentence BLEU on thousands of varied pairs."""

from __future__ import annotations

import random

import pytest
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from structext_core.evaluation import fast_bleu, scoring
from structext_core.structext_eval.suites import generate_suite

SACREBLEU = BLEU(effective_order=True)
PIECES = ["a", "b", "Z", "Y", "1", "2.5", "3,4", "5-6", "-", "--", ".", ",", "..", ".,", ",.", "x.y",
          "&quot;", "&amp;", "&lt;b&gt;", "<skipped>", "-\n", "\n", "{", "}", "[", "]", '"k":', "'q'",
          "é", "ß", "\u00a0", "\t", "?!", "@#$%", "~", "`", "^_", "(", ")", "/", "\\", "+", "=", ";"]


def sacre(answer: str, response: str) -> float:
    return SACREBLEU.sentence_score(response, [answer]).score


def random_text(rng: random.Random, pieces: int) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", "  "]) for _ in range(rng.randint(0, pieces)))


@pytest.mark.parametrize("seed", range(3))
def test_tokenizer_equals_13a(seed):
    rng = random.Random(seed)
    tokenizer = Tokenizer13a()
    for _ in range(3000):
        text = random_text(rng, 40)
        assert fast_bleu.tokenize_13a(text) == tokenizer(text.rstrip()).split(), repr(text)


@pytest.mark.parametrize("seed", range(3))
def test_long_texts_equal_13a(seed):
    """Long texts (400 characters and more) are cut exactly as sacrebleu cuts them."""
    rng = random.Random(50 + seed)
    tokenizer = Tokenizer13a()
    for _ in range(400):
        text = random_text(rng, 400)
        assert fast_bleu.tokenize_13a(text) == tokenizer(text.rstrip()).split(), repr(text)
        assert fast_bleu.tokenize_13a(text + "-\n") == tokenizer((text + "-\n").rstrip()).split()


@pytest.mark.parametrize("seed, pieces", [(0, 40), (1, 40), (2, 40), (3, 300), (4, 300)])
def test_equal_to_sacrebleu_on_varied_pairs(seed, pieces):
    """Short pairs take the Counter path, long ones numpy."""
    rng = random.Random(100 + seed)
    mismatches = []
    for _ in range(1500 if pieces == 40 else 300):
        answer = random_text(rng, pieces)
        kind = rng.randrange(8)
        response = {
            6: lambda: answer,
            7: lambda: " ".join(w for w in answer.split(" ") if rng.random() > 0.2),
            0: lambda: random_text(rng, pieces),
            1: lambda: answer.upper(),
            2: lambda: answer + "\n" + answer,
            3: lambda: rng.choice(["", ".", "...", "!?,;", " \n "]),
            4: lambda: "### Answer:\n" + answer,
            5: lambda: " ".join(sorted(answer.split(), key=lambda _: rng.random())),
        }[kind]()
        expected, got = sacre(answer, response), fast_bleu.sentence_bleu(answer, response)
        if abs(expected - got) > 1e-9:
            mismatches.append((answer, response, expected, got))
    assert mismatches == []


def test_equal_on_test_hard_answers():
    rows = generate_suite("test-hard", seed=0)
    rng = random.Random(4)
    for row in rows[::20]:
        answer = row["answer"]
        words = answer.split(" ")
        response = " ".join(word.upper() if rng.random() < 0.05 else word for word in words if rng.random() > 0.05)
        assert abs(fast_bleu.sentence_bleu(answer, response) - sacre(answer, response)) <= 1e-9, row["id"]


def test_an_answer_with_a_vocabulary_too_large_for_integer_keys():
    """Over 55,000 distinct tokens: the tuple-counting path, still equal."""
    rng = random.Random(2)
    answer = " ".join(f"t{i}" for i in range(56_000))
    words = answer.split()
    response = " ".join(word for word in words if rng.random() > 0.1)
    assert fast_bleu.answer_ngrams(answer).count().counters is not None
    assert abs(fast_bleu.sentence_bleu(answer, response) - sacre(answer, response)) <= 1e-9


def test_scoring_bleu_uses_it_and_keeps_its_scale():
    answer, response = "a b c d e", "a b c d f"
    assert scoring.bleu(answer, response) == pytest.approx(sacre(answer, response) / 100, abs=1e-12)
    assert scoring.bleu(answer, "") == 0.0
    assert scoring.bleu(answer, answer) == 1.0


def test_every_counting_path_equals_sacrebleu():
    """One answer prepared once, many responses: tiny responses against a short answer
    (Counter path), against a long one (numpy, few hits: only the hits counted), and long
    responses (numpy, one search for the four orders)."""
    rng = random.Random(9)
    hard = sorted((row["answer"] for row in generate_suite("test-hard", seed=0)), key=len)
    short_answer = "a b c d a b"
    long_answers = [hard[-300], hard[-40], "x " * 500 + "y z"]
    seen = set()
    for answer in [short_answer, *long_answers]:
        ngrams = fast_bleu.answer_ngrams(answer)
        words = answer.split()
        responses = [
            "I cannot determine the answer from the reference.", words[0], " ".join(words[:3]),
            " ".join(words[5:9]), answer.upper(), answer + "\n" + answer, "a b c d a b a b a b",
            " ".join(rng.choice(words) for _ in range(30)), " ".join(rng.sample(words, min(12, len(words)))),
        ]
        for response in responses:
            tokens = fast_bleu.tokenize_13a(response)
            small = len(tokens) <= fast_bleu._SMALL_RESPONSE and ngrams.length <= fast_bleu._SMALL_ANSWER
            seen.add("counter" if small else "numpy")
            assert abs(fast_bleu.sentence_bleu(answer, response) - sacre(answer, response)) <= 1e-9, (answer[:40], response[:40])
    assert seen == {"counter", "numpy"}


def test_an_answer_between_the_combined_and_the_tuple_limits():
    """38,000 to 55,000 distinct tokens: per-order integer keys, still equal."""
    rng = random.Random(3)
    answer = " ".join(f"t{i}" for i in range(40_000))
    ngrams = fast_bleu.answer_ngrams(answer)
    assert not ngrams.keys, "n-grams are counted when a response first needs them"
    assert ngrams.count().all_keys is None and ngrams.counters is None and len(ngrams.keys) == 4
    words = answer.split()
    for response in (" ".join(word for word in words if rng.random() > 0.1), "t5 t6 t7 zz t8", words[-1]):
        assert abs(fast_bleu.sentence_bleu(answer, response) - sacre(answer, response)) <= 1e-9
