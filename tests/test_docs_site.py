"""The documentation site's own checks (docs/hooks.py), shown to fail where they must.

``mkdocs build --strict`` (run by .ci/run) runs these checks on the pages as they are; it never
shows that they would catch anything. These tests give each check a page or a site that breaks it.
"""

import importlib.util
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


def test_a_screenshot_is_shown_when_the_journeys_took_it_and_a_note_when_not(hooks, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "SCREENSHOTS", tmp_path)
    marker = "<!-- screenshot: home | Home on the first start -->"
    missing = render(hooks, marker, "guides/results.md")
    assert missing.startswith('!!! note "Screenshot not in this build: home.png"') and "bash .ci/run" in missing
    (tmp_path / "home.png").write_bytes(b"\x89PNG")
    shown = render(hooks, marker, "guides/results.md")
    assert shown.startswith("![Home on the first start](../screenshots/home.png)")


def test_a_screenshot_no_journey_takes_fails_the_build(hooks, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "SCREENSHOTS", tmp_path / "none taken yet")
    (tmp_path / "page.md").write_text("<!-- screenshot: first-hour-2-accounts | taken -->\n")
    files = []
    hooks.on_files(files, {"docs_dir": str(tmp_path)})  # a journey takes it: no error
    (tmp_path / "other.md").write_text("<!-- screenshot: nobody-takes-this | never taken -->\n")
    with pytest.raises(PluginError, match="other.md: screenshot 'nobody-takes-this' is taken by no browser journey"):
        hooks.on_files([], {"docs_dir": str(tmp_path)})


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
