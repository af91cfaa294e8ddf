"""AIBench's ``run``: every (image, question) of a stored data set asked of any OpenAI-compatible
vision-language model endpoint, as the paper asks it.

Each request is the paper's: system message "You are a helpful assistant.", and one user
message holding the image (a ``data:image/png;base64`` URL of the stored, re-encoded PNG) and
the text ``Question: ...\\nOptions:\\nA. ...\\n\\nBased on the given image only, answer with the
option's letter from the given choices directly.`` It runs on StrucText's runner
(:func:`structext_core.evaluation.runner.run_prompts`), so it is bounded, retried and resumable
exactly as StrucText's ``run``: at most ``concurrency`` requests in flight, retries with backoff
on timeouts, 429 and 5xx, a stop after many failures in a row, one line appended per answer and
answered items skipped on the next run. The image is read when its request is made, never held
for all items. Each line is a prediction line of the AIBench import (``paper_id, question_id,
system``; ``model`` as the solver, ``response`` as the prediction), and the letter is read from
it only when scored, so a reply with no clear letter is kept as it came.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path

from structext_core.aibench import model
from structext_core.aibench.dataset import Dataset, load_dataset
from structext_core.evaluation import runner

SETTING = "aibench"


def item_id(paper_id: str, question_id: str, system: str) -> str:
    """The run's id of one (image, question): ``paper/question@system``."""
    return f"{paper_id}/{question_id}@{system}"


def messages(image_png: bytes, question: model.Question) -> list[dict]:
    """The paper's chat messages for ``question`` about the image."""
    url = "data:image/png;base64," + base64.b64encode(image_png).decode("ascii")
    return [{"role": "system", "content": model.SYSTEM_PROMPT},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": model.solver_prompt(question)}]}]


def _builder(path: Path, question: model.Question) -> Callable[[], list[dict]]:
    return lambda: messages(path.read_bytes(), question)


def run_items(folder: str | os.PathLike, data: Dataset, systems: list[str] | None = None) -> list[dict]:
    """The runner's items: one per system's image and question of its paper, in a fixed order."""
    folder = Path(folder)
    chosen = data.systems if systems is None else systems
    unknown = [s for s in chosen if s not in data.systems]
    if unknown:
        raise ValueError(f"no images of {', '.join(map(repr, unknown))}; the systems are {', '.join(data.systems)}")
    items = []
    for system in chosen:
        for paper_id in sorted(data.papers):
            record = data.images.get((system, paper_id))
            if record is None:
                continue
            for q in data.papers[paper_id].questions:
                items.append({"sample_id": item_id(paper_id, q.id, system), "prompt": _builder(folder / record.path, q),
                              "fields": {"paper_id": paper_id, "question_id": q.id, "system": system}})
    return items


def run_aibench(folder: str | os.PathLike, config: runner.EndpointConfig, out_path: str | os.PathLike, *,
                systems: list[str] | None = None, concurrency: int = 4,
                policy: runner.RetryPolicy = runner.RetryPolicy(), max_consecutive_failures: int = 20,
                progress=None, seed: int = 0) -> runner.RunSummary:
    """Ask ``config``'s model every question about every image of the stored data set at ``folder``
    (or of ``systems``), appending to ``out_path``; see the module."""
    data = load_dataset(folder)
    return runner.run_prompts(run_items(folder, data, systems), config, out_path, SETTING, concurrency=concurrency,
                              policy=policy, max_consecutive_failures=max_consecutive_failures, progress=progress,
                              seed=seed)
