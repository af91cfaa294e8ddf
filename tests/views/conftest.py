"""The Results data shared by the view and chart tests: one real dataset per test package."""

import pytest

from structext_core.structext_eval import results_frame
from tests.results_data import build_dataset


@pytest.fixture(scope="package")
def dataset(tmp_path_factory):
    return build_dataset(tmp_path_factory.mktemp("results"))


@pytest.fixture
def frame(dataset):
    return results_frame.load_results(dataset["db"])
