"""The documentation site's own checks (docs/hooks.py), shown to fail where they must.

``mkdocs build --strict`` (run by .ci/run) runs these checks on the pages as they are; it never
shows that they would catch anything. These tests give each check a page or a site that breaks it.
"""

import importlib.util
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError  # requirements-docs.txt, which .ci/run installs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render(hooks, markdown, uri="guides/x.md"):
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri=uri))
    return hooks.on_page_markdown(markdown, page, {}, None)


@pytest.mark.parametrize("asset, external", [
    ('<script src="https://unpkg.com/iframe-worker/shim"></script>', True),
    ("<link rel=\"stylesheet\" href=\"https://fonts.googleapis.com/css?family=Roboto\">", True),
    ('<img alt="" src="//cdn.example.org/x.png">', True),
    ("body { background: url('https://example.org/x.png') }", True),
    ('@import "https://example.org/x.css";', True),
    ('<a href="https://inspect.aisi.org.uk/">Inspect AI</a>', False),  # a link to follow, not an asset
    ('<script src="assets/javascripts/bundle.js"></script>', False),
    ('<img src="../screenshots/home.png">', False),
])
def test_the_offline_check_flags_assets_from_another_host_and_nothing_else(hooks, tmp_path, asset, external):
    (tmp_path / "page.html").write_text(f"<html><head></head><body>{asset}</body></html>")
    if external:
        with pytest.raises(PluginError, match="loads from another host"):
            hooks.on_post_build({"site_dir": str(tmp_path)})
    else:
        hooks.on_post_build({"site_dir": str(tmp_path)})


def test_a_screenshot_is_the_stored_picture_and_a_missing_or_unnamed_one_fails_the_build(hooks, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "STORED_SHOTS", tmp_path / "screenshots")
    (tmp_path / "screenshots").mkdir()
    (tmp_path / "page.md").write_text("<!-- screenshot: first-hour-2-accounts | The Accounts page -->\n")
    with pytest.raises(PluginError, match=r"docs/screenshots/ lacks first-hour-2-accounts.png: .*docs/screenshots.py"):
        hooks.on_files([], {"docs_dir": str(tmp_path)})
    (tmp_path / "screenshots" / "first-hour-2-accounts.png").write_bytes(b"\x89PNG")
    hooks.on_files([], {"docs_dir": str(tmp_path)})
    (tmp_path / "screenshots" / "old-picture.png").write_bytes(b"\x89PNG")
    with pytest.raises(PluginError, match="holds old-picture.png, which no page names"):
        hooks.on_files([], {"docs_dir": str(tmp_path)})
    shown = render(hooks, "<!-- screenshot: first-hour-2-accounts | The Accounts page -->", "guides/accounts.md")
    assert shown == "![The Accounts page](../screenshots/first-hour-2-accounts.png)\n\n*The Accounts page*"


def test_a_screenshot_no_journey_takes_fails_the_build(hooks, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "STORED_SHOTS", tmp_path)
    (tmp_path / "first-hour-2-accounts.png").write_bytes(b"\x89PNG")
    (tmp_path / "page.md").write_text("<!-- screenshot: first-hour-2-accounts | taken -->\n")
    hooks.on_files([], {"docs_dir": str(tmp_path)})  # a journey takes it: no error
    (tmp_path / "other.md").write_text("<!-- screenshot: nobody-takes-this | never taken -->\n")
    with pytest.raises(PluginError, match="other.md: screenshot 'nobody-takes-this' is taken by no browser journey"):
        hooks.on_files([], {"docs_dir": str(tmp_path)})


def test_the_stored_screenshots_are_pictures_of_a_reasonable_size():
    from PIL import Image

    spec = importlib.util.spec_from_file_location("docs_screenshots", ROOT / "docs" / "screenshots.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    stored = sorted((ROOT / "docs" / "screenshots").glob("*.png"))
    assert len(stored) >= 20
    for picture in stored:
        with Image.open(picture) as image:
            assert image.format == "PNG" and image.width >= 700, picture.name
        assert picture.stat().st_size <= script.MAX_BYTES, f"{picture.name}: {picture.stat().st_size} bytes"


def test_an_unknown_marker_fails_and_a_known_one_leaves_no_marker(hooks):
    with pytest.raises(PluginError, match="unknown marker 'generated: nonsense'"):
        render(hooks, "<!-- generated: nonsense -->")
    cli = render(hooks, "<!-- generated: cli -->")
    assert "`python -m structext_core generate`" in cli and "usage: python -m structext_core generate" in cli


def test_the_configuration_page_must_name_every_variable_the_code_reads(hooks):
    page = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    render(hooks, page, hooks.CONFIGURATION_PAGE)
    with pytest.raises(PluginError, match="does not name STRUCTEXT_RUN_SLOTS"):
        render(hooks, page.replace("`STRUCTEXT_RUN_SLOTS`", "the run slots"), hooks.CONFIGURATION_PAGE)


def test_a_figures_entry_without_its_date_machine_or_command_fails(hooks, tmp_path, monkeypatch):
    good = "- title: t\n  date: 1 May\n  machine: m\n  command: c\n  figures: f\n"
    monkeypatch.setattr(hooks, "FIGURES", tmp_path / "figures.yml")
    (tmp_path / "figures.yml").write_text(good)
    assert "**Measured** 1 May · **machine** m" in render(hooks, "<!-- generated: figures -->")
    (tmp_path / "figures.yml").write_text(good.replace("  machine: m\n", ""))
    with pytest.raises(PluginError, match="entry 1 lacks machine"):
        render(hooks, "<!-- generated: figures -->")


def test_the_readme_lists_every_page_of_the_site():
    """The README's "Where to read on" names each page of mkdocs.yml's navigation by its path."""
    import yaml

    def pages(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for child in node:
                yield from pages(child)
        elif isinstance(node, dict):
            for child in node.values():
                yield from pages(child)

    nav = list(pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]))
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("## Where to read on", 1)[1]
    assert len(nav) > 20 and [p for p in nav if f"](docs/{p})" not in readme] == []


# ---------------------------------------------------------------- the built site, as a reader gets it

LIST_LINE = re.compile(r"^([-*+]|\d+[.)]) +(.*)")
TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")
#: What a lead reads before a guide's first section heading: none of the internals.
INTERNALS = re.compile(r"heartbeat|haproxy|\bseal|structext_core/", re.I)


def markdown_blocks(text: str):
    """The Markdown's lines outside fenced code, as (line, previous line)."""
    fenced, previous = False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line, previous
        previous = line


def plain(markdown: str) -> str:
    """A Markdown line's words as the HTML shows them (links, emphasis and code marks dropped)."""
    text = re.sub(r"(?<!`)\[([^\]`]*)\]\([^)]*\)", r"\1", markdown)
    return " ".join(re.sub(r"\*\*|(?<![\w`])\*|\*(?![\w`])|`|\\(?=.)", "", text).split())


def own_text(element) -> str:
    """An element's text without its nested lists, code blocks and notes (which are checked on their own)."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == "code":
            parts.append("code")  # a literal "- " in code is what the page means to show
        elif child.tag not in ("ul", "ol", "pre", "div"):
            parts.append(own_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built as the README builds it (mkdocs build --strict), into a folder of this test's."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    return out


def pages():
    return sorted(p.relative_to(ROOT / "docs") for p in (ROOT / "docs").rglob("*.md"))


def article(site, page):
    import lxml.html

    document = lxml.html.fromstring((site / page.with_suffix(".html")).read_text(encoding="utf-8"))
    return document.xpath('//article[contains(@class, "md-content__inner")]')[0]


@pytest.mark.parametrize("page", pages(), ids=str)
def test_every_list_table_and_note_of_a_page_renders(site, page):
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    body = article(site, page)
    # No paragraph or item holds a list that did not render: "- " at its start or after a line break.
    run_on = [own_text(e)[:80] for e in body.iter("p", "li") if re.search(r"(^|\n)\s*([-*+]|\d+[.)]) ", own_text(e))]
    assert run_on == []
    # Each item of the Markdown's lists is an item of a list in the HTML.
    items = [" ".join(li.text_content().split()) for li in body.iter("li")]
    for line, _ in markdown_blocks(text):
        match = LIST_LINE.match(line.strip())
        if match and (line.startswith(("-", "*", "+")) or line[:1].isdigit() or line.startswith("    ")):
            words = plain(match.group(2)).split()[:4]
            if words:
                assert any(" ".join(words) in item for item in items), f"not a list item: {line.strip()[:80]}"
    # Tables and admonitions: as many as the Markdown has, and no pipes or bangs left in the text.
    rules = sum(1 for line, _ in markdown_blocks(text) if TABLE_RULE.match(line.strip()))
    assert len(body.xpath(".//table")) >= rules
    notes = sum(1 for line, _ in markdown_blocks(text) if line.lstrip().startswith(("!!! ", "??? ")))
    assert len(body.xpath('.//*[contains(@class, "admonition")]')) >= notes
    leftovers = [t.text_content()[:80] for t in body.iter("p", "li", "td")
                 if "!!!" in t.text_content() or re.search(r"\|\s*-{3,}", t.text_content())]
    assert leftovers == []


def test_every_screenshot_is_in_the_built_site_and_no_placeholder_is(site):
    named = sum(len(re.findall(r"^<!-- screenshot: ", (ROOT / "docs" / p).read_text(encoding="utf-8"), re.M))
                for p in pages())
    shown = 0
    for page in pages():
        html = (site / page.with_suffix(".html")).read_text(encoding="utf-8")
        assert "not in this build" not in html.lower()
        for image in article(site, page).iter("img"):
            target = (site / page).parent / image.get("src")
            assert target.resolve().is_file() and target.stat().st_size > 1000, image.get("src")
            shown += "screenshots/" in image.get("src")
    assert named >= 20 and shown == named


@pytest.mark.parametrize("guide", sorted((ROOT / "docs" / "guides").glob("*.md")), ids=lambda p: p.name)
def test_each_guide_starts_with_numbered_steps_and_keeps_internals_for_later(site, guide):
    """A lead reads the job first: the first section is "Steps", a numbered list; what the page says
    up to the next section names none of the internals (routes, seals, the proxy, source files)."""
    body = article(site, guide.relative_to(ROOT / "docs"))
    sections = [e for e in body if e.tag == "h2"]
    assert sections and sections[0].text_content().strip(" ¶") == "Steps"
    first = []
    for element in sections[0].itersiblings():
        if element.tag == "h2":
            break
        first.append(element)
    assert first and first[0].tag == "ol" and len(first[0].findall("li")) >= 3
    said = []
    for element in body:
        if element.tag == "h2" and element is not sections[0]:
            break
        said.append(element.text_content())
    assert INTERNALS.findall(" ".join(said)) == []
