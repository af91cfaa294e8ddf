"""A small stored synthetic AIBench set for the question-review tests (images checked in-process:
the generator's own PNGs, no sandbox needed), and accounts for a lead and reviewers."""
from __future__ import annotations

from pathlib import Path

from structext_core.aibench import dataset, images
from structext_core.aibench.synthetic import build
from structext_core.studio import accounts, storage

DATASET = "synthetic"


def stored_set(root: Path, papers: int = 3, name: str = DATASET) -> Path:
    """Write ``papers`` synthetic papers under ``root``/source and store them as ``root``/aibench/``name``."""
    build.write_set(root / "source", seed=0, papers=papers)
    dest = root / "aibench" / name
    dataset.import_folder(root / "source", dest, images.check_image)
    return dest


def setup(tmp_path: Path, monkeypatch, papers: int = 3, reviewers: int = 2) -> dict:
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_AIBENCH_DIR", str(tmp_path / "aibench"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    stored_set(tmp_path, papers)
    db = storage.open_db()
    lead = accounts.create_user(db, "lead", "password1", "admin")
    people = [accounts.create_user(db, f"rev{i + 1}", "password1", "annotator") for i in range(reviewers)]
    return {"db": db, "lead": lead, "reviewers": people}
