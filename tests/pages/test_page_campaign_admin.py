"""AppTest of structext_core/structext_eval/pages/campaign_admin.py: setup, review queue, flags, export, scenarios."""

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import campaign, rewrite
from structext_core.structext_eval.samples import write_jsonl
from structext_core.structext_eval.suites import SuiteConfig, generate_suite
from structext_core.studio import accounts, sandbox, storage
from structext_core.studio.sandbox_worker import TEST_FUNCTIONS_ENV
from tests.pages import light_forms
from tests.pages.light_choices import choice, choose
from tests.pages.test_page_access import Downloads
from tests.pages.test_screens_say_true_things import raw_missing

PAGE = str(Path(__file__).resolve().parents[2] / "structext_core" / "structext_eval" / "pages" / "campaign_admin.py")


@pytest.fixture
def env(isolated_env, monkeypatch):
    """Admin, two annotators, and a small 'test' suite file (every task, depths 1-2, one sample each)."""
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann1 = accounts.create_user(db, "ann1", "password1", "annotator")
    ann2 = accounts.create_user(db, "ann2", "password1", "annotator")
    suite = generate_suite(SuiteConfig("test", depths=(1, 2), widths=(1,), per_cell=1))
    write_jsonl(isolated_env / "suites" / "test.jsonl", suite)
    return {"db": db, "admin": admin, "ann1": ann1, "ann2": ann2, "suite": suite, "tmp": isolated_env}


def run_as(user, **state):
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def button(at, label):
    return next(b for b in at.button if b.label == label)


def test_annotators_are_refused(env):
    at = run_as(env["ann1"])
    assert "This page is for admins only" in at.error[0].value


def test_setup_creates_a_balanced_campaign(env):
    at = run_as(env["admin"])
    assert not at.exception
    assert choice(at, "ca_section").options == ["Set up", "Review queue", "Flags", "Progress & export", "Manage",
                                                "Scenarios"]
    assert "Create a campaign first." in [i.value for i in run_as(env["admin"], ca_section="Flags").info]
    assert light_forms.fields(at, "ca_setup")["annotators"]["value"] == []  # as the study form: nobody is chosen
    at = light_forms.submit(at, "ca_setup", name="Pilot", n=58, annotators=[env["ann1"]["id"], env["ann2"]["id"]])
    assert not at.exception
    assert "Campaign 'Pilot' created with 58 items." in [s.value for s in at.success]
    assert at.session_state["ca_section"] == "Review queue"  # the new campaign's queue: it is chosen above
    choose(at, "ca_section", "Set up")  # a click on the tab
    assert light_forms.light_forms(at)["ca_setup"]["generation"] == 1  # the form is emptied for the next one
    assert choice(at, "ca_campaign").value is not None
    (made,) = campaign.list_campaigns(storage.open_db())  # one: the rerun after the create sends nothing
    items = campaign.list_items(storage.open_db(), made["id"])
    assert len(items) == 58 and len({i["scenario"] for i in items}) == 58
    assert sorted({i["annotator"] for i in items}) == ["ann1", "ann2"]


def test_setup_refusal_is_a_message_and_writes_nothing(env):
    at = run_as(env["admin"])
    at = light_forms.submit(at, "ca_setup", n=10)  # no name
    assert "The campaign needs a name" in at.error[0].value
    assert campaign.list_campaigns(storage.open_db()) == []
    at = light_forms.submit(at, "ca_setup", name="Pilot", n=10)  # a name, but no annotator chosen
    assert "Choose at least one annotator." in at.error[0].value
    assert campaign.list_campaigns(storage.open_db()) == []
    for forged, message in ((dict(n=10**6), "Number of samples: 1,000,000 is not between 1 and "),
                            (dict(n=2.5), "Number of samples: a whole number is needed"),
                            (dict(annotators=[999_999]), "Annotators: 1 of the chosen are not among the options")):
        at = light_forms.submit(at, "ca_setup", name="Pilot", **forged)  # what no browser sends
        assert at.error[0].value.startswith(message), at.error[0].value
    assert campaign.list_campaigns(storage.open_db()) == []
    assert light_forms.light_forms(at)["ca_setup"]["generation"] == 0  # what was typed stays, to be corrected


def submitted_campaign(env, n=2):
    db = env["db"]
    cid = campaign.create_campaign(db, "Pilot", env["suite"], n, [env["ann1"]["id"]], env["admin"])
    for row in campaign.list_items(db, cid):
        sample = campaign.get_item(db, row["id"])["sample"]
        tokens = rewrite.extract_tokens(sample)
        mapping = {t.text: f"Real{i}x" for i, t in enumerate(tokens) if not {"number", "file"} & set(t.kinds)}
        campaign.submit(db, row["id"], env["ann1"], rewrite.apply_mapping(sample, mapping), mapping)
    return cid


def test_review_approve_and_send_back(env):
    cid = submitted_campaign(env)
    first, second = campaign.list_items(env["db"], cid)
    at = run_as(env["admin"])
    assert "Both checks pass." in [s.value for s in at.success]
    assert raw_missing(at) == []  # no None, nan or NaN a lead reads (issue 46)
    assert at.selectbox(key="ca_review_item").value == first["id"]
    # The original beside the rewrite: one panel each, reference, question and answer.
    source = campaign.get_item(env["db"], first["id"])["sample"]
    rewritten = campaign.latest_submission(env["db"], first["id"])
    assert [m.value for m in at.markdown if m.value in ("**Original**", "**Rewrite**")] == ["**Original**", "**Rewrite**"]
    codes = [c.value for c in at.code]
    # "What changed" first (one diff a changed part), then the two side by side.
    diffs = campaign.submission_diff(campaign.get_item(env["db"], first["id"]), rewritten)
    shown_diffs = [d.text for d in diffs if not d.identical]
    assert codes[:len(shown_diffs)] == shown_diffs and codes[0].startswith("--- original reference")
    assert [source["reference"], source["answer"], rewritten["reference"], rewritten["answer"]] == \
        codes[len(shown_diffs):len(shown_diffs) + 4]
    shown = [m.value for m in at.markdown]
    for question in (source["question"], rewritten["question"]):  # the rewrite keeps the requirement
        assert f"**Question:** {question}  \n*{source['requirement']}*" in shown
    button(at, "Approve").click().run()
    assert not at.exception
    assert campaign.get_item(storage.open_db(), first["id"])["status"] == "approved"
    # Sending back needs a comment: refused without one, then done with one.
    button(at, "Send back").click().run()
    assert any("needs a comment" in e.value for e in at.error)
    assert campaign.get_item(storage.open_db(), second["id"])["status"] == "submitted"
    at.text_area(key=f"ca_comment_{second['id']}").input("Use one currency throughout.").run()
    button(at, "Send back").click().run()
    assert campaign.get_item(storage.open_db(), second["id"])["status"] == "returned"
    assert campaign.latest_review(storage.open_db(), second["id"])["comment"] == "Use one currency throughout."
    assert "Nothing waits for review." in [i.value for i in at.info]


def test_flags_are_shown_and_resolved(env):
    cid = submitted_campaign(env, n=1)
    item = campaign.list_items(env["db"], cid)[0]
    flag_id = campaign.flag_sample(env["db"], item["id"], env["ann1"], "The question names a missing node.")
    at = run_as(env["admin"], ca_section="Flags")
    flags_table = at.dataframe[0].value
    assert list(flags_table["reason"]) == ["The question names a missing node."]
    at.text_input(key=f"ca_resolution_{flag_id}").input("Sample replaced in the next draw.").run()
    button(at, "Resolve").click().run()
    assert campaign.list_flags(storage.open_db(), cid, open_only=True) == []


def test_export_writes_both_layouts_and_shows_the_audit(env):
    cid = submitted_campaign(env, n=3)
    for row in campaign.list_items(env["db"], cid):
        campaign.review(env["db"], row["id"], env["admin"], "approved")
    out = env["tmp"] / "export"
    at = run_as(env["admin"], ca_section="Progress & export")
    at.text_input(key=f"ca_export_dir_{cid}").input(str(out)).run()
    button(at, "Write approved rewrites to the server folder").click().run()
    assert not at.exception
    assert any("Exported 3 samples" in s.value for s in at.success)
    shown = [c.value for c in at.code if "audited" in c.value][0]
    assert "real-test.jsonl: audited 3 samples: 3 agree, 0 disagree, 0 unsupported" in shown
    assert "official/: audited 3 samples: 3 agree, 0 disagree, 0 unsupported" in shown
    rows = [json.loads(line) for line in (out / "real-test.jsonl").read_text().splitlines()]
    assert all(r["suite"] == "real-test" and r["source_id"] and r["scenario"] for r in rows)


def test_approved_rewrites_download_to_the_browser_and_the_server_write_says_so(env, monkeypatch):
    """Regression (issue item 9e): "Export approved rewrites" showed a download icon but wrote to a
    server folder. Now a real download, and a write that says it goes to the server folder."""
    cid = submitted_campaign(env, n=3)
    for row in campaign.list_items(env["db"], cid):
        campaign.review(env["db"], row["id"], env["admin"], "approved")
    downloads = Downloads(monkeypatch)
    at = run_as(env["admin"], ca_section="Progress & export")
    files = dict(downloads.files)
    assert "real-test.jsonl" in files  # to the browser, nothing written on the server
    out = env["tmp"] / "export"
    assert not out.exists()
    write = button(at, "Write approved rewrites to the server folder")
    assert write.proto.icon != ":material/download:"
    at.text_input(key=f"ca_export_dir_{cid}").input(str(out)).run()
    write.click().run()
    assert any(f"to {out / 'real-test.jsonl'}" in s.value and "on the server" in s.value for s in at.success)
    assert (out / "real-test.jsonl").read_bytes() == files["real-test.jsonl"]


def test_default_export_folder_sits_beside_the_database(env):
    cid = submitted_campaign(env, n=1)
    at = run_as(env["admin"], ca_section="Progress & export")
    folder = Path(at.text_input(key=f"ca_export_dir_{cid}").value)
    assert folder.parent == env["tmp"] / "exports"  # STRUCTEXT_DB lives in env["tmp"]


def test_admin_adds_scenarios(env):
    at = run_as(env["admin"], ca_section="Scenarios")
    before = len(campaign.scenario_catalogue(storage.open_db()))
    at.text_area(key="ca_new_scenarios").input("bee keeping: hive inspections\nathletics: sprint results").run()
    button(at, "Add to the catalogue").click().run()
    assert "Added 1 scenario (1 were in the catalogue already)." in [s.value for s in at.success]
    assert len(campaign.scenario_catalogue(storage.open_db())) == before + 1


def test_the_catalogue_is_a_box_drawn_when_opened(env):
    """Issue 46: a grid costs the page about 0.6 s in the browser; the catalogue's comes when its box is opened."""
    at = run_as(env["admin"], ca_section="Scenarios")
    catalogue = campaign.scenario_catalogue(storage.open_db())
    assert f"Browse the catalogue ({len(catalogue):,})" in [e.label for e in at.expander]
    assert not [d for d in at.dataframe if "scenario" in d.value.columns]
    at = run_as(env["admin"], ca_section="Scenarios", ca_catalogue_open=True)  # as a click on the box does
    shown, = [d.value for d in at.dataframe if "scenario" in d.value.columns]
    assert list(shown["scenario"]) == list(catalogue)


def test_export_into_a_folder_of_someone_else_is_refused_with_a_message(env):
    """Issue 11: the export never deletes files it did not write (once: 116 shipped samples became 1)."""
    cid = submitted_campaign(env, n=1)
    for row in campaign.list_items(env["db"], cid):
        campaign.review(env["db"], row["id"], env["admin"], "approved")
    theirs = env["tmp"] / "theirs"
    (theirs / "official" / "0Shotbenchmark").mkdir(parents=True)
    (theirs / "official" / "0Shotbenchmark" / "sample.json").write_text('{"keep": true}')
    at = run_as(env["admin"], ca_section="Progress & export")
    at.text_input(key=f"ca_export_dir_{cid}").input(str(theirs)).run()
    button(at, "Write approved rewrites to the server folder").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any(e.startswith(f"Not exported: {theirs} already holds files that no StrucText export wrote")
               and "export into a new or empty folder" in e for e in errors), errors
    assert not any("Exported" in s.value for s in at.success)
    assert sorted(p.relative_to(theirs).as_posix() for p in theirs.rglob("*") if p.is_file()) == \
        ["official/0Shotbenchmark/sample.json"]
    # The same export into a new folder works, and again into that folder (our own marker).
    fresh = env["tmp"] / "fresh"
    at.text_input(key=f"ca_export_dir_{cid}").input(str(fresh)).run()
    for _ in range(2):
        button(at, "Write approved rewrites to the server folder").click().run()
        assert any("Exported 1 sample to" in s.value for s in at.success)  # issue 19: "1 samples"
    assert (fresh / ".structext-export").is_file()


def test_review_of_a_submission_that_cannot_be_checked_says_so_and_can_be_sent_back(env, monkeypatch):
    monkeypatch.setenv(TEST_FUNCTIONS_ENV, "1")  # the worker crashes on the marker below (test mode only)
    pool = sandbox.WorkerPool(workers=1, timeout=2)
    monkeypatch.setattr(sandbox, "_default", pool)
    try:
        cid = submitted_campaign(env, n=1)
        item = campaign.list_items(env["db"], cid)[0]
        with storage.write_transaction(env["db"]):  # as if it had slipped through before
            env["db"].execute("UPDATE rewrite_submissions SET reference = reference || ? WHERE item_id = ?",
                              ["\n<<sandbox-test:crash>>", item["id"]])
        at = run_as(env["admin"])
        assert not at.exception
        assert ("This text is too large or too deeply nested to check: the check crashed (segmentation fault)."
                in [e.value for e in at.error])
        at.text_area(key=f"ca_comment_{item['id']}").input("Keep the nesting of the original.").run()
        button(at, "Send back").click().run()
        assert campaign.get_item(storage.open_db(), item["id"])["status"] == "returned"
    finally:
        pool.shutdown()


# ---- lifecycle: rename, archive, clone; the set-up forms agree (issue 13) ------------------

STUDY_PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "study_admin.py")


def click(at, label):
    return button(at, label).click().run()


def run_study_page(user, **state):
    at = AppTest.from_file(STUDY_PAGE, default_timeout=60)
    at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def test_both_set_up_forms_have_the_same_shared_fields_and_defaults(env):
    accounts.create_user(env["db"], "ann0", "password1", "annotator")
    accounts.disable_user(env["db"], env["ann2"]["id"], by_user=env["admin"]["id"])
    studies = run_study_page(env["admin"], sa_section="Set up a study")
    campaigns = run_as(env["admin"])
    assert not studies.exception and not campaigns.exception
    (study_form,) = [key for key in light_forms.light_forms(studies) if key.startswith("sa_new_study")]
    for at, key in ((studies, study_form), (campaigns, "ca_setup")):  # both forms: one element each
        fields = list(light_forms.fields(at, key).values())
        assert [f["label"] for f in fields if f["label"] in ("Seed of the draw", "Annotators")] == \
            ["Seed of the draw", "Annotators"]  # the same labels, in the same order
        seed, chooser = [f for f in fields if f["label"] in ("Seed of the draw", "Annotators")]
        assert seed["value"] == 0 and chooser["value"] == []  # nobody chosen beforehand
        # enabled annotators by name: no admin, no disabled account
        assert [label for _, label in chooser["options"]] == ["ann0", "ann1"], key


def test_rename_a_campaign_from_the_manage_tab(env):
    db = env["db"]
    cid = campaign.create_campaign(db, "Pilot", env["suite"], 2, [env["ann1"]["id"]], env["admin"])
    campaign.create_campaign(db, "Other", env["suite"], 2, [env["ann1"]["id"]], env["admin"])
    at = run_as(env["admin"], ca_section="Manage", ca_campaign=cid)
    at.text_input(key=f"ca_rename_name_{cid}").input("other")
    at = click(at, "Rename")
    assert "The campaign was not renamed. A campaign named 'other' exists already" in at.error[0].value
    at.text_input(key=f"ca_rename_name_{cid}").input("Real-Test 2026")
    at = click(at, "Rename")
    assert "Campaign 'Pilot' is now called 'Real-Test 2026'." in [s.value for s in at.success]
    assert at.session_state["ca_campaign"] == cid  # still the chosen one
    assert next(c for c in campaign.list_campaigns(db) if c["id"] == cid)["name"] == "Real-Test 2026"


def test_archive_hides_the_campaign_until_show_archived_is_on(env):
    db = env["db"]
    cid = campaign.create_campaign(db, "Pilot", env["suite"], 2, [env["ann1"]["id"]], env["admin"])
    at = click(run_as(env["admin"], ca_section="Manage"), "Archive the campaign")
    assert "Campaign 'Pilot' is archived. Turn on Show archived campaigns to see it." in [s.value for s in at.success]
    assert campaign.campaigns_for(db, env["ann1"]) == []
    assert any("Every campaign is archived" in i.value for i in at.info)
    at = at.toggle(key="ca_show_archived").set_value(True).run()
    assert at.session_state["ca_campaign"] == cid
    assert any("This campaign is archived" in i.value for i in at.info)
    at = click(at, "Bring back from the archive")
    assert [c["id"] for c in campaign.campaigns_for(db, env["ann1"])] == [cid]


def test_clone_a_campaign_for_chosen_annotators(env):
    db = env["db"]
    cid = campaign.create_campaign(db, "Pilot", env["suite"], 4, [env["ann1"]["id"]], env["admin"])
    at = run_as(env["admin"], ca_section="Manage")
    at.text_input(key=f"ca_clone_name_{cid}").input("Pilot (2)")
    at = click(at, "Create the copy")
    assert "No copy was made. Choose at least one annotator." in at.error[0].value
    assert len(campaign.list_campaigns(db)) == 1
    at.multiselect(key=f"ca_clone_annotators_{cid}").select(env["ann2"]["id"])
    at = click(at, "Create the copy")
    assert "Campaign 'Pilot (2)' created as a copy of 'Pilot' for 1 annotator." in [s.value for s in at.success]
    copy = at.session_state["ca_campaign"]
    assert copy != cid
    assert [i["sample_id"] for i in campaign.list_items(db, copy)] == [i["sample_id"] for i in campaign.list_items(db, cid)]
    assert {i["annotator"] for i in campaign.list_items(db, copy)} == {"ann2"}


def test_review_shows_what_changed_and_the_warnings_the_annotator_saw(env):
    db = env["db"]
    sample = next(s for s in env["suite"] if s["task_id"] == 8 and s["depth"] == 2)
    cid = campaign.create_campaign(db, "Warned", [sample], 1, [env["ann1"]["id"]], env["admin"])
    item = campaign.list_items(db, cid)[0]
    mapping = rewrite.mechanical_mapping(sample)
    left_behind = next(t.text for t in rewrite.extract_tokens(sample) if len(t.text) > 1)
    partial = {k: v for k, v in mapping.items() if k != left_behind}
    texts = rewrite.apply_mapping(sample, partial)
    seen = campaign.submit(db, item["id"], env["ann1"], texts, partial).warnings
    assert seen
    at = run_as(env["admin"])
    assert not at.exception
    assert "The annotator saw these warnings when submitting:\n" + "\n".join(f"- {w}" for w in seen) in [
        w.value for w in at.warning]
    diff_codes = [c for c in at.code if c.language == "diff"]
    assert diff_codes and diff_codes[0].value.startswith("--- original reference\n+++ rewritten reference\n@@ ")
    reference_diff = diff_codes[0].value.split("\n")
    assert f"-{sample['reference'].split(chr(10))[1]}" in reference_diff
    assert f"+{texts.reference.split(chr(10))[1]}" in reference_diff
    captions = [c.value for c in at.caption]
    reference = campaign.submission_diff(campaign.get_item(db, item["id"]), campaign.latest_submission(db, item["id"]))[0]
    assert f"Reference: +{reference.added} / -{reference.removed} lines." in captions


def test_review_of_a_rewrite_too_long_to_compare_says_so(env, monkeypatch):
    from structext_core.structext_eval.rewrite import diff as diff_module

    cid = submitted_campaign(env, n=1)
    monkeypatch.setattr(diff_module, "MAX_DIFF_INPUT_LINES", 3)  # every reference here is longer
    at = run_as(env["admin"])
    assert not at.exception
    assert any(c.value.startswith("Reference: Not compared: the original's reference has ") for c in at.caption)
    assert not [c for c in at.code if c.language == "diff" and c.value.startswith("--- original reference")]
    item = campaign.list_items(env["db"], cid)[0]
    assert campaign.latest_submission(env["db"], item["id"])["reference"] in [c.value for c in at.code]  # side by side


# ---------------------------------------------------------------- untrusted Markdown (issue 19, item 9)

PIXEL = "http://host.example/px.png"


def _rendered_elements(at) -> list[str]:
    """The text of every element the page renders as Markdown."""
    kinds = (at.markdown, at.caption, at.info, at.warning, at.error, at.success, at.subheader, at.toast)
    return [e.value for kind in kinds for e in kind]


def test_a_rewrite_holding_markdown_images_makes_the_review_queue_fetch_nothing(env):
    from markdown_it import MarkdownIt

    db = env["db"]
    sample = next(s for s in env["suite"] if s["task_id"] == 8 and s["depth"] == 1)
    cid = campaign.create_campaign(db, "Pixel", [sample], 1, [env["ann1"]["id"]], env["admin"])
    item = campaign.list_items(db, cid)[0]
    db.execute("UPDATE rewrite_items SET scenario = ? WHERE id = ?", [f"zoo ![s]({PIXEL})", item["id"]])
    # As the issue found it: a question with an image, and a structure exception's reason with one.
    db.execute(
        "INSERT INTO rewrite_submissions (item_id, reference, question, answer, mapping_json, structure_ok, "
        "answer_ok, exception_reason, submitted_by, submitted_at) VALUES (?, ?, ?, ?, '{}', 1, 1, ?, ?, 0)",
        [item["id"], sample["reference"], sample["question"] + f" ![p]({PIXEL}) <img src='{PIXEL}'>",
         sample["answer"], f"needed ![r][x]\n\n[x]: {PIXEL}", env["ann1"]["id"]])
    db.execute("UPDATE rewrite_items SET status = 'submitted' WHERE id = ?", [item["id"]])
    at = run_as(env["admin"])
    assert not at.exception
    texts = _rendered_elements(at)
    assert any(PIXEL in t for t in texts)  # the text is shown ...
    parser = MarkdownIt("commonmark", {"html": True})
    for text in texts:  # ... and nothing in it loads
        html = parser.render(text).lower()
        assert "<img" not in html and not re.search(r"<[^>]*src=", html), text
    assert any(f"[image: p -&gt; {PIXEL}]" in parser.render(t) for t in texts)
