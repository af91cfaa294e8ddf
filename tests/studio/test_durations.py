"""One way to write a duration: a running clock, and a wait (or an estimate) in words."""

import pytest

from structext_core.structext_eval.cli import model_runs as cli_results
from structext_core.studio import accounts, durations, study


@pytest.mark.parametrize("seconds, text", [(0, "0:00"), (59.9, "0:59"), (61, "1:01"), (3599, "59:59"),
                                           (3600, "1:00:00"), (36061, "10:01:01"), (-4, "0:00")])
def test_clock(seconds, text):
    assert durations.clock(seconds) == text
    assert study.format_duration(seconds) == text  # the question's clock on the annotator's page


@pytest.mark.parametrize("seconds, text", [(0.2, "1 s"), (45, "45 s"), (60, "1 min"), (125, "2 min 5 s"),
                                           (3600, "1 h"), (3725, "1 h 2 min 5 s")])
def test_words(seconds, text):
    assert durations.words(seconds) == text
    assert accounts.format_duration(seconds) == text  # how long a log-in stays locked


@pytest.mark.parametrize("seconds, text", [(0.2, "1 s"), (45, "45 s"), (200, "3 min 20 s"), (3725, "1 h 2 min"),
                                           (3959, "1 h 5 min"), (3605, "1 h"), (7200, "2 h")])
def test_an_estimate_keeps_the_two_largest_units(seconds, text):
    assert durations.words(seconds, units=2) == text
    assert cli_results._duration(seconds) == text  # the command line's time left
