"""The Real-Test rewriting journey in a real browser.

The admin sets up a two-sample campaign (one JSON object-by-id sample, one Markdown
bold-texts sample) on the Rewrite campaigns page; the annotator rewrites both by value
mapping (pasted mapping lines, then Apply mapping), watches the live checks pass and
submits; the admin approves both and exports; the export is audited with the command
line. Screenshots go to tests/screenshots/rewrite-*.png.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from structext_core.structext_eval import campaign, rewrite, samples, suites
from structext_core.studio import accounts, storage
from tests.browser.conftest import click_until, go_to_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ANNOTATOR, ANNOTATOR_PASSWORD = "writer1", "writer-pw-12"
CAMPAIGN = "Journey Real-Test"

POOLS = {
    "id": ["Hayward Field", "East Straight", "Lane Four", "Infield", "Jump Pit", "Throws Cage", "Tunnel"],
    "key": ["City", "Surface", "Capacity", "Opened", "Architect", "Owner", "Roof", "Lights", "Scoreboard",
            "Seats", "Lanes", "Length", "Width", "Coach", "Event", "Record"],
    "value": ["Eugene", "polyurethane", "12650", "1919", "TBA", "university", "partial", "LED", "video",
              "bench", "nine", "400 m", "1.22 m", "head coach", "sprint", "9.58", "steel", "wood", "grass"],
    "heading": ["Spring Meet Notes", "Warm-up", "Sprint Drills", "Cool-down", "Relay Practice", "Recovery",
                "Strength"],
    "word": ["runners", "stretch", "jog", "easy", "laps", "pace", "stride", "breathe", "relax", "drink",
             "water", "then", "start", "strong", "finish", "steady", "coach", "track", "team", "time",
             "rest", "walk", "spikes", "block", "gun", "heat", "final", "lane", "curve", "straight",
             "baton", "handoff", "zone", "focus", "fast", "calm", "form", "knees", "arms", "feet"],
    "file": ["start_blocks.jpg", "relay_zone.png", "finish_line.jpg", "warmup_area.png", "team_photo.jpg",
             "podium.png"],
}


def realistic_mapping(sample: dict) -> dict[str, str]:
    """Token -> a real value from the pool of its first role (ids, keys, words ...)."""
    used: dict[str, int] = {}
    mapping = {}
    for token in rewrite.extract_tokens(sample):
        role = next((r for r in token.kinds if r in POOLS), "word" if "bold" in token.kinds else "value")
        pool = POOLS[role]
        n = used.get(role, 0)
        used[role] = n + 1
        mapping[token.text] = pool[n % len(pool)] + ("" if n < len(pool) else f"{n // len(pool) + 1}")
    return mapping


@pytest.fixture(scope="module")
def journey(app_env):
    """The 'test' suite of this server: just the two samples, and the annotator account."""
    json_sample = suites.generate_sample(8, 1, 1, suite="test", index=0)
    markdown_sample = suites.generate_sample(21, 1, 1, suite="test", index=3)
    assert "**" in markdown_sample["reference"]
    samples.write_jsonl(app_env["data_dir"] / "test.jsonl", [json_sample, markdown_sample])
    db = storage.open_db(app_env["db_path"])
    accounts.create_user(db, ANNOTATOR, ANNOTATOR_PASSWORD, "annotator")
    return {"json": json_sample, "markdown": markdown_sample}


def sidebar(page):
    return page.get_by_test_id("stSidebar")


def log_in(page, base_url, username, password, wait_for_app):
    """Log in from the sidebar, once: the Home page may still be generating the default suites
    on the first visit, so wait for its run to end first; a dropped log-in fails the journey."""
    page.goto(base_url)
    wait_for_app(page, timeout=120_000)
    sidebar(page).get_by_label("User name", exact=True).fill(username)
    sidebar(page).get_by_label("Password", exact=True).fill(password)
    sidebar(page).get_by_role("button", name="Log in").click()
    sidebar(page).get_by_text(f"Logged in as {username}").wait_for(timeout=15_000)
    wait_for_app(page)




def go_to(page, link_name, wait_for_app):
    """One click on the menu's link (the other journeys import this); this journey's own steps use
    ``go_to_page``, which clicks again when a click was lost."""
    sidebar(page).get_by_role("link", name=link_name, exact=True).click()
    wait_for_app(page)


def set_text(page, label, value, wait_for_app):
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Control+Enter")  # commits the text area (a rerun: the checks run again)
    wait_for_app(page)


def refused_then_repaired(page, expected, wait_for_app, screenshot):
    """A free edit that drops a field: the structure check says where, and submitting is refused."""
    broken = "\n".join(line for line in expected.reference.split("\n") if '"Surface"' not in line)
    set_text(page, "Reference", broken, wait_for_app)
    page.get_by_text("a field is missing", exact=False).first.wait_for()
    page.get_by_role("button", name="Submit for review").click()
    page.get_by_text("Submission refused", exact=False).first.wait_for()
    wait_for_app(page)
    page.get_by_text("Submission refused", exact=False).first.scroll_into_view_if_needed()
    screenshot(page, "rewrite-3-0-json-refused")
    set_text(page, "Reference", expected.reference, wait_for_app)


def rewrite_current_item(page, sample, wait_for_app, screenshot, name):
    mapping = realistic_mapping(sample)
    box = page.get_by_label("One `token -> real-world value` a line")
    if not box.is_visible():  # its box closed: opened, again if a run still drawing the page closed it (CI at 6bdf8be)
        click_until(page, page.get_by_text("Paste mapping lines"), box.filter(visible=True))
    box.fill("\n".join(f"{old} -> {new}" for old, new in mapping.items()))
    box.press("Control+Enter")
    wait_for_app(page)
    rows = f"{len(mapping)} row" + ("" if len(mapping) == 1 else "s")
    # clicked again only if the run drawing the page lost the click (CI at e3fc728)
    click_until(page, page.get_by_role("button", name="Add to the table"),
                page.get_by_text(f"Added {rows} to the mapping table").first)
    assert page.get_by_text(f"Added {rows} to the mapping table").count() == 1  # said once: a toast
    click_until(page, page.get_by_role("button", name="Apply mapping"),
                page.get_by_text(f"Applied {len(mapping)} replacement" + ("" if len(mapping) == 1 else "s")).first)
    wait_for_app(page)
    expected = rewrite.apply_mapping(sample, mapping)
    assert page.get_by_label("Reference", exact=True).input_value() == expected.reference
    assert page.get_by_label("Question", exact=True).input_value() == expected.question
    page.get_by_text("Structure: reads as the original does; same skeleton.").wait_for()
    page.get_by_text("Answer: the solver derives the rewritten answer").wait_for()
    if sample["language"] == "json":
        refused_then_repaired(page, expected, wait_for_app, screenshot)
        page.get_by_text("Structure: reads as the original does; same skeleton.").wait_for()
    page.get_by_text("Structure: reads as the original does", exact=False).scroll_into_view_if_needed()
    screenshot(page, name)
    page.get_by_role("button", name="Submit for review").click()
    page.get_by_text("for review.", exact=False).first.wait_for()
    wait_for_app(page)
    return expected


def test_rewrite_by_mapping_submit_approve_export_audit(app_server, app_env, journey, browser, page,
                                                        wait_for_app, screenshot, tmp_path):
    # --- the admin sets up the campaign
    log_in(page, app_server, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to_page(page, "Rewrite campaigns", wait_for_app)
    page.get_by_label("Campaign name").fill(CAMPAIGN)
    samples_box = page.get_by_role("spinbutton", name="Samples")
    samples_box.fill("2")
    samples_box.press("Tab")
    # nobody is chosen until the admin chooses; the set-up form lists names only, as check boxes
    chooser = page.get_by_role("checkbox", name=ANNOTATOR, exact=True)
    assert not chooser.is_checked()
    chooser.check()
    page.get_by_role("button", name="Create campaign").click()
    page.get_by_text(f"Campaign '{CAMPAIGN}' created with 2 items.").wait_for()
    wait_for_app(page)
    screenshot(page, "rewrite-1-admin-setup")

    # --- the annotator rewrites both samples by mapping
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    writer = context.new_page()
    log_in(writer, app_server, ANNOTATOR, ANNOTATOR_PASSWORD, wait_for_app)
    go_to_page(writer, "Real-Test rewriting", wait_for_app)
    writer.get_by_text("Guidelines").first.wait_for()
    writer.get_by_text("Not rewritten yet:", exact=False).first.wait_for()  # not two green checks on the original
    assert writer.get_by_role("button", name="Submit for review").is_disabled()
    screenshot(writer, "rewrite-2-workspace-before")
    db = storage.open_db(app_env["db_path"])
    cid = campaign.list_campaigns(db)[0]["id"]
    order = [campaign.get_item(db, i["id"])["sample"]["language"] for i in campaign.list_items(db, cid)]
    done = {}
    for n, language in enumerate(order, 1):
        sample = journey[language]
        done[language] = rewrite_current_item(writer, sample, wait_for_app, screenshot,
                                              f"rewrite-3-{n}-{language}-mapped")
    writer.get_by_text("2 of 2 submitted or approved").wait_for()
    screenshot(writer, "rewrite-4-all-submitted")
    context.close()

    # --- the admin approves both and exports
    go_to_page(page, "Home", wait_for_app)  # a reload would start a new session (logged out)
    go_to_page(page, "Rewrite campaigns", wait_for_app)
    page.get_by_role("tab", name="Review queue").click()
    for _ in range(2):
        page.get_by_text("Both checks pass.").wait_for()
        page.get_by_text("Reference: +", exact=False).first.wait_for()  # the line diff, original -> rewrite
        screenshot(page, "rewrite-5-review")
        page.get_by_role("button", name="Approve").click()
        page.get_by_text("Approved.", exact=True).wait_for()
        wait_for_app(page)
    page.get_by_text("Nothing waits for review.").wait_for()
    page.get_by_role("tab", name="Progress & export").click()
    out = tmp_path / "export"
    folder = page.get_by_label("Export folder")
    folder.fill(str(out))
    folder.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Write approved rewrites to the server folder").click()
    page.get_by_text("Exported 2 samples").wait_for()
    wait_for_app(page)
    screenshot(page, "rewrite-6-exported")

    # --- the export audits clean with the command line, in both layouts
    for path in (out / "real-test.jsonl", out / "official"):
        result = subprocess.run([sys.executable, "-m", "structext_core", "audit", str(path)],
                                capture_output=True, text=True, cwd=str(ROOT))
        assert result.stdout.strip().splitlines()[-1] == "audited 2 samples: 2 agree, 0 disagree, 0 unsupported"
        assert result.returncode == 0
    exported = samples.read_jsonl(out / "real-test.jsonl")
    by_source = {row["source_id"]: row for row in exported}
    for language, expected in done.items():
        row = by_source[journey[language]["id"]]
        assert (row["reference"], row["question"], row["answer"]) == (expected.reference, expected.question,
                                                                        expected.answer)
        assert row["suite"] == "real-test" and row["scenario"]
