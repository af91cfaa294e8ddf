"""Every page joins app.py's frame before it shows or checks anything.

Without ``ensure_frame()`` a fresh server's first visit to a page URL runs the page
file alone (see ``structext_core/ui/frame.py`` and tests/browser/test_direct_url.py):
no navigation, no log-in, and for protected pages no role check from the frame.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The shared pages and every benchmark's own (``structext_core/<benchmark>/pages/``).
PAGES = sorted([*(ROOT / "pages").glob("*.py"),
                *(p for p in (ROOT / "structext_core").glob("*/pages/*.py") if p.name != "__init__.py")])


def test_there_are_pages():
    assert len(PAGES) >= 7


def test_every_page_of_the_access_table_is_checked():
    from structext_core.studio import access

    assert {str(ROOT / "pages" / p.file) for p in access.PAGES} == {str(p) for p in PAGES}


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_page_calls_ensure_frame_first(path):
    tree = ast.parse(path.read_text())
    calls = [
        node for node in tree.body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        or isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
    ]
    assert calls, f"{path.name} runs nothing at module level"
    first = calls[0].value.func
    name = first.id if isinstance(first, ast.Name) else first.attr
    assert name == "ensure_frame", f"{path.name}: the first call at module level is {name}(), not ensure_frame()"


def test_a_run_of_the_legacy_pages_runner_is_told_by_the_run_itself():
    """Issue 19 item 5: not only by Streamlit's process-wide flag, which the first of several
    sessions started at once turns off while the others are already running in legacy mode."""
    from structext_core.ui import frame

    legacy_runner = {"__name__": "streamlit.runtime.scriptrunner.script_runner", "check": frame.in_legacy_run}
    exec("def _mpa_v1():\n    return (lambda: check())()\n", legacy_runner)  # noqa: S102 - a stand-in caller
    assert legacy_runner["_mpa_v1"]() is True
    assert frame.in_legacy_run() is False
    elsewhere = {"__name__": "some.module", "check": frame.in_legacy_run}
    exec("def _mpa_v1():\n    return check()\n", elsewhere)  # noqa: S102 - same name, another module
    assert elsewhere["_mpa_v1"]() is False
