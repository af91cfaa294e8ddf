"""Where we write: output files of the command line, and export folders.

An output file is checked before any work starts (not a folder, not a device, its folder can be
created and written) and is then written to a temporary file beside it and renamed at the end.

An export writes only into a folder it creates, an empty folder, or a folder that holds an earlier
export of ours: the marker file ``.structext-export`` there lists every file that export wrote.
A new export is written into a staging folder first; only when it is complete are the files of the
earlier export replaced (those the new one no longer writes are removed) and the marker rewritten.
Nothing else in the folder is ever deleted or overwritten; a folder with files of someone else and
no marker is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Iterator

MARKER = ".structext-export"
STAGING_PREFIX = ".structext-export-staging-"
MAX_MARKER_BYTES = 64 * 1024 * 1024  # a marker of ours lists file names: far below this


class OutputError(ValueError):
    """An output file or export folder we must not or cannot write; nothing was written."""


# ---------------------------------------------------------------- output files

def check_output_file(path: str | Path, option: str = "--out") -> Path:
    """Raise :class:`OutputError` unless ``path`` can be written as a regular file.

    A missing folder on the way is fine (the writer creates it) when the nearest existing
    one is a folder we may write in. Nothing is created here."""
    if not str(path).strip():
        raise OutputError(f"{option} is empty: give a file name such as out.jsonl")
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{option} {path}: is a folder; give a file name inside it, such as {path / 'out.jsonl'}")
    if path.exists():
        if not path.is_file():
            raise OutputError(f"{option} {path}: is not a regular file (a device or a pipe); give a file name")
        if not os.access(path, os.W_OK):
            raise OutputError(f"{option} {path}: cannot write this file (permission denied)")
    _check_creatable(path.parent, option, path)
    return path


def _check_creatable(folder: Path, option: str, target: Path) -> None:
    """The nearest existing ancestor of ``folder`` must be a folder we may create files in."""
    existing = folder if str(folder) else Path(".")
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"{option} {target}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {target}: cannot create files in {existing} (permission denied)")


# ---------------------------------------------------------------- export folders

def check_export_folder(directory: str | Path) -> list[str]:
    """The files of our earlier export in ``directory`` (``[]`` for a new or empty folder).

    Raises :class:`OutputError` for a file, a folder we cannot write, or a folder holding
    files without our marker. Reads only; writes nothing."""
    folder = Path(directory)
    if not str(directory).strip():
        raise OutputError("No export folder given: type the folder to export into.")
    if not folder.exists():
        _check_creatable(folder.parent, "export folder", folder)
        return []
    if not folder.is_dir():
        raise OutputError(f"{folder} is a file, not a folder: export into a new or empty folder.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot write in {folder} (permission denied): choose another folder.")
    marker = folder / MARKER
    if marker.is_file():
        return _read_marker(folder)
    foreign = [entry.name for entry in folder.iterdir() if not entry.name.startswith(MARKER)]  # and our staging
    if foreign:
        raise OutputError(
            f"{folder} already holds files that no StrucText export wrote (such as {sorted(foreign)[0]!r}; "
            f"there is no {MARKER} file in it): export into a new or empty folder. Nothing was written or deleted.")
    return []


def _read_marker(folder: Path) -> list[str]:
    marker = folder / MARKER
    damaged = f"The export marker {marker} is damaged"
    if marker.stat().st_size > MAX_MARKER_BYTES:
        raise OutputError(f"{damaged} (larger than {MAX_MARKER_BYTES:,} bytes): export into a new folder.")
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise OutputError(f"{damaged} (not JSON): export into a new folder.") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise OutputError(f"{damaged} (no list of files): export into a new folder.")
    for rel in files:
        if not _is_safe_relative(rel):
            raise OutputError(f"{damaged}: it names {rel[:200]!r}, which is not a file inside the folder.")
    return files


def _is_safe_relative(rel: str) -> bool:
    """A plain relative path below the folder: no root, no '..', no empty or '.' parts."""
    if not rel or "\\" in rel or "\x00" in rel:
        return False
    parts = rel.split("/")
    return not PurePosixPath(rel).is_absolute() and all(p not in ("", ".", "..") for p in parts) \
        and parts[0] != MARKER


@contextmanager
def export_into(directory: str | Path, writer: str) -> Iterator[Path]:
    """Write an export: yields an empty staging folder to write every file into; when the block
    ends without an error, the files replace those of our earlier export in ``directory``.

    On an error or Ctrl-C while writing, or a refusal at the end (a file of someone else where
    one of ours would go), the staging folder is removed and ``directory`` is as before (a folder
    this call created is removed again); the commit itself only deletes our old files and renames
    the new ones into place. ``writer`` is recorded in the marker."""
    old_files = check_export_folder(directory)
    folder = Path(directory)
    created = _make_folders(folder)
    try:
        _remove_stale_staging(folder)
        stage = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=folder))
    except BaseException:
        _remove_empty(created)
        raise
    try:
        yield stage
        _commit(folder, stage, old_files, writer)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        _remove_empty(created)
        raise
    shutil.rmtree(stage, ignore_errors=True)


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and missing parents; return those created, deepest first."""
    missing = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _remove_stale_staging(folder: Path) -> None:
    """Staging folders left by an export that was killed (its process is gone)."""
    for entry in folder.iterdir():
        if not entry.name.startswith(STAGING_PREFIX) or not entry.is_dir() or entry.is_symlink():
            continue
        pid = entry.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if pid.isascii() and pid.isdigit() and not _process_alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _staged_files(stage: Path) -> list[str]:
    out = []
    for root, _dirs, files in os.walk(stage):
        for name in files:
            rel = Path(root, name).relative_to(stage).as_posix()
            if rel != MARKER:
                out.append(rel)
    return sorted(out)


def _inside(folder: Path, path: Path) -> bool:
    """``path``'s folder, with links followed, is ``folder`` or below it."""
    return path.parent.resolve().is_relative_to(folder.resolve())


def _commit(folder: Path, stage: Path, old_files: list[str], writer: str) -> None:
    new_files = _staged_files(stage)
    old = set(old_files)
    clashes = [rel for rel in new_files if rel not in old and _occupied(folder, rel)]
    escaping = sorted(rel for rel in set(new_files) | old if not _inside(folder, folder / rel))
    if escaping:
        raise OutputError(f"{folder / escaping[0]} leads out of {folder} through a link: remove the link or export "
                          "into a new folder. Nothing was written or deleted.")
    if clashes:
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        raise OutputError(
            f"{folder / clashes[0]}{more} is in the way and was not written by an earlier export: move it away or "
            "export into a new folder. Nothing was written or deleted.")
    _write_marker(folder, sorted(old | set(new_files)), writer)  # claim first: a crash leaves nothing unowned
    gone = sorted(old - set(new_files))
    for rel in gone:
        target = folder / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
    for rel in new_files:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage / rel, target)
    _remove_empty_parents(folder, gone)
    _write_marker(folder, new_files, writer)


def _occupied(folder: Path, rel: str) -> bool:
    """Something not ours sits at ``rel`` or where one of its folders must go."""
    target = folder / rel
    if target.exists() or target.is_symlink():
        return True
    parent = target.parent
    while parent != folder:
        if parent.exists() and not parent.is_dir():
            return True
        parent = parent.parent
    return False


def _remove_empty_parents(folder: Path, removed: list[str]) -> None:
    """Folders our removed files leave empty (deepest first); a folder with anything else stays."""
    parents = {p for rel in removed for p in (folder / rel).parents if p != folder and folder in p.parents}
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        try:
            parent.rmdir()
        except OSError:
            pass


def _write_marker(folder: Path, files: list[str], writer: str) -> None:
    marker = folder / MARKER
    tmp = folder / f"{MARKER}.{os.getpid()}.tmp"
    content = {"written_by": f"StrucText Studio, {writer}", "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "files": files}
    tmp.write_text(json.dumps(content, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, marker)
