"""Token names in the original generator's style.

Every abstract value in StrucText-Eval is a counter written in base 26 with the
least significant letter first: ``a, b, ..., z, ab, bb, ..., zb, ac, ...``.
Keys and attribute values count with the alphabet reversed (``z, y, ..., a, zy,
yy, ...``), so the first key of every document is ``Z``.
"""

from __future__ import annotations

import string

LOWER = string.ascii_lowercase
REVERSED = LOWER[::-1]


def base26(n: int, alphabet: str = LOWER) -> str:
    """Write ``n >= 0`` in base 26, least significant letter first."""
    if n < 0:
        raise ValueError(f"counter must be >= 0, got {n}")
    letters = [alphabet[n % 26]]
    n //= 26
    while n:
        letters.append(alphabet[n % 26])
        n //= 26
    return "".join(letters)


# Lookup tables for the counters a document can reach (all of 1 to 3 letters);
# generation spends most of its time naming things, so name once.
TABLE_SIZE = 26**3


def _table(alphabet: str) -> tuple[str, ...]:
    """``base26(n, alphabet)`` for every n below TABLE_SIZE, built a letter count at a time (as
    quick to import as can be: every process that generates builds four of these)."""
    rest = alphabet[1:]  # a leading (most significant) letter is never the zero letter
    one = list(alphabet)
    pairs = [low + mid for mid in alphabet for low in alphabet]  # two letters, the zero letter allowed last
    return (*one, *pairs[26:], *[pair + high for high in rest for pair in pairs])


NODE_NAMES = _table(LOWER)
TAG_NAMES = _table(LOWER.upper())
VALUE_NAMES = _table(REVERSED)
KEY_NAMES = _table(REVERSED.upper())


def node_name(n: int) -> str:
    """Node ids and tree node names: ``a, b, ..., z, ab, bb, ...``."""
    return NODE_NAMES[n] if n < TABLE_SIZE else base26(n, LOWER)


def tag_name(n: int) -> str:
    """XML element names: ``A, B, ..., Z, AB, BB, ...``."""
    return TAG_NAMES[n] if n < TABLE_SIZE else base26(n, LOWER).upper()


def value_name(n: int) -> str:
    """Field values: ``z, y, ..., a, zy, yy, ...``."""
    return VALUE_NAMES[n] if n < TABLE_SIZE else base26(n, REVERSED)


def key_name(n: int) -> str:
    """Field keys: ``Z, Y, ..., A, ZY, YY, ...``."""
    return KEY_NAMES[n] if n < TABLE_SIZE else base26(n, REVERSED).upper()


def names_range(kind: str, start: int, count: int) -> tuple[str, ...]:
    """``count`` consecutive names of ``kind`` (node, tag, value or key) from ``start``."""
    table = {"node": NODE_NAMES, "tag": TAG_NAMES, "value": VALUE_NAMES, "key": KEY_NAMES}[kind]
    if start + count <= TABLE_SIZE:
        return table[start:start + count]
    one = {"node": node_name, "tag": tag_name, "value": value_name, "key": key_name}[kind]
    return tuple(one(i) for i in range(start, start + count))


# One word per letter, as in the released samples (the first word of each
# paragraph walks through this list, and XML element texts are taken from it).
VOCABULARY = [
    "apple", "banana", "cafe", "dentist", "essence", "far", "groot", "halo",
    "idiot", "jargon", "kangaroo", "lamb", "monkey", "nob", "oops", "perish",
    "qualify", "ravish", "salvage", "transformer", "unique", "vigor", "wake",
    "X-ray", "yogurt", "zen",
]

IMAGE_EXTENSIONS = ["png", "jpg", "jpeg", "gif"]


def ordinal(n: int) -> str:
    """English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st."""
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
