"""``aibench run`` against a stub OpenAI-compatible server on loopback: the image bytes and the
paper's prompt arrive, retries, resume, and a reply without a letter kept as such."""
from __future__ import annotations

import base64
import json
import threading
from collections import Counter

import pytest

from structext_core.aibench import dataset, predictions, scoring
from structext_core.aibench import run as aibench_run
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.model import SYSTEM_PROMPT, solver_prompt
from structext_core.aibench.synthetic import build
from structext_core.cli.main import main as cli_main
from structext_core.evaluation.runner import EndpointConfig, RetryPolicy
from tests.aibench.conftest import JsonEndpoint

FAST = RetryPolicy(max_retries=3, backoff_base=0.01, backoff_max=0.05)


@pytest.fixture(scope="module")
def stored(tmp_path_factory, pool):
    root = tmp_path_factory.mktemp("run")
    build.write_set(root / "syn", seed=11, papers=1)
    aibench_import.import_folder(root / "syn", root / "stored", pool=pool)
    return root / "stored"


class VLMStub:
    """A chat-completions server on 127.0.0.1 that checks every request is the paper's prompt with
    the stored image of one (image, question), and answers by rule: "B", or no letter at level 4;
    the first request about one item gets a 503 (retried)."""

    def __init__(self, folder):
        data = dataset.load_dataset(folder)
        self.expected = {}
        for (system, pid), record in data.images.items():
            png = (folder / record.path).read_bytes()
            for q in data.papers[pid].questions:
                self.expected[(png, solver_prompt(q))] = f"{pid}/{q.id}@{system}"
        self.seen: Counter = Counter()
        self.problems: list[str] = []
        self.lock = threading.Lock()
        self.endpoint = JsonEndpoint(self._reply)
        self.url = self.endpoint.url

    def _reply(self, path: str, body: dict) -> tuple[int, dict]:
        status, reply = self.answer(body)
        return status, {"choices": [{"message": {"content": reply}, "finish_reason": "stop"}]}

    def answer(self, body) -> tuple[int, str]:
        messages = body["messages"]
        try:
            assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT} and messages[1]["role"] == "user"
            image, text = messages[1]["content"]
            prefix, encoded = image["image_url"]["url"].split(",", 1)
            assert prefix == "data:image/png;base64" and text["type"] == "text"
            key = self.expected[(base64.b64decode(encoded), text["text"])]
        except (AssertionError, KeyError, ValueError, TypeError) as error:
            self.problems.append(f"not one (image, question) as the paper asks it: {error!r}")
            return 400, ""
        with self.lock:
            self.seen[key] += 1
            attempt = self.seen[key]
        if key.endswith("L1-1@Rewired Edge") and attempt == 1:
            return 503, ""
        return 200, "I cannot tell from this image." if "/L4-" in key else "B"

    def close(self):
        self.endpoint.close()


def test_run_sends_image_and_prompt_retries_and_resumes(stored, tmp_path):
    stub = VLMStub(stored)
    try:
        config = EndpointConfig(base_url=stub.url, model="stub-vl")
        out = tmp_path / "pred.jsonl"
        summary = aibench_run.run_aibench(stored, config, out, concurrency=2, policy=FAST)
        assert stub.problems == []
        total = len(stub.expected)
        assert (summary.total, summary.answered, summary.failures) == (total, total, [])
        assert set(stub.seen.values()) == {1, 2} and sum(stub.seen.values()) == total + 1
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        retried = [r for r in rows if r["sample_id"].endswith("L1-1@Rewired Edge")]
        assert len(retried) == 1 and retried[0]["attempts"] == 2
        data = dataset.load_dataset(stored)
        preds = predictions.read_predictions(out, data)
        unclear = [p for p in preds if p.letter is None]
        assert unclear and all(p.question_id.startswith("L4-") for p in unclear)
        assert all(p.reply == "I cannot tell from this image." for p in unclear)
        (score,) = [s for s in scoring.score_systems(data, preds) if s.system == "Original Image"]
        assert score.levels[4].unclear == score.levels[4].n and score.levels[4].accuracy == 0.0
        # resume: nothing is asked again; a cut file asks only what is missing
        again = aibench_run.run_aibench(stored, config, out, concurrency=2, policy=FAST)
        assert (again.skipped, again.answered) == (total, 0) and sum(stub.seen.values()) == total + 1
        lines = out.read_text().splitlines(keepends=True)
        out.write_text("".join(lines[:-3]) + lines[-3][:10])  # the last line cut short by a crash
        resumed = aibench_run.run_aibench(stored, config, out, concurrency=2, policy=FAST)
        assert (resumed.skipped, resumed.answered) == (total - 3, 3)
        assert len(predictions.read_predictions(out, data)) == total
    finally:
        stub.close()


def test_cli_run_against_the_stub(stored, tmp_path, capsys):
    stub = VLMStub(stored)
    try:
        out = tmp_path / "p.jsonl"
        status = cli_main(["aibench", "run", "--data", str(stored), "--base-url", stub.url, "--model", "m",
                           "--out", str(out), "--systems", "Blank Image", "--backoff", "0.01"])
        captured = capsys.readouterr()
        assert status == 0, captured.err
        n = len(stub.expected) // len(build.SYSTEMS)
        assert f"answered {n}, skipped 0 already answered, failed 0" in captured.out
        assert {json.loads(line)["system"] for line in out.read_text().splitlines()} == {"Blank Image"}
        assert cli_main(["aibench", "run", "--data", str(stored), "--base-url", "ftp://x", "--model", "m",
                         "--out", str(out)]) == 2
    finally:
        stub.close()
