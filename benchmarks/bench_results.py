"""Benchmark: 100,000 scored result rows to the Results page's first heatmap, and the import of
one Test-Hard result file.

Builds a temporary database holding ``--rows`` scored results (default 100,000: 12 models x
4 prompts over the Test-Hard grid of 29 tasks x 3 depths x 3 widths x 8 samples, cut to the
row count), stored through ``results_store.save_scored`` exactly as an import stores them.
The scores are drawn at random (the page's cost does not depend on their values; scoring the
responses is the import's cost, benchmarked in bench_rouge.py).

Then, in this one process, it times (cold, caches cleared before every repeat):

1. the core path: read the rows from SQLite, make the value column, aggregate the
   model x format cells with bootstrap intervals, build the Altair chart and serialise it;
2. the whole page: ``AppTest`` running ``pages/results.py`` until the first heatmap is drawn
   (server time: the script run, including Streamlit's Arrow serialisation of the chart).

Run from the repository root:

    .venv/bin/python benchmarks/bench_results.py               # 100,000 rows, 3 repeats
    .venv/bin/python benchmarks/bench_results.py --rows 200000 --repeats 5

The target (issue 6) is at most 2 s of server time to the first heatmap for 100,000 rows.

Then the import (issue 12: importing Test-Hard result files on the page took 12.7 s for two
files; the target is at most 2 s for one). It generates the Test-Hard suite (2,088 samples,
41 MB) and a result file answering every sample (a mix of what models write: the answer after
``### Answer:``, reasoning first, a perturbed answer, an upper-cased one, a refusal), and times,
side by side:

1. the previous path: the suite file read and parsed for the import, as the page did on every
   click, then validation, scoring and storing;
2. the import now, cold: the suite parsed once (``results_store.sample_index``) and nothing
   scored before in the process (each answer prepared for the first time); and after the
   page's warm-up (``results_store.warm_up``, started when an admin opens the page, which
   parses the suite and prepares its answers in the background while they pick a file);
3. the import now, warm: a second file against the same suite (parsed suite reused, answers
   already prepared), the usual case of an admin loading a run's files one after the other;
4. its parts alone: reading the suite; scoring the same (answer, response) pairs with
   ``scoring.score_many``, cold; storing the scored rows (``save_scored``);
5. the page: ``AppTest`` clicking "Import uploaded files" with the file, twice (the script run,
   including the rerun that redraws the heatmap with the new rows).

    .venv/bin/python benchmarks/bench_results.py --import-only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from structext_core.evaluation import fast_bleu, paper_rouge, scoring
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval import results_frame, results_store
from structext_core.structext_eval.samples import read_jsonl, write_jsonl
from structext_core.structext_eval.suites import SUITES, generate_suite, sample_id
from structext_core.structext_eval.tasks import TASKS
from structext_core.studio import accounts, storage
from structext_core.views import charts, heatmaps, result_options

ROOT = Path(__file__).resolve().parent.parent
# The page imports structext_core.ui from the project folder, which `streamlit run app.py` puts on the
# path (the script's folder) and pytest too (pythonpath in pyproject.toml); so does this script.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODELS = [f"model-{i:02d}" for i in range(12)]
PROMPTS = ["naive", "self-cot", "hint", "few-shot"]


def synthetic_rows(n_rows: int, seed: int = 0) -> list[dict]:
    """``n_rows`` scored rows over the Test-Hard grid, scores drawn per model skill."""
    rng = np.random.default_rng(seed)
    config = SUITES["test-hard"]
    cells = [(t, d, w, i) for t, d, w in config.cells() for i in range(config.per_cell)]
    rows = []
    for m, model in enumerate(MODELS):
        skill = 0.2 + 0.6 * m / len(MODELS)
        for prompt in PROMPTS:
            draws = rng.random(len(cells))
            for (task_id, depth, width, index), u in zip(cells, draws):
                if len(rows) == n_rows:
                    return rows
                task = TASKS[task_id]
                p_right = skill / (1 + 0.5 * (depth - 1) + 0.3 * (width - 1))
                rouge = 1.0 if u < p_right else float(u * 0.9)
                rows.append({
                    "sample_id": sample_id("test-hard", task_id, depth, width, index), "model": model,
                    "prompt": prompt, "suite": "test-hard", "language": task.language, "task": task.category,
                    "task_id": task_id, "depth": depth, "width": width, "response": "### Answer:\nx",
                    "answer_extracted": "x", "rouge_l": rouge, "score": rouge if rouge >= 0.75 else 0.0,
                    "exact_match": int(rouge == 1.0), "bleu": rouge * 0.9, "rouge_l_paper": rouge * 0.95,
                })
    return rows


def core_first_heatmap(db_path: Path) -> dict[str, float]:
    """Seconds per step of the core path to the first heatmap (model x format)."""
    times = {}
    start = time.perf_counter()
    db = storage.open_db(db_path)
    frame = results_frame.load_results(db)
    times["read from SQLite"] = time.perf_counter() - start
    mark = time.perf_counter()
    values = result_options.with_value(frame, "rouge_l", "thresholded", 0.75)
    times["value column"] = time.perf_counter() - mark
    mark = time.perf_counter()
    cells = heatmaps.heatmap_frame(values, "model", "format")
    times[f"aggregate + bootstrap ({result_options.DEFAULT_N_BOOT} resamples)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    charts.heatmap_chart(cells, "model", "format").to_dict()
    times["chart spec"] = time.perf_counter() - mark
    times["total"] = time.perf_counter() - start
    assert len(frame) > 0 and len(cells) == len(MODELS) * 8
    return times


def page_first_heatmap(db_path: Path, data_dir: Path) -> tuple[float, float]:
    """Seconds of one cold AppTest run of the Results page (first heatmap drawn), and of the
    rerun that follows an interaction (rows switched to task, caches warm)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["STRUCTEXT_DB"] = str(db_path)
    os.environ["STRUCTEXT_DATA_DIR"] = str(data_dir)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "pages" / "results.py"), default_timeout=120)
    at.session_state["user"] = {"id": 1, "username": "bench-reader", "role": "researcher"}  # sees every result
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    if not at.get("vega_lite_chart"):
        raise RuntimeError("the page drew no chart")
    at.selectbox(key="rs_row").set_value("task")
    start = time.perf_counter()
    at.run()
    rerun = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return elapsed, rerun


ISSUE_12_SECONDS_FOR_TWO_FILES = 12.7
IMPORT_GOAL_SECONDS = 2.0


def model_response(answer: str, index: int, rng: random.Random) -> str:
    """What a model writes, in turn: the answer after the marker, reasoning first, a perturbed
    answer, an upper-cased one, a refusal."""
    kind = index % 5
    if kind == 0:
        return "### Answer:\n" + answer
    if kind == 1:
        return "### Reasoning:\nI read the reference and followed the ids.\n### Answer:\n" + answer
    if kind == 2:
        return "### Answer:\n" + " ".join(w for w in answer.split(" ") if rng.random() > 0.15)
    if kind == 3:
        return answer.upper()
    return "I cannot determine the answer from the reference."


def result_file(samples: list[dict], model: str, seed: int) -> bytes:
    rng = random.Random(seed)
    return "\n".join(json.dumps({"sample_id": s["id"], "model": model, "prompt": "naive",
                                 "response": model_response(s["answer"], i, rng)})
                     for i, s in enumerate(samples)).encode()


def forget_prepared_answers() -> None:
    """Empty the scoring caches (each answer prepared once per process): a cold import."""
    for module, name in ((scoring, "prepare_answer"), (fast_bleu, "answer_ngrams"), (paper_rouge, "paper_reference")):
        cached = getattr(module, name, None)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


def _timed(function):
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def import_figures(tmp: Path) -> None:
    """Time one Test-Hard result file's import, now and the previous way, and its parts."""
    suites_dir = tmp / "suites"
    samples = generate_suite("test-hard", seed=0)
    suite = suites_dir / "test-hard.jsonl"
    write_jsonl(suite, samples)
    files = {name: result_file(samples, name, seed) for seed, name in enumerate(("model-a", "model-b", "model-c"))}
    print(f"\nimport: Test-Hard suite of {len(samples):,} samples ({suite.stat().st_size / 1e6:.0f} MB), result files "
          f"of {len(samples):,} responses ({len(files['model-a']) / 1e6:.1f} MB each)")

    def cold() -> None:
        results_store.clear_sample_indexes()
        forget_prepared_answers()

    def previous(db, name) -> results_store.ImportSummary:  # the page parsed the suite on every click
        return results_store.import_results(db, files[name], f"{name}.jsonl", results.SampleIndex(read_jsonl(suite)))

    def now(db, name) -> results_store.ImportSummary:
        return results_store.import_results(db, files[name], f"{name}.jsonl", results_store.sample_index(suite))

    cold()
    db = storage.open_db(tmp / "previous.db")
    previous_first, _ = _timed(lambda: previous(db, "model-a"))
    previous_second, _ = _timed(lambda: previous(db, "model-b"))
    cold()
    db = storage.open_db(tmp / "now.db")
    now_first, summary = _timed(lambda: now(db, "model-a"))
    now_second, _ = _timed(lambda: now(db, "model-b"))
    assert summary.n_rows == len(samples)

    # The page starts results_store.warm_up(suite) when an admin opens it (while they pick a
    # file): the import that follows finds the suite parsed and the answers prepared.
    cold()
    db = storage.open_db(tmp / "warm.db")
    warm_seconds, _ = _timed(lambda: results_store.warm_up(suite).join())
    warmed_first, _ = _timed(lambda: now(db, "model-a"))

    cold()
    read_seconds, index = _timed(lambda: results_store.read_sample_index(suite))
    pairs = [(str(s["answer"]), json.loads(line)["response"])
             for s, line in zip(samples, files["model-a"].decode().splitlines())]
    score_seconds, scored = _timed(lambda: scoring.score_many(pairs))
    rows = results.score_results([json.loads(line) for line in files["model-a"].decode().splitlines()], index)
    store_seconds, _ = _timed(lambda: results_store.save_scored(storage.open_db(tmp / "store.db"), rows, "x", "x"))

    print(f"  issue 12 (before):                       {ISSUE_12_SECONDS_FOR_TWO_FILES:5.2f} s for two files, "
          f"{ISSUE_12_SECONDS_FOR_TWO_FILES / 2:.2f} s a file")
    print(f"  previous path (suite parsed per import): {previous_first:5.2f} s first file, {previous_second:5.2f} s next")
    print(f"  now (suite parsed once):                 {now_first:5.2f} s first file, {now_second:5.2f} s next"
          f"   goal <= {IMPORT_GOAL_SECONDS:g} s")
    print(f"  now, after the page's warm-up:           {warmed_first:5.2f} s first file "
          f"(the warm-up itself: {warm_seconds:.2f} s in the background while the admin picks a file)")
    print(f"  parts: read the suite {read_seconds:.2f} s; score_many alone (cold) {score_seconds:.2f} s; "
          f"store {len(rows):,} rows {store_seconds:.2f} s")
    page_first, page_second = page_import(tmp, suites_dir, files)
    print(f"  the page (AppTest click, with the rerun): {page_first:5.2f} s first file, {page_second:5.2f} s next"
          "   (clicked at once after the page opened: the warm-up had little time)")
    page_first, page_second = page_import(tmp, suites_dir, files, wait_for_warm_up=True, db_name="page-warm.db")
    print(f"  the page, clicked after its warm-up:      {page_first:5.2f} s first file, {page_second:5.2f} s next")


def page_import(tmp: Path, suites_dir: Path, files: dict[str, bytes], wait_for_warm_up: bool = False,
                db_name: str = "page.db") -> tuple[float, float]:
    """Seconds of the page's script run when an admin imports a file, for two files in turn;
    with ``wait_for_warm_up``, the first click comes once the page's warm-up has finished (an
    admin who takes a few seconds to pick the file), else at once."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["STRUCTEXT_DB"] = str(tmp / db_name)
    os.environ["STRUCTEXT_DATA_DIR"] = str(suites_dir)
    st.cache_data.clear()
    st.cache_resource.clear()
    results_store.clear_sample_indexes()
    forget_prepared_answers()
    admin = accounts.create_user(storage.open_db(), "bench-admin", "bench-password", "admin")
    at = AppTest.from_file(str(ROOT / "pages" / "results.py"), default_timeout=300)
    at.session_state["user"] = {"id": admin["id"], "username": admin["username"], "role": "admin"}
    at.run()
    if wait_for_warm_up:
        results_store.warm_up(suites_dir / "test-hard.jsonl").join()
    seconds = []
    for name in ("model-b", "model-c"):
        at.file_uploader(key="rs_upload").set_value((f"{name}.jsonl", files[name], "application/json"))
        at.run()
        button = next(b for b in at.button if b.label == "Import uploaded files")
        elapsed, _ = _timed(lambda: button.click().run())
        if at.exception or not any(f"from **{name}.jsonl**" in s.value for s in at.success):
            raise RuntimeError(f"the page did not import {name}: {[e.value for e in at.exception]}")
        seconds.append(elapsed)
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--import-only", action="store_true", help="time the import of a Test-Hard file only")
    args = parser.parse_args()

    if args.import_only:
        with tempfile.TemporaryDirectory() as tmp:
            import_figures(Path(tmp))
        return
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "bench.db"
        start = time.perf_counter()
        rows = synthetic_rows(args.rows)
        upload_id = results_store.save_scored(storage.open_db(db_path), rows, "bench.jsonl", "bench")
        print(f"stored {len(rows):,} scored rows (upload {upload_id}) in {time.perf_counter() - start:.2f} s; "
              f"database {db_path.stat().st_size / 1e6:.1f} MB")

        core = [core_first_heatmap(db_path) for _ in range(args.repeats)]
        print(f"\ncore path to the first heatmap, {args.repeats} cold runs (median, min-max):")
        for step in core[0]:
            values = [c[step] for c in core]
            print(f"  {step:<40} {statistics.median(values):6.3f} s  ({min(values):.3f}-{max(values):.3f})")

        runs = [page_first_heatmap(db_path, Path(tmp) / "suites") for _ in range(args.repeats)]
        page, rerun = [r[0] for r in runs], [r[1] for r in runs]
        print(f"\nwhole page (AppTest script run, caches cleared), {args.repeats} cold runs:")
        print(f"  first heatmap: median {statistics.median(page):.3f} s  (min {min(page):.3f}, max {max(page):.3f})"
              "  target <= 2 s")
        print(f"  rerun after choosing other rows (data cached): median {statistics.median(rerun):.3f} s  "
              f"(min {min(rerun):.3f}, max {max(rerun):.3f})")
    with tempfile.TemporaryDirectory() as tmp:
        import_figures(Path(tmp))


if __name__ == "__main__":
    main()
