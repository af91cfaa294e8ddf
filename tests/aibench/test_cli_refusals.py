"""Issue 31's bad inputs to the AIBench commands: each is a clear message and exit code 2, with
nothing written; and one rule for ids (the authors' integer ids) in data and predictions."""
from __future__ import annotations

import json

import pytest

from structext_core.aibench import dataset
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.synthetic import build
from structext_core.cli.main import main as cli_main
from structext_core.evaluation import runner
from tests.aibench.conftest import JsonEndpoint, paper_json, write_folder


@pytest.fixture(scope="module")
def stored(tmp_path_factory, pool):
    root = tmp_path_factory.mktemp("refusals")
    build.write_set(root / "syn", seed=5, papers=1)
    aibench_import.import_folder(root / "syn", root / "stored", pool=pool)
    return root / "stored"


def one_prediction(stored, **overrides) -> dict:
    data = dataset.load_dataset(stored)
    paper = next(iter(data.papers.values()))
    row = {"paper_id": paper.id, "question_id": paper.questions[0].id, "system": data.systems[0],
           "solver": "s", "prediction": "B"}
    return {**row, **overrides}


def test_export_task_refuses_a_folder_it_did_not_write(stored, tmp_path, capsys):
    """820246e wrote three files into any existing folder and overwrote a README.txt there."""
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "README.txt").write_text("mine, not yours")
    args = ["aibench", "export-task", "--harness", "inspect", "--data", str(stored), "--out", str(folder)]
    assert cli_main(args) == 2
    assert "is not empty (1 entries: README.txt); choose a new or empty folder, or add --force" in capsys.readouterr().err
    assert cli_main([*args, "--force"]) == 2
    assert "README.txt exists and was not written by an export" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["README.txt"]
    assert (folder / "README.txt").read_text() == "mine, not yours"

    ours = tmp_path / "ours"
    assert cli_main(args[:-1] + [str(ours)]) == 0
    written = sorted(p.name for p in ours.iterdir())
    assert cli_main(args[:-1] + [str(ours)]) == 2  # not empty now
    assert cli_main(args[:-1] + [str(ours), "--force"]) == 0  # our own files, unchanged: replaced
    assert sorted(p.name for p in ours.iterdir()) == written
    (ours / "README.txt").write_text("edited by hand")
    capsys.readouterr()
    assert cli_main(args[:-1] + [str(ours), "--force"]) == 2
    assert "was changed since" in capsys.readouterr().err
    assert (ours / "README.txt").read_text() == "edited by hand"


@pytest.mark.parametrize("text, said", [
    ("", "holds no predictions"),
    ("\n\n", "holds no predictions"),
    ('{"paper_id": "x", "question_id": "q", "system": "s", "solver": "m", "prediction": "B\\ud800"}\n',
     "line 1: the line holds a lone surrogate \\ud800"),
])
def test_score_refuses_bad_prediction_files(stored, tmp_path, capsys, text, said):
    """820246e: a lone surrogate gave a pyarrow traceback; an empty file an empty table and exit 0."""
    path = tmp_path / "p.jsonl"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    assert cli_main(["aibench", "score", str(path), "--data", str(stored)]) == 2
    captured = capsys.readouterr()
    assert said in captured.err and "Traceback" not in captured.err and captured.out == ""


def test_a_lone_surrogate_in_a_real_prediction_is_named(stored, tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(one_prediction(stored, prediction="B\ud800")) + "\n")
    assert cli_main(["aibench", "score", str(path), "--data", str(stored)]) == 2
    assert "p.jsonl: line 1: the line holds a lone surrogate \\ud800" in capsys.readouterr().err


def test_integer_ids_are_read_as_the_import_reads_them(tmp_path, pool):
    """The import takes the authors' integer ids; 820246e refused them in predictions."""
    from structext_core.aibench.predictions import parse_predictions
    paper = paper_json("7")
    paper["questions"][0]["id"] = 1
    data = aibench_import.import_folder(write_folder(tmp_path / "in", [paper]), tmp_path / "stored", pool=pool)
    row = {"paper_id": "7", "question_id": "1", "system": "Sys A", "solver": "s", "prediction": "B"}
    as_text = parse_predictions(json.dumps(row), data)
    assert parse_predictions(json.dumps({**row, "paper_id": 7, "question_id": 1}), data) == as_text
    assert as_text[0].letter == "B"


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "inf", "soon"])
def test_run_refuses_a_timeout_that_is_no_time(stored, tmp_path, capsys, timeout):
    with pytest.raises(SystemExit) as stopped:
        cli_main(["aibench", "run", "--data", str(stored), "--base-url", "http://127.0.0.1:9", "--model", "m",
                  "--out", str(tmp_path / "p.jsonl"), "--timeout", timeout])
    assert stopped.value.code == 2
    assert "argument --timeout: expected" in capsys.readouterr().err
    assert not (tmp_path / "p.jsonl").exists()


def test_a_huge_reply_is_cut_and_marked(monkeypatch):
    """820246e kept replies of any size (34 replies of 20 MB: a 680 MB file)."""
    reply = "B" + " and more" * 100_000  # 900,001 characters
    server = JsonEndpoint(lambda path, body: (200, {"choices": [{"message": {"content": reply},
                                                                 "finish_reason": "length"}]}))
    try:
        config = runner.EndpointConfig(base_url=server.url, model="m", timeout=10)
        text = runner.chat_completion(config, "q").text
        assert text.startswith(reply[:runner.MAX_REPLY_CHARS])
        assert len(text) < runner.MAX_REPLY_CHARS + 100
        assert text.endswith(f"[reply cut: {len(reply):,} characters in all, the first 65,536 kept]")
        monkeypatch.setattr(runner, "MAX_PAYLOAD_BYTES", 1000)
        with pytest.raises(runner.EndpointError, match="over 1,000 bytes: not read") as refused:
            runner.chat_completion(config, "q")
        assert not refused.value.retryable
    finally:
        server.close()
