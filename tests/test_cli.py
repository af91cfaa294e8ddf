"""The command line: generate, audit, stats, with their errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from structext_core import samples, suites
from structext_core.cli import main

ROOT = Path(__file__).resolve().parent.parent


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
