"""The lead's figures as data: progress, accuracy, agreement on a study, time, flags."""

import math
import re

import pandas as pd
import pytest

from structext_core.studio import study
from tests.studio.study.support import IDLE_MINUTE, make_study, on_screen, policy_all_half_none, run_study


def test_dashboard_and_export_times_add_up(db, samples, annotators):
    """Active, paused, idle and away time of every answer add up to its wall time, in the
    export and in the progress table."""
    study_id = make_study(db, samples, annotators[:2], n_items=3)
    for annotator in annotators[:2]:
        user_id = annotator["id"]
        study.accept_rule(db, study_id, user_id)
        clock, tab = 0.0, "tab-0"
        while (view := study.open_question(db, study_id, user_id, at=clock, tab=tab,
                                           settings=IDLE_MINUTE)) is not None:
            on_screen(db, user_id, view.assignment_id, clock, clock + 41, tab=tab)  # active 40
            clock += 40 + 300  # the tab closed for 5 minutes (away), then reopened: a new tab
            tab = f"tab-{clock:g}"
            study.open_question(db, study_id, user_id, at=clock, tab=tab, settings=IDLE_MINUTE)
            study.pause_question(db, user_id, view.assignment_id, "d", at=clock + 5, tab=tab)  # active 5
            study.resume_question(db, user_id, view.assignment_id, at=clock + 65, tab=tab)  # paused 60
            for moment in range(70, 131, 5):  # no input: idle pause a minute after the resume
                study.heartbeat(db, user_id, view.assignment_id, tab, at=clock + moment, settings=IDLE_MINUTE)
            study.resume_question(db, user_id, view.assignment_id, at=clock + 200, tab=tab)  # paused 75
            clock += 205
            study.submit_answer(db, user_id, view.assignment_id, "x", at=clock, tab=tab, settings=IDLE_MINUTE)
            clock += 1
    rows = study.export_rows(db, study_id)
    assert len(rows) == 6
    for row in rows:
        parts = row["elapsed_seconds"] + row["paused_seconds"] + row["idle_seconds"] + row["away_seconds"]
        assert parts == pytest.approx(row["wall_seconds"])
        assert row["elapsed_seconds"] == pytest.approx(40 + 5 + 5)
        assert row["away_seconds"] == pytest.approx(300)
        assert row["idle_seconds"] == pytest.approx(60)
        assert row["paused_seconds"] == pytest.approx(60 + 75)
        assert row["wall_seconds"] == pytest.approx(545)
        assert (row["pause_count"], row["idle_pauses"], row["takeovers"]) == (2, 1, 1)
    table = study.progress_table(db, study_id).set_index("annotator")
    assert table.loc["ann1", "hours_answering"] == round(3 * 50 / 3600, 2)
    assert table.loc["ann1", "hours_away"] == round(3 * 300 / 3600, 2)
    assert table.loc["ann1", "hours_idle"] == round(3 * 60 / 3600, 2)
    assert table.loc["ann1", "hours_paused"] == round(3 * 135 / 3600, 2)
    frame = study.responses_frame(db, study_id)
    total = frame[["elapsed_seconds", "paused_seconds", "idle_seconds", "away_seconds"]].sum(axis=1)
    assert (total - frame["wall_seconds"]).abs().max() < 1e-6


def test_every_read_tolerates_an_unscored_row(db, samples, annotators, monkeypatch):
    study_id = run_study(db, samples, annotators, policy_all_half_none, n_items=4)
    # Rows as older code committed them, met by a reader that does not score first
    # (the race that made reads fail with int(NaN)).
    db.execute("UPDATE responses SET rouge_l = NULL, exact_match = NULL, scored_at = NULL")
    # The reader of every figure and export is dashboard.responses_frame: its score_pending.
    monkeypatch.setattr("structext_core.studio.study.dashboard.score_pending", lambda db, study_id: 0)
    frame = study.responses_frame(db, study_id)
    assert frame["rouge_l"].notna().all() and frame["exact_match"].notna().all()
    assert study.annotator_summary(frame)["mean_annotator"] == 50.0
    assert [r["exact_match"] for r in study.export_rows(db, study_id)].count(1) == 6
    pool = [r["score"] for r in study.human_results(db, study_id) if r["model"] == "human"]
    assert sum(pool) / len(pool) == pytest.approx(0.5)
    assert len(study.progress_table(db, study_id)) == 3


def test_accuracy_by_annotator_with_the_paper_rule(db, samples, annotators):
    study_id = run_study(db, samples, annotators, policy_all_half_none)
    df = study.responses_frame(db, study_id)
    assert len(df) == 36 and df["rouge_l"].notna().all()
    per = study.accuracy_by(df, ["annotator"]).set_index("annotator")
    assert per.loc["ann1", "score"] == 100.0 and per.loc["ann1", "exact_match"] == 100.0
    assert per.loc["ann2", "score"] == 50.0
    assert per.loc["ann3", "score"] == 0.0
    assert (per["n"] == 12).all()
    assert (per["score_low"] <= per["score"]).all() and (per["score"] <= per["score_high"]).all()
    assert per.loc["ann2", "score_low"] < 50 < per.loc["ann2", "score_high"]
    summary = study.annotator_summary(df)
    assert summary["mean_annotator"] == 50.0
    assert (summary["best_annotator"], summary["best_score"]) == ("ann1", 100.0)
    assert summary["pool"]["score"].iloc[0] == 50.0 and summary["pool"]["n"].iloc[0] == 36


@pytest.mark.parametrize("column", ["language", "task", "depth", "width"])
def test_accuracy_by_item_groups_counts_every_response(db, samples, annotators, column):
    study_id = run_study(db, samples, annotators, policy_all_half_none)
    df = study.responses_frame(db, study_id)
    table = study.accuracy_by(df, [column])
    assert table["n"].sum() == 36
    assert set(table[column]) == set(df[column])


def test_scores_below_the_threshold_count_as_zero(db, samples, annotators):
    def almost(username, index, answer):
        return answer + " extra words that lower the overlap a lot indeed"
    study_id = run_study(db, samples, annotators[:1], almost, n_items=4)
    df = study.responses_frame(db, study_id)
    below = df[df["rouge_l"] < study.PASS_THRESHOLD]
    assert len(below) > 0
    assert (below["score"] == 0).all() and (~below["passed"]).all()


def test_progress_table(db, samples, annotators):
    study_id = make_study(db, samples, annotators, n_items=5)
    user_id = annotators[1]["id"]
    study.accept_rule(db, study_id, user_id)
    view = study.open_question(db, study_id, user_id, at=0.0)
    on_screen(db, user_id, view.assignment_id, 0.0, 30.0)
    study.give_up(db, user_id, view.assignment_id, at=30.0)
    view = study.open_question(db, study_id, user_id, at=30.0)
    on_screen(db, user_id, view.assignment_id, 30.0, 3630.0)
    study.submit_answer(db, user_id, view.assignment_id, "x", at=3630.0)
    table = study.progress_table(db, study_id).set_index("annotator")
    assert table.loc["ann2", ["answered", "gave_up", "remaining", "total"]].tolist() == [2, 1, 3, 5]
    assert table.loc["ann2", "done_pct"] == 40.0
    assert table.loc["ann2", "hours_answering"] == round(3630 / 3600, 2)
    assert table.loc["ann1", "answered"] == 0 and not table.loc["ann1", "rule_accepted"]


def test_agreement_summary_on_a_study(db, samples, annotators):
    def policy(username, index, answer):
        wrong = {"ann1": {0}, "ann2": {0, 1}, "ann3": {0, 2}}[username]
        return "zzz nothing alike" if index in wrong else answer
    study_id = run_study(db, samples, annotators, policy, n_items=6)
    df = study.responses_frame(db, study_id)
    result = study.agreement_summary(df)
    assert result["fleiss_items"] == 6 and result["alpha_items"] == 6
    assert -1 <= result["fleiss_kappa"] <= 1 and -1 <= result["krippendorff_alpha"] <= 1
    pairwise = result["pairwise"]
    assert len(pairwise) == 3 and (pairwise["n"] == 6).all()
    # Recompute one pair's agreement from the raw verdicts.
    matrix = study.pass_matrix(df)
    same = (matrix["ann1"].astype(bool) == matrix["ann2"].astype(bool)).mean() * 100
    row = pairwise[(pairwise["annotator_a"] == "ann1") & (pairwise["annotator_b"] == "ann2")].iloc[0]
    assert row["agreement_pct"] == round(same, 1)


def test_agreement_with_one_annotator_is_undefined(db, samples, annotators):
    study_id = run_study(db, samples, annotators[:1], lambda u, i, a: a, n_items=3)
    result = study.agreement_summary(study.responses_frame(db, study_id))
    assert math.isnan(result["fleiss_kappa"]) and result["pairwise"].empty


def timing_frame(rows):
    return pd.DataFrame(rows, columns=["response_id", "item_id", "annotator", "elapsed_seconds"])


def test_fast_answers_are_flagged_with_a_reason():
    df = timing_frame([
        (1, 1, "a", 2.0), (2, 1, "b", 60.0), (3, 1, "c", 80.0),      # 2 s: both rules
        (4, 2, "a", 10.0), (5, 2, "b", 100.0), (6, 2, "c", 120.0),   # 10 s < 25 % of 110 s
        (7, 3, "a", 50.0), (8, 3, "b", 60.0), (9, 3, "c", 70.0),     # nobody
        (10, 4, "a", 3.0),                                            # alone, under 5 s
    ])
    flagged = study.flag_fast(df).set_index("response_id")
    assert set(flagged.index) == {1, 4, 10}
    assert "under 5 s" in flagged.loc[1, "reason"] and "median" in flagged.loc[1, "reason"]
    assert flagged.loc[4, "reason"] == "under 25% of the others' median (110 s)"
    assert flagged.loc[10, "reason"] == "under 5 s"
    assert set(study.flag_fast(df, min_seconds=1, fraction_of_median=0.01).index) == set()


def test_time_summary(db, samples, annotators):
    study_id = run_study(db, samples, annotators[:2], lambda u, i, a: a, n_items=6)
    df = study.responses_frame(db, study_id)
    summary = study.time_summary(df, study.kind_of("structext-eval").time_cells)
    per = summary["per_annotator"].set_index("annotator")
    assert per.loc["ann1", "n"] == 6
    assert per.loc["ann1", "median_s"] == 35.0  # times 10, 20, ..., 60
    assert per.loc["ann1", "total_h"] == round(210 / 3600, 2)
    assert summary["per_cell"]["n"].sum() == 12
    assert -1 <= summary["spearman_length"] <= 1


def test_the_data_version_changes_with_everything_the_figures_read_and_only_then(db, samples, annotators, admin):
    """The dashboard caches its figures under ``data_version``: it must change whenever an answer, a
    score override, a person, a place setting or a person's name does, and stay put on a read."""
    from structext_core.studio.crowd import settings

    study_id = make_study(db, samples, annotators[:2], n_items=3)
    other = make_study(db, samples, annotators[:2], n_items=3, name="other")
    seen = [study.data_version(db, study_id)]

    def changed() -> bool:
        now = study.data_version(db, study_id)
        fresh = now not in seen
        seen.append(now)
        return fresh

    study.progress_table(db, study_id)
    study.responses_frame(db, study_id)
    assert not changed()  # reading changes nothing
    study.accept_rule(db, study_id, annotators[0]["id"])
    assert changed()
    view = study.open_question(db, study_id, annotators[0]["id"], at=10.0)
    assert changed()  # a question shown
    study.submit_answer(db, annotators[0]["id"], view.assignment_id, "an answer", at=20.0)
    assert changed()
    [response_id] = [r for (r,) in db.execute("SELECT id FROM responses WHERE study_id = ?", [study_id])]
    study.override_score(db, response_id, 1.0, "right in substance", admin)
    assert changed()
    study.add_annotator(db, study_id, annotators[2]["id"], by_user=admin["id"])
    assert changed()
    study.remove_annotator(db, study_id, annotators[1]["id"], by_user=admin["id"])
    assert changed()
    settings.save_settings(db, study_id, admin["id"], bonus_per_correct=0.5)
    assert changed()
    study.flag_question(db, study_id, annotators[0]["id"], view.item_id, "unclear", "")
    assert changed()
    [flag] = study.flags(db, study_id)
    study.resolve_flag(db, flag.id, admin, "the key is right")
    assert changed()
    db.execute("UPDATE users SET username = 'renamed' WHERE id = ?", [annotators[2]["id"]])
    assert changed()
    before = study.data_version(db, study_id)
    study.accept_rule(db, other, annotators[0]["id"])  # another study's people and answers
    view = study.open_question(db, other, annotators[0]["id"], at=30.0)
    study.submit_answer(db, annotators[0]["id"], view.assignment_id, "an answer", at=40.0)
    assert study.data_version(db, study_id) == before


def test_data_version_reads_indexes_not_rows(db, samples, annotators):
    """Every run of Studies and Adjudication fingerprints its study: no statement reads a row of the study's
    places or answers from their tables (a response's row holds its answer; migration 18), and the figures are
    those the tables have."""
    study_id = run_study(db, samples, annotators[:2], policy_all_half_none, n_items=3)
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    try:
        version = study.data_version(db, study_id)
    finally:
        db.conn.set_trace_callback(None)
    plans = [row[3] for statement in statements for row in db.execute("EXPLAIN QUERY PLAN " + statement).fetchall()]
    read = [p for p in plans if re.match(r"(SCAN|SEARCH) (assignments|responses|r)\b", p)]
    assert len(read) == 3 and all("COVERING INDEX" in p for p in read), plans
    assert version[4] == tuple(db.execute("SELECT COUNT(*), MAX(id), TOTAL(item_id), TOTAL(seq), TOTAL(first_shown_at),"
                                          " COUNT(first_shown_at) FROM assignments WHERE study_id = ?", [study_id]).fetchone())
    assert version[5][0] == 2 * 3 and version[5][2] == db.execute("SELECT MAX(submitted_at) FROM responses").fetchone()[0]
