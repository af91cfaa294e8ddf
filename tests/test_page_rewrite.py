"""AppTest of pages/rewrite.py: queue, mapping, free edit, refused submission, drafts, flags."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import accounts, campaign, rewrite, storage
from structext_core.suites import generate_cell

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "rewrite.py")


@pytest.fixture
def setup(isolated_env, monkeypatch):
    """One admin, one annotator and a campaign of one JSON object-by-id sample (task 8, depth 1)."""
    monkeypatch.setattr(accounts, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    samples = generate_cell(8, 1, 1, 1, suite="test")
    cid = campaign.create_campaign(db, "Pilot", samples, 1, [ann["id"]], admin)
    item = campaign.list_items(db, cid)[0]
    return {"db": db, "admin": admin, "ann": ann, "item": item, "sample": samples[0]}


def run_as(user, **state):
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def text_area(at, label):
    return next(t for t in at.text_area if t.label == label)


def button(at, label):
    return next(b for b in at.button if b.label == label)


def test_annotator_without_campaign_sees_why(isolated_env, monkeypatch):
    monkeypatch.setattr(accounts, "SCRYPT_N", 2**4)
    ann = accounts.create_user(storage.open_db(), "solo", "password1", "annotator")
    at = run_as(ann)
    assert not at.exception
    assert "No rewrite campaign has items for you yet" in at.info[0].value


def test_not_logged_in_is_refused(isolated_env):
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert "not logged in" in at.error[0].value


def test_workspace_shows_original_guidelines_tokens_and_passing_checks(setup):
    at = run_as(setup["ann"])
    assert not at.exception
    item = setup["item"]
    assert at.subheader[0].value == f"#1 · {item['scenario']}"
    assert any("Keep the data structure and format" in m.value for m in at.markdown)
    editor = at.data_editor[0]
    assert list(editor.value["token"]) == [t.text for t in rewrite.extract_tokens(setup["sample"])]
    assert text_area(at, "Reference").value == setup["sample"]["reference"]
    assert [s.value for s in at.success][:2] == [
        "Structure: reads as the original does; same skeleton.",
        "Answer: the solver derives the rewritten answer from the rewritten reference."]


def test_mapping_by_table_edit_applies_everywhere_and_saves_a_draft(setup):
    item_id = setup["item"]["id"]
    tokens = rewrite.extract_tokens(setup["sample"])
    wanted = {"Stadium": 0, "City": 1, "Eugene": 2}
    edits = {"edited_rows": {row: {"replacement": value} for value, row in wanted.items()},
             "added_rows": [], "deleted_rows": []}
    at = run_as(setup["ann"], **{f"rw_editor_{item_id}_0": edits})
    button(at, "Apply mapping").click().run()
    assert not at.exception
    expected = rewrite.apply_mapping(setup["sample"], {tokens[r].text: v for v, r in wanted.items()})
    assert text_area(at, "Reference").value == expected.reference
    assert '"City":"Eugene"' in expected.reference
    assert text_area(at, "Question").value == expected.question
    assert "Applied 3 replacement(s)" in at.success[0].value
    draft = campaign.get_draft(storage.open_db(), item_id)
    assert draft["reference"] == expected.reference
    assert draft["mapping"] == {tokens[r].text: v for v, r in wanted.items()}


def test_pasted_mapping_then_free_edit_then_refused_submission(setup):
    item_id = setup["item"]["id"]
    sample = setup["sample"]
    at = run_as(setup["ann"])
    text_area(at, "One `token -> real-world value` a line").input("k -> Stadium\nl -> Track").run()
    button(at, "Add to the table").click().run()
    assert "Added 2 row(s)" in at.success[0].value
    button(at, "Apply mapping").click().run()
    assert '"id":"Stadium"' in text_area(at, "Reference").value
    assert text_area(at, "Question").value == "What is the object with id Track?"
    # Free edit: drop the nested object's field line -> a structure problem, said precisely.
    broken = "\n".join(line for line in text_area(at, "Reference").value.split("\n") if '"Y"' not in line)
    text_area(at, "Reference").input(broken).run()
    errors = [e.value for e in at.error]
    assert any(e.startswith("Structure:") and 'obj["subs"][0]' in e and "a field is missing" in e for e in errors)
    button(at, "Submit for review").click().run()
    assert any(e.value.startswith("Submission refused") for e in at.error)
    assert campaign.get_item(storage.open_db(), item_id)["status"] == "draft"
    assert storage.open_db().execute("SELECT COUNT(*) FROM rewrite_submissions").fetchone()[0] == 0
    assert campaign.get_draft(storage.open_db(), item_id)["reference"] == broken
    assert sample["reference"] != broken


def test_draft_survives_a_rerun_and_a_new_session(setup):
    item_id = setup["item"]["id"]
    at = run_as(setup["ann"])
    edited = setup["sample"]["reference"].replace('"w"', '"Eugene"')
    text_area(at, "Reference").input(edited).run()
    at.run()
    assert text_area(at, "Reference").value == edited
    fresh = run_as(setup["ann"])  # a new session: read back from the database
    assert text_area(fresh, "Reference").value == edited
    assert campaign.get_item(storage.open_db(), item_id)["status"] == "draft"


def test_bad_mapping_is_refused_with_where_and_nothing_changes(setup):
    item_id = setup["item"]["id"]
    at = run_as(setup["ann"], **{f"rw_editor_{item_id}_0": {
        "edited_rows": {0: {"replacement": 'Say "hi"'}}, "added_rows": [], "deleted_rows": []}})
    assert any("mapping row 'k' -> 'Say \"hi\"'" in e.value and "double quote" in e.value for e in at.error)
    assert button(at, "Apply mapping").disabled
    assert text_area(at, "Reference").value == setup["sample"]["reference"]
    text_area(at, "One `token -> real-world value` a line").input("k Stadium").run()
    button(at, "Add to the table").click().run()
    assert any("line 1: expected 'token -> replacement'" in e.value for e in at.error)


def test_faithful_submission_goes_to_review_and_becomes_read_only(setup):
    item_id = setup["item"]["id"]
    mapping = {"k": "Stadium", "Z": "City", "w": "Eugene", "l": "Track", "Y": "Surface", "v": "rubber"}
    at = run_as(setup["ann"], **{f"rw_editor_{item_id}_0": {
        "edited_rows": {i: {"replacement": mapping[t.text]} for i, t in
                        enumerate(rewrite.extract_tokens(setup["sample"]))},
        "added_rows": [], "deleted_rows": []}})
    button(at, "Apply mapping").click().run()
    button(at, "Submit for review").click().run()
    assert not at.exception
    assert "Submitted item #1 for review." in [s.value for s in at.success]
    assert campaign.get_item(storage.open_db(), item_id)["status"] == "submitted"
    assert any("waiting for review" in i.value for i in at.info)
    assert not [t for t in at.text_area if t.label == "Reference"]


def test_returned_item_shows_the_comment(setup):
    db, item_id = setup["db"], setup["item"]["id"]
    mapping = {"k": "Stadium", "Z": "City", "w": "Eugene", "l": "Track", "Y": "Surface", "v": "rubber"}
    campaign.submit(db, item_id, setup["ann"], rewrite.apply_mapping(setup["sample"], mapping), mapping)
    campaign.review(db, item_id, setup["admin"], "returned", "Pick a real stadium name.")
    at = run_as(setup["ann"])
    assert any("Returned by lead: Pick a real stadium name." in w.value for w in at.warning)


def test_flag_source_sample(setup):
    at = run_as(setup["ann"])
    text_area(at, "What is wrong with the original sample?").input("The answer misses a field.").run()
    button(at, "Flag for the admin").click().run()
    assert any("flagged for the admin" in s.value for s in at.success)
    assert campaign.list_flags(storage.open_db())[0]["reason"] == "The answer misses a field."


def test_admin_can_accept_a_structure_exception(setup):
    at = run_as(setup["admin"], rw_all=True)
    # An extra field on the root (not part of the answer, the excerpt of the nested object).
    broken = setup["sample"]["reference"].replace('"subs":[', '"Extra":"x",\n"subs":[', 1)
    text_area(at, "Reference").input(broken).run()
    reason = next(t for t in at.text_input if t.label == "Exception reason (admin only)")
    reason.input("The scenario needs a surface field.").run()
    button(at, "Submit for review").click().run()
    assert not at.exception
    submission = campaign.latest_submission(storage.open_db(), setup["item"]["id"])
    assert submission["exception_reason"] == "The scenario needs a surface field."


def test_submitting_moves_on_to_the_next_item_to_do(isolated_env, monkeypatch):
    monkeypatch.setattr(accounts, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    samples = generate_cell(9, 1, 1, 2, suite="test")
    cid = campaign.create_campaign(db, "Two", samples, 2, [ann["id"]], admin)
    first, second = campaign.list_items(db, cid)
    at = run_as(ann)
    assert at.selectbox(key="rw_item").value == first["id"]
    button(at, "Submit for review").click().run()
    assert any("still the abstract original" in e.value for e in at.error)  # nothing rewritten yet
    assert at.selectbox(key="rw_item").value == first["id"]
    assert campaign.get_item(db, first["id"])["status"] == "todo"

    sample = campaign.get_item(db, first["id"])["sample"]
    mapping = rewrite.mechanical_mapping(sample)
    campaign.save_draft(db, first["id"], ann, rewrite.apply_mapping(sample, mapping), mapping)
    at = run_as(ann)
    button(at, "Submit for review").click().run()
    assert not at.exception
    assert at.selectbox(key="rw_item").value == second["id"]
    assert at.subheader[0].value.startswith("#2 · ")
