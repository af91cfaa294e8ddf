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


def test_people_and_a_model_scored_by_match_share_one_column_and_its_own_scores_stand_beside_ours(tmp_path,
                                                                                                  monkeypatch):
    """A short-answer set scored by Inspect's match(): the model's log (scored by Inspect) and the
    people's log carry the scorer name ``match``, so samples_df puts both in ``score_match``; Results
    shows the log's own score beside our re-score, and names the items where they differ (a second
    log scored by includes(), a rule the set does not use)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.analysis import samples_df
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    from structext_core.evaluation import item_sets
    from structext_core.studio import accounts, storage, study
    from structext_core.views import benchmark_results
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    folder = item_sets.data_dir("labset")
    folder.mkdir(parents=True)
    records = [{"id": f"s{n}", "input": f"Name city {n}.", "target": f"City {n}",
                "metadata": {"subject": "maps", "answer_rule": "match"}} for n in range(6)]
    path = folder / "short.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    replies = ["It is City 0", "city 1", "City 2 maybe", "I think City 3", "no idea", "City 5."]
    logs = {}
    for name, scorer in (("match", match()), ("includes", includes())):
        outputs = []
        for text in replies:
            output = ModelOutput.from_content(model="mockllm/model", content=text)
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            outputs.append(output)
        model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
        (log,) = inspect_eval(Task(dataset=json_dataset(str(path)), solver=generate(), scorer=scorer), model=model,
                              log_dir=str(tmp_path / name), display="none", max_samples=1)
        assert log.status == "success", log.error
        logs[name] = log.location
    items = load_set(path)
    # our re-score equals the log's own where the rules agree; the includes() log differs on named items
    kept = item_sets.predictions_dir("labset", "short.jsonl")
    kept.mkdir(parents=True)
    for name, location in logs.items():
        (kept / f"{name}.eval").write_bytes(open(location, "rb").read())
    models = benchmark_results.model_rows("labset", "short.jsonl", items)
    assert models.files == ["includes.eval", "match.eval"] and not models.problems
    beside = benchmark_results.logged_beside("labset", models, items).set_index("model")
    assert list(beside.index) == ["mockllm/model"]  # one model, two logs: their items averaged
    ours = [1.0 if read else 0.0 for read in (True, True, False, True, False, True)]  # match: the end of the reply
    assert beside.loc["mockllm/model", "rescored"] == pytest.approx(100 * sum(ours) / 6, abs=0.1)
    assert beside.loc["mockllm/model", "differ"] >= 1 and "s2" in beside.loc["mockllm/model", "items that differ"]
    one = benchmark_results.Models(models.rows, logged=models.logged.iloc[:0])
    assert benchmark_results.logged_beside("labset", one, items).empty
    # the people's log: scorer "match", one column with the model's
    db = storage.open_db(tmp_path / "db.sqlite")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    from structext_core.labset.study import create_study
    study_id, _ = create_study(db, name="short pilot", source="short.jsonl", items=items, n_items=6,
                               annotator_ids=[ann["id"]], rule_text="No help.")
    study.accept_rule(db, study_id, ann["id"])
    while (view := study.open_question(db, study_id, ann["id"])) is not None:
        study.submit_answer(db, ann["id"], view.assignment_id, "City " + view.question.split()[-1].rstrip("."))
    people = study.write_inspect_log(db, study_id, tmp_path / "people.eval")
    frame = samples_df([str(people), logs["match"]], quiet=True)
    assert "score_match" in frame.columns and frame["score_match"].notna().sum() == 12


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
