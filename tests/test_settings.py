"""structext_core.settings: every environment variable and default path, read in one place."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from structext_core import settings
from structext_core.structext_eval import suites
from structext_core.studio import accounts, sandbox, storage, study
from structext_core.text import limits

ROOT = Path(__file__).resolve().parent.parent
#: Modules that touch os.environ for a reason other than reading a setting.
ENVIRON_ALLOWED = {
    "structext_core/settings.py": "the one reader",
    "structext_core/studio/sandbox.py": "hands the server's environment to its worker processes",
    "structext_core/labset/inspect_task.py": "hands the caller's environment to the lab's task's child process, "
                                             "as `inspect eval` runs a task",
}


@pytest.fixture
def clean_env(monkeypatch):
    for name in list(vars(settings).values()):
        if isinstance(name, str) and name.startswith("STRUCTEXT_"):
            monkeypatch.delenv(name, raising=False)
    return monkeypatch


def environ_uses(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "environb"} \
                and isinstance(node.value, ast.Name) and node.value.id == "os":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                a.name in {"environ", "getenv"} for a in node.names):
            lines.append(node.lineno)
    return sorted(lines)


def test_only_settings_reads_the_environment():
    offenders = []
    for path in sorted([*(ROOT / "structext_core").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"]):
        rel = str(path.relative_to(ROOT))
        if rel in ENVIRON_ALLOWED:
            continue
        offenders += [f"{rel}:{line}" for line in environ_uses(path.read_text(encoding="utf-8"))]
    assert offenders == [], f"read the environment through structext_core.settings: {offenders}"


def test_the_environment_check_sees_every_form():
    assert environ_uses("import os\nos.environ.get('X')\nos.getenv('Y')\nfrom os import environ\n") == [2, 3, 4]


def test_default_paths_sit_under_the_project(clean_env):
    assert settings.db_path() == ROOT / "annotations" / "structext.db"
    assert settings.suites_dir() == ROOT / "annotations" / "suites"
    assert settings.results_dir() == ROOT / "annotations" / "results"
    assert settings.error_log_path() == ROOT / "annotations" / "errors.log"
    assert settings.exports_dir() == ROOT / "annotations" / "exports"
    assert (settings.official_dir() / "SOURCE.md").is_file()
    assert settings.scenario_file().is_file() and settings.paper_dir().is_dir()


def test_paths_follow_their_variables(clean_env, tmp_path):
    clean_env.setenv("STRUCTEXT_DB", str(tmp_path / "x" / "db.sqlite"))
    clean_env.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "s"))
    clean_env.setenv("STRUCTEXT_RESULTS_DIR", "  ~/results  ")
    assert settings.db_path() == tmp_path / "x" / "db.sqlite"
    assert storage.default_db_path() == settings.db_path()
    assert settings.error_log_path() == tmp_path / "x" / "errors.log"  # beside the database
    assert settings.exports_dir() == tmp_path / "x" / "exports"
    assert suites.data_dir() == tmp_path / "s"
    assert settings.results_dir() == Path.home() / "results"
    clean_env.setenv("STRUCTEXT_ERROR_LOG", str(tmp_path / "e.log"))
    assert settings.error_log_path() == tmp_path / "e.log"


def test_values_are_read_when_asked_not_at_import(clean_env):
    assert settings.sandbox_workers() == 2
    clean_env.setenv("STRUCTEXT_SANDBOX_WORKERS", "3")
    assert settings.sandbox_workers() == 3
    clean_env.setenv("STRUCTEXT_SESSION_HOURS", "0.5")
    assert accounts.session_lifetime_seconds() == 1800


@pytest.mark.parametrize("name, value, reader, error, message", [
    ("STRUCTEXT_SANDBOX_WORKERS", "two", lambda: sandbox.WorkerPool(), sandbox.SandboxUnavailable,
     "STRUCTEXT_SANDBOX_WORKERS='two' is not a whole number"),
    ("STRUCTEXT_SANDBOX_TIMEOUT", "-1", lambda: sandbox.WorkerPool(), sandbox.SandboxUnavailable,
     "STRUCTEXT_SANDBOX_TIMEOUT='-1' must be positive"),
    ("STRUCTEXT_SESSION_HOURS", "721", accounts.session_lifetime_seconds, accounts.AccountError,
     "STRUCTEXT_SESSION_HOURS='721' is not a session lifetime"),
    ("STRUCTEXT_SESSION_SECRET", "short", settings.session_secret, settings.SettingError,
     "STRUCTEXT_SESSION_SECRET is too short"),
    ("STRUCTEXT_HEARTBEAT_SECONDS", "0", study.clock_settings, study.StudyError,
     "STRUCTEXT_HEARTBEAT_SECONDS='0' must be a number of seconds from 1 to 60"),
    ("STRUCTEXT_IDLE_PAUSE_SECONDS", "5", study.clock_settings, study.StudyError,
     "STRUCTEXT_IDLE_PAUSE_SECONDS='5' must be a number of seconds from 10 to 86400 (or 0 for never)"),
])
def test_a_bad_value_names_the_variable_and_what_it_should_be(clean_env, name, value, reader, error, message):
    clean_env.setenv(name, value)
    with pytest.raises(error) as raised:
        reader()
    assert message in str(raised.value)


def test_the_public_url_is_a_web_address_or_unset(clean_env):
    assert settings.public_url() == ""
    clean_env.setenv("STRUCTEXT_PUBLIC_URL", " https://lab.example.org/studio/ ")
    assert settings.public_url() == "https://lab.example.org/studio"
    for bad in ("lab.example.org", "https://lab.example.org/?x=1", "javascript:alert(1)", "https://a b"):
        clean_env.setenv("STRUCTEXT_PUBLIC_URL", bad)
        with pytest.raises(settings.SettingError, match="STRUCTEXT_PUBLIC_URL=.* must be a web address"):
            settings.public_url()


def test_idle_pause_zero_means_never(clean_env):
    clean_env.setenv("STRUCTEXT_IDLE_PAUSE_SECONDS", "0")
    assert study.clock_settings().idle_pause_seconds == 0


def test_limits_come_from_settings(clean_env):
    assert settings.limit("MAX_DEPTH", 7) == 7
    clean_env.setenv("STRUCTEXT_LIMIT_MAX_DEPTH", "12")
    assert settings.limit("MAX_DEPTH", 7) == 12
    clean_env.setenv("STRUCTEXT_LIMIT_MAX_DEPTH", "0")
    with pytest.raises(settings.SettingError, match="STRUCTEXT_LIMIT_MAX_DEPTH='0' must be a positive whole number"):
        settings.limit("MAX_DEPTH", 7)
    with pytest.raises(ValueError, match="not a limit name"):
        settings.limit("max depth", 7)
    assert isinstance(limits.MAX_NAME_CHARS, int)


def test_admin_credentials_keep_the_password_as_typed(clean_env):
    clean_env.setenv("STRUCTEXT_ADMIN_USER", "  lead ")
    clean_env.setenv("STRUCTEXT_ADMIN_PASSWORD", " spaced password ")
    assert settings.admin_credentials() == ("lead", " spaced password ")
