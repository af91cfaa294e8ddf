"""Scoring: rouge_l against rouge-score itself, the threshold, exact match, BLEU, extraction."""

from __future__ import annotations

import random

import pytest
from rapidfuzz.distance import LCSseq
from rouge_score import rouge_scorer, tokenizers
from sacrebleu.metrics import BLEU

from structext_core.evaluation import scoring
from structext_core.evaluation.lcs import lcs_of_codes
from structext_core.evaluation.scoring import (
    apply_threshold,
    bleu,
    exact_match,
    extract_answer,
    has_answer_marker,
    lcs_length,
    rouge_l,
    score_response,
    thresholded_rouge_l,
    tokenize,
)
from structext_core.structext_eval.suites import generate_cell, generate_suite

SCORER = rouge_scorer.RougeScorer(["rougeL"])

UNICODE_PIECES = [
    "é", "ß", "Ä", "ñ", "中文", "日本", "🙂", "\u212a",  # Kelvin sign: lower() gives ASCII "k"
    "\u0130",  # dotted capital I: lower() gives "i" + combining dot
    "\u017f",  # long s: stays non-ASCII under lower()
    "１２", "Ⅻ", "\u00a0", "\u2028", "\t", "ǅ", "ﬁ", "Ω", "x\u0301",
]


def _generated_answers() -> list[str]:
    answers = []
    for task_id in range(1, 30):
        for depth, width in ((1, 1), (2, 1), (2, 2)):
            answers += [s["answer"] for s in generate_cell(task_id, depth, width, 3, seed=11, suite="scoring-test")]
    return answers


ANSWERS = _generated_answers()


def _words(text: str, rng: random.Random) -> list[str]:
    return text.split(" ") if rng.random() < 0.5 else list(text)


def _perturbed(answer: str, rng: random.Random) -> str:
    pieces = answer.split(" ")
    out = []
    for piece in pieces:
        roll = rng.random()
        if roll < 0.1:
            continue
        if roll < 0.2:
            out.append(rng.choice(ANSWERS)[:20])
        elif roll < 0.25:
            out.append(piece.upper())
        out.append(piece)
    if len(out) > 2 and rng.random() < 0.5:
        i, j = rng.randrange(len(out)), rng.randrange(len(out))
        out[i], out[j] = out[j], out[i]
    return " ".join(out)


def _truncated(answer: str, rng: random.Random) -> str:
    return answer[: rng.randint(0, len(answer))]


def _padded(answer: str, rng: random.Random) -> str:
    before = rng.choice(["", "The answer is ", "### Answer:\n", "Sure! Here it is:\n\n", "```\n"])
    after = rng.choice(["", ".", "\n```", " I hope this helps.", "\n\nExplanation: " + rng.choice(ANSWERS)[:200]])
    return before + answer + after


def _empty(answer: str, rng: random.Random) -> str:
    return rng.choice(["", " ", "\n\n", "...", "?!", "—"])


def _unicode(answer: str, rng: random.Random) -> str:
    chars = list(answer)
    for _ in range(rng.randint(1, 6)):
        chars.insert(rng.randint(0, len(chars)), rng.choice(UNICODE_PIECES))
    return "".join(chars)


def _unrelated(answer: str, rng: random.Random) -> str:
    return rng.choice(ANSWERS)


PERTURBATIONS = {
    "perturbed": _perturbed,
    "truncated": _truncated,
    "padded": _padded,
    "empty": _empty,
    "unicode": _unicode,
    "unrelated": _unrelated,
}
PAIRS_PER_KIND = 1700  # 6 kinds x 1,700 = 10,200 pairs


@pytest.mark.parametrize("kind", sorted(PERTURBATIONS))
def test_rouge_l_equals_rouge_score(kind):
    rng = random.Random(f"rouge-equivalence|{kind}")
    perturb = PERTURBATIONS[kind]
    mismatches = []
    for _ in range(PAIRS_PER_KIND):
        answer = rng.choice(ANSWERS)
        if kind == "unicode" and rng.random() < 0.5:
            answer = _unicode(answer, rng)  # the reference side gets odd characters too
        response = perturb(answer, rng)
        if rng.random() < 0.5:
            answer, response = response, answer  # either side may be the odd one
        expected = SCORER.score(answer, response)["rougeL"].fmeasure
        got = rouge_l(answer, response)
        if abs(got - expected) > 1e-9:
            mismatches.append((answer[:80], response[:80], expected, got))
    assert not mismatches, mismatches[:5]


@pytest.mark.parametrize("text", [
    "Hello, World!", "a->b->c", 'obj["subs"][0]["ZY"]', "\u212aelvin", "\u0130stanbul", "stra\u00dfe",
    "x\u0301y", "１２３ abc123", "snake_case and kebab-case", "", "   ", "ǅemal", "ﬁne", "Ωmega 3.14",
])
def test_tokens_equal_rouge_score_tokens(text):
    assert tokenize(text) == tokenizers.DefaultTokenizer(use_stemmer=False).tokenize(text)


def test_tokens_equal_rouge_score_tokens_on_random_text():
    # Characters from ASCII, Latin-1, other scripts, lone surrogates and the letters whose
    # lower case is ASCII; the fast path must split and lower-case exactly as rouge-score.
    rng = random.Random("tokens")
    alphabet = ([chr(c) for c in range(128)] + [chr(c) for c in range(0xA0, 0x250)]
                + ["\u212a", "\u0130", "\u017f", "\ud800", "\udfff", "中", "🙂", "\u2028", "\u00a0"])
    tokenizer = tokenizers.DefaultTokenizer(use_stemmer=False)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.3:
            text = text.encode("ascii", "ignore").decode("ascii")  # the ASCII fast path
        assert tokenize(text) == tokenizer.tokenize(text), repr(text)


@pytest.mark.parametrize("answer, response, expected", [
    ("a b c", "a c b", 2 / 3),                   # LCS 2 of 3 and 3
    ("a b c d", "a b c", 2 * 1 * 0.75 / 1.75),   # precision 1, recall 3/4
    ("A, B; c", "a b C", 1.0),                   # case and punctuation do not count
    ("a b", "", 0.0),
    ("", "a b", 0.0),
    ("x y z", "p q r", 0.0),
])
def test_rouge_l_known_values(answer, response, expected):
    assert rouge_l(answer, response) == pytest.approx(expected, abs=1e-12)


def test_lcs_length_with_tokens_beyond_the_surrogate_range():
    # 56,000 distinct tokens: ids above 0xD800 must skip the surrogate code points.
    tokens = [f"w{i}" for i in range(56_000)]
    tail = tokens[-10:]
    other = tail[::-1] + tail
    assert lcs_length(tokens, other) == 10
    assert lcs_length(tokens, tokens[55_000:]) == 1_000


def test_band_first_lcs_equals_the_full_computation():
    """lcs_of_codes tries a narrow band on long alike pairs; wide, failing and exact cutoffs alike."""
    rng = random.Random(7)
    for _ in range(300):
        length = rng.choice([10, 300, 1000, 3000])
        alphabet = rng.choice([3, 50, 300, 5000])
        first = [rng.randrange(alphabet) for _ in range(length)]
        drop, swap = rng.choice([0.0, 0.01, 0.05, 0.3]), rng.choice([0.0, 0.01, 0.2])
        second = [rng.randrange(alphabet) if rng.random() < swap else t for t in first if rng.random() >= drop]
        a, b = "".join(map(chr, first)), "".join(map(chr, second))
        assert lcs_of_codes(a, b) == LCSseq.similarity(a, b) == lcs_of_codes(b, a)
        words_a, words_b = [f"w{t}" for t in first], [f"w{t}" for t in second]
        assert lcs_length(words_a, words_b) == LCSseq.similarity(first, second)


@pytest.mark.parametrize("rouge, threshold, expected", [
    (0.7499999, 0.75, 0.0),
    (0.75, 0.75, 0.75),
    (0.9, 0.75, 0.9),
    (0.9, 0.95, 0.0),
    (0.5, 0.0, 0.5),
    (1.0, 1.0, 1.0),
])
def test_threshold(rouge, threshold, expected):
    assert apply_threshold(rouge, threshold) == expected


def test_thresholded_rouge_l_uses_the_paper_default():
    assert scoring.DEFAULT_THRESHOLD == 0.75
    assert thresholded_rouge_l("a b c d", "a b c") == pytest.approx(6 / 7)  # 0.857 kept
    assert thresholded_rouge_l("a b c d", "a b") == 0.0                     # 0.667 dropped
    assert thresholded_rouge_l("a b c d", "a b", threshold=0.6) == pytest.approx(2 / 3)


@pytest.mark.parametrize("answer, response, expected", [
    ("a->b->c", "  a->b->c\n", 1),
    ("line one\nline two", "line one line   two", 1),
    ("True", "true", 0),
    ("42", "42.", 0),
    ("", "   ", 1),
])
def test_exact_match(answer, response, expected):
    assert exact_match(answer, response) == expected


def test_bleu_range_and_extremes():
    assert bleu("a b c d e", "a b c d e") == 1.0
    assert bleu("a b c d e", "v w x y z") == 0.0
    assert bleu("a b c d e", "") == 0.0
    assert bleu("", "a") == 0.0
    partial = bleu("the cat sat on the mat today", "the cat sat on a mat")
    assert 0.0 < partial < 1.0


@pytest.mark.parametrize("response, expected", [
    ("### Answer:\n42", "42"),
    ("### Answer: 42", "42"),
    ("Reasoning...\n### Answer:\nfirst\n\n### Answer:\nsecond\n", "second"),
    ("  ###  Answer :  x->y  ", "x->y"),
    ("no marker here\n", "no marker here"),
    ("the format asks for ### Answer: inline\n", "the format asks for ### Answer: inline"),
    ("### Answer:\r\nA->B\r\n", "A->B"),
    ("### Answer:\n", ""),
    ("### Reasoning:\nstep\n### Answer:\n<a>\n  <b/>\n</a>", "<a>\n  <b/>\n</a>"),
])
def test_extract_answer(response, expected):
    assert extract_answer(response) == expected


def test_has_answer_marker():
    assert has_answer_marker("x\n### Answer:\ny")
    assert not has_answer_marker("Answer: y")


def test_score_response_scores_the_extracted_answer_and_the_whole_text():
    answer = "q->u->v"
    response = "### Reasoning:\nThe root is q and v hangs under u, not under r or s or t.\n### Answer:\nq->u->v"
    result = score_response(answer, response)
    assert result.answer_extracted == "q->u->v"
    assert result.has_marker
    assert result.rouge_l == 1.0 and result.score == 1.0 and result.exact_match == 1
    assert result.rouge_l_full == pytest.approx(SCORER.score(answer, response)["rougeL"].fmeasure)
    assert result.rouge_l_full < 0.75 and result.score_full == 0.0
    assert set(result.as_dict()) == {"answer_extracted", "has_marker", "rouge_l", "score", "exact_match",
                                     "bleu", "rouge_l_full", "score_full",
                                     "rouge_l_paper", "score_paper"}


def test_score_response_threshold_is_adjustable():
    loose = score_response("a b c d", "### Answer: a b", threshold=0.5)
    strict = score_response("a b c d", "### Answer: a b")
    assert loose.score == pytest.approx(2 / 3)
    assert strict.score == 0.0


def test_score_response_carries_the_papers_metric_on_the_whole_response():
    from rouge import Rouge

    answer = "q->u->v"
    response = "### Reasoning:\nThe root is q. v hangs under u.\n### Answer:\nq->u->v"
    result = score_response(answer, response)
    expected = Rouge().get_scores(answer, response)[0]["rouge-l"]["f"]
    assert result.rouge_l_paper == pytest.approx(expected, abs=1e-12)
    assert result.score_paper == (expected if expected >= 0.75 else 0.0)
    # an upper-cased answer: the strict metric lower-cases, the authors' keeps case
    shouted = score_response("Z: Y, X: W", "z: y, x: w")
    assert shouted.rouge_l == 1.0 and shouted.rouge_l_paper < 0.75 and shouted.score_paper == 0.0


# ------------------------------------------------------------------ scoring at scale

def _plain_lcs_rouge(answer: str, text: str) -> float:
    """rouge-score's F with the LCS of two token-id lists: no code points, no band, no filter."""
    first, second = tokenize(answer), tokenize(text)
    if not first or not second:
        return 0.0
    ids: dict[str, int] = {}
    lcs = LCSseq.similarity([ids.setdefault(t, len(ids)) for t in first], [ids.setdefault(t, len(ids)) for t in second])
    precision, recall = lcs / len(second), lcs / len(first)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _library_scores(answer: str, response: str) -> dict:
    """Every score from the libraries themselves (rouge-score on short pairs, sacrebleu, pltrdy rouge)."""
    from rouge import Rouge

    extracted = extract_answer(response)
    short = len(answer.split()) + len(response.split()) < 400

    def strict(text: str) -> float:
        return SCORER.score(answer, text)["rougeL"].fmeasure if short else _plain_lcs_rouge(answer, text)

    sacre = BLEU(effective_order=True).sentence_score(extracted, [answer]).score / 100
    try:
        paper = Rouge().get_scores(answer, response)[0]["rouge-l"]["f"] if short else None
    except ValueError:  # a text without a sentence: 0
        paper = 0.0
    return {
        "answer_extracted": extracted,
        "has_marker": has_answer_marker(response),
        "rouge_l": strict(extracted),
        "rouge_l_full": strict(response),
        "exact_match": int(" ".join(answer.split()) == " ".join(extracted.split())),
        "bleu": min(1.0, sacre) if answer.strip() and extracted.strip() else 0.0,
        "rouge_l_paper": paper,
    }


def _scale_pairs() -> list[tuple[str, str]]:
    """Answers of every length (Test-Hard's longest among them), each with many responses:
    the benchmark's kinds plus blanks, several markers, punctuation only, unrelated text."""
    rng = random.Random("score-many")
    hard = sorted((s["answer"] for s in generate_suite("test-hard", seed=0)), key=len)
    answers = rng.sample(ANSWERS, 60) + hard[::150] + hard[-1600::400] + hard[-1:] + ["", "  ", "...", "A. B. a b."]
    kinds = [
        lambda a: "### Answer:\n" + a,
        lambda a: "### Reasoning:\nI read it. The path follows the ids.\n### Answer:\n" + a,
        lambda a: "### Answer:\n" + " ".join(w for w in a.split(" ") if rng.random() > 0.15),
        lambda a: a.upper(),
        lambda a: a + "\n" + a,
        lambda a: "### Answer:\n" + a[: max(1, len(a) // 3)],
        lambda a: "",
        lambda a: "I cannot determine the answer from the reference.",
        lambda a: " \n" + a + " \t\n",
        lambda a: "### Answer: x\n### Answer:\n" + a + ".",
        lambda a: "### Answer:",
        lambda a: "... , ; !",
        lambda a: _perturbed(a, rng),
        lambda a: _unicode(a, rng),
        lambda a: rng.choice(ANSWERS),
    ]
    return [(answer, kind(answer)) for answer in answers for kind in kinds]


SCALE_PAIRS = _scale_pairs()


def test_score_many_equals_the_libraries_row_by_row():
    """Prepared answers, cached n-grams and sentences, shortcuts for verbatim answers: every
    field equal to the libraries' own figures, for every kind of response."""
    rows = scoring.score_many(SCALE_PAIRS, jobs=1, chunk_size=37)
    mismatches = []
    for (answer, response), row in zip(SCALE_PAIRS, rows):
        for key, expected in _library_scores(answer, response).items():
            got = row[key]
            if expected is None:
                continue
            if got != expected and not (isinstance(expected, float) and abs(got - expected) <= 1e-9):
                mismatches.append((answer[:40], response[:40], key, expected, got))
        assert row["score"] == apply_threshold(row["rouge_l"]) and row["score_paper"] == apply_threshold(row["rouge_l_paper"])
    assert not mismatches, mismatches[:5]


def test_score_many_in_workers_equals_one_process_and_score_response():
    one = scoring.score_many(SCALE_PAIRS, jobs=1)
    progress = []
    forked = scoring.score_many(SCALE_PAIRS, jobs=2, chunk_size=50, progress=lambda done, total: progress.append(done))
    assert forked == one
    assert progress[-1] == len(SCALE_PAIRS) and progress == sorted(progress)
    for (answer, response), row in zip(SCALE_PAIRS[::7], one[::7]):
        assert score_response(answer, response).as_dict() == row
    without_bleu = scoring.score_many(SCALE_PAIRS[:30], with_bleu=False)
    assert all(row["bleu"] != row["bleu"] for row in without_bleu)  # nan


def test_chunks_for_workers_cover_every_row_once_heaviest_first():
    pairs = SCALE_PAIRS
    order = sorted(range(len(pairs)), key=lambda i: pairs[i][0])
    chunks = scoring._balanced_chunks(pairs, order, 50, 2)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(len(pairs)))
    assert all(0 < len(chunk) <= 50 for chunk in chunks)
    weights = [sum(scoring._ROW_COST + len(pairs[i][0]) + len(pairs[i][1]) for i in chunk) for chunk in chunks]
    assert weights == sorted(weights, reverse=True)
    # the long Test-Hard answers are spread over several chunks, not one
    assert len(chunks) > len(pairs) // 50 + 1
