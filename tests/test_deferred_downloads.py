"""A download whose file is made on the click (``data`` a callable) never asks for a rerun as well.

Streamlit 1.67 answers a deferred download's request with a message it queues for the browser, and clears
that queue when a script run starts: a click that also reruns the page (``on_click``'s default) could
lose the answer to the run it started, and the button turned its spinner for good. The sealed journey
saw it on Explore's download under load (CI at d524a64: 60 s, no file; reproduced 3 times in 10 with both
cores busy). Every such button says ``on_click="ignore"``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*sorted((ROOT / "structext_core").rglob("*.py")), *sorted((ROOT / "pages").rglob("*.py")),
           *sorted((ROOT / "examples").rglob("*.py")), ROOT / "app.py", ROOT / "server.py"]


def deferred_downloads_that_rerun(source: str) -> list[int]:
    """Lines of the ``download_button`` calls in ``source`` whose ``data`` is a lambda or a name defined by
    ``def`` in the same file, without ``on_click="ignore"``."""
    tree = ast.parse(source)
    functions = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "download_button"):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        data = keywords.get("data", node.args[1] if len(node.args) > 1 else None)
        deferred = isinstance(data, ast.Lambda) or (isinstance(data, ast.Name) and data.id in functions)
        on_click = keywords.get("on_click")
        ignored = isinstance(on_click, ast.Constant) and on_click.value == "ignore"
        if deferred and not ignored:
            found.append(node.lineno)
    return found


def test_every_download_made_on_the_click_asks_for_no_rerun():
    offenders = {str(path.relative_to(ROOT)): lines for path in SOURCES if path.is_file()
                 if (lines := deferred_downloads_that_rerun(path.read_text(encoding="utf-8")))}
    assert offenders == {}


def test_the_check_finds_a_deferred_download_that_reruns():
    source = '''
import streamlit as st
def make():
    return b"x"
st.download_button("A", data=lambda: b"x", file_name="a")
st.download_button("B", make, file_name="b", on_click="ignore")
st.download_button("C", data=make, file_name="c")
st.download_button("D", data=b"x", file_name="d")
'''
    assert deferred_downloads_that_rerun(source) == [5, 7]
