"""The seal (structext_core.studio.seal): open items, the rewriting page's answer check, practice
feedback and the practice and gold draws across studies (issue 19, items 1 and 2)."""

import pytest

from structext_core.structext_eval import campaign, rewrite, seal, study_draws
from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval.suites import generate_cell, generate_sample
from structext_core.studio import accounts, storage, study
from structext_core.studio.seal import open_item_count
from tests.studio.study.support import grid_samples, make_study


@pytest.fixture
def db():
    return storage.open_db(":memory:")


@pytest.fixture
def people(db, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator"))}


def _answer_all(db, study_id, user_id, policy=lambda answer: answer):
    study.accept_rule(db, study_id, user_id)
    responses = []
    while (view := study.open_question(db, study_id, user_id)) is not None:
        answer = db.execute("SELECT json_extract(i.sample_json, '$.answer') FROM study_items i WHERE i.id = ?",
                            [view.item_id]).fetchone()[0]
        responses.append(study.submit_answer(db, user_id, view.assignment_id, policy(answer)).response_id)
    return responses


# ---------------------------------------------------------------- open items


def test_open_items_are_the_unanswered_items_of_the_studies_one_takes_part_in(db, people):
    samples = grid_samples(tasks=(8, 13))  # JSON and YAML
    ann1, ann2 = people["ann1"]["id"], people["ann2"]["id"]
    study_id = make_study(db, samples, [people["ann1"]], n_items=4, practice_items=1, gold_items=1)
    assert open_item_count(db, ann1) == 6 and open_item_count(db, ann2) == 0
    assert seal.open_formats(db, ann1) == {row[0] for row in db.execute(
        "SELECT DISTINCT json_extract(strata, '$.language') FROM study_items WHERE study_id = ?", [study_id])}
    item = study.get_study(db, study_id)
    rows = db.execute("SELECT sample_json FROM study_items WHERE study_id = ?", [study_id]).fetchall()
    import json
    sample = json.loads(rows[0][0])
    assert seal.is_open_for(db, ann1, sample)
    assert seal.is_open_for(db, ann1, {"id": "elsewhere", "reference": sample["reference"]})  # by its text
    assert not seal.is_open_for(db, ann2, sample) and not seal.is_open_for(db, None, sample)
    _answer_all(db, study_id, ann1)
    assert open_item_count(db, ann1) == 0 and seal.open_formats(db, ann1) == set()
    assert not seal.is_open_for(db, ann1, sample)
    assert item.n_items == 4


@pytest.mark.parametrize("end", ["closed", "archived", "removed"])
def test_a_closed_archived_or_left_study_has_no_open_items(db, people, end):
    lead, ann1 = people["lead"]["id"], people["ann1"]["id"]
    study_id = make_study(db, grid_samples(tasks=(8,)), [people["ann1"]], n_items=3)
    assert open_item_count(db, ann1) == 3
    if end == "closed":
        study.set_study_status(db, study_id, "closed", by_user=lead)
    elif end == "archived":
        study.set_study_archived(db, study_id, True, by_user=lead)
    else:
        study.remove_annotator(db, study_id, ann1, by_user=lead)
    assert open_item_count(db, ann1) == 0


# ---------------------------------------------------------------- the rewriting page's answer check


@pytest.fixture
def rewriting(db, people):
    """ann1 rewrites a JSON task-8 item and has an open JSON question of the same task and shape."""
    source = generate_cell(8, 1, 1, 1, suite="test")[0]
    cid = campaign.create_campaign(db, "Pilot", [source], 1, [people["ann1"]["id"]], people["lead"])
    item = campaign.get_item(db, campaign.list_items(db, cid)[0]["id"])
    texts = rewrite.apply_mapping(source, {"k": "Stadium", "Z": "City", "w": "Eugene", "l": "Track"})
    secret = {**source, "id": "test-hard-secret", "suite": "test-hard", "reference": texts.reference,
              "question": texts.question, "answer": texts.answer}
    return item, secret


def test_the_answer_check_is_withheld_while_a_question_of_its_format_is_open(db, people, rewriting):
    item, secret = rewriting
    ann1, lead = people["ann1"], people["lead"]
    assert campaign.answer_mode(db, ann1, "json") == (rewrite.ANSWER_AFTER_STRUCTURE, "")
    study_id = structext_study.create_study(db, name="hard", suite="test-hard", samples=[secret], n_items=1,
                                  annotator_ids=[ann1["id"]])
    mode, why = campaign.answer_mode(db, ann1, "json")
    assert mode == rewrite.ANSWER_WITHHELD and "in JSON or of this kind of task" in why and "hard" not in why
    assert campaign.answer_mode(db, ann1, "yaml", "PathWalk") == (rewrite.ANSWER_AFTER_STRUCTURE, "")
    # The same kind of task in another format asks the same question: withheld too.
    assert campaign.answer_mode(db, ann1, "yaml", "TextRetrieval")[0] == rewrite.ANSWER_WITHHELD
    assert campaign.answer_mode(db, people["ann2"], "json") == (rewrite.ANSWER_AFTER_STRUCTURE, "")
    assert campaign.answer_mode(db, lead, "json") == (rewrite.ANSWER_ALWAYS, "")
    # In the core (as the worker runs it): no answer is worked out for a withheld check.
    pasted = rewrite.Texts(secret["reference"], secret["question"], "x")
    report = rewrite.check_rewrite(item["sample"], pasted.reference, pasted.question, pasted.answer, answer_mode=mode, withheld_note=why)
    assert report.structure_ok and report.answer == [] and report.solved is None and report.answer_note == why
    full = rewrite.check_rewrite(item["sample"], pasted.reference, pasted.question, pasted.answer)
    assert full.solved == secret["answer"]  # what the annotator would have learnt
    # Once the question is answered, the check comes back.
    _answer_all(db, study_id, ann1["id"], policy=lambda answer: "my guess")
    assert campaign.answer_mode(db, ann1, "json") == (rewrite.ANSWER_AFTER_STRUCTURE, "")


def test_the_answer_check_runs_only_after_the_structure_for_annotators(rewriting):
    item, _ = rewriting
    other = generate_sample(8, 3, 2, suite="test-hard", index=0)  # another shape
    after = rewrite.check_rewrite(item["sample"], other["reference"], other["question"], "x",
                                  answer_mode=rewrite.ANSWER_AFTER_STRUCTURE)
    assert not after.structure_ok and after.solved is None and after.answer == []
    assert after.answer_note == rewrite.ANSWER_AFTER_STRUCTURE_NOTE and not after.ok
    always = rewrite.check_rewrite(item["sample"], other["reference"], other["question"], "x")
    assert always.answer and always.solved == other["answer"]  # the reviewer's (and an admin's) check
    with pytest.raises(ValueError, match="unknown answer mode"):
        rewrite.check_rewrite(item["sample"], other["reference"], other["question"], "x", answer_mode="sometimes")


def test_a_structure_failure_refuses_a_submission_without_the_answer(db, people, rewriting):
    item, _ = rewriting
    other = generate_sample(8, 3, 2, suite="test-hard", index=0)
    with pytest.raises(campaign.SubmissionRefused) as refused:
        campaign.submit(db, item["id"], people["ann1"], rewrite.Texts(other["reference"], other["question"], "x"), {})
    assert "structure check fails" in str(refused.value) and "solver" not in str(refused.value)
    assert refused.value.report.solved is None


# ---------------------------------------------------------------- practice feedback and draws (item 2)


def test_two_studies_over_one_suite_keep_each_others_keys(db, people):
    """One annotator in studies A and B over the same suite: none of B's practice or gold items
    is a counted item of A, and B's practice feedback shows no key of an item open in A."""
    samples = grid_samples(per_cell=3)  # 72 samples, 6 tasks
    ann = people["ann1"]
    a = make_study(db, samples, [ann], name="A", n_items=30, practice_items=3, gold_items=3)
    b = make_study(db, samples, [ann], name="B", n_items=20, practice_items=10, gold_items=4)
    counted_a = {row[0] for row in db.execute(
        "SELECT sample_id FROM study_items WHERE study_id = ? AND kind = 'study'", [a])}
    practice_a = {row[0] for row in db.execute(
        "SELECT sample_id FROM study_items WHERE study_id = ? AND kind = 'practice'", [a])}
    extra_b = {row[0] for row in db.execute(
        "SELECT sample_id FROM study_items WHERE study_id = ? AND kind IN ('practice', 'gold')", [b])}
    counted_b = {row[0] for row in db.execute(
        "SELECT sample_id FROM study_items WHERE study_id = ? AND kind = 'study'", [b])}
    assert len(extra_b) == 14 and not extra_b & counted_a
    assert not counted_b & practice_a  # B's counted items are no keys A showed
    # Every practice answer in B: each key shown is of no item open for the annotator.
    study.accept_rule(db, b, ann["id"])
    for _ in range(10):
        view = study.open_question(db, b, ann["id"])
        assert view.practice
        done = study.submit_answer(db, ann["id"], view.assignment_id, "a guess")
        feedback = study.practice_feedback(db, ann["id"], done.response_id)
        sample = db.execute("SELECT sample_id FROM study_items WHERE id = ?", [view.item_id]).fetchone()[0]
        assert not feedback.key_withheld and sample not in counted_a and feedback.answer


def test_a_practice_key_is_withheld_while_the_question_is_open_in_another_study(db, people):
    samples = grid_samples()
    ann, lead = people["ann1"], people["lead"]
    a = make_study(db, samples, [ann], name="A", n_items=6, practice_items=2)
    b = study.clone_study(db, a, name="B", annotator_ids=[ann["id"]], by_user=lead["id"])  # same practice items
    study.accept_rule(db, b, ann["id"])
    view = study.open_question(db, b, ann["id"])
    done = study.submit_answer(db, ann["id"], view.assignment_id, "a guess")
    feedback = study.practice_feedback(db, ann["id"], done.response_id)
    key = db.execute("SELECT json_extract(sample_json, '$.answer') FROM study_items WHERE id = ?",
                     [view.item_id]).fetchone()[0]
    assert feedback.key_withheld and feedback.answer == ""
    assert feedback.rouge_l >= 0 and not feedback.passed  # the score is still given
    # Answered in A too: now A's feedback on it may show the key (it is open nowhere).
    study.accept_rule(db, a, ann["id"])
    shown = []
    while (view := study.open_question(db, a, ann["id"])) is not None and view.practice:
        done = study.submit_answer(db, ann["id"], view.assignment_id, "a guess")
        shown.append(study.practice_feedback(db, ann["id"], done.response_id))
    assert any(not f.key_withheld and f.answer == key for f in shown)


def test_correctness_is_not_shown_while_the_question_is_open_in_another_study(db, people):
    samples = grid_samples()
    ann, lead = people["ann1"], people["lead"]
    a = make_study(db, samples, [ann], name="A", n_items=4, show_correctness=True)
    study.clone_study(db, a, name="B", annotator_ids=[ann["id"]], by_user=lead["id"])
    study.accept_rule(db, a, ann["id"])
    view = study.open_question(db, a, ann["id"])
    done = study.submit_answer(db, ann["id"], view.assignment_id, "a guess")
    feedback = study.response_feedback(db, ann["id"], done.response_id)
    assert feedback.withheld and not feedback.correct and feedback.rouge_l == 0.0


def test_practice_questions_are_modest_in_size(db, people):
    big = [dict(s, id=f"{s['id']}-big", reference=s["reference"] + " " * 40_000) for s in grid_samples(per_cell=1)]
    small = grid_samples(per_cell=1, depths=(1,), widths=(1,))
    study_id = make_study(db, big + small, [people["ann1"]], n_items=4, practice_items=4)
    sizes = db.execute("SELECT reference_chars, length(json_extract(sample_json, '$.answer')) FROM study_items"
                       " WHERE study_id = ? AND kind = 'practice'", [study_id]).fetchall()
    assert len(sizes) == 4
    assert all(ref <= study_draws.PRACTICE_MAX_REFERENCE_CHARS and ans <= study_draws.PRACTICE_MAX_ANSWER_CHARS
               for ref, ans in sizes)
    # A suite with no modest sample still gets its practice round: the smallest samples it has.
    only_big = make_study(db, big, [people["ann1"]], n_items=2, practice_items=2, name="big")
    assert db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ? AND kind = 'practice'",
                      [only_big]).fetchone()[0] == 2


# ---------------------------------------------------------------- keys seen before a study


def test_samples_given_to_rewrite_are_in_no_study_of_their_rewriter(db, people):
    samples = grid_samples(tasks=(8,))  # 8 samples
    ann1, ann2, lead = people["ann1"], people["ann2"], people["lead"]
    given = samples[0]
    campaign.create_campaign(db, "Pilot", [given], 1, [ann1["id"]], lead)
    seen = seal.seen_keys(db, [ann1["id"]])
    assert seen.rewritten[0] == {given["id"]} and seen.where(given) == seal.REWRITE
    assert seen.covers({"id": "elsewhere", "reference": given["reference"]})  # by its text too
    assert not seal.seen_keys(db, [ann2["id"]])

    # Created with ann1 among its annotators: every draw leaves the sample out.
    with_ann1 = make_study(db, samples, [ann1, ann2], name="with-ann1", n_items=5, practice_items=1, gold_items=1)
    drawn = {row[0] for row in db.execute("SELECT sample_id FROM study_items WHERE study_id = ?", [with_ann1])}
    assert len(drawn) == 7 and given["id"] not in drawn
    with pytest.raises(study.StudyError, match="between 1 and 7 .the size of the suite without the 1 sample whose "
                                               "answers the annotators have seen"):
        make_study(db, samples, [ann1], name="too-many", n_items=8)

    # A study of ann2 alone holds it: ann1 may not join that one, and nothing is written.
    without = make_study(db, samples, [ann2], name="ann2-only", n_items=8)
    with pytest.raises(study.StudyError, match="'ann1' has already seen answers of this study: they were given 1 of "
                                               "its questions to rewrite for Real-Test"):
        study.add_annotator(db, without, ann1["id"], by_user=lead["id"])
    assert study.annotator_names(db, without) == ["ann2"]
    assert db.execute("SELECT COUNT(*) FROM assignments WHERE user_id = ? AND study_id = ?",
                      [ann1["id"], without]).fetchone()[0] == 0


def test_practice_questions_answered_elsewhere_are_in_no_later_study_of_theirs(db, people):
    samples = grid_samples(tasks=(8,))  # 8 samples
    ann1, ann2, lead = people["ann1"], people["ann2"], people["lead"]
    first = make_study(db, samples, [ann1], name="first", n_items=2, practice_items=1)
    practice = db.execute("SELECT sample_id FROM study_items WHERE study_id = ? AND kind = 'practice'",
                          [first]).fetchone()[0]
    assert not seal.seen_keys(db, [ann1["id"]])  # not answered yet: its key has not been shown
    study.accept_rule(db, first, ann1["id"])
    view = study.open_question(db, first, ann1["id"])
    assert view.practice  # practice comes first
    study.submit_answer(db, ann1["id"], view.assignment_id, "a guess")
    assert seal.seen_keys(db, [ann1["id"]]).where({"id": practice}) == seal.PRACTICE

    later = make_study(db, samples, [ann1, ann2], name="later", n_items=7)
    drawn = {row[0] for row in db.execute("SELECT sample_id FROM study_items WHERE study_id = ?", [later])}
    assert len(drawn) == 7 and practice not in drawn
    everything = make_study(db, samples, [ann2], name="ann2-only", n_items=8)
    with pytest.raises(study.StudyError, match="they answered 1 of its questions as practice in another study"):
        study.add_annotator(db, everything, ann1["id"], by_user=lead["id"])
    assert study.annotator_names(db, everything) == ["ann2"]
