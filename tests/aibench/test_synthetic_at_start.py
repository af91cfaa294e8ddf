"""The synthetic AIBench set is made at the app's first start, in a background thread: the first
page does not wait for it, the AIBench view shows its progress, then its results."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import settings
from structext_core.aibench import config as aibench_config
from structext_core.aibench import store as aibench_store
from structext_core.aibench.synthetic import build
from structext_core.studio import sandbox
from tests.pages.light_choices import choice, choose

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
RESULTS = ROOT / "pages" / "results.py"
RESEARCHER = {"id": 98, "username": "reader", "role": "researcher"}


@pytest.fixture
def env(tmp_path, monkeypatch, pool):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv(aibench_config.DIR_ENV, str(tmp_path / "aibench"))
    monkeypatch.setenv(aibench_config.SYNTHETIC_ENV, "on")
    monkeypatch.setattr(aibench_store, "SYNTHETIC_PAPERS", 2)
    monkeypatch.setattr(sandbox, "default_pool", lambda: pool)  # no second pool left running
    yield tmp_path / "aibench"
    aibench_store.wait_for_synthetic(120)  # no thread outlives its folder


def test_the_setting_is_on_unless_turned_off():
    assert aibench_config.synthetic_at_start({})
    assert aibench_config.synthetic_at_start({aibench_config.SYNTHETIC_ENV: " ON "})
    assert not aibench_config.synthetic_at_start({aibench_config.SYNTHETIC_ENV: "off"})
    with pytest.raises(settings.SettingError, match="must be 'on' or 'off'"):
        aibench_config.synthetic_at_start({aibench_config.SYNTHETIC_ENV: "maybe"})


def test_start_returns_at_once_and_the_thread_makes_the_set(env):
    seen = []
    real = aibench_store.add_reference_predictions

    def recorded(pool=None, progress=None, in_child=False):
        assert in_child  # the app's job draws in a child process
        return real(pool, lambda step, done, total: (seen.append((step, done, total)), progress(step, done, total)),
                    in_child=in_child)

    aibench_store.add_reference_predictions = recorded
    try:
        first = aibench_store.start_synthetic()
        assert first.state == "running"
        assert aibench_store.start_synthetic().state == "running"  # one job, not two
        assert aibench_store.wait_for_synthetic(120).state == "ready"
    finally:
        aibench_store.add_reference_predictions = real
    assert aibench_store.stored_datasets() == ["synthetic"]
    assert (env / "synthetic" / "predictions" / f"{aibench_store.REFERENCE_LABEL}.jsonl").is_file()
    assert ("Drawing the papers' figures", 2, 2) in seen
    images = [s for s in seen if s[0] == "Checking the images"]
    assert images and images[-1][1] == images[-1][2] > 2  # every image of both papers, counted
    assert aibench_store.start_synthetic().state == "ready"
    build.write_set(env.parent / "here", seed=aibench_store.SYNTHETIC_SEED, papers=2)  # drawn in this process
    for name in aibench_store.SYNTHETIC_FILES:
        assert (env / "synthetic" / name).read_bytes() == (env.parent / "here" / name).read_bytes()


def test_a_failure_is_kept_with_its_reason(env):
    env.parent.mkdir(exist_ok=True)
    env.write_text("not a folder")
    aibench_store.start_synthetic()
    status = aibench_store.wait_for_synthetic(60)
    assert status.state == "failed" and status.error
    assert aibench_store.start_synthetic().state == "failed"  # not retried in a loop


def test_first_start_of_the_app_makes_it_in_the_background(env):
    release = threading.Event()
    real = aibench_store.add_reference_predictions

    def held(pool=None, progress=None, in_child=False):
        progress("Drawing the papers' figures", 1, 2)
        assert release.wait(60)
        return real(pool, progress, in_child=in_child)

    aibench_store.add_reference_predictions = held
    try:
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()  # the first page is drawn while the job waits
        assert not at.exception, [e.value for e in at.exception]
        assert aibench_store.synthetic_status().state == "running"
        page = AppTest.from_file(str(RESULTS), default_timeout=60)
        page.session_state["user"] = RESEARCHER
        page.run()
        choose(page, "rs_benchmark", "aibench")
        assert not page.exception, [e.value for e in page.exception]
        (bar,) = page.get("progress")
        assert "Making the synthetic AIBench set (once, in the background): Drawing the papers' figures, 1 of 2" \
            in bar.proto.text
        assert not [s for s in page.selectbox if s.key == "rs_aib_data"]
    finally:
        release.set()
        aibench_store.add_reference_predictions = real
    assert aibench_store.wait_for_synthetic(120).state == "ready"
    page.run()
    assert not page.exception, [e.value for e in page.exception]
    assert choice(page, "rs_aib_data").value == "synthetic"
    assert not page.get("progress")


def test_turned_off_the_app_starts_nothing(env, monkeypatch):
    monkeypatch.setenv(aibench_config.SYNTHETIC_ENV, "off")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    assert not at.exception
    time.sleep(0.2)
    assert aibench_store.synthetic_status().state == "missing"
    assert not env.exists()


def test_the_view_shows_a_failure(env):
    env.parent.mkdir(exist_ok=True)
    env.write_text("not a folder")
    aibench_store.start_synthetic()
    aibench_store.wait_for_synthetic(60)
    page = AppTest.from_file(str(RESULTS), default_timeout=60)
    page.session_state["user"] = RESEARCHER
    page.run()
    choose(page, "rs_benchmark", "aibench")
    assert not page.exception
    (error,) = page.error
    assert error.value.startswith("The synthetic AIBench set could not be made: ")
