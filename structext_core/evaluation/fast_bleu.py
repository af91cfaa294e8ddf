"""sacrebleu's sentence BLEU, the same numbers at a fraction of the cost.

``sacrebleu.metrics.BLEU(effective_order=True).sentence_score(response, [answer])`` tokenises
both texts with the ``13a`` tokenizer (four regular expressions), counts every 1- to 4-gram
of both in Python ``Counter``s of tuples, and compares them. On Test-Hard answers (600
tokens on average) that is about 3 ms a pair, most of it counting. Here:

- the answer is tokenised and counted **once** (an LRU cache keyed by the answer text), not
  once per response;
- ``13a`` is applied with the same expressions, except the first (pad every ASCII symbol
  with spaces), which replaces one character at a time and is therefore exactly a
  ``str.translate``; the other three only ever match around ``.``, ``,`` and ``-``, so they
  run only when the text holds one (Test-Hard's words are mostly distinct, so a cache of
  words' tokens cost more on a first import than it saved over 420,000 rows: none is kept);
- n-grams are counted as integers: each token becomes its index in the answer's vocabulary
  (V for a token the answer lacks), an n-gram the base-(V+1) number of its indices times 4
  plus its order minus one, so the answer's 1- to 4-grams are one sorted array with their
  counts, made once. A response's n-grams of every order are then found with one
  ``searchsorted`` and counted with one ``bincount`` (or, when few are found in a long
  answer, a ``unique`` of the found ones alone), clipped by the answer's counts and summed
  per order. An n-gram with a token the answer lacks cannot match, so it only counts towards
  the total. (Vocabularies of over 38,000 tokens, where those keys would overflow int64, are
  searched order by order.)

A very short response against a short answer is counted in ``Counter``s of tuples instead,
against the answer's own, built on first use: for a handful of tokens numpy's per-call
overhead costs more than the counting. A response with the answer's very tokens
gets the answer's own score (every n-gram matches), computed once; one that shares no token
with the answer scores 0, as in sacrebleu.

The final formula is sacrebleu's own ``BLEU.compute_bleu`` (exponential smoothing, effective
order), so brevity penalty, smoothing and rounding are sacrebleu's. Equality is tested
against sacrebleu on thousands of pairs (tests/evaluation/test_fast_bleu.py).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import repeat

import numpy as np
from sacrebleu.metrics import BLEU

MAX_ORDER = 4
# The first regular expression of sacrebleu's TokenizerRegexp, as a translation table.
_SYMBOLS = re.compile(r"[\{-\~\[-\` -\&\(-\+\:-\@\/]")
_PAD_SYMBOLS = str.maketrans({c: f" {c} " for c in map(chr, range(128)) if _SYMBOLS.fullmatch(c)})
_PERIOD_COMMA_AFTER_NON_DIGIT = re.compile(r"([^0-9])([\.,])")
_PERIOD_COMMA_BEFORE_NON_DIGIT = re.compile(r"([\.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")
# The same three with literal replacements (no per-match template expansion). They equal the
# originals except where two of "." and "," stand side by side (the originals consume the
# character after a match, the look-arounds do not), which _ADJACENT_PUNCTUATION detects.
_ADJACENT_PUNCTUATION = re.compile(r"[.,]{2}")
# Without two of them side by side, a "." or "," ends up with blanks on both sides exactly when a
# neighbour of it is not a digit (padding it for the left neighbour makes its right neighbour a
# blank, which the third expression then pads again), so each character takes one pass.
_FAST_PASSES = (
    (re.compile(r"(?<=[^0-9])\.|\.(?=[^0-9])"), " . "), (re.compile(r"(?<=[^0-9]),|,(?=[^0-9])"), " , "),
)
_FAST_DASH = re.compile(r"(?<=[0-9])-")
# Base-V keys of 4-grams must fit in int64: V**4 < 2**63.
_MAX_VOCABULARY = 55_000
# Combined keys (base-V number * 4 + order - 1) must fit in int64: 4 * V**4 < 2**63.
_MAX_COMBINED_BASE = 38_000


def _normalize_line(text: str) -> str:
    """13a's whole-line steps: ``rstrip``, ``<skipped>`` and line breaks removed, entities decoded."""
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return line


def _split_normalized(line: str) -> list[str]:
    """13a's regular expressions on a normalised line, then the split into tokens."""
    line = f" {line} ".translate(_PAD_SYMBOLS)
    if "." in line or "," in line:
        if _ADJACENT_PUNCTUATION.search(line):
            line = _PERIOD_COMMA_AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
            line = _PERIOD_COMMA_BEFORE_NON_DIGIT.sub(r" \1 \2", line)
        else:
            for pattern, replacement in _FAST_PASSES:
                line = pattern.sub(replacement, line)
    if "-" in line:
        line = _FAST_DASH.sub(" - ", line)
    return line.split()


def tokenize_13a(text: str) -> list[str]:
    """sacrebleu's ``13a`` tokens of ``text`` (after its ``rstrip``), as a list."""
    return _split_normalized(_normalize_line(text))


class AnswerNgrams:
    """An answer's tokens and vocabulary, computed once; its n-gram counts on first need.

    Many responses never need the counts (a response that is the answer, or shares no token
    with it, is scored without them), so a suite's answers are cheap to prepare and each
    answer's n-grams are counted when the first response that needs them comes.
    """

    __slots__ = ("tokens", "length", "vocabulary", "keys", "counts", "all_keys", "all_counts", "all_orders",
                 "counters", "_small_counters", "_identical", "_counted")

    def __init__(self, answer: str):
        tokens = tokenize_13a(answer)
        self.tokens = tokens
        self.length = len(tokens)
        self.vocabulary = {token: index for index, token in enumerate(dict.fromkeys(tokens))}
        self.keys: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.all_keys: np.ndarray | None = None
        self.all_counts: np.ndarray | None = None
        self.all_orders: np.ndarray | None = None
        self.counters: list[Counter] | None = None
        self._small_counters: list[Counter] | None = None
        self._identical: float | None = None
        self._counted = False

    def count(self) -> AnswerNgrams:
        """Count the answer's n-grams (once; a second call, or a second thread, finds them)."""
        if self._counted:
            return self
        tokens = self.tokens
        if len(self.vocabulary) + 1 > _MAX_VOCABULARY:
            self.counters = _tuple_counters(tokens)
        else:
            ids = np.fromiter(map(self.vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
            base = len(self.vocabulary) + 1
            if base <= _MAX_COMBINED_BASE:
                # every order in one sorted array: an n-gram's key is its base-V number times 4
                # plus n - 1, so one search and one count serve the four orders
                all_keys, self.all_counts = np.unique(_combined_keys(ids, base), return_counts=True)
                self.all_orders = (all_keys & 3).astype(np.intp)
                self.all_keys = all_keys
            else:
                keys, counts = [], []
                for order in range(1, MAX_ORDER + 1):
                    order_keys, valid = _ngram_keys(ids, order, base)
                    unique, unique_counts = np.unique(order_keys[valid], return_counts=True)
                    keys.append(unique)
                    counts.append(unique_counts)
                self.keys, self.counts = keys, counts
        self._counted = True
        return self

    def tuple_counters(self) -> list[Counter]:
        """The answer's 1- to 4-grams counted as tuples of tokens (built on first use)."""
        if self.counters is not None:
            return self.counters
        if self._small_counters is None:
            self._small_counters = _tuple_counters(self.tokens)
        return self._small_counters

    def identical_score(self) -> float:
        """The score of a response whose tokens are the answer's own (computed once)."""
        if self._identical is None:
            total = [max(0, self.length - order + 1) for order in range(1, MAX_ORDER + 1)]
            self._identical = _compute(list(total), total, self.length, self.length)
        return self._identical


def _tuple_counters(tokens: list[str]) -> list[Counter]:
    return [Counter(zip(*(tokens[i:] for i in range(order)))) for order in range(1, MAX_ORDER + 1)]


def _ngram_keys(ids: np.ndarray, order: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Base-``base`` keys of every n-gram of ``ids`` and whether all its tokens are known."""
    count = max(0, len(ids) - order + 1)
    keys = np.zeros(count, dtype=np.int64)
    valid = np.ones(count, dtype=bool)
    for offset in range(order):
        window = ids[offset:offset + count]
        keys = keys * base + np.maximum(window, 0)
        valid &= window >= 0
    return keys, valid


def _combined_keys(ids: np.ndarray, base: int) -> np.ndarray:
    """Every 1- to 4-gram of ``ids`` (digits below ``base``) as base-``base`` number * 4 + order - 1."""
    parts = [ids * 4]
    keys = ids
    for order in range(2, min(MAX_ORDER, len(ids)) + 1):
        keys = keys[:-1] * base + ids[order - 1:]
        parts.append(keys * 4 + (order - 1))
    return np.concatenate(parts)


@lru_cache(maxsize=8192)
def answer_ngrams(answer: str) -> AnswerNgrams:
    """The answer's n-grams, cached: a suite's answers are counted once, not once per response."""
    return AnswerNgrams(answer)


# Responses of at most this many tokens, against answers of at most _SMALL_ANSWER tokens, are
# counted in Counters; the rest with numpy (a long answer's tuple counters cost more to build
# than a few short responses save).
_SMALL_RESPONSE = 12
_SMALL_ANSWER = 400


def _matches(reference: AnswerNgrams, tokens: list[str]) -> list[int]:
    reference.count()
    if reference.counters is not None or (len(tokens) <= _SMALL_RESPONSE and reference.length <= _SMALL_ANSWER):
        return [sum(min(count, ref[gram]) for gram, count in hyp.items() if gram in ref)
                for hyp, ref in zip(_tuple_counters(tokens), reference.tuple_counters())]
    if reference.all_keys is not None:
        # a token the answer lacks is the digit V: no n-gram holding it is among the answer's
        base = len(reference.vocabulary) + 1
        ids = np.fromiter(map(reference.vocabulary.get, tokens, repeat(base - 1)), dtype=np.int64, count=len(tokens))
        keys = _combined_keys(ids, base)
        ref_keys = reference.all_keys
        if not len(ref_keys):
            return [0] * MAX_ORDER
        where = np.searchsorted(ref_keys, keys)
        np.minimum(where, len(ref_keys) - 1, out=where)
        found = where[ref_keys[where] == keys]
        if not len(found):
            return [0] * MAX_ORDER
        if len(found) * 16 < len(ref_keys):  # few hits in a long answer: count the hits alone
            where, counts = np.unique(found, return_counts=True)
            clipped = np.minimum(counts, reference.all_counts[where])
            orders = reference.all_orders[where]
        else:
            clipped = np.minimum(np.bincount(found, minlength=len(ref_keys)), reference.all_counts)
            orders = reference.all_orders
        return np.bincount(orders, weights=clipped, minlength=MAX_ORDER).astype(np.int64).tolist()
    ids = np.fromiter(map(reference.vocabulary.get, tokens, repeat(-1)), dtype=np.int64, count=len(tokens))
    base = len(reference.vocabulary) + 1
    correct = []
    for order in range(1, MAX_ORDER + 1):
        ref_keys, ref_counts = reference.keys[order - 1], reference.counts[order - 1]
        if len(ref_keys) == 0 or len(ids) < order:
            correct.append(0)
            continue
        keys, valid = _ngram_keys(ids, order, base)
        unique, counts = np.unique(keys[valid], return_counts=True)
        where = np.searchsorted(ref_keys, unique)
        where[where == len(ref_keys)] = 0
        found = ref_keys[where] == unique
        correct.append(int(np.minimum(counts[found], ref_counts[where[found]]).sum()))
    return correct


def _compute(correct: list[int], total: list[int], length: int, reference_length: int) -> float:
    return BLEU.compute_bleu(correct, total, length, reference_length, smooth_method="exp",
                             effective_order=True, max_ngram_order=MAX_ORDER).score


def bleu_of_tokens(reference: AnswerNgrams, tokens: list[str]) -> float:
    """Sentence BLEU (0 to 100) of a response's ``13a`` tokens against a prepared answer."""
    if tokens == reference.tokens:
        return reference.identical_score()
    if reference.vocabulary.keys().isdisjoint(tokens):
        return 0.0  # no n-gram matches: sacrebleu's early 0
    length = len(tokens)
    correct = _matches(reference, tokens)
    total = [max(0, length - order + 1) for order in range(1, MAX_ORDER + 1)]
    return _compute(correct, total, length, reference.length)


def sentence_bleu(answer: str, response: str) -> float:
    """``BLEU(effective_order=True).sentence_score(response, [answer]).score`` (0 to 100)."""
    return bleu_of_tokens(answer_ngrams(answer), tokenize_13a(response))
