"""``python -m structext_core crowd``: two app processes behind Debian's HAProxy, gone through for real.

Two simulated browsers (benchmarks/st_client.py: the browser's websocket protocol, plain HTTP for the
rest) go through the proxy: an annotator logs in, answers nothing yet but opens an AIBench image
question with its clock, fetches the image, posts heartbeats to the clock's route, and reloads;
an admin downloads a selection from Explore (a file made on click, in the process that holds the
session). Every response names the process that served it (the ``X-Structext-Node`` header the
configuration adds; the ``STRUCTEXT_NODE`` cookie is the stickiness): each browser stays on its
own process, and the same image or download asked of the other process is not found there, so
stickiness is what makes them work. Then ``crowd stop`` ends every process.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from benchmarks.st_client import StreamlitClient
from structext_core.aibench import study as aibench_study
from structext_core.cli import crowd
from structext_core.cli.main import main as cli_main
from structext_core.structext_eval import samples, suites
from structext_core.studio import accounts, storage
from structext_core.ui import light_nav
from tests.browser.conftest import stored_synthetic_aibench

ROOT = Path(__file__).resolve().parents[2]
ADMIN, ADMIN_PASSWORD = "admin", "admin-password-1"
ANN, ANN_PASSWORD = "crowd-ann", "annotator-password-1"
CLOCK = "structext_question_clock"
SESSION_COOKIE_COMPONENT = "structext_session_cookie"


def _haproxy() -> str | None:
    try:
        return crowd.find_haproxy()
    except crowd.UsageError:
        return None


HAPROXY = _haproxy()


def _free_ports(n: int) -> list[int]:
    """``n`` ports free now, all different: each socket is held until every port is chosen (two sockets
    bound and closed in turn may be given one port, and the proxy's port then reads as an app's)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _run(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "structext_core", "crowd", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def _needs_haproxy() -> None:
    if HAPROXY is None:
        ci = (ROOT / ".ci" / "run").read_text()
        assert "apt-get install" in ci and "missing+=(haproxy)" in ci, \
            "haproxy is missing and .ci/run does not install it: CI would never run the proxy test"
        pytest.skip("haproxy is not installed here (Debian: apt-get install haproxy; .ci/run installs it)")


# ------------------------------------------------------------------------------ the configuration
def test_the_generated_configuration_is_the_one_the_deployment_guide_shows():
    guide = (ROOT / "docs" / "deployment.md").read_text()
    shown = re.search(r"<!-- haproxy.cfg: crowd config --processes 2 --port 8500 -->\n```\n(.*?)```", guide, re.S)
    assert shown, "docs/deployment.md has lost the generated configuration block"
    assert shown.group(1) == crowd.haproxy_config(2, 8500)


def test_the_configuration_is_sticky_with_a_long_websocket_timeout_and_one_server_per_process():
    text = crowd.haproxy_config(3, 9000, app_port=9100, bind="127.0.0.1")
    assert "bind 127.0.0.1:9000" in text
    assert "cookie STRUCTEXT_NODE insert indirect nocache" in text and "timeout tunnel 1d" in text
    assert re.findall(r"server (\w+) 127\.0\.0\.1:(\d+) check cookie (\w+)", text) == [
        ("a", "9100", "a"), ("b", "9101", "b"), ("c", "9102", "c")]
    if HAPROXY:
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"structext-crowd-check-{os.getpid()}.cfg"
        path.write_text(text)
        try:
            checked = subprocess.run([HAPROXY, "-c", "-q", "-f", str(path)], capture_output=True, text=True)
        finally:
            path.unlink()
        assert checked.returncode == 0, checked.stderr


def _refused(capsys, *argv: str) -> str:
    """Run ``crowd ...`` in this process (nothing starts when it is refused): its error message."""
    status = cli_main(["crowd", *argv])
    err = capsys.readouterr().err
    assert status == 2, err
    return err


@pytest.mark.parametrize("argv, message", [
    (["start", "--haproxy", "no-such-haproxy"], "haproxy was not found"),
    (["start", "--processes", "0"], "--processes must be between 1 and 64"),
    (["start", "--port", "8500", "--app-port", "8500"], "also an app process's port"),
    (["start", "--port", "70000"], "port 70000 is out of range"),
])
def test_mistakes_are_refused_with_exit_2_and_a_message(tmp_path, capsys, argv, message):
    assert message in _refused(capsys, *argv, "--run-dir", str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()  # nothing written


def test_stop_without_a_running_crowd_says_so(tmp_path, capsys):
    (tmp_path / crowd.PID_FILE).write_text(f"{os.getpid()}\n")  # a live pid, but not a crowd's
    assert "no crowd started from" in _refused(capsys, "stop", "--run-dir", str(tmp_path))


def test_a_taken_port_is_refused_before_anything_starts(tmp_path, capsys):
    _needs_haproxy()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = _refused(capsys, "start", "--port", str(port), "--bind", "127.0.0.1", "--run-dir", str(tmp_path / "run"))
    assert f"port {port}, for the proxy" in err
    assert not (tmp_path / "run").exists()


def test_a_configuration_file_we_did_not_write_is_left_alone(tmp_path, capsys):
    _needs_haproxy()
    (tmp_path / "haproxy.cfg").write_text("global\n  # the lab's own\n")
    port, app_port = _free_ports(2)
    err = _refused(capsys, "start", "--port", str(port), "--app-port", str(app_port),
                   "--bind", "127.0.0.1", "--run-dir", str(tmp_path))
    assert "was not written by this command" in err
    assert (tmp_path / "haproxy.cfg").read_text() == "global\n  # the lab's own\n"


# ------------------------------------------------------------------------------ through the proxy
@pytest.fixture(scope="module")
def crowd_env(tmp_path_factory) -> dict:
    """A database with an annotator in an AIBench image study (3 synthetic papers), small suites."""
    base = tmp_path_factory.mktemp("crowd")
    data_dir = base / "suites"
    data_dir.mkdir()
    for name in suites.SUITES:
        rows = [suites.generate_sample(task_id, 1, 1, suite=name, index=task_id) for task_id in (5, 6, 7)]
        samples.write_jsonl(suites.suite_path(name, data_dir), rows)
    env = {**os.environ, "STRUCTEXT_DB": str(base / "structext.db"), "STRUCTEXT_DATA_DIR": str(data_dir),
           "STRUCTEXT_ADMIN_USER": ADMIN, "STRUCTEXT_ADMIN_PASSWORD": ADMIN_PASSWORD,
           "STRUCTEXT_RESULTS_DIR": str(base / "results"), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    holder = {"env": env}
    with stored_synthetic_aibench(holder, tmp_path_factory, 3):
        db = storage.open_db(base / "structext.db")
        ann = accounts.create_user(db, ANN, ANN_PASSWORD, "annotator")
        aibench_study.create_aibench_study(db, name="crowd images", dataset="synthetic", n_items=2,
                                           annotator_ids=[ann["id"]], seed=4)
        db.close()
    return {"env": holder["env"], "run_dir": base / "run", "base": base}


@pytest.fixture(scope="module")
def proxy(crowd_env):
    """``crowd start --processes 2`` on free ports: yields the proxy's URL; ``crowd stop`` at the end."""
    _needs_haproxy()
    for _ in range(3):  # a port the OS called free may be taken meanwhile by another test's server
        port, app_port = _free_ports(2)
        log = crowd_env["base"] / "crowd.log"
        with open(log, "wb") as out:
            supervisor = subprocess.Popen(
                [sys.executable, "-m", "structext_core", "crowd", "start", "--processes", "2", "--port", str(port),
                 "--app-port", str(app_port), "--bind", "127.0.0.1", "--run-dir", crowd_env["run_dir"].name],
                cwd=crowd_env["base"], env={**crowd_env["env"], "PYTHONPATH": str(ROOT)}, stdout=out,
                stderr=subprocess.STDOUT)  # started elsewhere than the checkout, its folder given relative to there
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and supervisor.poll() is None and b"serving" not in log.read_bytes():
            time.sleep(0.2)
        if supervisor.poll() is None and b"serving" in log.read_bytes():
            break
        supervisor.kill()
        supervisor.wait()
        if b"is taken" not in log.read_bytes():
            pytest.fail(f"crowd start did not serve:\n{log.read_text()[-3000:]}")
    else:
        pytest.fail(f"crowd start found no free ports three times:\n{log.read_text()[-3000:]}")
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(supervisor.pid)], capture_output=True,
                              text=True).stdout.split()
    try:
        yield {"url": f"http://127.0.0.1:{port}", "children": [int(pid) for pid in children]}
    finally:
        stopped = _run("stop", "--run-dir", str(crowd_env["run_dir"]))
        if supervisor.poll() is None:
            supervisor.kill()
        supervisor.wait(30)
    assert stopped.returncode == 0, stopped.stderr
    assert len(children) == 3  # two app processes and haproxy
    assert not [pid for pid in children if crowd._alive(pid)], "crowd stop left processes behind"
    assert not (crowd_env["run_dir"] / crowd.PID_FILE).exists()


class Browser:
    """One browser: its cookies (the proxy's and the app's session) and its tab's websocket."""

    def __init__(self, url: str):
        self.url = url
        self.http = httpx.AsyncClient(base_url=url, timeout=30)
        self.node = ""
        self.tab: StreamlitClient | None = None

    async def load(self) -> StreamlitClient:
        """Load the page (the proxy's cookie on the first load) and open its websocket."""
        page = await self.http.get("/")
        assert page.status_code == 200
        self.node = self.node or page.cookies.get(crowd.COOKIE, "")
        assert self.node and page.headers[crowd.NODE_HEADER] == self.node
        if self.tab is not None:
            await self.tab.close()
        self.tab = StreamlitClient(self.url, cookies=dict(self.http.cookies))
        await self.tab.connect()
        assert self.tab.handshake_headers[crowd.NODE_HEADER] == self.node  # the websocket too
        await self.tab.run(timeout=90)
        return self.tab

    async def log_in(self, user: str, password: str) -> None:
        self.tab.type_text("User name", user)
        self.tab.type_text("Password", password)
        result = await self.tab.click("Log in")
        # who is logged in shows under the menu (ui/light_nav.py)
        menu = next(c for name, c in self.tab.components.items() if name.endswith(light_nav.COMPONENT_NAME))
        assert (menu.data["who"] or {}).get("name") == user, (menu.data, result.texts)
        # As the page's script does: the session's cookie, carried by the next websocket handshake.
        cookie = self.tab.components[SESSION_COOKIE_COMPONENT].data["cookie"]
        name, value = cookie.split(";", 1)[0].split("=", 1)
        self.http.cookies.set(name, value)

    async def get(self, path: str, node: str | None = None) -> httpx.Response:
        """GET through the proxy with this browser's cookies (or with another process's cookie)."""
        cookies = {**dict(self.http.cookies), crowd.COOKIE: node or self.node}
        async with httpx.AsyncClient(base_url=self.url, timeout=30) as plain:
            return await plain.get(path, headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})

    async def close(self) -> None:
        if self.tab is not None:
            await self.tab.close()
        await self.http.aclose()


def _other(node: str) -> str:
    return "b" if node == "a" else "a"


async def _annotator(url: str) -> str:
    ann = Browser(url)
    try:
        await ann.load()
        await ann.log_in(ANN, ANN_PASSWORD)
        await ann.tab.open_page("Human baseline")
        if "I have read the rule: start" in ann.tab.widgets:
            await ann.tab.click("I have read the rule: start")
        clock = ann.tab.components[CLOCK].data
        assert clock and clock.get("beat"), f"no clock with a heartbeat route on the question: {clock}"
        image = ann.tab.images[-1]
        fetched = await ann.get(image)
        assert fetched.status_code == 200 and fetched.headers["content-type"].startswith("image/")
        assert fetched.headers[crowd.NODE_HEADER] == ann.node
        assert (await ann.get(image, node=_other(ann.node))).status_code == 404  # the other process has no such file

        route = clock["beat"]
        for _ in range(3):
            beat = await ann.http.post(route["url"], json={key: route[key] for key in ("kind", "item", "tab", "pass")}
                                       | {"visible": True})
            assert beat.status_code == 200 and beat.json()["state"] in route["stay"], beat.text
            assert beat.headers[crowd.NODE_HEADER] == ann.node

        await ann.load()  # a reload: the same process, still logged in, the same question and clock
        await ann.tab.open_page("Human baseline")
        again = ann.tab.components[CLOCK].data
        assert again["assignment"] == clock["assignment"], (again, clock)
        assert (await ann.get(ann.tab.images[-1])).status_code == 200
        return ann.node
    finally:
        await ann.close()


async def _admin_download(url: str) -> str:
    admin = Browser(url)
    try:
        await admin.load()
        await admin.log_in(ADMIN, ADMIN_PASSWORD)
        await admin.tab.open_page("Explore")
        label = next((label for label in admin.tab.downloads if label.startswith("Download ")), None)
        assert label, f"no download on Explore: {sorted(admin.tab.downloads)}"
        file_url = await admin.tab.download_url(label)
        got = await admin.get(file_url)
        assert got.status_code == 200 and got.headers[crowd.NODE_HEADER] == admin.node
        lines = [json.loads(line) for line in got.text.splitlines()]
        assert lines and all("reference" in line for line in lines)
        assert (await admin.get(file_url, node=_other(admin.node))).status_code == 404
        return admin.node
    finally:
        await admin.close()


def test_two_browsers_each_stay_on_their_process_through_the_proxy(proxy):
    async def both():
        return await asyncio.gather(_annotator(proxy["url"]), _admin_download(proxy["url"]))
    nodes = asyncio.run(asyncio.wait_for(both(), timeout=120))
    assert sorted(nodes) == ["a", "b"]  # round robin: one browser on each process
