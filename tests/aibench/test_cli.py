"""``python -m structext_core aibench generate|import|score`` as processes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "structext_core", "aibench", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_generate_import_score(tmp_path):
    made = run("generate", "--out", str(tmp_path / "syn"), "--seed", "3", "--papers", "2")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("wrote 2 papers, ") and made.stdout.rstrip().endswith(
        f"questions and 12 images (6 systems) to {tmp_path / 'syn'}")
    stored = run("import", str(tmp_path / "syn"), "--out", str(tmp_path / "store"))
    assert stored.returncode == 0, stored.stderr
    assert "imported 2 papers, " in stored.stdout and "12 images of 6 systems and 0 aesthetic scores" in stored.stdout
    truth = [json.loads(line) for line in (tmp_path / "syn" / "truth.jsonl").read_text().splitlines()]
    rows = [{"paper_id": r["paper_id"], "question_id": r["question_id"], "system": r["system"], "solver": "reader",
             "prediction": r["truth"] if r["level"] != 4 else f"The answer is {r['truth']}."} for r in truth]
    rows[0]["prediction"] = "I am not sure."
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    scored = run("score", str(tmp_path / "p.jsonl"), "--data", str(tmp_path / "store"), "--out", str(tmp_path / "t.csv"))
    assert scored.returncode == 0, scored.stderr
    lines = scored.stdout.splitlines()
    assert lines[0].split() == ["system", "solver", "C", "T", "P", "S", "A", "O"]
    assert lines[1].startswith("Original Image  reader")
    assert len(lines) == 1 + 6 + 2
    assert "chance (%): C 50.0, T 25.0, P 25.0, S 25.0" in lines[-2]
    assert lines[-1].startswith("replies without a clear letter: 1;")
    expected = json.loads((tmp_path / "syn" / "expected.json").read_text())["perfect_solver"]
    blank = next(line for line in lines if line.startswith("Blank Image"))
    assert f"{expected['Blank Image']['1']:.2f} [" in blank
    by = run("score", str(tmp_path / "p.jsonl"), "--data", str(tmp_path / "store"), "--by", "conference")
    assert by.returncode == 0 and by.stdout.split()[:4] == ["system", "solver", "conference", "level"]


def test_a_broken_folder_is_refused_with_every_problem_and_nothing_stored(tmp_path):
    assert run("generate", "--out", str(tmp_path / "syn"), "--papers", "1").returncode == 0
    paper = next((tmp_path / "syn" / "papers").iterdir())
    document = json.loads(paper.read_text())
    document["questions"][0]["correct_option"] = "Z"
    paper.write_text(json.dumps(document))
    (tmp_path / "syn" / "images" / "Blank Image" / "ghost.png").write_bytes(b"not an image")
    result = run("import", str(tmp_path / "syn"), "--out", str(tmp_path / "store"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"papers/{paper.name}: questions[0].correct_option: 'Z' is not among the options (A, B)" in result.stderr
    assert "images/Blank Image/ghost.png: 'ghost' is not the id of an imported paper" in result.stderr
    assert not (tmp_path / "store").exists()
    again = run("generate", "--out", str(tmp_path / "syn"))
    assert again.returncode == 2 and "is not empty" in again.stderr
