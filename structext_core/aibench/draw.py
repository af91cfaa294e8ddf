"""AIBench's ``draw``: a new system's method figures, asked of any OpenAI-compatible image endpoint
with the paper's prompts, checked as the import checks images, and stored in the data set as a
system of its own, so ``aibench run`` and ``score`` put it in Table 3.

- **The prompts** are the paper's (Fig. A2), to the character: the short one for closed-source
  models (:data:`CLOSED_PROMPT`), the constrained one for open-source models (:data:`OPEN_PROMPT`),
  each with the paper's method text.
- **The request**: ``POST {base_url}/images/generations`` with ``model``, ``prompt``, ``n`` 1,
  ``size`` (at least the paper's floor, 1024 x 1024, on each side) and ``response_format``
  ``b64_json``; the image is ``data[0].b64_json``. Retried with backoff on timeouts, 429 and 5xx
  (StrucText's :class:`~structext_core.evaluation.runner.RetryPolicy`); a reply is read up to
  :data:`MAX_REPLY_BYTES`, never more, and the timeout is the whole request's deadline, reply
  included. A redirect to another origin is refused (the API key goes to the endpoint only): the
  shared client, :mod:`structext_core.evaluation.http_client`.
- **Every image is checked** as the import checks one (:func:`structext_core.aibench.images.check_image`,
  in a worker process): one PNG, JPEG or WebP frame, no decompression bomb, decoding to the size
  its header declares, re-encoded as a plain PNG. An image with fewer pixels than the floor is
  *too small*. Nothing that fails is stored: each paper's outcome (``stored``, ``too small``,
  ``undecodable``, ``oversized``, ``request failed``) is a line of the data set's
  ``draws.jsonl``, with the reason.
- **Resumable**: a stored figure is written, then its record added to ``images.jsonl`` (the whole
  file replaced at once), so a killed run leaves no half-stored figure and a rerun asks only for
  the papers the system has no figure of: never one twice.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from structext_core.aibench import limits
from structext_core.aibench.dataset import ImageRecord, load_dataset
from structext_core.aibench.model import Paper
from structext_core.evaluation import runner
from structext_core.evaluation.runner import write_whole

#: Fig. A2, closed-source models.
CLOSED_PROMPT = "Generate a framework figure based on the given paper method section.\n {method_text}"
#: Fig. A2, open-source models.
OPEN_PROMPT = ("Generate an academic architecture diagram based on the given paper method section. Use deep learning "
               "visual elements like feature maps, network layers, blocks instead of basic flowchart boxes or only "
               "print texts. Clean vector-graphic style.\n Method text: \n {method_text}")
PROMPTS = {"closed": CLOSED_PROMPT, "open": OPEN_PROMPT}
#: The paper's floor: "a minimum resolution threshold of 1024x1024 pixels for all generated outputs".
FLOOR = (1024, 1024)
#: The most of one reply read: an image at the import's limit in base64, and its JSON around it.
MAX_REPLY_BYTES = limits.MAX_IMAGE_BYTES * 4 // 3 + 65_536
LOG = "draws.jsonl"
STORED, TOO_SMALL, UNDECODABLE, OVERSIZED, FAILED = "stored", "too small", "undecodable", "oversized", "request failed"
_MAGIC = ((b"\x89PNG\r\n\x1a\n", ".png"), (b"\xff\xd8\xff", ".jpg"))

ImageChecker = Callable[[bytes, str], dict]


class DrawError(ValueError):
    """A setting or a data set that cannot be drawn into (said before anything is asked)."""


def figure_prompt(paper: Paper, kind: str) -> str:
    """The paper's prompt of ``kind`` (``closed`` or ``open``) for ``paper``."""
    return PROMPTS[kind].replace("{method_text}", paper.method_text)


def parse_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT``, each side at least the floor and at most the import's side limit."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise DrawError(f"a size is WIDTHxHEIGHT, like 1024x1024, not {text[:40]!r}") from None
    if width < FLOOR[0] or height < FLOOR[1]:
        raise DrawError(f"{width}x{height} is below the paper's floor of {FLOOR[0]}x{FLOOR[1]}")
    if max(width, height) > limits.MAX_IMAGE_SIDE or width * height > limits.MAX_IMAGE_PIXELS:
        raise DrawError(f"{width}x{height} is larger than an image may be ({limits.MAX_IMAGE_SIDE} a side, "
                        f"{limits.MAX_IMAGE_PIXELS:,} pixels)")
    return width, height


def request_image(config: runner.EndpointConfig, prompt: str, size: tuple[int, int]) -> bytes:
    """One image asked once: its bytes as the endpoint sent them (base64-decoded). Raises
    :class:`~structext_core.evaluation.runner.EndpointError` (``retryable`` says whether to ask again)."""
    body = {"model": config.model, "prompt": prompt, "n": 1, "size": f"{size[0]}x{size[1]}",
            "response_format": "b64_json"}
    url, payload = runner.post_json(config, "/images/generations", body, MAX_REPLY_BYTES)
    try:
        encoded = json.loads(payload)["data"][0]["b64_json"]
        if not isinstance(encoded, str):
            raise TypeError("b64_json is not text")
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        raise runner.EndpointError(f"no data[0].b64_json in the reply from {url}: {payload[:200]!r}",
                                   retryable=False) from None
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise _Undecodable("data[0].b64_json is not base64") from None


class _Undecodable(runner.EndpointError):
    def __init__(self, message: str):
        super().__init__(message, retryable=False)


def ask(config: runner.EndpointConfig, prompt: str, size: tuple[int, int], policy: runner.RetryPolicy,
        rng: random.Random) -> bytes:
    """:func:`request_image` until an image comes, a non-retryable error, or retries run out."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return request_image(config, prompt, size)
        except runner.EndpointError as exc:
            if not exc.retryable or attempt > policy.max_retries:
                raise
            time.sleep(policy.delay(attempt, rng, exc.retry_after))


@dataclass
class DrawSummary:
    """What a run did: per outcome, the papers (in order)."""

    system: str
    total: int = 0
    skipped: int = 0
    outcomes: dict[str, list[str]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def stored(self) -> int:
        return len(self.outcomes.get(STORED, []))

    @property
    def missing(self) -> int:
        """Papers still without a figure of the system."""
        return self.total - self.skipped - self.stored


def _suffix(data: bytes) -> str:
    for magic, suffix in _MAGIC:
        if data.startswith(magic):
            return suffix
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return ""


def _outcome(data: bytes, check_image: ImageChecker) -> tuple[str, str, dict | None]:
    """(outcome, reason, the checked image) of one reply's bytes."""
    if len(data) > limits.MAX_IMAGE_BYTES:
        return OVERSIZED, f"{len(data):,} bytes; an image has at most {limits.MAX_IMAGE_BYTES:,}", None
    suffix = _suffix(data)
    if not suffix:
        return UNDECODABLE, "not a PNG, JPEG or WebP image", None
    checked = check_image(data, suffix)
    if not checked.get("ok"):
        problem = str(checked.get("problem"))
        return (OVERSIZED if "decompression bomb" in problem else UNDECODABLE), problem, None
    if checked["width"] * checked["height"] < FLOOR[0] * FLOOR[1]:
        return (TOO_SMALL, f"{checked['width']} x {checked['height']} pixels, fewer than the paper's floor of "
                f"{FLOOR[0]} x {FLOOR[1]}", None)
    return STORED, f"{checked['width']} x {checked['height']}", checked


def draw_system(folder: str | os.PathLike, config: runner.EndpointConfig, system: str, kind: str,
                size: tuple[int, int], check_image: ImageChecker, *,
                policy: runner.RetryPolicy = runner.RetryPolicy(), seed: int = 0,
                progress: Callable[[DrawSummary, int], None] | None = None) -> DrawSummary:
    """Ask for a figure of every paper of the stored data set at ``folder`` that ``system`` has none
    of, and store each that passes the checks (see the module). :class:`DrawError` before anything
    is asked for a system the import brought (its images are not ours to add to) or a bad ``kind``."""
    folder = Path(folder)
    if kind not in PROMPTS:
        raise DrawError(f"the prompt is closed or open (Fig. A2), not {kind!r}")
    _check_system(folder, load_dataset(folder), system)  # before anything is written, the log's lock included
    with (folder / LOG).open("a", encoding="utf-8") as held:  # one draw at a time writes into a data set
        try:
            runner._lock_exclusively(held, folder / LOG)
        except runner.RunInProgressError:
            raise DrawError(f"another draw is writing into {folder}; wait for it to end") from None
        return _draw_locked(folder, config, system, kind, size, check_image, policy, seed, progress)


def _draw_locked(folder: Path, config: runner.EndpointConfig, system: str, kind: str, size: tuple[int, int],
                 check_image: ImageChecker, policy: runner.RetryPolicy, seed: int,
                 progress: Callable[[DrawSummary, int], None] | None) -> DrawSummary:
    data = load_dataset(folder)
    _check_system(folder, data, system)
    folders = sorted({Path(r.path).parent.name for r in data.images.values()})
    mine = [Path(r.path).parent.name for (s, _), r in data.images.items() if s == system]
    subfolder = mine[0] if mine else f"{max((int(f) for f in folders if f.isdigit()), default=-1) + 1:03d}"
    (folder / "images" / subfolder).mkdir(parents=True, exist_ok=True)
    summary = DrawSummary(system, total=len(data.papers))
    rng = random.Random(seed)
    todo = [pid for pid in sorted(data.papers) if (system, pid) not in data.images]
    summary.skipped = summary.total - len(todo)
    for done, paper_id in enumerate(todo, start=1):
        try:
            reply = ask(config, figure_prompt(data.papers[paper_id], kind), size, policy, rng)
            outcome, reason, checked = _outcome(reply, check_image)
        except _Undecodable as exc:
            outcome, reason, checked = UNDECODABLE, str(exc), None
        except runner.EndpointError as exc:
            outcome, reason, checked = FAILED, str(exc), None
        stored = f"images/{subfolder}/{paper_id}.png"
        if checked is not None:  # the figure first, then the log, then its record: a kill leaves no record of a
            write_whole(folder / stored, checked["png"])  # figure not written, and a rerun asks again
        with (folder / LOG).open("a", encoding="utf-8") as log:
            log.write(json.dumps({"system": system, "paper_id": paper_id, "model": config.model, "prompt": kind,
                                  "outcome": outcome, "reason": reason[:500], "at": round(time.time(), 3)},
                                 ensure_ascii=False) + "\n")
        if checked is not None:
            data.images[(system, paper_id)] = ImageRecord(system, paper_id, stored, checked["width"], checked["height"])
            rows = [{"system": r.system, "paper_id": r.paper_id, "path": r.path, "width": r.width, "height": r.height}
                    for r in sorted(data.images.values(), key=lambda r: (r.system, r.paper_id))]
            write_whole(folder / "images.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                         for r in rows).encode("utf-8"))
        summary.outcomes.setdefault(outcome, []).append(paper_id)
        summary.reasons[paper_id] = reason
        if progress is not None:
            progress(summary, done)
    return summary


def _check_system(folder: Path, data, system: str) -> None:
    if system in data.systems and system not in _drawn_systems(folder):
        raise DrawError(f"{system!r} has images imported with the data set; name the new system otherwise")


def _drawn_systems(folder: Path) -> set[str]:
    """The systems ``draw`` stored figures of before (from the data set's ``draws.jsonl``)."""
    try:
        lines = (folder / LOG).read_text("utf-8").splitlines()
    except OSError:
        return set()
    systems = set()
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if isinstance(row, dict) and row.get("outcome") == STORED and isinstance(row.get("system"), str):
            systems.add(row["system"])
    return systems
