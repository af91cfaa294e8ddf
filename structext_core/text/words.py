"""Counted nouns for every text the app shows: ``plural(1, "practice item")`` is "1 practice
item", ``plural(2, "practice item")`` "2 practice items". One helper, so no page writes
"1 practice items" or "Exported 1 samples"."""

from __future__ import annotations

from collections.abc import Iterable

_IRREGULAR = {"study": "studies", "entry": "entries", "person": "people", "match": "matches",
              "index": "indexes", "child": "children", "box": "boxes", "this": "these"}


def plural_of(noun: str) -> str:
    """The plural of ``noun`` (its last word): the irregular ones above, else ``-s``."""
    head, _, last = noun.rpartition(" ")
    word = _IRREGULAR.get(last, last + "s")
    return f"{head} {word}" if head else word


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """``singular`` for exactly 1 (or -1), else ``plural`` (default :func:`plural_of`)."""
    return singular if abs(n) == 1 else (plural or plural_of(singular))


def plural(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and the noun in the number it takes: "1 sample", "2,000 samples"."""
    return f"{n:,} {noun(n, singular, plural)}"


def series(items: Iterable[object]) -> str:
    """``items`` as one phrase: "A", "A and B", "A, B and C" (no comma before the "and", as every text of the app
    writes a list); empty for none."""
    items = [str(item) for item in items]
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
