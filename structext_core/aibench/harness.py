"""AIBench as an Inspect AI task (``aibench export-task --harness inspect``) and its logs read back
as AIBench predictions (``aibench score LOG``).

The task asks every question about every image of a stored data set as the paper does (and as
``aibench run`` does): the system message "You are a helpful assistant." and one user message
with the image (an Inspect ``ContentImage`` of the stored PNG) and the paper's question text. It
is scored inside Inspect by our own rule (:func:`structext_core.aibench.model.parse_letter`: the
letter read from the reply, correct when it is the key; a reply without a clear letter is not
correct), so the harness's accuracy per sample is the one ``aibench score`` computes from its log.

A log is read with :func:`structext_core.evaluation.harness.inspect_log_entries` (bounded, without
importing Inspect); each sample becomes one prediction ``{paper_id, question_id, system, solver:
the log's model, prediction: the reply}``, checked against the data set like any predictions file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from structext_core import settings
from structext_core.aibench import model
from structext_core.aibench.dataset import Dataset, ImportFailed, load_dataset
from structext_core.aibench.papers import Problem
from structext_core.aibench.predictions import Prediction, parse_predictions
from structext_core.aibench.run import item_id
from structext_core.evaluation import harness, task_files

HARNESSES = ("inspect",)
TASK_FILE = "aibench_task.py"
DATASET_FILE = "dataset.jsonl"
SCORE_NAME = "aibench_score"

_TASK = '''"""AIBench ({name}) as an Inspect AI task: every question about every image, as the paper asks.

Written by `python -m structext_core aibench export-task`. Run from this folder, e.g.:

    inspect eval aibench_task.py --model openai/gpt-4o --log-dir logs

then score the log with StrucText Studio (see README.txt). The scorer is StrucText Studio's own
(structext_core.aibench.model.parse_letter): correct when the letter read from the reply is the
key; a reply without a clear letter is not correct.
"""

import json
import os
import sys
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("STRUCTEXT_HOME", {project_root!r}))
from structext_core.aibench.model import parse_letter  # noqa: E402


@scorer(metrics=[mean(), stderr()])
def {score_name}():
    """1 when the letter read from the reply is the key, else 0 (StrucText Studio's rule)."""

    async def score(state: TaskState, target: Target) -> Score:
        letter = parse_letter(state.output.completion, state.metadata["n_options"])
        return Score(value=1.0 if letter == target.text else 0.0, answer=letter or "",
                     metadata={{"letter": letter}})

    return score


def samples():
    out = []
    with open(HERE / {dataset!r}, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            out.append(Sample(
                id=row["id"], target=row["answer"],
                input=[ChatMessageSystem(content=row["system_prompt"]),
                       ChatMessageUser(content=[ContentImage(image=row["image"]), ContentText(text=row["prompt"])])],
                metadata={{k: row[k] for k in ("paper_id", "question_id", "system", "level", "n_options")}}))
    return out


@task
def {name}() -> Task:
    """AIBench, data set {data_name}: one image and one question per sample."""
    return Task(dataset=MemoryDataset(samples(), name={name!r}), solver=generate(), scorer={score_name}(),
                config=GenerateConfig(temperature=0.0), metadata={{"setting": "aibench"}})
'''


def task_name(data_name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in data_name.lower()).strip("_")
    return f"aibench_{cleaned or 'data'}"


def dataset_records(folder: str | os.PathLike, data: Dataset, systems: list[str] | None = None) -> list[dict]:
    """One record per (system's image, question of its paper), in a fixed order."""
    folder = Path(folder).resolve()
    chosen = data.systems if systems is None else systems
    unknown = [s for s in chosen if s not in data.systems]
    if unknown:
        raise task_files.ExportError(f"no images of {', '.join(map(repr, unknown))}; the systems are "
                                         f"{', '.join(data.systems)}")
    records = []
    for system in chosen:
        for paper_id in sorted(data.papers):
            image = data.images.get((system, paper_id))
            if image is None:
                continue
            for q in data.papers[paper_id].questions:
                records.append({"id": item_id(paper_id, q.id, system), "paper_id": paper_id, "question_id": q.id,
                                "system": system, "level": q.level, "n_options": len(q.options),
                                "image": str(folder / image.path), "system_prompt": model.SYSTEM_PROMPT,
                                "prompt": model.solver_prompt(q), "answer": q.answer})
    if not records:
        raise task_files.ExportError("the data set holds no image with a question")
    return records


def _readme(out_dir: Path, data_folder: Path) -> str:
    project = settings.PROJECT_ROOT
    return (f"AIBench task for Inspect AI over the stored data set {data_folder}\n\nRun the task:\n\n"
            f"cd {out_dir}\n{project}/.venv/bin/inspect eval {TASK_FILE} --model openai/gpt-4o --log-dir logs\n"
            "#   (any vision-language model Inspect supports; a local OpenAI-compatible server serving NAME on PORT:\n"
            f"#    LOCAL_BASE_URL=http://127.0.0.1:PORT/v1 LOCAL_API_KEY=none ... --model openai-api/local/NAME)\n\n"
            "Score the log with StrucText Studio (Table 3; the per-sample accuracy equals the task's):\n\n"
            f"{project}/.venv/bin/python -m structext_core aibench score {out_dir}/logs/<log>.eval --data {data_folder}\n\n"
            f"The task reads the images from {data_folder} and adds {project} to sys.path to import "
            "structext_core; set STRUCTEXT_HOME if the project moves.\n")


def export_inspect_task(folder: str | os.PathLike, out_dir: str | os.PathLike,
                        systems: list[str] | None = None, force: bool = False) -> list[Path]:
    """Write the Inspect task for the stored data set at ``folder`` into ``out_dir``; the files
    written. :class:`~structext_core.evaluation.task_files.ExportError` (nothing written) for
    an unknown system, an empty data set, a folder that is not empty (with ``force``: that holds
    a file of these names we did not write, or another task's files)."""
    folder = Path(folder).resolve()
    data = load_dataset(folder)
    records = dataset_records(folder, data, systems)
    out_dir = Path(out_dir).resolve()
    if out_dir.exists() and not out_dir.is_dir():
        raise task_files.ExportError(f"{out_dir} exists and is not a folder")
    name = task_name(folder.name)
    files = {DATASET_FILE: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
             TASK_FILE: _TASK.format(name=name, data_name=folder.name, score_name=SCORE_NAME,
                                     dataset=DATASET_FILE, project_root=str(settings.PROJECT_ROOT)),
             "README.txt": _readme(out_dir, folder)}
    task_files.write_files(out_dir, files, force)
    return [out_dir / n for n in files]


def is_inspect_log(path: str | os.PathLike) -> bool:
    return harness.detect_path(path) in (harness.FORMAT_INSPECT_EVAL, harness.FORMAT_INSPECT_JSON)


def read_inspect_log(path: str | os.PathLike, data: Dataset) -> tuple[list[Prediction], dict[tuple, float]]:
    """The log's replies as predictions checked against ``data``, and the score the task gave
    each inside Inspect ({prediction key: 0 or 1}; absent for a sample the harness did not score).
    The solver is the log's model (``model, epoch k`` for epochs after the first). Raises
    :class:`~structext_core.aibench.dataset.ImportFailed` naming the sample at fault."""
    name = Path(path).name
    try:
        entries = harness.inspect_log_entries(path)
    except harness.ResultsImportError as exc:
        raise ImportFailed([Problem(name, "", str(exc))]) from None
    lines, inside, problems = [], {}, []
    for entry in entries:
        meta = entry["metadata"]
        fields = {k: meta.get(k) for k in ("paper_id", "question_id", "system")}
        if not all(isinstance(v, str) for v in fields.values()):
            problems.append(Problem(name, entry["where"], "the sample has no paper_id, question_id and system in "
                                                          "its metadata: not a log of an exported AIBench task"))
            continue
        solver = entry["model"] if entry["epoch"] == 1 else f"{entry['model']}, epoch {entry['epoch']}"
        lines.append(json.dumps({**fields, "solver": solver, "prediction": entry["response"]}))
        if SCORE_NAME in entry["scores"]:
            inside[(fields["system"], solver, fields["paper_id"], fields["question_id"])] = entry["scores"][SCORE_NAME]
        if len(problems) >= 50:
            break
    if problems:
        raise ImportFailed(problems)
    return parse_predictions("\n".join(lines), data, name), inside
