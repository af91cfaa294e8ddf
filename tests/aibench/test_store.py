"""The app's AIBench store: the synthetic set on demand, predictions checked then stored."""
from __future__ import annotations

import json

import pytest

from structext_core.aibench import config as aibench_config
from structext_core.aibench import dataset, scoring
from structext_core.aibench import store as aibench_store


@pytest.fixture
def store(tmp_path, monkeypatch, pool):
    monkeypatch.setenv(aibench_config.DIR_ENV, str(tmp_path / "aibench"))
    monkeypatch.setattr(aibench_store, "SYNTHETIC_PAPERS", 2)
    return tmp_path / "aibench"


def test_synthetic_set_is_made_once_and_kept(store, pool):
    assert aibench_store.stored_datasets() == []
    path = aibench_store.ensure_synthetic(pool)
    assert path == store / "synthetic" and aibench_store.stored_datasets() == ["synthetic"]
    data = dataset.load_dataset(path)
    assert len(data.papers) == 2 and len(data.systems) == 6
    assert (path / "truth.jsonl").is_file() and (path / "expected.json").is_file()
    marker = (path / dataset.STORED_MARKER).stat().st_mtime_ns
    assert aibench_store.ensure_synthetic(pool) == path
    assert (path / dataset.STORED_MARKER).stat().st_mtime_ns == marker  # not made again
    assert [p.name for p in store.iterdir()] == ["synthetic"]  # no working folder left behind


def test_predictions_are_checked_then_stored(store, pool):
    path = aibench_store.ensure_synthetic(pool)
    truth = [json.loads(line) for line in (path / "truth.jsonl").read_text().splitlines()]
    rows = [{"paper_id": r["paper_id"], "question_id": r["question_id"], "system": r["system"], "solver": "reader",
             "prediction": r["truth"]} for r in truth]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    assert aibench_store.add_predictions("synthetic", text, "reader") == len(rows)
    with pytest.raises(dataset.ImportFailed, match="a predictions file of that name is stored"):
        aibench_store.add_predictions("synthetic", text, "reader")
    with pytest.raises(dataset.ImportFailed, match="already stored, e.g."):
        aibench_store.add_predictions("synthetic", text, "again")
    with pytest.raises(dataset.ImportFailed, match="line 1.system: 'Nobody' has no images"):
        aibench_store.add_predictions("synthetic", json.dumps({**rows[0], "system": "Nobody"}), "bad")
    assert sorted(p.name for p in (path / "predictions").iterdir()) == ["reader.jsonl"]
    data = dataset.load_dataset(path)
    scores = scoring.score_systems(data, aibench_store.load_predictions("synthetic"))
    expected = json.loads((path / "expected.json").read_text())["perfect_solver"]
    assert len(scores) == len(expected)
    for s in scores:
        assert {str(k): v.accuracy for k, v in s.levels.items()} == pytest.approx(expected[s.system])
    with pytest.raises(ValueError, match="cannot name a data set"):
        aibench_store.dataset_path("../x")


def test_cli_add_predictions(store, pool, tmp_path, capsys):
    from structext_core.cli.main import main
    path = aibench_store.ensure_synthetic(pool)
    truth = [json.loads(line) for line in (path / "truth.jsonl").read_text().splitlines()]
    file = tmp_path / "mine.jsonl"
    file.write_text("".join(json.dumps({"paper_id": r["paper_id"], "question_id": r["question_id"],
                                        "system": r["system"], "solver": "s", "prediction": "A"}) + "\n"
                            for r in truth[:5]))
    assert main(["aibench", "add-predictions", str(file), "--data", "synthetic"]) == 0
    assert "stored 5 predictions as 'mine' with the data set 'synthetic'" in capsys.readouterr().out
    assert main(["aibench", "add-predictions", str(file), "--data", "synthetic"]) == 2
    assert "a predictions file of that name is stored" in capsys.readouterr().err
    assert main(["aibench", "add-predictions", str(file), "--data", "nothing-here"]) == 2
