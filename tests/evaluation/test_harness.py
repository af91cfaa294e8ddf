"""Harness logs in, harness tasks out: Inspect AI and lm-evaluation-harness, run for real, offline.

``export-task`` writes a task for each harness; the harness runs it (Inspect with its mock model
and scripted outputs, lm-eval with its ``dummy`` model and with a scripted model, both through
their own entry points, in a child process that cannot reach the network); ``score`` reads the
logs back, and every per-sample score it computes equals the one our scorer computed inside the
harness. Then the readers meet hostile files: zip bombs, deep JSON, wrong types, damaged data.
"""

import io
import json
import os
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from structext_core.cli import main as cli
from structext_core.evaluation import harness, harness_entries, inspect_ai_logs
from structext_core.evaluation.matching import ResultsImportError
from structext_core.structext_eval import harness_export, results_frame, results_store, suites
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval import samples as samples_mod
from structext_core.studio import storage
from structext_core.views import comparisons, result_options
from tests.pages.light_parts import notes

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")

ROOT = Path(__file__).resolve().parents[2]
METRICS = harness_export.SCORE_METRICS
EPOCHS = 2
TASKS = (1, 5, 8, 12, 16, 20, 24, 27)  # CSV, tree, JSON, YAML, XML, Markdown, LaTeX, Org


def offline_env(tmp: Path) -> dict:
    """The child's environment: every hub offline, caches in ``tmp``, and a proxy that refuses
    every connection, so any download attempt fails the run instead of passing unnoticed."""
    env = dict(os.environ)
    dead = "http://127.0.0.1:9"
    env.update({
        "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(tmp / "hf"), "TIKTOKEN_CACHE_DIR": str(tmp / "tiktoken"), "XDG_DATA_HOME": str(tmp / "xdg"),
        "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "http_proxy": dead, "https_proxy": dead,
        "NO_PROXY": "", "no_proxy": "", "INSPECT_DISPLAY": "none", "PYTHONPATH": "",
    })
    return env


def run_child(args: list, cwd: Path, tmp: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=offline_env(tmp), capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done


def varied_responses(answer: str, number: int) -> str:
    """Responses of every kind that matters for the scores: right, upper-cased, doubled, empty,
    punctuation only, without a marker, half right, long (over 1,000 words)."""
    kinds = [
        f"### Answer:\n{answer}",
        f"### Reasoning:\nI read the file.\n\n### Answer:\n{answer.upper()}",
        f"{answer}\n{answer}",
        "",
        "?!. ,;",
        f"The answer is {answer}.",
        f"### Answer: {answer[: max(1, len(answer) // 2)]}",
        "word " * 1200 + answer,
    ]
    return kinds[number % len(kinds)]


def write_suite(folder: Path, rows: list[dict]) -> tuple[Path, list[dict]]:
    path = folder / "suite.jsonl"
    samples_mod.write_jsonl(path, rows)
    return path, rows


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Path, list[dict]]:
    """One sample of each format: for the readers' error paths and the .json log."""
    rows = [s for task in TASKS for s in suites.generate_cell(task, 1, 1, 1, seed=11, suite="custom")]
    return write_suite(tmp_path_factory.mktemp("suite"), rows)


@pytest.fixture(scope="module")
def big_suite(tmp_path_factory) -> tuple[Path, list[dict]]:
    """All 29 tasks at depths 1-2 and widths 1-2, 2 samples a cell: 232 samples, for the equality
    of the scores inside the harnesses and ours over hundreds of sample-epochs (two epochs or
    repeats each: 464)."""
    rows = [s for task in range(1, 30) for depth in (1, 2) for width in (1, 2)
            for s in suites.generate_cell(task, depth, width, 2, seed=5, suite="custom")]
    return write_suite(tmp_path_factory.mktemp("big-suite"), rows)


def epoch_texts(rows: list[dict], epochs: int) -> list[str]:
    """Mock outputs in the order Inspect asks for them with max_samples=1 (sample after sample,
    epoch after epoch); each sample gets another kind of response in each epoch."""
    return [varied_responses(s["answer"], j + e) for e in range(epochs) for j, s in enumerate(rows)]


def score_cli(log: Path, suite_path: Path, out: Path, *extra: str) -> list[dict]:
    code = cli.main(["score", str(log), "--samples", str(suite_path), "--out", str(out), "--n-boot", "20", *extra])
    assert code == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def max_difference(rows: list[dict]) -> tuple[int, float]:
    """(rows compared, max |inside the harness - our score| over every metric)."""
    compared, worst = 0, 0.0
    for row in rows:
        if not row["harness_scores"]:
            continue
        compared += 1
        for metric in METRICS:
            worst = max(worst, abs(row["harness_scores"][metric] - float(row[metric])))
    return compared, worst


# ---------------------------------------------------------------- Inspect AI

INSPECT_RUN = '''
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

texts = json.load(open(sys.argv[1], encoding="utf-8"))

def outputs():
    made = []
    for text in texts:
        output = ModelOutput.from_content(model="mockllm/model", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer needed
        made.append(output)
    return made

for log_format in sys.argv[2:]:
    model = get_model("mockllm/model", custom_outputs=outputs(), memoize=False)
    logs = inspect_eval("structext_task.py", model=model, epochs=%d, log_dir="logs-" + log_format,
                        log_format=log_format, display="none", max_samples=1)
    assert logs[0].status == "success", logs[0].error
''' % EPOCHS


def run_inspect(suite: tuple[Path, list[dict]], tmp: Path, formats: tuple[str, ...]) -> dict:
    """Export the suite's Inspect task and run it with the mock model: {format: log path}."""
    suite_path, rows = suite
    task_dir = tmp / "task"
    assert cli.main(["export-task", "--harness", "inspect", "--suite", str(suite_path), "--setting", "self-cot",
                     "--out", str(task_dir)]) == 0
    (tmp / "outputs.json").write_text(json.dumps(epoch_texts(rows, EPOCHS)), encoding="utf-8")
    (tmp / "run.py").write_text(INSPECT_RUN, encoding="utf-8")
    run_child([sys.executable, tmp / "run.py", tmp / "outputs.json", *formats], task_dir, tmp)
    return {fmt: next((task_dir / f"logs-{fmt}").glob(f"*.{fmt}")) for fmt in formats}


@pytest.fixture(scope="module")
def inspect_logs(suite, tmp_path_factory) -> dict:
    return run_inspect(suite, tmp_path_factory.mktemp("inspect"), ("eval", "json"))


@pytest.fixture(scope="module")
def big_inspect_log(big_suite, tmp_path_factory) -> Path:
    return run_inspect(big_suite, tmp_path_factory.mktemp("inspect-big"), ("eval",))["eval"]


@pytest.mark.parametrize("log_format", ["eval", "json", "big eval"])
def test_inspect_scores_inside_the_harness_equal_ours_on_its_log(request, suite, tmp_path, log_format):
    if log_format == "big eval":
        suite_path, rows = request.getfixturevalue("big_suite")
        log = request.getfixturevalue("big_inspect_log")
    else:
        suite_path, rows = suite
        log = request.getfixturevalue("inspect_logs")[log_format]
    scored = score_cli(log, suite_path, tmp_path / "scored.jsonl", "--keep-epochs")
    assert len(scored) == len(rows) * EPOCHS
    assert {(r["sample_id"], r["epoch"]) for r in scored} == {(s["id"], e) for s in rows for e in range(1, EPOCHS + 1)}
    assert {r["model"] for r in scored} == {"mockllm/model"} and {r["prompt"] for r in scored} == {"self-cot"}
    compared, worst = max_difference(scored)
    print(f"Inspect {log_format}: {compared} sample-epochs, max |harness - score| = {worst:.3g}")
    assert compared == len(scored) and worst <= 1e-12
    for row in scored:  # each response came back with its own sample and epoch
        j = next(i for i, s in enumerate(rows) if s["id"] == row["sample_id"])
        assert row["response"] == varied_responses(rows[j]["answer"], j + row["epoch"] - 1)
    inside = [r["harness_scores"]["score"] for r in scored]
    assert 0 < sum(v > 0 for v in inside) < len(inside)  # right and wrong answers both present
    assert any(r["response"] == "" for r in scored) and any(len(r["response"].split()) > 1000 for r in scored)


def test_inspect_eval_and_json_logs_give_the_same_rows(inspect_logs, suite):
    index = results.SampleIndex(suite[1])
    eval_format, from_eval = harness.read_log(inspect_logs["eval"], index)
    json_format, from_json = harness.read_log(inspect_logs["json"], index)
    assert (eval_format, json_format) == (harness.FORMAT_INSPECT_EVAL, harness.FORMAT_INSPECT_JSON)
    key = lambda r: (r["sample_id"], r["epoch"])  # noqa: E731
    assert sorted((key(r), r["response"]) for r in from_eval) == sorted((key(r), r["response"]) for r in from_json)


def test_the_eval_log_is_zstandard_compressed_and_read_without_inspect(inspect_logs, suite):
    with zipfile.ZipFile(inspect_logs["eval"]) as archive:
        methods = {info.compress_type for info in archive.infolist() if info.filename.startswith("samples/")}
    assert methods == {93}  # zstandard: the stdlib alone cannot read it
    code = ("import sys; from structext_core.evaluation import harness; from structext_core.structext_eval import samples;"
            f"f, rows = harness.read_log({str(inspect_logs['eval'])!r}, samples.read_jsonl({str(suite[0])!r}));"
            "assert rows and not [m for m in sys.modules if m.startswith(('inspect_ai', 'lm_eval'))], 'imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_epochs_are_averaged_per_sample_by_default(inspect_logs, suite, tmp_path):
    suite_path, rows = suite
    kept = score_cli(inspect_logs["eval"], suite_path, tmp_path / "kept.jsonl", "--keep-epochs")
    averaged = score_cli(inspect_logs["eval"], suite_path, tmp_path / "mean.jsonl")
    assert len(averaged) == len(rows) and {r["epochs"] for r in averaged} == {EPOCHS}
    assert all("epoch" not in r for r in averaged)
    for row in averaged:
        epochs = [r for r in kept if r["sample_id"] == row["sample_id"]]
        for metric in ("score", "rouge_l", "score_paper", "rouge_l_paper", "exact_match", "bleu"):
            assert row[metric] == pytest.approx(sum(r[metric] for r in epochs) / EPOCHS, abs=1e-12)


def rewrite_eval_log(source: Path, target: Path, change) -> None:
    """Copy an .eval log with ``change(name, sample)`` applied to every sample member, deflated."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = inspect_ai_logs._read_member(old, old.fp, info)
            if info.filename.startswith("samples/"):
                data = json.dumps(change(info.filename, json.loads(data)))
            new.writestr(info.filename, data)


def test_inspect_samples_without_our_ids_are_matched_by_prompt(inspect_logs, suite, tmp_path):
    """A task of the researcher's own (integer ids, prompts from `prompts`) still comes back."""
    renamed = tmp_path / "own-ids.eval"
    numbers = {}

    def renumber(name, sample):
        numbers.setdefault(sample["id"], len(numbers) + 1)
        sample["id"] = numbers[sample["id"]]
        return sample

    rewrite_eval_log(inspect_logs["eval"], renamed, renumber)
    index = results.SampleIndex(suite[1])
    _, by_prompt = harness.read_log(renamed, index)
    _, by_id = harness.read_log(inspect_logs["eval"], index)
    assert {r["harness_id"] for r in by_prompt} == set(numbers.values())
    pairs = lambda rows: sorted((r["sample_id"], r["epoch"], r["response"]) for r in rows)  # noqa: E731
    assert pairs(by_prompt) == pairs(by_id)


def test_json_log_read_in_tiny_chunks_gives_the_same_rows(inspect_logs, suite, monkeypatch):
    index = results.SampleIndex(suite[1])
    whole = harness.read_log(inspect_logs["json"], index)[1]
    monkeypatch.setattr(inspect_ai_logs, "_JSON_CHUNK", 97)
    assert harness.read_log(inspect_logs["json"], index)[1] == whole


# ---------------------------------------------------------------- lm-evaluation-harness

LM_EVAL_SCRIPTED = '''
import json, os, sys
from collections import Counter
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from lm_eval.__main__ import cli_evaluate
import lm_eval.models  # lm-eval's own models (its registry loads them only while it is empty)

ANSWERS = json.load(open(sys.argv[1], encoding="utf-8"))
RUNS = json.load(open(sys.argv[2], encoding="utf-8"))  # [[folder, arguments of lm_eval, own tasks only], ...]


@register_model("scripted")
class Scripted(LM):
    """Answers each document from a table: one response per repeat."""

    def __init__(self, **kwargs):
        super().__init__()
        self.asked = Counter()

    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None):
        return cls()

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for request in requests:
            doc_id = request.doc["id"]
            out.append(ANSWERS[doc_id][self.asked[doc_id]])
            self.asked[doc_id] += 1
        return out

    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError


for folder, arguments, own_tasks_only in RUNS:  # lm_eval's own command line, once per run, in one process
    if own_tasks_only:
        # Without lm-eval's 26,000 built-in task files, which its command line indexes on every
        # run (13 s here): the exported task is all this run needs.
        import functools
        import lm_eval.tasks
        lm_eval.tasks.TaskManager = functools.partial(lm_eval.tasks.TaskManager, include_defaults=False)
    os.chdir(folder)
    sys.argv = ["lm_eval", *arguments]
    cli_evaluate()
'''


@pytest.fixture(scope="module")
def lm_eval_runs(suite, big_suite, tmp_path_factory) -> dict:
    """Exported tasks run through lm-eval's command line (its entry point, in one process): by its
    `dummy` model (the small suite), and by a scripted model with two repeats (the 232 samples)."""
    tmp = tmp_path_factory.mktemp("lm-eval")
    name = harness_export.task_name("custom", "naive")
    for folder, (suite_path, _) in (("dummy-task", suite), ("task", big_suite)):
        assert cli.main(["export-task", "--harness", "lm-eval", "--suite", str(suite_path), "--setting", "naive",
                         "--out", str(tmp / folder)]) == 0
    rows = big_suite[1]
    task_dir = tmp / "task"
    yaml_path = task_dir / f"{name}.yaml"
    yaml_path.write_text(yaml_path.read_text(encoding="utf-8").replace("repeats: 1", "repeats: 2"), encoding="utf-8")
    answers = {s["id"]: [varied_responses(s["answer"], 2 * i + r) for r in range(2)] for i, s in enumerate(rows)}
    (tmp / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    (tmp / "scripted.py").write_text(LM_EVAL_SCRIPTED, encoding="utf-8")
    runs = [[str(tmp / "dummy-task"), ["run", "--include_path", ".", "--tasks", name, "--model", "dummy",
                                       "--output_path", "out-dummy", "--log_samples"], False],
            [str(task_dir), ["run", "--include_path", ".", "--tasks", name, "--model", "scripted",
                             "--output_path", "out-scripted", "--log_samples"], True]]
    (tmp / "runs.json").write_text(json.dumps(runs), encoding="utf-8")
    run_child([sys.executable, tmp / "scripted.py", tmp / "answers.json", tmp / "runs.json"], task_dir, tmp)
    return {"dummy": next((tmp / "dummy-task" / "out-dummy").rglob("samples_*.jsonl")),
            "scripted": next((task_dir / "out-scripted").rglob("samples_*.jsonl")), "answers": answers}


def test_lm_eval_dummy_round_trip(lm_eval_runs, suite, tmp_path):
    suite_path, rows = suite
    scored = score_cli(lm_eval_runs["dummy"], suite_path, tmp_path / "scored.jsonl")
    assert {r["sample_id"] for r in scored} == {s["id"] for s in rows}
    assert {r["model"] for r in scored} == {"dummy"} and {r["prompt"] for r in scored} == {"naive"}
    assert {r["response"] for r in scored} == {"lol"}
    compared, worst = max_difference(scored)
    print(f"lm-eval dummy: {compared} samples, max |harness - score| = {worst:.3g}")
    assert compared == len(rows) and worst <= 1e-12


def test_an_lm_eval_samples_file_is_read_as_a_lab_sets_models_answers(lm_eval_runs, big_suite, tmp_path):
    """lm-eval's own samples file (its scripted model, two repeats) read as models' answers to a lab's
    set whose ids are the documents' ids: each response matched to its item by id and repeat, and
    scored by the set's rule (Inspect's includes(): the scripted replies are the answers, varied); a
    file answering items the set lacks is refused naming them."""
    from structext_core.evaluation import item_sets
    from structext_core.labset.dataset import load_set
    rows = [s for s in big_suite[1] if len(s["answer"]) <= 1000]  # a lab set's accepted answer is short
    lines = [{"id": s["id"], "input": s["reference"] + "\n\n" + s["question"], "target": s["answer"],
              "metadata": {"answer_rule": "verbatim"}} for s in rows]
    (tmp_path / "set.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    items = load_set(tmp_path / "set.jsonl")
    with pytest.raises(ResultsImportError, match="is no item of the set"):  # answers to items it lacks: named
        item_sets.read_predictions("labset", lm_eval_runs["scripted"], items)
    kept = {i["source_id"] for i in items}
    whole = [s for s in big_suite[1]]
    assert len(kept) == len(rows) < len(whole)
    full = [{"id": s["id"], "input": s["reference"] + "\n\n" + s["question"], "target": s["answer"][:1000],
             "metadata": {"answer_rule": "includes"}} for s in whole]
    (tmp_path / "full.jsonl").write_text("".join(json.dumps(line) + "\n" for line in full), encoding="utf-8")
    items = load_set(tmp_path / "full.jsonl")  # every document, long answers cut (so never said right)
    rows = whole
    read = item_sets.read_predictions("labset", lm_eval_runs["scripted"], items)
    assert len(read) == 2 * len(rows) and {r["model"] for r in read} == {"scripted"}
    by_id = {i["id"]: i for i in items}
    answers = lm_eval_runs["answers"]
    from structext_core.labset import member
    for row in read:  # the set's rule (Inspect's includes()) on the very response lm-eval logged for that repeat
        item = by_id[row["id"]]
        said = answers[item["source_id"]][row["epoch"] - 1]
        assert row["score"] == member.score_answer(item, said)
    assert 0 < sum(r["score"] for r in read) < len(read)


def test_lm_eval_scores_inside_the_harness_equal_ours_on_its_log(lm_eval_runs, big_suite, tmp_path):
    suite_path, rows = big_suite
    scored = score_cli(lm_eval_runs["scripted"], suite_path, tmp_path / "scored.jsonl", "--keep-epochs")
    assert len(scored) == 2 * len(rows)
    for row in scored:  # every repeat's response, in order, with its sample
        assert row["response"] == lm_eval_runs["answers"][row["sample_id"]][row["epoch"] - 1]
    assert {r["model"] for r in scored} == {"scripted"}
    compared, worst = max_difference(scored)  # lm-eval scores the first repeat only
    print(f"lm-eval scripted: {compared} samples, max |harness - score| = {worst:.3g}")
    assert compared == len(rows) and worst <= 1e-12
    inside = [r["harness_scores"]["score"] for r in scored if r["harness_scores"]]
    assert 0 < sum(v > 0 for v in inside) < len(inside)


def test_lm_eval_results_file_reads_its_runs_samples(lm_eval_runs, big_suite):
    results_file = next(lm_eval_runs["scripted"].parent.glob("results_*.json"))
    index = results.SampleIndex(big_suite[1])
    file_format, rows = harness.read_log(results_file, index)
    assert file_format == harness.FORMAT_LM_EVAL_RESULTS
    assert rows == harness.read_log(lm_eval_runs["scripted"], index)[1]


def test_lm_eval_docs_without_our_ids_are_matched_by_prompt(lm_eval_runs, big_suite, tmp_path):
    lines = lm_eval_runs["scripted"].read_text(encoding="utf-8").splitlines()
    stripped = []
    for line in lines:
        record = json.loads(line)
        del record["doc"]["id"]
        stripped.append(json.dumps(record))
    copy = tmp_path / lm_eval_runs["scripted"].name
    copy.write_text("\n".join(stripped) + "\n", encoding="utf-8")
    index = results.SampleIndex(big_suite[1])
    by_prompt = harness.read_log(copy, index)[1]
    by_id = harness.read_log(lm_eval_runs["scripted"], index)[1]
    pairs = lambda rows: sorted((r["sample_id"], r["epoch"], r["response"]) for r in rows)  # noqa: E731
    assert pairs(by_prompt) == pairs(by_id)
    assert {r["harness_id"] for r in by_prompt} == set(range(len(big_suite[1])))


# ---------------------------------------------------------------- the Results page's import

def test_upload_and_folder_import_store_averaged_rows(inspect_logs, lm_eval_runs, suite, tmp_path):
    db = storage.open_db(tmp_path / "results.db")
    rows = suite[1]
    data = inspect_logs["eval"].read_bytes()
    summary = results_store.import_results(db, data, "run.eval", rows)
    assert summary.file_format == harness.FORMAT_INSPECT_EVAL and summary.n_rows == len(rows)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / inspect_logs["json"].name).write_bytes(inspect_logs["json"].read_bytes())
    for path in lm_eval_runs["dummy"].parent.iterdir():  # the samples file and its results_*.json
        (folder / path.name).write_bytes(path.read_bytes())
    report = results_store.import_folder(db, folder, rows)
    assert not report.failed and len(report.imported) == 2
    assert {s.file_format for s in report.imported} == {harness.FORMAT_INSPECT_JSON, harness.FORMAT_LM_EVAL}
    again = results_store.import_folder(db, folder, rows)
    assert not again.imported and len(again.skipped) == 2
    frame = results_frame.load_results(db, include_humans=False)
    assert len(frame) == 3 * len(rows)
    assert set(frame["model"]) == {"mockllm/model", "dummy"}


def test_bad_upload_stores_nothing(tmp_path, suite):
    db = storage.open_db(tmp_path / "results.db")
    with pytest.raises(ResultsImportError, match="not valid JSON"):
        results_store.import_results(db, b'{"version": 2, "status": "success", "eval": {', "broken.json", suite[1])
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


# ---------------------------------------------------------------- hostile files

def make_zip(members: dict, method=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


HEADER = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m/x"}})


def good_sample(sample: dict, **change) -> str:
    record = {"id": sample["id"], "epoch": 1, "input": "q", "output": {"completion": sample["answer"]},
              "scores": {}, "metadata": {}}
    record.update(change)
    return json.dumps(record)


def read_bytes_error(data: bytes, rows, name="log.eval") -> str:
    with pytest.raises(ResultsImportError) as caught:
        harness.parse_bytes(data, name, rows)
    return str(caught.value)


def test_a_hand_made_deflate_log_is_read(suite):
    rows = suite[1]
    data = make_zip({"header.json": HEADER, "samples/a_epoch_1.json": good_sample(rows[0])})
    file_format, read = harness.parse_bytes(data, "log.eval", rows)
    assert file_format == harness.FORMAT_INSPECT_EVAL
    assert [(r["sample_id"], r["model"], r["prompt"], r["response"]) for r in read] == \
        [(rows[0]["id"], "m/x", "t", rows[0]["answer"])]


def test_zip_bomb_is_refused_before_any_member_is_read(suite, monkeypatch):
    bomb = make_zip({"header.json": HEADER, "samples/a_epoch_1.json": b" " * (20 * 1024 * 1024)})
    assert len(bomb) < 100_000
    message = read_bytes_error(bomb, suite[1])
    assert "log.eval" in message and "expands" in message and "zip bomb" in message
    read = []
    monkeypatch.setattr(inspect_ai_logs, "_read_member", lambda *a: read.append(a) or "")
    read_bytes_error(bomb, suite[1])
    assert read == []  # refused from the directory alone


def test_too_many_members_and_too_large_members_are_refused(suite, monkeypatch):
    members = {"header.json": HEADER, **{f"samples/{i}_epoch_1.json": good_sample(suite[1][0]) for i in range(6)}}
    monkeypatch.setattr(inspect_ai_logs, "MAX_ZIP_MEMBERS", 5)
    assert "holds 7 members; the limit is 5" in read_bytes_error(make_zip(members), suite[1])
    monkeypatch.setattr(inspect_ai_logs, "MAX_ZIP_MEMBERS", 1000)
    monkeypatch.setattr(harness_entries, "MAX_ENTRY_BYTES", 100)
    message = read_bytes_error(make_zip(members), suite[1])
    assert "member header.json" in message or "member samples/" in message
    assert "per member" in message


@pytest.mark.parametrize("twice", ["header.json", "samples/a_epoch_1.json"])
def test_an_eval_log_with_two_members_of_one_name_is_refused_naming_both(suite, tmp_path, twice):
    """Issue 19: the second header.json was used silently (zipfile keeps the last of a name)."""
    rows = suite[1]
    forged = HEADER.replace('"m/x"', '"m/forged"')
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it writes
        archive.writestr("header.json", HEADER)
        archive.writestr("samples/a_epoch_1.json", good_sample(rows[0]))
        archive.writestr(twice, forged if twice == "header.json" else good_sample(rows[1]))
    message = read_bytes_error(buffer.getvalue(), rows, name="two-headers.eval")
    assert "two-headers.eval" in message and f"member {twice}" in message and "2 members of this name" in message
    path = tmp_path / "two-headers.eval"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(ResultsImportError, match=f"two-headers.eval.*member {twice}"):
        harness.read_log(path, rows)


def test_deep_json_in_a_member_names_the_member(suite):
    deep = "[" * 50_000 + "]" * 50_000
    data = make_zip({"header.json": HEADER, "samples/x_epoch_1.json": deep})
    message = read_bytes_error(data, suite[1])
    assert "member samples/x_epoch_1.json" in message and "nest more than" in message


def test_deep_json_in_a_json_log_is_a_message(suite):
    deep = '{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": [' \
           + "[" * 200_000 + "]" * 200_000 + "]}"
    message = read_bytes_error(deep.encode(), suite[1], "log.json")
    assert "log.json" in message and "samples[0]" in message and "nested too deeply" in message


@pytest.mark.parametrize("change, expected", [
    ({"id": [1]}, "sample 'id' must be a string or an integer"),
    ({"epoch": "one"}, "sample 'epoch' must be a positive integer"),
    ({"output": None}, "no 'output' with a completion"),
])
def test_wrong_types_in_inspect_samples(suite, change, expected):
    data = make_zip({"header.json": HEADER, "samples/a_epoch_1.json": good_sample(suite[1][0], **change)})
    message = read_bytes_error(data, suite[1])
    assert "member samples/a_epoch_1.json" in message and expected in message


def test_header_without_model_and_archive_without_header(suite):
    no_model = make_zip({"header.json": json.dumps({"version": 2, "eval": {"task": "t"}}),
                         "samples/a_epoch_1.json": good_sample(suite[1][0])})
    assert "member header.json: 'eval.model' must be a non-empty string" in read_bytes_error(no_model, suite[1])
    other_zip = make_zip({"readme.txt": "hello"})
    assert "not an Inspect log" in read_bytes_error(other_zip, suite[1])


def test_truncated_archive_and_log_without_samples(suite):
    assert "without its end record" in read_bytes_error(b"PK\x03\x04" + b"\x00" * 200, suite[1])
    empty = '{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": null}'
    assert "no responses in the log" in read_bytes_error(empty.encode(), suite[1], "empty.json")


def test_damaged_member_is_caught_by_its_checksum(suite):
    data = bytearray(make_zip({"header.json": HEADER, "samples/a_epoch_1.json": good_sample(suite[1][0])},
                              method=zipfile.ZIP_STORED))
    at = data.index(suite[1][0]["answer"].encode(), data.index(b"samples/a_epoch_1.json"))
    data[at] ^= 0x01
    message = read_bytes_error(bytes(data), suite[1])
    assert "member samples/a_epoch_1.json: damaged archive" in message and "CRC" in message


def test_cut_short_json_log_and_unknown_sample(suite):
    log = ('{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": ['
           + good_sample(suite[1][0]) + ", " + good_sample(suite[1][1]))
    message = read_bytes_error(log[:-40].encode(), suite[1], "cut.json")
    assert "cut.json" in message and "samples[1]" in message
    stranger = good_sample(suite[1][0], id="nobody", input="no question here")
    unknown = log.replace(good_sample(suite[1][1]), stranger) + "]}"
    assert "no sample matches harness sample 'nobody'" in read_bytes_error(unknown.encode(), suite[1], "x.json")


@pytest.mark.parametrize("line, expected", [
    ('{"doc_id": "a", "doc": {}, "resps": [["x"]]}', "'doc_id' must be an integer"),
    ('{"doc_id": 0, "doc": [], "resps": [["x"]]}', "'doc' must be an object"),
    ('{"doc_id": 0, "doc": {}, "resps": [[0.5, true]]}', "'resps' must be a list holding a list of response strings"),
    ('{"doc_id": 0, "doc": {"id": 1}, "resps": ', "not valid JSON"),
])
def test_wrong_lm_eval_lines_name_the_line(suite, tmp_path, line, expected):
    good = json.dumps({"doc_id": 0, "doc": {"id": suite[1][0]["id"]}, "resps": [["x"]], "metrics": []})
    path = tmp_path / "samples_t_2026-01-01T00-00-00.000001.jsonl"
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ResultsImportError) as caught:
        harness.read_log(path, suite[1])
    assert f"{path}:2: " in str(caught.value) and expected in str(caught.value)


def test_score_writes_nothing_for_a_bad_log(suite, tmp_path, capsys):
    bad = tmp_path / "bad.eval"
    bad.write_bytes(make_zip({"header.json": HEADER, "samples/a_epoch_1.json": "[" * 5000}))
    out = tmp_path / "scored.jsonl"
    assert cli.main(["score", str(bad), "--samples", str(suite[0]), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: member samples/a_epoch_1.json" in err and "nothing imported" in err
    assert not out.exists()


# ---------------------------------------------------------------- export-task

def test_export_task_refuses_mistakes_and_writes_nothing(suite, tmp_path, capsys):
    suite_path = suite[0]
    out = tmp_path / "task"
    assert cli.main(["export-task", "--harness", "lm-eval", "--suite", str(suite_path), "--setting", "naive",
                     "--shots", "2", "--out", str(out)]) == 2
    assert "--shots applies to few-shot settings" in capsys.readouterr().err and not out.exists()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "other_task.yaml").write_text("task: other\n", encoding="utf-8")
    assert cli.main(["export-task", "--harness", "lm-eval", "--suite", str(suite_path), "--setting", "naive",
                     "--out", str(taken)]) == 2
    assert "already holds other task files (other_task.yaml)" in capsys.readouterr().err
    assert sorted(p.name for p in taken.iterdir()) == ["other_task.yaml"]


def test_exported_dataset_holds_our_ids_and_the_settings_prompts(suite, tmp_path):
    from structext_core.structext_eval import prompts

    _, rows = suite
    harness_export.export_task("inspect", rows, "few-shot", tmp_path / "t", shots=2)
    records = [json.loads(line) for line in (tmp_path / "t" / "dataset.jsonl").read_text().splitlines()]
    expected = prompts.build_prompts(rows, "few-shot", 2)
    assert [r["id"] for r in records] == [s["id"] for s in rows]
    assert [r["prompt"] for r in records] == [p["prompt"] for p in expected]
    assert [r["answer"] for r in records] == [s["answer"] for s in rows]


# ---------------------------------------------------------------- the Results page

def test_results_page_imports_an_uploaded_inspect_log_and_refuses_a_bomb(inspect_logs, suite, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from structext_core.studio import accounts

    samples_mod.write_jsonl(tmp_path / "suites" / "test-hard.jsonl", suite[1])
    db = storage.open_db(tmp_path / "structext.db")
    admin = accounts.create_user(db, "lead", "password-123", "admin")
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_RESULTS_DIR", str(tmp_path / "incoming"))
    at = AppTest.from_file(str(ROOT / "pages" / "results.py"), default_timeout=60)
    at.session_state["user"] = admin
    at.run()
    assert {".eval", ".json", ".jsonl"} <= set(at.file_uploader(key="rs_upload").proto.type)

    def upload(name: str, data: bytes) -> None:
        if "rs_upload" not in [u.key for u in at.get("file_uploader")]:  # closed once results are in: open it
            at.session_state["rs_load_open"] = True
            at.run()
        at.file_uploader(key="rs_upload").set_value((name, data, "application/octet-stream"))
        at.run()
        next(b for b in at.button if b.label == "Import uploaded files").click().run()
        assert not at.exception, [e.value for e in at.exception]

    upload("run.eval", inspect_logs["eval"].read_bytes())
    assert any(f"Imported {len(suite[1])} results from **run.eval** (inspect-eval format; models mockllm/model"
               in s.value for s in notes(at, "success"))
    bomb = make_zip({"header.json": HEADER, "samples/a_epoch_1.json": b" " * (20 * 1024 * 1024)})
    upload("bomb.eval", bomb)
    error, = notes(at, "error")
    assert "**bomb.eval** was not imported, nothing was stored" in error.value and "zip bomb" in error.value
    assert storage.open_db(tmp_path / "structext.db").execute("SELECT COUNT(*) FROM results").fetchone()[0] \
        == len(suite[1])


# ---------------------------------------------------------------- Real-Test as a suite (issue 12, point 4)

def test_an_approved_campaign_export_lands_as_a_suite_the_app_uses(tmp_path, monkeypatch):
    from structext_core.structext_eval import campaign, rewrite
    from structext_core.studio import accounts

    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "structext.db")
    admin = accounts.create_user(db, "lead", "password1", "admin")
    annotator = accounts.create_user(db, "ann1", "password1", "annotator")
    test_rows = [s for t in (8, 9, 13) for s in suites.generate_cell(t, 1, 1, 1, suite="test")]
    cid = campaign.create_campaign(db, "Spring 2026", test_rows, 3, [annotator["id"]], admin)
    for row in campaign.list_items(db, cid):
        sample = campaign.get_item(db, row["id"])["sample"]
        mapping = rewrite.mechanical_mapping(sample)
        campaign.submit(db, row["id"], annotator, rewrite.apply_mapping(sample, mapping), mapping)
        campaign.review(db, row["id"], admin, "approved")
    suites_dir = tmp_path / "suites"
    samples_mod.write_jsonl(suites_dir / "test.jsonl", test_rows)
    result = campaign.export_campaign(db, cid, tmp_path / "export", suites_dir=suites_dir)
    assert result.suite == suites_dir / "real-test-spring-2026.jsonl"
    assert result.suite.read_bytes() == result.jsonl.read_bytes()
    assert result.suite in suites.suite_files(suites_dir)  # the Results page offers it
    real_rows = samples_mod.read_jsonl(result.suite)

    # prompts, export-task and score work on it like on any suite
    assert cli.main(["prompts", "--samples", str(result.suite), "--setting", "naive",
                     "--out", str(tmp_path / "p.jsonl")]) == 0
    assert cli.main(["export-task", "--harness", "inspect", "--suite", str(result.suite), "--setting", "naive",
                     "--out", str(tmp_path / "task")]) == 0
    # ... and the Test vs Real-Test view compares a model on both
    for rows, name in ((test_rows, "test.jsonl"), (real_rows, "real.jsonl")):
        lines = [json.dumps({"sample_id": s["id"], "model": "m", "prompt": "naive",
                             "response": f"### Answer:\n{s['answer']}"}) for s in rows]
        results_store.import_results(db, "\n".join(lines).encode(), name, rows)
    frame = result_options.with_value(results_frame.load_results(db, include_humans=False))
    compared = comparisons.test_vs_real_frame(frame, n_boot=20)
    assert set(compared["set"]) == {"Test", "Real-Test"} and set(compared["n"]) == {3}


def test_campaign_export_without_a_suites_folder_writes_no_suite(tmp_path, monkeypatch):
    from structext_core.structext_eval import campaign

    monkeypatch.setattr(campaign.export, "export_samples", lambda db, cid: suites.generate_cell(8, 1, 1, 1, suite="real-test"))
    db = storage.open_db(tmp_path / "structext.db")
    result = campaign.export_campaign(db, 1, tmp_path / "export")
    assert result.suite is None and result.jsonl.exists()


def test_the_campaign_page_export_adds_the_suite(request):
    from structext_core.structext_eval import campaign
    from tests.pages.test_page_campaign_admin import button, run_as, submitted_campaign

    env = request.getfixturevalue("campaign_page_env")
    cid = submitted_campaign(env, n=2)
    for row in campaign.list_items(env["db"], cid):
        campaign.review(env["db"], row["id"], env["admin"], "approved")
    at = run_as(env["admin"], ca_section="Progress & export")
    at.text_input(key=f"ca_export_dir_{cid}").input(str(env["tmp"] / "export")).run()
    button(at, "Write approved rewrites to the server folder").click().run()
    assert not at.exception
    assert any("added the suite real-test-pilot.jsonl to the suites folder" in s.value for s in at.success)
    suite_path = env["tmp"] / "suites" / "real-test-pilot.jsonl"
    assert suite_path in suites.suite_files(env["tmp"] / "suites")
    assert len(samples_mod.read_jsonl(suite_path)) == 2


@pytest.fixture
def campaign_page_env(isolated_env, monkeypatch):
    """As test_page_campaign_admin's env: an admin, an annotator and a small Test suite."""
    from structext_core.studio import accounts

    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    annotator = accounts.create_user(db, "ann1", "password1", "annotator")
    suite = [s for t in (8, 9, 13) for s in suites.generate_cell(t, 1, 1, 1, suite="test")]
    samples_mod.write_jsonl(isolated_env / "suites" / "test.jsonl", suite)
    return {"db": db, "admin": admin, "ann1": annotator, "suite": suite, "tmp": isolated_env}
