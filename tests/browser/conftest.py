"""Browser journeys: a real ``streamlit run server.py`` (the README's command) and headless Debian Chromium.

Fixtures for every journey:

- ``app_env``: the server's private paths and the admin account, one per test module:
  ``{"db_path", "data_dir", "admin_user", "admin_password", "env"}``. Write suite
  files into ``data_dir`` or open ``db_path`` with ``storage.open_db`` to prepare data.
- ``app_server``: the base URL (``http://127.0.0.1:<port>``) of the app started with
  that environment on a free port (no warm-up visit); stopped at the end of the module.
  ``running_app(env, log_path)`` starts another one (a context manager yielding the URL).
- ``browser``: one Chromium per module; ``page``: a fresh context and tab per test
  (1400 x 900 viewport), so cookies and sessions never leak between tests.
- ``wait_for_app(page)``: wait until the app has finished its current script run.
- ``screenshot(page, name)``: save ``tests/screenshots/<name>.png`` (full page) and
  return its path. Look at them: a page that works but looks wrong is not done.

Playwright drives the system Chromium at /usr/bin/chromium; it never downloads a browser.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "server.py"  # the app (app.py) with the clock's heartbeat route, as the README runs it
SCREENSHOTS = ROOT / "tests" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run",
    "--disable-component-update", "--disable-sync",
]
ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-password-1"
STARTUP_TIMEOUT = 90


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def app_env(tmp_path_factory) -> dict:
    """Private database, suites folder and admin account for this module's server."""
    base = tmp_path_factory.mktemp("app")
    env = {
        **os.environ,
        "STRUCTEXT_DB": str(base / "structext.db"),
        "STRUCTEXT_DATA_DIR": str(base / "suites"),
        "STRUCTEXT_ADMIN_USER": ADMIN_USER,
        "STRUCTEXT_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    (base / "suites").mkdir()
    return {
        "db_path": base / "structext.db",
        "data_dir": base / "suites",
        "admin_user": ADMIN_USER,
        "admin_password": ADMIN_PASSWORD,
        "env": env,
        "log": base / "streamlit.log",
    }


@pytest.fixture(scope="module")
def app_server(app_env) -> str:
    """Start ``streamlit run server.py`` with ``app_env`` on a free port; yield its base URL.

    No warm-up visit and no retry anywhere: the first visit of each module's server is a
    fresh server's first visit, and a first log-in that is dropped fails the journey.
    """
    with running_app(app_env["env"], app_env["log"]) as url:
        yield url


@contextlib.contextmanager
def running_app(env: dict, log_path: Path):
    """``streamlit run server.py`` with ``env`` on a free port, output to ``log_path``:
    yields the base URL once the server answers its health check; stopped on exit."""
    assert APP.exists(), f"{APP} is missing: the journeys run the real app"
    port = _free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
        "--server.fileWatcherType=none", "--server.runOnSave=false",
        "--browser.gatherUsageStats=false",
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_health(url, process, log_path)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_health(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"streamlit exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail(f"streamlit did not answer on {url} within {STARTUP_TIMEOUT} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium driven by Playwright (one per test module)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh browser context (own cookies, own Streamlit session) and tab."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    tab = context.new_page()
    yield tab
    context.close()


def _wait_for_app(page, timeout: float = 30_000) -> None:
    # Connected to the server, and no script run in progress. (A page with a ticking
    # ``run_every`` fragment is "running" briefly every tick; this waits between ticks.)
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
        '[data-test-script-state="notRunning"]',
        state="attached", timeout=timeout,
    )


@pytest.fixture
def wait_for_app():
    """``wait_for_app(page)``: block until the app's current script run has finished."""
    return _wait_for_app


@pytest.fixture
def screenshot():
    """``screenshot(page, name)``: a full-page PNG under tests/screenshots/; returns the path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
