"""A page's compiled code is kept while its file is unchanged (not forgotten when the last session closes, as
Streamlit's script cache does) and compiled again when the file changes (``structext_core/ui/compiled_pages.py``)."""

import os

from streamlit.runtime.scriptrunner.script_cache import ScriptCache

from structext_core.ui import compiled_pages


def test_code_is_kept_across_a_clear_and_compiled_again_when_its_file_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(ScriptCache, "get_bytecode", ScriptCache.get_bytecode)  # restored after the test
    monkeypatch.setattr(ScriptCache, "clear", ScriptCache.clear)
    page = tmp_path / "page.py"
    page.write_text("shown = 1\n")
    plain = ScriptCache()
    first = plain.get_bytecode(str(page))
    plain.clear()  # Streamlit's own: the last session closed, the code is forgotten
    assert plain.get_bytecode(str(page)) is not first

    compiled_pages.install()
    installed = ScriptCache.get_bytecode
    compiled_pages.install()  # again: still one layer
    assert ScriptCache.get_bytecode is installed and installed.keeps_compiled_pages
    cache = ScriptCache()
    code = cache.get_bytecode(str(page))
    cache.clear()
    assert cache.get_bytecode(str(page)) is code  # kept: the file did not change

    page.write_text("shown = 22\n")  # edited (another size), within the same clock tick or not
    changed = cache.get_bytecode(str(page))
    assert changed is not code
    namespace: dict = {}
    exec(changed, namespace)  # noqa: S102 - our own test file
    assert namespace["shown"] == 22
    stat = page.stat()
    os.utime(page, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # touched: same size, newer time
    assert cache.get_bytecode(str(page)) is not changed
