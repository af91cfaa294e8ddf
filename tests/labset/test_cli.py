"""``labset check`` and ``labset import``: what a lead runs to bring a set into the app's sets folder."""
from __future__ import annotations

import json

import pytest

from structext_core.cli.main import main
from structext_core.labset import dataset, study
from tests.labset.conftest import samples, write_set


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["labset", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def files(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_check_says_what_the_set_holds_and_how_it_is_scored(lab_set, capsys):
    code, out, err = run(capsys, "check", str(lab_set))
    assert (code, err) == (0, "")
    assert "can be imported" in out
    assert "70 questions: 50 multiple choice, 20 short answer; 10 on an image" in out
    assert "3 strata: maps 24, music 24, tides 22" in out
    assert out.count("scored: ") == 2  # the letter rule and the short answers' rule


def test_check_names_every_line_at_fault_and_exits_2(tmp_path, capsys):
    records = samples()
    records[3]["target"] = "Z"  # a key outside the options
    records[60]["id"] = records[61]["id"]  # a duplicate id
    path = write_set(tmp_path, records)
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == ""
    assert "set.jsonl:4: field 'target': must be one letter among A, B, C, D" in err
    assert "set.jsonl:62: field 'id': '11' is already the id of line 61" in err
    assert "nothing written" in err


def test_import_copies_the_set_and_its_images_and_the_app_reads_it(lab_set, tmp_path, capsys):
    to = tmp_path / "sets"
    code, out, err = run(capsys, "import", str(lab_set), "--to", str(to), "--name", "lab.jsonl")
    assert (code, err) == (0, "")
    assert "imported (70 questions, 10 images copied)" in out
    assert set(files(to)) == {"lab.jsonl"} | {f"images/q{i}.png" for i in range(10)}
    assert files(to)["images/q3.png"] == (lab_set.parent / "images" / "q3.png").read_bytes()
    assert study.available_sets(to) == ["lab.jsonl"]
    assert [i["id"] for i in dataset.load_set(to / "lab.jsonl")] == [i["id"] for i in dataset.load_set(lab_set)]


def test_a_second_set_shares_the_same_images_and_never_replaces_another(lab_set, tmp_path, capsys):
    to = tmp_path / "sets"
    assert run(capsys, "import", str(lab_set), "--to", str(to))[0] == 0
    before = files(to)
    # The same name again: refused, nothing touched.
    code, _, err = run(capsys, "import", str(lab_set), "--to", str(to))
    assert code == 2 and "a set of that name is there already" in err
    assert files(to) == before
    # Another name, the same images (same bytes): they are shared, only the set file is new.
    code, out, _ = run(capsys, "import", str(lab_set), "--to", str(to), "--name", "again.jsonl")
    assert code == 0 and "0 images copied" in out
    assert set(files(to)) - set(before) == {"again.jsonl"}
    # A set whose image would land on another file of that path: refused, nothing written.
    other = tmp_path / "other"
    other.mkdir()
    path = write_set(other, samples(), name="other.jsonl")
    (other / "images" / "q0.png").write_bytes((other / "images" / "q9.png").read_bytes())
    code, _, err = run(capsys, "import", str(path), "--to", str(to))
    assert code == 2 and "another file is there already" in err and "images/q0.png" in err
    assert set(files(to)) - set(before) == {"again.jsonl"}


@pytest.mark.parametrize("name, problem", [("../up.jsonl", "without folders"), ("set.csv", "ending as the set")])
def test_a_name_that_leaves_the_folder_or_changes_the_kind_is_refused(lab_set, tmp_path, capsys, name, problem):
    to = tmp_path / "sets"
    code, _, err = run(capsys, "import", str(lab_set), "--to", str(to), "--name", name)
    assert code == 2 and problem in err
    assert not to.exists() or files(to) == {}


def test_a_set_with_a_problem_or_no_file_writes_nothing(tmp_path, capsys):
    to = tmp_path / "sets"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"input": "one option?", "choices": ["only"], "target": "A"}) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "import", str(bad), "--to", str(to))
    assert code == 2 and "bad.jsonl:1: field 'choices'" in err
    code, _, err = run(capsys, "import", str(tmp_path / "none.jsonl"), "--to", str(to))
    assert code == 2 and "no such file" in err
    assert not to.exists() or files(to) == {}
