"""The abstract tokens of a sample: what a rewrite may rename, with the roles each plays.

Where the data of a reference is, and which words belong to the syntax, is each format's
knowledge (``rewrite_tokens`` and ``RESERVED_WORDS`` in :mod:`structext_core.structext_eval.formats`);
the question's parameters are read here, the same for every format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from structext_core.structext_eval.formats import LANGUAGES, get_module, tokens_in

#: Words that belong to a format's syntax (or to an answer's frame), never to its data.
RESERVED: dict[str, frozenset[str]] = {language: get_module(language).RESERVED_WORDS for language in LANGUAGES}
#: Question parameters that name abstract values (``field`` names a CSV column, which stays).
MAPPABLE_PARAMS = ("node", "id", "value", "tag", "primeKey", "location", "height", "threshold", "gender")
NUMERIC_PARAMS = ("height", "threshold")


@dataclass
class Token:
    """An abstract token of a sample: its text, its roles, how often the reference has it."""

    text: str
    kinds: list[str] = field(default_factory=list)
    count: int = 0

    def add(self, kind: str) -> None:
        if kind not in self.kinds:
            self.kinds.append(kind)


def _occurrences(language: str, reference: str) -> list[tuple[str, str]]:
    """(token, role) for every abstract token of ``reference``, in document order: what the
    format's ``rewrite_tokens`` finds, less the format's reserved words."""
    module = get_module(language)
    return [(t, role) for t, role in module.rewrite_tokens(reference) if t not in module.RESERVED_WORDS]


def question_params(sample: dict) -> dict[str, str]:
    """The question's parameters that name abstract values, as strings."""
    params = sample.get("params") or {}
    return {k: _param_text(params[k]) for k in MAPPABLE_PARAMS if k in params and params[k] is not None}


def _param_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def extract_tokens(sample: dict) -> list[Token]:
    """Every abstract token of ``sample`` (reference and question), in first-seen order."""
    tokens: dict[str, Token] = {}
    for text, role in _occurrences(sample["language"], sample["reference"]):
        token = tokens.setdefault(text, Token(text))
        token.add(role)
        token.count += 1
    for name, value in question_params(sample).items():
        for text in tokens_in(value):
            token = tokens.setdefault(text, Token(text))
            token.add("number" if name in NUMERIC_PARAMS else "question")
    return list(tokens.values())


def mechanical_mapping(sample: dict) -> dict[str, str]:
    """A faithful mapping of every token of ``sample``, made without a scenario: names
    become ``Real<i>x``, file names ``photo_<i>.jpg``, and numbers double (so every
    comparison keeps its sense). What the checks, the export and the benchmarks use
    to exercise a complete rewrite end to end.
    """
    mapping = {}
    for i, token in enumerate(extract_tokens(sample)):
        if "number" in token.kinds:
            mapping[token.text] = str(int(float(token.text)) * 2)
        elif "file" in token.kinds:
            mapping[token.text] = f"photo_{i}.jpg"
        else:
            mapping[token.text] = f"Real{i}x"
    return mapping
