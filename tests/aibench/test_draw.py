"""``aibench draw`` against a stub image endpoint of ours that checks every request (the paper's
prompt to the character, the size asked, the model): a new system's figures stored as the import
stores images, a too-small and a corrupt reply recorded and not stored, a killed run resumed with
no figure asked twice, then the new system scored end to end by ``aibench run`` and ``score``."""
from __future__ import annotations

import base64
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from structext_core.aibench import dataset
from structext_core.aibench import draw as aibench_draw
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.synthetic import build
from structext_core.cli.main import main as cli_main
from tests.aibench.conftest import JsonEndpoint
from tests.aibench.test_run import VLMStub

ROOT = Path(__file__).resolve().parents[2]
MODEL = "stub-painter"


class ImageStub:
    """``POST /v1/images/generations`` on 127.0.0.1. Each request must be the paper's prompt of one
    paper of the data set (``kind``), for the model, at a size of at least 1024 x 1024, as base64; it
    answers with a figure of that paper: 1024 x 1024 or 1280 x 1024, except a 512 x 512 one for the
    paper ``small``, bytes that are no image for ``corrupt``, a 503 the first time for ``flaky``, and
    it holds the request for ``hold`` until :meth:`release` (to kill a run in the middle)."""

    def __init__(self, data: dataset.Dataset, kind: str, small: str, corrupt: str, flaky: str, hold: str | None = None):
        self.expected = {aibench_draw.figure_prompt(paper, kind): pid for pid, paper in data.papers.items()}
        self.small, self.corrupt, self.flaky, self.hold = small, corrupt, flaky, hold
        self.asked: Counter = Counter()
        self.problems: list[str] = []
        self.released = threading.Event()
        self.endpoint = JsonEndpoint(self.answer)
        self.url = self.endpoint.url

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        paper = self.expected.get(body.get("prompt"))
        width, height = (int(v) for v in str(body.get("size", "0x0")).split("x"))
        for ok, problem in ((path == "/v1/images/generations", f"path {path}"), (paper is not None, "prompt"),
                            (body.get("model") == MODEL, "model"), (width >= 1024 and height >= 1024, "size"),
                            (body.get("response_format") == "b64_json", "format"), (body.get("n") == 1, "n")):
            if not ok:
                self.problems.append(f"{problem}: {str(body)[:200]}")
                return 400, {"error": problem}
        self.asked[paper] += 1
        if paper == self.flaky and self.asked[paper] == 1:
            return 503, {"error": "busy"}
        if paper == self.hold:
            self.released.wait(60)
        if paper == self.corrupt:
            return 200, {"data": [{"b64_json": base64.b64encode(b"\x89PNG\r\n\x1a\n not really").decode()}]}
        side = (512, 512) if paper == self.small else (1280, 1024) if len(paper) % 2 else (1024, 1024)
        out = io.BytesIO()
        Image.new("RGB", side, (20 * (len(self.asked) % 10), 90, 160)).save(out, "PNG")
        return 200, {"data": [{"b64_json": base64.b64encode(out.getvalue()).decode()}]}

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.release()
        self.endpoint.close()


@pytest.fixture(scope="module")
def stored_once(tmp_path_factory, pool) -> Path:
    """The synthetic set of 5 papers, imported once for the module (30 figures drawn and checked)."""
    root = tmp_path_factory.mktemp("draw-set")
    build.write_set(root / "syn", seed=21, papers=5)
    aibench_import.import_folder(root / "syn", root / "stored", pool=pool)
    return root / "stored"


@pytest.fixture
def stored(tmp_path, stored_once) -> Path:
    """A private copy of that stored set: each test draws into a data set of its own."""
    shutil.copytree(stored_once, tmp_path / "stored")
    return tmp_path / "stored"


def draw_args(stored, url, *extra):
    return ["aibench", "draw", "--data", str(stored), "--base-url", url, "--model", MODEL, "--prompt", "open",
            "--backoff", "0.01", *extra]


def test_a_new_system_is_drawn_killed_resumed_and_scored(stored, tmp_path, capsys):
    data = dataset.load_dataset(stored)
    papers = sorted(data.papers)
    small, corrupt, flaky, hold = papers[1], papers[2], papers[0], papers[3]
    stub = ImageStub(data, "open", small, corrupt, flaky, hold=hold)
    try:
        # killed while the fourth paper's figure is being drawn
        process = subprocess.Popen([sys.executable, "-m", "structext_core", *draw_args(stored, stub.url)], cwd=ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 60
        while stub.asked[hold] == 0 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert stub.asked[hold] == 1, process.communicate(timeout=5)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        stub.release()
        first = dataset.load_dataset(stored)
        assert {pid for s, pid in first.images if s == MODEL} == {flaky}  # stored before the kill

        status = cli_main(draw_args(stored, stub.url))
        captured = capsys.readouterr()
        assert status == 1  # two papers have no figure: the too-small and the corrupt one
        assert f"too small: {small}: 512 x 512 pixels, fewer than the paper's floor of 1024 x 1024" in captured.err
        assert f"undecodable: {corrupt}: " in captured.err
        assert stub.problems == []
        assert stub.asked[flaky] == 2 and stub.asked[hold] == 2  # the 503 retried; the killed one asked again
        assert stub.asked[papers[4]] == 1

        again = cli_main(draw_args(stored, stub.url))  # resumed: only the two without a figure are asked
        assert again == 1 and stub.asked[papers[4]] == 1 and stub.asked[flaky] == 2
        assert stub.asked[small] == stub.asked[corrupt] == 3  # once in each of the three runs
    finally:
        stub.close()
    data = dataset.load_dataset(stored)
    drawn = {pid: r for (s, pid), r in data.images.items() if s == MODEL}
    assert sorted(drawn) == sorted({flaky, hold, papers[4]})  # one figure a paper, none of the bad replies
    lines = (stored / "images.jsonl").read_text().splitlines()
    assert len(lines) == len(set(lines)) and sum(json.loads(line)["system"] == MODEL for line in lines) == 3
    for record in drawn.values():
        image = Image.open(stored / record.path)
        assert image.format == "PNG" and (image.width, image.height) == (record.width, record.height)
    log = [json.loads(line) for line in (stored / aibench_draw.LOG).read_text().splitlines()]
    assert Counter(row["outcome"] for row in log) == {"stored": 3, "too small": 3, "undecodable": 3}

    # the stored system, scored end to end
    vlm = VLMStub(stored)
    try:
        out = tmp_path / "answers.jsonl"
        assert cli_main(["aibench", "run", "--data", str(stored), "--base-url", vlm.url, "--model", "reader",
                         "--out", str(out), "--systems", MODEL, "--backoff", "0.01"]) == 0
        assert vlm.problems == []
    finally:
        vlm.close()
    capsys.readouterr()
    assert cli_main(["aibench", "score", str(out), "--data", str(stored)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:2] == ["system", "solver"] and table[1].startswith(f"{MODEL}  reader")


@pytest.mark.parametrize("args, said", [
    (["--size", "512x512"], "--size: 512x512 is below the paper's floor of 1024x1024"),
    (["--size", "big"], "--size: a size is WIDTHxHEIGHT"),
    (["--system", "Blank Image"], "'Blank Image' has images imported with the data set"),
    (["--base-url", "ftp://x"], "--base-url must start with http:// or https://"),
])
def test_bad_settings_are_refused_before_anything_is_asked(stored, capsys, args, said):
    before = (stored / "images.jsonl").read_bytes()
    assert cli_main(draw_args(stored, "http://127.0.0.1:9/v1") + args) == 2
    assert said in capsys.readouterr().err
    assert (stored / "images.jsonl").read_bytes() == before and not (stored / aibench_draw.LOG).exists()


def test_the_prompts_are_the_papers_to_the_character(stored):
    paper = next(iter(dataset.load_dataset(stored).papers.values()))
    assert aibench_draw.figure_prompt(paper, "closed") == (
        "Generate a framework figure based on the given paper method section.\n " + paper.method_text)
    assert aibench_draw.figure_prompt(paper, "open") == (
        "Generate an academic architecture diagram based on the given paper method section. Use deep learning "
        "visual elements like feature maps, network layers, blocks instead of basic flowchart boxes or only print "
        "texts. Clean vector-graphic style.\n Method text: \n " + paper.method_text)


def test_one_draw_at_a_time_writes_into_a_data_set(stored, capsys):
    import fcntl

    with (stored / aibench_draw.LOG).open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as a draw in another process holds it
        assert cli_main(draw_args(stored, "http://127.0.0.1:9/v1")) == 2
    assert f"another draw is writing into {stored}" in capsys.readouterr().err


def test_the_app_sees_a_system_drawn_while_it_runs(stored):
    """Pairwise and study images find their files through a cache read again when images.jsonl changes."""
    from structext_core.aibench import pairwise

    before = pairwise._image_records(str(stored))
    rows = (stored / "images.jsonl").read_text().splitlines()
    added = json.loads(rows[0]) | {"system": "Drawn later"}
    (stored / "images.jsonl").write_text("\n".join([*rows, json.dumps(added)]) + "\n")
    os.utime(stored / "images.jsonl", ns=(time.time_ns(), time.time_ns() + 10**9))
    assert ("Drawn later", added["paper_id"]) in pairwise._image_records(str(stored))
    assert ("Drawn later", added["paper_id"]) not in before


# ------------------------------------------------------------------ the image endpoint's HTTP client

KEY = "sk-draw-never-elsewhere"


def png_b64() -> str:
    out = io.BytesIO()
    Image.new("RGB", (1024, 1024), (10, 120, 200)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


@pytest.fixture
def endpoints():
    """``make(answer)``: a :class:`JsonEndpoint` closed after the test (its slow replies stop then too)."""
    made, closing = [], threading.Event()

    def make(answer):
        made.append(JsonEndpoint(answer))
        return made[-1]

    make.closing = closing
    yield make
    closing.set()
    for endpoint in made:
        endpoint.close()


def test_draw_refuses_a_redirect_to_another_origin_and_sends_nothing_there(stored, endpoints, capsys, monkeypatch):
    elsewhere = endpoints(lambda path, body: (200, {"data": [{"b64_json": png_b64()}]}))
    endpoint = endpoints(lambda path, body: (302, {}, {"Location": elsewhere.url + "/images/generations"}))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    started = time.monotonic()
    assert cli_main(draw_args(stored, endpoint.url)) == 1
    assert time.monotonic() - started < 3
    err = capsys.readouterr().err
    assert elsewhere.connections == 0 and elsewhere.headers == []  # nothing, so no key, reached the other origin
    assert len(endpoint.headers) == 5 and all(h["Authorization"] == f"Bearer {KEY}" for h in endpoint.headers)
    said = (f"the endpoint {endpoint.url}/images/generations redirected (HTTP 302) to another origin "
            f"{elsewhere.url.removesuffix('/v1')}: the request was not sent there")
    log = [json.loads(line) for line in (stored / aibench_draw.LOG).read_text().splitlines()]
    assert [(row["outcome"], row["reason"]) for row in log] == [("request failed", said)] * 5  # each asked once
    assert said in err and KEY not in err and KEY not in (stored / aibench_draw.LOG).read_text()
    assert not any(s == MODEL for s, _ in dataset.load_dataset(stored).images)  # nothing stored


def test_draw_follows_a_redirect_on_the_same_origin(endpoints):
    image = png_b64()
    endpoint = endpoints(lambda path, body: (307, {}, {"Location": "/v1/moved/images/generations"})
                         if path == "/v1/images/generations" else (200, {"data": [{"b64_json": image}]}))
    config = aibench_draw.runner.EndpointConfig(endpoint.url, MODEL, api_key=KEY, timeout=5)
    assert aibench_draw.request_image(config, "a figure", (1024, 1024)) == base64.b64decode(image)
    assert len(endpoint.headers) == 2 and all(h["Authorization"] == f"Bearer {KEY}" for h in endpoint.headers)


def test_draw_stops_a_dripping_image_endpoint_at_the_whole_request_deadline(endpoints):
    def drip():
        while not endpoints.closing.wait(0.2):
            yield b" "

    endpoint = endpoints(lambda path, body: (200, drip(), {"Content-Length": "1000000"}))
    config = aibench_draw.runner.EndpointConfig(endpoint.url, MODEL, api_key=KEY, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(aibench_draw.runner.EndpointError) as caught:
        aibench_draw.request_image(config, "a figure", (1024, 1024))
    assert time.monotonic() - started < 3
    assert caught.value.retryable
    assert str(caught.value) == (f"no complete answer from {endpoint.url}/images/generations: the whole request "
                                 "took longer than 1 s")
