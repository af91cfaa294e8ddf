"""Longest common subsequence of two token lists, bit-parallel (rapidfuzz, C++).

rapidfuzz compares sequences element by element; given a list of Python strings it would
hash them. Instead, every distinct token of the pair is mapped to one code point, so both
sides become ``str`` objects whose characters stand for tokens. The mapping is injective,
so the LCS of the code-point strings is the LCS of the token sequences, with no hashing and
no chance of collision.

When one side (a reference answer) is compared with many others, :class:`EncodedReference`
encodes it once and numbers only its own tokens: a token of the other side that the reference
lacks can never be matched, so it is dropped rather than coded (the LCS length is unchanged).
A reference of at most 256 distinct tokens then encodes to code points below 256, which
rapidfuzz looks up in a flat table instead of a hash map (about eight times faster), and a
long pair whose LCS is close to the shorter side's length is computed in a narrow band
(``score_cutoff``), which is exact whenever the LCS reaches the cutoff.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import LCSseq

__all__ = ["EncodedReference", "lcs_length", "lcs_of_codes"]

# Code points 0xD800-0xDFFF are surrogates; skip them so every token maps to a valid
# code point. 0x110000 - 0x800 distinct tokens per pair is far more than any sample holds.
_SURROGATE_START, _SURROGATE_SPAN = 0xD800, 0x800
_MAX_DISTINCT_TOKENS = 0x110000 - _SURROGATE_SPAN
# Pairs shorter than this are computed in full at once: the band would save nothing.
_BAND_MIN_LENGTH = 256


def _token_code_point(index: int) -> str:
    return chr(index if index < _SURROGATE_START else index + _SURROGATE_SPAN)


# The first code points in order, made once: most token lists have fewer distinct tokens,
# and zipping with this string is the dictionary built in C.
_FIRST_CODES = "".join(map(_token_code_point, range(_SURROGATE_START)))


def lcs_of_codes(first: str | Sequence[int], second: str | Sequence[int]) -> int:
    """LCS length of two code sequences, exact; tries a narrow band first on long, alike pairs.

    ``LCSseq.similarity(a, b, score_cutoff=c)`` returns the exact LCS when it is at least
    ``c`` (and 0 otherwise) and only fills the diagonals that an LCS of length ``c`` can
    use. The cutoff tried is a little below the shorter length, the LCS's upper bound; when
    the LCS is lower, the full computation follows.
    """
    if not first or not second:
        return 0
    shorter, longer = sorted((len(first), len(second)))
    if shorter >= _BAND_MIN_LENGTH and longer - shorter <= shorter // 4:
        cutoff = shorter - max(4, shorter // 32)
        length = int(LCSseq.similarity(first, second, score_cutoff=cutoff))
        if length:
            return length
    return int(LCSseq.similarity(first, second))


def lcs_length(tokens_a: list[str], tokens_b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists (bit-parallel)."""
    if not tokens_a or not tokens_b:
        return 0
    return EncodedReference(tokens_a).lcs(tokens_b)


class EncodedReference:
    """One token list encoded once, to measure the LCS of many others against it."""

    __slots__ = ("codes", "encoded", "length")

    def __init__(self, tokens: Sequence[str]):
        distinct = dict.fromkeys(tokens)
        self.length = len(tokens)
        if len(distinct) > _MAX_DISTINCT_TOKENS:  # pragma: no cover - needs >1.1M distinct tokens
            self.codes: dict = {token: index for index, token in enumerate(distinct)}
            self.encoded: str | list[int] = [self.codes[t] for t in tokens]
            return
        if len(distinct) <= len(_FIRST_CODES):
            self.codes = dict(zip(distinct, _FIRST_CODES))
        else:
            self.codes = {token: _token_code_point(index) for index, token in enumerate(distinct)}
        self.encoded = "".join(map(self.codes.__getitem__, tokens))

    def encode(self, tokens: Sequence[str]) -> str | list[int]:
        """``tokens`` as codes, those the reference lacks left out (they cannot be matched)."""
        if isinstance(self.encoded, list):  # pragma: no cover - see __init__
            return [code for code in map(self.codes.get, tokens) if code is not None]
        return "".join(filter(None, map(self.codes.get, tokens)))

    def lcs(self, tokens: Sequence[str]) -> int:
        """LCS length of the reference and ``tokens``."""
        return lcs_of_codes(self.encoded, self.encode(tokens))

    def lcs_encoded(self, encoded: str | list[int]) -> int:
        """LCS length of the reference and tokens already passed through :meth:`encode`."""
        return lcs_of_codes(self.encoded, encoded)
