"""The first start's background generation (structext_eval/first_start.py), without Streamlit."""

import threading

import pytest

from structext_core.structext_eval import first_start, samples, suites


@pytest.fixture
def small_defaults(monkeypatch):
    monkeypatch.setitem(suites.SUITES, "test", suites.SuiteConfig("test", (1,), (1,), 1))
    monkeypatch.setitem(suites.SUITES, "test-hard", suites.SuiteConfig("test-hard", (2,), (1, 2), 1))


def test_generates_the_missing_suites_once_in_the_background(tmp_path, small_defaults, monkeypatch):
    release = threading.Event()
    original = suites.generate_suite
    calls = []

    def held(name, **kwargs):
        calls.append(name)
        release.wait(30)
        return original(name, **kwargs)

    monkeypatch.setattr(suites, "generate_suite", held)
    started = first_start.start(tmp_path)
    assert started.names == ("test", "test-hard") and not started.finished and started.done == 0
    assert started.seconds_left() == pytest.approx(first_start.expected_seconds(("test", "test-hard")))
    assert first_start.start(tmp_path).names == started.names  # the same generation, not a second one
    release.set()
    done = first_start.wait(tmp_path, timeout=60)
    total = suites.SUITES["test"].size + suites.SUITES["test-hard"].size
    assert done.finished and done.error is None and done.done == total and done.fraction == pytest.approx(1.0)
    assert done.seconds_left() == 0.0
    assert calls == ["test", "test-hard"]
    assert len(samples.read_jsonl(tmp_path / "test-hard.jsonl")) == suites.SUITES["test-hard"].size
    assert first_start.start(tmp_path).finished  # nothing missing: nothing started again
    assert calls == ["test", "test-hard"]


def test_only_the_missing_suite_is_generated(tmp_path, small_defaults):
    suites.load_or_generate("test", data_dir=tmp_path)
    assert first_start.start(tmp_path).names == ("test-hard",)
    assert first_start.wait(tmp_path, timeout=60).error is None


def test_nothing_missing_starts_nothing(tmp_path, small_defaults):
    for name in ("test", "test-hard"):
        suites.load_or_generate(name, data_dir=tmp_path)
    assert first_start.start(tmp_path) is None and first_start.progress(tmp_path) is None


def test_a_failure_is_kept_with_what_failed_and_not_tried_again(tmp_path, small_defaults, monkeypatch):
    def broken(name, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(suites, "generate_suite", broken)
    first_start.start(tmp_path)
    failed = first_start.wait(tmp_path, timeout=60)
    assert failed.finished and failed.error == "OSError: No space left on device"
    assert not (tmp_path / "test.jsonl").exists()
    assert first_start.start(tmp_path).error == failed.error  # read on Home, not retried on every visit
