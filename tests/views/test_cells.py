"""How a cell says a value (issue 46, item 2): dashes for missing values, whole-rank intervals,
durations in the unit that fits, and the dashboard's tables built with them."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from structext_core.views import cells, dashboard


@pytest.mark.parametrize("value, missing", [(None, True), (math.nan, True), (pd.NA, True), (pd.NaT, True),
                                            (0, False), (0.0, False), ("", False), ("None", False), ([1], False)])
def test_missing(value, missing):
    assert cells.missing(value) is missing


def test_number_text_never_says_none_or_nan():
    assert [cells.number_text(v, 2) for v in (0.125, None, math.nan)] == ["0.12", cells.DASH, cells.DASH]
    assert cells.number_text(0.5, 0, percent=True) == "50%"


@pytest.mark.parametrize("low, high, shown", [
    (2.125, 5.0, "2 to 5"),  # regression: "2.125-5"
    (1.0, 1.0, "1"), (1.9, 2.1, "1 to 3"), (2.0, 2.0, "2"), (0.9999999999, 3.0000000001, "1 to 3"),
    (math.nan, 3.0, cells.DASH), (None, None, cells.DASH)])
def test_rank_interval_in_whole_ranks_never_narrower(low, high, shown):
    assert cells.rank_interval(low, high) == shown
    if shown != cells.DASH:
        first, _, last = shown.partition(" to ")
        assert int(first) <= low + 1e-6 and int(last or first) >= high - 1e-6


def test_rank_text():
    assert [cells.rank_text(v) for v in (3.0, 2.5, None)] == ["3", "2.5", cells.DASH]


@pytest.mark.parametrize("largest, unit", [(0, "seconds"), (36, "seconds"), (119, "seconds"), (120, "minutes"),
                                           (3600, "minutes"), (7200, "hours"), (90_000, "hours")])
def test_the_duration_unit_fits_the_largest(largest, unit):
    assert cells.duration_unit([1.0, largest, math.nan])[0] == unit


def test_without_missing_writes_a_dash_and_keeps_other_columns():
    frame = pd.DataFrame({"a": [1.0, math.nan], "b": [1, 2], "c": ["x", None]})
    out = cells.without_missing(frame, digits=1)
    assert out["a"].tolist() == ["1.0", cells.DASH] and out["c"].tolist() == ["x", cells.DASH]
    assert out["b"].tolist() == [1, 2] and out["b"].dtype == frame["b"].dtype
    assert frame["a"].isna().sum() == 1  # the frame given is left as it was


def _progress(seconds: list[float], last: list) -> pd.DataFrame:
    n = len(seconds)
    return pd.DataFrame({
        "annotator": [f"ann{i}" for i in range(n)], "answered": [1] * n, "gave_up": [0] * n, "remaining": [0] * n,
        "total": [1] * n, "done_pct": [100.0] * n, "last_answer": last, "rule_accepted": [True] * n,
        "removed": [False] * n, **{f"seconds_{part}": seconds for part in dashboard.TIME_PARTS}})


def test_the_progress_tables_time_a_pilot_in_seconds_and_a_day_in_hours():
    # regression (issue 46): "hours answering 0.01" for a pilot of half a minute; "last answer: None"
    where, times = dashboard.progress_tables(_progress([36.0, 0.0], ["2026-12-02 03:00", None]))
    assert list(times.columns) == ["annotator", "answering (s)", "paused (s)", "idle (s)", "away (s)"]
    assert times["answering (s)"].tolist() == [36.0, 0.0]
    assert where["last_answer"].tolist() == ["2026-12-02 03:00", dashboard.NO_ANSWER_YET]
    _, times = dashboard.progress_tables(_progress([600.0, 1800.0], ["x", "y"]))
    assert times["answering (min)"].tolist() == [10.0, 30.0]
    _, times = dashboard.progress_tables(_progress([36_000.0, 9000.0], ["x", "y"]))
    assert times["answering (h)"].tolist() == [10.0, 2.5]


def test_the_fast_answers_table_says_a_dash_where_no_one_else_answered():
    # regression (issue 46): "others' median" None for an item only one person answered
    flagged = pd.DataFrame({"annotator": ["ann1", "ann2"], "seq": [1, 2], "item": ["mcq-039", "mcq-040"],
                            "elapsed_seconds": [1.5, 2.0], "others_median": [math.nan, 40.4],
                            "reason": ["under 3 s", "under 3 s"], "gave_up": [False, False], "score": [1.0, 0.0],
                            "response": ["A", None]})
    table = dashboard.fast_table(flagged)
    assert table["others' median (s)"].tolist() == [cells.DASH, "40"]
    assert table["item"].tolist() == ["mcq-039", "mcq-040"] and table["response"].tolist() == ["A", ""]
