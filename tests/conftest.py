import os
import sys
from pathlib import Path

import pytest

# The app makes the synthetic AIBench set at first start in a background thread; the tests
# (and the servers the browser tests start, which inherit this) leave it out unless a test turns
# it on (tests/aibench/test_synthetic_at_start.py).
os.environ.setdefault("STRUCTEXT_AIBENCH_SYNTHETIC", "off")


def _scan_streamlit_components_once() -> None:
    """A running Streamlit server looks for installed custom components once, at start-up; each
    new ``AppTest`` looks again, reading the metadata of every installed distribution (about 0.5 s
    a test, most of an AppTest's time). The installed packages do not change while the suite runs
    (a test benchmark's entry point, tests/conftest.py's ``install_member``, is not a component),
    so the tests look once, as the server does."""
    import functools

    from streamlit.components.v2 import manifest_scanner

    manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


_scan_streamlit_components_once()

ROOT = Path(__file__).resolve().parent.parent
BROWSER_TESTS = ROOT / "tests" / "browser"
SHARED = ROOT.parent / "shared"
# The released samples, shipped inside the package (an unchanged copy of the shared fixtures),
# so the tests need nothing outside the clone.
OFFICIAL = ROOT / "structext_core" / "data" / "official"
SHARED_OFFICIAL = SHARED / "fixtures" / "official"


#: Journeys that spend most of their time waiting for the clock (idle pauses, hidden tabs,
#: heartbeats): they run first, while the other tests still use the cores, and the journeys that
#: keep Chromium and a server busy run last, when the cores are theirs.
WAITING_JOURNEYS = ("test_clock_browser.py", "test_clock_surfaces_browser.py", "test_question_page_browser.py")


def pytest_collection_modifyitems(items):
    """Every test under tests/browser drives Chromium: it carries the ``browser`` marker, so
    ``-m "not browser"`` leaves out every one of them (none can forget its decorator). .ci/run runs
    them one after another beside the others, the waiting ones first (a stable sort: each module's
    tests stay together and in order)."""
    for item in items:
        if BROWSER_TESTS in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)
    items.sort(key=lambda item: Path(str(item.path)).name not in WAITING_JOURNEYS)


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


@pytest.fixture
def install_member(tmp_path):
    """``install_member(distribution, name, module)``: register ``module`` as the benchmark ``name``
    the way an installed package does (a ``<distribution>-1.0.dist-info`` folder with its entry point,
    on ``sys.path``) and return its member module; undone after the test."""
    from structext_core import protocol

    folder = tmp_path / "dist"

    def install(distribution: str, name: str, module: str):
        dist = folder / f"{distribution}-1.0.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[{protocol.ENTRY_POINT_GROUP}]\n{name} = {module}\n")
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        protocol.reload()
        return protocol.get_module(name)

    yield install
    if str(folder) in sys.path:
        sys.path.remove(str(folder))
        protocol.reload()


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
