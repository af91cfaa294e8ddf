"""``labset check`` and ``labset import``: what a lead runs to bring a set into the app's sets folder."""
from __future__ import annotations

import json
import os

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


# ---------------------------------------------------------------- layouts and hostile files (issue 44)

def _chunk(kind: bytes, data: bytes) -> bytes:
    import struct
    import zlib
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _hostile_pngs() -> dict:
    import struct

    from tests.labset.conftest import png
    good = png(4, 3)
    ihdr_end = 8 + 12 + 13
    actl = _chunk(b"acTL", struct.pack(">II", 2, 0))
    return {"truncated": good[:-20], "apng": good[:ihdr_end] + actl + good[ihdr_end:],
            "lies": good[:16] + struct.pack(">II", 40, 30) + good[24:29]
            + struct.pack(">I", __import__("zlib").crc32(b"IHDR" + struct.pack(">II", 40, 30) + good[24:29]) & 0xFFFFFFFF)
            + good[ihdr_end:]}


@pytest.mark.parametrize("kind", ["truncated", "apng", "lies"])
def test_an_image_that_does_not_decode_as_one_honest_frame_is_refused_at_import(tmp_path, capsys, kind):
    records = samples()
    path = write_set(tmp_path, records)
    (tmp_path / "images" / "q2.png").write_bytes(_hostile_pngs()[kind])
    to = tmp_path / "sets"
    code, _, err = run(capsys, "import", str(path), "--to", str(to))
    assert code == 2 and "set.jsonl:43: field 'input[0]'.content[1].image: image 'images/q2.png' does not decode" in err
    assert not to.exists() or files(to) == {}


def test_a_lone_surrogate_is_refused_by_check_with_its_line(tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    path.write_text('{"input": "Q\\ud800?", "target": "x"}\n', encoding="utf-8")
    code, _, err = run(capsys, "check", str(path))
    assert code == 2 and "set.jsonl:1: field 'input': holds a lone surrogate (U+D800)" in err


def test_an_image_swapped_for_a_link_after_the_check_is_not_copied_from_outside(tmp_path, capsys, monkeypatch):
    from structext_core.labset import cli
    path = write_set(tmp_path, samples())
    original = (tmp_path / "images" / "q4.png").read_bytes()
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG outside the folder")
    real = cli.decode_images

    def swap_after_check(read):
        problems = real(read)
        (tmp_path / "images" / "q4.png").unlink()
        (tmp_path / "images" / "q4.png").symlink_to(secret)
        return problems
    monkeypatch.setattr(cli, "decode_images", swap_after_check)
    to = tmp_path / "sets"
    code, _, err = run(capsys, "import", str(path), "--to", str(to))
    assert code == 0, err
    assert files(to)["images/q4.png"] == original and not (to / "images" / "q4.png").is_symlink()


def test_import_writes_exactly_the_bytes_it_checked(lab_set, tmp_path, capsys, monkeypatch):
    from structext_core.labset import readers
    reads = []
    real = readers.open_nofollow
    def opened(path, *args, dir_fd=None):
        folder = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        reads.append(os.path.join(folder, str(path)))
        return real(path, *args, dir_fd=dir_fd)
    monkeypatch.setattr(readers, "open_nofollow", opened)
    to = tmp_path / "sets"
    assert run(capsys, "import", str(lab_set), "--to", str(to))[0] == 0
    source_reads = [r for r in reads if not r.startswith(str(to))]
    assert len(source_reads) == 11 == len(set(source_reads))  # the set and its 10 images, each read once
    assert files(to)["set.jsonl"] == lab_set.read_bytes()


def test_a_mapped_set_is_imported_with_its_mapping_and_read_back_by_it(tmp_path, capsys):
    src = tmp_path / "custom.csv"
    src.write_text("qid,prompt,opt1,opt2,opt3,gold,subject\n" + "".join(
        f"q{i},Question {i}?,red {i},green {i},blue {i},{'abc'[i % 3]},{'mt'[i % 2]}\n" for i in range(40)),
        encoding="utf-8")
    to = tmp_path / "sets"
    code, _, err = run(capsys, "import", str(src), "--to", str(to))
    assert code == 2 and "opt1, opt2, opt3 look like options but are mapped to nothing" in err
    assert "--map question=prompt --map options=opt1,opt2,opt3 --map key=gold:letter --map id=qid" in err
    code, out, err = run(capsys, "import", str(src), "--to", str(to), "--map", "question=prompt",
                         "--map", "options=opt1,opt2,opt3", "--map", "key=gold:letter", "--map", "id=qid",
                         "--map", "strata=subject")
    assert code == 0, err
    assert "40 questions: 40 multiple choice" in out and "layout: mapped" in out
    assert set(files(to)) == {"custom.csv", "custom.csv.mapping.json"}
    assert study.available_sets(to) == ["custom.csv"]
    items = dataset.load_set(to / "custom.csv")
    assert [i["choices"][ord(i["target"][0]) - 65] for i in items[:3]] == ["red 0", "green 1", "blue 2"]


def test_a_datasets_folder_is_imported_as_one_arrow_file(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    records = [{"question": f"Q{i}?", "choices": ["a", "b", "c"], "answer": i % 3} for i in range(40)]
    datasets.DatasetDict({"test": datasets.Dataset.from_list(records),
                          "dev": datasets.Dataset.from_list(records[:4])}).save_to_disk(tmp_path / "mmlu")
    to = tmp_path / "sets"
    code, out, err = run(capsys, "import", str(tmp_path / "mmlu"), "--to", str(to), "--split", "dev")
    assert code == 0, err
    assert "mmlu-dev.arrow: imported (4 questions" in out
    assert len(dataset.load_set(to / "mmlu-dev.arrow")) == 4


def test_gpqa_import_keeps_its_seed_so_the_app_shows_the_same_order(tmp_path, capsys):
    src = tmp_path / "gpqa.csv"
    src.write_text("Record ID,Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3\n"
                   + "".join(f"r{i},Q{i}?,right {i},w1 {i},w2 {i},w3 {i}\n" for i in range(40)), encoding="utf-8")
    to = tmp_path / "sets"
    code, out, _ = run(capsys, "import", str(src), "--to", str(to), "--seed", "5")
    assert code == 0 and "seed 5" in out
    assert json.loads((to / "gpqa.csv.mapping.json").read_text()) == {"seed": 5}
    checked = dataset.load_set(src, seed=5)
    assert [i["choices"] for i in dataset.load_set(to / "gpqa.csv")] == [i["choices"] for i in checked]


def test_help_documents_the_layouts_and_the_mapping(capsys):
    with pytest.raises(SystemExit):
        main(["labset", "import", "--help"])
    out = capsys.readouterr().out
    for text in ("--map NAME=VALUE", "--mapping FILE", "--split", "--seed", "GPQA", "MMLU", "choice_a",
                 "<set>.mapping.json"):
        assert text in out
