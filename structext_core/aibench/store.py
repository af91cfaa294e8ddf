"""Where the app keeps AIBench: stored data sets under :func:`structext_core.settings.aibench_dir`
(``$STRUCTEXT_AIBENCH_DIR`` or ``annotations/aibench``), each with its predictions files.

- :func:`ensure_synthetic`: the synthetic set (the embedded default, like Test and Test-Hard for
  StrucText) generated and imported when it is missing; its ``truth.jsonl`` and
  ``expected.json`` are kept beside it for the failure-mode views;
- :func:`add_predictions`: a predictions file checked against its data set (every problem named,
  nothing written on any) and stored under ``predictions/<name>.jsonl``;
- :func:`load_predictions`: all stored predictions of a data set;
- :func:`add_reference_predictions`: for the synthetic set, the predictions of a "perfect
  reader" (the right answer for each image, from ``truth.jsonl``), so its Table 3 shows what a
  solver that reads every image exactly would score: 100 on the original figures.

Every file is written whole to a temporary name and renamed into place.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from structext_core import settings
from structext_core.aibench import config as aibench_config
from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import identity
from structext_core.aibench import predictions as aibench_predictions
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.papers import Problem
from structext_core.aibench.synthetic import build
from structext_core.evaluation.runner import write_whole
from structext_core.studio import sandbox

SYNTHETIC = "synthetic"
SYNTHETIC_SEED = 0
SYNTHETIC_PAPERS = 20
SYNTHETIC_FILES = ("truth.jsonl", "expected.json")
_lock = threading.Lock()


def dataset_path(name: str) -> Path:
    """The folder of the stored data set ``name`` (a ``ValueError`` for a name that is not an id)."""
    if not aibench_dataset.safe_id(name):
        raise ValueError(f"{name[:60]!r} cannot name a data set (letters, digits, '.', '_', '-')")
    return aibench_config.dataset_dir() / name


def stored_datasets() -> list[str]:
    """The names of the stored data sets, sorted."""
    root = aibench_config.dataset_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if not p.name.startswith(".") and (p / aibench_dataset.STORED_MARKER).is_file())


@dataclass(frozen=True)
class Prints:
    """The content fingerprints of one stored data set (:mod:`structext_core.aibench.identity`):
    ``papers`` by paper id, ``questions`` by (paper id, question id). Empty when the set is gone."""

    papers: dict[str, str]
    questions: dict[tuple[str, str], str]

    def paper(self, dataset: str, paper_id: str) -> str:
        """The paper's fingerprint; for a paper no longer stored, its name in the set (it can then
        match only itself)."""
        return self.papers.get(paper_id) or f"{dataset}/{paper_id}"


@functools.lru_cache(maxsize=512)  # small (two dicts of short keys a set); Results in public mode reads every set
def _prints(folder: str, stamp: float) -> Prints:
    papers, questions = identity.prints(aibench_dataset.load_dataset(folder).papers)
    return Prints(papers, questions)


def prints_of(name: str) -> Prints:
    """The fingerprints of the stored data set ``name``, read once per version of its files;
    empty ones when it is not stored (or cannot be read)."""
    try:
        folder = dataset_path(name)
        marker = folder / aibench_dataset.STORED_MARKER
        papers = folder / "papers"
        stamp = max(marker.stat().st_mtime_ns, papers.stat().st_mtime_ns if papers.is_dir() else 0)
        return _prints(str(folder), stamp)
    except (ValueError, OSError):
        return Prints({}, {})


def _write_atomically(path: Path, data: bytes) -> None:
    write_whole(path, data)


def _draw_in_child(folder: Path, seed: int, papers: int, progress: Callable[[int, int], None]) -> None:
    """:func:`build.write_set` in a child Python process, so drawing never holds this process's
    interpreter (the server's pages keep their speed); its progress comes back line by line."""
    import subprocess
    import sys
    code = ("import sys\nfrom structext_core.aibench.synthetic import build\n"
            "build.write_set(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), "
            "progress=lambda d, t: print(d, t, flush=True))\n")
    with subprocess.Popen([sys.executable, "-c", code, str(folder), str(seed), str(papers)],
                          cwd=settings.PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as child:
        for line in child.stdout:
            done, total = (int(x) for x in line.split()[:2])
            progress(done, total)
        error = child.stderr.read()
        if child.wait(timeout=60) != 0:
            raise RuntimeError(f"drawing the synthetic set failed: {error.strip().splitlines()[-1:] or ['?']}")


def ensure_synthetic(pool: sandbox.WorkerPool | None = None,
                     progress: Callable[[str, int, int], None] | None = None, *, in_child: bool = False) -> Path:
    """The stored synthetic set, generated (seed 0, 20 papers) and imported first if it is missing;
    ``progress(step, done, total)`` is told of each paper drawn and each image checked;
    ``in_child``: the figures are drawn in a child process (the app's background job)."""
    dest = dataset_path(SYNTHETIC)
    with _lock:
        if (dest / aibench_dataset.STORED_MARKER).is_file() and all((dest / f).is_file() for f in SYNTHETIC_FILES):
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".synthetic-source-"))
        tell = progress or (lambda step, done, total: None)
        try:
            drawn = lambda done, total: tell("Drawing the papers' figures", done, total)  # noqa: E731
            if in_child:
                _draw_in_child(work / "set", SYNTHETIC_SEED, SYNTHETIC_PAPERS, drawn)
            else:
                build.write_set(work / "set", seed=SYNTHETIC_SEED, papers=SYNTHETIC_PAPERS, progress=drawn)
            aibench_import.import_folder(work / "set", dest, replace=True, pool=pool,
                                         progress=lambda done, total: tell("Checking the images", done, total))
            for name in SYNTHETIC_FILES:
                _write_atomically(dest / name, (work / "set" / name).read_bytes())
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return dest


def add_predictions(name: str, text: str, label: str) -> int:
    """Check ``text`` (predictions JSONL) against the data set ``name`` and store it as
    ``predictions/<label>.jsonl``; the number of predictions. Raises
    :class:`~structext_core.aibench.dataset.ImportFailed` (nothing written) on any problem,
    including a label already stored or a prediction another stored file already holds."""
    folder = dataset_path(name)
    data = aibench_dataset.load_dataset(folder)
    if not aibench_dataset.safe_id(label):
        raise aibench_dataset.ImportFailed([Problem(label[:60], "", "cannot name a predictions file "
                                                                   "(letters, digits, '.', '_', '-')")])
    target = folder / "predictions" / f"{label}.jsonl"
    if target.exists():
        raise aibench_dataset.ImportFailed([Problem(f"{label}.jsonl", "", "a predictions file of that name is stored")])
    found = aibench_predictions.parse_predictions(text, data, f"{label}.jsonl")
    if not found:
        raise aibench_dataset.ImportFailed([Problem(f"{label}.jsonl", "", "holds no predictions")])
    stored = {p.key for p in load_predictions(name)}
    clashes = [p for p in found if p.key in stored]
    if clashes:
        p = clashes[0]
        raise aibench_dataset.ImportFailed([Problem(f"{label}.jsonl", "", (
            f"{len(clashes)} prediction(s) are already stored, e.g. {p.paper_id}/{p.question_id} by {p.solver!r} "
            f"on {p.system!r}"))])
    _write_atomically(target, aibench_predictions.to_jsonl(found).encode("utf-8"))
    return len(found)


MAX_UPLOAD_MB = 40
"""The largest predictions file the Results page takes (the command line takes up to
``aibench.limits.MAX_PREDICTIONS_FILE_BYTES``)."""


def upload_predictions(name: str, data: bytes, filename: str, label: str = "") -> tuple[str, int]:
    """A predictions file uploaded on the Results page, stored with the data set ``name`` as
    :func:`add_predictions` does (``label``, else the file's name without ``.jsonl``); (label, count).
    :class:`~structext_core.aibench.dataset.ImportFailed` naming the file, line and field, nothing
    stored, on any problem (too large, not UTF-8, a bad line, a label already stored)."""
    shown = Path(filename or "upload").name[:120]
    if len(data) > MAX_UPLOAD_MB * 1_000_000:
        raise aibench_dataset.ImportFailed([Problem(shown, "", (
            f"{len(data):,} bytes; the page takes at most {MAX_UPLOAD_MB} MB (store a larger file with "
            "`python -m structext_core aibench add-predictions`)"))])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise aibench_dataset.ImportFailed([Problem(shown, f"line {line}", "not UTF-8 text")]) from None
    label = (label or "").strip() or (shown[:-6] if shown.lower().endswith(".jsonl") else shown)
    return label, add_predictions(name, text, label)


def load_predictions(name: str) -> list[aibench_predictions.Prediction]:
    """Every stored prediction of the data set ``name``, files in name order."""
    folder = dataset_path(name)
    files = sorted((folder / "predictions").glob("*.jsonl")) if (folder / "predictions").is_dir() else []
    if not files:
        return []
    data = aibench_dataset.load_dataset(folder)
    out = []
    for path in files:
        out.extend(aibench_predictions.read_predictions(path, data))
    return out


REFERENCE_SOLVER = "perfect reader (synthetic truth)"
REFERENCE_LABEL = "perfect-reader"


def add_reference_predictions(pool: sandbox.WorkerPool | None = None,
                              progress: Callable[[str, int, int], None] | None = None, *,
                              in_child: bool = False) -> int:
    """Store the synthetic set's perfect-reader predictions (made first if missing); the number
    stored (0 when they already are)."""
    import json
    folder = ensure_synthetic(pool, progress, in_child=in_child)
    if (folder / "predictions" / f"{REFERENCE_LABEL}.jsonl").exists():
        return 0
    rows = [json.loads(line) for line in (folder / "truth.jsonl").read_text("utf-8").splitlines()]
    text = "".join(json.dumps({"paper_id": r["paper_id"], "question_id": r["question_id"], "system": r["system"],
                               "solver": REFERENCE_SOLVER, "prediction": r["truth"]}) + "\n" for r in rows)
    return add_predictions(SYNTHETIC, text, REFERENCE_LABEL)


# ---------------------------------------------------------------- made at start, in the background

@dataclass(frozen=True)
class SyntheticStatus:
    """Where the synthetic set stands: ``ready``, ``running`` (``step``, ``done`` of ``total``),
    ``failed`` (``error``) or ``missing`` (not started, e.g. ``STRUCTEXT_AIBENCH_SYNTHETIC=off``)."""
    state: str
    step: str = ""
    done: int = 0
    total: int = 0
    error: str = ""


_jobs: dict[str, dict] = {}  # per AIBench folder: {"thread", "status"}
_jobs_lock = threading.Lock()


def synthetic_ready() -> bool:
    """The synthetic set and its perfect-reader predictions are stored (a few file checks)."""
    try:
        folder = dataset_path(SYNTHETIC)
    except ValueError:
        return False
    return ((folder / aibench_dataset.STORED_MARKER).is_file()
            and all((folder / f).is_file() for f in SYNTHETIC_FILES)
            and (folder / "predictions" / f"{REFERENCE_LABEL}.jsonl").is_file())


def synthetic_status() -> SyntheticStatus:
    """The synthetic set's state in this process (see :class:`SyntheticStatus`)."""
    if synthetic_ready():
        return SyntheticStatus("ready")
    with _jobs_lock:
        job = _jobs.get(str(aibench_config.dataset_dir()))
        return job["status"] if job else SyntheticStatus("missing")


def at_start() -> None:
    """The member's ``AT_START``, on every run of the app: the synthetic set is started when the
    setting asks for it (:func:`structext_core.settings.aibench_synthetic_at_start`; first start:
    made in a background thread, a few file checks later on)."""
    if aibench_config.synthetic_at_start():
        start_synthetic()


def start_synthetic(pool: sandbox.WorkerPool | None = None) -> SyntheticStatus:
    """Make the synthetic set (and its perfect-reader predictions) in a background thread when
    it is missing and no thread of this process is making it yet; returns at once with the state.
    A failed attempt is not retried until the server restarts (its error stays in the state)."""
    if synthetic_ready():
        return SyntheticStatus("ready")
    key = str(aibench_config.dataset_dir())
    with _jobs_lock:
        job = _jobs.get(key)
        if job is not None:
            return job["status"]
        job = _jobs[key] = {"status": SyntheticStatus("running", "Starting", 0, SYNTHETIC_PAPERS)}

    def tell(step: str, done: int, total: int) -> None:
        with _jobs_lock:
            job["status"] = SyntheticStatus("running", step, done, total)

    def work() -> None:
        try:
            add_reference_predictions(pool, tell, in_child=True)
            state = SyntheticStatus("ready")
        except Exception as exc:  # noqa: BLE001 - kept and shown on the AIBench view; the app runs on
            state = SyntheticStatus("failed", error=f"{type(exc).__name__}: {str(exc)[:300]}")
        with _jobs_lock:
            job["status"] = state

    job["thread"] = threading.Thread(target=work, name="aibench-synthetic", daemon=True)
    job["thread"].start()
    return job["status"]


def wait_for_synthetic(timeout: float) -> SyntheticStatus:
    """Wait up to ``timeout`` seconds for this process's background job; its state then."""
    with _jobs_lock:
        job = _jobs.get(str(aibench_config.dataset_dir()))
    if job is not None and job.get("thread") is not None:
        job["thread"].join(timeout)
    return synthetic_status()
