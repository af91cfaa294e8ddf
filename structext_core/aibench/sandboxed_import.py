"""The AIBench import as the app and the command line run it: every image decoded in a worker
process (:mod:`structext_core.studio.sandbox`), never in the server's own.

:func:`import_folder` is :func:`structext_core.aibench.dataset.import_folder` with the sandboxed
image check; an image whose check times out, runs out of memory or crashes its worker is a
problem like any other (named with its file), and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from structext_core.aibench import dataset
from structext_core.studio import sandbox


def sandboxed_image_check(pool: sandbox.WorkerPool | None = None) -> dataset.ImageChecker:
    """A ``check_image(data, suffix)`` that runs :func:`structext_core.aibench.images.check_image`
    in a worker of ``pool`` (the default pool when None)."""
    def check(data: bytes, suffix: str) -> dict:
        result = (pool or sandbox.default_pool()).call("aibench_image", data, suffix)
        if isinstance(result, sandbox.Unchecked):
            return {"ok": False, "problem": result.describe("decode")}
        return result
    return check


def import_folder(folder: str | Path, dest: str | Path, *, replace: bool = False,
                  pool: sandbox.WorkerPool | None = None,
                  progress: Callable[[int, int], None] | None = None) -> dataset.Dataset:
    """Check the AIBench folder ``folder`` (images decoded in worker processes, as many at once
    as the pool has workers) and store it at ``dest``; see
    :func:`structext_core.aibench.dataset.import_folder`."""
    workers = (pool or sandbox.default_pool()).size
    return dataset.import_folder(folder, dest, sandboxed_image_check(pool), replace=replace, workers=workers,
                                  progress=progress)
