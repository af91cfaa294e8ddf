"""Real-Test campaigns: setup, drafts, submission, review, flags, export (no Streamlit)."""

import dataclasses
import json
import re
import shutil
from collections import Counter

import pytest

from structext_core.structext_eval import campaign, rewrite
from structext_core.structext_eval.audit import audit
from structext_core.structext_eval.suites import SuiteConfig, generate_cell, generate_suite
from structext_core.studio import access, accounts, sandbox, storage
from structext_core.text import limits, outputs


@pytest.fixture
def db(tmp_path):
    return storage.open_db(tmp_path / "structext.db")


@pytest.fixture(scope="module")
def small_suite():
    """Every task at depths 1 and 2, two samples each (116 samples)."""
    return generate_suite(SuiteConfig("test", depths=(1, 2), widths=(1,), per_cell=2))


@pytest.fixture
def people(db, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)  # fast hashing in tests
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann1 = accounts.create_user(db, "ann1", "password1", "annotator")
    ann2 = accounts.create_user(db, "ann2", "password1", "annotator")
    return admin, ann1, ann2


def test_catalogue_has_at_least_928_distinct_scenarios():
    shipped = campaign.shipped_scenarios()
    assert len(shipped) >= 928
    assert len({s.lower() for s in shipped}) == len(shipped)
    assert {"athletics: sprint results", "glassware specifications: wine glass dimensions"} <= set(shipped)


def test_admin_adds_scenarios_without_duplicates(db, people):
    admin, ann1, _ = people
    added, present = campaign.add_scenarios(db, "bee keeping: hive inspections\nATHLETICS: Sprint Results\n", admin)
    assert added == ["bee keeping: hive inspections"] and present == ["ATHLETICS: Sprint Results"]
    assert campaign.scenario_catalogue(db)[-1] == "bee keeping: hive inspections"
    with pytest.raises(campaign.CampaignError, match="Only an admin"):
        campaign.add_scenarios(db, "x: y", ann1)
    with pytest.raises(campaign.CampaignError, match="No scenario given"):
        campaign.add_scenarios(db, "  \n", admin)


def test_paper_draw_is_16_per_task_and_depth():
    suite = generate_suite("test")
    drawn = campaign.draw_stratified(suite, 928, seed=1)
    counts = Counter((s["task_id"], s["depth"]) for s in drawn)
    assert len(drawn) == 928 and len(counts) == 58 and set(counts.values()) == {16}
    assert len({s["id"] for s in drawn}) == 928
    assert [s["id"] for s in campaign.draw_stratified(suite, 928, seed=1)] == [s["id"] for s in drawn]
    assert [s["id"] for s in campaign.draw_stratified(suite, 928, seed=2)] != [s["id"] for s in drawn]


@pytest.mark.parametrize("n", [1, 57, 59, 100, 116])
def test_any_number_is_drawn_as_evenly_as_possible(small_suite, n):
    drawn = campaign.draw_stratified(small_suite, n, seed=0)
    counts = Counter((s["task_id"], s["depth"]) for s in drawn)
    assert len(drawn) == n
    assert max(counts.values()) - min(counts.get(k, 0) for k in {(s["task_id"], s["depth"]) for s in small_suite}) <= 1


def test_draw_refuses_impossible_numbers(small_suite):
    with pytest.raises(campaign.CampaignError, match="holds 116 samples; cannot draw 117"):
        campaign.draw_stratified(small_suite, 117)
    with pytest.raises(campaign.CampaignError):
        campaign.draw_stratified(small_suite, 0)


def test_setup_assigns_distinct_scenarios_and_balances_annotators(db, people, small_suite):
    admin, ann1, ann2 = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 58, [ann1["id"], ann2["id"]], admin, seed=3)
    items = campaign.list_items(db, cid)
    assert len(items) == 58
    assert len({i["scenario"].lower() for i in items}) == 58
    per_annotator = Counter(i["annotator"] for i in items)
    assert per_annotator == {"ann1": 29, "ann2": 29}
    for name in ("ann1", "ann2"):
        formats = Counter(i["language"] for i in items if i["annotator"] == name)
        assert len(formats) == 8  # each gets every format
    assert all(i["status"] == "todo" for i in items)
    assert campaign.list_campaigns(db, annotator_id=ann1["id"])[0]["name"] == "Pilot"


def test_setup_refusals_write_nothing(db, people, small_suite, monkeypatch):
    admin, ann1, _ = people
    with pytest.raises(campaign.CampaignError, match="needs a name"):
        campaign.create_campaign(db, " ", small_suite, 5, [ann1["id"]], admin)
    with pytest.raises(campaign.CampaignError, match="at least one annotator"):
        campaign.create_campaign(db, "A", small_suite, 5, [], admin)
    with pytest.raises(campaign.CampaignError, match="Only an admin"):
        campaign.create_campaign(db, "A", small_suite, 5, [ann1["id"]], ann1)
    monkeypatch.setattr(campaign.setup, "shipped_scenarios", lambda: ["one", "two"])
    with pytest.raises(campaign.CampaignError, match="catalogue has 2 scenarios but 5 samples"):
        campaign.create_campaign(db, "A", small_suite, 5, [ann1["id"]], admin)
    assert db.execute("SELECT COUNT(*) FROM rewrite_campaigns").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM rewrite_items").fetchone()[0] == 0


def test_duplicate_campaign_name_is_refused(db, people, small_suite):
    admin, ann1, _ = people
    campaign.create_campaign(db, "Pilot", small_suite, 3, [ann1["id"]], admin)
    with pytest.raises(campaign.CampaignError, match="exists already"):
        campaign.create_campaign(db, "pilot", small_suite, 3, [ann1["id"]], admin)


def with_an_extra_field(sample):
    """A faithful rewrite of a task-9 JSON ``sample`` with a field added to its root: the answer
    check passes, the structure check does not."""
    texts = rewrite.apply_mapping(sample, rewrite.mechanical_mapping(sample))
    return rewrite.Texts(texts.reference.replace('"subs":[]', '"Extra":"x",\n"subs":[]', 1), texts.question,
                         texts.answer)


def one_item(db, people, task_id=8, depth=1):
    admin, ann1, _ = people
    samples = generate_cell(task_id, depth, 1, 1, suite="test")
    cid = campaign.create_campaign(db, f"C{task_id}", samples, 1, [ann1["id"]], admin)
    return campaign.list_items(db, cid)[0]["id"], cid


def test_draft_is_saved_and_read_back(db, people):
    _, ann1, ann2 = people
    item_id, _ = one_item(db, people)
    sample = campaign.get_item(db, item_id)["sample"]
    assert campaign.working_copy(db, item_id) == (rewrite.original_texts(sample), {})
    mapping = rewrite.mechanical_mapping(sample)
    texts = rewrite.apply_mapping(sample, mapping)
    campaign.save_draft(db, item_id, ann1, texts, {**mapping, "unused": ""})
    again = storage.open_db(db.conn.execute("PRAGMA database_list").fetchone()[2])  # a fresh connection
    assert campaign.working_copy(again, item_id) == (texts, mapping)
    assert campaign.get_item(again, item_id)["status"] == "draft"
    with pytest.raises(campaign.CampaignError, match="assigned to ann1, not to you"):
        campaign.save_draft(db, item_id, ann2, texts, mapping)
    campaign.reset_draft(db, item_id, ann1)
    assert campaign.working_copy(db, item_id) == (rewrite.original_texts(sample), {})



# ---- the annotator's queue and the workspace's steps ----------------------------------

def test_oversees_is_read_from_the_role_table(people, monkeypatch):
    admin, ann1, _ = people
    researcher = {"id": 99, "username": "reader", "role": "researcher"}
    assert campaign.oversees(admin) and not campaign.oversees(ann1)
    assert not campaign.oversees(researcher) and not campaign.oversees(None)
    # The one table decides: let researchers open the Rewrite campaigns page and they oversee too.
    pages = {p.key: dataclasses.replace(p, rule=access.Rule(p.rule.always | {"researcher"}))
             if p.key == "campaign_admin" else p for p in access.PAGES}
    monkeypatch.setattr(access, "page", pages.__getitem__)
    assert campaign.oversees(researcher)


def test_queue_is_ones_own_unless_an_overseer_asks_for_everyone(db, people, small_suite):
    admin, ann1, ann2 = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 6, [ann1["id"], ann2["id"]], admin)
    everyone = campaign.list_items(db, cid)
    own = [i for i in everyone if i["annotator_id"] == ann1["id"]]
    assert len(own) == 3 and [i["position"] for i in own] == sorted(i["position"] for i in own)
    assert campaign.queue(db, cid, ann1) == own
    assert campaign.queue(db, cid, ann1, everyone=True) == own  # an annotator never sees the others' items
    assert campaign.queue(db, cid, admin) == []  # none of them is the admin's own
    assert campaign.queue(db, cid, admin, everyone=True) == everyone
    loner = accounts.create_user(db, "ann3", "password1", "annotator")
    assert [c["id"] for c in campaign.campaigns_for(db, ann1)] == [cid]
    assert campaign.campaigns_for(db, loner) == []
    assert [c["id"] for c in campaign.campaigns_for(db, admin)] == [cid]


def statuses(*names):
    return [{"id": n, "status": name} for n, name in enumerate(names, 1)]


def test_first_and_next_to_do_follow_the_queue_and_pass_over_done_items():
    items = statuses("submitted", "todo", "approved", "returned", "draft")
    assert campaign.done_count(items) == 2
    assert campaign.first_to_do(items) == 2
    assert campaign.next_to_do(items, 2) == 4
    assert campaign.next_to_do(items, 4) == 5
    assert campaign.next_to_do(items, 5) == 2  # after the last, from the start
    assert campaign.next_to_do(items, 1) == 2
    assert campaign.next_to_do(items, 42) is None  # not in this queue
    assert campaign.next_to_do(statuses("draft", "submitted"), 1) is None  # nothing else left to do
    assert campaign.first_to_do(statuses("submitted", "approved")) == 1  # all done: the first, read only
    assert campaign.first_to_do([]) is None
    assert campaign.done_count([]) == 0


def test_submitting_moves_the_queue_on(db, people):
    admin, ann1, _ = people
    samples = generate_cell(9, 1, 1, 3, suite="test")
    cid = campaign.create_campaign(db, "Three", samples, 3, [ann1["id"]], admin)
    first, second, third = campaign.queue(db, cid, ann1)
    assert campaign.first_to_do(campaign.queue(db, cid, ann1)) == first["id"]
    for item in (first, second):
        sample = campaign.get_item(db, item["id"])["sample"]
        mapping = rewrite.mechanical_mapping(sample)
        campaign.submit(db, item["id"], ann1, rewrite.apply_mapping(sample, mapping), mapping)
    items = campaign.queue(db, cid, ann1)
    assert campaign.done_count(items) == 2
    assert campaign.next_to_do(items, second["id"]) == third["id"]
    assert campaign.first_to_do(items) == third["id"]


def test_table_mapping_puts_the_cell_edits_on_the_saved_mapping():
    sample = generate_cell(8, 1, 1, 1, suite="test")[0]
    tokens = rewrite.extract_tokens(sample)
    first, second, third = (t.text for t in tokens[:3])
    saved = {first: "Stadium", second: "City"}
    edits = {"1": {"replacement": "Town"},  # rows as text or number, as the table hands them over
             2: {"replacement": " Eugene "},
             0: {"replacement": None},  # an emptied cell keeps the token
             len(tokens): {"replacement": "nowhere"},  # no such row
             -1: {"replacement": "nowhere"}}
    assert campaign.table_mapping(saved, tokens, edits) == {second: "Town", third: "Eugene"}
    assert campaign.table_mapping(saved, tokens, {0: {"role": "id"}}) == saved  # another column
    assert campaign.table_mapping(saved, tokens, None) == saved


def test_pasted_lines_join_the_mapping_or_nothing_changes():
    sample = generate_cell(8, 1, 1, 1, suite="test")[0]
    tokens = rewrite.extract_tokens(sample)
    first, second = tokens[0].text, tokens[1].text
    assert campaign.paste_mapping(f"{first} -> Stadium\n\n# a comment\n{second} -> City", tokens,
                                  {first: "Arena", "x": "y"}) == ({first: "Stadium", "x": "y", second: "City"}, 2)
    with pytest.raises(campaign.CampaignError, match=r"not read; nothing changed:\n- .*line 2: expected"):
        campaign.paste_mapping(f"{first} -> Stadium\nStadium", tokens, {})
    with pytest.raises(campaign.CampaignError, match=r"Not tokens of this sample: 'nope'; nothing changed"):
        campaign.paste_mapping("nope -> Stadium", tokens, {})
    with pytest.raises(campaign.CampaignError, match=too_long("pasted mapping lines", "MAX_DRAFT_CHARS")):
        campaign.paste_mapping("x" * (limits.MAX_DRAFT_CHARS + 1), tokens, {})


def test_applying_a_mapping_keeps_free_edits_unless_told_to_replace_them():
    sample = generate_cell(8, 1, 1, 1, suite="test")[0]
    mapping = rewrite.mechanical_mapping(sample)
    original = rewrite.original_texts(sample)
    mapped = rewrite.apply_mapping(sample, mapping)
    assert campaign.mapped_texts(sample, original, mapping, {}) == mapped
    assert campaign.mapped_texts(sample, mapped, mapping, mapping) == mapped  # built by the mapping alone
    edited = rewrite.Texts(mapped.reference + " ", mapped.question, mapped.answer)
    with pytest.raises(campaign.FreeEditsAtRisk, match="Tick 'Replace my free edits'"):
        campaign.mapped_texts(sample, edited, mapping, mapping)
    assert campaign.mapped_texts(sample, edited, mapping, mapping, replace_free_edits=True) == mapped
    first = rewrite.extract_tokens(sample)[0].text
    with pytest.raises(campaign.CampaignError, match=r"mapping was not applied; nothing changed:\n- "):
        campaign.mapped_texts(sample, original, {first: 'Say "hi"'}, {})


def test_a_structure_exception_is_offered_to_an_overseer_whose_answer_check_passes(people):
    admin, ann1, _ = people
    sample = generate_cell(9, 1, 1, 1, suite="test")[0]
    texts = rewrite.apply_mapping(sample, rewrite.mechanical_mapping(sample))
    broken = with_an_extra_field(sample)
    structure_fails = rewrite.check_rewrite(sample, broken.reference, broken.question, broken.answer)
    assert structure_fails.answer_ok and not structure_fails.structure_ok
    passes = rewrite.check_rewrite(sample, texts.reference, texts.question, texts.answer)
    answer_fails = rewrite.check_rewrite(sample, broken.reference, broken.question, "Somebody")
    assert campaign.may_accept_exception(admin, structure_fails)
    assert not campaign.may_accept_exception(ann1, structure_fails)
    assert not campaign.may_accept_exception(admin, passes)
    assert not campaign.may_accept_exception(admin, answer_fails)
    assert not campaign.may_accept_exception(admin, sandbox.Unchecked("timeout", "the check timed out after 2 s"))


def test_submission_with_broken_structure_is_refused_and_writes_nothing(db, people):
    admin, ann1, _ = people
    item_id, _ = one_item(db, people, task_id=9)
    broken = with_an_extra_field(campaign.get_item(db, item_id)["sample"])
    with pytest.raises(campaign.SubmissionRefused, match="structure check fails .*a field was added") as info:
        campaign.submit(db, item_id, ann1, broken, {})
    assert not info.value.report.structure_ok
    with pytest.raises(campaign.SubmissionRefused, match="only an admin can accept an exception"):
        campaign.submit(db, item_id, ann1, broken, {}, exception_reason="the scenario needs it")
    assert db.execute("SELECT COUNT(*) FROM rewrite_submissions").fetchone()[0] == 0
    assert campaign.get_item(db, item_id)["status"] == "todo"
    # An admin may accept the structure exception with a written reason ...
    campaign.submit(db, item_id, admin, broken, {}, exception_reason="extra field agreed with the authors")
    assert campaign.latest_submission(db, item_id)["exception_reason"] == "extra field agreed with the authors"
    assert campaign.get_item(db, item_id)["status"] == "submitted"


def test_answer_check_is_never_waived(db, people):
    admin, _, _ = people
    item_id, _ = one_item(db, people, task_id=9)
    sample = campaign.get_item(db, item_id)["sample"]
    texts = rewrite.apply_mapping(sample, rewrite.mechanical_mapping(sample))
    wrong = rewrite.Texts(texts.reference, texts.question, "Somebody")
    with pytest.raises(campaign.SubmissionRefused, match="answer check fails .*cannot be waived"):
        campaign.submit(db, item_id, admin, wrong, {}, exception_reason="please")


def test_review_approve_and_return_with_comment(db, people):
    admin, ann1, _ = people
    item_id, _ = one_item(db, people)
    sample = campaign.get_item(db, item_id)["sample"]
    texts = rewrite.apply_mapping(sample, rewrite.mechanical_mapping(sample))
    campaign.submit(db, item_id, ann1, texts, rewrite.mechanical_mapping(sample))
    with pytest.raises(campaign.CampaignError, match="is submitted: it can no longer be changed"):
        campaign.save_draft(db, item_id, ann1, texts, {})
    with pytest.raises(campaign.CampaignError, match="needs a comment"):
        campaign.review(db, item_id, admin, "returned", " ")
    with pytest.raises(campaign.CampaignError, match="Only an admin"):
        campaign.review(db, item_id, ann1, "approved")
    campaign.review(db, item_id, admin, "returned", "Use one city per object.")
    assert campaign.get_item(db, item_id)["status"] == "returned"
    assert campaign.latest_review(db, item_id)["comment"] == "Use one city per object."
    campaign.save_draft(db, item_id, ann1, texts, {})  # editable again, stays 'returned' until resubmitted
    assert campaign.get_item(db, item_id)["status"] == "returned"
    campaign.submit(db, item_id, ann1, texts, {})
    campaign.review(db, item_id, admin, "approved")
    assert campaign.get_item(db, item_id)["status"] == "approved"
    with pytest.raises(campaign.CampaignError, match="not waiting for review"):
        campaign.review(db, item_id, admin, "approved")


def test_flags_are_listed_for_the_admin_and_resolved(db, people):
    admin, ann1, ann2 = people
    item_id, cid = one_item(db, people)
    with pytest.raises(campaign.CampaignError, match="Say what is wrong"):
        campaign.flag_sample(db, item_id, ann1, "bad")
    with pytest.raises(campaign.CampaignError, match="not to you"):
        campaign.flag_sample(db, item_id, ann2, "the answer is wrong")
    flag_id = campaign.flag_sample(db, item_id, ann1, "The answer misses the second object.")
    flags = campaign.list_flags(db, cid, open_only=True)
    assert [(f["flagged_by"], f["reason"]) for f in flags] == [("ann1", "The answer misses the second object.")]
    campaign.resolve_flag(db, flag_id, admin, "Checked: the sample is right.")
    assert campaign.list_flags(db, cid, open_only=True) == []
    with pytest.raises(campaign.CampaignError, match="resolved already"):
        campaign.resolve_flag(db, flag_id, admin, "again")


def test_export_of_approved_rewrites_audits_clean(db, people, small_suite, tmp_path):
    admin, ann1, ann2 = people
    cid = campaign.create_campaign(db, "Full", small_suite, 58, [ann1["id"], ann2["id"]], admin, seed=5)
    with pytest.raises(campaign.CampaignError, match="No approved rewrite"):
        campaign.export_campaign(db, cid, tmp_path / "out")
    owners = {"ann1": ann1, "ann2": ann2}
    for row in campaign.list_items(db, cid):
        sample = campaign.get_item(db, row["id"])["sample"]
        mapping = rewrite.mechanical_mapping(sample)
        campaign.submit(db, row["id"], owners[row["annotator"]], rewrite.apply_mapping(sample, mapping), mapping)
        campaign.review(db, row["id"], admin, "approved")
    result = campaign.export_campaign(db, cid, tmp_path / "out")
    assert result.count == 58
    rows = [json.loads(line) for line in result.jsonl.read_text().splitlines()]
    assert {r["suite"] for r in rows} == {"real-test"}
    assert all(r["source_id"].startswith("test-t") and r["scenario"] for r in rows)
    assert len({r["id"] for r in rows}) == 58
    assert not any("Real" in r["source_id"] for r in rows)
    summary = audit([result.jsonl])
    assert summary.line() == "audited 58 samples: 58 agree, 0 disagree, 0 unsupported"
    summary = audit([result.layout])
    assert summary.line() == "audited 58 samples: 58 agree, 0 disagree, 0 unsupported"
    assert progress_row(db, cid, "ann1")["approved"] == 29


def test_unchanged_original_is_refused_and_nothing_is_written(db, people):
    _, ann1, _ = people
    item_id, _ = one_item(db, people, task_id=9)
    sample = campaign.get_item(db, item_id)["sample"]
    with pytest.raises(campaign.SubmissionRefused, match="still the abstract original"):
        campaign.submit(db, item_id, ann1, rewrite.original_texts(sample), {})
    assert campaign.get_item(db, item_id)["status"] == "todo"
    assert campaign.latest_submission(db, item_id) is None


def progress_row(db, cid, name):
    return next(r for r in campaign.progress(db, cid) if r["annotator"] == name)


def test_export_refuses_a_sample_the_audit_rejects(db, people, tmp_path):
    admin, ann1, _ = people
    item_id, cid = one_item(db, people, task_id=9)
    sample = campaign.get_item(db, item_id)["sample"]
    mapping = rewrite.mechanical_mapping(sample)
    campaign.submit(db, item_id, ann1, rewrite.apply_mapping(sample, mapping), mapping)
    campaign.review(db, item_id, admin, "approved")
    # Tamper with the stored submission (as a buggy tool might): export must refuse.
    db.execute("UPDATE rewrite_submissions SET answer = 'nobody' WHERE item_id = ?", [item_id])
    db.conn.commit()
    with pytest.raises(campaign.CampaignError, match="audit disagrees on real-test-t09"):
        campaign.export_campaign(db, cid, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ---- size limits on stored text (issue 11) ------------------------------------------------


def too_long(field, limit_name):
    """The refusal message for a text one character over ``limit_name``."""
    limit = getattr(limits, limit_name)
    return re.escape(f"The {field} is {limit + 1:,} characters long; the limit is {limit:,} characters "
                     f"(STRUCTEXT_LIMIT_{limit_name} raises it).")


def stored_rows(db):
    tables = ("rewrite_campaigns", "rewrite_items", "rewrite_drafts", "rewrite_submissions", "rewrite_reviews",
              "rewrite_flags", "rewrite_scenarios")
    return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}


def test_campaign_name_over_the_limit_is_refused_and_at_the_limit_accepted(db, people, small_suite):
    admin, ann1, _ = people
    with pytest.raises(campaign.CampaignError, match=too_long("campaign name", "MAX_NAME_CHARS")):
        campaign.create_campaign(db, "n" * (limits.MAX_NAME_CHARS + 1), small_suite, 2, [ann1["id"]], admin)
    assert stored_rows(db)["rewrite_campaigns"] == 0 and stored_rows(db)["rewrite_items"] == 0
    campaign.create_campaign(db, "n" * limits.MAX_NAME_CHARS, small_suite, 2, [ann1["id"]], admin)
    assert campaign.list_campaigns(db)[0]["name"] == "n" * limits.MAX_NAME_CHARS


@pytest.mark.parametrize("part", ["reference", "question", "answer"])
def test_draft_text_over_the_limit_is_refused_and_at_the_limit_saved(db, people, part):
    _, ann1, _ = people
    item_id, _ = one_item(db, people)
    sample = campaign.get_item(db, item_id)["sample"]
    original = rewrite.original_texts(sample).as_dict()
    over = rewrite.Texts(**{**original, part: "x" * (limits.MAX_DRAFT_CHARS + 1)})
    with pytest.raises(campaign.CampaignError, match=too_long(f"rewritten {part}", "MAX_DRAFT_CHARS")):
        campaign.save_draft(db, item_id, ann1, over, {})
    with pytest.raises(campaign.CampaignError, match=too_long(f"rewritten {part}", "MAX_DRAFT_CHARS")):
        campaign.submit(db, item_id, ann1, over, {})
    assert campaign.get_draft(db, item_id) is None and campaign.latest_submission(db, item_id) is None
    assert campaign.get_item(db, item_id)["status"] == "todo"
    at_limit = rewrite.Texts(**{**original, part: "x" * limits.MAX_DRAFT_CHARS})
    campaign.save_draft(db, item_id, ann1, at_limit, {})
    assert len(campaign.get_draft(db, item_id)[part]) == limits.MAX_DRAFT_CHARS


def test_mapping_over_the_limit_is_refused_and_at_the_limit_saved(db, people):
    _, ann1, _ = people
    item_id, _ = one_item(db, people)
    texts = rewrite.original_texts(campaign.get_item(db, item_id)["sample"])
    overhead = len(json.dumps({"a": ""}))  # the stored JSON around the one value
    with pytest.raises(campaign.CampaignError, match=too_long("value mapping (as stored)", "MAX_DRAFT_CHARS")):
        campaign.save_draft(db, item_id, ann1, texts, {"a": "v" * (limits.MAX_DRAFT_CHARS - overhead + 1)})
    assert campaign.get_draft(db, item_id) is None
    campaign.save_draft(db, item_id, ann1, texts, {"a": "v" * (limits.MAX_DRAFT_CHARS - overhead)})
    assert len(campaign.get_draft(db, item_id)["mapping"]["a"]) == limits.MAX_DRAFT_CHARS - overhead


def test_exception_reason_over_the_limit_is_refused_and_at_the_limit_accepted(db, people):
    admin, _, _ = people
    item_id, _ = one_item(db, people, task_id=9)
    broken = with_an_extra_field(campaign.get_item(db, item_id)["sample"])
    with pytest.raises(campaign.CampaignError, match=too_long("exception reason", "MAX_NOTE_CHARS")):
        campaign.submit(db, item_id, admin, broken, {}, exception_reason="r" * (limits.MAX_NOTE_CHARS + 1))
    assert stored_rows(db)["rewrite_submissions"] == 0 and campaign.get_draft(db, item_id) is None
    campaign.submit(db, item_id, admin, broken, {}, exception_reason="r" * limits.MAX_NOTE_CHARS)
    assert len(campaign.latest_submission(db, item_id)["exception_reason"]) == limits.MAX_NOTE_CHARS


def test_review_comment_over_the_limit_is_refused_and_at_the_limit_accepted(db, people):
    admin, ann1, _ = people
    item_id, _ = one_item(db, people)
    sample = campaign.get_item(db, item_id)["sample"]
    mapping = rewrite.mechanical_mapping(sample)
    campaign.submit(db, item_id, ann1, rewrite.apply_mapping(sample, mapping), mapping)
    with pytest.raises(campaign.CampaignError, match=too_long("review comment", "MAX_NOTE_CHARS")):
        campaign.review(db, item_id, admin, "returned", "c" * (limits.MAX_NOTE_CHARS + 1))
    assert stored_rows(db)["rewrite_reviews"] == 0 and campaign.get_item(db, item_id)["status"] == "submitted"
    campaign.review(db, item_id, admin, "returned", "c" * limits.MAX_NOTE_CHARS)
    assert len(campaign.latest_review(db, item_id)["comment"]) == limits.MAX_NOTE_CHARS


def test_flag_reason_and_resolution_over_the_limit_are_refused(db, people):
    admin, ann1, _ = people
    item_id, cid = one_item(db, people)
    with pytest.raises(campaign.CampaignError, match=too_long("flag reason", "MAX_NOTE_CHARS")):
        campaign.flag_sample(db, item_id, ann1, "f" * (limits.MAX_NOTE_CHARS + 1))
    assert stored_rows(db)["rewrite_flags"] == 0
    flag_id = campaign.flag_sample(db, item_id, ann1, "f" * limits.MAX_NOTE_CHARS)
    with pytest.raises(campaign.CampaignError, match=too_long("flag resolution", "MAX_NOTE_CHARS")):
        campaign.resolve_flag(db, flag_id, admin, "d" * (limits.MAX_NOTE_CHARS + 1))
    assert len(campaign.list_flags(db, cid, open_only=True)) == 1
    campaign.resolve_flag(db, flag_id, admin, "d" * limits.MAX_NOTE_CHARS)
    flag = campaign.list_flags(db, cid)[0]
    assert len(flag["reason"]) == len(flag["resolution"]) == limits.MAX_NOTE_CHARS and flag["resolved_at"]


def test_scenario_list_over_the_limit_is_refused_and_at_the_limit_added(db, people, monkeypatch):
    admin, _, _ = people
    monkeypatch.setattr(limits, "MAX_DRAFT_CHARS", 2_000)  # read when called: a smaller limit keeps this quick
    lines = [f"scenario number {i:05d}: tests" for i in range(200)]  # 30 characters and a newline each
    text = "\n".join(lines)[:2_000]
    with pytest.raises(campaign.CampaignError, match=too_long("list of scenarios", "MAX_DRAFT_CHARS")):
        campaign.add_scenarios(db, text + "x", admin)
    assert stored_rows(db)["rewrite_scenarios"] == 0
    added, _ = campaign.add_scenarios(db, text, admin)
    assert len(text) == 2_000 and len(added) == text.count("\n") + 1


# ---- export folders: only ever our own files (issue 11) ------------------------------------

def approved_campaign(db, people, n=3, name="Export"):
    admin, ann1, _ = people
    samples = [s for t in (8, 9, 13) for s in generate_cell(t, 1, 1, 1, suite="test")]
    cid = campaign.create_campaign(db, name, samples, n, [ann1["id"]], admin)
    for row in campaign.list_items(db, cid):
        sample = campaign.get_item(db, row["id"])["sample"]
        mapping = rewrite.mechanical_mapping(sample)
        campaign.submit(db, row["id"], ann1, rewrite.apply_mapping(sample, mapping), mapping)
        campaign.review(db, row["id"], admin, "approved")
    return cid


def snapshot(folder):
    """Every file below ``folder`` with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_refuses_a_folder_with_files_of_someone_else(db, people, tmp_path):
    cid = approved_campaign(db, people)
    folder = tmp_path / "thesis"
    (folder / "official" / "0Shotbenchmark").mkdir(parents=True)
    (folder / "official" / "0Shotbenchmark" / "chapter.json").write_text("{}")
    (folder / "notes.txt").write_text("mine")
    before = snapshot(folder)
    with pytest.raises(campaign.CampaignError, match="already holds files that no StrucText export wrote"):
        campaign.export_campaign(db, cid, folder)
    assert snapshot(folder) == before


def test_export_refuses_the_shipped_samples_folder(db, people, tmp_path, official_dir):
    """The reported accident: pointed at (a copy of) the shipped samples, 116 files became 1."""
    cid = approved_campaign(db, people)
    copy = tmp_path / "data"
    shutil.copytree(official_dir, copy / "official")
    before = snapshot(copy)
    assert len([p for p in before if p.endswith(".json")]) == 116
    for target in (copy, copy / "official"):
        with pytest.raises(campaign.CampaignError, match="no StrucText export wrote"):
            campaign.export_campaign(db, cid, target)
    assert snapshot(copy) == before
    with pytest.raises(outputs.OutputError):  # the real one too (checked only: nothing is written)
        outputs.check_export_folder(official_dir.parent)


def test_re_export_replaces_only_our_files(db, people, tmp_path):
    cid = approved_campaign(db, people)
    folder = tmp_path / "export"
    first = campaign.export_campaign(db, cid, folder)
    ours = set(snapshot(folder))
    assert outputs.MARKER in ours and "real-test.jsonl" in ours and first.count == 3
    # Someone adds files beside ours, inside our folders too.
    (folder / "README.txt").write_text("my notes")
    json_folder = next((folder / "official" / "0Shotbenchmark").glob("json/*"))
    (json_folder / "annotated.json").write_text('{"mine": true}')
    # A smaller export later: one item sent back.
    db.execute("UPDATE rewrite_items SET status = 'submitted' WHERE campaign_id = ? AND task_id = 13", [cid])
    db.conn.commit()
    second = campaign.export_campaign(db, cid, folder)
    after = snapshot(folder)
    assert second.count == 2
    assert after["README.txt"] == b"my notes"
    assert (json_folder / "annotated.json").read_text() == '{"mine": true}'
    assert len([r for r in after if r.endswith(".json") and "0Shotbenchmark" in r]) == 2 + 1  # ours + theirs
    assert len(second.jsonl.read_text().splitlines()) == 2
    assert audit([second.layout]).line() == "audited 3 samples: 2 agree, 0 disagree, 1 unsupported"
    assert not [p for p in folder.iterdir() if p.name.startswith(outputs.STAGING_PREFIX)]


def test_failed_export_leaves_the_earlier_export_as_it_was(db, people, tmp_path, monkeypatch):
    cid = approved_campaign(db, people)
    folder = tmp_path / "export"
    campaign.export_campaign(db, cid, folder)
    before = snapshot(folder)

    def disk_full(samples, directory):
        (directory / "0Shotbenchmark").mkdir(parents=True)
        (directory / "0Shotbenchmark" / "half.json").write_text("{")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(campaign.export.official, "write_layout", disk_full)
    with pytest.raises(OSError, match="No space left"):
        campaign.export_campaign(db, cid, folder)
    assert snapshot(folder) == before
    assert not [p for p in folder.iterdir() if p.name.startswith(outputs.STAGING_PREFIX)]
    with pytest.raises(OSError):
        campaign.export_campaign(db, cid, tmp_path / "new")
    assert not (tmp_path / "new").exists()  # a folder the failed export created is gone again


def test_export_audit_says_what_the_command_line_says(db, people, tmp_path):
    cid = approved_campaign(db, people)
    result = campaign.export_campaign(db, cid, tmp_path / "out")
    assert campaign.export_audit(result) == ["real-test.jsonl: audited 3 samples: 3 agree, 0 disagree, 0 unsupported",
                                             "official/: audited 3 samples: 3 agree, 0 disagree, 0 unsupported"]


@pytest.mark.parametrize(("name", "folder"), [("Real-Test 2026", "real-test-2026"), ("  Pilot / B  ", "pilot-b"),
                                              ("***", "campaign-7"), ("Über_set", "ber_set")])
def test_default_export_folder_is_the_name_as_a_file_name_beside_the_database(name, folder, tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    assert campaign.default_export_dir(name, 7) == tmp_path / "exports" / folder


def test_the_reviewer_sees_the_checks_of_the_submitted_texts(db, people):
    admin, ann1, _ = people
    item_id, _ = one_item(db, people, task_id=9)
    item = campaign.get_item(db, item_id)
    broken = with_an_extra_field(item["sample"])
    campaign.submit(db, item_id, admin, broken, {}, exception_reason="agreed")
    submission = campaign.latest_submission(db, item_id)
    assert campaign.submitted_texts(submission) == broken
    report = campaign.check_submission(item, submission)
    assert report.answer_ok and not report.structure_ok


# ---- lifecycle: rename, archive, clone --------------------------------------------------

from structext_core.studio import changes  # noqa: E402


def campaign_tables(db):
    return {table: list(db.query(f"SELECT * FROM {table} ORDER BY rowid")) for table in (
        "rewrite_campaigns", "rewrite_items", "rewrite_drafts", "audit_log")}


def test_rename_a_campaign(db, people, small_suite, tmp_path):
    admin, ann1, _ = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 3, [ann1["id"]], admin)
    assert campaign.rename_campaign(db, cid, " Real-Test 2026 ", admin) == "Real-Test 2026"
    assert campaign.list_campaigns(db)[0]["name"] == "Real-Test 2026"
    assert campaign.suite_file(db, cid, tmp_path).name == "real-test-real-test-2026.jsonl"  # the next export
    change = changes.history(db, f"campaign:{cid}")[0]
    assert (change.action, change.by, change.detail) == ("campaign.rename", "lead",
                                                         {"old": "Pilot", "new": "Real-Test 2026"})


@pytest.mark.parametrize("name, who, message", [
    ("", "admin", "needs a name"),
    ("OTHER", "admin", "A campaign named 'OTHER' exists already"),
    ("Pilot", "admin", "is called 'Pilot' already"),
    ("New", "ann1", "Only an admin"),
])
def test_a_refused_rename_writes_nothing(db, people, small_suite, name, who, message):
    admin, ann1, _ = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 3, [ann1["id"]], admin)
    campaign.create_campaign(db, "Other", small_suite, 3, [ann1["id"]], admin)
    before = campaign_tables(db)
    with pytest.raises(campaign.CampaignError, match=message):
        campaign.rename_campaign(db, cid, name, admin if who == "admin" else ann1)
    assert campaign_tables(db) == before


def test_an_archived_campaign_is_hidden_from_annotators_and_takes_no_changes(db, people, small_suite):
    admin, ann1, _ = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 2, [ann1["id"]], admin)
    item_id = campaign.list_items(db, cid)[0]["id"]
    sample = campaign.get_item(db, item_id)["sample"]
    texts = rewrite.original_texts(sample)
    campaign.save_draft(db, item_id, ann1, texts, {})
    campaign.set_campaign_archived(db, cid, True, admin)
    assert campaign.campaigns_for(db, ann1) == [] and campaign.campaigns_for(db, admin) == []
    assert campaign.list_campaigns(db, include_archived=False) == []
    assert campaign.list_campaigns(db)[0]["archived_at"] is not None  # kept whole, listed on request
    assert campaign.get_draft(db, item_id)["reference"] == texts.reference
    before = campaign_tables(db)
    for refused in (lambda: campaign.save_draft(db, item_id, ann1, texts, {}),
                    lambda: campaign.reset_draft(db, item_id, ann1),
                    lambda: campaign.submit(db, item_id, ann1, texts, {}),
                    lambda: campaign.flag_sample(db, item_id, ann1, "The sample is wrong somehow.")):
        with pytest.raises(campaign.CampaignError, match="Campaign 'Pilot' is archived"):
            refused()
    assert campaign_tables(db) == before
    with pytest.raises(campaign.CampaignError, match="archived already"):
        campaign.set_campaign_archived(db, cid, True, admin)
    with pytest.raises(campaign.CampaignError, match="Only an admin"):
        campaign.set_campaign_archived(db, cid, False, ann1)
    campaign.set_campaign_archived(db, cid, False, admin)
    assert [c["id"] for c in campaign.campaigns_for(db, ann1)] == [cid]
    campaign.save_draft(db, item_id, ann1, texts, {})
    assert [c.action for c in changes.history(db, f"campaign:{cid}")] == [
        "campaign.unarchive", "campaign.archive", "campaign.create"]


def test_a_clone_has_the_same_items_dealt_afresh_and_no_work(db, people, small_suite):
    admin, ann1, ann2 = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 6, [ann1["id"]], admin, seed=4)
    first = campaign.list_items(db, cid)[0]["id"]
    campaign.save_draft(db, first, ann1, rewrite.original_texts(campaign.get_item(db, first)["sample"]), {})
    copy = campaign.clone_campaign(db, cid, "Pilot (2)", [ann1["id"], ann2["id"]], admin)
    source, cloned = campaign.list_items(db, cid), campaign.list_items(db, copy)
    same = ("position", "sample_id", "language", "task_id", "depth", "scenario")
    assert [[i[k] for k in same] for i in cloned] == [[i[k] for k in same] for i in source]
    assert Counter(i["annotator"] for i in cloned) == {"ann1": 3, "ann2": 3}
    assert {i["status"] for i in cloned} == {"todo"} and campaign.get_draft(db, cloned[0]["id"]) is None
    row = next(c for c in campaign.list_campaigns(db) if c["id"] == copy)
    assert (row["name"], row["n_items"], row["seed"], row["source_suite"]) == ("Pilot (2)", 6, 4, "test")
    assert changes.history(db, f"campaign:{copy}")[0].detail == {"source": cid,
                                                                 "annotators": sorted([ann1["id"], ann2["id"]])}


@pytest.mark.parametrize("name, who, message", [
    ("pilot", "ann1", "A campaign named 'pilot' exists already"),
    (" ", "ann1", "needs a name"),
    ("Copy", None, "Choose at least one annotator"),
    ("Copy", "disabled", "'ann2': disabled or deleted account"),
])
def test_a_refused_clone_writes_nothing(db, people, small_suite, name, who, message):
    admin, ann1, ann2 = people
    cid = campaign.create_campaign(db, "Pilot", small_suite, 3, [ann1["id"]], admin)
    accounts.disable_user(db, ann2["id"], by_user=admin["id"])
    before = campaign_tables(db)
    chosen = {"ann1": [ann1["id"]], None: [], "disabled": [ann2["id"]]}[who]
    with pytest.raises(campaign.CampaignError, match=message):
        campaign.clone_campaign(db, cid, name, chosen, admin)
    assert campaign_tables(db) == before


def test_not_rewritten_is_the_rule_submit_applies(db, people):
    item_id, _ = one_item(db, people, task_id=9)
    sample = campaign.get_item(db, item_id)["sample"]
    original = rewrite.original_texts(sample)
    assert campaign.not_rewritten(sample, original)
    # A changed question alone leaves the reference as it is: still nothing rewritten.
    assert campaign.not_rewritten(sample, rewrite.Texts(original.reference, original.question + " ", original.answer))
    assert not campaign.not_rewritten(sample, rewrite.apply_mapping(sample, rewrite.mechanical_mapping(sample)))
    with pytest.raises(campaign.SubmissionRefused) as refused:
        campaign.submit(db, item_id, people[1], original, {})
    assert campaign.NOT_REWRITTEN in str(refused.value)


def test_review_shows_the_warnings_the_annotator_saw_and_the_diff(db, people):
    """Nothing new is stored: the review's rerun of the checks gives the warnings of the submission."""
    _, ann1, _ = people
    item_id, _ = one_item(db, people, task_id=8, depth=2)
    sample = campaign.get_item(db, item_id)["sample"]
    mapping = rewrite.mechanical_mapping(sample)
    long_tokens = [t.text for t in rewrite.extract_tokens(sample) if len(t.text) > 1]
    assert long_tokens  # the sample has a token of two or more letters to leave behind
    left = {k: v for k, v in mapping.items() if k != long_tokens[0]}
    texts = rewrite.apply_mapping(sample, left)
    at_submission = campaign.submit(db, item_id, ann1, texts, left)
    assert any("still in the reference" in w and long_tokens[0] in w for w in at_submission.warnings)
    item, submission = campaign.get_item(db, item_id), campaign.latest_submission(db, item_id)
    assert campaign.check_submission(item, submission).warnings == at_submission.warnings
    reference, question, answer = campaign.submission_diff(item, submission)
    assert reference.compared and reference.added == reference.removed > 0
    assert f"+{texts.reference.split(chr(10))[1]}" in reference.text.split("\n")
