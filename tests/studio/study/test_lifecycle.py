"""The lifecycle of a study: rename, archive, clone, take an annotator off or replace them.
Every change is recorded in the audit log in its own transaction, and a refused one writes nothing."""

import pytest

from structext_core.studio import accounts, changes, study
from tests.studio.study.support import answer_of, count, make_study


def snapshot(db):
    """Every table a lifecycle change may touch, to show that a refused one changed nothing."""
    return {table: list(db.query(f"SELECT * FROM {table} ORDER BY rowid")) for table in (
        "studies", "study_items", "study_annotators", "assignments", "responses", "audit_log")}


def answer_some(db, study_id, user_id, how_many, clock=100.0):
    """The annotator accepts the rule and answers their first ``how_many`` questions right."""
    study.accept_rule(db, study_id, user_id)
    for _ in range(how_many):
        view = study.open_question(db, study_id, user_id, at=clock)
        study.submit_answer(db, user_id, view.assignment_id, answer_of(db, view.assignment_id), at=clock + 30)
        clock += 60


def order_of(db, study_id, user_id):
    return [row[0] for row in db.execute(
        "SELECT item_id FROM assignments WHERE study_id = ? AND user_id = ? ORDER BY seq", [study_id, user_id])]


# ---------------------------------------------------------------- rename


def test_rename_keeps_everything_but_the_name(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators)
    assert study.rename_study(db, study_id, "  pilot-2  ", by_user=admin["id"]) == "pilot-2"
    assert study.get_study(db, study_id).name == "pilot-2"
    assert study.rename_study(db, study_id, "PILOT-2", by_user=admin["id"]) == "PILOT-2"  # a change of case
    change = changes.history(db, f"study:{study_id}")[1]
    assert (change.action, change.by, change.detail) == ("study.rename", "lead", {"old": "pilot", "new": "pilot-2"})


@pytest.mark.parametrize("name, message", [
    ("", "Study name is empty"),
    ("other", "A study named 'other' already exists"),
    ("OTHER", "A study named 'OTHER' already exists"),
    ("pilot", "is called 'pilot' already"),
    ("n" * 201, "study name is 201 characters long; the limit is 200"),
])
def test_a_refused_rename_says_why_and_changes_nothing(db, samples, annotators, admin, name, message):
    study_id = make_study(db, samples, annotators)
    make_study(db, samples, annotators, name="other")
    before = snapshot(db)
    with pytest.raises(study.StudyError, match=message):
        study.rename_study(db, study_id, name, by_user=admin["id"])
    assert snapshot(db) == before


# ---------------------------------------------------------------- archive


def test_an_archived_study_is_hidden_closed_and_kept_whole(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators)
    user_id = annotators[0]["id"]
    answer_some(db, study_id, user_id, 2)
    view = study.open_question(db, study_id, user_id, at=500.0)
    rows_before = study.export_rows(db, study_id)
    study.set_study_archived(db, study_id, True, by_user=admin["id"])
    archived = study.get_study(db, study_id)
    assert archived.archived and archived.label.endswith(" · archived")
    assert study.studies_for_annotator(db, user_id) == []
    assert study.list_studies(db, include_archived=False) == []
    assert [s.id for s in study.list_studies(db)] == [study_id]  # Results and exports still read it
    with pytest.raises(study.StudyError, match="archived by the study lead"):
        study.open_question(db, study_id, user_id, at=510.0)
    with pytest.raises(study.StudyError, match="no longer taken"):
        study.submit_answer(db, user_id, view.assignment_id, "late", at=520.0)
    assert study.heartbeat(db, user_id, view.assignment_id, None, at=505.0).state == "closed"
    assert study.export_rows(db, study_id) == rows_before
    with pytest.raises(study.StudyError, match="archived already"):
        study.set_study_archived(db, study_id, True, by_user=admin["id"])
    study.set_study_archived(db, study_id, False, by_user=admin["id"])
    assert [s.name for s in study.studies_for_annotator(db, user_id)] == ["pilot"]
    assert [c.action for c in changes.history(db, f"study:{study_id}")] == ["study.unarchive", "study.archive"]
    with pytest.raises(study.StudyError, match="not archived already"):
        study.set_study_archived(db, study_id, False, by_user=admin["id"])


# ---------------------------------------------------------------- clone


def test_a_clone_has_the_same_questions_and_settings_and_no_answers(db, samples, annotators, admin):
    source = make_study(db, samples, annotators, seed=5, show_correctness=True, rule_text="Own rule.",
                        practice_items=2, gold_items=1)
    answer_some(db, source, annotators[0]["id"], 3)
    copy = study.clone_study(db, source, name="pilot-again", annotator_ids=[annotators[1]["id"]],
                             by_user=admin["id"])
    a, b = study.get_study(db, source), study.get_study(db, copy)
    for field in ("suite", "n_items", "seed", "rule_text", "show_correctness", "results_when_closed",
                  "practice_items", "gold_items", "gold_pass"):
        assert getattr(a, field) == getattr(b, field), field
    assert (b.name, b.status, b.n_annotators, b.created_by) == ("pilot-again", "open", 1, admin["id"])
    items = "SELECT position, sample_id, kind, sample_json FROM study_items WHERE study_id = ? ORDER BY position"
    assert list(db.query(items, [copy])) == list(db.query(items, [source]))
    assert db.execute("SELECT COUNT(*) FROM responses WHERE study_id = ?", [copy]).fetchone()[0] == 0
    assert len(order_of(db, copy, annotators[1]["id"])) == count(db, "study_items") // 2
    assert changes.history(db, f"study:{copy}")[0].detail == {"source": source, "annotators": [annotators[1]["id"]]}


def test_a_clone_without_annotators_gets_them_later(db, samples, annotators, admin):
    source = make_study(db, samples, annotators)
    copy = study.clone_study(db, source, name="empty copy", by_user=admin["id"])
    assert study.get_study(db, copy).n_annotators == 0
    study.add_annotator(db, copy, annotators[2]["id"], by_user=admin["id"])
    assert study.annotator_names(db, copy) == ["ann3"]


@pytest.mark.parametrize("name, who, message", [
    ("pilot", "ann1", "A study named 'pilot' already exists"),
    ("", "ann1", "Study name is empty"),
    ("copy", "lead", "is an admin, not an annotator"),
    ("copy", "disabled", "is a disabled account"),
])
def test_a_refused_clone_writes_nothing(db, samples, annotators, admin, name, who, message):
    source = make_study(db, samples, annotators)
    if who == "disabled":
        accounts.disable_user(db, annotators[2]["id"], by_user=admin["id"])
    before = snapshot(db)
    user_id = {"ann1": annotators[0]["id"], "lead": admin["id"], "disabled": annotators[2]["id"]}[who]
    with pytest.raises(study.StudyError, match=message):
        study.clone_study(db, source, name=name, annotator_ids=[user_id], by_user=admin["id"])
    assert snapshot(db) == before


# ---------------------------------------------------------------- remove and replace annotators


def test_a_removed_annotator_keeps_their_answers_and_no_longer_sees_the_study(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators)
    leaving = annotators[0]["id"]
    answer_some(db, study_id, leaving, 3)
    view = study.open_question(db, study_id, leaving, at=900.0, tab="tab-1")
    assert study.remove_annotator(db, study_id, leaving, by_user=admin["id"]) == 3
    assert study.studies_for_annotator(db, leaving) == []
    with pytest.raises(study.StudyError, match="taken you off this study"):
        study.open_question(db, study_id, leaving, at=910.0, tab="tab-1")
    with pytest.raises(study.StudyError, match="no longer taken"):
        study.submit_answer(db, leaving, view.assignment_id, "anything", at=920.0, tab="tab-1")
    rows = study.export_rows(db, study_id)
    assert [r["annotator_removed"] for r in rows] == [True] * 3
    assert study.get_study(db, study_id).n_annotators == 2
    members = {m.username: m for m in study.study_members(db, study_id)}
    assert (members["ann1"].status, members["ann1"].answered) == ("removed", 3)
    assert members["ann2"].status == "taking part"
    progress = study.progress_table(db, study_id).set_index("annotator")
    assert progress.loc["ann1", "answered"] == 3 and progress.loc["ann1", "removed"]
    assert not progress.loc["ann2", "removed"]
    change = changes.history(db, f"study:{study_id}")[0]
    assert (change.action, change.detail) == ("study.remove_annotator", {"user_id": leaving, "answers_kept": 3})
    with pytest.raises(study.StudyError, match="removed from this study already"):
        study.remove_annotator(db, study_id, leaving, by_user=admin["id"])
    with pytest.raises(study.StudyError, match="cannot join it again"):
        study.add_annotator(db, study_id, leaving, by_user=admin["id"])


def test_a_replacement_gets_the_same_questions_in_the_same_order(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators[:1], practice_items=2)
    leaving, newcomer = annotators[0]["id"], annotators[1]["id"]
    answer_some(db, study_id, leaving, 4)
    given = study.replace_annotator(db, study_id, leaving, newcomer, by_user=admin["id"])
    assert given == 12 and order_of(db, study_id, newcomer) == order_of(db, study_id, leaving)
    assert db.execute("SELECT COUNT(*) FROM responses WHERE user_id = ?", [leaving]).fetchone()[0] == 4
    assert db.execute("SELECT COUNT(*) FROM responses WHERE user_id = ?", [newcomer]).fetchone()[0] == 0
    members = {m.username: m for m in study.study_members(db, study_id)}
    assert members["ann1"].status == "removed, replaced by ann2" and members["ann2"].total == 12
    answer_some(db, study_id, newcomer, 1)  # the replacement starts at the first question, practice first
    first = db.execute("SELECT item_id FROM responses WHERE user_id = ?", [newcomer]).fetchone()[0]
    assert first == order_of(db, study_id, leaving)[0]
    assert {r["annotator"]: r["annotator_removed"] for r in study.export_rows(db, study_id, kinds=("practice",))} \
        == {"ann1": True, "ann2": False}
    assert changes.history(db, f"study:{study_id}")[0].detail == {
        "user_id": leaving, "replacement_id": newcomer, "answers_kept": 4, "questions_given": 12}


@pytest.mark.parametrize("leaving, replacement, message", [
    ("ann3", "ann2", "does not take part in this study"),
    ("ann1", "ann2", "already takes part in this study"),
    ("ann1", "lead", "is an admin, not an annotator"),
    ("ann1", "disabled", "is a disabled account"),
])
def test_a_refused_replacement_writes_nothing(db, samples, annotators, admin, leaving, replacement, message):
    study_id = make_study(db, samples, annotators[:2])
    disabled = accounts.create_user(db, "ann4", "password-123", "annotator")
    accounts.disable_user(db, disabled["id"], by_user=admin["id"])
    ids = {"ann1": annotators[0]["id"], "ann2": annotators[1]["id"], "ann3": annotators[2]["id"],
           "lead": admin["id"], "disabled": disabled["id"]}
    before = snapshot(db)
    with pytest.raises(study.StudyError, match=message):
        study.replace_annotator(db, study_id, ids[leaving], ids[replacement], by_user=admin["id"])
    assert snapshot(db) == before


def test_a_replacement_removed_before_cannot_come_back(db, samples, annotators, admin):
    study_id = make_study(db, samples, annotators[:2])
    study.remove_annotator(db, study_id, annotators[1]["id"], by_user=admin["id"])
    with pytest.raises(study.StudyError, match="removed from this study before"):
        study.replace_annotator(db, study_id, annotators[0]["id"], annotators[1]["id"], by_user=admin["id"])


def test_disabled_accounts_cannot_join_a_study(db, samples, annotators, admin):
    accounts.disable_user(db, annotators[2]["id"], by_user=admin["id"])
    with pytest.raises(study.StudyError, match="'ann3' is a disabled account"):
        make_study(db, samples, annotators)
    assert count(db, "studies") == 0
