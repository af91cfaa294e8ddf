"""The README's run command serves a Home page that renders without an error, and Explore works."""

import os
import re
import shlex
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import pick_option, serving

ROOT = Path(__file__).resolve().parents[2]


def readme_setup_commands() -> list[str]:
    """The commands of the README's "Set up on a fresh machine", one code block each."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [c.strip() for c in re.findall(r"```bash\n(.*?)```", section, re.S)]


def readme_run_command() -> str:
    """The README's start command (it installs what is missing, then starts): its first, one line."""
    run = readme_setup_commands()[0]
    assert run.count("\n") == 0 and "&&" not in run, run
    return run


def test_readme_has_the_start_and_the_test_command_each_on_its_own():
    """Two commands: the app (start.sh installs what is missing, then starts; tests/test_start_script.py),
    then the test suite."""
    assert readme_setup_commands() == ["bash start.sh", "bash .ci/run"]


@pytest.fixture(scope="module")
def readme_server(tmp_path_factory):
    """The README's command, as written, on a free port with private data folders (in .ci/run's .venv,
    which holds everything start.sh checks for, so it only starts)."""
    base = tmp_path_factory.mktemp("readme")
    env = {**os.environ, "STRUCTEXT_DB": str(base / "db.sqlite"), "STRUCTEXT_DATA_DIR": str(base / "suites")}
    env.pop("STRUCTEXT_ADMIN_USER", None)
    env.pop("STRUCTEXT_ADMIN_PASSWORD", None)
    cmd = shlex.split(readme_run_command()) + ["--server.address=127.0.0.1", "--server.headless=true"]
    with serving(cmd, env, base / "log.txt") as url:
        yield url, base


@pytest.mark.browser
def test_home_renders_and_generates_defaults(readme_server, page, wait_for_app, screenshot):
    url, base = readme_server
    page.goto(url)
    page.get_by_text("Generated test, test-hard").wait_for(timeout=120_000)
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_role("heading", name="StrucText Studio", exact=True).count() == 1
    assert page.get_by_text("Welcome: create the admin account").count() == 1  # first run, in the sidebar
    assert (base / "suites" / "test.jsonl").exists() and (base / "suites" / "test-hard.jsonl").exists()
    screenshot(page, "home")


@pytest.mark.browser
def test_explore_shows_a_json_sample(readme_server, page, wait_for_app, screenshot):
    from structext_core.studio import access, accounts, storage

    url, base = readme_server
    # Explore is for researchers and admins; an admin opens it to everyone (public read-only mode).
    db = storage.open_db(base / "db.sqlite")
    access.set_public_mode(db, True, accounts.create_user(db, "lead", "admin-password-1", "admin"))
    if not (base / "suites" / "test-hard.jsonl").exists():  # run alone (not after the test of Home): Home generates them
        page.goto(url)
        page.get_by_text("Generated test, test-hard").wait_for(timeout=120_000)
    page.goto(url + "/explore")
    wait_for_app(page)
    page.get_by_text("3,712 of 3,712 samples match").wait_for()
    page.get_by_text("Filters: format, task, depth, width").click()  # the filters' box: drawn once opened
    formats = page.get_by_role("combobox", name="Format")
    formats.wait_for()
    wait_for_app(page)
    # once the box's widgets are mounted for good (a click before: the menu closed at once)
    pick_option(page, formats, page.get_by_role("option", name="json", exact=True))
    page.keyboard.press("Escape")
    page.get_by_text("640 of 3,712 samples match").wait_for()
    wait_for_app(page)
    assert page.get_by_text("8 · json TR: json-object-by-id").count() == 1
    # The sample is a number among the 640 (with steps), not a list of their ids; its facts name it.
    about = page.locator(".sx-card-facts").filter(has_text="· format json ·")
    first = about.inner_text()
    number = page.get_by_role("spinbutton", name="Sample (1 to 640)")
    number.press("ArrowUp")  # a step up, as the box's arrow does
    expect(number).to_have_value("2")
    # (the box shows 2 at once; the caption changes once the rerun the step starts has drawn)
    expect(about).not_to_have_text(first, timeout=30_000)
    wait_for_app(page)
    assert about.inner_text().split(" · ")[0].startswith("test-t")
    page.get_by_role("tab", name="Raw text").click()
    assert page.locator('[data-testid="stException"]').count() == 0
    screenshot(page, "explore-json")
