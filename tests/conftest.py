import os
import sys
from pathlib import Path

import pytest

# The app makes the synthetic AIBench set at first start in a background thread; the tests
# (and the servers the browser tests start, which inherit this) leave it out unless a test turns
# it on (tests/aibench/test_synthetic_at_start.py).
os.environ.setdefault("STRUCTEXT_AIBENCH_SYNTHETIC", "off")

ROOT = Path(__file__).resolve().parent.parent
BROWSER_TESTS = ROOT / "tests" / "browser"
SHARED = ROOT.parent / "shared"
# The released samples, shipped inside the package (an unchanged copy of the shared fixtures),
# so the tests need nothing outside the clone.
OFFICIAL = ROOT / "structext_core" / "data" / "official"
SHARED_OFFICIAL = SHARED / "fixtures" / "official"


#: Journeys .ci/run starts only once every other test is done, beside the rest of the journeys
#: (which run alongside the other tests from the start): short ones that keep no clock, so two
#: journeys at once never race a heartbeat, and together about a sixth of the journeys' time.
LATE_JOURNEYS = frozenset({
    "test_results_views.py", "test_home_browser.py", "test_direct_url.py", "test_aibench_browser.py",
    "test_rewrite_oracle_browser.py",
})


def pytest_configure(config):
    config.addinivalue_line("markers", "late_journey: a browser journey .ci/run starts once every test but the "
                                       "journeys is done (tests/conftest.py LATE_JOURNEYS)")


def pytest_collection_modifyitems(items):
    """Every test under tests/browser drives Chromium: it carries the ``browser`` marker, so
    ``-m "not browser"`` leaves out every one of them (none can forget its decorator). .ci/run runs
    them one after another beside the others; those of ``LATE_JOURNEYS`` also carry ``late_journey``."""
    for item in items:
        path = Path(str(item.path))
        if BROWSER_TESTS in path.parents:
            item.add_marker(pytest.mark.browser)
            if path.name in LATE_JOURNEYS:
                item.add_marker(pytest.mark.late_journey)


@pytest.fixture
def official_dir() -> Path:
    if not OFFICIAL.exists():
        pytest.fail(f"the released samples are missing at {OFFICIAL}")
    return OFFICIAL


@pytest.fixture
def shared_official_dir() -> Path:
    """The shared fixtures the shipped copy came from; skips when they are not beside the clone."""
    if not SHARED_OFFICIAL.is_dir():
        pytest.skip(f"shared fixtures not present at {SHARED_OFFICIAL}")
    return SHARED_OFFICIAL


@pytest.fixture
def isolated_env(tmp_path, monkeypatch):
    """A database and suite folder of the test's own."""
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    return tmp_path


@pytest.fixture(autouse=True)
def _restore_main_module():
    """Put ``sys.modules["__main__"]`` back after each test.

    Streamlit's AppTest runs the page as ``__main__`` from a temporary file and leaves it
    there. A later test that starts ``spawn`` workers would then make each child import
    that deleted file, fail, and be replaced for ever: the pool never returns.
    """
    main = sys.modules.get("__main__")
    yield
    if sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main
