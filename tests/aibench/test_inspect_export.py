"""``aibench export-task --harness inspect``, run for real (offline, Inspect's mock model) on a
one-paper synthetic set; ``aibench score`` reads its log, and the score Inspect gave each sample
inside the harness equals ours on the same replies."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from structext_core.aibench import dataset as ds
from structext_core.aibench import harness as aibench_harness
from structext_core.aibench import predictions, scoring
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.synthetic import build
from structext_core.cli import main as cli

pytest.importorskip("inspect_ai")


def run_child(args: list, cwd: Path, tmp: Path, timeout: int) -> None:
    """Run Inspect in a child process offline: every hub off, a proxy that refuses every
    connection (as tests/evaluation/test_harness.py does), caches in ``tmp``."""
    env = dict(os.environ)
    dead = "http://127.0.0.1:9"
    env.update({"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp / "hf"), "XDG_DATA_HOME": str(tmp / "xdg"),
                "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "http_proxy": dead, "https_proxy": dead,
                "NO_PROXY": "", "no_proxy": "", "INSPECT_DISPLAY": "none", "PYTHONPATH": ""})
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}"

SYSTEMS = ["Original Image", "Blank Image"]

RUN = '''
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def outputs():
    made = []
    for text in json.load(open(sys.argv[1], encoding="utf-8")):
        output = ModelOutput.from_content(model="mockllm/model", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        made.append(output)
    return made

for log_format in sys.argv[2:]:
    model = get_model("mockllm/model", custom_outputs=outputs(), memoize=False)
    logs = inspect_eval("aibench_task.py", model=model, log_dir="logs-" + log_format, log_format=log_format,
                        display="none", max_samples=1)
    assert logs[0].status == "success", logs[0].error
'''


def reply(answer: str, n_options: int, number: int) -> str:
    """Replies of every kind: the key, a wrong letter, the key in a sentence, no letter, empty."""
    wrong = next(letter for letter in "ABCD"[:n_options] if letter != answer)
    return [answer, wrong, f"The answer is ({answer}).", "I cannot tell from the picture.", "", f"{wrong}. no"][
        number % 6]


@pytest.fixture(scope="module")
def run(tmp_path_factory, pool):
    tmp = tmp_path_factory.mktemp("aibench-inspect")
    build.write_set(tmp / "set", seed=3, papers=1)
    aibench_import.import_folder(tmp / "set", tmp / "stored", pool=pool)
    task = tmp / "task"
    assert cli.main(["aibench", "export-task", "--harness", "inspect", "--data", str(tmp / "stored"),
                     "--out", str(task), "--systems", *SYSTEMS]) == 0
    records = [json.loads(line) for line in (task / "dataset.jsonl").read_text().splitlines()]
    texts = [reply(r["answer"], r["n_options"], i) for i, r in enumerate(records)]
    (tmp / "outputs.json").write_text(json.dumps(texts))
    (tmp / "run.py").write_text(RUN)
    run_child([sys.executable, tmp / "run.py", tmp / "outputs.json", "eval", "json"], task, tmp, timeout=240)
    logs = {fmt: next((task / f"logs-{fmt}").glob(f"*.{fmt}")) for fmt in ("eval", "json")}
    return tmp, records, texts, logs


def test_the_task_holds_every_image_and_question_with_the_papers_prompt(run):
    tmp, records, _, _ = run
    data = ds.load_dataset(tmp / "stored")
    (paper,) = data.papers.values()
    assert len(records) == len(SYSTEMS) * len(paper.questions)
    for r in records:
        assert Path(r["image"]).is_file() and r["system_prompt"] == "You are a helpful assistant."
        assert r["prompt"].endswith("Based on the given image only, answer with the option's letter from the "
                                    "given choices directly.")


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_scores_inside_inspect_equal_ours_on_its_log(run, log_format):
    tmp, records, texts, logs = run
    data = ds.load_dataset(tmp / "stored")
    preds, inside = aibench_harness.read_inspect_log(logs[log_format], data)
    assert len(preds) == len(records) and len(inside) == len(records)
    replies = {(r["system"], r["paper_id"], r["question_id"]): t for r, t in zip(records, texts)}
    answers = {(r["paper_id"], r["question_id"]): r["answer"] for r in records}
    ours = {}
    for p in preds:
        assert p.solver == "mockllm/model" and p.reply == replies[(p.system, p.paper_id, p.question_id)]
        ours[p.key] = 1.0 if p.letter == answers[(p.paper_id, p.question_id)] else 0.0
    assert inside == ours
    assert 0 < sum(inside.values()) < len(inside)  # right and wrong both present
    # Table 3 from the log is Table 3 from the same replies as a predictions file
    as_file = predictions.parse_predictions(predictions.to_jsonl(preds), data)
    assert [s.levels for s in scoring.score_systems(data, preds)] == \
        [s.levels for s in scoring.score_systems(data, as_file)]


def test_score_reads_the_log_and_says_the_harness_agrees(run, capsys):
    tmp, _, _, logs = run
    capsys.readouterr()
    assert cli.main(["aibench", "score", str(logs["eval"]), "--data", str(tmp / "stored")]) == 0
    out = capsys.readouterr().out
    assert "scored inside the harness, 0 scored differently from ours" in out
    assert "Blank Image" in out and "mockllm/model" in out


def test_a_log_of_another_task_is_refused_naming_the_sample(run, tmp_path, capsys):
    import zipfile
    tmp, _, _, logs = run
    changed = tmp_path / "other.eval"
    with zipfile.ZipFile(logs["eval"]) as source, zipfile.ZipFile(changed, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.startswith("samples/"):
                sample = json.loads(data)
                sample["metadata"] = {}
                data = json.dumps(sample).encode()
            out.writestr(info.filename, data)
    assert cli.main(["aibench", "score", str(changed), "--data", str(tmp / "stored")]) == 2
    assert "not a log of an exported AIBench task" in capsys.readouterr().err


def test_export_refuses_an_unknown_system_and_writes_nothing(run, tmp_path, capsys):
    tmp, _, _, _ = run
    assert cli.main(["aibench", "export-task", "--harness", "inspect", "--data", str(tmp / "stored"),
                     "--out", str(tmp_path / "t"), "--systems", "Nope"]) == 2
    assert "no images of 'Nope'" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()
