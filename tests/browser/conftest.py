"""Browser journeys: a real ``streamlit run server.py`` (the README's command) and headless Debian Chromium.

Fixtures for every journey:

- ``app_env``: the server's private paths and the admin account, one per test module:
  ``{"db_path", "data_dir", "admin_user", "admin_password", "env"}``. Write suite
  files into ``data_dir`` or open ``db_path`` with ``storage.open_db`` to prepare data.
- ``app_server``: the base URL (``http://127.0.0.1:<port>``) of the app started with
  that environment on a free port (no warm-up visit); stopped at the end of the module.
  ``running_app(env, log_path)`` starts another one (a context manager yielding the URL).
- ``browser``: one Chromium per module; ``page``: a new tab per test (1400 x 900 viewport) in
  the module's context, emptied of cookies and site storage before and after each test, so no
  log-in or session leaks between tests; ``browser.new_context()`` for a second person.
- ``wait_for_app(page)``: wait until the app has finished its current script run.
- ``screenshot(page, name)``: save ``tests/screenshots/<name>.png`` (full page) and
  return its path. Look at them: a page that works but looks wrong is not done.
- ``clock_seconds(page)`` (a function to import): the time a question's clock shows, once it
  shows one.

Playwright drives the system Chromium at /usr/bin/chromium; it never downloads a browser.

Every ``page`` fails its test if it asked any host but the server (the app runs offline and
tells no third party who opens it). A failed journey's report says what the page showed (its
text, script state, a screenshot ``tests/screenshots/FAILED-<test>.png``, the browser's console
errors and failed requests), how busy the machine was, and where each server's threads were.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
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
LOCAL_HOSTS = {"127.0.0.1", "localhost", None}  # None: data: and blob: URLs
#: An error box as a person sees it: Streamlit's, or a note of a panel (structext_core/ui/light_panel.py).
ERRORS = '[data-testid="stAlertContentError"], .sxp-error'
#: The servers running now (process, log): a failed journey reports where each of them is.
_RUNNING: list[tuple[subprocess.Popen, Path]] = []


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
        # Nothing of the checkout's own annotations/ folder: a test sees the same server on a
        # fresh clone as on a working copy where the app has already made its data.
        "STRUCTEXT_AIBENCH_DIR": str(base / "aibench"),
        "STRUCTEXT_RESULTS_DIR": str(base / "results"),
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
    command = [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless=true", "--server.address=127.0.0.1",
        "--server.fileWatcherType=none", "--server.runOnSave=false",
        "--browser.gatherUsageStats=false",
    ]
    with serving(command, env, log_path) as url:
        yield url


#: What streamlit logs when the port it was given is taken (then it exits with 1).
PORT_TAKEN = b"is not available"


@contextlib.contextmanager
def serving_script(folder: Path, name: str, script: str, app_env: dict):
    """Serve ``script`` (a page of its own, written to ``folder/name``) with the app's code importable; yield
    its URL (see :func:`serving`)."""
    (folder / name).write_text(script, encoding="utf-8")
    command = [sys.executable, "-m", "streamlit", "run", str(folder / name), "--server.headless=true",
               "--server.address=127.0.0.1", "--server.fileWatcherType=none", "--browser.gatherUsageStats=false"]
    with serving(command, {**app_env["env"], "PYTHONPATH": str(ROOT)}, folder / "streamlit.log") as url:
        yield url


@contextlib.contextmanager
def serving(command: list[str], env: dict, log_path: Path):
    """Run the streamlit ``command`` with ``--server.port=<a free port>`` appended, output to
    ``log_path``; yield the base URL once it answers its health check; stop it on exit.

    The suite runs on several workers at once (pytest-xdist), and a port the OS called free
    can be taken by another worker's server before this one binds it: then, and only then
    (streamlit says the port "is not available" and exits), it starts again on another port."""
    for attempt in range(1, 4):
        port = _free_port()
        with open(log_path, "wb") as log:
            process = subprocess.Popen([*command, f"--server.port={port}"], cwd=ROOT, env=env, stdout=log,
                                       stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        _RUNNING.append((process, log_path))
        try:
            if _wait_for_health(url, process, log_path, last_try=attempt == 3):
                yield url
                return
        finally:
            _RUNNING.remove((process, log_path))
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_health(url: str, process: subprocess.Popen, log: Path, last_try: bool = True) -> bool:
    """True once the server answers; False when it exited because its port was taken (and
    this is not the last try); fails the test on any other exit or after the start-up timeout."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            if not last_try and PORT_TAKEN in log.read_bytes():
                return False
            pytest.fail(f"streamlit exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return True
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail(f"streamlit did not answer on {url} within {STARTUP_TIMEOUT} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium driven by Playwright (one per test module: Playwright's synchronous
    API holds an event loop while it runs, and some modules run asyncio clients of their own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def _module_context(browser):
    """The browser context the ``page`` of each test in one module opens its tab in.

    A module's journeys all talk to the module's one server, and a fresh context has an empty
    cache: Chromium then downloads and compiles Streamlit's scripts again, about 2.5 s more of
    CPU per page than a tab of a context that has loaded them once. ``page`` empties the
    context's cookies and the site's storage before and after each test, so no log-in or
    setting reaches the next test (each tab is its own Streamlit session).
    """
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    yield context
    context.close()


def _forget(context) -> None:
    """No cookie, no site storage and no tab left in ``context``."""
    for tab in list(context.pages):
        with contextlib.suppress(Exception):  # a tab the journey broke on purpose may not answer
            tab.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        tab.close()
    context.clear_cookies()


@pytest.fixture
def page(_module_context):
    """A tab with no cookie and no stored state: its own Streamlit session (see _module_context)."""
    context = _module_context
    _forget(context)
    tab = context.new_page()
    _watch_for_errors(tab)
    outside: list[str] = []
    tab.on("request", lambda request: outside.append(request.url[:200])
           if urllib.parse.urlsplit(request.url).hostname not in LOCAL_HOSTS else None)
    yield tab
    _forget(context)
    _PAGE_ERRORS.pop(id(tab), None)
    # The app runs offline and tells no third party who opens it: no page asks another host.
    assert not outside, f"the page asked hosts other than this server for: {sorted(set(outside))[:10]}"


#: Per page: the browser's console errors and uncaught exceptions, for a failed journey's report.
_PAGE_ERRORS: dict[int, list[str]] = {}


def _watch_for_errors(tab) -> None:
    errors = _PAGE_ERRORS.setdefault(id(tab), [])
    tab.on("console", lambda message: errors.append(f"console {message.type}: {message.text[:500]}")
           if message.type in ("error", "warning") else None)
    tab.on("pageerror", lambda error: errors.append(f"uncaught: {str(error)[:500]}"))
    tab.on("requestfailed", lambda request: errors.append(
        f"request failed: {request.url[:200]} ({request.failure})"))


def _wait_for_app(page, timeout: float = 30_000) -> None:
    # Connected to the server, and no script run in progress. (A page with a ticking
    # ``run_every`` fragment is "running" briefly every tick; this waits between ticks.)
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
        '[data-test-script-state="notRunning"]',
        state="attached", timeout=timeout,
    )


def wait_until_still(page, quiet_ms: int = 300, timeout_ms: int = 15_000) -> None:
    """Wait until nothing on the page has changed for ``quiet_ms``: a widget a run has just drawn
    may still be mounted again by the browser (its code loaded late) after the run has ended, and
    a click on it meanwhile is lost (Explore's filters: the menu closed at once, the choice never
    sent)."""
    page.evaluate("""([quiet, timeout]) => new Promise((resolve, reject) => {
        const started = performance.now();
        let timer;
        const done = () => { observer.disconnect(); resolve(); };
        const observer = new MutationObserver(() => {
            clearTimeout(timer);
            if (performance.now() - started > timeout) {
                observer.disconnect();
                reject(new Error(`the page was still changing after ${timeout} ms`));
            } else {
                timer = setTimeout(done, quiet);
            }
        });
        observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
        timer = setTimeout(done, quiet);
    })""", [quiet_ms, timeout_ms])


def pick_option(page, box, option) -> None:
    """Open the menu of ``box`` (a select box's locator) and click ``option`` (a locator in the page),
    once the page has stopped changing; in the browser's own select box (a light chooser's), choose it. A click that lands while the menu of the box chosen before is
    still closing opens nothing, and a menu open while its box is mounted again closes by itself with
    the option never clicked (both seen on a loaded machine; the second failed CI at 6a2e504): the box
    is opened and the option clicked again then, three times at most."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    wait_until_still(page)
    if box.evaluate("node => node.tagName") == "SELECT":  # the browser's own select box (a light chooser)
        box.select_option(value=option.and_(box.locator("option")).get_attribute("value"))
        return
    for attempt in range(3):
        wait_until_still(page)
        box.click()
        try:
            option.click(timeout=10_000)
            return
        except PlaywrightTimeoutError:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")  # a menu still open closes: the next click opens it


def go_to_page(page, link_name: str, wait_for_app) -> None:
    """Follow the menu's link ``link_name`` until the menu marks it as the page shown (``aria-current``): a
    click landing while the last page runs again can be lost (CI at 4e096bc lost the rewrite journey's click
    on *Rewrite campaigns* right after Home's), and :func:`click_until` clicks again only then."""
    link = page.get_by_test_id("stSidebar").get_by_role("link", name=link_name, exact=True)
    click_until(page, link, link.and_(page.locator('[aria-current="page"]')))
    wait_for_app(page)


def click_until(page, target, expected, attempts: int = 3, prepare=None) -> None:
    """Click ``target`` (a button, an expander's title) once the page is still, until ``expected`` (a
    locator) shows. A click that lands while a run mounts the target again is lost (seen on a loaded
    machine: CI at 3f96b54 lost an expander's click on Studies and the *Import* button's on Accounts):
    when ``expected`` has not shown after the run has ended, the target is clicked again, three times
    at most. A click that did take is never repeated: the run it started is waited for first.
    ``prepare()``, if given, runs before each click (a form's fields filled again: a form mounted again
    shows its values from the server)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for attempt in range(attempts):
        wait_until_still(page)
        if prepare is not None:
            prepare()
        target.click()
        try:
            expected.wait_for(timeout=15_000)
            return
        except PlaywrightTimeoutError:
            wait_until_still(page)
            _wait_for_app(page, timeout=60_000)
            if expected.count() or attempt == attempts - 1:
                expected.wait_for(timeout=15_000)
                return


def open_create_account(page):
    """Accounts' "Create an account" form, its box opened first when it is closed (a click reruns the page):
    returned once the page is still and its run over. A name typed while that run still redrew the form
    could be lost (CI at 6ded306: the human journey waited 30 s for "created", and passed alone)."""
    form = page.get_by_test_id("stForm").filter(has_text="Create account")
    if not form.count():
        click_until(page, page.get_by_test_id("stExpander").filter(has_text="Create an account").locator("summary"),
                    form)
    wait_until_still(page)
    _wait_for_app(page, timeout=60_000)
    return form


@pytest.fixture
def wait_for_app():
    """``wait_for_app(page)``: block until the app's current script run has finished."""
    return _wait_for_app


#: What a question's clock shows: minutes and seconds, or hours, minutes and seconds.
CLOCK_TEXT = re.compile(r"\d+(:\d{2}){1,2}")


def clock_seconds(page, timeout: float = 10.0) -> int:
    """The time a question's clock shows (it ticks in the browser, structext_core/ui/clock.py), in
    seconds. Right after a page is drawn, or reloaded, the clock's component may not have
    written a time yet: this waits for one, ``timeout`` at most."""
    shown = page.get_by_test_id("hbClockValue").first
    deadline = time.monotonic() + timeout
    while not CLOCK_TEXT.fullmatch(text := shown.inner_text().strip()):
        if time.monotonic() > deadline:
            raise AssertionError(f"the clock shows {text!r}, not a time, after {timeout:.0f} s")
        page.wait_for_timeout(100)
    seconds = 0
    for part in text.split(":"):
        seconds = seconds * 60 + int(part)
    return seconds


@pytest.fixture
def screenshot():
    """``screenshot(page, name)``: a full-page PNG under tests/screenshots/; returns the path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


# What the clock's and the activity component's hubs hold (structext_core/ui/clock.py, activity.py):
# whether they can still send, whether their element is on the page, the last reply's stamp.
_HUBS_JS = """() => {
  const c = window.__structextClock, a = window.__structextActivity;
  const age = (t) => (typeof t === "number" ? Math.round((Date.now() - t) / 100) / 10 + " s ago" : t);
  return {
    clock: c ? { send: !!c.send, lastSend: !!c.lastSend, connected: !!(c.root && c.root.isConnected),
                 data: c.data && { assignment: c.data.assignment, stamp: c.data.stamp, running: c.data.running,
                                   show: c.data.show, route: !!c.data.beat },
                 noRoute: !!c.noRoute, inFlight: !!c.inFlight, lastBeat: age(c.lastBeat),
                 recheck: c.recheck && { stamp: c.recheck.stamp, due: age(c.recheck.due) } } : null,
    activity: a ? { send: !!a.send, lastSend: !!a.lastSend, connected: !!(a.root && a.root.isConnected),
                    assignment: a.data && a.data.assignment, lastSent: age(a.lastSent) } : null,
  };
}"""


def _page_now(tab, name: str) -> str:
    """Where the page was, what it showed, its script state, and the browser's errors; a
    screenshot beside the others (tests/screenshots/FAILED-<test>.png)."""
    lines = []
    try:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"FAILED-{name[:80]}.png"
        tab.screenshot(path=str(path), full_page=True, timeout=10_000)
        app = tab.locator('[data-testid="stApp"]')
        state = (f"connection {app.get_attribute('data-test-connection-state', timeout=5_000)}, "
                 f"script {app.get_attribute('data-test-script-state', timeout=5_000)}") if app.count() else "no stApp"
        lines += [f"url {tab.url}; {state}; screenshot {path}",
                  "text: " + tab.locator("body").inner_text(timeout=5_000)[:1500].replace("\n", " | ")]
        lines.append("clock and activity in the page: " + str(tab.evaluate(_HUBS_JS)))
    except Exception as error:  # noqa: BLE001 - a report of a failure must not fail in turn
        lines.append(f"(the page could not be read: {error!r:.300})")
    errors = _PAGE_ERRORS.get(id(tab), [])
    lines += ["browser errors:"] + (errors[-30:] or ["(none)"])
    return "\n".join(lines)


def _tabs_of(tab) -> list:
    try:
        return [other for other in tab.context.pages if not other.is_closed()]
    except Exception:  # noqa: BLE001 - a closed context has no tabs to report
        return []


def _machine_now() -> str:
    """The load and the busiest processes: was the machine busy with something else?"""
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    try:
        busiest = subprocess.run(["ps", "-eo", "pcpu,rss,etime,args", "--sort=-pcpu"], capture_output=True,
                                 text=True, timeout=10).stdout.splitlines()[:8]
    except (OSError, subprocess.SubprocessError) as error:
        busiest = [f"(ps failed: {error})"]
    return f"load average {load}\n" + "\n".join(line[:200] for line in busiest)


def _servers_now() -> str:
    """Each running server's threads (server.py dumps them on SIGUSR1) and its log's end."""
    parts = []
    for process, _log in list(_RUNNING):
        if process.poll() is None:
            process.send_signal(signal.SIGUSR1)
    time.sleep(1.0)
    for process, log_path in list(_RUNNING):
        text = log_path.read_text(errors="replace") if log_path.exists() else ""
        parts.append(f"--- server pid {process.pid} (exit {process.poll()}), end of {log_path}:\n{text[-12_000:]}")
    return "\n".join(parts) or "(no server running)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed journey says what the machine and the servers were doing at that moment."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        tab = item.funcargs.get("page")
        if tab is not None:
            # Every tab of the journey's browser (a test may open more than one).
            tabs = [tab] + [other for other in _tabs_of(tab) if other is not tab]
            for number, each in enumerate(tabs, 1):
                title = "the page at the failure" + (f" (tab {number} of {len(tabs)})" if len(tabs) > 1 else "")
                report.sections.append((title, _page_now(each, item.name + (f"-tab{number}" if number > 1 else ""))))
        report.sections.append(("machine at the failure", _machine_now()))
        report.sections.append(("servers at the failure", _servers_now()))


@contextlib.contextmanager
def stored_synthetic_aibench(app_env: dict, tmp_path_factory, papers: int, *, predictions: bool = False):
    """``with`` it: the synthetic AIBench set of ``papers`` papers stored in a folder of the module's
    own (the folder is given), which the module's server reads and, inside the block, this process
    too (``STRUCTEXT_AIBENCH_DIR``); with the perfect reader's predictions when ``predictions``. Set up
    in the test process, so the server makes nothing on first view."""
    from structext_core.aibench import config as aibench_config
    from structext_core.aibench import store as aibench_store
    from structext_core.studio import sandbox

    root = tmp_path_factory.mktemp("aibench") / "aibench"
    app_env["env"][aibench_config.DIR_ENV] = str(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(aibench_config.DIR_ENV, str(root))
        patch.setattr(aibench_store, "SYNTHETIC_PAPERS", papers)
        pool = sandbox.WorkerPool(workers=1)
        try:
            (aibench_store.add_reference_predictions if predictions else aibench_store.ensure_synthetic)(pool)
        finally:
            pool.shutdown()
        yield root
