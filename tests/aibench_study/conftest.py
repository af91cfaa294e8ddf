"""The pairwise tests' stored synthetic AIBench set (3 papers, 6 systems) and accounts, reused."""
from tests.pairwise.conftest import aibench_root, world  # noqa: F401
