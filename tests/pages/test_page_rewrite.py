"""AppTest of structext_core/structext_eval/pages/rewrite.py: queue, mapping, free edit, refused submission, drafts, flags."""

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import campaign, rewrite
from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval.suites import generate_cell, generate_sample
from structext_core.studio import accounts, sandbox, storage
from structext_core.studio.sandbox_worker import TEST_FUNCTIONS_ENV

PAGE = str(Path(__file__).resolve().parents[2] / "structext_core" / "structext_eval" / "pages" / "rewrite.py")


@pytest.fixture
def setup(isolated_env, monkeypatch):
    """One admin, one annotator and a campaign of one JSON object-by-id sample (task 8, depth 1)."""
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
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
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
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
    assert not at.toggle  # only an admin may show every annotator's items
    assert any("Keep the data structure and format" in m.value for m in at.markdown)
    editor = at.data_editor[0]
    assert list(editor.value["token"]) == [t.text for t in rewrite.extract_tokens(setup["sample"])]
    assert text_area(at, "Reference").value == setup["sample"]["reference"]
    # The untouched original would pass its own checks: it says "not rewritten yet" instead of two greens,
    # and Submit explains itself before anyone presses it.
    assert not at.success
    assert [i.value for i in at.info if i.value.startswith("Not rewritten yet")] == [
        f"Not rewritten yet: {campaign.NOT_REWRITTEN} The checks run once it differs."]
    assert button(at, "Submit for review").disabled
    assert "Submitting opens once the reference is rewritten: it is still the abstract original." in [
        c.value for c in at.caption]


def test_not_rewritten_yet_turns_into_checks_after_an_edit_and_back_after_starting_again(setup):
    at = run_as(setup["ann"])
    reference = setup["sample"]["reference"]
    text_area(at, "Reference").input(reference.replace('"id":', '"id" :', 1)).run()  # a change the checks accept
    assert not any(i.value.startswith("Not rewritten yet") for i in at.info)
    assert [s.value for s in at.success][:2] == [
        "Structure: reads as the original does; same skeleton.",
        "Answer: the solver derives the rewritten answer from the rewritten reference."]
    assert not button(at, "Submit for review").disabled
    button(at, "Start again from the original").click().run()
    assert text_area(at, "Reference").value == reference
    assert any(i.value.startswith("Not rewritten yet") for i in at.info)
    assert not [s for s in at.success if s.value.startswith(("Structure", "Answer"))]
    assert button(at, "Submit for review").disabled


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
    # Issue 19: said once, as a toast (it was said twice: a box at the top and a toast).
    assert [t.value for t in at.toast] == ["Applied 3 replacements to the reference, the question and the answer."]
    assert not [s for s in at.success if "Applied" in s.value]
    draft = campaign.get_draft(storage.open_db(), item_id)
    assert draft["reference"] == expected.reference
    assert draft["mapping"] == {tokens[r].text: v for v, r in wanted.items()}


def test_pasted_mapping_then_free_edit_then_refused_submission(setup):
    item_id = setup["item"]["id"]
    sample = setup["sample"]
    at = run_as(setup["ann"])
    text_area(at, "One `token -> real-world value` a line").input("k -> Stadium\nl -> Track").run()
    button(at, "Add to the table").click().run()
    assert "Added 2 rows" in at.toast[0].value and not [s for s in at.success if "Added" in s.value]
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
    assert "Submitted item #1 for review." in [t.value for t in at.toast]
    assert campaign.get_item(storage.open_db(), item_id)["status"] == "submitted"
    assert any("waiting for review" in i.value for i in at.info)
    assert not [t for t in at.text_area if t.label == "Reference"]
    # Read only: the original beside the submitted rewrite.
    submitted = rewrite.apply_mapping(setup["sample"], mapping)
    assert "**Your rewrite**" in [m.value for m in at.markdown]
    assert [c.value for c in at.code] == [setup["sample"]["reference"], setup["sample"]["answer"],
                                          submitted.reference, submitted.answer]


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
    assert any("flagged for the admin" in t.value for t in at.toast)
    assert campaign.list_flags(storage.open_db())[0]["reason"] == "The answer misses a field."


def test_admin_can_accept_a_structure_exception(setup):
    at = run_as(setup["admin"], rw_all=True)
    assert at.toggle(key="rw_all").value
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
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    samples = generate_cell(9, 1, 1, 2, suite="test")
    cid = campaign.create_campaign(db, "Two", samples, 2, [ann["id"]], admin)
    first, second = campaign.list_items(db, cid)
    at = run_as(ann)
    assert at.selectbox(key="rw_item").value == first["id"]
    assert button(at, "Submit for review").disabled  # nothing rewritten yet: said before Submit
    assert any(i.value.startswith("Not rewritten yet") for i in at.info)
    assert campaign.get_item(db, first["id"])["status"] == "todo"

    sample = campaign.get_item(db, first["id"])["sample"]
    mapping = rewrite.mechanical_mapping(sample)
    campaign.save_draft(db, first["id"], ann, rewrite.apply_mapping(sample, mapping), mapping)
    at = run_as(ann)
    button(at, "Submit for review").click().run()
    assert not at.exception
    assert at.selectbox(key="rw_item").value == second["id"]
    assert at.subheader[0].value.startswith("#2 · ")


# ---------------------------------------------------------------- drafts that cannot be checked

@pytest.fixture
def check_workers(monkeypatch):
    """The server's check workers, with the test-only poison markers on and a 2 s budget."""
    monkeypatch.setenv(TEST_FUNCTIONS_ENV, "1")
    pool = sandbox.WorkerPool(workers=2, timeout=2)
    monkeypatch.setattr(sandbox, "_default", pool)
    yield pool
    pool.shutdown()


def test_a_draft_whose_check_hangs_opens_says_why_and_can_be_fixed(setup, check_workers):
    db, item_id, original = setup["db"], setup["item"]["id"], setup["sample"]["reference"]
    hanging = original + "\n<<sandbox-test:hang>>"  # the worker loops for ever on it (test mode only)
    campaign.save_draft(db, item_id, setup["ann"], rewrite.Texts(hanging, setup["sample"]["question"],
                                                                  setup["sample"]["answer"]), {})
    start = time.monotonic()
    at = run_as(setup["ann"])
    assert time.monotonic() - start < 10
    assert not at.exception
    assert text_area(at, "Reference").value == hanging  # the item opens with the draft, editable
    assert [e.value for e in at.error] == [
        "This text is too large or too deeply nested to check: the check timed out after 2 s. The text stays "
        "editable: shorten or simplify the reference, or start again from the original."]
    assert not at.success
    button(at, "Submit for review").click().run()
    assert any(e.value.startswith("Submission refused: This text is too large or too deeply nested to check")
               for e in at.error)
    assert campaign.get_item(db, item_id)["status"] == "draft"
    assert db.execute("SELECT COUNT(*) FROM rewrite_submissions").fetchone()[0] == 0
    # The annotator fixes the text: it is saved and checked again (the original itself: nothing to check yet).
    text_area(at, "Reference").input(original).run()
    assert not at.exception and not at.error
    assert any(i.value.startswith("Not rewritten yet") for i in at.info)
    assert campaign.get_draft(db, item_id)["reference"] == original
    text_area(at, "Reference").input(original.replace('"id":', '"id" :', 1)).run()
    assert not at.exception and not at.error
    assert [s.value for s in at.success][:2] == [
        "Structure: reads as the original does; same skeleton.",
        "Answer: the solver derives the rewritten answer from the rewritten reference."]


def test_a_yaml_draft_nested_50000_deep_opens_and_can_be_fixed(isolated_env, monkeypatch, check_workers):
    """PyYAML's C loader segfaults on this draft in the plain core: the page process would die."""
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    sample = generate_cell(13, 1, 1, 1, suite="test")[0]
    cid = campaign.create_campaign(db, "Deep", [sample], 1, [ann["id"]], admin)
    item_id = campaign.list_items(db, cid)[0]["id"]
    deep = "[" * 50_000 + "]" * 50_000
    campaign.save_draft(db, item_id, ann, rewrite.Texts(deep, sample["question"], sample["answer"]), {})
    at = run_as(ann)
    assert not at.exception
    assert text_area(at, "Reference").value == deep
    errors = [e.value for e in at.error]
    # The check workers say it cannot be checked (or, once the parsers bound depth, the parse says why).
    assert any("too large or too deeply nested to check" in e or e.startswith("Structure:") for e in errors), errors
    text_area(at, "Reference").input(sample["reference"]).run()
    assert not at.exception and not at.error
    assert campaign.get_draft(db, item_id)["reference"] == sample["reference"]


def test_other_sessions_are_served_while_one_draft_hangs(isolated_env, monkeypatch, check_workers):
    """Two annotators at once: the one whose draft hangs waits out its budget, the other does not."""
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann1 = accounts.create_user(db, "ann1", "password1", "annotator")
    ann2 = accounts.create_user(db, "ann2", "password1", "annotator")
    cid = campaign.create_campaign(db, "Two", generate_cell(8, 1, 1, 2, suite="test"), 2, [ann1["id"], ann2["id"]],
                                   admin)
    first = campaign.list_items(db, cid, annotator_id=ann1["id"])[0]
    sample = campaign.get_item(db, first["id"])["sample"]
    campaign.save_draft(db, first["id"], ann1, rewrite.Texts(sample["reference"] + "\n<<sandbox-test:hang>>",
                                                              sample["question"], sample["answer"]), {})
    run_as(ann2)  # both workers up
    finished: dict[str, float] = {}
    start = time.monotonic()

    def session(user: dict) -> None:
        at = run_as(user)
        assert not at.exception
        finished[user["username"]] = time.monotonic() - start

    hanging = threading.Thread(target=session, args=(ann1,))
    hanging.start()
    time.sleep(0.5)
    session(ann2)
    hanging.join(30)
    assert not hanging.is_alive()
    assert finished["ann2"] < finished["ann1"]
    assert finished["ann1"] >= 2  # the hanging draft's check ran its whole budget meanwhile


def test_when_no_check_worker_can_start_the_page_says_so_and_stays_editable(setup, monkeypatch):
    monkeypatch.setattr(sandbox, "_default", None)
    monkeypatch.setenv(sandbox.ENV_WORKERS, "two")  # a misconfigured server: no worker starts
    at = run_as(setup["ann"])
    assert not at.exception and not at.error  # the untouched original: nothing to check yet
    edited = setup["sample"]["reference"].replace('"w"', '"Eugene"')
    text_area(at, "Reference").input(edited).run()
    assert [e.value for e in at.error] == [
        "The checks cannot run on this server: STRUCTEXT_SANDBOX_WORKERS='two' is not a whole number. Ask the "
        "administrator. The text stays editable."]
    assert campaign.get_draft(storage.open_db(), setup["item"]["id"])["reference"] == edited


# ---------------------------------------------------------------- the seal: no answer oracle (issue 19, item 1)

SECRET_MAPPING = {"k": "Stadium", "Z": "City", "w": "Eugene", "l": "Track", "Y": "Surface", "v": "rubber"}


def _open_question_like(source: dict, suite: str = "test-hard") -> dict:
    """A study question of the rewrite item's task with the rewrite original's skeleton and
    other values (so pasting it into the rewrite passes the structure check)."""
    texts = rewrite.apply_mapping(source, SECRET_MAPPING)
    return {**source, "id": f"{suite}-secret-1", "suite": suite, "reference": texts.reference,
            "question": texts.question, "answer": texts.answer}


def _messages(at) -> list[str]:
    """Every message the page shows (not the texts in the boxes, nor the original's code)."""
    return [m.value for kind in (at.error, at.warning, at.info, at.success, at.caption, at.toast, at.markdown)
            for m in kind]


def _key_lines(answer: str) -> list[str]:
    return [line.strip() for line in answer.split("\n") if line.strip()]


def _paste(at, reference: str, question: str, answer: str):
    text_area(at, "Reference").input(reference).run()
    text_area(at, "Question").input(question).run()
    text_area(at, "Answer").input(answer).run()
    return at


@pytest.fixture
def open_question(setup):
    """ann1 takes part in an open Test-Hard study whose (unanswered) question is of the
    rewrite item's task, with the same skeleton as the rewrite's original."""

    secret = _open_question_like(setup["sample"])
    structext_study.create_study(setup["db"], name="hard-1", suite="test-hard", samples=[secret], n_items=1,
                       annotator_ids=[setup["ann"]["id"]])
    return secret


def test_pasting_an_open_question_into_a_rewrite_never_shows_its_answer_key(setup, open_question):
    at = run_as(setup["ann"])
    assert not at.exception
    for typed in ("x", "{\nx", '{\n"id":"Track",\nx'):  # the line-by-line attack of the issue
        _paste(at, open_question["reference"], open_question["question"], typed)
        assert not at.exception
        shown = "\n".join(_messages(at))
        leaked = [line for line in _key_lines(open_question["answer"]) if line in shown]
        assert not leaked, leaked
        assert "solver" not in shown
    # The structure check still runs and passes; the answer check is withheld, and the page says why.
    assert "Structure: reads as the original does; same skeleton." in [s.value for s in at.success]
    notes = [i.value for i in at.info if i.value.startswith("Answer: checked at review")]
    assert notes and "in JSON or of this kind of task" in notes[0] and "hard-1" not in notes[0]
    assert "would work out the answer of any question pasted here, so it is off while those are open" in notes[0]
    assert "Submitting needs the structure check to pass; the answer is checked at review." in [
        c.value for c in at.caption]


def test_a_withheld_answer_check_is_not_an_oracle_at_submission_either(setup, open_question):
    db, item_id = setup["db"], setup["item"]["id"]
    at = _paste(run_as(setup["ann"]), open_question["reference"], open_question["question"], "x")
    button(at, "Submit for review").click().run()
    assert not at.exception
    shown = "\n".join(_messages(at))
    assert not [line for line in _key_lines(open_question["answer"]) if line in shown]
    # Accepted on its structure: the wrong answer is for the reviewer to see, not the annotator.
    assert campaign.get_item(db, item_id)["status"] == "submitted"
    submission = campaign.latest_submission(db, item_id)
    assert (submission["structure_ok"], submission["answer_ok"]) == (1, 0)
    report = campaign.check_submission(campaign.get_item(db, item_id), submission)
    assert not report.answer_ok and report.answer_checked  # the reviewer's full check
    with pytest.raises(campaign.CampaignError, match="Not approved: the answer check fails"):
        campaign.review(db, item_id, setup["admin"], "approved")


def test_with_an_open_question_a_rewrite_of_another_shape_shows_no_answer_either(setup, open_question):
    other = generate_sample(8, 3, 2, suite="test-hard", index=0)  # same task, another depth and width
    at = _paste(run_as(setup["ann"]), other["reference"], other["question"], "x")
    assert not at.exception
    shown = "\n".join(_messages(at))
    assert any(e.value.startswith("Structure:") for e in at.error)
    assert "solver" not in shown
    assert not [line for line in _key_lines(other["answer"]) if len(line) > 1 and line in shown]


def test_without_open_questions_the_answer_check_waits_for_the_structure(setup):
    other = generate_sample(8, 3, 2, suite="test-hard", index=0)
    at = _paste(run_as(setup["ann"]), other["reference"], other["question"], "x")
    assert not at.exception
    assert any(e.value.startswith("Structure:") for e in at.error)
    assert "Answer: checked once the structure check passes." in [i.value for i in at.info]
    assert "solver" not in "\n".join(_messages(at))


def test_without_open_questions_of_its_format_a_rewrite_gets_the_answer_check(setup):
    """An annotator whose open questions are all in another format and of another kind of task
    (a YAML path walk, beside a JSON retrieval): rewriting keeps its purpose."""

    yaml_question = generate_sample(14, 1, 1, suite="test-hard", index=0)
    structext_study.create_study(setup["db"], name="hard-yaml", suite="test-hard", samples=[yaml_question], n_items=1,
                       annotator_ids=[setup["ann"]["id"]])
    mine = rewrite.apply_mapping(setup["sample"], SECRET_MAPPING)
    at = _paste(run_as(setup["ann"]), mine.reference, mine.question, "x")
    assert not at.exception
    answer_errors = [e.value for e in at.error if e.value.startswith("Answer:")]
    assert answer_errors and "the solver has '{'" in answer_errors[0]
    text_area(at, "Answer").input(mine.answer).run()
    assert "Answer: the solver derives the rewritten answer from the rewritten reference." in [
        s.value for s in at.success]


def test_a_review_comment_with_an_image_loads_nothing_on_the_annotators_page(setup):
    """Issue 19, item 9: the reviewer's comment and the scenario reach the annotator as text."""
    from markdown_it import MarkdownIt

    db, item_id = setup["db"], setup["item"]["id"]
    pixel = "http://host.example/px.png"
    db.execute("UPDATE rewrite_items SET scenario = ? WHERE id = ?", [f"zoo ![s]({pixel})", item_id])
    campaign.submit(db, item_id, setup["ann"], rewrite.apply_mapping(setup["sample"], SECRET_MAPPING), SECRET_MAPPING)
    campaign.review(db, item_id, setup["admin"], "returned", f"See ![this]({pixel}) and <img src='{pixel}'>")
    at = run_as(setup["ann"])
    assert not at.exception
    parser = MarkdownIt("commonmark", {"html": True})
    shown = [e.value for kind in (at.warning, at.subheader, at.markdown, at.caption) for e in kind]
    assert any(pixel in text for text in shown)
    assert not [text for text in shown if "<img" in parser.render(text)]


def test_the_answer_box_is_as_tall_as_its_text(setup, monkeypatch):
    """Issue 19: a computed height cut the Answer box's last line; it now follows its content."""
    import streamlit as st

    heights, real = {}, st.text_area

    def spy(label, *args, **kwargs):
        heights[label] = kwargs.get("height")
        return real(label, *args, **kwargs)

    monkeypatch.setattr(st, "text_area", spy)
    at = run_as(setup["ann"])
    assert not at.exception and text_area(at, "Answer").value == setup["sample"]["answer"]
    assert heights["Answer"] == "content"
