"""Every size limit on text that a person or a file hands us, in one place.

Untrusted text (an upload, a rewrite, a released file, a pasted mapping, a name typed in a
form) is checked against these numbers before anything parses, stores or expands it. A
limit that is exceeded is a :class:`LimitError` whose message names the limit, the value
found, where (line and column when there is one) and how to raise it.

Each number can be raised deliberately with an environment variable
``STRUCTEXT_LIMIT_<NAME>`` (for example ``STRUCTEXT_LIMIT_MAX_DEPTH=400``); the page
docs/reference/limits.md lists them.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from typing import Iterator

from structext_core import settings


class ReadError(ValueError):
    """A reference that cannot be read the way its task needs (a format's parse error)."""


class LimitError(ValueError):
    """Untrusted text exceeds one of the limits below; the message says which and where."""

    def __init__(self, message: str, *, limit: str = "", value: int | None = None,
                 line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.limit = limit
        self.value = value
        self.line = line
        self.column = column


_env_int = settings.limit


# ---------------------------------------------------------------- stored text fields
#: Names of studies, campaigns, suites, scenarios (characters).
MAX_NAME_CHARS = _env_int("MAX_NAME_CHARS", 200)
#: A study's written rule, a review comment, a flag reason or resolution, an exception reason.
MAX_NOTE_CHARS = _env_int("MAX_NOTE_CHARS", 10_000)
#: One draft or submitted rewrite text (reference, question or answer), one human answer.
MAX_DRAFT_CHARS = _env_int("MAX_DRAFT_CHARS", 1_000_000)


def check_length(field: str, text: str, limit_name: str) -> str:
    """Return ``text`` when it is at most the stored-field limit ``limit_name`` (such as
    ``"MAX_NOTE_CHARS"``, read when called) characters long; else raise :class:`LimitError`
    naming the field, its length, the limit and how to raise it."""
    limit = globals()[limit_name]
    if len(text) > limit:
        raise LimitError(f"The {field} is {len(text):,} characters long; the limit is {limit:,} characters "
                         f"(STRUCTEXT_LIMIT_{limit_name} raises it).", limit=limit_name, value=len(text))
    return text


def check_name(field: str, text: str, limit_name: str = "MAX_NAME_CHARS") -> str:
    """:func:`check_length`, and no invisible character (control, format, surrogate, private or
    unassigned: a NUL in a study's name, say): a name is shown in lists and files and must read
    as what it is. Raises :class:`LimitError` naming the character and its place."""
    check_length(field, text, limit_name)
    for place, char in enumerate(text, start=1):
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            label = unicodedata.name(char, "a control character" if unicodedata.category(char) == "Cc" else "")
            raise LimitError(f"The {field} holds the invisible character U+{ord(char):04X}"
                             f"{f' ({label})' if label else ''} at character {place}; a name is plain text.",
                             limit="characters", value=ord(char))
    return text


# ---------------------------------------------------------------- parsing untrusted text
# Every reader of a reference, a rewrite, a released file, a sample or a results file checks
# these before any parser sees the text (PyYAML's C composer and Python's recursion cannot be
# trusted with a hostile nesting: a segfault cannot be caught). The largest legitimate figures,
# Test-Hard (seed 0): a reference of 157,179 characters, lines of 209, JSON nested 8 deep
# with 1,640 objects and lists, 820 XML elements, 819 tree edges, CSV cells of 10 characters,
# no YAML alias; a sample line of 409,000 characters; released questions of 173 characters.
#: One reference or rewrite text (characters).
MAX_INPUT_CHARS = _env_int("MAX_INPUT_CHARS", 2_000_000)
#: One line of a reference or rewrite (characters); keeps per-line pattern matching cheap.
MAX_LINE_CHARS = _env_int("MAX_LINE_CHARS", 20_000)
#: Nesting of objects and lists (JSON, YAML) or elements (XML), in any JSON line read too.
MAX_DEPTH = _env_int("MAX_DEPTH", 100)
#: Objects and lists (JSON), mappings and sequences with aliases expanded (YAML),
#: elements (XML), edges (tree) of one document.
MAX_NODES = _env_int("MAX_NODES", 50_000)
#: YAML aliases (``*name``) in one document; our documents have none.
MAX_YAML_ALIASES = _env_int("MAX_YAML_ALIASES", 100)
#: One CSV cell (the csv module itself stops at 131,072) or one JSON string of a reference.
MAX_FIELD_CHARS = _env_int("MAX_FIELD_CHARS", 100_000)
#: One question (ours or a released one with its requirement folded in).
MAX_QUESTION_CHARS = _env_int("MAX_QUESTION_CHARS", 2_000)
#: One line of a .jsonl file (a sample, a result) or one released .json file (characters).
MAX_RECORD_CHARS = _env_int("MAX_RECORD_CHARS", 8_000_000)



class ParseLimitError(LimitError, ReadError):
    """Untrusted text beyond a parsing limit. A :class:`LimitError` (``limit``, ``value``,
    ``line``, ``column``) that every caller of the format readers also catches as ``ReadError``."""


def position(text: str, index: int) -> tuple[int, int]:
    """1-based (line, column) of character ``index`` of ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def refuse(limit_name: str, value: int, what: str, line: int | None = None,
           column: int | None = None) -> None:
    """Raise :class:`ParseLimitError`: where, what was found, the limit and how to raise it."""
    limit = globals()[limit_name]
    where = ""
    if line is not None:
        where = f"line {line}, column {column}: " if column is not None else f"line {line}: "
    raise ParseLimitError(f"{where}{what}; the limit is {limit:,} (STRUCTEXT_LIMIT_{limit_name} raises it)",
                          limit=limit_name, value=value, line=line, column=column)


# C0 control characters other than tab, line feed and carriage return, and lone surrogates
# (half of a UTF-16 pair: not a character, and no UTF-8 encoder takes it).
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def check_characters(text: str, what: str = "the text") -> None:
    """Refuse NUL and other control characters and lone surrogates, saying where."""
    bad = _NOT_TEXT.search(text)
    if bad is None:
        return
    char = bad.group()
    line, column = position(text, bad.start())
    if "\ud800" <= char <= "\udfff":
        problem = f"{what} holds a lone surrogate U+{ord(char):04X} (half of a UTF-16 pair, not a character)"
    else:
        problem = f"{what} holds the control character U+{ord(char):04X}; it is not plain text"
    raise ParseLimitError(f"line {line}, column {column}: {problem}", limit="characters", value=ord(char),
                          line=line, column=column)


def check_text(text: object, what: str = "the text") -> str:
    """The checks every format shares: a string, at most MAX_INPUT_CHARS characters, lines of
    at most MAX_LINE_CHARS, no control characters or lone surrogates."""
    if not isinstance(text, str):
        raise ParseLimitError(f"{what} is not text ({type(text).__name__})", limit="type")
    if len(text) > MAX_INPUT_CHARS:
        refuse("MAX_INPUT_CHARS", len(text), f"{what} has {len(text):,} characters")
    if len(text) > MAX_LINE_CHARS:
        lines = text.split("\n")
        longest = max(map(len, lines))
        if longest > MAX_LINE_CHARS:
            n = next(i for i, line in enumerate(lines) if len(line) == longest)
            refuse("MAX_LINE_CHARS", longest, f"a line of {longest:,} characters", n + 1)
    check_characters(text, what)
    return text


def check_question(question: object) -> str:
    """A question is short: refuse one beyond MAX_QUESTION_CHARS (its patterns are matched)."""
    if not isinstance(question, str):
        raise ParseLimitError(f"the question is not text ({type(question).__name__})", limit="type")
    if len(question) > MAX_QUESTION_CHARS:
        refuse("MAX_QUESTION_CHARS", len(question), f"the question has {len(question):,} characters")
    return question


# ---- JSON: a bracket stack over string tokens, no recursion -------------------------
# A string runs to its closing quote or, unterminated, to the end (so every match
# consumes text and the scan stays linear); brackets outside strings are counted.
_JSON_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|[\[\]{}]', re.S)
_CLOSER = {"]": "[", "}": "{"}


def scan_json(text: str, *, max_depth: int | None = None, max_nodes: int | None = None,
              max_string: int | None = None) -> None:
    """Refuse JSON nested deeper than ``max_depth`` (MAX_DEPTH), with more than ``max_nodes``
    (MAX_NODES) objects and lists, or with a string longer than ``max_string`` (no check when
    None); line and column of the culprit. The scan stops where a parser would stop (a
    closing bracket that closes nothing open), so a truncated document is not over-counted."""
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    max_nodes = MAX_NODES if max_nodes is None else max_nodes
    if max_string is not None and MAX_LINE_CHARS <= max_string:
        max_string = None  # a JSON string cannot run over a line, and lines are shorter
    openers = text.count("{") + text.count("[")
    if openers <= max_depth and openers <= max_nodes and max_string is None:
        return
    if max_string is None and _bracket_problem(_JSON_STRING.sub("", text), max_depth, max_nodes) is None:
        return  # the brackets outside strings, counted at C speed, are within the limits
    stack: list[str] = []
    nodes = 0
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token[0] == '"':
            if max_string is not None and len(token) - 2 > max_string:
                refuse("MAX_FIELD_CHARS", len(token) - 2, f"a string of {len(token) - 2:,} characters",
                       *position(text, m.start()))
        elif token in "[{":
            stack.append(token)
            nodes += 1
            if len(stack) > max_depth:
                refuse("MAX_DEPTH", len(stack), f"objects and lists nest more than {max_depth:,} deep",
                       *position(text, m.start()))
            if nodes > max_nodes:
                refuse("MAX_NODES", nodes, f"more than {max_nodes:,} objects and lists",
                       *position(text, m.start()))
        elif not stack or stack.pop() != _CLOSER[token]:
            return  # the parser stops here with a syntax error


_JSON_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def _bracket_problem(skeleton: str, max_depth: int, max_nodes: int) -> str | None:
    """Which limit the brackets of ``skeleton`` (JSON with its strings taken out) pass, if any."""
    stack: list[str] = []
    nodes = 0
    for token in _BRACKET.findall(skeleton):
        if token in "[{":
            stack.append(token)
            nodes += 1
            if len(stack) > max_depth:
                return "MAX_DEPTH"
            if nodes > max_nodes:
                return "MAX_NODES"
        elif not stack or stack.pop() != _CLOSER[token]:
            return None
    return None


def loads_json(text: str, what: str = "the line", *, max_depth: int | None = None, **kwargs) -> object:
    """``json.loads`` after :func:`scan_json` (depth only) and with lone surrogates refused:
    for JSON lines of files (samples, results, released files). Raises ``json.JSONDecodeError``
    for bad JSON and :class:`ParseLimitError` for a limit."""
    scan_json(text, max_depth=max_depth, max_nodes=10**18)
    raw = _SURROGATE.search(text)
    if raw is not None:
        line, column = position(text, raw.start())
        raise ParseLimitError(f"{what} holds a lone surrogate U+{ord(raw.group()):04X} at line {line}, column "
                              f"{column} (half of a UTF-16 pair, not a character)", limit="characters",
                              value=ord(raw.group()), line=line, column=column)
    value = json.loads(text, **kwargs)
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        _check_strings(value, what)  # an escaped pair decodes to one character; a lone half stays
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_strings(value: object, what: str) -> None:
    """Every string in a decoded JSON value is encodable text (no lone surrogate); iterative."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            bad = _NOT_TEXT.search(item)
            if bad and "\ud800" <= bad.group() <= "\udfff":
                raise ParseLimitError(f"{what} holds a lone surrogate \\u{ord(bad.group()):04x} (half of a "
                                      "UTF-16 pair, not a character)", limit="characters", value=ord(bad.group()))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def read_record_lines(handle, limit: int | None = None) -> Iterator[tuple[int, str | None]]:
    """(line number, line) for every line of a text file, never holding more than ``limit``
    + 1 characters of one line (``limit``: MAX_RECORD_CHARS unless given): a longer line
    comes as (number, None), and is skipped to its end only if the caller reads on.
    Decoding errors (UnicodeDecodeError) pass through."""
    limit = MAX_RECORD_CHARS if limit is None else limit
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith("\n"):
            yield number, None
            while True:  # skip the rest of the over-long line
                rest = handle.readline(1 << 20)
                if not rest or rest.endswith("\n"):
                    break
            continue
        yield number, line


def record_too_long() -> str:
    """What to say of a line (or a released file) beyond MAX_RECORD_CHARS."""
    return f"longer than {MAX_RECORD_CHARS:,} characters (STRUCTEXT_LIMIT_MAX_RECORD_CHARS raises it)"


# ---- YAML: libyaml's event stream (iterative), stopped at the first limit -------------

def scan_yaml(text: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH, with more than MAX_YAML_ALIASES aliases, or
    whose mappings and sequences, aliases expanded, pass MAX_NODES (the alias bomb). Reads
    libyaml's event stream, which keeps explicit stacks (no recursion), and stops at the first
    limit, before its cost can grow. A syntax error is left for the real parser to report."""
    import yaml

    loader = yaml.CBaseLoader if hasattr(yaml, "CBaseLoader") else yaml.BaseLoader
    start_events = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    end_events = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    sizes: dict[str, int] = {}  # anchor -> mappings and sequences it stands for
    frames: list[list] = []  # per open collection: [anchor, size]
    expanded = aliases = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            kind = type(event)
            if kind in start_events:
                expanded += 1
                frames.append([event.anchor, 1])
                if len(frames) > MAX_DEPTH:
                    _refuse_at("MAX_DEPTH", len(frames), f"mappings and sequences nest more than {MAX_DEPTH:,} "
                                                         "deep", event)
            elif kind in end_events:
                anchor, size = frames.pop()
                if anchor is not None:
                    sizes[anchor] = size
                if frames:
                    frames[-1][1] += size
            elif kind is yaml.AliasEvent:
                aliases += 1
                if aliases > MAX_YAML_ALIASES:
                    _refuse_at("MAX_YAML_ALIASES", aliases, f"more than {MAX_YAML_ALIASES:,} aliases", event)
                size = sizes.get(event.anchor, 0)
                expanded += size
                if frames:
                    frames[-1][1] += size
            elif kind is yaml.ScalarEvent and event.anchor is not None:
                sizes[event.anchor] = 0
            if expanded > MAX_NODES:
                _refuse_at("MAX_NODES", expanded, f"more than {MAX_NODES:,} mappings and sequences with "
                                                  "aliases expanded", event)
    except yaml.YAMLError:
        return


def _refuse_at(limit_name: str, value: int, what: str, event) -> None:
    mark = getattr(event, "start_mark", None)
    if mark is None:
        refuse(limit_name, value, what)
    refuse(limit_name, value, what, mark.line + 1, mark.column + 1)


# ---- XML: a tag stack over a linear tokenizer -----------------------------------------
# Comments, CDATA, processing instructions and declarations are skipped whole (an
# unterminated one runs to the end); a tag's attributes cannot hold '<'.
XML_TOKEN = re.compile(
    r"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)"
    r"|<!(?P<decl>[A-Za-z]*)"
    r"|<(?P<close>/?)(?P<name>[^\s/<>!?\"'=]+)(?:\"[^\"<]*+\"|'[^'<]*+'|[^\"'<>/]++|/(?!>))*+(?P<empty>/?)>",
    re.S)


def scan_xml(text: str) -> None:
    """Refuse XML that declares entities (a reference is data: entities are never read),
    nests elements deeper than MAX_DEPTH or holds more than MAX_NODES elements. Stops where
    the parser would (an end tag that closes nothing open)."""
    stack: list[str] = []
    elements = 0
    for m in XML_TOKEN.finditer(text):
        decl, name = m.group("decl"), m.group("name")
        if decl is not None:
            if decl == "ENTITY":
                refuse_entity(text, m.start())
            continue
        if name is None:
            continue
        if m.group("close"):
            if not stack or stack.pop() != name:
                return
            continue
        elements += 1
        if elements > MAX_NODES:
            refuse("MAX_NODES", elements, f"more than {MAX_NODES:,} elements", *position(text, m.start()))
        if not m.group("empty"):
            stack.append(name)
            if len(stack) > MAX_DEPTH:
                refuse("MAX_DEPTH", len(stack), f"elements nest more than {MAX_DEPTH:,} deep",
                       *position(text, m.start()))


def refuse_entity(text: str, index: int) -> None:
    line, column = position(text, index)
    raise ParseLimitError(f"line {line}, column {column}: the document declares an entity (<!ENTITY); "
                          "entity declarations are not read: a reference is data", limit="entities",
                          line=line, column=column)


# ---- CSV: quoted cells may run over lines ------------------------------------------------

def scan_csv(text: str) -> None:
    """Refuse a CSV cell longer than MAX_FIELD_CHARS (a quoted cell may run over several lines),
    saying on which line it starts."""
    limit = MAX_FIELD_CHARS
    if '"' not in text and MAX_LINE_CHARS <= limit:
        return  # every cell lies within one line, and lines are shorter than the limit
    open_at = 0
    length = 0
    for number, line in enumerate(text.split("\n"), 1):
        quoted = line.count('"') % 2 == 1
        if open_at:
            length += len(line) + 1
        elif quoted:
            open_at, length = number, len(line)
        else:
            for cell in line.split(","):
                if len(cell) > limit:
                    refuse("MAX_FIELD_CHARS", len(cell), f"a cell of {len(cell):,} characters", number)
            continue
        if length > limit:
            refuse("MAX_FIELD_CHARS", length, f"a quoted cell of more than {limit:,} characters starts here",
                   open_at)
        if open_at and quoted and number != open_at:
            open_at, length = 0, 0


def scan_lines(text: str, noun: str) -> None:
    """Refuse more than MAX_NODES non-blank lines (tree edges, CSV rows)."""
    lines = text.count("\n") + 1
    if lines > MAX_NODES:
        blank = sum(1 for line in text.split("\n") if not line.strip())
        if lines - blank > MAX_NODES:
            refuse("MAX_NODES", lines - blank, f"more than {MAX_NODES:,} {noun}")


_SCANNERS = {"json": lambda t: scan_json(t, max_string=MAX_FIELD_CHARS), "yaml": scan_yaml, "xml": scan_xml,
             "csv": lambda t: (scan_csv(t), scan_lines(t, "rows")), "tree": lambda t: scan_lines(t, "edges")}


def check_reference(language: str, text: object, what: str = "the text") -> str:
    """Every limit of ``language`` on ``text`` before any parser sees it (the format modules'
    readers, the previews, the live checks and the audit all come through here). Raises
    :class:`ParseLimitError` naming the limit and where; returns ``text``."""
    check_text(text, what)
    _scan_cached(language, text, _current_limits())
    return text


def _current_limits() -> tuple:
    return (MAX_INPUT_CHARS, MAX_LINE_CHARS, MAX_DEPTH, MAX_NODES, MAX_YAML_ALIASES, MAX_FIELD_CHARS)


@functools.lru_cache(maxsize=8)
def _scan_cached(language: str, text: str, _limits: tuple) -> None:
    # A solver reads one reference several times; a text that passed is not scanned again
    # (the limits are part of the key, so a raised limit is honoured at once).
    scanner = _SCANNERS.get(language)
    if scanner is not None:
        scanner(text)
