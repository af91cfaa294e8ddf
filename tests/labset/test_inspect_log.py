"""A model's answers to the lab's set in Inspect AI's own .eval log: Inspect runs the set (read by its
json_dataset) with its mock model, and the log is read back by the shared reader and scored by the set's rule."""
from __future__ import annotations

import json

import pytest

from structext_core.evaluation.item_sets import read_inspect_log
from structext_core.evaluation.matching import ResultsImportError
from structext_core.labset.dataset import load_set
from tests.labset.conftest import samples, write_set

#: Two multiple-choice questions, one on an image, and two short answers; the mock model's replies, in order.
PICKED = (0, 1, 40, 50, 51)
REPLIES = ("A", "B or C", "The answer is A", "city 0.", "Lyon")


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate
    folder = tmp_path_factory.mktemp("inspect")
    path = write_set(folder, [samples()[n] for n in PICKED])
    outputs = []
    for text in REPLIES:
        output = ModelOutput.from_content(model="mockllm/model", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        outputs.append(output)
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    logs = inspect_eval(Task(dataset=json_dataset(str(path)), solver=generate()), model=model,
                        log_dir=str(folder / "logs"), display="none", max_samples=1)
    assert logs[0].status == "success", logs[0].error
    return path, logs[0].location


def test_the_eval_log_is_read_and_scored_by_the_sets_rule(inspect_log):
    path, log = inspect_log
    items = load_set(path)
    rows = read_inspect_log("labset", log, items)
    own_id = {i["id"]: i["source_id"] for i in items}  # rows name items by content id; the set's own id beside it
    scores = {own_id[r["id"]]: r["score"] for r in rows}
    assert scores == {"mc00": 1.0, "mc01": 0.0, "mc40": 1.0, "0": 1.0, "1": 0.0}  # "B or C": two letters, wrong
    assert {r["model"] for r in rows} == {"mockllm/model"} and {r["epoch"] for r in rows} == {1}


def test_a_log_of_another_set_is_refused_naming_its_samples(inspect_log, tmp_path):
    _, log = inspect_log
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "z", "input": "Q?", "target": "x"}) + "\n")
    with pytest.raises(ResultsImportError) as error:
        read_inspect_log("labset", log, load_set(other))
    assert "5 problem(s)" in str(error.value) and "'mc00' is no item of the set" in str(error.value)


def test_an_uploaded_eval_log_is_checked_then_stored_beside_the_set(inspect_log, tmp_path, monkeypatch):
    from pathlib import Path

    from structext_core.evaluation import item_sets
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    write_set(folder, samples())
    data = Path(inspect_log[1]).read_bytes()
    path = item_sets.store_predictions("labset", "set.jsonl", "mock-run.eval", data)
    assert path == item_sets.predictions_dir("labset", "set.jsonl") / "mock-run.eval" and path.read_bytes() == data
    # a log of another set: refused naming its samples, nothing written
    other = tmp_path / "suites" / "labsets" / "other.jsonl"
    other.write_text(json.dumps({"id": "z", "input": "Q?", "target": "x"}) + "\n")
    with pytest.raises(ValueError, match="mock-run.eval: not stored, 5 problem"):
        item_sets.store_predictions("labset", "other.jsonl", "mock-run.eval", data)
    assert not item_sets.predictions_dir("labset", "other.jsonl").exists()
