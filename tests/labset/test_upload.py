"""A set brought from the page: the uploaded bytes checked and imported by the very functions
``labset check`` and ``labset import`` run (structext_core/labset/upload.py), without Streamlit."""
from __future__ import annotations

import csv
import io
import json

import pytest

from structext_core.cli.main import main
from structext_core.labset import cli, dataset, study, upload
from tests.labset.conftest import samples

GPQA_HEADER = ["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3",
               "Subject", "Difficulty"]
SUBJECTS = ("Biology", "Chemistry", "Physics")
LEVELS = ("easy", "hard")


def gpqa_rows(n: int = 12) -> list[list[str]]:
    return [[f"Which value does experiment {i} give?", f"right {i}", f"wrong one {i}", f"wrong two {i}",
             f"wrong three {i}", SUBJECTS[i % 3], LEVELS[i % 2]] for i in range(n)]


def csv_bytes(header, rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def gpqa_bytes(n: int = 12) -> bytes:
    return csv_bytes(GPQA_HEADER, gpqa_rows(n))


def files(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_gpqa_csv_is_checked_as_labset_check_reads_it(tmp_path, capsys):
    options = upload.parse_options("normalised", "Subject", "", 3)
    report = upload.check_bytes(gpqa_bytes(), "gpqa.csv", options)
    assert report.formats == {"multiple choice": 12, "short answer": 0}
    assert report.strata == [("Biology", 4), ("Chemistry", 4), ("Physics", 4)] and report.strata_fields == ["Subject"]
    assert report.layout.startswith("gpqa (question Question; options Correct Answer, ")
    assert [q["question"] for q in report.questions] == [f"Which value does experiment {i} give?" for i in range(3)]
    first = report.questions[0]
    assert sorted(first["choices"]) == sorted(["right 0", "wrong one 0", "wrong two 0", "wrong three 0"])
    assert first["choices"]["ABCD".index(first["target"][0])] == "right 0"
    # the page's lines are the command's: the same file checked on the command line prints them
    path = tmp_path / "gpqa.csv"
    path.write_bytes(gpqa_bytes())
    assert main(["labset", "check", str(path), "--strata", "Subject", "--seed", "3"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [line.replace("gpqa.csv", str(path), 1) if n == 0 else line
                       for n, line in enumerate(report.lines)]
    assert "  12 questions: 12 multiple choice, 0 short answer; 0 on an image" in printed


def test_an_import_from_bytes_writes_the_set_and_its_mapping_and_the_app_reads_it(tmp_path):
    folder = tmp_path / "sets"
    options = upload.parse_options("normalised", "Subject", "", 3)
    done = upload.import_bytes(gpqa_bytes(), "gpqa.csv", options, "lab-gpqa.csv", folder)
    assert set(files(folder)) == {"lab-gpqa.csv", "lab-gpqa.csv.mapping.json"}
    assert files(folder)["lab-gpqa.csv"] == gpqa_bytes()  # the very bytes checked
    # the options' order kept, and the strata field chosen: the app reads the set as it was checked
    assert json.loads(files(folder)["lab-gpqa.csv.mapping.json"]) == {"strata": ["Subject"], "seed": 3}
    assert study.available_sets(folder) == ["lab-gpqa.csv"]
    assert done.lines[0].startswith(f"{folder / 'lab-gpqa.csv'}: imported (12 questions, 0 images copied)")
    again = dataset.load_set(folder / "lab-gpqa.csv")  # as the app reads it (member.load_items)
    assert [(i["id"], i["choices"], i["stratum"]) for i in again] == [
        (i["id"], i["choices"], i["stratum"]) for i in done.read.items]  # the seed and the strata, read back
    assert {i["stratum"] for i in again} == set(SUBJECTS)


def test_a_set_at_fault_is_refused_naming_its_lines_and_nothing_is_written(tmp_path):
    rows = gpqa_rows()
    rows[3][0] = ""  # no question
    rows[5][1] = "x" * 3000  # an option too long
    rows[7][0] = "x\x00y"  # a NUL in a question
    folder = tmp_path / "sets"
    options = upload.parse_options(strata="Subject")
    with pytest.raises(upload.UploadRefused) as refused:
        upload.check_bytes(csv_bytes(GPQA_HEADER, rows), "bad.csv", options)
    message = str(refused.value)
    assert message.startswith("bad.csv: not imported, nothing written:")
    assert [p.line for p in refused.value.problems] == [5, 7, 9]  # the header is line 1
    assert "bad.csv:5: field 'Question': must be a non-empty text" in message
    assert "bad.csv:7: field 'Correct Answer': 3000 characters, more than 2000" in message
    assert "bad.csv:9: field 'Question': holds a NUL character" in message and refused.value.mapping is None
    with pytest.raises(upload.UploadRefused):
        upload.import_bytes(csv_bytes(GPQA_HEADER, rows), "bad.csv", options, "", folder)
    assert not folder.exists() or files(folder) == {}


def test_a_name_taken_is_refused_and_nothing_is_written(tmp_path):
    folder = tmp_path / "sets"
    options = upload.parse_options(strata="Subject")
    upload.import_bytes(gpqa_bytes(), "gpqa.csv", options, "", folder)
    before = files(folder)
    with pytest.raises(cli.LabSetCommandError, match="a set of that name is there already"):
        upload.import_bytes(gpqa_bytes(6), "gpqa.csv", options, "gpqa.csv", folder)
    (folder / "notes.csv").write_bytes(b"someone's own file")
    with pytest.raises(cli.LabSetCommandError, match="a set of that name is there already"):
        upload.import_bytes(gpqa_bytes(6), "gpqa.csv", options, "notes.csv", folder)
    assert files(folder) == {**before, "notes.csv": b"someone's own file"}
    for bad in ("../up.csv", "sub/set.csv", "set.jsonl", "set.csv.mapping.json"):
        with pytest.raises(cli.LabSetCommandError, match="a file name, without folders, ending as the set does"):
            upload.import_bytes(gpqa_bytes(6), "gpqa.csv", options, bad, folder)
    assert files(folder) == {**before, "notes.csv": b"someone's own file"}


def test_an_ambiguous_layout_is_refused_with_the_mapping_to_write_which_then_imports(tmp_path):
    header = ["prompt", "opt1", "opt2", "opt3", "gold", "subject"]
    rows = [[f"Q{i}?", f"a{i}", f"b{i}", f"c{i}", "ABC"[i % 3], SUBJECTS[i % 3]] for i in range(9)]
    data = csv_bytes(header, rows)
    with pytest.raises(upload.UploadRefused) as refused:
        upload.check_bytes(data, "odd.csv", upload.parse_options())
    assert "columns found: prompt, opt1, opt2, opt3, gold, subject" in str(refused.value)
    assert "write the mapping: --map" in str(refused.value)
    mapping = refused.value.mapping
    assert mapping["question"] == "prompt" and mapping["options"] == ["opt1", "opt2", "opt3"]
    mapping["key"] = "gold:letter"
    options = upload.parse_options(mapping_text=json.dumps(mapping))
    report = upload.check_bytes(data, "odd.csv", options)
    assert report.formats["multiple choice"] == 9 and report.strata == [(s, 3) for s in SUBJECTS]
    folder = tmp_path / "sets"
    upload.import_bytes(data, "odd.csv", options, "", folder)
    kept = json.loads(files(folder)["odd.csv.mapping.json"])
    assert kept["question"] == "prompt" and kept["key"] == "gold:letter"
    assert len(dataset.load_set(folder / "odd.csv")) == 9  # read by its sidecar


def test_a_set_that_names_images_is_refused_pointing_to_the_command_line():
    data = "".join(json.dumps(s) + "\n" for s in samples()).encode("utf-8")
    with pytest.raises(upload.UploadRefused) as refused:
        upload.check_bytes(data, "set.jsonl", upload.parse_options())
    message = str(refused.value)
    assert "set.jsonl names images (set.jsonl:41:" in message and "10 such line(s)" in message
    assert "cannot be uploaded as a single file" in message and upload.COMMAND in message


def test_uploads_are_bounded_and_of_a_set_kind_before_they_are_read(tmp_path, monkeypatch):
    with pytest.raises(upload.UploadRefused, match="at most 20,000,000 bytes"):
        upload.refuse_size(upload.MAX_BYTES + 1, "big.csv")
    monkeypatch.setattr(upload, "MAX_BYTES", 100)
    with pytest.raises(upload.UploadRefused, match="big.csv: 1,000 bytes; a set's file holds at most 100"):
        upload.check_bytes(b"x" * 1000, "big.csv", upload.parse_options())
    for name in ("notes.txt", "dataset_dict.json.mapping.json", ".csv", ""):
        with pytest.raises(upload.UploadRefused, match="a datasets folder is brought on the server"):
            upload.check_bytes(b"{}", name, upload.parse_options())


@pytest.mark.parametrize("field, value, message", [
    ("rule", "match(nowhere=1)", "the rule for short answers:"),
    ("mapping_text", "{not json", "the mapping:"),
    ("mapping_text", '{"colour": "x"}', "the mapping: no mapping field colour"),
    ("seed", -1, "the seed: a whole number"),
])
def test_the_options_are_checked_as_the_command_line_checks_them(field, value, message):
    with pytest.raises(upload.UploadRefused, match=message):
        upload.parse_options(**{field: value})
