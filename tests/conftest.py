import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
OFFICIAL = SHARED / "fixtures" / "official"


@pytest.fixture
def official_dir() -> Path:
    if not OFFICIAL.exists():
        pytest.fail(f"the released fixtures are missing at {OFFICIAL}")
    return OFFICIAL


@pytest.fixture
def isolated_env(tmp_path, monkeypatch):
    """A database and suite folder of the test's own."""
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    return tmp_path
