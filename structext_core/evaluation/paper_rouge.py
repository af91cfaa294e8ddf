"""The authors' ROUGE-L: pltrdy ``rouge`` 1.0.1, exactly, without its limits.

The paper scores a response with the authors' ``calculate_rouge_l(a, r)`` (their
``Evaluation/call_api.py``), that is ``Rouge().get_scores(answer, response)[0]["rouge-l"]["f"]``:
the **answer is the library's hypothesis and the response its reference** (which is why an
empty response raises "Reference is empty"). It scores the whole response and counts it as
correct at 0.75 or more. That library's ROUGE-L is not the one of Google's ``rouge-score``
(our strict metric, :func:`scoring.rouge_l`):

- the text is split into sentences at every ``.``; each sentence's whitespace is collapsed
  (``" ".join(s.split())``) and its words are the pieces between single spaces (a sentence of
  blanks alone is one empty word); case and punctuation are kept;
- for every (response sentence, answer sentence) pair it reconstructs ONE longest common
  subsequence with its own tie-breaking (``_recon_lcs(response words, answer words)``: the
  response's words are the table's rows, walked back from the last), and keeps the union of
  the reconstructed words as a set of word types: each distinct word counts once, however
  often it is matched. The tie-breaking makes the order matter: swapped, the union differs
  on e.g. an answer with its tokens reversed or its lines shuffled;
- recall = |union| / distinct response words, precision = |union| / distinct answer words,
  F = 2PR / (P + R + 1e-8).

The library fills a Python dict of (n+1)(m+1) cells per sentence pair and reconstructs the
LCS recursively, so a pair of about 1,000 words raises ``RecursionError`` and long answers
take seconds. Empty texts (no sentence) raise ``ValueError``. Here the same numbers come
from Hyyrö's bit-parallel LCS rows (one Python integer per response word) and a traceback that
reads the library's tie-breaking straight off those bits: at cell (i, j) it goes diagonal on
a match, up when row i grows at column j (that is exactly ``table[i-1, j] > table[i, j-1]``
when the words differ), else left, and a run of left moves is one bit search. No recursion,
no table. Where the library raises on an empty text the score is 0.

What makes it fast across a suite (:class:`PaperReference`, built once per answer): the
answer's sentences, word types and per-sentence codes are kept; the answer's words that a
response sentence lacks are dropped before the traceback (it only ever moves left across such
a column, so the words it reconstructs are the same); the response's words that the answer
lacks cost no big-integer work (a run of them is one traceback row, see
:func:`_traceback_words`); when the LCS is as long as one side, that side's words are the
answer without any traceback; and an answer of one sentence (most answers) skips the
bookkeeping of which answer words are still reachable.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain

from structext_core.evaluation.lcs import EncodedReference

__all__ = ["PaperReference", "paper_reference", "paper_sentences", "reconstructed_lcs_words", "rouge_l_paper"]


def paper_sentences(text: str) -> list[list[str]]:
    """The library's sentences of ``text``, each as its list of words."""
    # " ".join(piece.split()).split(" "): the words, or one empty word for a piece of blanks
    return [piece.split() or [""] for piece in text.split(".") if piece]


def _match_masks(words: list[str]) -> dict[str, int]:
    masks: dict[str, int] = {}
    for position, word in enumerate(words):
        masks[word] = masks.get(word, 0) | (1 << position)
    return masks


def _traceback_words(reference: list[str], evaluated: list[str]) -> set[str]:
    """The words of the library's LCS of two non-empty word lists, read off Hyyrö's rows.

    Row ``i`` of the LCS table is kept as the bit set of columns where it grows by one
    (``L[i][j] - L[i][j-1] == 1`` at bit ``j-1``).

    A reference word that ``evaluated`` lacks leaves its row equal to the one above it, and
    in the traceback a run of such rows acts as one: the first moves left to just after the
    nearest growth column, and the next ones, over the same bits, stay there. So each run is
    kept as one row and costs no big-integer work.
    """
    width = len(evaluated)
    masks = _match_masks(evaluated)
    get = masks.get
    full = (1 << width) - 1
    vector = full
    grows = 0
    rows: list[tuple[str | None, int, int]] = []
    in_run = False
    for word in reference:
        match = get(word, 0)
        if not match:
            if not in_run:
                rows.append((None, 0, grows))
                in_run = True
            continue
        in_run = False
        matched = vector & match
        if matched:
            vector = ((vector + matched) | (vector - matched)) & full
            grows = ~vector & full
        rows.append((word, match, grows))
    words: set[str] = set()
    j = width
    for word, match, row in reversed(rows):
        if j == 0:
            break
        # the nearest column at or left of j where the traceback stops moving left
        candidates = (row | match) & ((1 << j) - 1)
        if not candidates:
            break
        column = candidates.bit_length() - 1
        if (match >> column) & 1:
            words.add(word)  # type: ignore[arg-type]  # match is 0 on a run's row
            j = column
        else:
            j = column + 1
    return words


def _sentence_lcs_words(answer: list[str], answer_set: frozenset[str], coder: EncodedReference,
                        response: list[str]) -> set[str] | frozenset[str]:
    """The words of ``_recon_lcs(response, answer)`` for one sentence of each, the answer's
    set and codes at hand: the library walks the table with the response's words as rows."""
    kept = coder.encode(response)  # the response words the answer has, as codes
    length = coder.lcs_encoded(kept)
    if length == 0:
        return set()
    # Whatever the tie-breaking, an LCS as long as one side is that whole side.
    if length == len(answer):
        return answer_set
    if length == len(kept):
        return answer_set.intersection(response)
    # Dropping the answer words (columns) this response sentence lacks changes no step of the
    # traceback: at such a column the words differ and L[i-1][j] = L[i-1][j-1] <= L[i][j-1],
    # so it moves left.
    present = set(response)
    return _traceback_words(response, [word for word in answer if word in present])


def reconstructed_lcs_words(reference: list[str], evaluated: list[str]) -> set[str]:
    """The words of the LCS that ``rouge.rouge_score._recon_lcs(reference, evaluated)`` builds
    (``reference`` are the table's rows, walked from the last)."""
    if not reference or not evaluated:
        return set()
    return set(_sentence_lcs_words(evaluated, frozenset(evaluated), EncodedReference(evaluated), reference))


class PaperReference:
    """An answer's sentences, word types, per-sentence word sets and codes, built once."""

    __slots__ = ("sentences", "types", "sets", "_coders")

    def __init__(self, answer: str):
        self.sentences = paper_sentences(answer)
        self.types = frozenset(chain.from_iterable(self.sentences))
        self.sets = [frozenset(sentence) for sentence in self.sentences]
        self._coders: list[EncodedReference | None] = [None] * len(self.sentences)

    def coder(self, index: int) -> EncodedReference:
        """Sentence ``index`` encoded for the LCS (on first use)."""
        coder = self._coders[index]
        if coder is None:
            coder = self._coders[index] = EncodedReference(self.sentences[index])
        return coder

    def score(self, response: str) -> float:
        """ROUGE-L F of ``response`` against this answer; see :func:`rouge_l_paper`."""
        evaluated = paper_sentences(response)
        if not self.sentences or not evaluated:
            return 0.0
        if len(evaluated) == 1:
            evaluated_types = set(evaluated[0])
        else:
            evaluated_types = set(chain.from_iterable(evaluated))
        if len(self.sentences) == 1:
            # one pair per response sentence, one answer sentence: no bookkeeping of which
            # answer words are still reachable
            union = self._union_one_sentence(evaluated, evaluated_types)
        else:
            union = self._union(evaluated, evaluated_types)
        # the library's rouge_l_summary_level with the answer as hypothesis: p over its words,
        # r over the response's (reference) words, in its own float steps
        overlap = len(union)
        r_lcs = overlap / len(evaluated_types)
        p_lcs = overlap / len(self.types)
        return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))

    def _union_one_sentence(self, evaluated: list[list[str]], evaluated_types: set[str]) -> set[str] | frozenset[str]:
        ref_sentence, ref_set, coder = self.sentences[0], self.sets[0], self.coder(0)
        if len(evaluated) == 1:
            # the words of one LCS are words of both sides: nothing to intersect first
            return _sentence_lcs_words(ref_sentence, ref_set, coder, evaluated[0])
        needed = evaluated_types.intersection(ref_set)
        union: set[str] = set()
        for sentence in evaluated:
            if needed.isdisjoint(sentence):
                continue
            words = _sentence_lcs_words(ref_sentence, ref_set, coder, sentence)
            union.update(words)
            needed.difference_update(words)
            if not needed:
                break
        return union

    def _union(self, evaluated: list[list[str]], evaluated_types: set[str]) -> set[str]:
        reachable = len(self.types.intersection(evaluated_types))
        union: set[str] = set()
        if not reachable:
            return union
        count, start = len(evaluated), 0
        for index, (ref_sentence, ref_set) in enumerate(zip(self.sentences, self.sets)):
            # The words this sentence could still add. The union does not depend on the
            # order of the pairs, nor on pairs skipped because they cannot add a word, so the
            # search starts after the last productive response sentence (a response that
            # follows the answer finds each sentence's partner at once).
            needed = evaluated_types.intersection(ref_set)
            needed.difference_update(union)
            first = start
            for step in range(count if needed else 0):
                position = (first + step) % count
                if needed.isdisjoint(evaluated[position]):
                    continue
                words = _sentence_lcs_words(ref_sentence, ref_set, self.coder(index), evaluated[position])
                if not needed.isdisjoint(words):
                    union.update(words)
                    needed.difference_update(words)
                    start = position + 1
                    if not needed:
                        break
            if len(union) == reachable:
                break
        return union


@lru_cache(maxsize=8192)
def paper_reference(answer: str) -> PaperReference:
    """The answer's :class:`PaperReference`, cached: a suite's answers are prepared once."""
    return PaperReference(answer)


def rouge_l_paper(answer: str, response: str) -> float:
    """ROUGE-L F of ``response`` against ``answer`` as pltrdy ``rouge`` 1.0.1 computes it.

    Equal to ``Rouge().get_scores(answer, response)[0]["rouge-l"]["f"]`` (the authors' order:
    the answer is the hypothesis) wherever that call returns; 0.0 where it raises because a
    text has no sentence (empty, or only dots), and the true value where it raises
    ``RecursionError`` (long sentences; :func:`authors_failure` says where).
    """
    return paper_reference(answer).score(response)


# ------------------------------------------------------------------ where the library raises

AUTHORS_RECURSION_LIMIT = 1000
"""Python's default recursion limit: the authors' script never changes it."""
AUTHORS_CALL_DEPTH = 7
"""Frames on the stack in the authors' ``calculate_rouge_l`` when it calls the library, run as
``python get_evaluation_result.py`` (their ``4_get_evaluation_result.sh``): the module, fire's
``Fire``, ``_Fire`` and ``_CallAndUpdateTrace`` (the same in fire 0.5, 0.6 and 0.7), ``judge``,
``judge_detail`` and ``calculate_rouge_l`` itself."""
LIBRARY_FRAMES = 6
"""Frames the library adds above the caller before its first ``_recon`` call: ``get_scores``,
``_get_scores``, the ROUGE-L lambda, ``rouge_l_summary_level``, ``_union_lcs``, ``_recon_lcs``."""

EMPTY_ANSWER = "empty answer"
EMPTY_RESPONSE = "empty response"
RECURSION_LIMIT = "recursion limit"


def recon_calls(rows: list[str], columns: list[str], budget: int | None = None) -> int:
    """How many nested ``_recon`` calls ``rouge.rouge_score._recon_lcs(rows, columns)`` makes.

    The library walks back from cell (len(rows), len(columns)) and calls itself once per step
    (diagonal on a match, up when ``table[i-1, j] > table[i, j-1]``, else left) until a side
    is used up: the count is the steps plus one. It is found here on Hyyrö's bit rows without
    recursion. Each step uses at least one row or column, so with ``budget`` the walk stops as
    soon as the count exceeds it (the value returned is then ``budget + 1``) and only the last
    ``budget`` rows are kept: a long text costs one pass and little memory.
    """
    if not rows or not columns:
        return 1
    width = len(columns)
    masks = _match_masks(columns)
    get = masks.get
    full = (1 << width) - 1
    vector = full
    over = len(rows) + width + 1 if budget is None else budget + 1
    first_kept = max(0, len(rows) - over)  # rows above it lie more than the budget away
    kept: list[tuple[int, int]] = []  # (match, grows) of row first_kept + 1 on
    for position, word in enumerate(rows):
        match = get(word, 0)
        if match:
            matched = vector & match
            if matched:
                vector = ((vector + matched) | (vector - matched)) & full
        if position >= first_kept:
            kept.append((match, ~vector & full))
    steps, i, j = 0, len(rows), width
    while i > 0 and j > 0:
        if steps + 1 >= over or i <= first_kept:
            return over
        match, grows = kept[i - 1 - first_kept]
        candidates = (grows | match) & ((1 << j) - 1)
        if not candidates:  # left to column 0
            steps += j
            break
        column = candidates.bit_length() - 1  # bit `column` is the table's column `column + 1`
        steps += (j - 1) - column + 1  # the left moves to it, then one diagonal or up move
        j = column if (match >> column) & 1 else column + 1
        i -= 1
    return min(steps + 1, over)


def authors_failure(answer: str, response: str, recursion_limit: int = AUTHORS_RECURSION_LIMIT,
                    call_depth: int = AUTHORS_CALL_DEPTH) -> str | None:
    """Why the authors' ``calculate_rouge_l(answer, response)`` raises, or None when it returns.

    ``Rouge().get_scores(answer, response)`` computes ROUGE-1 first, which raises
    ``ValueError`` when the answer (:data:`EMPTY_ANSWER`) or the response
    (:data:`EMPTY_RESPONSE`) has no sentence (empty, or dots only). ROUGE-L then rebuilds,
    for every (response sentence, answer sentence) pair, one LCS recursively; a pair whose
    walk needs more ``_recon`` calls than fit between ``call_depth + LIBRARY_FRAMES`` and
    ``recursion_limit`` raises ``RecursionError`` (:data:`RECURSION_LIMIT`). CPython raises
    when a frame would be number ``recursion_limit + 1`` on the stack. Not a length guess:
    the walk is counted exactly (:func:`recon_calls`); the tests check it against the library
    around the boundary."""
    reference = paper_reference(answer)
    if not reference.sentences:
        return EMPTY_ANSWER
    evaluated = paper_sentences(response)
    if not evaluated:
        return EMPTY_RESPONSE
    headroom = recursion_limit - call_depth - LIBRARY_FRAMES  # _recon calls that fit
    for response_words in evaluated:
        n = len(response_words)
        for index, answer_words in enumerate(reference.sentences):
            m = len(answer_words)
            if n + m + 1 <= headroom:  # the walk takes at most n + m - LCS steps
                continue
            if min(n, m) + 1 > headroom:  # it uses up one side, a step per row or column at most
                return RECURSION_LIMIT
            lcs = reference.coder(index).lcs(response_words)
            if n + m - lcs + 1 <= headroom:
                continue
            if recon_calls(response_words, answer_words, budget=headroom) > headroom:
                return RECURSION_LIMIT
    return None
