"""Each page's compiled code kept for the server's life, compiled again only when its file changes.

Streamlit (1.67, ``ScriptCache``) compiles a script once and keeps its code, but forgets every script whenever
the last session of the process closes (``WebsocketSessionManager``: its way to pick up an edited file when no
file watcher runs, and ours is off). A lead alone on the server who reloads, or opens a bookmark, waited for
``app.py`` and the page to be compiled again on every visit: 5 ms of Studies' 30 ms run (issue 46).

With :func:`install` (``server.py``), a script's code is kept until its file changes (its modification time or
size, read at each run: a few microseconds), so an edited page is still picked up, and at once rather than
after every session has closed.
"""

from __future__ import annotations

import os

from streamlit.runtime.scriptrunner.script_cache import ScriptCache


def _stamp(path: str) -> tuple[int, int] | None:
    """What tells that the file at ``path`` changed: its modification time and size (None: unreadable)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def install() -> None:
    """Keep every script's code in this process's script caches until its file changes. Installing again
    changes nothing."""
    original = ScriptCache.get_bytecode
    if getattr(original, "keeps_compiled_pages", False):
        return

    def get_bytecode(self: ScriptCache, script_path: str):
        path = os.path.abspath(script_path)
        stamp = _stamp(path)
        with self._lock:  # noqa: SLF001 - Streamlit is pinned: requirements.txt
            stamps = self.__dict__.setdefault("_stamps", {})
            if stamps.get(path) != stamp:  # new, or its file changed: compiled (again) below
                self._cache.pop(path, None)  # noqa: SLF001
                stamps[path] = stamp
        return original(self, script_path)

    def clear(self: ScriptCache) -> None:
        """Kept: a script is compiled again when its file changes (:func:`install`), not when the last
        session closes."""

    get_bytecode.keeps_compiled_pages = True
    get_bytecode.__doc__ = original.__doc__
    ScriptCache.get_bytecode = get_bytecode
    ScriptCache.clear = clear
