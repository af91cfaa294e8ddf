"""``study inspect-log``'s paths (issue 45, item 8): a system folder as ``--out`` or ``--db``, a ``--db`` that
is no database or another program's SQLite file, and a file already at ``--out`` are refused in one line
(exit 2, no traceback) and nothing is written, nor is the foreign database touched."""
from __future__ import annotations

import shutil
import sqlite3

import pytest

from structext_core.cli import safe_paths
from structext_core.cli.main import main


@pytest.fixture
def study_db(tmp_path, monkeypatch):
    """A database with an annotator and a study ('pilot') of the lab's sample items."""
    from structext_core.evaluation import item_sets
    from structext_core.labset import member
    from structext_core.studio import accounts, storage
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    accounts.create_user(db, "ann1", "password1", "annotator")
    item_sets.data_dir("labset").mkdir(parents=True)
    shutil.copyfile(member.SAMPLE_ITEMS, item_sets.data_dir("labset") / "sample.jsonl")
    assert main(["study", "create", "pilot", "--benchmark", "labset", "--items", "sample.jsonl",
                 "--questions", "4", "--annotator", "ann1"]) == 0
    return tmp_path / "db.sqlite"


def refused(capsys, *argv) -> str:
    assert main(["study", "inspect-log", "pilot", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "Traceback" not in captured.err, err
    return err


@pytest.mark.parametrize("out, folder", [("/proc", "/proc"), ("/proc/self/log.eval", "/proc"), ("/sys", "/sys"),
                                         ("/dev/null", "/dev"), ("/etc/log.eval", "/etc"), ("/usr/lib", "/usr"),
                                         ("/boot", "/boot"), ("/", None)])
def test_a_system_folder_as_output_is_refused(study_db, capsys, out, folder):
    err = refused(capsys, "--out", out)
    assert f"--out {out!r} is in " in err
    assert (f"{folder}, a folder of the system" if folder else "the system's root folder") in err


def test_a_link_into_a_system_folder_is_refused_too(study_db, tmp_path, capsys):
    (tmp_path / "looks-harmless").symlink_to("/proc/self")
    assert "/proc, a folder of the system" in refused(capsys, "--out", str(tmp_path / "looks-harmless"))


@pytest.mark.parametrize("db", ["/proc/self/status", "/dev/zero", "/etc/hostname"])
def test_a_system_file_as_database_is_refused(study_db, tmp_path, capsys, db):
    err = refused(capsys, "--out", str(tmp_path), "--db", db)
    assert f"--db {db!r} is in " in err and "a folder of the system" in err


def test_a_file_that_is_no_database_is_refused_and_left_as_it_was(study_db, tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    err = refused(capsys, "--out", str(tmp_path), "--db", str(notes))
    assert f"--db {str(notes)!r} is not a database (not a SQLite file)" in err
    assert notes.read_text() == "my notes\n"
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert "is not a database" in refused(capsys, "--out", str(tmp_path), "--db", str(empty))
    assert empty.read_bytes() == b""
    assert "is not a file" in refused(capsys, "--out", str(tmp_path), "--db", str(tmp_path))
    assert "no such database file" in refused(capsys, "--out", str(tmp_path), "--db", str(tmp_path / "none.db"))


def test_another_programs_sqlite_file_is_refused_and_not_migrated(study_db, tmp_path, capsys):
    theirs = tmp_path / "theirs.db"
    with sqlite3.connect(theirs) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    connection.close()
    before = theirs.read_bytes()
    err = refused(capsys, "--out", str(tmp_path), "--db", str(theirs))
    assert "is a SQLite database, but not one of StrucText Studio: nothing was read or written" in err
    assert theirs.read_bytes() == before
    with sqlite3.connect(theirs) as connection:
        assert [r[0] for r in connection.execute("SELECT name FROM sqlite_master")] == ["notes"]
    connection.close()
    # The other study commands open the database the same way.
    assert main(["study", "close", "pilot", "--db", str(theirs)]) == 2
    assert "not one of StrucText Studio" in capsys.readouterr().err
    assert theirs.read_bytes() == before


def test_a_file_already_at_out_is_never_overwritten(study_db, tmp_path, capsys):
    mine = tmp_path / "mine.eval"
    mine.write_text("the lab's own log\n")
    assert "exists already: choose a new file (nothing is overwritten)" in refused(capsys, "--out", str(mine))
    assert mine.read_text() == "the lab's own log\n"


def test_a_folder_one_may_not_write_in_is_said_not_a_traceback(study_db, tmp_path, capsys, monkeypatch):
    from structext_core.studio import study

    def no_room(db, study_id, path):
        raise PermissionError(13, "Permission denied", str(tmp_path / "locked"))
    monkeypatch.setattr(study, "write_inspect_log", no_room)
    err = refused(capsys, "--out", str(tmp_path / "locked"))
    assert "the log could not be written" in err and "Permission denied" in err and "nothing was written" in err


def test_the_system_folder_check_itself():
    assert safe_paths.system_folder("/proc/1/mem") == "/proc"
    assert safe_paths.system_folder("/usr") == "/usr"
    assert safe_paths.system_folder("/usrlocal-data/x") is None  # a prefix of the name is no folder of it
    assert safe_paths.system_folder("/tmp/out") is None
