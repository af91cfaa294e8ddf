"""The study dashboard's charts are built from the responses frame, outside Streamlit."""
from __future__ import annotations

import dataclasses
import math

import pandas as pd

from structext_core.studio import study
from structext_core.views import cells, dashboard


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "annotator": ["ann1", "ann1", "ann2", "ann2"],
        "item": ["a", "b", "a", "b"],
        "language": ["json", "yaml", "json", "yaml"],
        "sample_id": ["a", "b", "a", "b"],
        "elapsed_seconds": [0.5, 30.0, 125.0, 4000.0],
        "reference_chars": [100, 2000, 100, 2000],
        "score": [100.0, 0.0, 100.0, 100.0],
        "exact_match": [1, 0, 1, 0],
    })


def test_accuracy_chart_has_one_bar_per_group_and_whiskers():
    table = pd.DataFrame({"annotator": ["ann1", "ann2"], "n": [2, 2], "score": [50.0, 100.0],
                          "score_low": [0.0, 100.0], "score_high": [100.0, 100.0], "exact_match": [50.0, 50.0]})
    spec = dashboard.accuracy_chart(table, ["annotator"]).to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["bar", "rule"]
    assert spec["height"] == 60 + 26 * 2
    values = next(iter(spec["datasets"].values()))
    assert [v["group"] for v in values] == ["ann1", "ann2"]


def test_accuracy_chart_joins_several_grouping_columns():
    table = pd.DataFrame({"annotator": ["ann1"], "language": ["json"], "n": [1], "score": [100.0],
                          "score_low": [100.0], "score_high": [100.0], "exact_match": [100.0]})
    values = next(iter(dashboard.accuracy_chart(table, ["annotator", "language"]).to_dict()["datasets"].values()))
    assert values[0]["group"] == "ann1 · json"


def test_time_charts_bin_on_log_seconds_and_plot_minutes():
    histogram = dashboard.time_histogram(frame()).to_dict()
    assert histogram["encoding"]["x"]["field"] == "log_seconds" and histogram["encoding"]["x"]["bin"] == {"step": 0.1}
    values = next(iter(histogram["datasets"].values()))
    assert [round(v["log_seconds"], 3) for v in values] == [0.0, 1.477, 2.097, 3.602]  # under 1 s counts as 1 s
    scatter = dashboard.time_by_length(frame()).to_dict()
    assert scatter["encoding"]["y"]["field"] == "minutes"
    assert [v["minutes"] for v in next(iter(scatter["datasets"].values()))][-1] == 4000 / 60
    assert "item" in [t["field"] for t in scatter["encoding"]["tooltip"]]  # the set's own id, not ours


def test_the_study_package_still_offers_its_whole_api():
    for name in ("create_items_study", "open_question", "heartbeat", "submit_answer", "responses_frame",
                 "accuracy_by", "agreement_summary", "export_rows", "human_results", "cohen_kappa",
                 "clock_settings", "format_duration", "StudyError", "Study", "AnnotatorStudy",
                 "QuestionView", "Feedback", "AnnotatorProgress"):
        assert hasattr(study, name), name


def test_statistics_print_to_three_decimals_or_not_available():
    assert [dashboard.statistic_text(v) for v in (0.12345, -1.0, math.nan)] == ["0.123", "-1.000", cells.DASH]


def test_accounts_and_failed_log_ins_as_tables():
    users = [{"id": 1, "username": "ann1", "role": "annotator", "created_at": 86400.0 + 3 * 3600 + 60,
              "status": "disabled"}]
    assert dashboard.accounts_table(users).to_dict("records") == [
        {"username": "ann1", "role": "annotator", "status": "disabled", "created_at": "1970-01-02 03:01"}]
    failures = [{"username": "ann1", "failures": 6, "locked_seconds": 61.5},
                {"username": "ann2", "failures": 2, "locked_seconds": 0.0}]
    assert dashboard.login_failures_table(failures).to_dict("records") == [
        {"user name": "ann1", "failed attempts": 6, "locked for": "1 min 2 s"},
        {"user name": "ann2", "failed attempts": 2, "locked for": "not locked"}]
    assert list(dashboard.login_failures_table([]).columns) == ["user name", "failed attempts", "locked for"]


def test_gold_report_as_a_table_puts_those_to_check_first():
    report = pd.DataFrame({"annotator": ["ann1", "ann2", "ann3"], "gold_answered": [4, 4, 2],
                           "gold_passed": [4, 1, 0], "gold_accuracy": [100.0, 25.0, 0.0],
                           "check": [False, True, True]})
    table = dashboard.gold_table(report)
    assert table["annotator"].tolist() == ["ann2", "ann3", "ann1"]
    assert table["check"].tolist() == [dashboard.CHECK_WORK, dashboard.CHECK_WORK, "ok"]
    assert dashboard.gold_table(report.iloc[:0]).empty


def test_flags_as_a_table():
    open_flag = study.Flag(id=3, study_id=1, item_id=9, position=4, sample_id="s-4", username="ann1", kind="broken",
                           note="key wrong", created_at=0.0, resolved_by=None, resolved_at=None, resolution=None)
    done = study.Flag(id=5, study_id=1, item_id=9, position=4, sample_id="s-4", username=None, kind="other",
                      note="typo", created_at=60.0, resolved_by="lead", resolved_at=120.0, resolution="fixed")
    table = dashboard.flags_table([open_flag, done])
    assert list(table.columns) == dashboard.FLAG_COLUMNS
    assert table.iloc[0][["flag", "question", "annotator", "kind", "flagged"]].tolist() == [
        3, 4, "ann1", "broken", "1970-01-01 00:00"]
    # still open: a dash, never None (issue 46)
    assert table.loc[0, ["resolved_by", "resolved", "resolution"]].tolist() == [cells.DASH] * 3
    assert table.iloc[1][["resolved_by", "resolved", "resolution"]].tolist() == ["lead", "1970-01-01 00:02", "fixed"]
    assert table.loc[1, "annotator"] == dashboard.DELETED_ACCOUNT  # the account was deleted
    assert table.loc[0, "item"] == "s-4"
    named = dataclasses.replace(open_flag, name="mcq-039")  # a lab set's item: its own id, not our hash
    assert dashboard.flags_table([named]).loc[0, "item"] == "mcq-039"
    assert dashboard.flags_table([]).empty and list(dashboard.flags_table([]).columns) == dashboard.FLAG_COLUMNS
