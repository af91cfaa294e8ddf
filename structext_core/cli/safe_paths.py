"""Paths a command is given to read or write, checked before anything is opened.

- :func:`refuse_system_path`: a path under one of the system's own folders (``/proc``, ``/sys``,
  ``/dev``, ``/etc``, ``/usr``, ...: :data:`SYSTEM_FOLDERS`), links resolved, is refused with a
  message naming the flag and the folder; so is the root folder itself.
- :func:`check_our_database`: a ``--db`` must be a regular file that is a SQLite database holding
  this project's schema (its ``schema_migrations`` table). Anything else (a text file, another
  program's SQLite file, an empty file) is refused before it is opened for writing: opening it the
  usual way would migrate it, writing our tables into a file we did not make.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from structext_core.cli.main import UsageError

SYSTEM_FOLDERS = ("/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/usr", "/boot", "/lib", "/lib32",
                  "/lib64", "/libx32", "/run", "/var/run", "/var/lib/dpkg", "/snap")
SQLITE_MAGIC = b"SQLite format 3\x00"


def _resolved(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


def system_folder(path: str | os.PathLike) -> str | None:
    """The system folder ``path`` lies in (links resolved; the root folder itself counts), or None."""
    resolved = _resolved(Path(path))
    if str(resolved) == "/":
        return "/"
    for folder in SYSTEM_FOLDERS:
        if resolved == Path(folder) or Path(folder) in resolved.parents:
            return folder
    return None


def refuse_system_path(path: str | os.PathLike, flag: str) -> None:
    """:class:`UsageError` when ``path`` is in a system folder (:func:`system_folder`)."""
    folder = system_folder(path)
    if folder is not None:
        where = "the system's root folder" if folder == "/" else f"{folder}, a folder of the system"
        raise UsageError(f"{flag} {str(path)[:200]!r} is in {where}: give a file or folder of your own")


def check_our_database(path: str | os.PathLike, flag: str = "--db") -> Path:
    """``path`` when it is this project's SQLite database; otherwise :class:`UsageError` saying what it is."""
    path = Path(path)
    shown = repr(str(path)[:200])
    refuse_system_path(path, flag)
    if not path.exists():
        raise UsageError(f"{flag} {shown}: no such database file")
    if not path.is_file():
        raise UsageError(f"{flag} {shown} is not a file: give the database file (default: $STRUCTEXT_DB)")
    try:
        with open(path, "rb") as file:
            head = file.read(len(SQLITE_MAGIC))
    except OSError as error:
        raise UsageError(f"{flag} {shown} cannot be read: {error.strerror or error}") from None
    if head != SQLITE_MAGIC:
        raise UsageError(f"{flag} {shown} is not a database (not a SQLite file): give the app's database "
                         "file (default: $STRUCTEXT_DB)")
    try:
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as connection:
            ours = connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").fetchone()
        connection.close()
    except sqlite3.Error as error:
        raise UsageError(f"{flag} {shown} cannot be read as a database: {error}") from None
    if not ours:
        raise UsageError(f"{flag} {shown} is a SQLite database, but not one of StrucText Studio: "
                         "nothing was read or written")
    return path
