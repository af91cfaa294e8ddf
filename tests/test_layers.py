"""The layers of structext_core, enforced: each shared layer imports only the layers before it,
the benchmarks' packages sit above every shared layer, and nothing under structext_core imports
the pages (``pages/``).

    settings -> text -> protocol -> evaluation -> studio -> views -> cli -> ui -> (each benchmark's package)

Streamlit is imported only by the UI: the shared layer ``structext_core/ui/`` (the glue every page
shares: database of a run, log-in, navigation, the clock's components) and, inside a benchmark's
package, its own ``ui`` (a module or a package: its question screen, its Results and Explore
sections) and ``pages`` (the pages only it serves). Any other module under structext_core that
imports it fails (:func:`violations`).

A benchmark's package is the package of its member module, as the entry points register it
(:mod:`structext_core.protocol`); a shared layer reaches a benchmark only through the protocol.
A member may live anywhere: a package under structext_core (the built-in ones), another installed
package or a top-level module (:func:`tests.source_names.member_package`); only a package under
structext_core has a folder there, a layer above every shared one.
A package under structext_core that is neither a shared layer nor a benchmark's fails the check,
and so does any import of a benchmark's package from outside it (every import counts, including the
ones inside functions) and any core module longer than :data:`MAX_MODULE_LINES`.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from structext_core import protocol
from tests.source_names import core_folder, member_package

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "structext_core"

SHARED = ["settings", "text", "protocol", "evaluation", "studio", "views", "cli", "ui"]
#: Each benchmark's folder under structext_core (a member living outside it has none).
MEMBERS = sorted({folder for module in protocol.members().values() if (folder := core_folder(module))})
LAYERS = SHARED + MEMBERS
#: Third-party packages that only the pages and the UI may import.
UI_ONLY = ("streamlit",)
#: Where under a benchmark's package the UI lives (a module ``ui.py`` or a package ``ui/``, and ``pages/``).
MEMBER_UI = ("ui", "pages")


def may_import_ui(relative_path: str) -> bool:
    """Whether the core module at ``relative_path`` may import Streamlit: the shared UI layer
    (``structext_core/ui/...``) or a benchmark's own ``ui`` and ``pages``
    (``structext_core/<benchmark>/ui.py``, ``structext_core/<benchmark>/ui/...``,
    ``structext_core/<benchmark>/pages/...``)."""
    parts = Path(relative_path).with_suffix("").parts
    if len(parts) < 2 or parts[0] != "structext_core":
        return False
    if parts[1] == "ui":
        return True
    return parts[1] in MEMBERS and len(parts) > 2 and parts[2] in MEMBER_UI


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
            if node.module in {"structext_core"} and node.level == 0:  # from structext_core import evaluation
                found.extend((node.lineno, f"structext_core.{alias.name}") for alias in node.names)
    return found


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "structext_core" or len(parts) < 2:
        return None
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def violations(relative_path: str, source: str) -> list[str]:
    """What is wrong with the imports of the core module at ``relative_path`` (such as
    ``structext_core/studio/study.py``), besides reaching a benchmark's package (:func:`crossings`)."""
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
            if not may_import_ui(relative_path):
                problems.append(f"{where}: imports {module} (Streamlit belongs in structext_core/ui/, or in a "
                                "benchmark's own ui and pages)")
        elif top == "pages":
            problems.append(f"{where}: imports {module} (the core never imports the pages)")
        elif top == "structext_core" and own is not None:
            theirs = layer_of(module)
            if theirs is not None and theirs > own and LAYERS[theirs] in SHARED:
                problems.append(f"{where}: {LAYERS[own]} imports {module} ({LAYERS[theirs]} comes after it)")
    return problems


def member_packages() -> dict[str, str]:
    """Each registered benchmark's package (its import name) -> how a crossing names it: its folder
    for a package under structext_core, its import name otherwise (read at each call: a test may
    install a member)."""
    return {member_package(module): core_folder(module) or member_package(module)
            for module in protocol.members().values()}


def crossings(relative_path: str, source: str) -> set[str]:
    """The benchmarks' packages that the module at ``relative_path`` imports, when it is not in
    that package: a shared module's or another benchmark's reach into a benchmark (one under
    structext_core named by its folder, one outside it by its import name)."""
    parts = Path(relative_path).with_suffix("").parts
    own = ".".join(parts[:2]) if len(parts) > 2 else None
    packages = member_packages()
    found = set()
    for _, module in imported_modules(source):
        for package, label in packages.items():
            if (module == package or module.startswith(package + ".")) and package != own:
                found.add(label)
    return found



def core_files() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py") if "data" not in p.relative_to(CORE).parts)


def test_every_core_module_sits_in_a_layer_or_a_benchmark():
    outside = [str(p.relative_to(ROOT)) for p in core_files()
               if p.parent == CORE and p.name not in {"__init__.py", "__main__.py", "settings.py"}]
    assert not outside, f"modules outside the layers (move them into one): {outside}"
    unknown = sorted(p.name for p in CORE.iterdir()
                     if p.is_dir() and p.name not in {*LAYERS, "data", "__pycache__"})
    assert not unknown, (f"packages that are neither a shared layer ({', '.join(SHARED)}) nor a registered "
                         f"benchmark's ({', '.join(MEMBERS)}): {unknown}")


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(CORE)))
def test_benchmarks_are_reached_only_through_the_protocol(path):
    relative = str(path.relative_to(ROOT))
    found = crossings(relative, path.read_text(encoding="utf-8"))
    assert not found, (f"{relative} imports the package of {sorted(found)}: reach a benchmark through "
                       "structext_core.protocol (its member module), not by its package")


#: No module of the core, and no page, is longer than this: a longer one holds more than one idea
#: (split it: a page's pieces go into structext_core/ui/, the page composes them).
MAX_MODULE_LINES = 600


def test_no_core_module_or_page_is_longer_than_the_limit():
    pages = sorted((ROOT / "pages").rglob("*.py"))
    assert pages, "no page found under pages/"
    long = {str(p.relative_to(ROOT)): n for p in [*core_files(), *pages]
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them): {long}"


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
    found = violations("structext_core/evaluation/example.py", bad)
    assert len(found) == 5, found
    assert any(f.startswith("structext_core/evaluation/example.py:5: evaluation imports structext_core.studio")
               for f in found), found  # the import inside a function counts too
    assert violations("structext_core/studio/example.py", "from structext_core.evaluation import agreement\n") == []
    # a benchmark's package may import every shared layer; a shared module reaches it only through the protocol
    member = MEMBERS[0]
    assert violations(f"structext_core/{member}/example.py", "from structext_core.cli import main\n") == []
    assert crossings(f"structext_core/{member}/example.py", f"from structext_core.{member} import x\n") == set()
    inside = "def later():\n    from structext_core import " + member + "\n"
    assert crossings("structext_core/studio/example.py", inside) == {member}


@pytest.mark.parametrize("place, allowed", [
    ("structext_core/ui/clock.py", True),
    ("structext_core/ui/deeper/widget.py", True),
    ("structext_core/{member}/ui.py", True),
    ("structext_core/{member}/ui/results.py", True),
    ("structext_core/{member}/pages/some_page.py", True),
    ("structext_core/{member}/member.py", False),
    ("structext_core/{member}/views.py", False),
    ("structext_core/{member}/uis.py", False),
    ("structext_core/structext_eval/explore.py", False),
    ("structext_core/studio/ui/clock.py", False),
    ("structext_core/studio/pages/clock.py", False),
    ("structext_core/cli/main.py", False),
    ("structext_core/settings.py", False),
])
def test_streamlit_only_in_the_ui_layer_and_a_benchmarks_own_ui_and_pages(place, allowed):
    relative = place.format(member=MEMBERS[0])
    for source in ("import streamlit as st\n", "def later():\n    from streamlit.errors import X\n"):
        found = violations(relative, source)
        assert found == ([] if allowed else [f"{relative}:{source.count(chr(10))}: imports "
                                            f"{'streamlit' if 'import streamlit' in source else 'streamlit.errors'}"
                                            " (Streamlit belongs in structext_core/ui/, or in a benchmark's "
                                            "own ui and pages)"]), found


def test_the_ui_layer_imports_no_page_and_comes_last():
    glue = CORE / "ui"
    assert (glue / "__init__.py").is_file() and (glue / "frame.py").is_file()
    assert not (ROOT / "pages" / "ui").exists(), "the pages' glue is structext_core/ui/ now"
    assert SHARED[-1] == "ui"
    for path in glue.rglob("*.py"):
        for line, module in imported_modules(path.read_text(encoding="utf-8")):
            assert module.split(".")[0] != "pages", f"{path.relative_to(ROOT)}:{line} imports the page {module}"
    # a shared layer before it may not reach it
    assert violations("structext_core/views/example.py", "from structext_core import ui\n") == [
        "structext_core/views/example.py:1: views imports structext_core.ui (ui comes after it)"]


#: What an ``st.html`` block may be given: HTML built by the builders that escape every text from people or
#: files (docs/reference/security.md), or a constant of the module (a style sheet).
HTML_BUILDERS = ("preformatted_html(", "figures_html(", "html_table(", "answer_card.answers_html(", "progress_html(",
                 "question_card.question_html(", "explore.sample_html(", "your_studies.studies_html(",
                 "your_studies.also_html(", "home_cards.benchmark_cards_html(", "box_html(")
_HTML_CALL = re.compile(r"(?:\b(?:st|where|box|place)\.html|(?<!def )\bhtml_block|\blight_html\.draw)\(\s*([^\n]*)")
#: The calls given something else: ``widgets.html_block``'s, of what its callers built (with ``st.html``, or
#: as a light element).
_HTML_WRAPPERS = {("structext_core/ui/widgets.py", "_Markup(markup))"), ("structext_core/ui/widgets.py", "markup, where)")}


def html_calls(source: str) -> list[str]:
    """The first line of what each ``.html(`` call of ``source`` is given."""
    return _HTML_CALL.findall(source)


def test_every_html_block_is_built_by_an_escaping_builder_or_is_a_constant():
    sources = [*core_files(), *sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py"]
    calls = {path.relative_to(ROOT).as_posix(): html_calls(path.read_text(encoding="utf-8")) for path in sources}
    assert sum(map(len, calls.values())) >= 5  # the check sees the calls
    assert all(argument in calls[path] for path, argument in _HTML_WRAPPERS)  # and the exceptions are still there
    for path, arguments in calls.items():
        for argument in arguments:
            if (path, argument) in _HTML_WRAPPERS:
                continue
            assert argument.removeprefix("safe_text.").startswith(HTML_BUILDERS) or re.match(r"[A-Z_]+\)", argument), (
                path, argument)
    assert not html_calls('st.html(f"<b>{name}</b>")')[0].startswith(HTML_BUILDERS)  # and would refuse this
    assert not html_calls('widgets.html_block(f"<b>{name}</b>")')[0].startswith(HTML_BUILDERS)  # or this
    assert not html_calls('light_html.draw(f"<b>{name}</b>")')[0].startswith(HTML_BUILDERS)  # or this


def bare_expressions(source: str) -> list[int]:
    """The lines of ``source``'s statements that are an expression alone, neither a call nor a docstring:
    what Streamlit's "magic" would write to the page, and what does nothing with magic off."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            for i, statement in enumerate(statements if isinstance(statements, list) else []):
                if not isinstance(statement, ast.Expr) or isinstance(statement.value, ast.Call | ast.Await | ast.Yield):
                    continue
                docstring = (i == 0 and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
                             and isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
                if not docstring:
                    lines.append(statement.lineno)
    return lines


def test_magic_is_off_and_no_page_leans_on_it():
    """Magic made Streamlit's compile of a page 4 to 30 times slower (issue 46); off, a bare expression
    in a page would show nothing, so none is written: every page draws with st.* calls."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["magicEnabled"] is False
    scripts = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted(CORE.glob("*/pages/*.py")),
               *sorted((ROOT / "examples").rglob("pages/*.py"))]
    assert len(scripts) > 10
    for path in scripts:
        assert not bare_expressions(path.read_text(encoding="utf-8")), path.relative_to(ROOT)
    assert bare_expressions('"""Doc."""\nimport streamlit as st\nx = 1\nx\nst.write(x)\n') == [4]
