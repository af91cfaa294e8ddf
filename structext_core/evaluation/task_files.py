"""Writing a harness task's files (``export-task``): all of them or none, and never over a file an
export did not write. Each benchmark's task export (its own templates) writes through
:func:`write_files` and refuses with :class:`ExportError`."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path


class ExportError(ValueError):
    """A task that cannot be written (unknown harness, bad setting, unusable output folder)."""


#: The list of what an export wrote into its folder (name -> sha256): a later export with ``force``
#: replaces only files listed here and unchanged since, never a file we did not write.
MANIFEST = ".structext-export.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_folder(out_dir: Path, names: Sequence[str], force: bool) -> None:
    """Refuse a folder that holds anything (unless ``force``), and with ``force`` any file of
    ``names`` there that we did not write or that was changed since (:data:`MANIFEST`)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir} exists and is not a folder")
    if not out_dir.is_dir():
        return
    present = sorted(p.name for p in out_dir.iterdir())
    if not present:
        return
    if not force:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        raise ExportError(f"{out_dir} is not empty ({len(present):,} entries: {shown}); choose a new or empty "
                          "folder, or add --force to write beside them (a file of ours is replaced, any other "
                          "file is never overwritten)")
    written: dict = {}
    if (out_dir / MANIFEST).exists():
        try:
            written = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            written = None
        if not isinstance(written, dict) or (out_dir / MANIFEST).is_symlink():
            raise ExportError(f"{out_dir / MANIFEST} exists and is not an export's list of files: not "
                              "overwritten; choose another folder")
    for name in names:
        path = out_dir / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise ExportError(f"{path} exists and is not a plain file: not overwritten; choose another folder")
        if path.exists() and written.get(name) != _sha256(path):
            raise ExportError(f"{path} exists and was not written by an export (or was changed since): not "
                              "overwritten; choose another folder, or move that file away")


def write_files(out_dir: Path, files: Mapping[str, str], force: bool = False) -> None:
    """Write every file into ``out_dir`` through a temporary folder: all of them or none. The
    folder must be new or empty, or with ``force`` hold no file of these names that we did not
    write (:func:`_check_folder`), and no other task's files (the harnesses load every task file of
    the folder: another task's would run too); what was written is listed in :data:`MANIFEST`."""
    if out_dir.is_dir():
        others = sorted(p.name for p in out_dir.glob("*") if p.suffix in (".py", ".yaml") and p.name not in files)
        if others:
            raise ExportError(f"{out_dir} already holds other task files ({', '.join(others[:5])}); "
                              "choose an empty folder")
    _check_folder(out_dir, list(files), force)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        manifest = {name: _sha256(staging / name) for name in files}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        out_dir.mkdir(exist_ok=True)
        for name in [*files, MANIFEST]:
            (staging / name).replace(out_dir / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
