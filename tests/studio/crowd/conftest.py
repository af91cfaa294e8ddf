"""Fixtures of the crowd tests: an in-memory database, three annotators and an admin, and the
clock's defaults whatever the shell says."""

import pytest

from structext_core.studio import accounts, storage, study


@pytest.fixture
def db():
    return storage.open_db(":memory:")


@pytest.fixture
def annotators(db):
    return [accounts.create_user(db, f"ann{i}", "password-123", "annotator") for i in (1, 2, 3)]


@pytest.fixture
def admin(db):
    return accounts.create_user(db, "lead", "password-123", "admin")


@pytest.fixture(autouse=True)
def default_clock(monkeypatch):
    monkeypatch.delenv(study.HEARTBEAT_ENV, raising=False)
    monkeypatch.delenv(study.IDLE_PAUSE_ENV, raising=False)
