"""The command line: generate, audit, stats, with their errors."""

import json
import multiprocessing.pool
import subprocess
import sys
import time
from pathlib import Path

import pytest

from structext_core.cli.main import main
from structext_core.structext_eval import official, samples, suites
from structext_core.structext_eval.cli import suites as cli_suites

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "structext_core", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_generate_test_suite_and_audit_it_as_a_process(tmp_path):
    out = tmp_path / "test.jsonl"
    proc = run("generate", "--suite", "test", "--seed", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "wrote 3,712 samples" in proc.stdout
    assert "generating test: 3,712/3,712 (100%)" in proc.stderr  # the progress line
    proc = run("audit", str(out))
    assert proc.returncode == 0
    assert proc.stdout.strip().splitlines()[-1] == "audited 3712 samples: 3712 agree, 0 disagree, 0 unsupported"


def test_generate_is_byte_identical_whatever_the_number_of_jobs(tmp_path):
    args = ["generate", "--suite", "custom", "--depth", "1-2", "--width", "1,2", "--per-task", "5", "--seed", "9"]
    assert main(args + ["--out", str(tmp_path / "a.jsonl"), "--jobs", "1"]) == 0
    assert main(args + ["--out", str(tmp_path / "b.jsonl"), "--jobs", "2"]) == 0
    a, b = (tmp_path / "a.jsonl").read_bytes(), (tmp_path / "b.jsonl").read_bytes()
    assert a == b and a.count(b"\n") == 29 * 4 * 5


def test_generate_official_dir_reads_back(tmp_path, capsys):
    assert main(["generate", "--suite", "custom", "--depth", "2", "--per-task", "1", "--out", str(tmp_path / "c.jsonl"),
                 "--official-dir", str(tmp_path / "off")]) == 0
    capsys.readouterr()
    assert main(["audit", str(tmp_path / "off")]) == 0
    assert capsys.readouterr().out.strip().endswith("audited 29 samples: 29 agree, 0 disagree, 0 unsupported")


@pytest.mark.parametrize("args,message", [
    (["generate", "--suite", "test", "--depth", "3", "--out", "x.jsonl"], "--depth only applies to --suite custom"),
    (["generate", "--suite", "custom", "--depth", "4", "--width", "4", "--out", "x.jsonl"], "nodes per document"),
    (["generate", "--suite", "custom", "--tasks", "31", "--out", "x.jsonl"], "unknown task"),
])
def test_generate_errors_are_messages(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x.jsonl").exists()


def test_audit_reports_disagreements_and_unreadable_files(tmp_path, capsys):
    rows = suites.generate_cell(6, 2, 1, 3, seed=1)
    true_answer = rows[1]["answer"]
    rows[1] = dict(rows[1], answer="99")
    good = tmp_path / "s.jsonl"
    samples.write_jsonl(good, rows)
    (tmp_path / "broken.json").write_text("{ not json")
    (tmp_path / "latin1.json").write_bytes('{"Question": "caf\xe9"}'.encode("latin-1"))
    bad_lines = tmp_path / "bad.jsonl"
    bad_lines.write_text(json.dumps(rows[0]) + "\n{oops\n" + json.dumps({"id": "x"}) + "\n")
    report = tmp_path / "report.jsonl"
    code = main(["audit", str(good), str(tmp_path / "broken.json"), str(tmp_path / "latin1.json"), str(bad_lines),
                 str(tmp_path / "missing.json"), "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.strip().splitlines()[-1] == "audited 9 samples: 3 agree, 1 disagree, 5 unsupported"
    assert "broken.json: not valid JSON" in out
    assert "latin1.json: not UTF-8 text" in out
    assert f"{bad_lines}:2: not valid JSON" in out
    assert f"{bad_lines}:3: missing field(s)" in out
    assert "missing.json: no such file or folder" in out
    lines = [json.loads(l) for l in report.read_text().splitlines()]
    assert len(lines) == 9
    wrong = next(l for l in lines if l["status"] == "disagree")
    assert wrong["claimed"] == "99" and wrong["solver"] == true_answer and "differs" in wrong["reason"]


def test_audit_exit_status_and_traceback_free_output_as_a_process(tmp_path):
    (tmp_path / "x.json").write_text("[1, 2]")
    proc = run("audit", str(tmp_path / "x.json"))
    assert proc.returncode == 1
    assert "expected a JSON object" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    # The contract (DESIGN.md) is exactly "audited N samples: ...", for one sample too.
    assert proc.stdout.strip().splitlines()[-1] == "audited 1 samples: 0 agree, 0 disagree, 1 unsupported"


def test_stats_prints_counts_and_lengths(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    samples.write_jsonl(path, suites.generate_cell(8, 2, 1, 4) + suites.generate_cell(1, 1, 1, 2))
    assert main(["stats", str(path)]) == 0
    out = capsys.readouterr().out
    assert "json" in out and "csv" in out and "(2, 1)" in out and "6 samples" in out


def test_stats_on_a_malformed_file_names_the_line(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": 1}\n')
    assert main(["stats", str(path)]) == 2
    assert "line 1: missing field(s)" in capsys.readouterr().err


# ---- generate: sizes validated before anything is built; streamed output (issue 11) --------


def generate_status(args):
    """Exit status of ``main(args)``, argparse's own errors included."""
    try:
        return main(args)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("args,message", [
    (["--depth", "1-1000000000"], "holds 1,000,000,000 values or more; a list takes at most 1,000"),
    (["--tasks", "1-5,1-999"], "a list takes at most 1,000"),
    (["--depth", "3-1"], "the range 3-1 runs backwards"),
    (["--tasks", "1-5,3"], "'1-5,3' names 3 more than once"),
    (["--depth", "100000"], "more than 60,000 nodes per document; the limit is 60,000 nodes per document "
                            "(add --allow-large to go beyond it deliberately)"),
    (["--depth", "100000", "--allow-large", "--tasks", "8"], "of memory to build"),
    (["--per-task", "1000000000"], "per-task 1,000,000,000 is above the limit of 10,000 samples per task and grid "
                                   "cell (add --allow-large"),
    (["--per-task", "1000000000", "--allow-large"], "GB of disk space"),
    (["--csv-rows", "100000000", "--tasks", "1"], "csv-rows 100,000,000 is above the limit of 100,000 rows per "
                                                  "table (add --allow-large"),
    (["--csv-rows", "1000000000000", "--tasks", "1", "--allow-large"], "of memory to build"),
    (["--col", "51"], "col 51 is above the limit of 50 (add --allow-large"),
    (["--depth", "6", "--col", "50", "--tasks", "8"], "characters of JSONL; the limit is 1,000,000,000 characters "
                                                      "(add --allow-large"),
    (["--depth", "1", "--width", "1-1000", "--per-task", "10000", "--tasks", "1"],
     "samples; the limit is 1,000,000 samples (add --allow-large"),
    (["--per-task", "0"], "per-task count must be at least 1, got 0"),
    (["--per-task", "-3"], "per-task count must be at least 1, got -3"),
    (["--col", "0"], "col must be at least 1, got 0"),
    (["--csv-rows", "0"], "csv-rows must be at least 1, got 0"),
    (["--jobs", "1000"], "--jobs must be between 0 (automatic) and 64"),
])
def test_absurd_generate_sizes_are_refused_at_once(tmp_path, capsys, args, message):
    out = tmp_path / "x.jsonl"
    started = time.monotonic()
    assert generate_status(["generate", "--suite", "custom", *args, "--out", str(out)]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()[-1]) < 400
    assert list(tmp_path.iterdir()) == []


def test_allow_large_lifts_a_default_limit_deliberately(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(suites, "MAX_PER_TASK", 2)
    args = ["generate", "--suite", "custom", "--tasks", "1", "--per-task", "3", "--out", str(tmp_path / "x.jsonl")]
    assert main(args) == 2
    assert "above the limit of 2 samples per task and grid cell (add --allow-large" in capsys.readouterr().err
    assert main(args + ["--allow-large"]) == 0
    assert len((tmp_path / "x.jsonl").read_text().splitlines()) == 3


@pytest.mark.parametrize("kind", ["folder", "under a file", "device"])
def test_generate_out_that_cannot_be_written_is_one_line_and_writes_nothing(tmp_path, capsys, kind):
    (tmp_path / "file").write_text("x")
    out = {"folder": tmp_path, "under a file": tmp_path / "file" / "x.jsonl", "device": "/dev/null"}[kind]
    assert main(["generate", "--suite", "custom", "--tasks", "1", "--per-task", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --out ") and len(err.splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"] and (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("command", [
    ["score", "r.jsonl", "--samples", "s.jsonl", "--out"],
    ["prompts", "--samples", "s.jsonl", "--setting", "naive", "--out"],
    ["run", "--base-url", "http://localhost:9/v1", "--model", "m", "--setting", "naive", "--samples", "s.jsonl",
     "--out"],
])
def test_results_commands_refuse_an_out_folder_before_any_work(tmp_path, capsys, command):
    assert main(command + [str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --out {tmp_path}: is a folder; give a file name inside it, such as {tmp_path / 'out.jsonl'}"
    assert list(tmp_path.iterdir()) == []


def small_grid():
    return suites.SuiteConfig("custom", depths=(1, 2, 3), widths=(1, 2), per_cell=5, task_ids=(1, 8, 15, 20, 25, 27))


@pytest.mark.parametrize("jobs", [1, 2, 3])  # 2, 3: two or three workers build, this process writes
def test_streamed_file_equals_the_in_memory_suite(tmp_path, monkeypatch, jobs):
    monkeypatch.setattr(cli_suites, "CHUNK_SAMPLES", 2)  # cells of 5 go out in pieces of 2, 2 and 1
    monkeypatch.setattr(cli_suites, "PARALLEL_MIN_NODES", 0)  # the worker pool even for a small grid
    reference = "".join(samples.to_jsonl_line(row) for row in suites.generate_suite(small_grid(), seed=4))
    out = tmp_path / "s.jsonl"
    assert main(["generate", "--suite", "custom", "--depth", "1-3", "--width", "1,2", "--per-task", "5",
                 "--tasks", "1,8,15,20,25,27", "--seed", "4", "--jobs", str(jobs), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == reference
    assert reference.count("\n") == 6 * 3 * 2 * 5


def test_workers_hold_at_most_the_pieces_and_characters_allowed_in_flight(monkeypatch):
    monkeypatch.setattr(cli_suites, "CHUNK_SAMPLES", 2)
    monkeypatch.setattr(cli_suites, "PARALLEL_MIN_NODES", 0)
    monkeypatch.setattr(cli_suites, "IN_FLIGHT_PIECES", 3)
    monkeypatch.setattr(cli_suites, "IN_FLIGHT_CHARS", 1)  # each piece alone is over: one at a time
    handed_out = []
    real_apply = multiprocessing.pool.Pool.apply_async
    monkeypatch.setattr(multiprocessing.pool.Pool, "apply_async",
                        lambda pool, *a, **k: handed_out.append(k) or real_apply(pool, *a, **k))
    stream = cli_suites.stream_chunks(small_grid(), seed=4, jobs=2, encode=True)
    first = next(stream)
    assert len(first) == 2 and len(handed_out) == 1  # the next piece is handed out only once this one is taken
    lines = first + [line for chunk in stream for line in chunk]
    assert "".join(lines) == "".join(samples.to_jsonl_line(row) for row in suites.generate_suite(small_grid(), seed=4))


def test_generation_is_a_stream_not_a_list(monkeypatch):
    built = []
    real = suites.generate_cell
    monkeypatch.setattr(suites, "generate_cell", lambda *a, **k: built.append(a) or real(*a, **k))
    monkeypatch.setattr(cli_suites, "CHUNK_SAMPLES", 2)
    stream = cli_suites.stream_chunks(small_grid(), seed=0, jobs=1, encode=True)
    first = next(stream)
    assert len(first) == 2 and len(built) == 1  # one piece built, not the suite's 180 samples
    assert sum(len(chunk) for chunk in stream) == small_grid().size - 2


def test_an_interrupted_generate_leaves_the_old_file_and_no_half_file(tmp_path, capsys, monkeypatch):
    out = tmp_path / "s.jsonl"
    out.write_text("the old suite\n")
    pieces = []

    def interrupted(job):
        pieces.append(job)
        if len(pieces) == 3:
            raise KeyboardInterrupt
        return real(job)

    real = cli_suites._chunk_lines
    monkeypatch.setattr(cli_suites, "_chunk_lines", interrupted)
    assert main(["generate", "--suite", "test", "--jobs", "1", "--out", str(out)]) == 130
    assert out.read_text() == "the old suite\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_official_dir_of_someone_else_is_refused_before_anything_is_written(tmp_path, capsys):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("keep")
    out = tmp_path / "x.jsonl"
    assert main(["generate", "--suite", "custom", "--tasks", "1", "--per-task", "1", "--out", str(out),
                 "--official-dir", str(theirs)]) == 2
    assert "already holds files that no StrucText export wrote" in capsys.readouterr().err
    assert not out.exists() and [p.name for p in theirs.iterdir()] == ["notes.txt"]


def test_official_dir_re_export_replaces_our_layout(tmp_path, capsys):
    layout = tmp_path / "official"
    base = ["generate", "--suite", "custom", "--tasks", "8", "--out", str(tmp_path / "x.jsonl"),
            "--official-dir", str(layout)]
    assert main(base + ["--per-task", "3"]) == 0
    (layout / "mine.txt").write_text("keep")
    assert main(base + ["--per-task", "1"]) == 0
    assert len(official.find_files(layout)) == 1 and (layout / "mine.txt").read_text() == "keep"
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"wrote 1 files in the authors' layout under {layout}"


def test_out_inside_the_official_dir_is_refused(tmp_path, capsys):
    layout = tmp_path / "layout"
    assert main(["generate", "--suite", "custom", "--tasks", "1", "--per-task", "1", "--out", str(layout / "x.jsonl"),
                 "--official-dir", str(layout)]) == 2
    assert "lies inside --official-dir" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_audit_report_that_is_a_folder_is_refused_before_the_audit(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    samples.write_jsonl(path, suites.generate_cell(8, 1, 1, 1))
    assert main(["audit", str(path), "--report", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: --report {tmp_path}: is a folder; give a file name inside it, "
                                               f"such as {tmp_path / 'out.jsonl'}")


def test_score_metric_chooses_which_rouge_l_is_score(tmp_path, capsys):
    """--metric paper makes the authors' metric `score`; both stay in every row, named."""
    from structext_core.cli.main import main
    from structext_core.structext_eval import suites

    sample = suites.generate_sample(8, 1, 1, seed=0, suite="custom")
    samples_file = tmp_path / "samples.jsonl"
    samples_file.write_text(json.dumps(sample) + "\n")
    upper = {"sample_id": sample["id"], "model": "m", "prompt": "naive", "response": sample["answer"].upper()}
    results_file = tmp_path / "results.jsonl"
    results_file.write_text(json.dumps(upper) + "\n")
    rows = {}
    for metric in ("strict", "paper"):
        out = tmp_path / f"{metric}.jsonl"
        assert main(["score", str(results_file), "--samples", str(samples_file), "--out", str(out),
                     "--metric", metric]) == 0
        assert f"metric {metric}" in capsys.readouterr().out
        rows[metric] = json.loads(out.read_text())
    strict, paper = rows["strict"], rows["paper"]
    assert strict["metric"] == "strict" and paper["metric"] == "paper"
    # upper-cased: the strict metric lower-cases (1.0), the authors' keeps case (below 0.75: 0)
    assert strict["score"] == strict["score_strict"] == 1.0
    assert paper["score"] == paper["score_paper"] == 0.0 and paper["score_strict"] == 1.0
    with pytest.raises(SystemExit) as refused:
        main(["score", str(results_file), "--samples", str(samples_file), "--metric", "bogus"])
    assert refused.value.code == 2


def test_score_into_a_closed_pipe_ends_quietly_with_its_out_file_complete(tmp_path):
    """`score ... | head -1`: --out is written before anything is printed, and the closed pipe
    stops the command without a traceback (status 141, as a tool stopped by SIGPIPE)."""
    rows = suites.generate_suite("test", seed=0)[:1500]
    samples_file = tmp_path / "samples.jsonl"
    samples.write_jsonl(samples_file, rows)
    results_file = tmp_path / "results.jsonl"
    results_file.write_text("".join(json.dumps({"sample_id": r["id"], "model": "m", "prompt": "naive",
                                                "response": r["answer"]}) + "\n" for r in rows))
    out = tmp_path / "scored.jsonl"
    # one summary row per sample: far more than a pipe holds, so printing meets the closed pipe
    command = (f"{sys.executable} -m structext_core score {results_file} --samples {samples_file} --out {out} "
               f"--by sample_id --n-boot 0 --no-bleu | head -1; echo \"status ${{PIPESTATUS[0]}}\" >&2")
    proc = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("scored 1500 responses") and proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert "status 141" in proc.stderr
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(scored) == 1500 and all(row["score"] == 1.0 for row in scored)


def test_generate_loads_no_scoring_and_no_other_verbs_modules(tmp_path):
    """`generate` is timed against the original generator as a whole process, imports included: the
    scorers (numpy, sacrebleu, rapidfuzz), the other benchmarks' verbs and the shared verbs are not
    loaded for it (they cost it about a third of a second, issue 46)."""
    out = tmp_path / "small.jsonl"
    script = ("import sys; from structext_core.cli.main import main; "
              f"code = main(['generate', '--suite', 'test', '--seed', '0', '--out', {str(out)!r}]); "
              "print(sorted(m for m in sys.modules if m in {'numpy', 'sacrebleu', 'rapidfuzz', "
              "'structext_core.evaluation.scoring', 'structext_core.labset.cli', 'structext_core.labset.dataset', "
              "'structext_core.cli.crowd', 'structext_core.cli.items', 'structext_core.cli.studies'})); sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.exists()
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    help_text = run("--help").stdout  # the whole list still names every verb
    for verb in ("generate", "items", "study", "crowd", "labset"):
        assert verb in help_text


def test_generate_builds_with_a_second_process_only_when_a_core_is_idle(tmp_path, monkeypatch):
    """On a busy machine a second process competes with the first for the same cores (issue 46):
    the default is two processes only while fewer tasks are runnable than there are cores."""
    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(cli_suites.os, "cpu_count", lambda: 2)
    loadavg.write_text("0.10 0.20 0.30 1/250 4242\n")  # this process alone
    assert cli_suites.default_jobs(str(loadavg)) == 2
    loadavg.write_text("8.10 9.20 7.30 7/259 4242\n")  # six others runnable on two cores
    assert cli_suites.default_jobs(str(loadavg)) == 1
    loadavg.write_text("garbled")
    assert cli_suites.default_jobs(str(loadavg)) == 2
    assert cli_suites.default_jobs(str(tmp_path / "missing")) == 2
    monkeypatch.setattr(cli_suites.os, "cpu_count", lambda: 1)
    loadavg.write_text("0.10 0.20 0.30 1/250 4242\n")
    assert cli_suites.default_jobs(str(loadavg)) == 1
