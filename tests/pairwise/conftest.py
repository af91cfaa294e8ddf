"""A stored synthetic AIBench set (3 papers, 6 systems), accounts and a database of the test's own."""
from __future__ import annotations

import pytest

from structext_core.aibench import config as aibench_config
from structext_core.aibench import store as aibench_store
from structext_core.studio import accounts, sandbox, storage


@pytest.fixture(scope="session")
def aibench_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("pairwise_aibench")
    saved = aibench_store.SYNTHETIC_PAPERS
    mp = pytest.MonkeyPatch()
    mp.setenv(aibench_config.DIR_ENV, str(root))
    aibench_store.SYNTHETIC_PAPERS = 3
    pool = sandbox.WorkerPool(workers=1, timeout=60, memory_mb=1024)
    try:
        aibench_store.ensure_synthetic(pool)
        aibench_store.add_reference_predictions(pool)
    finally:
        pool.shutdown()
        aibench_store.SYNTHETIC_PAPERS = saved
        mp.undo()
    return root


@pytest.fixture
def world(aibench_root, tmp_path, monkeypatch):
    monkeypatch.setenv(aibench_config.DIR_ENV, str(aibench_root))
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "structext.db")
    people = {name: accounts.create_user(db, name, "password1", role) for name, role in
              (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator"), ("reader", "researcher"))}
    return {"db": db, "people": people, "root": tmp_path}
