"""The layers of structext_core, enforced: each imports only the layers before it, nothing
under structext_core imports Streamlit or the pages, and the pages' glue lives in pages/ui/.

    settings -> benchmark -> aibench -> evaluation -> benchmarks -> studio -> views -> cli

Every import counts, including the ones inside functions.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "structext_core"
LAYERS = ["settings", "benchmark", "aibench", "evaluation", "benchmarks", "studio", "views", "cli"]
#: Third-party packages that only the pages (and their glue) may import.
UI_ONLY = ("streamlit",)


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``; relative imports are
    reported as they are written (and refused by the layer check)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.append((node.lineno, base))
            if node.module in {"structext_core"} and node.level == 0:  # from structext_core import benchmark
                found.extend((node.lineno, f"structext_core.{alias.name}") for alias in node.names)
    return found


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "structext_core" or len(parts) < 2:
        return None
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def violations(relative_path: str, source: str) -> list[str]:
    """What is wrong with the imports of the core module at ``relative_path`` (such as
    ``structext_core/studio/study.py``)."""
    parts = Path(relative_path).with_suffix("").parts
    own = layer_of(".".join(parts))
    problems = []
    for line, module in imported_modules(source):
        where = f"{relative_path}:{line}"
        if module.startswith("."):
            problems.append(f"{where}: relative import {module!r} (write the absolute name)")
            continue
        top = module.split(".")[0]
        if top in UI_ONLY:
            problems.append(f"{where}: imports {module} (Streamlit belongs in pages/ui/)")
        elif top == "pages":
            problems.append(f"{where}: imports {module} (the core never imports the pages)")
        elif top == "structext_core" and own is not None:
            theirs = layer_of(module)
            if theirs is not None and theirs > own:
                problems.append(f"{where}: {LAYERS[own]} imports {module} ({LAYERS[theirs]} comes after it)")
    return problems


def core_files() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py") if "data" not in p.relative_to(CORE).parts)


def test_every_core_module_sits_in_a_layer():
    outside = [str(p.relative_to(ROOT)) for p in core_files()
               if p.parent == CORE and p.name not in {"__init__.py", "__main__.py", "settings.py"}]
    assert not outside, f"modules outside the layers (move them into one): {outside}"


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(CORE)))
def test_imports_follow_the_layers(path):
    assert violations(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) == []


def test_the_check_sees_each_kind_of_violation():
    bad = (
        "import streamlit as st\n"
        "from pages import ui\n"
        "from . import samples\n"
        "def later():\n"
        "    from structext_core.studio import storage\n"
        "from structext_core import views\n"
    )
    found = violations("structext_core/benchmark/example.py", bad)
    assert len(found) == 5, found
    assert any(f.startswith("structext_core/benchmark/example.py:5: benchmark imports structext_core.studio")
               for f in found), found  # the import inside a function counts too
    assert violations("structext_core/studio/example.py", "from structext_core.benchmark import tasks\n") == []


def test_pages_glue_is_a_folder_streamlit_does_not_list():
    glue = ROOT / "pages" / "ui"
    assert (glue / "__init__.py").is_file() and (glue / "frame.py").is_file()
    page_modules = {p.stem for p in (ROOT / "pages").glob("*.py")}
    for path in glue.rglob("*.py"):
        for line, module in imported_modules(path.read_text(encoding="utf-8")):
            assert not (module.startswith("pages.") and module.split(".")[1] in page_modules), (
                f"{path.relative_to(ROOT)}:{line} imports the page {module}")
