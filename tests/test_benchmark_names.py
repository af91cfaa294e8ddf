"""No module outside a benchmark's package names a benchmark: not its name, not its display name,
not its package. The shared layers, the pages and the app reach a benchmark through the protocol
(:mod:`structext_core.protocol`), as they reach a format through its registry.

Any module outside the packages that names one fails, except the schema's history up to m0014
(:data:`HISTORY`), frozen with its counts: a migration that has run is never rewritten.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from structext_core import protocol

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "structext_core"
PACKAGES = {module.__name__.split(".")[1] for module in protocol.members().values()}


def name_patterns() -> dict[str, re.Pattern]:
    """For each benchmark, what names it: its name, display name and package (case aside)."""
    patterns = {}
    for name, module in protocol.members().items():
        package = module.__name__.split(".")[1]
        words = {name, name.replace("-", "_"), name.replace("-", " "), module.DISPLAY_NAME}
        spelled = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        patterns[name] = re.compile(
            rf"(?i:{spelled})|structext_core\.{package}\b|from structext_core import [\w, ]*\b{package}\b")
    return patterns


def outside_files() -> list[Path]:
    core = [p for p in CORE.rglob("*.py")
            if p.relative_to(CORE).parts[0] not in PACKAGES | {"data"}]
    return sorted([*core, *(ROOT / "pages").rglob("*.py"), ROOT / "app.py", ROOT / "server.py"])


def lines_naming(text: str) -> int:
    patterns = name_patterns().values()
    return sum(1 for line in text.splitlines() if any(p.search(line) for p in patterns))


#: The schema's history (:mod:`structext_core.studio.migrations`) up to the migration that made
#: strata data (m0014): each records the tables as they were made, benchmarks' tables and names
#: included, and a migration that has run is never rewritten. These counts are frozen; a new
#: migration is checked as every other module is.
HISTORY: dict[str, int] = {
    "structext_core/studio/migrations/m0008_aibench_question_review.py": 4,
    "structext_core/studio/migrations/m0009_pairwise.py": 4,
    "structext_core/studio/migrations/m0010_aibench_studies.py": 12,
    "structext_core/studio/migrations/m0012_question_sendbacks.py": 3,
    "structext_core/studio/migrations/m0014_study_strata.py": 4,
}

@pytest.mark.parametrize("path", outside_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_outside_a_benchmark_names_one(path):
    relative = str(path.relative_to(ROOT))
    found, frozen = lines_naming(path.read_text(encoding="utf-8")), HISTORY.get(relative, 0)
    assert found == frozen, (f"{relative} names a benchmark on {found} lines ({frozen} in the schema's frozen "
                             "history): reach it through structext_core.protocol instead, or move the code "
                             "into the benchmark's package")


def test_the_names_are_seen_in_each_spelling():
    member = next(iter(protocol.members().values()))
    package = member.__name__.split(".")[1]
    for line in (member.NAME, member.DISPLAY_NAME.upper(), f"import structext_core.{package}.x",
                 f"from structext_core import settings, {package}"):
        assert lines_naming(line) == 1, line
    assert lines_naming("from structext_core import settings\nplain words") == 0


def test_the_history_is_only_migrations_up_to_strata_as_data():
    assert all(re.fullmatch(r"structext_core/studio/migrations/m00(0\d|1[0-4])_\w+\.py", path) for path in HISTORY)


def test_the_list_names_existing_modules():
    gone = [path for path in HISTORY if not (ROOT / path).is_file()]
    assert not gone, f"take these off HISTORY: {gone}"
