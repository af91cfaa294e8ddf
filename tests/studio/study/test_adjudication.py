"""Adjudication: the item list (disagreement first), one item in full, overrides and clears
(validation, admins only, history, one transaction), and the final score in the dashboard, the
export and the Results page's human rows."""

import csv
import io
import json
import math
import statistics

import pytest

from structext_core.structext_eval import results_frame
from structext_core.structext_eval import study as structext_study
from structext_core.studio import access, accounts, changes, study
from tests.studio.study.support import count, policy_all_half_none, run_study


@pytest.fixture
def answered(db, samples, annotators):
    """4 items answered by all three: ann1 right, ann2 right on its 1st and 3rd, ann3 gave up."""
    return run_study(db, samples, annotators, policy_all_half_none, n_items=4)


def response_of(db, study_id, username, seq=1):
    return db.execute(
        "SELECT r.id FROM responses r JOIN users u ON u.id = r.user_id JOIN assignments a ON a.id = r.assignment_id"
        " WHERE r.study_id = ? AND u.username = ? AND a.seq = ?", [study_id, username, seq]).fetchone()[0]


def score_records(db):
    """Audit-log rows about responses (account changes are recorded there too)."""
    return len(changes.history(db, prefix="response:"))


def frame_row(db, study_id, response_id):
    frame = study.responses_frame(db, study_id)
    return frame[frame["response_id"] == response_id].iloc[0]


# ---------------------------------------------------------------- overriding: validation


@pytest.mark.parametrize("score, message", [
    (-0.1, "from 0"), (1.5, "from 0"), (float("nan"), "from 0"), ("1", "a number"), (True, "a number"),
    (None, "a number"),
])
def test_a_score_outside_0_to_1_is_refused_and_nothing_is_written(db, answered, admin, score, message):
    response_id = response_of(db, answered, "ann3")
    with pytest.raises(study.AdjudicationError, match=message):
        study.override_score(db, response_id, score, "a reason", admin)
    assert count(db, "score_overrides") == 0 and score_records(db) == 0


@pytest.mark.parametrize("reason, message", [
    ("", "Give a reason"), ("   \n ", "Give a reason"), (None, "Give a reason"), (42, "must be text"),
    ("x" * (study.MAX_REASON_CHARS + 1), "characters long"),
])
def test_a_missing_or_too_long_reason_is_refused(db, answered, admin, reason, message):
    response_id = response_of(db, answered, "ann3")
    with pytest.raises(study.AdjudicationError, match=message):
        study.override_score(db, response_id, 1.0, reason, admin)
    with pytest.raises(study.AdjudicationError, match=message):
        study.clear_override(db, response_id, reason, admin)
    assert count(db, "score_overrides") == 0 and score_records(db) == 0


def test_a_reason_at_the_limit_is_kept_stripped(db, answered, admin):
    response_id = response_of(db, answered, "ann3")
    reason = "y" * study.MAX_REASON_CHARS
    assert study.override_score(db, response_id, 1, f"  {reason}\n", admin).reason == reason


@pytest.mark.parametrize("role", ["visitor", "annotator", "researcher"])
def test_only_an_admin_may_override_or_clear(db, answered, admin, role):
    response_id = response_of(db, answered, "ann3")
    who = None if role == "visitor" else accounts.create_user(db, f"some-{role}", "password-123", role)
    with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may override a score"):
        study.override_score(db, response_id, 1.0, "looks right", who)
    study.override_score(db, response_id, 1.0, "looks right", admin)
    with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may clear an override"):
        study.clear_override(db, response_id, "undo", who)
    assert count(db, "score_overrides") == 1 and score_records(db) == 1


def test_an_unknown_response_or_nothing_to_clear_is_a_clear_error(db, answered, admin):
    with pytest.raises(study.AdjudicationError, match="no response with id 9999"):
        study.override_score(db, 9999, 1.0, "right", admin)
    with pytest.raises(study.AdjudicationError, match="no override to clear"):
        study.clear_override(db, response_of(db, answered, "ann1"), "undo", admin)
    assert count(db, "score_overrides") == 0 and score_records(db) == 0


def test_the_override_and_its_record_are_one_transaction(db, answered, admin, monkeypatch):
    """A failing audit record leaves no override behind (and the other way round)."""
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(changes, "record", broken)
    with pytest.raises(RuntimeError):
        study.override_score(db, response_of(db, answered, "ann3"), 1.0, "right", admin)
    assert count(db, "score_overrides") == 0 and score_records(db) == 0
    assert not db.conn.in_transaction


# ---------------------------------------------------------------- history


def test_every_change_is_kept_newest_first_with_who_and_why(db, answered, admin):
    response_id = response_of(db, answered, "ann3")
    other_admin = accounts.create_user(db, "second-lead", "password-123", "admin")
    study.override_score(db, response_id, 1.0, "the key is wrong", admin, at=100.0)
    study.override_score(db, response_id, 0.5, "half of it", other_admin, at=200.0)
    study.clear_override(db, response_id, "the key was fixed", admin, at=300.0)
    history = study.override_history(db, response_id)
    assert [(o.score, o.reason, o.by, o.at, o.cleared) for o in history] == [
        (None, "the key was fixed", "lead", 300.0, True),
        (0.5, "half of it", "second-lead", 200.0, False),
        (1.0, "the key is wrong", "lead", 100.0, False),
    ]
    table = study.history_table(history)
    assert table["score"].tolist() == ["back to automatic", "0.5", "1"]
    assert table["when"].iloc[0] == "1970-01-01 00:05 UTC"
    records = changes.history(db, f"response:{response_id}")
    assert [(c.action, c.by, c.detail["score"], c.detail["previous"]) for c in records] == [
        ("score.clear", "lead", None, 0.5),
        ("score.override", "second-lead", 0.5, 1.0),
        ("score.override", "lead", 1.0, 0.0),
    ]
    assert records[-1].detail["study"] == answered and records[-1].detail["annotator"] == "ann3"
    assert records[-1].detail["automatic"] == 0.0 and records[-1].detail["reason"] == "the key is wrong"
    assert study.override_history(db, response_of(db, answered, "ann1")) == []


def test_the_newest_override_counts_and_a_clear_restores_the_automatic_score(db, answered, admin):
    response_id = response_of(db, answered, "ann1")  # right: automatic score 1.0
    assert frame_row(db, answered, response_id)["score"] == 1.0
    study.override_score(db, response_id, 0.2, "copied from the reference without reading", admin)
    study.override_score(db, response_id, 0.0, "on second thought: wrong", admin)
    row = frame_row(db, answered, response_id)
    assert (row["score"], row["score_auto"], row["score_override"], bool(row["passed"])) == (0.0, 1.0, 0.0, False)
    assert row["override_reason"] == "on second thought: wrong" and row["override_by"] == "lead"
    study.clear_override(db, response_id, "back", admin)
    row = frame_row(db, answered, response_id)
    assert (row["score"], bool(row["passed"])) == (1.0, True) and math.isnan(row["score_override"])
    assert row["override_reason"] is None and row["override_by"] is None


# ---------------------------------------------------------------- the final score everywhere


def test_the_final_score_flows_into_dashboard_export_and_results(db, answered, admin):
    response_id = response_of(db, answered, "ann3")  # gave up: automatic 0
    before = results_frame.data_version(db)
    study.override_score(db, response_id, 1.0, "answered on paper, entered as give-up", admin, at=86400.0)
    assert results_frame.data_version(db) != before  # the Results page's cache sees the change
    frame = study.responses_frame(db, answered)
    per = study.accuracy_by(frame, ["annotator"]).set_index("annotator")
    assert per.loc["ann3", "score"] == 25.0 and per.loc["ann1", "score"] == 100.0
    assert study.annotator_summary(frame)["pool"].iloc[0]["score"] == pytest.approx(100 * 7 / 12, abs=0.05)
    assert frame["passed"].sum() == 7  # agreement reads the final verdicts
    assert study.pass_matrix(frame)["ann3"].sum() == 1

    rows = {r["annotator"] + str(r["seq"]): r for r in study.export_rows(db, answered)}
    row = rows["ann31"]
    assert (row["score"], row["score_auto"], row["score_override"], row["passed"]) == (1.0, 0.0, 1.0, True)
    assert row["override_reason"] == "answered on paper, entered as give-up" and row["override_by"] == "lead"
    assert row["override_at"] == "1970-01-02T00:00:00.000+00:00"
    untouched = rows["ann32"]
    assert untouched["score_override"] is None and untouched["override_at"] is None
    assert untouched["score"] == untouched["score_auto"] == 0.0
    assert "score_override" in study.to_csv(list(rows.values())).splitlines()[0]

    human = [r for r in study.human_results(db, answered) if r["model"] == "human:ann3"]
    changed = [r for r in human if r["score_override"] is not None]
    assert len(changed) == 1 and changed[0]["score"] == changed[0]["rouge_l"] == 1.0
    assert changed[0]["rouge_l_auto"] == changed[0]["score_auto"] == 0.0
    people = results_frame.human_frame(db)
    ann3 = people[people["model"] == "human:ann3"]
    assert sorted(ann3["rouge_l"]) == [0.0, 0.0, 0.0, 1.0] and sorted(ann3["rouge_l_paper"]) == [0.0, 0.0, 0.0, 1.0]
    loaded = results_frame.load_results(db)
    assert loaded[loaded["model"] == "human:ann3"]["score"].mean() == pytest.approx(0.25)

    study.clear_override(db, response_id, "no: it was a give-up", admin)
    assert study.export_rows(db, answered)[8]["score_override"] is None
    people = results_frame.human_frame(db)
    assert people[people["model"] == "human:ann3"]["rouge_l_paper"].max() == 0.0


def test_csv_and_jsonl_exports_agree_after_an_override(db, answered, admin):
    """Regression (issue item 9d): after an override the CSV said rouge_l 0.0 / score 1.0 while the
    human-results JSONL said rouge_l 1.0. The override in force is ``score`` and ``rouge_l`` in
    every export; the automatic values stay in ``rouge_l_auto`` and ``score_auto``."""
    response_id = response_of(db, answered, "ann3")  # gave up: automatic 0
    study.override_score(db, response_id, 1.0, "answered on paper, entered as give-up", admin)
    rows = study.export_rows(db, answered)
    csv_rows = list(csv.DictReader(io.StringIO(study.to_csv(rows, study.export_columns("structext-eval")))))
    jsonl_rows = [json.loads(line) for line in study.to_jsonl(rows).splitlines()]
    human = [r for r in (json.loads(line) for line in study.to_jsonl(study.human_results(db, answered)).splitlines())
             if r["model"].startswith("human:")]
    assert len(csv_rows) == len(jsonl_rows) == len(human) == 12
    results = {(r["annotator"], r["sample_id"]): r for r in human}
    for from_csv, from_jsonl in zip(csv_rows, jsonl_rows):
        result = results[(from_jsonl["annotator"], from_jsonl["sample_id"])]
        for column in ("rouge_l", "score", "rouge_l_auto", "score_auto"):
            assert float(from_csv[column]) == from_jsonl[column] == result[column], column
    changed = [r for r in jsonl_rows if r["score_override"] is not None]
    assert len(changed) == 1
    assert (changed[0]["rouge_l"], changed[0]["score"], changed[0]["rouge_l_auto"], changed[0]["score_auto"]) == (
        1.0, 1.0, 0.0, 0.0)


def test_final_score_rule(db):
    assert study.final_score(0.8, None) == 0.8 and study.final_score(0.8, 0.0) == 0.0
    assert study.automatic_score(0.74) == 0.0 and study.automatic_score(0.9) == 0.9


# ---------------------------------------------------------------- the item list


def expected_disagreement(scores, gave_up):
    n = len(scores)
    spread = statistics.pstdev(scores) if n >= 2 else 0.0
    return spread + (min(gave_up, n - gave_up) / n if n else 0.0)


def test_items_are_listed_disagreement_first_with_their_figures(db, answered):
    items = study.adjudication_items(db, answered)
    assert len(items) == 4 and all(s.n_responses == 3 and s.n_gave_up == 1 for s in items)
    frame = study.responses_frame(db, answered)
    for summary in items:
        mine = frame[frame["item_id"] == summary.item_id]
        assert summary.mean_score == pytest.approx(mine["score"].mean())
        assert summary.spread == pytest.approx(statistics.pstdev(mine["score"]))
        assert summary.gave_up_mix == pytest.approx(1 / 3)
        assert summary.disagreement == pytest.approx(expected_disagreement(list(mine["score"]), 1))
    values = [s.disagreement for s in items]
    assert values == sorted(values, reverse=True)
    assert [s.position for s in study.adjudication_items(db, answered, order="position")] == [1, 2, 3, 4]
    means = [s.mean_score for s in study.adjudication_items(db, answered, order="lowest_mean")]
    assert means == sorted(means)


def test_an_override_that_settles_an_item_moves_it_down(db, samples, annotators, admin):
    """Two items: on one the annotators agree (both right), on the other one is right and one
    gave up. The second comes first until the lead marks the give-up right too."""
    def policy(username, index, answer):
        return answer if username == "ann1" or index == 0 else None
    study_id = run_study(db, samples, annotators[:2], policy, n_items=2)
    first, second = study.adjudication_items(db, study_id)
    assert (first.disagreement, second.disagreement) == (pytest.approx(1.0), 0.0)  # 0.5 spread + 0.5 mix
    assert first.mean_score == 0.5 and second.mean_score == 1.0
    gave_up = db.execute("SELECT id FROM responses WHERE item_id = ? AND gave_up = 1", [first.item_id]).fetchone()[0]
    study.override_score(db, gave_up, 1.0, "answered aloud", admin)
    items = study.adjudication_items(db, study_id)
    moved = next(s for s in items if s.item_id == first.item_id)
    assert moved.spread == 0.0 and moved.gave_up_mix == 0.5 and moved.n_overridden == 1
    assert items[0].item_id == first.item_id  # the gave-up mix still says: have a look
    assert "1 overridden" in moved.label and "#" in moved.label


def test_items_without_answers_come_last_and_an_unknown_order_is_refused(db, samples, annotators):
    study_id = structext_study.create_study(db, name="empty", suite="test-hard", samples=samples, n_items=3,
                                  annotator_ids=[annotators[0]["id"]])
    items = study.adjudication_items(db, study_id, order="lowest_mean")
    assert [s.n_responses for s in items] == [0, 0, 0] and all(s.mean_score is None for s in items)
    table = study.items_table(items)
    assert table["position"].tolist() == [1, 2, 3]
    assert list(table.columns)[:9] == ["position", "name", "n_responses", "n_gave_up", "mean_score", "spread",
                                       "disagreement", "n_overridden", "open_flags"]  # then kind and strata
    with pytest.raises(study.AdjudicationError, match="Unknown order 'random'"):
        study.adjudication_items(db, study_id, order="random")
    with pytest.raises(study.StudyError, match="no study with id 999"):
        study.adjudication_items(db, 999)


def test_flags_on_an_item_are_counted(db, answered, annotators, admin):
    item = study.adjudication_items(db, answered, order="position")[0]
    study.flag_question(db, answered, annotators[0]["id"], item.item_id, "broken", "key is off by one")
    study.flag_question(db, answered, annotators[1]["id"], item.item_id, "unclear")
    listed = {s.item_id: s for s in study.adjudication_items(db, answered)}
    assert (listed[item.item_id].open_flags, listed[item.item_id].n_flags) == (2, 2)
    assert "2 open flags" in listed[item.item_id].label
    flag = study.flags(db, answered, item_id=item.item_id)[0]
    study.resolve_flag(db, flag.id, admin, "key checked")
    detail = study.adjudication_item(db, item.item_id)
    assert (detail.summary.open_flags, detail.summary.n_flags) == (1, 2)
    assert sum(s.open_flags for s in study.adjudication_items(db, answered)) == 1


# ---------------------------------------------------------------- one item in full


def test_one_item_in_full(db, answered, admin):
    item = study.adjudication_items(db, answered, order="position")[0]
    detail = study.adjudication_item(db, item.item_id)
    sample = db.execute("SELECT json_extract(sample_json, '$.reference'), json_extract(sample_json, '$.question'),"
                        " json_extract(sample_json, '$.answer') FROM study_items WHERE id = ?",
                        [item.item_id]).fetchone()
    assert (detail.reference, detail.question, detail.answer) == sample
    assert detail.summary == item
    assert [r.annotator for r in detail.responses] == ["ann1", "ann2", "ann3"]
    ann1, ann2, ann3 = detail.responses
    assert ann1.response == detail.answer and ann1.rouge_l == 1.0 and ann1.exact_match == 1
    assert ann1.score_auto == ann1.score == 1.0 and ann1.override is None and ann1.passed
    assert ann3.gave_up and ann3.score == 0.0
    stored = db.execute("SELECT elapsed_seconds, paused_seconds, idle_seconds, away_seconds, wall_seconds,"
                        " submitted_at FROM responses WHERE id = ?", [ann2.response_id]).fetchone()
    assert (ann2.elapsed_seconds, ann2.paused_seconds, ann2.idle_seconds, ann2.away_seconds, ann2.wall_seconds,
            ann2.submitted_at) == stored
    assert ann2.elapsed_seconds > 0
    study.override_score(db, ann3.response_id, 0.9, "said it aloud", admin, at=50.0)
    ann3 = study.adjudication_item(db, item.item_id).responses[2]
    assert ann3.score == 0.9 and ann3.score_auto == 0.0 and ann3.passed
    assert (ann3.override.score, ann3.override.reason, ann3.override.by, ann3.override.at) == (
        0.9, "said it aloud", "lead", 50.0)
    with pytest.raises(study.StudyError, match="no study item with id 424242"):
        study.adjudication_item(db, 424242)
