"""Send prompts to any OpenAI-compatible chat endpoint and collect the responses.

Works with vLLM, the llama.cpp server, Ollama (``http://localhost:11434/v1``) and hosted
APIs: it POSTs ``{base_url}/chat/completions`` with one user message per prompt.

* bounded concurrency: at most ``concurrency`` requests in flight (one per worker thread);
* retries with exponential backoff and jitter on timeouts, connection errors, 408, 409, 425,
  429 and 5xx (a ``Retry-After`` header is honoured, capped at ``backoff_max``); other
  4xx answers (bad model name, bad key) fail at once;
* resume: the output file is appended to line by line, one line per answered prompt, and
  samples already answered there (same model and setting) are skipped on the next run; a
  line cut short by a crash is dropped;
* the API key is read from an environment variable (``OPENAI_API_KEY`` unless told
  otherwise) and sent only as a bearer token, never written anywhere, and only to the
  endpoint's origin: a redirect to another origin is refused, not followed;
* ``timeout`` is each request's whole deadline (connecting, sending, and reading the whole
  reply), not a wait between two bytes: an endpoint that drips its reply cannot hold a request
  longer (the shared client, :mod:`structext_core.evaluation.http_client`).

Output lines follow the results contract: ``sample_id, model, prompt`` (the setting name),
``response``, plus ``demonstrations``, ``finish_reason``, ``usage``, ``latency_s`` and
``attempts``.
"""

from __future__ import annotations

import json
import os
import queue
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from structext_core import settings
from structext_core.evaluation.http_client import RETRYABLE_STATUS, EndpointError, fetch  # noqa: F401 (the runner's too)

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


#: The most of one reply's text that is kept (a longer one is cut here and marked :data:`CUT_MARK`):
#: an answer to one of our questions is a few lines; 34 replies of 20 MB made a 680 MB results file.
MAX_REPLY_CHARS = 64 * 1024
CUT_MARK = "\n[reply cut: {chars:,} characters in all, the first {kept:,} kept]"
#: The most of one HTTP reply that is read (a reply's JSON around its text, a generous margin).
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024


def cap_reply(text: str) -> str:
    """``text`` as stored: whole up to :data:`MAX_REPLY_CHARS`, else its start and :data:`CUT_MARK`."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    return text[:MAX_REPLY_CHARS] + CUT_MARK.format(chars=len(text), kept=MAX_REPLY_CHARS)


class RunStopped(EndpointError):
    """The run was stopped while this request waited to be retried."""

    def __init__(self):
        super().__init__("run stopped", retryable=False)


class ResumeFileError(ValueError):
    """The output file to resume cannot be read (a damaged line that is not the last)."""


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to ask. ``api_key`` None sends no Authorization header. ``timeout`` (seconds)
    is the whole deadline of one request, the reply read to its end included (each retry has its own)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 300.0
    temperature: float = 0.0
    max_tokens: int | None = None
    extra_body: Mapping = field(default_factory=dict)

    def __repr__(self) -> str:  # never show the key in logs or tracebacks
        return f"EndpointConfig(base_url={self.base_url!r}, model={self.model!r}, api_key={'***' if self.api_key else None})"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failing request."""

    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 60.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based): full jitter in
        [base * 2**(attempt-1) / 2, base * 2**(attempt-1)], or the server's Retry-After."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max)
        ceiling = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
        return ceiling * (0.5 + 0.5 * rng.random())


@dataclass(frozen=True)
class Completion:
    """One successful answer."""

    text: str
    finish_reason: str | None
    usage: Mapping | None


def api_key_from_env(name: str = DEFAULT_API_KEY_ENV) -> str | None:
    """The API key in environment variable ``name``, or None when unset or empty."""
    return settings.raw(name) or None


def write_whole(path: Path, data: bytes) -> None:
    """``data`` into ``path`` whole or not at all: written to a temporary file beside it, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def post_json(config: EndpointConfig, path: str, body: dict, max_bytes: int) -> tuple[str, bytes]:
    """POST ``body`` as JSON to the endpoint's ``path`` once: (the URL that answered, the reply's bytes,
    read up to ``max_bytes``), through the shared client
    (:func:`structext_core.evaluation.http_client.fetch`). ``config.timeout`` is the whole request's
    deadline, reply included; a redirect is followed only on the endpoint's own origin, so the API key
    never goes anywhere else. Raises :class:`EndpointError` (with ``retryable``, and the server's
    Retry-After) on an HTTP error, an unreachable server, a passed deadline, a redirect to another
    origin, or a longer reply (not read)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    url = config.base_url.rstrip("/") + path
    return fetch(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST",
                 timeout=config.timeout, max_bytes=max_bytes)


def chat_completion(config: EndpointConfig, prompt: str | list[dict]) -> Completion:
    """Ask once: ``prompt`` is the user message's text, or the whole ``messages`` list (a benchmark
    sends a system message and an image). Raises :class:`EndpointError` (with ``retryable``) on any failure."""
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    body = {"model": config.model, "messages": messages,
            "temperature": config.temperature, **dict(config.extra_body)}
    if config.max_tokens is not None:
        body["max_tokens"] = config.max_tokens
    url, payload = post_json(config, "/chat/completions", body, MAX_PAYLOAD_BYTES)
    try:
        data = json.loads(payload)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
        raise EndpointError(f"malformed answer from {url}: {payload[:200]!r}", retryable=True) from None
    return Completion(text=cap_reply(text), finish_reason=choice.get("finish_reason"), usage=data.get("usage"))


def ask_with_retries(
    config: EndpointConfig,
    prompt: str | list[dict],
    policy: RetryPolicy,
    rng: random.Random,
    stop: threading.Event | None = None,
) -> tuple[Completion, int]:
    """Ask until an answer comes, a non-retryable error, or retries run out: (answer, attempts)."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return chat_completion(config, prompt), attempt
        except EndpointError as exc:
            if not exc.retryable or attempt > policy.max_retries:
                raise
            delay = policy.delay(attempt, rng, exc.retry_after)
        if stop is not None:
            if stop.wait(delay):
                raise RunStopped()
        else:
            time.sleep(delay)


def answered_samples(path: str | os.PathLike, model: str, setting: str, repair: bool = False) -> set[str]:
    """Sample ids already answered in ``path`` by ``model`` under ``setting``.

    A damaged last line (a write cut short by a crash) is not counted; with ``repair`` it
    is also removed from the file, and a missing final newline is added, so appending can
    go on. A damaged line elsewhere raises :class:`ResumeFileError` naming it.
    """
    path = Path(path)
    if not path.exists():
        return set()
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    done: set[str] = set()
    offset = 0
    for number, line in enumerate(lines, start=1):
        start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not an object")
        except ValueError:
            if number == len(lines):  # the last line, without its newline: cut short
                if repair:
                    with path.open("r+b") as handle:
                        handle.truncate(start)
                break
            raise ResumeFileError(f"{path}:{number}: not a JSON object; cannot resume from this file") from None
        if number == len(lines) and repair:  # complete, but no newline after it
            with path.open("ab") as handle:
                handle.write(b"\n")
        if row.get("model") == model and row.get("prompt") == setting and isinstance(row.get("response"), str):
            done.add(str(row.get("sample_id")))
    return done


class RunInProgressError(RuntimeError):
    """Another run is appending to the same output file."""


def _lock_exclusively(handle, path: Path) -> None:
    """Hold an advisory lock on the output file for the run, so two runs cannot interleave."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks, proceed
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunInProgressError(f"another run is writing to {path}; wait for it or choose another --out") from None


@dataclass
class RunSummary:
    """What a run did."""

    total: int = 0
    skipped: int = 0
    answered: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    stopped_early: str | None = None

    @property
    def finished(self) -> int:
        """Prompts handled in this run (answered or failed)."""
        return self.answered + len(self.failures)


def _result_row(item: Mapping, config: EndpointConfig, setting: str, completion: Completion,
                attempts: int, latency: float) -> dict:
    return {
        "sample_id": str(item["sample_id"]),
        "model": config.model,
        "prompt": setting,
        "response": completion.text,
        "demonstrations": list(item.get("demonstrations") or []),
        "finish_reason": completion.finish_reason,
        "usage": completion.usage,
        "latency_s": round(latency, 3),
        "attempts": attempts,
        **dict(item.get("fields") or {}),  # what identifies the item beyond sample_id (its benchmark's fields)
    }


def run_prompts(
    items: Iterable[Mapping],
    config: EndpointConfig,
    out_path: str | os.PathLike,
    setting: str,
    concurrency: int = 4,
    policy: RetryPolicy = RetryPolicy(),
    max_consecutive_failures: int = 20,
    progress: Callable[[RunSummary], None] | None = None,
    seed: int = 0,
    on_start: Callable[[RunSummary], None] | None = None,
) -> RunSummary:
    """Answer every prompt not yet answered in ``out_path``, appending one line per answer.

    ``items`` are prompt records ``{sample_id, prompt, demonstrations?}`` (the output of
    ``python -m structext_core prompts``); a ``prompt`` may also be a ``messages`` list or a
    function returning one (called when the item is asked), and ``fields`` (a dict) are
    written into the item's line. ``concurrency`` worker threads each hold at most
    one request. Failed prompts (after retries) are listed in the summary and not written,
    so the next run tries them again. After ``max_consecutive_failures`` failures in a row
    the run stops (the endpoint is likely down). ``progress(summary)`` is called after each
    finished prompt, from the calling thread, which alone writes the file. On an
    interruption (KeyboardInterrupt) every answer received so far is on disk; requests in
    flight are abandoned (the workers are daemon threads). ``on_start(summary)`` is called once
    the file is locked for this run and read (``total`` and ``skipped`` known), before any
    request: a second run on a locked file raises :class:`RunInProgressError` before it.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    items = list(items)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("a", encoding="utf-8") as out:
        _lock_exclusively(out, out_path)
        done = answered_samples(out_path, config.model, setting, repair=True)
        todo = [item for item in items if str(item["sample_id"]) not in done]
        summary = RunSummary(total=len(items), skipped=len(items) - len(todo))
        if on_start is not None:
            on_start(summary)
        if todo:
            _answer(todo, config, out, setting, concurrency, policy, max_consecutive_failures, progress,
                     seed, summary)
    return summary


def _answer(todo: list[Mapping], config: EndpointConfig, out, setting: str, concurrency: int,
            policy: RetryPolicy, max_consecutive_failures: int,
            progress: Callable[[RunSummary], None] | None, seed: int, summary: RunSummary) -> None:
    """Ask for every item of ``todo`` with ``concurrency`` workers; the caller's thread writes ``out``."""
    stop = threading.Event()
    inbox: queue.Queue = queue.Queue()
    for item in todo:
        inbox.put(item)
    outbox: queue.Queue = queue.Queue()
    seeds = random.Random(seed)

    def worker(rng: random.Random) -> None:
        while not stop.is_set():
            try:
                item = inbox.get_nowait()
            except queue.Empty:
                return
            started = time.monotonic()
            try:
                prompt = item["prompt"]
                if callable(prompt):  # built when asked (an image is read now, not held for every item)
                    try:
                        prompt = prompt()
                    except OSError as exc:
                        outbox.put((item, None, f"cannot build the prompt: {exc}"))
                        continue
                prompt = prompt if isinstance(prompt, list) else str(prompt)
                completion, attempts = ask_with_retries(config, prompt, policy, rng, stop)
            except RunStopped:
                return
            except EndpointError as exc:
                outbox.put((item, None, str(exc)))
            else:
                row = _result_row(item, config, setting, completion, attempts, time.monotonic() - started)
                outbox.put((item, row, None))

    workers = [
        threading.Thread(target=worker, args=(random.Random(seeds.random()),), daemon=True,
                         name=f"structext-run-{number}")
        for number in range(min(concurrency, len(todo)))
    ]
    consecutive_failures = 0
    try:
        for thread in workers:
            thread.start()
        while any(thread.is_alive() for thread in workers) or not outbox.empty():
            try:
                item, row, error = outbox.get(timeout=0.05)
            except queue.Empty:
                continue
            if row is not None:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                summary.answered += 1
                consecutive_failures = 0
            else:
                summary.failures.append((str(item["sample_id"]), error))
                consecutive_failures += 1
                if consecutive_failures >= max_consecutive_failures and not stop.is_set():
                    summary.stopped_early = f"stopped after {consecutive_failures} failures in a row; last: {error}"
                    stop.set()
            if progress is not None:
                progress(summary)
    finally:
        stop.set()
