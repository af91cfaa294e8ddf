"""``bash start.sh``, the README's first command: on a fresh machine it makes ``.venv``, installs what
is missing (the app's pins and this checkout with its Inspect extra) and starts the app; run again,
it only starts.

The script runs for real (bash, a real ``.venv`` made by a real ``python -m venv``, its real check of
the installed packages through ``importlib.metadata``) in a copy of the files it reads, with two
stand-ins: ``pip``, which records its arguments and writes each package's metadata into the venv's
site-packages as pip would (nothing is downloaded), and ``streamlit``, which records how it was
started. So a second run that installs, a missing package that is not installed again, or a start
that never comes fails a test here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = ("start.sh", "requirements.txt", "requirements-dev.txt", "pyproject.toml")

#: pip's stand-in: `install -r FILE ... -c FILE ... -e .[inspect]` writes a dist-info per package
#: (name and version, and for the checkout pip's direct_url.json of an editable install).
FAKE_PIP = r'''
import json, os, re, sys, sysconfig, tomllib
from pathlib import Path

log = Path(os.environ["FAKE_LOG"])
with log.open("a") as out:
    out.write("pip " + json.dumps(sys.argv[1:]) + "\n")
if os.environ.get("FAKE_PIP_FAIL"):
    print("ERROR: no network", file=sys.stderr)
    sys.exit(1)
site = Path(sysconfig.get_paths()["purelib"])
pin = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")

def pins(path):
    return dict(m.groups() for m in map(pin.match, Path(path).read_text().splitlines()) if m)

def install(name, version, direct_url=None, entry_points=""):
    if name == os.environ.get("FAKE_PIP_SKIP"):
        return
    for old in site.glob(re.sub(r"[-_.]+", "_", name).lower() + "-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    info = site / f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if direct_url:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    if entry_points:
        (info / "entry_points.txt").write_text(entry_points)

args = sys.argv[1:]
assert args[0] == "install", args
constraints = {}
for flag, value in zip(args, args[1:]):
    if flag == "-c":
        constraints.update(pins(value))
for flag, value in zip(args, args[1:]):
    if flag == "-r":
        for name, version in pins(value).items():
            install(name, version)
    if flag == "-e":
        assert value == ".[inspect]", value
        project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
        groups = {"console_scripts": project.get("scripts", {}), **project.get("entry-points", {})}
        points = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in names.items()) + "\n"
                         for group, names in groups.items())
        install(project["name"], project["version"], {"url": "file://" + os.getcwd(), "dir_info": {"editable": True}},
                points)
        install("inspect-ai", constraints["inspect-ai"])
'''

FAKE_STREAMLIT = r'''
import json, os, sys
with open(os.environ["FAKE_LOG"], "a") as out:
    out.write("streamlit " + json.dumps({"args": sys.argv[1:], "cwd": os.getcwd()}) + "\n")
'''

#: python3's stand-in for `-m venv .venv`: a real venv (without pip, so nothing is downloaded),
#: then pip's and streamlit's stand-ins in its bin/. Anything else goes to the real interpreter.
FAKE_PYTHON = r'''#!/bin/sh
if [ "$1 $2" = "-m venv" ]; then
  echo "python3 -m venv $3" >>"$FAKE_LOG"
  "$REAL_PYTHON" -m venv --without-pip "$3" || exit 1
  venv=$(cd "$3" && pwd)
  printf '#!/bin/sh\nexec "%s/bin/python" "%s/pip.py" "$@"\n' "$venv" "$FAKE_DIR" >"$3/bin/pip"
  printf '#!/bin/sh\nexec "%s/bin/python" "%s/streamlit.py" "$@"\n' "$venv" "$FAKE_DIR" >"$3/bin/streamlit"
  chmod +x "$3/bin/pip" "$3/bin/streamlit"
  exit 0
fi
exec "$REAL_PYTHON" "$@"
'''


@pytest.fixture
def checkout(tmp_path):
    """A copy of the files start.sh reads, and a way to run it; returns (folder, run, log)."""
    project = tmp_path / "project folder"  # a space in the path, as a lab's folder may have
    project.mkdir()
    for name in FILES:
        shutil.copy(ROOT / name, project / name)
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "pip.py").write_text(FAKE_PIP)
    (fake / "streamlit.py").write_text(FAKE_STREAMLIT)
    (fake / "python3").write_text(FAKE_PYTHON)
    (fake / "python3").chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    env = {**os.environ, "PYTHON": str(fake / "python3"), "REAL_PYTHON": sys.executable, "FAKE_DIR": str(fake),
           "FAKE_LOG": str(log)}
    env.pop("VIRTUAL_ENV", None)

    def run(*args, **extra):
        return subprocess.run(["bash", str(project / "start.sh"), *args], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)

    return project, run, log


def calls(log, tool):
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines() if line.startswith(tool + " ")]


def site_packages(project):
    return next((project / ".venv" / "lib").glob("python3*/site-packages"))


def test_the_first_run_installs_and_starts_and_the_second_only_starts(checkout):
    project, run, log = checkout
    first = run("--server.port", "8600")
    assert first.returncode == 0, first.stderr
    assert "python3 -m venv .venv" in log.read_text()
    assert calls(log, "pip") == [["install", "--disable-pip-version-check", "-r", "requirements.txt",
                                  "-c", "requirements-dev.txt", "-e", ".[inspect]"]]
    assert "installing into .venv (the first time, a few minutes)" in first.stderr and "streamlit (not installed)" in first.stderr
    dev_pin = next(line for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
                   if line.startswith("inspect-ai=="))
    assert (site_packages(project) / f"inspect_ai-{dev_pin.split('==')[1]}.dist-info").is_dir()
    started = calls(log, "streamlit")
    assert started == [{"args": ["run", "server.py", "--server.port", "8600"], "cwd": str(project)}]

    second = run()
    assert second.returncode == 0, second.stderr
    assert len(calls(log, "pip")) == 1, "the second run installed again"
    assert log.read_text().count("-m venv") == 1
    assert calls(log, "streamlit")[1:] == [{"args": ["run", "server.py"], "cwd": str(project)}]
    assert second.stderr == ""


def test_what_is_missing_or_out_of_date_is_installed_again(checkout):
    project, run, log = checkout
    assert run().returncode == 0

    def again(says):
        before = len(calls(log, "pip"))
        result = run()
        assert result.returncode == 0 and says in result.stderr, result.stderr
        assert len(calls(log, "pip")) == before + 1
        assert run().returncode == 0 and len(calls(log, "pip")) == before + 1, "installed twice"

    # A package removed from .venv
    for info in site_packages(project).glob("inspect_ai-*.dist-info"):
        shutil.rmtree(info)
    again("inspect-ai (not installed)")
    # A pin changed in requirements.txt (a new version of the app's requirements)
    requirements = project / "requirements.txt"
    requirements.write_text(requirements.read_text().replace("streamlit==", "streamlit==0.0.1\n# was: "))
    again("streamlit (")
    # This checkout installed from another folder (a moved project)
    direct_url = next(site_packages(project).glob("structext_studio-*.dist-info")) / "direct_url.json"
    direct_url.write_text(json.dumps({"url": "file:///elsewhere", "dir_info": {"editable": True}}))
    again("this checkout")
    # pyproject.toml declares a new benchmark (an entry point the installed metadata lacks)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        '[project.entry-points."structext_studio.benchmarks"]\n',
        '[project.entry-points."structext_studio.benchmarks"]\nnew-bench = "structext_core.new.member"\n'))
    again("as pyproject.toml declares it now")
    # A comment added to a requirement file changes nothing to install
    with requirements.open("a") as file:
        file.write("# a comment\n")
    assert run().returncode == 0 and len(calls(log, "pip")) == 5
    assert len(calls(log, "streamlit")) == 1 + 4 * 2 + 1


def test_a_failed_install_does_not_start_and_is_tried_again(checkout):
    project, run, log = checkout
    failed = run(FAKE_PIP_FAIL="1")
    assert failed.returncode != 0 and "no network" in failed.stderr
    assert calls(log, "streamlit") == []
    retried = run()
    assert retried.returncode == 0 and len(calls(log, "pip")) == 2 and len(calls(log, "streamlit")) == 1


def test_the_inspect_extra_is_declared_and_its_pin_fits_it():
    """start.sh installs `.[inspect]` constrained by requirements-dev.txt's pin: the pin must be in
    the extra's range, else pip refuses the install."""
    from packaging.requirements import Requirement

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["inspect"]
    requirement = Requirement(extra[0])
    pin = next(line.split("==")[1].split()[0] for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
               if line.startswith(f"{requirement.name}=="))
    assert requirement.name == "inspect-ai" and requirement.specifier.contains(pin)
    assert "-e '.[inspect]'" in (ROOT / "start.sh").read_text()


def test_the_install_hints_name_this_checkout_not_a_registry_package():
    from structext_core.studio.study import inspect_log

    assert "start.sh" in inspect_log.INSTALL_HINT and ".[inspect]" in inspect_log.INSTALL_HINT
    sources = [p for p in (ROOT / "structext_core").rglob("*.py")] + [ROOT / "README.md"]
    sources += list((ROOT / "docs").rglob("*.md"))
    assert [str(p) for p in sources if "structext-studio[" in p.read_text(encoding="utf-8")] == []


def test_a_venv_the_install_leaves_incomplete_is_not_started(checkout):
    project, run, log = checkout
    result = run(FAKE_PIP_SKIP="inspect-ai")  # pip says it succeeded, yet Inspect AI is not there
    assert result.returncode != 0 and "still missing after the install: inspect-ai (not installed)" in result.stderr
    assert calls(log, "streamlit") == []


def test_a_venv_of_an_old_python_is_refused_with_what_to_do(checkout):
    project, run, log = checkout
    (project / ".venv" / "bin").mkdir(parents=True)
    old = project / ".venv" / "bin" / "python"
    old.write_text("#!/bin/sh\nexit 1\n")  # what `python -c 'sys.exit(version < (3, 11))'` says on 3.10
    old.chmod(0o755)
    result = run()
    assert result.returncode == 1 and "remove the .venv folder and run start.sh again" in result.stderr
    assert calls(log, "pip") == [] and calls(log, "streamlit") == []
