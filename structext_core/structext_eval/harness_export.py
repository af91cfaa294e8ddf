"""Ready StrucText-Eval tasks for Inspect AI and lm-evaluation-harness (``export-task``).

:func:`export_task` writes a folder that the harness runs with its own command line:

* **inspect**: ``dataset.jsonl`` (one record per sample: our id, the prompt of the setting,
  the answer, the sample's fields as metadata) and ``structext_task.py`` (an Inspect task
  with one user message per sample, ``generate()`` and a scorer that calls
  :func:`structext_core.evaluation.scoring.score_response`);
* **lm-eval**: ``dataset.jsonl``, ``structext_<setting>.yaml`` (a ``generate_until`` task
  whose ``process_results`` calls the same scoring) and ``structext_utils.py``.

Both folders also hold ``README.txt`` with the commands. The task files find
``structext_core`` through the project folder recorded when the task was written
(``STRUCTEXT_HOME`` overrides it), so the scores the harness reports are ours, and
``python -m structext_core score`` reads the harness's logs back (see :mod:`structext_core.evaluation.harness`).
Nothing here imports either harness.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from structext_core import settings
from structext_core.evaluation.scoring import DEFAULT_THRESHOLD
from structext_core.evaluation.task_files import ExportError, write_files
from structext_core.structext_eval import prompts
from structext_core.structext_eval.samples import to_jsonl_line

HARNESSES = ("inspect", "lm-eval")
PROJECT_ROOT = settings.PROJECT_ROOT
DATASET_FILE = "dataset.jsonl"
METADATA_FIELDS = ("suite", "language", "task", "task_id", "depth", "width", "col")
"""Sample fields carried into each harness record (for the harness's own breakdowns)."""
SCORE_METRICS = ("score", "rouge_l", "score_paper", "rouge_l_paper", "exact_match", "bleu")
"""The per-sample scores each exported task reports, all from ``score_response``."""


def task_name(suite: str, setting: str) -> str:
    """The harness task name: ``structext_<suite>_<setting>`` in lower-case word characters."""
    return re.sub(r"[^0-9a-z_]+", "_", f"structext_{suite}_{setting}".lower()).strip("_")


def dataset_records(samples: Sequence[Mapping], setting: str, shots: int | None = None,
                    demo_seed: int = 0) -> list[dict]:
    """One record per sample: ``id, setting, prompt, answer, demonstrations`` and the sample's
    grid fields (``suite, language, task, task_id, depth, width, col``)."""
    built = prompts.build_prompts(samples, setting, shots, demo_seed=demo_seed)
    records = []
    for sample, prompt in zip(samples, built):
        record = {"id": str(sample["id"]), "setting": setting, "prompt": prompt["prompt"],
                  "answer": str(sample["answer"]), "demonstrations": prompt["demonstrations"]}
        record.update({key: sample.get(key) for key in METADATA_FIELDS})
        records.append(record)
    return records


_INSPECT_TASK = '''"""StrucText-Eval ({suite}, prompt setting {setting}) as an Inspect AI task.

Written by `python -m structext_core export-task`. Run from this folder, e.g.:

    inspect eval structext_task.py --model openai/gpt-4o --log-dir logs

then score the log with StrucText Studio (see README.txt). The scorer is StrucText Studio's own
(structext_core.evaluation.scoring.score_response): `score` is ROUGE-L on the text after the last
"### Answer:" line, 0 below the threshold; `score_paper` is the authors' ROUGE-L on the whole
response, thresholded.
"""

import os
import sys
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("STRUCTEXT_HOME", {project_root!r}))
from structext_core.evaluation.scoring import score_response  # noqa: E402

SETTING = {setting!r}
THRESHOLD = {threshold!r}
METRICS = {metrics!r}


@scorer(metrics={{name: [mean(), stderr()] for name in METRICS}})
def structext_score(threshold: float = THRESHOLD):
    """StrucText Studio's scores of one response against the sample's answer."""

    async def score(state: TaskState, target: Target) -> Score:
        scored = score_response(target.text, state.output.completion, threshold)
        values = scored.as_dict()
        return Score(value={{name: float(values[name]) for name in METRICS}},
                     answer=scored.answer_extracted,
                     metadata={{"has_marker": scored.has_marker}})

    return score


@task
def {name}(threshold: float = THRESHOLD) -> Task:
    """StrucText-Eval {suite}, prompt setting {setting}: one user message per sample."""
    dataset = json_dataset(
        str(HERE / {dataset!r}),
        FieldSpec(input="prompt", target="answer", id="id",
                  metadata=["setting", "demonstrations", "suite", "language", "task", "task_id",
                            "depth", "width", "col"]),
    )
    return Task(dataset=dataset, solver=generate(), scorer=structext_score(threshold),
                config=GenerateConfig(temperature=0.0), metadata={{"setting": SETTING}})
'''

_LM_EVAL_UTILS = '''"""StrucText-Eval for lm-evaluation-harness: dataset loader and scoring.

Written by `python -m structext_core export-task`. The scores are StrucText Studio's own
(structext_core.evaluation.scoring.score_response); see README.txt.
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("STRUCTEXT_HOME", {project_root!r}))
from structext_core.evaluation.scoring import score_response  # noqa: E402

THRESHOLD = {threshold!r}
METRICS = {metrics!r}


def load_dataset(**kwargs):
    """The task's samples from dataset.jsonl beside this file (no download, no cache)."""
    import datasets

    with open(HERE / {dataset!r}, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    for record in records:
        record["demonstrations"] = json.dumps(record["demonstrations"])
    return {{"test": datasets.Dataset.from_list(records)}}


def process_results(doc, results):
    """StrucText Studio's scores of the first response against the sample's answer."""
    values = score_response(doc["answer"], results[0], THRESHOLD).as_dict()
    return {{name: float(values[name]) for name in METRICS}}
'''

_LM_EVAL_YAML = """# StrucText-Eval ({suite}, prompt setting {setting}), written by `python -m structext_core export-task`.
task: {name}
custom_dataset: !function structext_utils.load_dataset
test_split: test
output_type: generate_until
doc_to_text: prompt
doc_to_target: answer
process_results: !function structext_utils.process_results
generation_kwargs:
  until: []
  do_sample: false
  temperature: 0.0
  max_gen_toks: {max_tokens}
repeats: 1
num_fewshot: 0
metric_list:
{metric_list}
metadata:
  version: 1.0
  setting: {setting}
  suite: {suite}
"""


def _readme(harness: str, name: str, out_dir: Path, setting: str, suite_path: str | None = None) -> str:
    project = PROJECT_ROOT
    suite = shlex.quote(suite_path) if suite_path else "SUITE.jsonl"
    if harness == "inspect":
        run = (f"cd {out_dir}\n"
               f"{project}/.venv/bin/inspect eval structext_task.py --model openai/gpt-4o --log-dir logs\n"
               "#   (any provider Inspect supports; add --epochs 5 for repeats)\n\n"
               "A local OpenAI-compatible server (vLLM, llama.cpp's llama-server, Ollama) serving NAME on PORT:\n\n"
               f"LOCAL_BASE_URL=http://127.0.0.1:PORT/v1 LOCAL_API_KEY=none \\\n"
               f"    {project}/.venv/bin/inspect eval structext_task.py --model openai-api/local/NAME --log-dir logs")
        back = f"{project}/.venv/bin/python -m structext_core score {out_dir}/logs/<log>.eval --samples {suite}"
    else:
        run = (f"cd {out_dir}\n"
               f"{project}/.venv/bin/lm_eval run --include_path . --tasks {name} \\\n"
               "    --model openai-chat-completions --model_args model=gpt-4o --apply_chat_template \\\n"
               "    --output_path out --log_samples\n"
               "#   (any model lm-eval supports; repeats: edit `repeats:` in the YAML)\n\n"
               "A local OpenAI-compatible server (vLLM, llama.cpp's llama-server, Ollama) serving NAME on PORT\n"
               "(base_url is the full chat/completions address, not .../v1):\n\n"
               f"{project}/.venv/bin/lm_eval run --include_path . --tasks {name} \\\n"
               "    --model local-chat-completions \\\n"
               "    --model_args model=NAME,base_url=http://127.0.0.1:PORT/v1/chat/completions \\\n"
               "    --apply_chat_template --output_path out --log_samples")
        back = (f"{project}/.venv/bin/python -m structext_core score {out_dir}/out/<model>/samples_{name}_<date>.jsonl "
                f"--samples {suite}")
    return (f"StrucText-Eval task for {harness}, prompt setting {setting}: {name}\n\n"
            f"Run the task:\n\n{run}\n\nScore the log with StrucText Studio (the same scores the task "
            f"reported, per sample):\n\n{back}\n\n"
            f"The task files add {project} to sys.path to import structext_core; set STRUCTEXT_HOME "
            "if the project moves.\n")


def export_task(harness: str, samples: Sequence[Mapping], setting: str, out_dir: str | Path,
                shots: int | None = None, demo_seed: int = 0, threshold: float = DEFAULT_THRESHOLD,
                max_tokens: int = 4096, suite_path: str | Path | None = None, force: bool = False) -> list[Path]:
    """Write a ready ``harness`` task for ``samples`` under ``setting`` into ``out_dir``.

    ``suite_path``, the samples file, is named in README.txt's scoring command (else a placeholder).

    Returns the files written. Raises :class:`ExportError` (nothing written) for an unknown
    harness or setting, an empty suite, or an output folder that is not empty (with ``force``:
    that holds a file of these names we did not write, or another task's files).
    """
    if harness not in HARNESSES:
        raise ExportError(f"unknown harness {harness!r}; choose one of {', '.join(HARNESSES)}")
    if not samples:
        raise ExportError("the suite holds no samples")
    try:
        records = dataset_records(samples, setting, shots, demo_seed)
    except prompts.PromptError as exc:
        raise ExportError(str(exc)) from None
    out_dir = Path(out_dir).resolve()
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir} exists and is not a folder")
    suite = str(samples[0].get("suite") or "custom")
    name = task_name(suite, setting)
    values = {"suite": suite, "setting": setting, "name": name, "project_root": str(PROJECT_ROOT),
              "threshold": float(threshold), "metrics": SCORE_METRICS, "dataset": DATASET_FILE}
    files = {DATASET_FILE: "".join(to_jsonl_line(r) for r in records)}
    if harness == "inspect":
        files["structext_task.py"] = _INSPECT_TASK.format(**values)
    else:
        metric_list = "\n".join(f"  - metric: {m}\n    aggregation: mean\n    higher_is_better: true"
                                for m in SCORE_METRICS)
        files["structext_utils.py"] = _LM_EVAL_UTILS.format(**values)
        files[f"{name}.yaml"] = _LM_EVAL_YAML.format(**values, metric_list=metric_list, max_tokens=int(max_tokens))
    files["README.txt"] = _readme(harness, name, out_dir, setting,
                                  str(Path(suite_path).resolve()) if suite_path is not None else None)
    write_files(out_dir, files, force)
    return [out_dir / n for n in files]
