"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages that are generated from the code and data,
the browser journeys' screenshots, and the checks that fail ``mkdocs build --strict``.

A page asks for generated text with a marker on a line of its own:

- ``<!-- generated: cli -->``: ``python -m structext_core``'s help, every verb's, from the real
  argparse parsers (``structext_core.cli.main.build_parser``);
- ``<!-- generated: who-sees-what -->``: the access table (``structext_core.studio.access``);
- ``<!-- generated: figures -->``: the measured figures in ``docs/figures.yml``, each with its
  date, machine and command (the benchmarks are never run by the build);
- ``<!-- screenshot: NAME | caption -->``: ``docs/screenshots/NAME.png``, committed, which a browser
  journey (``tests/browser``) takes into ``tests/screenshots/`` and ``docs/screenshots.py`` stores
  there, smaller. A NAME that no journey takes, or whose picture is not stored, fails the build (a
  page never shows a placeholder nor points at a picture nothing makes), and so does a stored
  picture that no page names.

The build also fails on an unknown marker, on a ``STRUCTEXT_*`` variable of the code that the
configuration page does not name, on a malformed figures entry, and on any page, stylesheet or
script of the built site that loads something from another host (the site is read offline).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "tests" / "screenshots"  # where the journeys take them
STORED_SHOTS = ROOT / "docs" / "screenshots"  # where docs/screenshots.py stores them for the site
JOURNEYS = ROOT / "tests" / "browser"
FIGURES = ROOT / "docs" / "figures.yml"
CONFIGURATION_PAGE = "reference/configuration.md"

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
SHOT = re.compile(r"^<!-- screenshot: ([A-Za-z0-9_.-]+) \| (.+?) -->$", re.M)
ENV_NAME = re.compile(r"[\"'](STRUCTEXT_[A-Z0-9_]+)[\"']")

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# ---------------------------------------------------------------- screenshots

def _journey_names() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(JOURNEYS.glob("*.py")))


def _referenced_shots(docs_dir: Path) -> dict[str, str]:
    """Every screenshot a page names, with the page that names it."""
    found = {}
    for page in sorted(docs_dir.rglob("*.md")):
        for name, _ in SHOT.findall(page.read_text(encoding="utf-8")):
            found.setdefault(name, str(page.relative_to(docs_dir)))
    return found


def on_files(files, config):
    journeys = _journey_names()
    named = _referenced_shots(Path(config["docs_dir"]))
    for name, page in named.items():
        if f'"{name}"' not in journeys:
            raise PluginError(f"{page}: screenshot {name!r} is taken by no browser journey in tests/browser/")
    lacking = sorted(name for name in named if not (STORED_SHOTS / f"{name}.png").is_file())
    if lacking:
        raise PluginError(f"docs/screenshots/ lacks {', '.join(f'{n}.png' for n in lacking)}: take and store "
                          f"them with `.venv/bin/python docs/screenshots.py` (it runs the journeys that take them)")
    unnamed = sorted(p.name for p in STORED_SHOTS.glob("*.png") if p.stem not in named)
    if unnamed:
        raise PluginError(f"docs/screenshots/ holds {', '.join(unnamed)}, which no page names: "
                          f"`.venv/bin/python docs/screenshots.py --last-run` removes them")
    return files


def _screenshot(page_uri: str, name: str, caption: str) -> str:
    up = "../" * page_uri.count("/")
    return f"![{caption}]({up}screenshots/{name}.png)\n\n*{caption}*"


# ---------------------------------------------------------------- generated text

def _cli() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal's width: the same page everywhere
    from structext_core.cli.main import build_parser

    def walk(parser, path):
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                seen = set()
                for verb, child in action.choices.items():
                    if id(child) not in seen:
                        seen.add(id(child))
                        yield from walk(child, path + [verb])

    parts = []
    for path, parser in walk(build_parser(), []):
        title = " ".join(["python -m structext_core", *path])
        level = "#" * min(2 + len(path), 4)
        parts.append(f"{level} `{title}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def _who_sees_what() -> str:
    from structext_core.studio import access

    return access.markdown_table()


FIGURE_KEYS = ("title", "command", "date", "machine", "figures")


def _figures() -> str:
    entries = yaml.safe_load(FIGURES.read_text(encoding="utf-8"))
    if not isinstance(entries, list) or not entries:
        raise PluginError(f"{FIGURES.name}: expected a list of measured runs")
    parts = []
    for number, entry in enumerate(entries, 1):
        lacking = [k for k in FIGURE_KEYS if not isinstance(entry, dict) or not str(entry.get(k) or "").strip()]
        if lacking:
            raise PluginError(f"{FIGURES.name}: entry {number} lacks {', '.join(lacking)}")
        head = f"**Measured** {entry['date']} · **machine** {entry['machine']}"
        if entry.get("commit"):
            head += f" · **code** {entry['commit']}"
        parts.append(f"## {entry['title']}\n\n{head}\n\n```bash\n{entry['command'].strip()}\n```\n\n"
                     f"{entry['figures'].strip()}\n")
    return "\n".join(parts)


GENERATORS = {"cli": _cli, "who-sees-what": _who_sees_what, "figures": _figures}


def _check_configuration(markdown: str) -> None:
    """Every STRUCTEXT_* variable the code reads is on the configuration page."""
    named = set()
    for source in (ROOT / "structext_core").rglob("*.py"):
        named.update(ENV_NAME.findall(source.read_text(encoding="utf-8")))
    named.discard("STRUCTEXT_LIMIT_")  # the prefix; the limits page lists each limit's variable
    lacking = sorted(n for n in named if f"`{n}`" not in markdown)
    if lacking:
        raise PluginError(f"{CONFIGURATION_PAGE} does not name {', '.join(lacking)}")


def on_page_markdown(markdown, page, config, files):
    uri = page.file.src_uri
    if uri == CONFIGURATION_PAGE:
        _check_configuration(markdown)

    def generate(match):
        kind = match.group(1)
        if kind not in GENERATORS:
            raise PluginError(f"{uri}: unknown marker 'generated: {kind}' (known: {', '.join(GENERATORS)})")
        return GENERATORS[kind]()

    markdown = MARKER.sub(generate, markdown)
    return SHOT.sub(lambda m: _screenshot(uri, m.group(1), m.group(2)), markdown)


# ---------------------------------------------------------------- offline

#: An asset the browser would fetch from another host: a script, a stylesheet, a font, an image,
#: a frame (links a reader may follow, <a href>, are not assets).
EXTERNAL_ASSET = re.compile(
    r"<(?:script|img|iframe|source|audio|video)\b[^>]*\bsrc=[\"']?(?:https?:)?//"
    r"|<link\b[^>]*\bhref=[\"']?(?:https?:)?//"
    r"|url\(\s*[\"']?(?:https?:)?//"
    r"|@import\s+[\"'](?:https?:)?//", re.I)


def on_post_build(config):
    site = Path(config["site_dir"])
    bad = []
    for path in sorted(site.rglob("*")):
        if path.suffix in (".html", ".css") and path.is_file():
            match = EXTERNAL_ASSET.search(path.read_text(encoding="utf-8", errors="replace"))
            if match:
                bad.append(f"{path.relative_to(site)}: {match.group(0)[:80]}")
    if bad:
        raise PluginError("the site loads from another host (it must work offline):\n  " + "\n  ".join(bad))
