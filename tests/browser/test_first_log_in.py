"""The first log-ins on a freshly started server (issue 19, item 5), with no warm-up and no retry.

On a fresh server Streamlit runs an app with a ``pages/`` folder in its legacy mode until
``st.navigation`` has run once; ``ensure_frame`` leaves that mode with a rerun. When several
sessions start at once, all of them begin in legacy mode, but only the first saw the
process-wide flag still on: the others drew the log-in form with legacy widget ids, and
their first log-in was dropped (27 of 30 over the websocket in the issue; 9 of 10 here
before the fix). Each session now tells a legacy run by the run itself.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from benchmarks.st_client import StreamlitClient
from structext_core.structext_eval import samples, suites
from structext_core.studio import accounts, storage
from structext_core.ui import light_nav
from tests.browser.conftest import running_app

pytestmark = pytest.mark.browser

SESSIONS = 10
TABS = 4
PASSWORD = "annotator-pw-1"


@pytest.fixture
def fresh_env(tmp_path, app_env) -> dict:
    """A new database and a suites folder that already holds the default suites (small ones:
    Home then has nothing to generate, so the first runs are short and overlap as they do
    on a real server)."""
    data_dir = tmp_path / "suites"
    data_dir.mkdir()
    for name in suites.SUITES:
        rows = [suites.generate_sample(task_id, 1, 1, suite=name, index=task_id) for task_id in (5, 6, 7)]
        samples.write_jsonl(suites.suite_path(name, data_dir), rows)
    # One account per session: the log-in throttle counts attempts of one name sent at once.
    db = storage.open_db(tmp_path / "fresh.db")
    users = [accounts.create_user(db, f"first{n}", PASSWORD, "annotator")["username"] for n in range(SESSIONS)]
    db.close()
    env = {**app_env["env"], "STRUCTEXT_DB": str(tmp_path / "fresh.db"), "STRUCTEXT_DATA_DIR": str(data_dir)}
    yield {"env": env, "log": tmp_path / "streamlit.log", "users": users}
    shutil.rmtree(data_dir, ignore_errors=True)


async def _log_in_once(url: str, user: str) -> bool:
    client = StreamlitClient(url)
    await client.connect()
    try:
        await client.run(timeout=90)
        client.type_text("User name", user)
        client.type_text("Password", PASSWORD)
        await client.click("Log in")
        # who is logged in shows under the menu (ui/light_nav.py)
        menu = next(c for name, c in client.components.items() if name.endswith(light_nav.COMPONENT_NAME))
        return (menu.data["who"] or {}).get("name") == user and not client.errors
    finally:
        await client.close()


def test_first_log_ins_of_sessions_started_at_once_over_the_websocket(fresh_env):
    with running_app(fresh_env["env"], fresh_env["log"]) as url:
        async def all_at_once():
            return await asyncio.gather(*(_log_in_once(url, user) for user in fresh_env["users"]))
        outcomes = asyncio.run(asyncio.wait_for(all_at_once(), timeout=180))
    assert outcomes == [True] * SESSIONS, f"{outcomes.count(False)} of {SESSIONS} first log-ins were dropped"


def test_first_log_ins_in_browser_tabs_opened_at_once(fresh_env, browser, wait_for_app, screenshot):
    with running_app(fresh_env["env"], fresh_env["log"]) as url:
        contexts = [browser.new_context(viewport={"width": 1400, "height": 900}) for _ in range(TABS)]
        try:
            tabs = [context.new_page() for context in contexts]
            for tab in tabs:  # all loading at once: their first runs overlap on the server
                tab.goto(url, wait_until="commit")
            for tab in tabs:
                wait_for_app(tab, timeout=90_000)
            for tab, user in zip(tabs, fresh_env["users"]):
                sidebar = tab.get_by_test_id("stSidebar")
                sidebar.get_by_label("User name", exact=True).fill(user)
                sidebar.get_by_label("Password", exact=True).fill(PASSWORD)
                sidebar.get_by_role("button", name="Log in").click()
            for tab in tabs:
                tab.get_by_test_id("stSidebar").get_by_text("Logged in as").wait_for(timeout=15_000)
            screenshot(tabs[-1], "first-log-in-fresh-server-tab")
        finally:
            for context in contexts:
                context.close()
