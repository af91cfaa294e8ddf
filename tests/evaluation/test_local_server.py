"""Inspect AI and lm-eval against a local OpenAI-compatible server, as the README says to run them.

A stub server (``openai_stub.py``: http.server on 127.0.0.1 in a thread, answering as vLLM or
llama.cpp's server would) stands in for the model; the real ``inspect`` and ``lm_eval`` run an
exported task on four samples with the commands of the task's README.txt, and ``score`` reads
their logs back. Each run takes 10 to 20 s (the harnesses' start-up) and is bounded at 120 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from structext_core.cli.main import main as cli
from structext_core.structext_eval import samples as samples_mod
from structext_core.structext_eval import suites
from tests.evaluation.openai_stub import StubServer

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")
pytest.importorskip("openai")  # Inspect's OpenAI-compatible providers need it (requirements-dev.txt)

BIN = Path(sys.executable).parent
TASKS = (1, 8, 16, 27)  # CSV, JSON, XML, Org
#: lm-eval's command line with only the tasks of --include_path.
OWN_TASKS_ONLY = ("import functools, sys, lm_eval.tasks; from lm_eval.__main__ import cli_evaluate; "
                  "lm_eval.tasks.TaskManager = functools.partial(lm_eval.tasks.TaskManager, include_defaults=False); "
                  "sys.argv[0] = 'lm_eval'; cli_evaluate()")


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Path, list[dict]]:
    rows = [s for task in TASKS for s in suites.generate_cell(task, 1, 1, 1, seed=4, suite="custom")]
    path = tmp_path_factory.mktemp("local-suite") / "suite.jsonl"
    samples_mod.write_jsonl(path, rows)
    return path, rows


@pytest.fixture
def stub(suite):
    server = StubServer(suite[1], model="local-model")
    yield server
    server.close()


def child_env(tmp: Path, **extra: str) -> dict:
    """No hub, caches in ``tmp``, a dead proxy for everything but 127.0.0.1: the only server a
    run can reach is the stub."""
    env = dict(os.environ)
    dead = "http://127.0.0.1:9"
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "HF_HOME": str(tmp / "hf"), "XDG_DATA_HOME": str(tmp / "xdg"), "INSPECT_DISPLAY": "none",
                "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "http_proxy": dead, "https_proxy": dead,
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", "PYTHONPATH": ""})
    env.update(extra)
    return env


def readme_command(task_dir: Path, marker: str) -> list[str]:
    """The README.txt command after the line holding ``marker``, as argv (continuations joined)."""
    text = (task_dir / "README.txt").read_text(encoding="utf-8")
    block = text[text.index(marker):].split("\n\n", 2)[1]
    return block.replace("\\\n", " ").split()


def export(kind: str, suite_path: Path, out: Path) -> Path:
    assert cli(["export-task", "--harness", kind, "--suite", str(suite_path), "--setting", "naive",
                "--out", str(out)]) == 0
    readme = (out / "README.txt").read_text(encoding="utf-8")
    assert "SUITE.jsonl" not in readme and f"--samples {suite_path.resolve()}" in readme
    return out


def score_log(log: Path, suite_path: Path, out: Path) -> list[dict]:
    assert cli(["score", str(log), "--samples", str(suite_path), "--out", str(out), "--n-boot", "10"]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def check_scored(scored: list[dict], rows: list[dict], model: str) -> None:
    answers = {s["id"]: s["answer"] for s in rows}
    assert {r["sample_id"] for r in scored} == set(answers)
    for row in scored:
        assert row["model"] == model and row["response"] == "### Answer:\n" + answers[row["sample_id"]]
        assert row["score"] == 1.0


def test_inspect_against_a_local_server(suite, stub, tmp_path):
    suite_path, rows = suite
    task_dir = export("inspect", suite_path, tmp_path / "inspect-task")
    command = readme_command(task_dir, "A local OpenAI-compatible server")
    env_words = [w for w in command if "=" in w and w.split("=")[0].isupper()]
    argv = [w for w in command if w not in env_words]
    assert env_words == ["LOCAL_BASE_URL=http://127.0.0.1:PORT/v1", "LOCAL_API_KEY=none"]
    assert argv[1:4] == ["eval", "structext_task.py", "--model"] and argv[4] == "openai-api/local/NAME"
    argv = [str(BIN / "inspect"), *argv[1:4], "openai-api/local/local-model", *argv[5:], "--limit", "4"]
    done = subprocess.run(argv, cwd=task_dir, env=child_env(tmp_path, LOCAL_BASE_URL=stub.base_url,
                                                              LOCAL_API_KEY="none"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(stub.requests) == 4 and {r["path"] for r in stub.requests} == {"/v1/chat/completions"}
    assert {r["body"]["model"] for r in stub.requests} == {"local-model"}
    log = next((task_dir / "logs").glob("*.eval"))
    check_scored(score_log(log, suite_path, tmp_path / "scored.jsonl"), rows, "openai-api/local/local-model")


def test_lm_eval_against_a_local_server(suite, stub, tmp_path):
    suite_path, rows = suite
    task_dir = export("lm-eval", suite_path, tmp_path / "lm-eval-task")
    argv = readme_command(task_dir, "A local OpenAI-compatible server")
    model_args = next(w for w in argv if w.startswith("model=NAME,"))
    assert model_args == "model=NAME,base_url=http://127.0.0.1:PORT/v1/chat/completions"
    argv = [str(BIN / "lm_eval"), *[
        f"model=local-model,base_url={stub.base_url}/chat/completions" if w == model_args else w
        for w in argv[1:]], "--limit", "4"]
    done = subprocess.run(argv, cwd=task_dir, env=child_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(stub.requests) == 4 and {r["path"] for r in stub.requests} == {"/v1/chat/completions"}
    log = next((task_dir / "out").rglob("samples_*.jsonl"))
    check_scored(score_log(log, suite_path, tmp_path / "scored.jsonl"), rows, "local-model")


def test_lm_eval_with_the_v1_address_reaches_no_chat_endpoint(suite, stub, tmp_path):
    """Why the README insists on the full address: lm-eval posts to base_url as given."""
    suite_path, _ = suite
    task_dir = export("lm-eval", suite_path, tmp_path / "lm-eval-task")
    # lm-eval's command line, without indexing its 26,000 built-in task files (13 s): where the
    # request goes does not depend on them.
    argv = [sys.executable, "-c", OWN_TASKS_ONLY, "run", "--include_path", ".", "--tasks", "structext_custom_naive",
            "--model", "local-chat-completions",
            "--model_args", f"model=local-model,base_url={stub.base_url},max_retries=1",
            "--apply_chat_template", "--limit", "1", "--output_path", "out", "--log_samples"]
    subprocess.run(argv, cwd=task_dir, env=child_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert stub.requests and {r["path"] for r in stub.requests} == {"/v1"}
    assert not list((task_dir).rglob("samples_*.jsonl")) or all(
        '"### Answer:' not in p.read_text(encoding="utf-8") for p in task_dir.rglob("samples_*.jsonl"))
