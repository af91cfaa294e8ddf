"""Storage: the database file, its pragmas and the numbered migrations."""

import sqlite3
import sys
from pathlib import Path

import pytest

from structext_core.studio import migrations, storage
from tests import processes

EXPECTED_TABLES = {
    "schema_migrations", "users", "studies", "study_items", "study_annotators", "assignments",
    "pauses", "responses", "uploads", "results",
}


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "nested" / "dir" / "structext.db"


def test_default_path_is_annotations_folder(monkeypatch):
    monkeypatch.delenv("STRUCTEXT_DB", raising=False)
    path = storage.default_db_path()
    assert path.parts[-2:] == ("annotations", "structext.db")
    assert path.parent.parent == Path(storage.__file__).resolve().parents[2]  # the project folder


def test_environment_variable_overrides_path(monkeypatch, tmp_path):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "elsewhere.db"))
    assert storage.default_db_path() == tmp_path / "elsewhere.db"
    db = storage.open_db()
    assert (tmp_path / "elsewhere.db").exists()
    assert EXPECTED_TABLES <= set(db.table_names())


def test_open_db_creates_folders_schema_and_pragmas(db_path):
    db = storage.open_db(db_path)
    assert db_path.exists()
    assert EXPECTED_TABLES <= set(db.table_names())
    assert db.journal_mode == "wal"
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == storage.BUSY_TIMEOUT_MS
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert storage.schema_version(db) == storage.latest_version()
    history = [row["version"] for row in db.query("SELECT version FROM schema_migrations")]
    assert history == [m.version for m in storage.MIGRATIONS]


def test_migrations_are_numbered_one_to_n():
    assert [m.version for m in storage.MIGRATIONS] == list(range(1, len(storage.MIGRATIONS) + 1))


def test_reopening_applies_nothing_and_keeps_data(db_path):
    db = storage.open_db(db_path)
    db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('a', 'x', 'admin', 0)")
    db.close()
    again = storage.open_db(db_path)
    assert storage.migrate(again) == []
    assert again.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 1
    assert again.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(storage.MIGRATIONS)


def test_new_migration_is_applied_once_to_an_existing_file(db_path, monkeypatch):
    storage.open_db(db_path).close()
    calls = []

    def add_notes(db):
        calls.append(1)
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")

    next_version = storage.latest_version() + 1
    monkeypatch.setattr(storage, "MIGRATIONS", [*storage.MIGRATIONS, storage.Migration(next_version, "notes", add_notes)])
    db = storage.open_db(db_path)
    assert "notes" in db.table_names()
    assert storage.schema_version(db) == next_version
    storage.open_db(db_path)
    assert calls == [1]


def test_failing_migration_leaves_the_file_unchanged(db_path, monkeypatch):
    storage.open_db(db_path).close()
    before = storage.latest_version()

    def broken(db):
        db.execute("CREATE TABLE half_done (id INTEGER)")
        raise RuntimeError("migration bug")

    monkeypatch.setattr(storage, "MIGRATIONS", [*storage.MIGRATIONS, storage.Migration(before + 1, "broken", broken)])
    with pytest.raises(RuntimeError, match="migration bug"):
        storage.open_db(db_path)
    monkeypatch.undo()
    db = storage.open_db(db_path)
    assert "half_done" not in db.table_names()
    assert storage.schema_version(db) == before


def test_database_from_newer_code_is_refused(db_path):
    db = storage.open_db(db_path)
    db.execute(f"PRAGMA user_version = {storage.latest_version() + 5}")
    db.close()
    with pytest.raises(storage.SchemaTooNewError, match="newer|only knows"):
        storage.open_db(db_path)


def test_write_transaction_rolls_back_on_error(db_path):
    db = storage.open_db(db_path)
    with pytest.raises(ZeroDivisionError):
        with storage.write_transaction(db):
            db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('a', 'x', 'admin', 0)")
            raise ZeroDivisionError
    assert db.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 0
    assert not db.conn.in_transaction


def test_write_transaction_commits_for_other_connections(db_path):
    writer = storage.open_db(db_path)
    reader = storage.open_db(db_path)
    with storage.write_transaction(writer):
        writer.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('a', 'x', 'admin', 0)")
    assert reader.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 1


def test_foreign_keys_are_enforced(db_path):
    db = storage.open_db(db_path)
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (99, 99, 0)")


def test_in_memory_database_gets_the_schema():
    db = storage.open_db(":memory:")
    assert EXPECTED_TABLES <= set(db.table_names())


def _open_and_count(path):
    db = storage.open_db(path)
    return storage.schema_version(db)


def test_many_processes_opening_a_new_file_migrate_it_once(tmp_path):
    path = tmp_path / "race.db"
    with processes.pool(6) as pool:
        versions = pool.map(_open_and_count, [path] * 12)
    assert versions == [storage.latest_version()] * 12
    db = storage.open_db(path)
    assert db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(storage.MIGRATIONS)


def test_nested_write_transaction_is_an_error_not_a_deadlock(db_path):
    db = storage.open_db(db_path)
    with pytest.raises(sqlite3.OperationalError, match="within a transaction"):
        with storage.write_transaction(db):
            with storage.write_transaction(db):
                pass
    assert not db.conn.in_transaction


def test_a_write_transaction_inside_an_enclosing_one_is_part_of_it(db_path):
    """A function that writes on its own (its own write_transaction), called inside an enclosing
    transaction, commits with it or is rolled back with it; outside, nesting stays an error."""
    db = storage.open_db(db_path)
    other = storage.open_db(db_path)
    db.execute("CREATE TABLE t (x INTEGER CHECK (x < 5))")

    def writes_on_its_own(x):
        with storage.write_transaction(db):
            db.execute("INSERT INTO t VALUES (?)", [x])

    with storage.write_transaction(db, enclosing=True):
        writes_on_its_own(1)
        db.execute("INSERT INTO t VALUES (2)")
        assert other.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # not committed yet
    assert [r[0] for r in other.execute("SELECT x FROM t ORDER BY x")] == [1, 2]
    with pytest.raises(RuntimeError, match="later step"):
        with storage.write_transaction(db, enclosing=True):
            writes_on_its_own(3)
            raise RuntimeError("a later step failed")
    with pytest.raises(sqlite3.IntegrityError):  # the nested one fails: nothing of the enclosing one is kept
        with storage.write_transaction(db, enclosing=True):
            db.execute("INSERT INTO t VALUES (4)")
            writes_on_its_own(5)  # refused by the CHECK
    assert [r[0] for r in other.execute("SELECT x FROM t ORDER BY x")] == [1, 2]
    assert not db.conn.in_transaction
    with pytest.raises(sqlite3.OperationalError, match="within a transaction"):  # plain nesting: as before
        with storage.write_transaction(db):
            writes_on_its_own(6)


def test_writers_in_one_process_share_one_lock_per_file(db_path, tmp_path):
    first, second = storage.open_db(db_path), storage.open_db(db_path)
    other = storage.open_db(tmp_path / "other.db")
    assert first.structext_write_lock is second.structext_write_lock
    assert first.structext_write_lock is not other.structext_write_lock


@pytest.mark.parametrize(("files", "message"), [
    ({"m0001_a.py": "", "m0003_b.py": ""}, r"without a gap; found \[1, 3\]"),
    ({"m0001_a.py": "", "m0001_b.py": ""}, "migration 1 is defined twice"),
    ({"m0001_a.py": "", "m0002_b.py": "NAME = 'b'\n"}, "m0002_b must have a docstring"),
])
def test_migration_modules_out_of_order_or_incomplete_are_refused(tmp_path, monkeypatch, files, message):
    name = "fake_migrations_" + tmp_path.name.replace("-", "_")  # one package per case: imports are cached
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    complete = '"""What it changes."""\nNAME = "x"\n\n\ndef migrate(db):\n    pass\n'
    for file_name, text in files.items():
        (package / file_name).write_text(text or complete)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match=message):
        migrations.load(name)


def test_every_migration_is_a_module_of_its_own_with_its_number_in_its_name():
    for migration in storage.MIGRATIONS:
        module = migration.apply.__module__
        assert module.startswith(f"structext_core.studio.migrations.m{migration.version:04d}_")
        assert sys.modules[module].__doc__.startswith(f"Migration {migration.version}: ")


def test_switching_to_wal_waits_out_a_lock_and_raises_anything_else(tmp_path, monkeypatch):
    """SQLite may refuse the switch to WAL at once ("database is locked") while another process switches
    the same new file (CI at 7775211): the switch is tried again; any other error is raised."""
    import sqlite_utils

    calls = []
    original = sqlite_utils.Database.enable_wal

    def locked_twice(self):
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        original(self)

    monkeypatch.setattr(sqlite_utils.Database, "enable_wal", locked_twice)
    db = storage.open_db(tmp_path / "wal.db")
    assert len(calls) == 3 and db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def broken(self):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite_utils.Database, "enable_wal", broken)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        storage.open_db(tmp_path / "other.db")
