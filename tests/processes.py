"""Worker processes for the tests that need several at once (writers racing on one database file).

Each is a separate process with its own connections, as the app's processes are. They are forked
from Python's fork server, which imports the studio's modules once: started with "spawn", each of
a test's 19 workers spent about 1.4 s of CPU importing them again.
"""
from __future__ import annotations

import multiprocessing
from multiprocessing.pool import Pool

#: Imported once by the fork server; every worker forked from it starts with them.
PRELOAD = ["structext_core.studio.storage", "structext_core.studio.study", "structext_core.studio.accounts",
           "structext_core.structext_eval.study", "structext_core.structext_eval.results_frame"]


def pool(processes: int) -> Pool:
    """A pool of ``processes`` fresh worker processes (a context manager, as ``multiprocessing.Pool``)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context.Pool(processes)
