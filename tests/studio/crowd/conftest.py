"""Fixtures of the crowd tests: the study tests' own (an in-memory database, three annotators and an
admin, the grid of samples, the clock's defaults whatever the shell says), not written twice."""

from tests.studio.study.conftest import admin, annotators, db, default_clock, samples  # noqa: F401
