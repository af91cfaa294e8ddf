"""Scoring model and human responses: ROUGE-L with the paper's threshold, exact match, BLEU.

``rouge_l`` reproduces ``rouge_score.rouge_scorer.RougeScorer(["rougeL"]).score(answer,
response)["rougeL"].fmeasure`` exactly (same tokens, same LCS length, same float formula),
but computes the longest common subsequence with rapidfuzz's bit-parallel ``LCSseq``
(Hyyrö's algorithm, 64 cells per machine word, written in C++) instead of rouge-score's
pure-Python O(m·n) table. On Test-Hard answers of tens of thousands of characters that is
the difference between seconds and milliseconds per pair.

How the tokens are made equal to rouge-score's (``rouge_score/tokenize.py`` with
``use_stemmer=False``): the text is lower-cased with ``str.lower`` (full Unicode lower-casing,
so e.g. the Kelvin sign ``K`` becomes ``k``), every run of characters outside ``[a-z0-9]``
(which includes every other non-ASCII character) becomes a separator, and empty pieces are
dropped. That is exactly ``re.findall("[a-z0-9]+", text.lower())``; it is computed as one
``str.translate`` over ASCII text plus a whitespace split, which is about ten times faster
than the regex (non-ASCII text is lower-cased and its remaining non-ASCII characters turned
into separators first). Once the LCS is bit-parallel, tokenising is most of the time left.

How the tokens reach the bit-parallel path: see :mod:`structext_core.evaluation.lcs`.

Scoring at scale (:func:`score_many`, the paper's 420,000 responses): every answer is
prepared once (:class:`PreparedAnswer`: its tokens encoded for the LCS, its BLEU n-grams,
its sentences for the authors' ROUGE-L, its whitespace-normalised text), and each response
is read once: it is tokenised in two pieces, before and after its ``### Answer:`` line (the
colon is a separator, so the pieces' tokens joined are the whole response's), and when it
has no marker the extracted answer is the response and its ROUGE-L is computed once.
"""

from __future__ import annotations

import multiprocessing
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from structext_core.evaluation.fast_bleu import AnswerNgrams, answer_ngrams, bleu_of_tokens, sentence_bleu, tokenize_13a
from structext_core.evaluation.lcs import EncodedReference, lcs_length
from structext_core.evaluation.paper_rouge import PaperReference, paper_reference

DEFAULT_THRESHOLD = 0.75
"""The paper's rule: a ROUGE-L F1 below this counts as 0."""

ANSWER_MARKER = "### Answer:"

# ASCII letters to lower case, ASCII digits kept, every other ASCII character to a space.
_ASCII_TOKEN_TABLE = str.maketrans({chr(c): chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})
# A line that starts (after optional blanks) with "### Answer:"; what follows on that line
# and on later lines is the answer.
_ANSWER_LINE_RE = re.compile(r"^[ \t]*###[ \t]*Answer[ \t]*:", re.MULTILINE)


def tokenize(text: str) -> list[str]:
    """Return rouge-score's tokens for ``text`` (lower-cased ``[a-z0-9]+`` runs, no stemming)."""
    if not text.isascii():
        # Unicode lower-casing can turn a non-ASCII character into ASCII (KELVIN SIGN -> "k");
        # every character still outside ASCII is then a separator, like "?" is.
        text = text.lower().encode("ascii", "replace").decode("ascii")
    return text.translate(_ASCII_TOKEN_TABLE).split()


def _f_measure(lcs: int, answer_length: int, response_length: int) -> float:
    """rouge-score's F from the LCS length and both lengths (``fmeasure``, same float steps)."""
    if not answer_length or not response_length:
        return 0.0
    precision = lcs / response_length
    recall = lcs / answer_length
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge_l_from_tokens(answer_tokens: list[str], response_tokens: list[str]) -> float:
    """ROUGE-L F-measure of two already tokenised texts, with rouge-score's formula."""
    if not answer_tokens or not response_tokens:
        return 0.0
    return _f_measure(lcs_length(answer_tokens, response_tokens), len(answer_tokens), len(response_tokens))


def rouge_l(answer: str, response: str) -> float:
    """ROUGE-L F1 of ``response`` against the reference ``answer``, in [0, 1].

    Equal to ``RougeScorer(["rougeL"]).score(answer, response)["rougeL"].fmeasure``.
    """
    return rouge_l_from_tokens(tokenize(answer), tokenize(response))


def apply_threshold(rouge: float, threshold: float = DEFAULT_THRESHOLD) -> float:
    """The paper's rule: ``rouge`` itself when it reaches ``threshold``, else 0."""
    return rouge if rouge >= threshold else 0.0


def thresholded_rouge_l(answer: str, response: str, threshold: float = DEFAULT_THRESHOLD) -> float:
    """ROUGE-L F1 with the paper's threshold applied (0 below ``threshold``)."""
    return apply_threshold(rouge_l(answer, response), threshold)


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip both ends."""
    return " ".join(text.split())


def exact_match(answer: str, response: str) -> int:
    """1 when the two texts are equal after whitespace normalisation, else 0 (case matters)."""
    return int(normalize_whitespace(answer) == normalize_whitespace(response))


def bleu(answer: str, response: str) -> float:
    """Sentence BLEU of ``response`` against ``answer``, scaled to [0, 1].

    Equal to sacrebleu's ``BLEU(effective_order=True).sentence_score(response, [answer])``
    (13a tokenisation, exponential smoothing), computed by :mod:`structext_core.evaluation.fast_bleu`
    with each answer counted once.
    """
    if not answer.strip() or not response.strip():
        return 0.0
    value = sentence_bleu(answer, response) / 100.0
    return min(1.0, max(0.0, value))  # sacrebleu can return 100.00000000000004


def _last_marker(response: str) -> re.Match | None:
    if "###" not in response:  # the marker's own characters: most responses are ruled out here
        return None
    last = None
    for match in _ANSWER_LINE_RE.finditer(response):
        last = match
    return last


def has_answer_marker(response: str) -> bool:
    """True when ``response`` contains a ``### Answer:`` line."""
    return "###" in response and _ANSWER_LINE_RE.search(response) is not None


def extract_answer(response: str) -> str:
    """The text after the last ``### Answer:`` line, stripped; the whole response if none.

    The marker must start a line (leading blanks allowed; blanks around ``###`` and before
    the colon tolerated). Text on the marker's own line after the colon is part of the answer,
    so both ``### Answer:\\n42`` and ``### Answer: 42`` give ``42``.
    """
    last = _last_marker(response)
    if last is None:
        return response.strip()
    return response[last.end():].strip()


@dataclass(frozen=True)
class ResponseScore:
    """Every score of one response. Fields without a suffix are computed on the extracted
    answer (the paper's protocol); ``*_full`` fields on the whole response."""

    answer_extracted: str
    has_marker: bool
    rouge_l: float
    score: float
    exact_match: int
    bleu: float
    rouge_l_full: float
    score_full: float
    rouge_l_paper: float = 0.0
    score_paper: float = 0.0

    def as_dict(self) -> dict:
        """The fields as a plain dict, ready to merge into a result row."""
        return {
            "answer_extracted": self.answer_extracted,
            "has_marker": self.has_marker,
            "rouge_l": self.rouge_l,
            "score": self.score,
            "exact_match": self.exact_match,
            "bleu": self.bleu,
            "rouge_l_full": self.rouge_l_full,
            "score_full": self.score_full,
            "rouge_l_paper": self.rouge_l_paper,
            "score_paper": self.score_paper,
        }


class PreparedAnswer:
    """One answer, prepared once for every metric; :meth:`score` scores a response against it."""

    __slots__ = ("answer", "stripped", "normalized", "strict", "ngrams", "paper")

    def __init__(self, answer: str):
        self.answer = answer
        self.stripped = answer.strip()
        self.normalized = normalize_whitespace(answer)
        self.strict = EncodedReference(tokenize(answer))
        self.ngrams: AnswerNgrams = answer_ngrams(answer)
        self.paper: PaperReference = paper_reference(answer)

    def score(self, response: str, threshold: float = DEFAULT_THRESHOLD, with_bleu: bool = True) -> dict:
        """Every score of ``response``, as :meth:`ResponseScore.as_dict` gives them."""
        marker = _last_marker(response)
        extracted = response[marker.end():].strip() if marker is not None else response.strip()
        strict = self.strict
        # A response that gives the answer itself (leading and trailing blanks aside, which
        # no tokeniser keeps) has the answer's own tokens: nothing to tokenise or count.
        verbatim = extracted == self.stripped
        if verbatim:
            codes, count = strict.encoded, strict.length
            rouge = _f_measure(count, count, count)
        else:
            tokens = tokenize(extracted)
            codes, count = strict.encode(tokens), len(tokens)
            rouge = _f_measure(strict.lcs_encoded(codes) if codes else 0, strict.length, count)
        if marker is None:
            rouge_full = rouge  # the extracted answer is the whole response
        else:
            head = tokenize(response[:marker.end()])  # ends at the colon, a separator
            full_codes = strict.encode(head) + codes
            rouge_full = _f_measure(strict.lcs_encoded(full_codes) if full_codes else 0, strict.length,
                                    len(head) + count)
        if not with_bleu:
            bleu_value = float("nan")
        elif not self.stripped or not extracted:
            bleu_value = 0.0
        elif verbatim:
            bleu_value = min(1.0, self.ngrams.identical_score() / 100.0)
        else:  # sacrebleu can return 100.00000000000004
            bleu_value = min(1.0, max(0.0, bleu_of_tokens(self.ngrams, tokenize_13a(extracted)) / 100.0))
        rouge_paper = self.paper.score(response)
        return {
            "answer_extracted": extracted,
            "has_marker": marker is not None,
            "rouge_l": rouge,
            "score": apply_threshold(rouge, threshold),
            "exact_match": 1 if verbatim else int(self.normalized == normalize_whitespace(extracted)),
            "bleu": bleu_value,
            "rouge_l_full": rouge_full,
            "score_full": apply_threshold(rouge_full, threshold),
            "rouge_l_paper": rouge_paper,
            "score_paper": apply_threshold(rouge_paper, threshold),
        }


@lru_cache(maxsize=4096)
def prepare_answer(answer: str) -> PreparedAnswer:
    """The answer's :class:`PreparedAnswer`, cached: a suite's answers are prepared once."""
    return PreparedAnswer(answer)


def score_response(
    answer: str,
    response: str,
    threshold: float = DEFAULT_THRESHOLD,
    with_bleu: bool = True,
) -> ResponseScore:
    """Score one response against its answer, on the extracted answer and on the whole text."""
    return ResponseScore(**prepare_answer(answer).score(response, threshold, with_bleu))


# The pairs being scored by score_many, inherited by forked workers instead of pickled.
_WORK: tuple[Sequence[tuple[str, str]], float, bool] | None = None


def _score_span(indices: list[int]) -> list[dict]:
    assert _WORK is not None
    pairs, threshold, with_bleu = _WORK
    prepared: PreparedAnswer | None = None
    scored = []
    for index in indices:
        answer, response = pairs[index]
        if prepared is None or prepared.answer != answer:
            prepared = prepare_answer(answer)
        scored.append(prepared.score(response, threshold, with_bleu))
    return scored


# A row's cost, roughly: a fixed part plus its characters (every metric is linear or close).
_ROW_COST = 200


def _balanced_chunks(pairs: Sequence[tuple[str, str]], order: list[int], chunk_size: int, jobs: int) -> list[list[int]]:
    """``order`` cut into chunks of at most ``chunk_size`` rows and about an eighth of a worker's
    share of the characters, heaviest first: a few long answers (Test-Hard's) neither sit in
    one chunk nor come last, so no worker waits for another at the end."""
    costs = [_ROW_COST + len(pairs[i][0]) + len(pairs[i][1]) for i in order]
    cap = max(1, sum(costs) // (jobs * 8))
    chunks: list[list[int]] = []
    chunk: list[int] = []
    chunk_costs: list[int] = []
    weight = 0
    for index, cost in zip(order, costs):
        if chunk and (len(chunk) >= chunk_size or weight + cost > cap):
            chunks.append(chunk)
            chunk_costs.append(weight)
            chunk, weight = [], 0
        chunk.append(index)
        weight += cost
    if chunk:
        chunks.append(chunk)
        chunk_costs.append(weight)
    ranking = sorted(range(len(chunks)), key=chunk_costs.__getitem__, reverse=True)
    return [chunks[k] for k in ranking]


def score_many(
    pairs: Sequence[tuple[str, str]],
    threshold: float = DEFAULT_THRESHOLD,
    with_bleu: bool = True,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    chunk_size: int = 2000,
) -> list[dict]:
    """Score many ``(answer, response)`` pairs; the result dicts come back in input order.

    Pairs are scored grouped by answer, so each answer is prepared once per process
    (:class:`PreparedAnswer`). ``jobs`` > 1 forks worker processes, which inherit the pairs
    rather than receive them: use it from the command line, not from a threaded server; the
    chunks they get are cut by size as well as rows, heaviest first.
    ``progress(done, total)`` is called after each chunk.
    """
    global _WORK
    order = sorted(range(len(pairs)), key=lambda i: pairs[i][0])
    if jobs > 1:
        chunks = _balanced_chunks(pairs, order, chunk_size, jobs)
    else:
        chunks = [order[start:start + chunk_size] for start in range(0, len(order), chunk_size)]
    results: list[dict | None] = [None] * len(pairs)
    done = 0

    def collect(chunk: list[int], scored: list[dict]) -> None:
        nonlocal done
        for index, row in zip(chunk, scored):
            results[index] = row
        done += len(chunk)
        if progress is not None:
            progress(done, len(pairs))

    _WORK = (pairs, threshold, with_bleu)
    try:
        if jobs > 1 and len(chunks) > 1:
            context = multiprocessing.get_context("fork")
            with context.Pool(min(jobs, len(chunks))) as pool:
                for chunk, scored in zip(chunks, pool.imap(_score_span, chunks)):
                    collect(chunk, scored)
        else:
            for chunk in chunks:
                collect(chunk, _score_span(chunk))
    finally:
        _WORK = None
    return results  # type: ignore[return-value]
