"""The rules a short answer may be scored by: Inspect AI's built-in scorers, exactly as the pinned
version (inspect_ai 0.3.285) computes CORRECT, in plain Python (Inspect is an optional extra and slow
to import), beside the workbench's own ``normalised`` and ``verbatim``.

A rule is written as a string a set declares (``labset import --rule``, the study form, an item's
``metadata.answer_rule``) and a study key carries. The syntax: a name, then optionally its
arguments in parentheses, ``key=value`` separated by commas (spaces around them ignored; a truth
value is ``true`` or ``false``):

- ``normalised``: the workbench's own rule (NFKC, case ignored, punctuation and the articles a, an,
  the removed, white space collapsed; :func:`structext_core.labset.scoring.normalise`).
- ``verbatim``: white space at the ends aside, character for character (the rule that was called
  ``exact`` before the Inspect rules came; a study key ``"exact: ..."`` written then still scores so).
- ``exact``: Inspect's ``exact()``: both sides normalised SQuAD-style and compared.
- ``match``, ``match(location=begin|end|any|exact, ignore_case=true|false, numeric=true|false)``:
  Inspect's ``match()``, defaults ``location=end``, ``ignore_case=true``, ``numeric=false``; the
  location may be given alone, ``match(any)``.
- ``includes``, ``includes(ignore_case=false)``: Inspect's ``includes()``, default ``ignore_case=true``.
- ``answer(letter)``, ``answer(word)``, ``answer(line)`` (or ``answer(pattern=word)``): Inspect's
  ``answer()``; the kind is required.
- ``pattern(REGEX)``, ``pattern(REGEX, ignore_case=false, match_all=true)``: Inspect's
  ``pattern()``, defaults ``ignore_case=true``, ``match_all=false``. ``REGEX`` is everything between
  ``pattern(`` and the rule's last ``)``, written as is (no quoting, no escaping), once the options at
  its end are taken off: ``, ignore_case=...`` and ``, match_all=...`` are read from the right, each at
  most once; a regex that itself ends so is written with a group, e.g. ``(?:, match_all=true)``. At most
  500 characters; it is matched against the reply's first 20,000 characters.

Each rule has one canonical form (:func:`canonical_rule`), every option spelt out, e.g.
``match(location=end, ignore_case=true, numeric=false)`` and ``exact()``: items carry it and study keys
are written with it, so a stored key keeps its meaning whatever the defaults, and ``exact()`` (Inspect's)
is told from a key's bare ``exact`` (written before, :data:`LEGACY_KEY_RULES`).

Where this differs from Inspect on purpose: ``pattern`` reads at most the first 20,000 characters of a
reply, and ``answer`` the last 20,000 (its answer is the last ``ANSWER:``). Nothing else.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass

from structext_core.labset._inspect_unicode import unicode_number_to_float

#: The rules offered by name (``labset import --rule``'s list, the study form's choices); any rule the
#: syntax above writes is accepted beside them.
RULES = ("normalised", "verbatim", "exact", "match", "match(location=begin)", "match(location=any)",
         "match(location=exact)", "match(numeric=true)", "match(location=any, numeric=true)", "includes",
         "includes(ignore_case=false)", "answer(letter)", "answer(word)", "answer(line)")
#: A study key's rule written before the Inspect rules came, and the rule it still means.
LEGACY_KEY_RULES = {"exact": "verbatim"}
#: How a study key separates a short answer's accepted answers: ``"<rule>: t1 | t2"``.
KEY_SEPARATOR = " | "
#: Bounds on a ``pattern`` rule's work: the regex's length, and how much of a reply it reads.
PATTERN_CHARS = 500
REPLY_CHARS = 20_000

NAMES = ("normalised", "verbatim", "exact", "match", "includes", "answer", "pattern")
LOCATIONS = ("begin", "end", "any", "exact")
ANSWER_KINDS = ("letter", "word", "line")
_OPTIONS = {  # name: {option: (allowed values, default)}; a truth value's allowed values are bools
    "match": {"location": (LOCATIONS, "end"), "ignore_case": (None, True), "numeric": (None, False)},
    "includes": {"ignore_case": (None, True)},
    "answer": {"pattern": (ANSWER_KINDS, None)},
    "pattern": {"ignore_case": (None, True), "match_all": (None, False)},
}
_SYNTAX = ("a rule is normalised, verbatim, exact, match(location=..., ignore_case=..., numeric=...), "
           "includes(ignore_case=...), answer(letter|word|line) or pattern(REGEX, ignore_case=..., match_all=...)")


@dataclass(frozen=True)
class Rule:
    """A parsed rule: its name and its options, every one given (``regex`` for ``pattern``)."""

    name: str
    options: tuple[tuple[str, object], ...] = ()
    regex: str | None = None

    def option(self, key: str):
        return dict(self.options)[key]

    @property
    def canonical(self) -> str:
        """The rule in its one written form, every option spelt out."""
        if self.name in ("normalised", "verbatim"):
            return self.name
        if self.name == "exact":
            return "exact()"
        if self.name == "answer":
            return f"answer({self.option('pattern')})"
        parts = [self.regex] if self.name == "pattern" else []
        parts += [f"{k}={_written(v)}" for k, v in self.options]
        return f"{self.name}({', '.join(parts)})"


def _written(value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _truth(rule: str, key: str, value: str) -> bool:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"answer rule {rule!r}: {key} must be true or false, got {value!r}")


def _option(rule: str, name: str, key: str, value: str, given: dict) -> None:
    allowed = _OPTIONS[name]
    if key not in allowed:
        raise ValueError(f"answer rule {rule!r}: {name} takes {', '.join(allowed)}, not {key!r}")
    if key in given:
        raise ValueError(f"answer rule {rule!r}: {key} given twice")
    choices, _ = allowed[key]
    if choices is None:
        given[key] = _truth(rule, key, value)
    elif value in choices:
        given[key] = value
    else:
        raise ValueError(f"answer rule {rule!r}: {key} must be one of {', '.join(choices)}, got {value!r}")


_TAIL_OPTION = re.compile(r",\s*(ignore_case|match_all)\s*=\s*(\w+)\s*$")


def parse_rule(rule, _check: bool = True) -> Rule:
    """The rule ``rule`` is (any form the syntax allows); a ``ValueError`` naming what is wrong otherwise."""
    if not isinstance(rule, str):
        raise ValueError(f"an answer rule is a text, got {type(rule).__name__}")
    text = rule.strip()
    head, paren, rest = text.partition("(")
    name = head.strip()
    if name not in NAMES:
        shown = rule if len(rule) <= 60 else rule[:60] + "..."
        raise ValueError(f"no answer rule {shown!r}; {_SYNTAX}")
    if paren and not rest.endswith(")"):
        raise ValueError(f"answer rule {rule!r}: its arguments must end with ')'")
    inner = rest[:-1] if paren else ""
    if name == "pattern":
        return _parse_pattern(rule, paren, inner, _check)
    if name in ("normalised", "verbatim", "exact"):
        if inner.strip():
            raise ValueError(f"answer rule {rule!r}: {name} takes no argument")
        return Rule(name)
    given: dict = {}
    args = [a.strip() for a in inner.split(",")] if inner.strip() else []
    for n, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if not eq:  # positional: match's location, answer's kind (as Inspect's first parameter)
            if n or name == "includes":
                raise ValueError(f"answer rule {rule!r}: write {name}'s options as key=value, got {arg!r}")
            key, value = next(iter(_OPTIONS[name])), arg
        _option(rule, name, key.strip(), value.strip(), given)
    if name == "answer" and "pattern" not in given:
        raise ValueError(f"answer rule {rule!r}: answer needs its kind: answer(letter), answer(word) or answer(line)")
    options = tuple((key, given.get(key, default)) for key, (_, default) in _OPTIONS[name].items())
    return Rule(name, options)


def _parse_pattern(rule: str, paren: str, inner: str, check: bool) -> Rule:
    given: dict = {}
    while (tail := _TAIL_OPTION.search(inner)) and tail.group(1) not in given:
        _option(rule, "pattern", tail.group(1), tail.group(2), given)
        inner = inner[:tail.start()]
    regex = inner.strip()
    if not paren or not regex:
        raise ValueError(f"answer rule {rule!r}: pattern needs its regular expression, e.g. pattern(ANSWER: (\\w+))")
    if len(regex) > PATTERN_CHARS:
        raise ValueError(f"answer rule pattern(...): its regular expression has {len(regex)} characters, "
                         f"more than {PATTERN_CHARS}")
    try:
        re.compile(regex)
    except re.error as error:
        raise ValueError(f"answer rule {rule!r}: not a regular expression: {error}") from None
    except (RecursionError, OverflowError):
        raise ValueError(f"answer rule {rule!r}: too complex a regular expression") from None
    options = tuple((key, given.get(key, default)) for key, (_, default) in _OPTIONS["pattern"].items())
    parsed = Rule("pattern", options, regex)
    if check and parse_rule(parsed.canonical, _check=False) != parsed:
        raise ValueError(f"answer rule {rule!r}: its regular expression cannot be written back unambiguously")
    return parsed


def canonical_rule(rule) -> str:
    """``rule`` in its one written form (:attr:`Rule.canonical`); a ``ValueError`` naming what is wrong."""
    return parse_rule(rule).canonical


def split_key(key: str) -> tuple[Rule, list[str]] | None:
    """A short answer's study key ``"<rule>: t1 | t2"`` as (its rule, its accepted answers), or None
    (a letter's key). The rule ends at the first ``": "`` before which a rule is written (a regex may
    hold ``": "``); a bare ``exact`` there is the rule of :data:`LEGACY_KEY_RULES`."""
    start = 0
    while (at := key.find(": ", start)) >= 0:
        written = key[:at]
        try:
            rule = parse_rule(LEGACY_KEY_RULES.get(written, written))
        except ValueError:
            start = at + 1
            continue
        return rule, key[at + 2:].split(KEY_SEPARATOR)
    return None


def key_rule(rule: Rule) -> str:
    """How ``rule`` is written in a study key; a ``ValueError`` when the key could not be read back."""
    written = rule.canonical
    back = split_key(f"{written}: x")
    if back is None or back[0] != rule:
        raise ValueError(f"answer rule {written!r} cannot be carried by a study key (its regular expression "
                         "holds an earlier ': ' after a complete rule)")
    return written


# ---- Inspect's text helpers (inspect_ai/_util/text.py) -------------------------------------------


def strip_punctuation(s: str) -> str:
    return s.strip(string.whitespace + string.punctuation)


def strip_numeric_punctuation(s: str) -> str:
    s = re.sub(r"\\([$,£,€*_])", r"\1", s)
    stripped = re.sub(r"[$,£,€,*,_]", "", s)
    return re.sub(r"\.(?=\s|$|\D)", "", stripped)


def is_finite_number(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False


# ---- match() and includes() (inspect_ai/scorer/_common.py, _match.py) ----------------------------

_NUMERIC_PUNCTUATION_TRIM = "!?:;()[]{}'\"`"


def _parse_number(s: str, *, trim_punctuation: bool = True) -> float | None:
    s_cleaned = s.strip(_NUMERIC_PUNCTUATION_TRIM) if trim_punctuation else s
    for parse in (float, unicode_number_to_float):
        try:
            num = parse(s_cleaned)
        except ValueError:
            continue
        if math.isfinite(num):
            return num
    return None


def _is_number(s: str) -> bool:
    return _parse_number(s) is not None


def normalize_number(number: str, precision: int = 5, *, trim_punctuation: bool = True) -> str:
    num = _parse_number(number, trim_punctuation=trim_punctuation)
    return number if num is None else format(num, f".{precision}g")


def _first_number(words: list[str]) -> str:
    number = next((word for word in words if _is_number(word)), None)
    return normalize_number(number) if number is not None else ""


def match_str(value: str, target: str, location: str = "end", ignore_case: bool = True,
              numeric: bool = False) -> bool:
    """Whether ``value`` matches ``target`` as Inspect's ``match_str`` decides (punctuation ignored)."""
    v, t = value.strip(), target.strip()
    if ignore_case:
        v, t = v.casefold(), t.casefold()
    if numeric:
        t = strip_numeric_punctuation(t)
    if numeric and _is_number(t):
        v = strip_numeric_punctuation(v)
        t = normalize_number(t)
        words = re.split(r"\s+", v)
        if location == "begin":
            v = _first_number(words)
        elif location == "end":
            v = _first_number(words[::-1])
        elif location == "exact":
            v = normalize_number(v, trim_punctuation=False)
        else:
            return any(normalize_number(word) == t for word in words if _is_number(word))
        return v == t
    v, t = strip_punctuation(v), strip_punctuation(t)
    if location == "begin":
        return v.startswith(t)
    if location == "end":
        return v.endswith(t)
    if location == "exact":
        return v == t
    return t in v


def includes_str(value: str, target: str, ignore_case: bool = True) -> bool:
    if ignore_case:
        value, target = value.casefold(), target.casefold()
    return target in value


# ---- exact() (inspect_ai/scorer/_classification.py) ----------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def _remove_punc(text: str) -> str:
    if is_finite_number(text):
        return text
    stripped = strip_punctuation(text)
    if is_finite_number(stripped):
        return stripped
    return "".join(ch for ch in text if ch not in string.punctuation)


def _normalize_token(token: str) -> str:
    token = _remove_punc(token.casefold())
    if is_finite_number(token):
        token = str(float(token))
    token = _ARTICLES.sub(" ", token)
    return " ".join(token.split())


def exact_normalise(text: str) -> str:
    """``text`` as Inspect's ``exact()`` compares it (its ``_normalize``, no stop words)."""
    tokens = [_normalize_token(token) for token in re.split(" |-", text)]
    return " ".join(token for token in tokens if token.strip()).strip()


def exact_right(reply: str, targets) -> bool:
    said = exact_normalise(reply)
    return any(norm == said for norm in map(exact_normalise, targets) if norm)


# ---- pattern() and answer() (inspect_ai/scorer/_pattern.py, _answer.py, _util/pattern.py) --------

ANSWER_PATTERNS = {
    "letter": r"(?is)ANSWER\s*:\s*([A-Za-z])(?:[^\w]|\n|$)(?!.*ANSWER\s*:)",
    "word": r"(?is)ANSWER\s*:\s*(\S+?)(?=[.,;:!?]?\s*(?:\n|$))(?!.*ANSWER\s*:)",
    "line": r"(?i)ANSWER\s*:\s*([^\n]+)\s*\Z",
}


def pattern_right(regex: str, reply: str, targets, ignore_case: bool = True, match_all: bool = False) -> bool:
    """Whether Inspect's ``pattern(regex, ignore_case, match_all)`` scores ``reply`` CORRECT."""
    found = re.search(regex, reply, re.IGNORECASE if ignore_case else 0)
    if not found:
        return False
    groups = found.groups() or (found.group(0),)
    accepted = [t.lower() for t in targets] if ignore_case else list(targets)
    said = [g.lower() if ignore_case else g for g in groups if isinstance(g, str)]
    if match_all:  # Inspect answers with all the targets joined: right only when that is not empty
        return bool(said) and all(s in accepted for s in said) and bool("".join(targets))
    first = next((s for s in said if s in accepted), None)  # Inspect takes the first group accepted,
    return bool(first)  # and an empty one is no answer (falsy)


# ---- a rule applied --------------------------------------------------------------------------------


def inspect_right(rule: Rule, reply: str, targets) -> bool:
    """Whether ``reply`` is right against ``targets`` by the Inspect rule ``rule`` (as Inspect's
    scorer scoring ``Target(targets)`` gives CORRECT, but for the bounds in the module's note)."""
    targets = list(targets)
    name = rule.name
    if name == "exact":
        return exact_right(reply, targets)
    if name == "match":
        location, ignore_case, numeric = (rule.option(k) for k in ("location", "ignore_case", "numeric"))
        return any(match_str(reply, t, location, ignore_case, numeric) for t in targets)
    if name == "includes":
        return any(includes_str(reply, t, rule.option("ignore_case")) for t in targets)
    if name == "answer":
        return pattern_right(ANSWER_PATTERNS[rule.option("pattern")], reply[-REPLY_CHARS:], targets)
    if name == "pattern":
        return pattern_right(rule.regex or "", reply[:REPLY_CHARS], targets, rule.option("ignore_case"),
                             rule.option("match_all"))
    raise ValueError(f"{name!r} is no Inspect rule")


def _yes(value: bool, yes: str, no: str = "") -> str:
    return yes if value else no


def describe_inspect(rule: Rule) -> str:
    """The Inspect rule ``rule`` in one sentence, as the lead is shown it."""
    name = rule.name
    if name == "exact":
        return ("As Inspect AI's exact() scorer: a short answer is right when it equals one of the question's "
                "accepted answers after both are normalised: split at spaces and hyphens, case ignored, "
                "punctuation removed (a number keeps its own), numbers written as numbers, the articles a, "
                "an and the removed, and white space collapsed; an accepted answer with nothing left never "
                "matches.")
    if name == "match":
        location, ignore_case, numeric = (rule.option(k) for k in ("location", "ignore_case", "numeric"))
        where = {"begin": "begins with", "end": "ends with", "any": "contains",
                 "exact": "is"}[location]
        sentence = (f"As Inspect AI's match(location=\"{location}\", ignore_case={ignore_case}, numeric={numeric}) "
                    f"scorer: a short answer is right when, white space and punctuation at both ends stripped"
                    f"{_yes(ignore_case, ' and case ignored')}, it {where} one of the question's accepted answers")
        if numeric:
            which = {"begin": "the first number in it", "end": "the last number in it",
                     "any": "any number in it", "exact": "the whole answer read as a number"}[location]
            sentence += ("; an accepted answer that is a number ($, €, £, thousands commas, * and _ ignored) is "
                         f"compared as a number, to five significant digits, with {which} (60% is not 60)")
        return sentence + "."
    if name == "includes":
        return (f"As Inspect AI's includes(ignore_case={rule.option('ignore_case')}) scorer: a short answer is "
                f"right when one of the question's accepted answers appears anywhere in it"
                f"{_yes(rule.option('ignore_case'), ', case ignored', ', case and all')}.")
    if name == "answer":
        what = {"letter": "the single letter after the reply's last \"ANSWER:\"",
                "word": "the word after the reply's last \"ANSWER:\" (up to the line's end, one final . , ; : ! or "
                        "? aside)",
                "line": "the rest of the line after \"ANSWER:\" on the reply's last line"}[rule.option("pattern")]
        return (f"As Inspect AI's answer(\"{rule.option('pattern')}\") scorer: {what} is read, and the reply is "
                f"right when it is one of the question's accepted answers, case ignored; a reply without it is "
                f"wrong (only its last {REPLY_CHARS:,} characters are read).")
    if name == "pattern":
        ignore_case, match_all = rule.option("ignore_case"), rule.option("match_all")
        return (f"As Inspect AI's pattern({rule.regex!r}, ignore_case={ignore_case}, match_all={match_all}) "
                f"scorer: the first match of that regular expression in the reply (its first {REPLY_CHARS:,} "
                f"characters{_yes(ignore_case, ', case ignored')}) is read, its capture groups or, without any, "
                f"the whole match, and the reply is right when "
                + ("every group that matched is" if match_all else "a group is")
                + f" one of the question's accepted answers{_yes(ignore_case, ', case ignored')}; an empty "
                  "answer, or no match, is wrong.")
    raise ValueError(f"{name!r} is no Inspect rule")
