"""The authors' ROUGE-L (pltrdy ``rouge`` 1.0.1) against that very library.

The library is a test dependency only (requirements-dev.txt); the app never imports it.
"""

from __future__ import annotations

import random
import sys
import threading

import pytest
from rouge import Rouge

from structext_core.evaluation.paper_rouge import (
    _traceback_words,
    paper_sentences,
    reconstructed_lcs_words,
    rouge_l_paper,
)
from structext_core.structext_eval.suites import generate_suite

LIBRARY = Rouge()


def library_f(answer: str, response: str) -> float | None:
    """The library's F, or None where it raises (empty text)."""
    try:
        return LIBRARY.get_scores(answer, response)[0]["rouge-l"]["f"]
    except ValueError:
        return None


def in_deep_thread(function, *args):
    """Run ``function`` where the library's recursive LCS reconstruction cannot overflow."""
    result: list = []
    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(200_000)
    threading.stack_size(512 * 1024 * 1024)
    try:
        thread = threading.Thread(target=lambda: result.append(function(*args)))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    return result[0]


PIECES = ["a", "b", "c", "A", "B", "x.y", ".", "..", "Z", "Y,", "  ", "\n", "\t", "d", "e.", "f",
          "g h", "1.5", "é", "\u00a0", "{", "}", "\"k\":", "- id:", "<a>", "</a>"]


def random_text(rng: random.Random, max_pieces: int) -> str:
    return "".join(rng.choice(PIECES) + rng.choice([" ", "", "\t", "\n"])
                   for _ in range(rng.randint(0, max_pieces)))


def varied_pairs(count: int, seed: int) -> list[tuple[str, str]]:
    """Random texts and the response kinds the issue names: empty, upper-cased, doubled,
    punctuation-only, the answer itself, reordered."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        answer = random_text(rng, 30)
        kind = rng.randrange(7)
        if kind == 0:
            response = random_text(rng, 30)
        elif kind == 1:
            response = answer.upper()
        elif kind == 2:
            response = answer + "\n" + answer
        elif kind == 3:
            response = rng.choice(["", ".", "...", " . . ", "!?,;", "\n\n"])
        elif kind == 4:
            response = "### Answer:\n" + answer
        elif kind == 5:
            words = answer.split(" ")
            rng.shuffle(words)
            response = " ".join(words)
        else:
            response = answer
        pairs.append((answer, response))
    return pairs


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_the_library_on_varied_pairs(seed):
    mismatches = []
    for answer, response in varied_pairs(1500, seed):
        expected = library_f(answer, response)
        got = rouge_l_paper(answer, response)
        if expected is None:
            if got != 0.0:
                mismatches.append((answer, response, "library raises", got))
        elif abs(expected - got) > 1e-9:
            mismatches.append((answer, response, expected, got))
    assert mismatches == []


def test_the_kinds_the_strict_metric_scores_differently():
    answer = 'id: "ab"\nkey: "bb"'
    # Case is kept: an upper-cased answer is not the answer.
    assert rouge_l_paper(answer, answer.upper()) == pytest.approx(library_f(answer, answer.upper()), abs=1e-12)
    assert rouge_l_paper(answer, answer.upper()) < 0.75
    # Each word type counts once: an answer written twice still scores (almost) 1.
    doubled = answer + "\n" + answer
    assert rouge_l_paper(answer, doubled) == pytest.approx(library_f(answer, doubled), abs=1e-12)
    assert rouge_l_paper(answer, doubled) > 0.99
    # Where the library raises (no sentence at all), the score is 0.
    assert library_f(answer, "...") is None
    assert rouge_l_paper(answer, "...") == 0.0
    assert rouge_l_paper("", "anything") == 0.0


def test_test_hard_answers():
    """Real Test-Hard answers of a spread of lengths, perturbed as a model might answer."""
    rows = generate_suite("test-hard", seed=0)
    rng = random.Random(3)
    by_length = sorted(rows, key=lambda row: len(row["answer"]))
    # kept under 6,000 characters so the library's O(n*m) dict of cells stays quick
    picks = [row for row in by_length if len(row["answer"]) < 6000][::100]
    assert len(picks) >= 15
    for row in picks:
        answer = row["answer"]
        words = [word.upper() if rng.random() < 0.05 else word for word in answer.split(" ") if rng.random() > 0.05]
        response = "### Reasoning:\nfirst. then.\n### Answer:\n" + " ".join(words)
        assert abs(rouge_l_paper(answer, response) - library_f(answer, response)) <= 1e-9, row["id"]


def test_equal_where_the_library_needs_more_than_its_recursion_limit():
    """1,200-word sentences: the library's recursive reconstruction overflows the default
    limit; run with a deep stack, it gives the value we compute without one."""
    rng = random.Random(8)
    vocabulary = [f"w{i}" for i in range(300)]
    answer = " ".join(rng.choice(vocabulary) for _ in range(1200))
    response = " ".join(word if rng.random() > 0.1 else rng.choice(vocabulary) for word in answer.split(" "))
    with pytest.raises(RecursionError):
        library_f(answer, response)
    expected = in_deep_thread(library_f, answer, response)
    assert abs(rouge_l_paper(answer, response) - expected) <= 1e-9


def test_no_recursion_limit():
    """A single 20,000-word sentence: the library raises RecursionError; we answer."""
    rng = random.Random(0)
    answer = " ".join(rng.choice("abcdefgh") for _ in range(20_000))
    response = " ".join(rng.choice("abcdefgh") for _ in range(20_000))
    with pytest.raises(RecursionError):  # (already at 1,500 characters: 750 words)
        library_f(answer[:1500], response[:1500])
    value = rouge_l_paper(answer, response)
    assert 0.0 < value <= 1.0


def test_reconstruction_follows_the_librarys_tie_breaking():
    """Two LCSs of equal length with different words: the library's traceback picks one."""
    from rouge.rouge_score import _recon_lcs

    rng = random.Random(5)
    for _ in range(3000):
        x = [rng.choice("abcd") for _ in range(rng.randint(1, 12))]
        y = [rng.choice("abcd") for _ in range(rng.randint(1, 12))]
        assert reconstructed_lcs_words(x, y) == set(_recon_lcs(x, y)._ngrams)


@pytest.mark.parametrize("seed", range(2))
def test_one_sentence_answers(seed):
    """Answers without a dot (most answers): against one response sentence the LCS words
    are the union at once; against several, each sentence adds its words."""
    rng = random.Random(70 + seed)
    undotted = [piece for piece in PIECES if "." not in piece]
    mismatches = []
    for _ in range(1500):
        answer = "".join(rng.choice(undotted) + rng.choice([" ", "\n", ""]) for _ in range(rng.randint(1, 25)))
        words = answer.split()
        response = rng.choice([
            answer, answer.upper(), answer + "\n" + answer, answer + ". " + answer.upper(),
            "### Reasoning:\nI read it. The path follows the ids.\n### Answer:\n" + answer,
            ". ".join(rng.sample(words, len(words))), " ".join(w for w in words if rng.random() > 0.3) + ". x",
            random_text(rng, 30),
        ])
        expected, got = library_f(answer, response), rouge_l_paper(answer, response)
        if (0.0 if expected is None else expected) != pytest.approx(got, abs=1e-9):
            mismatches.append((answer, response, expected, got))
    assert mismatches == []


def test_a_long_one_sentence_answer_upper_cased():
    """A 2,000-word sentence whose words mostly lack from the upper-cased response: long runs
    of rows without a match in the traceback (the library needs a deep stack here)."""
    answer = " ".join(generate_suite("test-hard", seed=0)[0]["answer"].split()[:200] * 10)
    answer = " ".join(answer.split()[:2000])
    for response in (answer.upper(), answer.upper() + "\n" + answer[: len(answer) // 2]):
        expected = in_deep_thread(library_f, answer, response)
        assert abs(rouge_l_paper(answer, response) - expected) <= 1e-9


def test_traceback_over_runs_of_words_the_other_side_lacks():
    """Reference words the evaluated side lacks come in runs (each run is one traceback row);
    the evaluated side also has words the reference lacks (the unfiltered traceback)."""
    from rouge.rouge_score import _recon_lcs

    rng = random.Random(6)
    for _ in range(3000):
        x = [rng.choice("abcdefghij") for _ in range(rng.randint(1, 40))]
        y = [rng.choice("abcxyz") for _ in range(rng.randint(1, 25))]
        expected = set(_recon_lcs(x, y)._ngrams)
        assert _traceback_words(x, y) == expected, (x, y)
        assert reconstructed_lcs_words(x, y) == expected, (x, y)


def test_sentences_as_the_library_splits_them():
    assert paper_sentences("a b. c\t d.") == [["a", "b"], ["c", "d"]]
    assert paper_sentences(" . x") == [[""], ["x"]]  # a sentence of blanks is one empty word
    assert paper_sentences("...") == []


# ------------------------------------------------------------------ the authors' argument order

def swapped_f(answer: str, response: str) -> float:
    """The library called the other way round (the response as hypothesis)."""
    return LIBRARY.get_scores(response, answer)[0]["rouge-l"]["f"]


# The smallest pairs of each asymmetric kind among the Test suite's answers (seed 0): the
# library's tie-breaking reconstructs a different LCS union depending on which text is rows.
ASYMMETRIC = {
    "tokens reversed": ("idiot\nidiot cafe\nwake", "cafe\nwake idiot\nidiot"),
    "lines shuffled": ("X-ray\nqualify\nX-ray", "qualify\nX-ray\nX-ray"),
    "another sample's answer": ("oops\nwake wake\nnob\nmonkey",
                                "** j\nessence oops perish cafe ap[[iz.jpeg]]ple lamb halo nob qualify ravish qualify oops"),
}


@pytest.mark.parametrize("kind", sorted(ASYMMETRIC))
def test_the_authors_argument_order_on_each_asymmetric_kind(kind):
    """calculate_rouge_l(a, r) = Rouge().get_scores(a, r): the answer is the hypothesis."""
    answer, response = ASYMMETRIC[kind]
    authors = LIBRARY.get_scores(answer, response)[0]["rouge-l"]["f"]
    assert abs(authors - swapped_f(answer, response)) > 0.1  # the order matters on this pair
    assert rouge_l_paper(answer, response) == pytest.approx(authors, abs=1e-12)


def asymmetric_pairs(rows: list[dict], seed: int) -> list[tuple[str, str, str]]:
    """(kind, answer, response) for every row: its tokens reversed, its lines shuffled, and
    another sample's answer of the same format."""
    rng = random.Random(seed)
    by_format: dict[str, list[dict]] = {}
    for row in rows:
        by_format.setdefault(row["language"], []).append(row)
    pairs = []
    for row in rows:
        answer = row["answer"]
        lines = answer.split("\n")
        rng.shuffle(lines)
        other = rng.choice(by_format[row["language"]])["answer"]
        pairs += [("reversed", answer, " ".join(reversed(answer.split(" ")))),
                  ("lines", answer, "\n".join(lines)), ("other", answer, other)]
    return pairs


@pytest.mark.parametrize("suite", ["test", "test-hard"])
def test_the_authors_order_on_generated_samples_of_every_format(suite):
    """Many samples of every format, each answer against the three asymmetric kinds of response:
    equal to the library called as the authors call it (where it returns), and the order is
    shown to matter on some of them (so the test tells the two orders apart)."""
    rows = generate_suite(suite, seed=0)
    if suite == "test-hard":  # the library is quadratic in pure Python: shorter answers only
        rows = [row for row in rows if len(row["answer"]) < 1500][::7]
    else:
        rows = rows[::3]
    assert {row["language"] for row in rows} == {"csv", "json", "latex", "markdown", "org", "tree", "xml", "yaml"}
    mismatches, asymmetric = [], {"reversed": 0, "lines": 0, "other": 0}
    for kind, answer, response in asymmetric_pairs(rows, seed=1):
        try:
            authors = LIBRARY.get_scores(answer, response)[0]["rouge-l"]["f"]
        except (ValueError, RecursionError):
            continue
        if abs(authors - rouge_l_paper(answer, response)) > 1e-9:
            mismatches.append((kind, answer, response))
        if abs(authors - swapped_f(answer, response)) > 1e-9:
            asymmetric[kind] += 1
    assert mismatches == []
    assert all(count > 0 for count in asymmetric.values()) if suite == "test" else sum(asymmetric.values()) > 0
