"""No module outside a benchmark's package names a benchmark: not its name, not its display name,
not its package. The shared layers, the pages and the app reach a benchmark through the protocol
(:mod:`structext_core.protocol`), as they reach a format through its registry.

A benchmark is named in code, not in prose: the source is read as Python tokens
(:mod:`tests.source_names`), and a line names a benchmark when it holds

- an identifier that is the benchmark's name (``aibench``, ``structext_eval``, any case; a function's
  own local variable aside: a word it chose, such as ``numeric = frame.copy()``), or its package's
  folder under ``structext_core/`` (``from structext_core import aibench``);
- a dotted name in its package (``import numeric_bench.member``, ``structext_core.aibench.x``);
- a string whose value is its name or display name (``"aibench"``, ``'The lab's own'``, any case),
  or a value quoted inside a string (SQL's ``'aibench'``), or a part of a value written without
  blanks (``"structext_core.aibench.ui:view"``, ``"results?benchmark=aibench"``).

A word in a comment, a docstring's sentence or a message is not a use ("a numeric answer" names
no benchmark called "Numeric"). A member may live anywhere (a package under ``structext_core/``,
another package, a top-level module); only a package under ``structext_core/`` has a folder
there that the check leaves out.

Any module outside the packages that names one fails, except the schema's history up to m0014
(:data:`HISTORY`), frozen with its counts: a migration that has run is never rewritten.

A second check: a shared module or page reads no benchmark's stratum or item field by name
(:func:`field_reads`); the reads still there are :data:`KNOWN`, to be taken out.
"""
from __future__ import annotations

import re
import tokenize
from pathlib import Path

import pytest

from structext_core import protocol
from tests.source_names import (
    core_folder,
    dotted_names,
    fstring_attributes,
    function_locals,
    member_package,
    pieces,
    string_values,
    tokens,
)

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "structext_core"
#: The folders under structext_core/ that are benchmarks' packages (a member living elsewhere has none).
CORE_FOLDERS = {folder for module in protocol.members().values() if (folder := core_folder(module))}


class Spellings:
    """How one benchmark is named in code: ``words`` as string values (lower case), ``identifiers``
    as names (lower case), ``package`` as a dotted name."""

    def __init__(self, name: str, module) -> None:
        self.name = name
        display = module.DISPLAY_NAME
        self.words = {w.lower() for w in (name, name.replace("-", "_"), name.replace("-", " "), display)}
        self.identifiers = {w.replace("-", "_").lower() for w in (name, display)
                            if w.replace("-", "_").isidentifier()}
        if folder := core_folder(module):
            self.identifiers.add(folder.lower())
        self.package = member_package(module)

    def in_value(self, value: str) -> bool:
        value = value.strip()
        if value.lower() in self.words:
            return True
        parts = pieces(value)
        return (any(p.lower() in self.words | self.identifiers for p in parts)
                or (bool(parts) and re.match(rf"{re.escape(self.package)}(?![\w-])", value) is not None))

    def in_dotted(self, dotted: str) -> bool:
        return dotted == self.package or dotted.startswith(self.package + ".")


def spellings() -> list[Spellings]:
    """Each registered benchmark's spellings (read at each call: a test may install a member)."""
    return [Spellings(name, module) for name, module in protocol.members().items()]


def naming_lines(text: str) -> dict[int, set[str]]:
    """The lines of ``text`` (Python source) that name a benchmark, and which ones they name."""
    toks = tokens(text)
    local = function_locals(text)
    found: dict[int, set[str]] = {}
    every = spellings()
    for token in toks:
        if token.type == tokenize.NAME and token.start not in local:
            for s in every:
                if token.string.lower() in s.identifiers:
                    found.setdefault(token.start[0], set()).add(s.name)
        elif token.type == tokenize.STRING:
            for line, value in string_values(token):
                for s in every:
                    if s.in_value(value):
                        found.setdefault(line, set()).add(s.name)
    for line, dotted in dotted_names(toks):
        for s in every:
            if s.in_dotted(dotted):
                found.setdefault(line, set()).add(s.name)
    return found


def lines_naming(text: str) -> int:
    return len(naming_lines(text))


def outside_files() -> list[Path]:
    core = [p for p in CORE.rglob("*.py")
            if p.relative_to(CORE).parts[0] not in CORE_FOLDERS | {"data"}]
    return sorted([*core, *(ROOT / "pages").rglob("*.py"), ROOT / "app.py", ROOT / "server.py"])


#: The schema's history (:mod:`structext_core.studio.migrations`) up to the migration that made
#: strata data (m0014): each records the tables as they were made, benchmarks' tables and names
#: included, and a migration that has run is never rewritten. These counts are frozen; a new
#: migration is checked as every other module is.
#:
#: Counted as code since the names are read as tokens (issue 43, item 5): the names in the
#: migrations' docstrings and ``NAME`` sentences ("AIBench question review: ...") are prose and count
#: no more, so m0008 (4 lines before), m0009 (4), m0012 (3) name none and left the list; what is
#: left is the SQL's quoted values: m0010's ``DEFAULT 'structext-eval'`` and ``CHECK (benchmark IN
#: ('structext-eval', 'aibench'))`` (12 lines before) and m0014's docstring quoting that CHECK (4 before).
HISTORY: dict[str, int] = {
    "structext_core/studio/migrations/m0010_aibench_studies.py": 2,
    "structext_core/studio/migrations/m0014_study_strata.py": 1,
}


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", outside_files(), ids=relative)
def test_no_module_outside_a_benchmark_names_one(path):
    found = naming_lines(path.read_text(encoding="utf-8"))
    frozen = HISTORY.get(relative(path), 0)
    where = ", ".join(f"{line} ({', '.join(sorted(names))})" for line, names in sorted(found.items()))
    assert len(found) == frozen, (f"{relative(path)} names a benchmark on {len(found)} lines ({frozen} in the "
                                  f"schema's frozen history): lines {where}; reach it through "
                                  "structext_core.protocol instead, or move the code into the benchmark's package")


def test_the_names_are_seen_in_each_spelling():
    member = protocol.get_module("aibench")
    assert core_folder(member) == "aibench"
    for line in ('BENCHMARK = "aibench"', "if name == 'AIBENCH':", 'TITLE = "AIBench"',
                 "import structext_core.aibench.x", "from structext_core import settings, aibench",
                 "from structext_core.aibench import store", "AIBENCH_DATA = settings.aibench",
                 'VIEW = "structext_core.aibench.ui:view"', 'LINK = "results?benchmark=aibench"',
                 'SQL = "SELECT * FROM studies WHERE benchmark = \'aibench\'"',
                 "aibench = protocol.get_module(NAME)",
                 'NAMES = ("structext-eval", "StrucText-Eval", "labset", "The lab\'s own")',
                 "def f(x):\n    return x.structext_eval\n"):
        assert lines_naming(line + "\n") == 1, line


def test_prose_and_a_functions_own_words_name_no_benchmark():
    for text in ("from structext_core import settings\nplain = 'words'\n",
                 "# an aibench-like set, as AIBench and StrucText-Eval do\n",
                 'def f():\n    """Reads the lab\'s own set, as labset does; aibench too."""\n',
                 'MESSAGE = "the AIBench data sets are sealed"\n',
                 "def f(frame):\n    aibench = frame.copy()\n    return aibench\n"):
        assert lines_naming(text) == 0, text


def test_the_history_is_only_migrations_up_to_strata_as_data():
    assert all(re.fullmatch(r"structext_core/studio/migrations/m00(0\d|1[0-4])_\w+\.py", path) for path in HISTORY)


def test_the_list_names_existing_modules():
    gone = [path for path in HISTORY if not (ROOT / path).is_file()]
    assert not gone, f"take these off HISTORY: {gone}"


# ---------------------------------------------------------------- strata and item fields by name

#: Names of an item's fields that every benchmark-agnostic layer uses, and so are no benchmark's:
#: the stored study item (``study_items.sample_json``, written by
#: structext_core/studio/study/items_study.py's ``study_row``: id, question, options, answer,
#: reference, requirement, image, kept); the shared sample contract of the protocol
#: (``ShownQuestion``: text, system prompt, choices, image; ``LoggedItem``: input, target); the
#: study's own columns (``studies.suite``, the data set of every benchmark's study; ``seed``; its
#: ``rule``, and the access table's rules); and words of the shared code's own vocabulary that a
#: member happens to use as a field: ``format`` (``str.format``, a column's number format),
#: ``width`` (a chart's or a column's width), ``col`` (a chart's column axis), ``task`` (a
#: harness's task, read from Inspect AI and lm-eval logs).
GENERIC_FIELDS = frozenset({
    "id", "question", "options", "answer", "reference", "requirement", "image", "kept",
    "text", "choices", "input", "target",
    "suite", "seed", "rule",
    "format", "width", "col", "task",
})


def specific_fields() -> dict[str, set[str]]:
    """Each stratum and item field name specific to a benchmark (``STRATA`` keys and
    ``ITEM_FIELDS`` of every member, the generic ones aside) -> the benchmarks that declare it."""
    found: dict[str, set[str]] = {}
    for name, module in protocol.members().items():
        for field in (*module.STRATA, *module.ITEM_FIELDS):
            if field not in GENERIC_FIELDS:
                found.setdefault(field, set()).add(name)
    return found


def field_reads(text: str) -> dict[int, set[str]]:
    """The lines of ``text`` that read a benchmark's stratum or item field by name: as a string
    (``"language"``, ``'$.paper_id'``, SQL's ``'question_id'``) or as an attribute
    (``item.language``, also in an f-string's field), and which names they read."""
    fields = specific_fields()
    toks = tokens(text)
    found: dict[int, set[str]] = {}
    for i, token in enumerate(toks):
        if token.type == tokenize.STRING:
            for line, value in string_values(token):
                for name in {value.strip(), *pieces(value)} & fields.keys():
                    found.setdefault(line, set()).add(name)
            for line, attribute in fstring_attributes(token):
                if attribute in fields:
                    found.setdefault(line, set()).add(attribute)
        elif (token.type == tokenize.NAME and token.string in fields and i
              and toks[i - 1].type == tokenize.OP and toks[i - 1].string == "."):
            found.setdefault(token.start[0], set()).add(token.string)
    return found


#: The shared modules and pages that still read a benchmark's strata or item fields by name, and on
#: how many lines: to be emptied by the strata-as-data change (issue 43). A count may only go down,
#: and then this number goes down with it (the check fails until it does).
KNOWN: dict[str, int] = {}

#: The schema's history, as for :data:`HISTORY`: m0014 moved the strata into data, reading them by
#: name once (a migration that has run is never rewritten). Frozen, not to be emptied.
FIELD_HISTORY: dict[str, int] = {
    "structext_core/studio/migrations/m0014_study_strata.py": 4,
}


@pytest.mark.parametrize("path", outside_files(), ids=relative)
def test_no_shared_module_reads_a_benchmarks_strata_or_fields_by_name(path):
    found = field_reads(path.read_text(encoding="utf-8"))
    known = KNOWN.get(relative(path), FIELD_HISTORY.get(relative(path), 0))
    where = ", ".join(f"{line} ({', '.join(sorted(names))})" for line, names in sorted(found.items()))
    assert len(found) <= known, (
        f"{relative(path)} reads a benchmark's strata or item fields by name on {len(found)} lines "
        f"({known} known): lines {where}; read the strata the member declares (its STRATA, AXES, "
        "ITEM_FIELDS) as data instead")
    assert len(found) == known, (f"{relative(path)} reads strata or fields by name on {len(found)} lines now, "
                                 f"fewer than the {known} in KNOWN: lower its count in KNOWN to {len(found)}"
                                 + (" (take it off)" if not found else ""))


def test_strata_and_fields_are_seen_as_strings_and_attributes_not_in_prose():
    assert {"language", "paper_id", "question_id", "conference", "stratum"} <= specific_fields().keys()
    assert not GENERIC_FIELDS & specific_fields().keys()
    for line in ('by = "language"', "key = '$.paper_id'", "row['question_id']", "level = item.conference",
                 'db.execute("SELECT json_extract(strata, \'$.stratum\') FROM study_items")',
                 'label = f"{item.language} and more"'):
        assert len(field_reads(line + "\n")) == 1, line
    for line in ("# the item's language, its paper_id", 'def f():\n    """Group by language and paper."""\n',
                 "language = 1", 'sample["question"]', "text.format(x)", 'MESSAGE = "pick a language"'):
        assert field_reads(line + "\n") == {}, line


def test_known_names_existing_modules_and_the_field_history_only_migrations():
    gone = [path for path in KNOWN if not (ROOT / path).is_file()]
    assert not gone, f"take these off KNOWN: {gone}"
    assert all(re.fullmatch(r"structext_core/studio/migrations/m00(0\d|1[0-4])_\w+\.py", path) for path in FIELD_HISTORY)
    assert not KNOWN.keys() & FIELD_HISTORY.keys()
