"""Quality control: flags on questions (who may flag, validation, resolving), practice and gold
items (drawn apart, ordered, not counted, feedback only after answering), the gold report."""

import pytest

from structext_core.structext_eval import study_draws
from structext_core.studio import access, accounts, changes, storage, study
from tests.studio.study.support import count, make_study

# ---------------------------------------------------------------- flags


def _item_of(db, study_id, user_id, seq=1):
    return db.execute("SELECT item_id FROM assignments WHERE study_id = ? AND user_id = ? AND seq = ?",
                      [study_id, user_id, seq]).fetchone()[0]


def test_an_annotator_flags_an_item_of_theirs_and_the_lead_sees_it(db, started):
    study_id, user_id = started
    item_id = _item_of(db, study_id, user_id)
    flag_id = study.flag_question(db, study_id, user_id, item_id, "broken", "  the key says 3, the table has 4  ")
    [flag] = study.flags(db, study_id)
    assert flag.id == flag_id and flag.item_id == item_id and flag.username == "ann1"
    assert flag.kind == "broken" and flag.note == "the key says 3, the table has 4" and flag.is_open
    position, sample_id = db.execute("SELECT position, sample_id FROM study_items WHERE id = ?", [item_id]).fetchone()
    assert (flag.position, flag.sample_id) == (position, sample_id)
    assert flag.resolved_by is None and flag.resolved_at is None and flag.resolution is None
    assert study.flags(db, study_id, item_id=item_id) == [flag]
    assert study.flags(db, study_id, item_id=_item_of(db, study_id, user_id, seq=2)) == []


def test_flagging_does_not_pause_submit_or_touch_the_draft(db, started):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, at=0.0)
    study.record_activity(db, user_id, view.assignment_id, None, at=5.0, draft="half an answer")
    before = db.execute("SELECT * FROM assignments WHERE id = ?", [view.assignment_id]).fetchone()
    study.flag_question(db, study_id, user_id, view.item_id, "unclear", "")
    assert db.execute("SELECT * FROM assignments WHERE id = ?", [view.assignment_id]).fetchone() == before
    assert count(db, "responses") == 0 and count(db, "pauses") == 0


@pytest.mark.parametrize(
    ("kind", "note", "message"),
    [
        ("wrong", "", "Unknown kind of problem 'wrong'"),
        ("other", "   ", "Say in the note what the problem is"),
        ("broken", "x" * (study.MAX_FLAG_NOTE_CHARS + 1), "2,001 characters long"),
    ],
)
def test_a_bad_flag_is_refused_and_writes_nothing(db, started, kind, note, message):
    study_id, user_id = started
    with pytest.raises(study.StudyError, match=message):
        study.flag_question(db, study_id, user_id, _item_of(db, study_id, user_id), kind, note)
    assert count(db, "study_flags") == 0


def test_only_an_annotator_of_the_study_may_flag_their_own_items(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators[:2])
    item_id = _item_of(db, study_id, annotators[0]["id"])
    other_study = make_study(db, samples, annotators[2:], name="other")
    for user_id, study_id_, item_id_ in [
        (annotators[2]["id"], study_id, item_id),  # not in the study
        (admin["id"], study_id, item_id),  # the lead is no annotator of it
        (annotators[0]["id"], study_id, _item_of(db, other_study, annotators[2]["id"])),  # another study's item
        (annotators[0]["id"], other_study, _item_of(db, other_study, annotators[2]["id"])),
    ]:
        with pytest.raises(study.StudyError, match="only flag a question of a study you take part in"):
            study.flag_question(db, study_id_, user_id, item_id_, "broken", "")
    assert count(db, "study_flags") == 0


def test_the_lead_resolves_a_flag_once_and_the_change_is_recorded(db, started, admin):
    study_id, user_id = started
    first = study.flag_question(db, study_id, user_id, _item_of(db, study_id, user_id), "broken", "")
    second = study.flag_question(db, study_id, user_id, _item_of(db, study_id, user_id, 2), "unclear", "")
    study.resolve_flag(db, first, admin, "  answer key checked: it is right  ")
    assert [f.id for f in study.flags(db, study_id, open_only=True)] == [second]
    resolved = next(f for f in study.flags(db, study_id) if f.id == first)
    assert resolved.resolved_by == "lead" and resolved.resolution == "answer key checked: it is right"
    assert resolved.resolved_at is not None and not resolved.is_open
    [change] = changes.history(db, f"study:{study_id}")
    assert change.action == "flag.resolve" and change.by == "lead" and change.detail["flag"] == first
    with pytest.raises(study.StudyError, match="resolved already"):
        study.resolve_flag(db, first, admin, "again")
    assert len(changes.history(db, prefix="study:")) == 1


def test_resolving_needs_an_admin_and_a_resolution(db, started, admin):
    study_id, user_id = started
    flag_id = study.flag_question(db, study_id, user_id, _item_of(db, study_id, user_id), "broken", "")
    researcher = accounts.create_user(db, "res", "password-123", "researcher")
    for who in (None, {"id": user_id, "username": "ann1", "role": "annotator"}, researcher):
        with pytest.raises(access.AccessError, match="Only an admin"):
            study.resolve_flag(db, flag_id, who, "fine")
    with pytest.raises(study.StudyError, match="Write what was done"):
        study.resolve_flag(db, flag_id, admin, "  ")
    with pytest.raises(study.StudyError, match="characters long"):
        study.resolve_flag(db, flag_id, admin, "x" * (study.MAX_FLAG_NOTE_CHARS + 1))
    with pytest.raises(study.StudyError, match="does not exist"):
        study.resolve_flag(db, 999, admin, "fine")
    assert study.flags(db, study_id, open_only=True)[0].id == flag_id
    assert changes.history(db, prefix="study:") == []


# ---------------------------------------------------------------- practice and gold: the draw


def _kinds(db, study_id):
    rows = db.execute("SELECT kind, sample_id, json_extract(sample_json, '$.reference'),"
                      " json_extract(sample_json, '$.answer') FROM study_items WHERE study_id = ?",
                      [study_id]).fetchall()
    out = {"study": [], "practice": [], "gold": []}
    for kind, sample_id, reference, answer in rows:
        out[kind].append((sample_id, reference, answer))
    return out


def test_practice_and_gold_are_drawn_apart_from_the_study_items(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=10, practice_items=3, gold_items=4, gold_pass=0.8)
    kinds = _kinds(db, study_id)
    assert {kind: len(rows) for kind, rows in kinds.items()} == {"study": 10, "practice": 3, "gold": 4}
    ids = [row[0] for rows in kinds.values() for row in rows]
    references = [row[1] for rows in kinds.values() for row in rows]
    assert len(set(ids)) == len(ids) == 17 and len(set(references)) == 17
    made = study.get_study(db, study_id)
    assert (made.n_items, made.practice_items, made.gold_items, made.gold_pass) == (10, 3, 4, 0.8)
    # The study's own draw is the one it would be without practice and gold items.
    plain = make_study(db, samples, annotators, n_items=10, name="plain")
    assert sorted(r[0] for r in _kinds(db, plain)["study"]) == sorted(r[0] for r in kinds["study"])
    # Deterministic: the same set-up on a database without other studies draws the same items.
    # (Beside other studies over the suite, practice and gold avoid their items: tests/studio/test_seal.py.)
    fresh = storage.open_db(":memory:")
    people = [accounts.create_user(fresh, a["username"], "password-123", "annotator") for a in annotators]
    again = make_study(fresh, samples, people, n_items=10, practice_items=3, gold_items=4, name="again")
    assert {k: sorted(r[0] for r in v) for k, v in _kinds(fresh, again).items()} == {
        k: sorted(r[0] for r in v) for k, v in kinds.items()}


def test_gold_items_prefer_short_one_line_answers_that_a_guess_does_not_get(samples):
    study_items = study.stratified_draw(samples, 10, stratum_of=study_draws.stratum)
    rest = [s for s in samples if s["id"] not in {d["id"] for d in study_items}]
    gold = study_draws.gold_draw(rest, 4, seed=0)
    assert len(gold) == 4 and not {g["id"] for g in gold} & {d["id"] for d in study_items}
    for item in gold:
        answer = item["answer"].strip()
        assert len(answer) <= study_draws.GOLD_SHORT_ANSWER_CHARS and "\n" not in answer
        assert answer.lower() not in {"true", "false", "yes", "no", "0", "1"}
    assert len({g["task_id"] for g in gold}) > 1  # spread over tasks, not the four shortest of one
    # Too few candidates left is a clear error, not a short draw.
    with pytest.raises(study.StudyError, match="Not enough samples left for 9 gold items"):
        study_draws.gold_draw(rest[:8], 9)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"practice_items": study.MAX_PRACTICE_ITEMS + 1}, "Practice items must be between 0 and 20"),
        ({"practice_items": -1}, "Practice items must be between 0 and 20"),
        ({"gold_items": 11}, "Gold items must be between 0 and the number of questions"),
        ({"gold_pass": 1.5}, "gold pass mark must be between 0 and 100 %"),
        ({"n_items": 40, "gold_items": 9}, "Not enough samples left for 9 gold items"),
        ({"n_items": 40, "gold_items": 4, "practice_items": 5}, "Not enough samples left for 5 practice items"),
    ],
)
def test_a_bad_practice_or_gold_setup_is_refused_and_writes_nothing(db, samples, annotators, options, message):
    with pytest.raises(study.StudyError, match=message):
        make_study(db, samples, annotators, **{"n_items": 10, **options})
    assert count(db, "studies") == 0 and count(db, "study_items") == 0


# ---------------------------------------------------------------- practice and gold: the order


def _order(db, study_id, user_id):
    return [row[0] for row in db.execute(
        "SELECT i.kind FROM assignments a JOIN study_items i ON i.id = a.item_id"
        " WHERE a.study_id = ? AND a.user_id = ? ORDER BY a.seq", [study_id, user_id])]


def test_practice_comes_first_and_gold_is_mixed_in_for_every_annotator(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=10, practice_items=3, gold_items=4)
    late = accounts.create_user(db, "late", "password-123", "annotator")
    study.add_annotator(db, study_id, late["id"])
    gold_places = set()
    for user_id in [a["id"] for a in annotators] + [late["id"]]:
        order = _order(db, study_id, user_id)
        assert order[:3] == ["practice"] * 3 and "practice" not in order[3:]
        assert order[3:].count("gold") == 4 and order[3:].count("study") == 10
        gold_places.add(tuple(i for i, kind in enumerate(order) if kind == "gold"))
    assert len(gold_places) > 1  # each annotator's own places, not a fixed block
    assert all(places != (13, 14, 15, 16) for places in gold_places)


def test_without_practice_or_gold_the_order_is_unchanged(db, samples, annotators):
    study_id = make_study(db, samples, annotators)
    item_ids = [row[0] for row in db.execute("SELECT id FROM study_items WHERE study_id = ? ORDER BY position",
                                             [study_id])]
    user_id = annotators[1]["id"]
    stored = [row[0] for row in db.execute(
        "SELECT item_id FROM assignments WHERE study_id = ? AND user_id = ? ORDER BY seq", [study_id, user_id])]
    assert stored == study.annotator_order(item_ids, 0, study_id, user_id)


# ---------------------------------------------------------------- practice: the view and the feedback


def _answer(db, assignment_id):
    return db.execute("SELECT json_extract(i.sample_json, '$.answer') FROM assignments a"
                      " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [assignment_id]).fetchone()[0]


def test_practice_questions_are_numbered_apart_and_carry_no_answer(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=10, practice_items=2, gold_items=3)
    user_id = annotators[0]["id"]
    [entry] = study.studies_for_annotator(db, user_id)
    assert (entry.n_items, entry.practice_items, entry.answered) == (15, 2, 0)
    study.accept_rule(db, study_id, user_id, at=0.0)
    seen = []
    clock = 10.0
    while (view := study.open_question(db, study_id, user_id, at=clock)) is not None:
        assert "answer" not in vars(view) and "kind" not in vars(view)
        seen.append((view.practice, view.seq, view.total))
        study.submit_answer(db, user_id, view.assignment_id, "something", at=clock + 5)
        clock += 10
    assert seen[:2] == [(True, 1, 2), (True, 2, 2)]
    assert seen[2:] == [(False, seq, 13) for seq in range(1, 14)]  # gold looks like any other question
    assert study.studies_for_annotator(db, user_id)[0].finished


def test_practice_feedback_only_for_ones_own_answered_practice_item(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=10, practice_items=2, gold_items=2,
                          show_correctness=True)
    ann1, ann2 = annotators[0]["id"], annotators[1]["id"]
    for user_id in (ann1, ann2):
        study.accept_rule(db, study_id, user_id, at=0.0)
    view = study.open_question(db, study_id, ann1, at=1.0)
    assert view.practice
    key = _answer(db, view.assignment_id)
    submission = study.submit_answer(db, ann1, view.assignment_id, key, at=20.0)
    feedback = study.practice_feedback(db, ann1, submission.response_id)
    assert (feedback.answer, feedback.response, feedback.seq, feedback.total) == (key, key, 1, 2)
    assert feedback.passed and feedback.rouge_l == 1.0 and feedback.exact_match == 1 and not feedback.gave_up
    assert study.practice_feedback(db, ann2, submission.response_id) is None  # not theirs
    second = study.open_question(db, study_id, ann1, at=21.0)
    gave_up = study.give_up(db, ann1, second.assignment_id, at=30.0)
    missed = study.practice_feedback(db, ann1, gave_up.response_id)
    assert missed.gave_up and not missed.passed and missed.answer == _answer(db, second.assignment_id)
    # Past the practice round nothing comes back: not for a study item, not for a gold item.
    clock = 40.0
    while (view := study.open_question(db, study_id, ann1, at=clock)) is not None:
        response = study.submit_answer(db, ann1, view.assignment_id, "a guess", at=clock + 5)
        assert study.practice_feedback(db, ann1, response.response_id) is None
        clock += 10


def test_pending_practice_feedback_lasts_until_the_next_question_is_shown(db, samples, annotators):
    """Kept in the database (a reload shows it again), only one's own, gone once moved on."""
    study_id = make_study(db, samples, annotators, n_items=4, practice_items=2)
    ann1, ann2 = annotators[0]["id"], annotators[1]["id"]
    for user_id in (ann1, ann2):
        study.accept_rule(db, study_id, user_id, at=0.0)
    assert study.pending_practice_feedback(db, study_id, ann1) is None  # nothing answered yet
    first = study.open_question(db, study_id, ann1, at=1.0)
    submission = study.submit_answer(db, ann1, first.assignment_id, "try", at=5.0)
    pending = study.pending_practice_feedback(db, study_id, ann1)
    assert pending.response_id == submission.response_id and (pending.seq, pending.total) == (1, 2)
    assert study.pending_practice_feedback(db, study_id, ann1) == pending  # asked again (a reload): the same
    assert study.pending_practice_feedback(db, study_id, ann2) is None  # not someone else's
    second = study.open_question(db, study_id, ann1, at=10.0)  # moving on shows the next question
    assert study.pending_practice_feedback(db, study_id, ann1) is None
    study.submit_answer(db, ann1, second.assignment_id, "try", at=15.0)
    assert study.pending_practice_feedback(db, study_id, ann1).seq == 2
    counted = study.open_question(db, study_id, ann1, at=20.0)
    assert not counted.practice
    study.submit_answer(db, ann1, counted.assignment_id, "a guess", at=25.0)
    assert study.pending_practice_feedback(db, study_id, ann1) is None  # study answers have none


# ---------------------------------------------------------------- not counted, and the gold report


def _answer_all(db, study_id, user_id, right_on, clock=100.0):
    """Answer every item; right (the key) on item kinds in ``right_on``, wrong elsewhere."""
    study.accept_rule(db, study_id, user_id, at=clock)
    while (view := study.open_question(db, study_id, user_id, at=clock)) is not None:
        kind = db.execute("SELECT i.kind FROM assignments a JOIN study_items i ON i.id = a.item_id"
                          " WHERE a.id = ?", [view.assignment_id]).fetchone()[0]
        text = _answer(db, view.assignment_id) if kind in right_on else "zzz nothing alike"
        study.submit_answer(db, user_id, view.assignment_id, text, at=clock + 10)
        clock += 20


def test_practice_and_gold_answers_are_counted_nowhere(db, samples, annotators):
    study_id = make_study(db, samples, annotators[:2], n_items=10, practice_items=3, gold_items=4)
    _answer_all(db, study_id, annotators[0]["id"], right_on={"study", "gold", "practice"})
    _answer_all(db, study_id, annotators[1]["id"], right_on={"study"})
    assert count(db, "responses") == 2 * 17
    frame = study.responses_frame(db, study_id)
    assert len(frame) == 20 and set(frame["kind"]) == {"study"}
    assert frame["passed"].all()  # the wrong practice and gold answers are not in the figures
    assert study.annotator_summary(frame)["mean_annotator"] == 100.0
    assert len(study.pass_matrix(frame)) == 10
    progress = study.progress_table(db, study_id).set_index("annotator")
    assert progress.loc["ann1", "total"] == 14 and progress.loc["ann1", "answered"] == 14  # gold in, practice out
    assert progress.loc["ann1", "remaining"] == 0
    rows = study.export_rows(db, study_id)
    assert len(rows) == 20 and {row["kind"] for row in rows} == {"study"}
    others = study.export_rows(db, study_id, kinds=("practice", "gold"))
    assert sorted(row["kind"] for row in others) == ["gold"] * 8 + ["practice"] * 6
    assert len(study.human_results(db, study_id)) == 2 * 20


def test_gold_report_flags_an_annotator_below_the_pass_mark(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=10, gold_items=4, gold_pass=0.75)
    assert list(study.gold_report(db, study_id).columns) == study.GOLD_REPORT_COLUMNS
    assert study.gold_report(db, study_id).empty
    _answer_all(db, study_id, annotators[0]["id"], right_on={"gold"})
    _answer_all(db, study_id, annotators[1]["id"], right_on={"study"})
    report = study.gold_report(db, study_id).set_index("annotator")
    assert report.loc["ann1"].tolist() == [4, 4, 100.0, False]
    assert report.loc["ann2"].tolist() == [4, 0, 0.0, True]
    assert "ann3" not in report.index  # no gold answer yet: nothing to judge


def test_a_study_without_gold_has_an_empty_gold_report(db, samples, annotators):
    study_id = make_study(db, samples, annotators)
    _answer_all(db, study_id, annotators[0]["id"], right_on={"study"})
    assert study.gold_report(db, study_id).empty


def test_a_leads_override_counts_in_the_gold_report(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators[:1], n_items=10, gold_items=2, gold_pass=0.5)
    _answer_all(db, study_id, annotators[0]["id"], right_on={"study"})
    assert study.gold_report(db, study_id).iloc[0].tolist() == ["ann1", 2, 0, 0.0, True]
    gold_response = db.execute("SELECT r.id FROM responses r JOIN study_items i ON i.id = r.item_id"
                               " WHERE i.kind = 'gold' ORDER BY r.id LIMIT 1").fetchone()[0]
    study.override_score(db, gold_response, 1.0, "the key was ambiguous; this answer is right", admin)
    assert study.gold_report(db, study_id).iloc[0].tolist() == ["ann1", 2, 1, 50.0, False]
