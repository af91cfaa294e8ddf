"""The journeys .ci/run starts late (tests/conftest.py LATE_JOURNEYS) are journeys that exist: a
renamed file would quietly move back to the first stream of journeys, and the split go stale."""

from tests.conftest import BROWSER_TESTS, LATE_JOURNEYS


def test_every_late_journey_is_a_browser_test_file():
    journeys = {path.name for path in BROWSER_TESTS.glob("test_*.py")}
    assert LATE_JOURNEYS and LATE_JOURNEYS <= journeys, sorted(LATE_JOURNEYS - journeys)
    assert len(LATE_JOURNEYS) < len(journeys) / 2  # most journeys run beside the other tests
