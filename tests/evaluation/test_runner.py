"""The runner against a small OpenAI-compatible server of the tests' own, on loopback only."""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from structext_core.evaluation import runner
from structext_core.evaluation.runner import (
    EndpointConfig,
    EndpointError,
    ResumeFileError,
    RetryPolicy,
    answered_samples,
    chat_completion,
    run_prompts,
)
from structext_core.structext_eval.cli import model_runs as cli_results
from structext_core.structext_eval.samples import write_jsonl
from structext_core.structext_eval.suites import generate_cell

FAST = RetryPolicy(max_retries=3, backoff_base=0.01, backoff_max=0.05)


def reply_for(prompt: str) -> str:
    return f"### Answer:\nreply to {prompt[-12:]}"


class FakeEndpoint:
    """A chat-completions server on 127.0.0.1. ``behaviour(prompt, attempt)`` returns
    ``(status, body, headers, delay_seconds)``; the default answers at once. A body that is an
    iterable of bytes is sent chunk by chunk as it yields them (a slow server; with status None,
    the chunks are the whole reply, status line and headers included). ``connections`` counts
    every connection made to it, request or not."""

    def __init__(self, behaviour=None):
        self.behaviour = behaviour or (lambda prompt, attempt: (200, None, {}, 0.0))
        self.requests: list[dict] = []
        self.attempts: Counter = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0
        self.closing = threading.Event()
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def setup(self):
                with endpoint.lock:
                    endpoint.connections += 1
                super().setup()

            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                prompt = body["messages"][0]["content"]
                with endpoint.lock:
                    endpoint.attempts[prompt] += 1
                    attempt = endpoint.attempts[prompt]
                    endpoint.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                counted = False
                try:
                    status, payload, headers, delay = endpoint.behaviour(prompt, attempt)
                    time.sleep(delay)
                    if payload is not None and not isinstance(payload, str):  # sent as it comes
                        if status is not None:
                            self.send_response(status)
                            for name, value in headers.items():
                                self.send_header(name, value)
                            self.end_headers()
                        for chunk in payload:
                            self.wfile.write(chunk)
                        return
                    if payload is None:
                        payload = json.dumps({
                            "choices": [{"message": {"role": "assistant", "content": reply_for(prompt)},
                                         "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 5, "completion_tokens": 3},
                        })
                    data = payload.encode("utf-8")
                    # the request ends here: once the reply is sent, the client may send its next one
                    # before this thread runs again (counted as a fourth in flight under load otherwise)
                    with endpoint.lock:
                        endpoint.in_flight -= 1
                        counted = True
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    if not counted:
                        with endpoint.lock:
                            endpoint.in_flight -= 1

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.closing.set()  # a slow reply's chunks stop
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint_factory():
    made = []

    def make(behaviour=None):
        made.append(FakeEndpoint(behaviour))
        return made[-1]

    yield make
    for endpoint in made:
        endpoint.close()


def items(n: int) -> list[dict]:
    return [{"sample_id": f"s{i:02d}", "prompt": f"question number {i:02d}", "demonstrations": []} for i in range(n)]


def read_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def wait_for_workers():
    for thread in threading.enumerate():
        if thread.name.startswith("structext-run-"):
            thread.join(5)


# ---------------------------------------------------------------- single requests

def test_chat_completion_sends_an_openai_request(endpoint_factory):
    endpoint = endpoint_factory()
    config = EndpointConfig(endpoint.url, "tiny-model", api_key="sk-test", max_tokens=64, temperature=0.2)
    completion = chat_completion(config, "hello there")
    assert completion.text == reply_for("hello there")
    assert completion.finish_reason == "stop" and completion.usage["completion_tokens"] == 3
    request = endpoint.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["body"] == {"model": "tiny-model", "messages": [{"role": "user", "content": "hello there"}],
                               "temperature": 0.2, "max_tokens": 64}
    assert "sk-test" not in repr(config)


def test_no_key_no_authorization_header(endpoint_factory):
    endpoint = endpoint_factory()
    chat_completion(EndpointConfig(endpoint.url, "m"), "x")
    assert "Authorization" not in endpoint.requests[0]["headers"]


@pytest.mark.parametrize("status, retryable", [(400, False), (401, False), (404, False), (429, True),
                                               (500, True), (503, True)])
def test_http_errors_are_classified(endpoint_factory, status, retryable):
    endpoint = endpoint_factory(lambda p, a: (status, '{"error": "nope"}', {}, 0.0))
    with pytest.raises(EndpointError) as caught:
        chat_completion(EndpointConfig(endpoint.url, "m"), "x")
    assert caught.value.retryable is retryable
    assert f"HTTP {status}" in str(caught.value)


def test_malformed_answer_is_retryable(endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (200, '{"choices": []}', {}, 0.0))
    with pytest.raises(EndpointError, match="malformed") as caught:
        chat_completion(EndpointConfig(endpoint.url, "m"), "x")
    assert caught.value.retryable


def test_unreachable_endpoint_is_retryable():
    with pytest.raises(EndpointError, match="cannot reach") as caught:
        chat_completion(EndpointConfig("http://127.0.0.1:9/v1", "m", timeout=2), "x")
    assert caught.value.retryable


def test_backoff_delays():
    policy = RetryPolicy(backoff_base=1.0, backoff_max=10.0)
    rng = random.Random(0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 10.0)]:
        delays = [policy.delay(attempt, rng) for _ in range(200)]
        assert ceiling / 2 <= min(delays) and max(delays) <= ceiling
    assert policy.delay(1, rng, retry_after=3) == 3
    assert policy.delay(1, rng, retry_after=500) == 10.0


# ---------------------------------------------------------------- runs

def test_run_answers_every_prompt_within_the_concurrency_bound(tmp_path, endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (200, None, {}, 0.05))
    out = tmp_path / "results.jsonl"
    summary = run_prompts(items(24), EndpointConfig(endpoint.url, "m"), out, "naive", concurrency=3, policy=FAST)
    assert summary.answered == 24 and not summary.failures and summary.skipped == 0
    rows = read_lines(out)
    assert sorted(r["sample_id"] for r in rows) == [f"s{i:02d}" for i in range(24)]
    row = next(r for r in rows if r["sample_id"] == "s05")
    assert row["response"] == reply_for("question number 05")
    assert row["model"] == "m" and row["prompt"] == "naive" and row["attempts"] == 1
    assert 1 < endpoint.max_in_flight <= 3


def test_retries_until_the_endpoint_recovers(tmp_path, endpoint_factory):
    def flaky(prompt, attempt):
        if attempt == 1:
            return 500, '{"error": "overloaded"}', {}, 0.0
        if attempt == 2:
            return 429, '{"error": "slow down"}', {"Retry-After": "0"}, 0.0
        return 200, None, {}, 0.0

    endpoint = endpoint_factory(flaky)
    out = tmp_path / "results.jsonl"
    summary = run_prompts(items(5), EndpointConfig(endpoint.url, "m"), out, "naive", concurrency=2, policy=FAST)
    assert summary.answered == 5
    assert all(r["attempts"] == 3 for r in read_lines(out))
    assert set(endpoint.attempts.values()) == {3}


def test_a_failing_endpoint_writes_nothing_and_stops_early(tmp_path, endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (503, '{"error": "down"}', {}, 0.0))
    out = tmp_path / "results.jsonl"
    summary = run_prompts(items(30), EndpointConfig(endpoint.url, "m"), out, "naive", concurrency=2,
                          policy=RetryPolicy(max_retries=1, backoff_base=0.001, backoff_max=0.01),
                          max_consecutive_failures=4)
    assert summary.answered == 0
    assert 4 <= len(summary.failures) < 30
    assert summary.stopped_early and "HTTP 503" in summary.stopped_early
    assert read_lines(out) == []
    for sample_id, _ in summary.failures:  # one try and one retry each
        assert endpoint.attempts[f"question number {sample_id[1:]}"] == 2


def test_a_bad_request_is_not_retried(tmp_path, endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (400, '{"error": "unknown model"}', {}, 0.0))
    summary = run_prompts(items(3), EndpointConfig(endpoint.url, "m"), tmp_path / "r.jsonl", "naive",
                          policy=FAST)
    assert len(summary.failures) == 3
    assert "unknown model" in summary.failures[0][1]
    assert set(endpoint.attempts.values()) == {1}


def test_a_slow_endpoint_times_out_and_is_retried(tmp_path, endpoint_factory):
    # First answers far slower than the deadline, second answers at once; the deadline leaves a loaded
    # machine room for the second (at 0.25 s, CI on a slow hour timed one of them out too).
    endpoint = endpoint_factory(lambda p, a: (200, None, {}, 30.0 if a == 1 else 0.0))
    out = tmp_path / "results.jsonl"
    started = time.monotonic()
    summary = run_prompts(items(4), EndpointConfig(endpoint.url, "m", timeout=1.5), out, "naive",
                          concurrency=4, policy=FAST)
    assert summary.answered == 4
    assert all(r["attempts"] == 2 for r in read_lines(out))
    assert time.monotonic() - started < 10.0  # nobody waited for the slow first answers (30 s)



# ---------------------------------------------------------------- redirects and the whole request's deadline

KEY = "sk-never-elsewhere"


def origin_of(url: str) -> str:
    return url.rsplit("/v1", 1)[0]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_refused_and_nothing_is_sent_there(endpoint_factory, status):
    elsewhere = endpoint_factory()  # another port: another origin
    endpoint = endpoint_factory(lambda p, a: (status, "", {"Location": elsewhere.url + "/chat/completions"}, 0.0))
    config = EndpointConfig(endpoint.url, "m", api_key=KEY, timeout=5)
    started = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        runner.ask_with_retries(config, "hello", FAST, random.Random(0))
    assert time.monotonic() - started < 3
    assert caught.value.retryable is False
    assert str(caught.value) == (f"the endpoint {endpoint.url}/chat/completions redirected (HTTP {status}) to "
                                 f"another origin {origin_of(elsewhere.url)}: the request was not sent there")
    assert KEY not in str(caught.value)
    assert elsewhere.connections == 0 and elsewhere.requests == []  # no request, so no Authorization, reached it
    assert endpoint.attempts["hello"] == 1  # asked once: not retried
    assert endpoint.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("where", ["https://127.0.0.1:{port}/v1/chat/completions",  # another scheme
                                   "http://localhost:{port}/v1/chat/completions",  # another host
                                   "//127.0.0.1:1/v1/chat/completions"])  # another port, scheme-relative
def test_the_same_host_by_another_scheme_name_or_port_is_another_origin(endpoint_factory, where):
    endpoint = endpoint_factory()
    port = endpoint.url.split(":")[2].split("/")[0]
    endpoint.behaviour = lambda p, a: (302, "", {"Location": where.format(port=port)}, 0.0)
    with pytest.raises(EndpointError, match="redirected .* to another origin .*: the request was not sent there") \
            as caught:
        chat_completion(EndpointConfig(endpoint.url, "m", api_key=KEY, timeout=5), "x")
    assert not caught.value.retryable and KEY not in str(caught.value)
    assert endpoint.connections == 1


@pytest.mark.parametrize("status, location", [(307, "/v1/moved/chat/completions"),  # relative
                                              (302, "{url}/moved/chat/completions"),  # absolute
                                              (308, "../moved/chat/completions")])  # relative to the path
def test_a_redirect_on_the_same_origin_is_followed(endpoint_factory, status, location):
    endpoint = endpoint_factory()
    endpoint.behaviour = lambda p, a: ((status, "", {"Location": location.format(url=endpoint.url)}, 0.0) if a == 1
                                       else (200, None, {}, 0.0))
    completion = chat_completion(EndpointConfig(endpoint.url, "m", api_key=KEY, timeout=5), "hello")
    assert completion.text == reply_for("hello")
    assert [r["path"] for r in endpoint.requests] == ["/v1/chat/completions", "/v1/moved/chat/completions"]
    assert [r["body"] for r in endpoint.requests] == [endpoint.requests[0]["body"]] * 2  # the same POST, again
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in endpoint.requests)


def test_redirects_on_the_same_origin_are_followed_five_times_at_most(endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (307, "", {"Location": f"/v1/hop{a}/chat/completions"}, 0.0))
    with pytest.raises(EndpointError) as caught:
        chat_completion(EndpointConfig(endpoint.url, "m", api_key=KEY, timeout=5), "x")
    assert not caught.value.retryable
    assert str(caught.value) == (f"the endpoint {endpoint.url}/chat/completions redirected more than 5 times "
                                 f"(last to {origin_of(endpoint.url)}/v1/hop6/chat/completions): not followed further")
    assert len(endpoint.requests) == 6


def test_an_error_after_a_redirect_names_where_it_came_from(endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (307, "", {"Location": "/v1/moved/chat/completions"}, 0.0) if a == 1
                                else (404, '{"error": "no such model"}', {}, 0.0))
    with pytest.raises(EndpointError) as caught:
        chat_completion(EndpointConfig(endpoint.url, "m", timeout=5), "x")
    assert str(caught.value) == (f"HTTP 404 from {endpoint.url}/moved/chat/completions (redirected from "
                                 f'{endpoint.url}/chat/completions): {{"error": "no such model"}}')


def drip_body(endpoint: FakeEndpoint):
    """A 200 whose headers promise 100,000 bytes, then one byte every 0.2 s until the client leaves."""
    def chunks():
        while not endpoint.closing.wait(0.2):
            yield b" "
    return 200, chunks(), {"Content-Type": "application/json", "Content-Length": "100000"}, 0.0


def drip_headers(endpoint: FakeEndpoint):
    """A status line, then a header one byte every 0.2 s (the headers never end)."""
    def chunks():
        yield b"HTTP/1.1 200 OK\r\nX-Slow: "
        while not endpoint.closing.wait(0.2):
            yield b"a"
    return None, chunks(), {}, 0.0


@pytest.mark.parametrize("drip", [drip_body, drip_headers])
def test_a_dripping_endpoint_is_cut_at_the_whole_request_deadline(endpoint_factory, drip):
    endpoint = endpoint_factory()
    endpoint.behaviour = lambda p, a: drip(endpoint)
    started = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        chat_completion(EndpointConfig(endpoint.url, "m", api_key=KEY, timeout=1.0), "x")
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 3
    assert caught.value.retryable  # as every timeout: asked again
    assert str(caught.value) == (f"no complete answer from {endpoint.url}/chat/completions: the whole request "
                                 "took longer than 1 s")
    assert KEY not in str(caught.value)


def test_a_slow_but_steady_reply_within_the_deadline_is_read_whole(endpoint_factory):
    answer = json.dumps({"choices": [{"message": {"content": "x" * 300}, "finish_reason": "stop"}]}).encode()
    pieces = [answer[i:i + 40] for i in range(0, len(answer), 40)]

    def steady(prompt, attempt):
        def chunks():
            for piece in pieces:
                time.sleep(0.02)
                yield piece
        return 200, chunks(), {"Content-Length": str(len(answer))}, 0.0

    completion = chat_completion(EndpointConfig(endpoint_factory(steady).url, "m", timeout=2.0), "x")
    assert completion.text == "x" * 300


def test_resume_after_an_interruption(tmp_path, endpoint_factory):
    endpoint = endpoint_factory(lambda p, a: (200, None, {}, 0.02))
    out = tmp_path / "results.jsonl"

    def interrupt_after_five(summary):
        if summary.answered >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_prompts(items(20), EndpointConfig(endpoint.url, "m"), out, "naive", concurrency=2, policy=FAST,
                    progress=interrupt_after_five)
    wait_for_workers()
    first = read_lines(out)
    assert len(first) == 5
    asked_before = Counter(endpoint.attempts)

    summary = run_prompts(items(20), EndpointConfig(endpoint.url, "m"), out, "naive", concurrency=2, policy=FAST)
    assert summary.skipped == 5 and summary.answered == 15
    rows = read_lines(out)
    assert sorted(r["sample_id"] for r in rows) == [f"s{i:02d}" for i in range(20)]
    for row in first:  # nothing already answered was asked again
        prompt = f"question number {row['sample_id'][1:]}"
        assert endpoint.attempts[prompt] == asked_before[prompt] == 1


def test_resume_drops_a_line_cut_short(tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    out = tmp_path / "results.jsonl"
    good = [json.dumps({"sample_id": f"s{i:02d}", "model": "m", "prompt": "naive", "response": "r"}) for i in range(2)]
    cut = "\n".join(good) + '\n{"sample_id": "s02", "model": "m", "resp'
    out.write_text(cut, encoding="utf-8")
    assert answered_samples(out, "m", "naive") == {"s00", "s01"}
    assert out.read_text(encoding="utf-8") == cut  # reading alone changes nothing
    assert answered_samples(out, "m", "naive", repair=True) == {"s00", "s01"}
    assert out.read_text(encoding="utf-8") == "\n".join(good) + "\n"
    summary = run_prompts(items(4), EndpointConfig(endpoint.url, "m"), out, "naive", policy=FAST)
    assert summary.skipped == 2 and summary.answered == 2
    assert len(read_lines(out)) == 4


def test_resume_after_a_last_line_without_newline(tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"sample_id": "s00", "model": "m", "prompt": "naive", "response": "r"}), encoding="utf-8")
    summary = run_prompts(items(3), EndpointConfig(endpoint.url, "m"), out, "naive", policy=FAST)
    assert summary.skipped == 1 and summary.answered == 2
    assert [r["sample_id"] for r in read_lines(out)][0] == "s00" and len(read_lines(out)) == 3


def test_two_runs_cannot_write_one_file(tmp_path, endpoint_factory):
    fcntl = pytest.importorskip("fcntl")
    endpoint = endpoint_factory()
    out = tmp_path / "results.jsonl"
    with out.open("a") as other_run:
        fcntl.flock(other_run.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(runner.RunInProgressError, match="another run"):
            run_prompts(items(2), EndpointConfig(endpoint.url, "m"), out, "naive", policy=FAST)
    assert endpoint.requests == []


def test_resume_counts_only_the_same_model_and_setting(tmp_path):
    out = tmp_path / "results.jsonl"
    lines = [{"sample_id": "s00", "model": "m", "prompt": "naive", "response": "r"},
             {"sample_id": "s01", "model": "other", "prompt": "naive", "response": "r"},
             {"sample_id": "s02", "model": "m", "prompt": "hint", "response": "r"}]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert answered_samples(out, "m", "naive") == {"s00"}


def test_resume_refuses_a_damaged_middle_line(tmp_path):
    out = tmp_path / "results.jsonl"
    out.write_text('{"sample_id": "s00"}\n{broken\n{"sample_id": "s01"}\n', encoding="utf-8")
    with pytest.raises(ResumeFileError, match=":2:"):
        answered_samples(out, "m", "naive")


# ---------------------------------------------------------------- the run command

def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="structext_core")
    cli_results.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def sample_file(tmp_path):
    samples = generate_cell(7, 1, 2, 4, seed=1, suite="run-test") + generate_cell(9, 1, 1, 3, seed=1, suite="run-test")
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, samples)
    return path


def test_run_command_end_to_end_and_resume(tmp_path, endpoint_factory, sample_file, monkeypatch, capsys):
    monkeypatch.setenv("MY_KEY", "sk-local-secret")
    endpoint = endpoint_factory()
    out = tmp_path / "results.jsonl"
    argv = ["run", "--base-url", endpoint.url, "--model", "tiny", "--setting", "hint", "--samples",
            str(sample_file), "--out", str(out), "--api-key-env", "MY_KEY", "--backoff", "0.01"]
    assert run_cli(argv) == 0
    assert all(r["headers"]["Authorization"] == "Bearer sk-local-secret" for r in endpoint.requests)
    assert "### Rule Hint:" in endpoint.requests[0]["body"]["messages"][0]["content"]
    assert "sk-local-secret" not in out.read_text(encoding="utf-8")
    rows = read_lines(out)
    assert len(rows) == 7 and {r["prompt"] for r in rows} == {"hint"}
    assert "answered 7" in capsys.readouterr().out

    assert run_cli(argv) == 0  # everything answered: nothing is asked again
    assert len(endpoint.requests) == 7
    assert "answered 0, skipped 7" in capsys.readouterr().out

    # and the results score
    assert run_cli(["score", str(out), "--samples", str(sample_file)]) == 0
    assert "tiny" in capsys.readouterr().out


def test_run_command_from_a_prompts_file(tmp_path, endpoint_factory, sample_file):
    endpoint = endpoint_factory()
    prompts_file = tmp_path / "prompts.jsonl"
    assert run_cli(["prompts", "--samples", str(sample_file), "--setting", "few-shot", "--shots", "1",
                    "--out", str(prompts_file)]) == 0
    out = tmp_path / "results.jsonl"
    assert run_cli(["run", "--base-url", endpoint.url, "--model", "tiny", "--prompts", str(prompts_file),
                    "--out", str(out)]) == 0
    rows = read_lines(out)
    assert {r["prompt"] for r in rows} == {"few-shot"}
    assert all(len(r["demonstrations"]) == 1 for r in rows)


@pytest.mark.parametrize("content, expected", [
    (b"[" * 300 + b"]" * 300 + b"\n", "objects and lists nest more than 100 deep"),
    (b'{"sample_id": "' + b"x" * 2_000 + b'", "prompt": "p"}\n', "line 1: the line is longer than 1,000 characters"),
    (b'{"sample_id": "a", "prompt": "p"}\n{oops\n', "line 2: not valid JSON"),
    (b'{"sample_id": 1, "prompt": "p"}\n', "line 1: expected an object with string fields sample_id and prompt"),
    (b'{"sample_id": "\xff", "prompt": "p"}\n', "not UTF-8 text"),
    (b"\n\n", "no prompts in the file"),
], ids=["deep", "over-long", "not-json", "wrong-shape", "not-utf8", "empty"])
def test_a_hostile_prompts_file_is_refused_naming_the_line_and_asks_nothing(
        tmp_path, endpoint_factory, capsys, monkeypatch, content, expected):
    from structext_core.text import limits

    monkeypatch.setattr(limits, "MAX_RECORD_CHARS", 1_000)
    asked = []
    endpoint = endpoint_factory(lambda p, a: asked.append(p) or (200, "{}", {}, 0.0))
    prompts_file = tmp_path / "prompts.jsonl"
    prompts_file.write_bytes(content)
    out = tmp_path / "results.jsonl"
    assert run_cli(["run", "--base-url", endpoint.url, "--model", "tiny", "--prompts", str(prompts_file),
                    "--setting", "naive", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert expected in err and str(prompts_file) in err, err
    assert asked == [] and not out.exists()


def test_run_command_reports_failures_and_exits_one(tmp_path, endpoint_factory, sample_file, capsys):
    endpoint = endpoint_factory(lambda p, a: (500, '{"error": "boom"}', {}, 0.0))
    out = tmp_path / "results.jsonl"
    status = run_cli(["run", "--base-url", endpoint.url, "--model", "tiny", "--setting", "naive", "--samples",
                      str(sample_file), "--out", str(out), "--max-retries", "1", "--backoff", "0.001"])
    err = capsys.readouterr().err
    assert status == 1
    assert "HTTP 500" in err and "run the same command again" in err and "Traceback" not in err


@pytest.mark.parametrize("extra, message", [
    (["--setting", "naive"], "exactly one of --samples"),
    (["--setting", "naive", "--samples", "S", "--concurrency", "0"], "--concurrency"),
    (["--setting", "naive", "--samples", "missing.jsonl"], "cannot open"),
])
def test_run_command_usage_errors(tmp_path, capsys, extra, message, sample_file):
    extra = [str(sample_file) if part == "S" else part for part in extra]
    status = run_cli(["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                      str(tmp_path / "o.jsonl"), *extra])
    assert status == 2
    assert message in capsys.readouterr().err


def test_run_command_refuses_a_damaged_results_file(tmp_path, sample_file, capsys):
    out = tmp_path / "results.jsonl"
    out.write_text('{"sample_id": "a"}\n{broken\n{"sample_id": "b"}\n', encoding="utf-8")
    status = run_cli(["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--setting", "naive",
                      "--samples", str(sample_file), "--out", str(out)])
    assert status == 2
    assert f"{out}:2:" in capsys.readouterr().err


def test_run_command_caps_answers_at_4096_tokens_by_default(tmp_path, endpoint_factory, sample_file, capsys):
    endpoint = endpoint_factory()
    base = ["run", "--base-url", endpoint.url, "--model", "tiny", "--setting", "naive", "--samples", str(sample_file)]
    assert run_cli([*base, "--out", str(tmp_path / "a.jsonl")]) == 0
    assert {r["body"]["max_tokens"] for r in endpoint.requests} == {4096}
    assert "(max 4,096 tokens an answer)" in capsys.readouterr().err
    endpoint.requests.clear()
    assert run_cli([*base, "--out", str(tmp_path / "b.jsonl"), "--max-tokens", "0"]) == 0
    assert endpoint.requests and all("max_tokens" not in r["body"] for r in endpoint.requests)
    assert "(max the server's default tokens an answer)" in capsys.readouterr().err


def test_run_command_refuses_a_locked_file_before_saying_anything_else(tmp_path, endpoint_factory, sample_file,
                                                                       capsys):
    fcntl = pytest.importorskip("fcntl")
    endpoint = endpoint_factory()
    out = tmp_path / "results.jsonl"
    with out.open("a") as other_run:
        fcntl.flock(other_run.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        status = run_cli(["run", "--base-url", endpoint.url, "--model", "tiny", "--setting", "naive",
                          "--samples", str(sample_file), "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2 and endpoint.requests == []
    assert captured.err.strip() == f"error: another run is writing to {out}; wait for it or choose another --out"
    assert captured.out == ""


def test_run_command_counts_in_its_progress_and_interrupt_messages(tmp_path, endpoint_factory, sample_file, capsys,
                                                                   monkeypatch):
    endpoint = endpoint_factory()
    out = tmp_path / "results.jsonl"
    argv = ["run", "--base-url", endpoint.url, "--model", "tiny", "--setting", "naive", "--samples",
            str(sample_file), "--out", str(out), "--concurrency", "1"]
    real_update = cli_results.ProgressLine.update

    def ctrl_c_after_three(self, done, total=None, extra=""):  # Ctrl-C lands in the calling thread
        real_update(self, done, total, extra)
        if self.label == "answered" and done == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_results.ProgressLine, "update", ctrl_c_after_three)
    assert run_cli(argv) == 130
    err = capsys.readouterr().err
    assert len(read_lines(out)) == 3
    assert "interrupted after 3 new answer(s) (3 of 7 answered in all, 4 still to ask)" in err
    assert "answered: 1/7 (14%); 1 of 7 answered in the file" in err  # the first report is always shown
    monkeypatch.undo()
    assert run_cli(argv) == 0
    err = capsys.readouterr().err
    assert "7 prompts (naive), 3 already answered" in err and "4 to ask" in err
    assert "answered: 4/4 (100%); 7 of 7 answered in the file" in err
