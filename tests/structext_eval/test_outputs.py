"""Output files and export folders (structext_core.text.outputs): we write only where we may."""

import json
import os
import subprocess
import sys

import pytest

from structext_core.structext_eval import official, suites
from structext_core.text import outputs
from structext_core.text.outputs import MARKER, STAGING_PREFIX, OutputError, check_export_folder, export_into


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def export(folder, files: dict[str, str], writer="test"):
    with export_into(folder, writer) as stage:
        for rel, text in files.items():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage / rel).write_text(text)


def marker_files(folder):
    return json.loads((folder / MARKER).read_text())["files"]


def test_a_new_folder_is_created_and_marked(tmp_path):
    folder = tmp_path / "a" / "b"
    export(folder, {"x.jsonl": "1", "sub/y.json": "2"}, writer="unit test")
    assert snapshot(folder) == {MARKER: (folder / MARKER).read_bytes(), "sub/y.json": b"2", "x.jsonl": b"1"}
    marker = json.loads((folder / MARKER).read_text())
    assert marker["files"] == ["sub/y.json", "x.jsonl"] and "unit test" in marker["written_by"]


def test_an_empty_folder_is_accepted(tmp_path):
    export(tmp_path, {"x.jsonl": "1"})
    assert marker_files(tmp_path) == ["x.jsonl"]


def test_a_folder_of_someone_else_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "paper.tex").write_text("mine")
    with pytest.raises(OutputError, match=r"already holds files that no StrucText export wrote \(such as 'paper.tex'"):
        export(tmp_path, {"x.jsonl": "1"})
    assert snapshot(tmp_path) == {"paper.tex": b"mine"}


def test_a_file_is_not_a_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_export_folder(tmp_path / "f")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_export_folder(tmp_path / "f" / "sub")


def test_re_export_replaces_ours_removes_our_stale_files_and_keeps_the_rest(tmp_path):
    export(tmp_path, {"a.json": "old", "deep/b.json": "old", "gone/c.json": "old", "shared/d.json": "old"})
    (tmp_path / "theirs.txt").write_text("keep")
    (tmp_path / "shared" / "theirs.json").write_text("keep")
    export(tmp_path, {"a.json": "new", "deep/b.json": "new"})
    assert snapshot(tmp_path) | {MARKER: b""} == {"a.json": b"new", "deep/b.json": b"new", "theirs.txt": b"keep",
                                                  "shared/theirs.json": b"keep", MARKER: b""}
    assert not (tmp_path / "gone").exists()  # emptied by removing our own file
    assert marker_files(tmp_path) == ["a.json", "deep/b.json"]


def test_a_foreign_file_where_ours_would_go_refuses_the_whole_export(tmp_path):
    export(tmp_path, {"a.json": "old"})
    (tmp_path / "b.json").write_text("theirs")
    before = snapshot(tmp_path)
    with pytest.raises(OutputError, match=r"b.json is in the way and was not written by an earlier export"):
        export(tmp_path, {"a.json": "new", "b.json": "new"})
    assert snapshot(tmp_path) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(STAGING_PREFIX)]


def test_an_error_while_writing_leaves_everything_as_before(tmp_path):
    export(tmp_path / "old", {"a.json": "old"})
    before = snapshot(tmp_path / "old")
    for folder in (tmp_path / "old", tmp_path / "new" / "deeper"):
        with pytest.raises(KeyboardInterrupt):
            with export_into(folder, "test") as stage:
                (stage / "a.json").write_text("half")
                raise KeyboardInterrupt
    assert snapshot(tmp_path / "old") == before
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("content,message", [
    ("{not json", "not JSON"),
    (json.dumps({"files": "a.json"}), "no list of files"),
    (json.dumps({"files": ["../outside.txt"]}), "not a file inside the folder"),
    (json.dumps({"files": ["/etc/passwd"]}), "not a file inside the folder"),
    (json.dumps({"files": [MARKER]}), "not a file inside the folder"),
])
def test_a_damaged_or_forged_marker_is_refused(tmp_path, content, message):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / MARKER).write_text(content)
    (tmp_path / "outside.txt").write_text("keep")
    with pytest.raises(OutputError, match=message):
        export(folder, {"a.json": "x"})
    assert (tmp_path / "outside.txt").read_text() == "keep"


def test_a_marked_file_behind_a_link_out_of_the_folder_is_never_deleted(tmp_path):
    folder, elsewhere = tmp_path / "export", tmp_path / "elsewhere"
    export(folder, {"sub/a.json": "ours"})
    elsewhere.mkdir()
    (elsewhere / "a.json").write_text("precious")
    (folder / "sub" / "a.json").unlink()
    (folder / "sub").rmdir()
    (folder / "sub").symlink_to(elsewhere)
    with pytest.raises(OutputError, match="leads out of .* through a link"):
        export(folder, {"b.json": "x"})
    assert (elsewhere / "a.json").read_text() == "precious"


def test_staging_left_by_a_killed_export_is_cleaned_up(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{STAGING_PREFIX}{dead.stdout.strip()}-abc"
    (stale / "0Shotbenchmark").mkdir(parents=True)
    live = tmp_path / f"{STAGING_PREFIX}{os.getpid()}-xyz"
    live.mkdir()
    export(tmp_path, {"a.json": "x"})  # only staging folders: still counts as empty
    assert not stale.exists() and live.exists()


def test_write_layout_is_an_export_and_streams_a_generator(tmp_path):
    rows = suites.generate_cell(8, 1, 1, 3, seed=2)
    consumed = []

    def stream():
        for row in rows:
            consumed.append(row["id"])
            yield row

    assert official.write_layout(stream(), tmp_path / "layout") == 3
    assert len(official.find_files(tmp_path / "layout")) == 3 and len(consumed) == 3
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "x.txt").write_text("x")
    with pytest.raises(OutputError):
        official.write_layout(rows, tmp_path / "foreign")
    assert snapshot(tmp_path / "foreign") == {"x.txt": b"x"}


# ---- output files --------------------------------------------------------------------------

def test_output_file_checks(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"--out .*: is a folder; give a file name inside it"):
        outputs.check_output_file(tmp_path)
    with pytest.raises(OutputError, match=r"file is a file, not a folder"):
        outputs.check_output_file(tmp_path / "file" / "x.jsonl")
    with pytest.raises(OutputError, match="not a regular file"):
        outputs.check_output_file("/dev/null")
    with pytest.raises(OutputError, match="--out is empty"):
        outputs.check_output_file("")
    target = tmp_path / "new" / "deeper" / "x.jsonl"
    assert outputs.check_output_file(target) == target
    assert not (tmp_path / "new").exists()  # checking creates nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_output_file_in_a_read_only_folder(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="permission denied"):
            outputs.check_output_file(locked / "x.jsonl")
        with pytest.raises(OutputError, match="permission denied"):
            check_export_folder(locked)
    finally:
        locked.chmod(0o700)
