#!/usr/bin/env bash
# The README's first command: `bash start.sh` from the project folder. On a fresh machine it makes
# .venv, installs the app's pinned requirements and this checkout with its Inspect AI extra (a
# study's answers as an Inspect log), then starts the app on its embedded defaults; run again, it
# only starts. It installs again when .venv lacks something: a package of requirements.txt at its
# pinned version, Inspect AI at requirements-dev.txt's pin, or this checkout as pyproject.toml now
# declares it (editable, its version and entry points). Arguments go to `streamlit run`
# (`bash start.sh --server.port 8600`).
set -euo pipefail
cd "$(dirname "$0")"

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! command -v "$python" >/dev/null; then
    echo "start.sh: $python was not found: install Python 3.11 or later (or name it with PYTHON=...)" >&2
    exit 1
  fi
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "start.sh: $python is Python $("$python" -c 'import platform; print(platform.python_version())'):" \
         "the app needs 3.11 or later (name another with PYTHON=...)" >&2
    exit 1
  fi
  echo "start.sh: creating .venv with $python" >&2
  "$python" -m venv .venv || {
    rm -rf .venv  # made by this run, half made: the next run starts afresh
    echo "start.sh: $python could not create .venv (on Debian: apt-get install python3-venv)" >&2
    exit 1
  }
fi

if ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "start.sh: .venv does not run Python 3.11 or later: remove the .venv folder and run start.sh again" >&2
  exit 1
fi

# What .venv lacks, one phrase each, comma-separated; empty when nothing (a fraction of a second:
# it reads the installed packages' metadata, it imports none of them).
missing() {
  .venv/bin/python -I - "$PWD" <<'PY'
import json, os, re, sys, tomllib
from importlib import metadata
from urllib.parse import unquote, urlparse

here = sys.argv[1]
pin = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")

def pins(path):
    with open(path, encoding="utf-8") as lines:
        return dict(m.groups() for m in map(pin.match, lines) if m)

wanted = pins("requirements.txt")
wanted["inspect-ai"] = pins("requirements-dev.txt")["inspect-ai"]
lacking = []
for name, version in wanted.items():
    try:
        found = metadata.version(name)
    except metadata.PackageNotFoundError:
        lacking.append(f"{name} (not installed)")
        continue
    if found != version:
        lacking.append(f"{name} ({found}, not {version})")

with open("pyproject.toml", "rb") as file:
    project = tomllib.load(file)["project"]
declared = {("console_scripts", name, value) for name, value in project.get("scripts", {}).items()}
declared |= {(group, name, value) for group, points in project.get("entry-points", {}).items()
             for name, value in points.items()}
try:
    checkout = metadata.distribution(project["name"])
    origin = json.loads(checkout.read_text("direct_url.json") or "{}")
except metadata.PackageNotFoundError:
    checkout, origin = None, {}
folder = unquote(urlparse(origin.get("url", "")).path)
if not origin.get("dir_info", {}).get("editable") or os.path.realpath(folder) != os.path.realpath(here):
    lacking.append(f"this checkout ({project['name']}, editable)")
elif checkout.version != project["version"] or not declared <= {(e.group, e.name, e.value) for e in checkout.entry_points}:
    lacking.append(f"this checkout as pyproject.toml declares it now ({project['name']})")
print(", ".join(lacking[:4]) + (f" and {len(lacking) - 4} more" if len(lacking) > 4 else ""))
PY
}

lacking=$(missing)
if [ -n "$lacking" ]; then
  echo "start.sh: installing into .venv (the first time, a few minutes): $lacking" >&2
  # Inspect AI at the version the tests run (requirements-dev.txt's pin, read here as a constraint);
  # pip's own lines show the progress.
  .venv/bin/pip install --disable-pip-version-check -r requirements.txt -c requirements-dev.txt -e '.[inspect]'
  lacking=$(missing)
  if [ -n "$lacking" ]; then
    echo "start.sh: still missing after the install: $lacking" >&2
    exit 1
  fi
fi

exec .venv/bin/streamlit run server.py "$@"
