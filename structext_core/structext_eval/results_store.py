"""Model results into the database: uploads, harness logs, files and folders (validated and scored by
:mod:`.result_files`, kept in ``results`` and ``uploads``); read back with people's answers by :mod:`.results_frame`.

Every row carries both ROUGE-L metrics: ``rouge_l`` (strict: rouge-score's tokens on the
extracted answer) and ``rouge_l_paper`` (the authors' pltrdy ``rouge`` on the whole response);
rows imported before the paper's metric was stored have NaN there. What crosses into the app is
typed: :class:`ImportSummary`, :class:`FolderReport` and :class:`StoredUpload`.

The suite a file is matched against is parsed once per file version (:func:`sample_index`):
a Test-Hard suite is 41 MB of JSON, and reading it again for every import cost more than
storing the scored rows."""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from structext_core import settings
from structext_core.evaluation import harness, scoring
from structext_core.evaluation.matching import Problem, ResultsImportError
from structext_core.evaluation.scoring import DEFAULT_THRESHOLD
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval.samples import read_jsonl
from structext_core.studio.storage import write_transaction
from structext_core.text import limits
from structext_core.text.words import plural

MAX_UPLOAD_MB = 40
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024

HUMAN_SOURCE_PREFIX = "human-study:"

LOAD_COLUMNS = (
    "row_id", "source", "upload_id", "sample_id", "model", "prompt", "suite", "format", "task",
    "task_id", "depth", "width", "rouge_l", "score", "exact_match", "bleu", "rouge_l_paper",
)
INSERT_COLUMNS = (
    "source", "sample_id", "model", "prompt", "suite", "language", "task", "task_id", "depth",
    "width", "response", "answer_extracted", "rouge_l", "score", "exact_match", "bleu", "imported_at",
    "upload_id", "rouge_l_paper", "score_paper",
)


# ------------------------------------------------------------------ reading uploads

def decode_upload(data: bytes, filename: str, max_bytes: int = MAX_UPLOAD_BYTES) -> list[str]:
    """The lines of an uploaded results file, or :class:`ResultsImportError` saying what is wrong.

    The file must be at most ``max_bytes`` and UTF-8 text (a UTF-8 byte-order mark is
    allowed); an undecodable byte is reported with its line and column.
    """
    if len(data) > max_bytes:
        raise ResultsImportError(filename, [Problem(0, (
            f"the file is {len(data) / 1024 / 1024:.1f} MB; the page accepts at most "
            f"{max_bytes / 1024 / 1024:.0f} MB. Split it (for example one file per model or prompt) "
            "or place it in the results folder and import the folder."))])
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ResultsImportError(filename, [Problem(1, (
            "the file is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8"))])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ResultsImportError(filename, [Problem(line, (
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {column} cannot be decoded "
            "(is the file in another encoding, such as Latin-1 or Windows-1252?); save it as UTF-8"))]) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ResultsImportError(filename, [Problem(line, "the file holds NUL characters: it is not a text file")])
    return text.splitlines()


# ------------------------------------------------------------------ the samples results answer

_INDEX_LOCK = threading.Lock()
_INDEXES: dict[str, tuple[tuple[int, int], results.SampleIndex]] = {}
_MAX_INDEXES = 2  # Test and Test-Hard; a parsed Test-Hard suite holds about 100 MB


def read_sample_index(path: str | Path) -> results.SampleIndex:
    """The samples of a suite file, parsed (no cache: what :func:`sample_index` caches)."""
    return results.SampleIndex(read_jsonl(path))


def sample_index(path: str | Path) -> results.SampleIndex:
    """The samples of a suite file, parsed once per version of the file (path, size and
    modification time) and shared by every import that follows. The index is never changed
    after it is built, so sessions may share it."""
    path = Path(path).resolve()
    stat = path.stat()
    version = (stat.st_mtime_ns, stat.st_size)
    key = str(path)
    with _INDEX_LOCK:
        cached = _INDEXES.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
    index = read_sample_index(path)  # outside the lock: other suites stay available meanwhile
    with _INDEX_LOCK:
        _INDEXES.pop(key, None)
        while len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.pop(next(iter(_INDEXES)))
        _INDEXES[key] = (version, index)
    return index


def clear_sample_indexes() -> None:
    """Forget the parsed suites, and that they were warmed up (benchmarks time a cold import)."""
    with _INDEX_LOCK:
        _INDEXES.clear()
    with _WARM_LOCK:
        _WARMING.clear()


_WARM_LOCK = threading.Lock()
_WARMING: dict[tuple[str, int, int], threading.Thread] = {}


def warm_up(path: str | Path) -> threading.Thread | None:
    """Parse a suite and prepare its answers for scoring in a background thread, once per
    version of the file; return the thread (running or done), or None for a missing file.

    The Results page calls it when an admin opens the loading panel: while they pick a file,
    the suite is read and each answer tokenised and counted, so the import that follows
    scores against prepared answers. Nothing is written; an import started before the
    warm-up ends simply prepares what is still missing itself (the caches are shared and
    safe to fill twice).
    """
    try:
        resolved = Path(path).resolve()
        stat = resolved.stat()
    except OSError:
        return None
    key = (str(resolved), stat.st_mtime_ns, stat.st_size)
    with _WARM_LOCK:
        thread = _WARMING.get(key)
        if thread is not None:
            return thread
        thread = threading.Thread(target=_warm, args=(resolved,), name=f"warm-up {resolved.name}", daemon=True)
        for old in [k for k in _WARMING if k[0] == key[0]]:
            del _WARMING[old]
        _WARMING[key] = thread
    thread.start()
    return thread


WARM_UP_WAIT_SECONDS = 120  # a Test-Hard suite warms up in about 2 s; past this an import goes on alone


def ready_index(path: str | Path, wait_seconds: float = WARM_UP_WAIT_SECONDS) -> results.SampleIndex:
    """The suite's index for an import: its warm-up (started now if none ran for this version)
    is waited for rather than repeated beside the import, so each answer is prepared once."""
    warming = warm_up(path)
    if warming is not None:
        warming.join(wait_seconds)
    return sample_index(path)


def _warm(path: Path) -> None:
    try:
        index = sample_index(path)
    except Exception:  # noqa: BLE001 - a warm-up only: the import itself reports a bad suite with its line
        return
    for sample in index.by_id.values():
        if "answer" in sample:  # as results.score_results reads it
            scoring.prepare_answer(str(sample["answer"])).ngrams.count()


@dataclass(frozen=True)
class ImportSummary:
    """What one import wrote."""

    upload_id: int
    filename: str
    file_format: str
    n_rows: int
    models: tuple[str, ...]
    prompts: tuple[str, ...]
    scored_with: str | None = None
    """The metric the file itself was scored with (``score --metric strict|paper --out``), when
    its rows say so; None for a file of responses only."""


def import_results(
    db: sqlite_utils.Database,
    data: bytes,
    filename: str,
    samples: results.SampleIndex | Iterable[Mapping],
    *,
    user_id: int | None = None,
    prompt: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    source: str | None = None,
    max_bytes: int = MAX_UPLOAD_BYTES,
) -> ImportSummary:
    """Validate, score and store one results file, all or nothing.

    Raises :class:`ResultsImportError` (naming the file and every faulty line) and writes
    nothing when the file is too large, not UTF-8, has a line that is not JSON, misses
    fields, names unknown samples or repeats a result. ``source`` defaults to
    ``upload:<filename>``; the file's SHA-256 is kept in the upload's note.
    """
    index = results.SampleIndex.of(samples)
    if harness.detect_format(data[:65536]) is None:
        lines = decode_upload(data, filename, max_bytes=max_bytes)
        file_format, rows = results.parse_results(lines, index, source=filename, prompt=prompt)
    else:  # an Inspect AI log or an lm-eval samples file, recognised by its content
        if len(data) > max_bytes:
            decode_upload(data, filename, max_bytes=max_bytes)  # raises the size message
        file_format, rows = harness.parse_bytes(data, filename, index, prompt=prompt)
    return _store_rows(db, rows, index, filename, file_format, hashlib.sha256(data).hexdigest(),
                       source=source or f"upload:{filename}", user_id=user_id, threshold=threshold)


_MATCHING_PROBLEMS = ("unknown sample_id", "no sample matches")
"""How the importers say a result names no sample of the suite (ours, the original format, harness logs)."""
_SAMPLE_ID = re.compile(rb'"(?:sample_)?id"\s*:\s*"([A-Za-z0-9._:-]{1,200})"')


def likely_suites(data: bytes, paths: Sequence[Path]) -> list[Path]:
    """``paths`` (suite files), the likeliest first for a results file ``data``: the suites whose
    name starts most of the sample ids in its first 64 KB (``test-hard-t01-d1w1-000`` is
    Test-Hard's), the longest name first; the rest keep their order. Only an order to try them in:
    :func:`import_matching` tries each until one holds every sample."""
    ids = [m.decode() for m in _SAMPLE_ID.findall(data[:65536])]

    def hits(path: Path) -> tuple[int, int]:
        found = sum(i.startswith(f"{path.stem}-") for i in ids)
        return (-found, -len(path.stem) if found else 0)  # test-hard-... starts with test- too

    return sorted(paths, key=hits) if ids else list(paths)


def import_matching(
    db: sqlite_utils.Database,
    data: bytes,
    filename: str,
    paths: Sequence[Path],
    **options,
) -> tuple[ImportSummary, Path]:
    """Import a results file against the suite file (of ``paths``) that holds its samples, worked out
    from the file: each is tried, likeliest first (:func:`likely_suites`), until one matches every
    result; (the import, that suite). All or nothing as :func:`import_results`; ``options`` are its.

    A problem other than an unknown sample (not JSON, a missing field...) is the same whatever the
    suite: it is raised at once. When no suite holds every sample, the error names the suites
    tried and gives the problems of the closest one."""
    return _first_matching(filename, data[:65536], paths,
                           lambda index: import_results(db, data, filename, index, **options))


def _first_matching(filename: str, head: bytes, paths: Sequence[Path], attempt) -> tuple[ImportSummary, Path]:
    """``attempt(index)`` with each suite of ``paths``, likeliest first, until one matches (see
    :func:`import_matching`)."""
    if not paths:
        raise ResultsImportError(filename, [Problem(0, "no suite files to match the results against: "
                                                       "generate Test / Test-Hard on the Home page first")])
    tried: list[tuple[Path, ResultsImportError]] = []
    for path in likely_suites(head, paths):
        try:
            return attempt(ready_index(path)), path
        except ResultsImportError as error:
            if not error.problems or not all(any(m in p.message for m in _MATCHING_PROBLEMS) for p in error.problems):
                raise
            tried.append((path, error))
    closest, error = min(tried, key=lambda pair: len(pair[1].problems))
    names = ", ".join(p.name for p, _ in tried)
    raise ResultsImportError(filename, [Problem(0, (
        f"no suite file holds all its samples (tried {names}); the closest is {closest.name}, where "
        f"{plural(len(error.problems), 'result')} name no sample. Are these results of another suite, "
        "or of another generation of it?")), *error.problems])


def import_harness_file(
    db: sqlite_utils.Database,
    path: str | Path,
    samples: results.SampleIndex | Iterable[Mapping],
    *,
    user_id: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    source: str | None = None,
) -> ImportSummary:
    """Import a harness log from disk, streamed and without the upload cap (the folder import).

    Epochs are averaged per sample; all or nothing, like :func:`import_results`.
    """
    path = Path(path)
    index = results.SampleIndex.of(samples)
    file_format, rows = harness.read_log(path, index)
    return _store_rows(db, rows, index, path.name, file_format, file_sha256(path),
                       source=source or f"folder:{path.name}", user_id=user_id, threshold=threshold)


def import_results_file(
    db: sqlite_utils.Database,
    path: str | Path,
    samples: results.SampleIndex | Iterable[Mapping],
    *,
    user_id: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    source: str | None = None,
    sha256: str | None = None,
) -> ImportSummary:
    """Import a results file (ours or the original's JSONL) from disk, read line by line: at
    most one line (:data:`~structext_core.text.limits.MAX_RECORD_CHARS` characters) is held
    besides the rows read so far, and a file of NUL bytes is refused at its first line, so a file
    of any size costs no more memory than its results. All or nothing, like :func:`import_results`."""
    path = Path(path)
    index = results.SampleIndex.of(samples)
    digest = sha256 or file_sha256(path)
    try:
        with open(path, "rb") as handle:
            file_format, rows = results.parse_results(_file_lines(handle, path.name), index, source=path.name)
    except OSError as exc:
        raise ResultsImportError(path.name, [Problem(0, f"cannot read ({exc.strerror or exc})")]) from None
    return _store_rows(db, rows, index, path.name, file_format, digest,
                       source=source or f"folder:{path.name}", user_id=user_id, threshold=threshold)


def _file_lines(handle, name: str):
    """The lines of a UTF-8 file opened in binary, as :func:`results.parse_results` takes them
    (None: a line longer than MAX_RECORD_CHARS, skipped a block at a time, never held), stopping
    with :class:`ResultsImportError` naming the line at a UTF-16 mark, an undecodable byte or a
    NUL character (what :func:`decode_upload` refuses in an upload)."""
    limit = limits.MAX_RECORD_CHARS
    most_bytes = 4 * limit + 4  # a character is at most 4 bytes of UTF-8
    number = 0

    def refuse(message: str):
        return ResultsImportError(name, [Problem(number, message)])

    def read(size: int) -> bytes:
        data = handle.readline(size)
        if b"\x00" in data:
            raise refuse("the file holds NUL characters: it is not a text file")
        return data

    while True:
        number += 1  # the line about to be read, as a refusal names it
        data = read(most_bytes + 1)
        if not data:
            return
        if number == 1:
            if data.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise refuse("the file is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8")
            data = data.removeprefix(b"\xef\xbb\xbf")
        if len(data) > most_bytes and not data.endswith(b"\n"):
            while True:  # skip the rest of the over-long line, a block at a time
                rest = read(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
            continue
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise refuse(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {exc.start + 1} cannot be "
                         "decoded (is the file in another encoding, such as Latin-1 or Windows-1252?); "
                         "save it as UTF-8") from None
        yield None if len(line) > limit else line


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def scored_with(rows: Iterable[Mapping]) -> str | None:
    """The metric a scored file was scored with: the ``metric`` every one of its rows names
    (``score --out`` writes it), or None when a row names none or they differ."""
    metrics = {row.get("metric") for row in rows}
    if len(metrics) == 1:
        (metric,) = metrics
        if metric in results.METRICS:
            return metric
    return None


_SCORED_WITH_NOTE = re.compile(r"(?:^| )scored_with:(\w+)")


def _store_rows(db, rows, index, filename, file_format, sha256, *, source, user_id, threshold) -> ImportSummary:
    metric = scored_with(rows)  # read before scoring: score_results writes its own `metric`
    scored = harness.average_epochs(results.score_results(rows, index, threshold=threshold))
    upload_id = save_scored(
        db, scored, filename=filename, source=source, user_id=user_id,
        note=f"sha256:{sha256} format:{file_format}" + (f" scored_with:{metric}" if metric else ""),
    )
    return ImportSummary(
        upload_id=upload_id, filename=filename, file_format=file_format, n_rows=len(scored),
        models=tuple(sorted({r["model"] for r in scored})), prompts=tuple(sorted({r["prompt"] for r in scored})),
        scored_with=metric,
    )


def _plain(value):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def save_scored(
    db: sqlite_utils.Database,
    scored: Sequence[Mapping],
    filename: str,
    source: str,
    user_id: int | None = None,
    note: str = "",
) -> int:
    """Store scored rows (``results.score_results`` output) as one upload, in one transaction.

    Returns the new upload's id.
    """
    models = sorted({str(r["model"]) for r in scored})
    stamp = time.time()
    with write_transaction(db):
        upload_id = db.execute(
            "INSERT INTO uploads (filename, source, model, note, n_rows, uploaded_by, uploaded_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [filename, source, ", ".join(models), note, len(scored), user_id, stamp],
        ).lastrowid
        values = []
        for row in scored:
            record = {**row, "source": source, "imported_at": stamp, "upload_id": upload_id}
            values.append([_plain(record.get(c)) for c in INSERT_COLUMNS])
        db.conn.executemany(
            f"INSERT INTO results ({', '.join(INSERT_COLUMNS)}) VALUES ({', '.join('?' * len(INSERT_COLUMNS))})",
            values,
        )
    return upload_id


@dataclass(frozen=True)
class StoredUpload:
    """One stored results file (or human-study publication) and what it holds."""

    id: int
    filename: str
    source: str
    model: str
    n_rows: int
    note: str
    uploaded_at: float
    rows_stored: int
    with_paper_metric: int
    """How many of its rows carry the paper's ROUGE-L (0 for files imported before it was stored)."""

    @property
    def uploaded(self) -> str:
        """When, as ``YYYY-MM-DD HH:MM UTC``."""
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.uploaded_at))

    @property
    def scored_with(self) -> str | None:
        """The metric the file was scored with before it was imported (``strict`` or ``paper``,
        kept in the upload's note), or None."""
        found = _SCORED_WITH_NOTE.search(self.note)
        return found[1] if found else None

    @property
    def label(self) -> str:
        """``#3 run.jsonl (2088 rows)``: how the page names it in its delete box."""
        return f"#{self.id} {self.filename} ({plural(self.rows_stored, 'row')})"


def list_uploads(db: sqlite_utils.Database) -> list[StoredUpload]:
    """Every upload with its row count (human-study publications included), oldest first."""
    cursor = db.execute(
        "SELECT u.id, u.filename, u.source, u.model, u.n_rows, u.note, u.uploaded_at,"
        " COUNT(r.id), COUNT(r.rouge_l_paper)"
        " FROM uploads u LEFT JOIN results r ON r.upload_id = u.id GROUP BY u.id ORDER BY u.id"
    )
    return [StoredUpload(int(id_), filename or "", source or "", model or "", int(n_rows or 0), note or "",
                         float(uploaded_at), int(stored), int(paper))
            for id_, filename, source, model, n_rows, note, uploaded_at, stored, paper in cursor.fetchall()]


def delete_upload(db: sqlite_utils.Database, upload_id: int) -> int:
    """Delete an upload and its result rows; returns how many result rows went."""
    with write_transaction(db):
        gone = db.execute("DELETE FROM results WHERE upload_id = ?", [upload_id]).rowcount
        db.execute("DELETE FROM uploads WHERE id = ?", [upload_id])
    return gone


def imported_hashes(db: sqlite_utils.Database) -> set[str]:
    """SHA-256 digests of every file imported so far (from the uploads' notes)."""
    hashes = set()
    for (note,) in db.execute("SELECT note FROM uploads WHERE note LIKE 'sha256:%'"):
        hashes.add(note.split()[0].removeprefix("sha256:"))
    return hashes


@dataclass(frozen=True)
class FolderReport:
    """The outcome of importing a folder: what was imported, skipped and refused."""

    imported: list[ImportSummary]
    skipped: list[str]
    failed: list[ResultsImportError]


def import_folder(
    db: sqlite_utils.Database,
    folder: str | Path,
    samples: results.SampleIndex | Iterable[Mapping] | Sequence[Path],
    *,
    user_id: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> FolderReport:
    """Import every ``*.jsonl`` file and harness log (``*.eval``, ``*.json``) of ``folder`` not
    imported before (same SHA-256), matched against ``samples``: one suite's samples, or suite
    files (paths), each file then against the one that holds its samples (:func:`import_matching`).

    Each file is all or nothing on its own: a bad file is reported and the others go in.
    No size limit applies here (the files are already on the server); every file is streamed
    (results files line by line, :func:`import_results_file`). An lm-eval ``results_*.json`` is read with its ``samples_*.jsonl``, not on its own.
    """
    samples = list(samples) if not isinstance(samples, results.SampleIndex) else samples
    suites = samples if samples and all(isinstance(p, Path) for p in samples) else None
    index = None if suites else results.SampleIndex.of(samples)

    def against(path: Path, attempt) -> ImportSummary:
        if suites is None:
            return attempt(index)
        with path.open("rb") as handle:
            head = handle.read(65536)
        return _first_matching(path.name, head, suites, attempt)[0]

    done = imported_hashes(db)
    imported, skipped, failed = [], [], []
    paths = sorted(p for p in Path(folder).iterdir() if p.suffix in (".jsonl", ".json", ".eval") and p.is_file())
    for path in paths:
        kind = harness.detect_path(path)
        if kind == harness.FORMAT_LM_EVAL_RESULTS:
            continue
        if kind is not None or path.suffix != ".jsonl":  # a .json / .eval that is no log is reported
            digest = file_sha256(path)
            if digest in done:
                skipped.append(path.name)
                continue
            try:
                imported.append(against(path, lambda found: import_harness_file(
                    db, path, found, user_id=user_id, threshold=threshold)))
            except ResultsImportError as exc:
                failed.append(exc)
                continue
            done.add(digest)
            continue
        digest = file_sha256(path)  # streamed, like the import below: a file of any size fits
        if digest in done:
            skipped.append(path.name)
            continue
        try:
            summary = against(path, lambda found: import_results_file(
                db, path, found, user_id=user_id, threshold=threshold, sha256=digest))
        except ResultsImportError as exc:
            failed.append(exc)
            continue
        imported.append(summary)
        done.add(digest)
    return FolderReport(imported, skipped, failed)


# ------------------------------------------------------------------ page helpers

def results_dir() -> Path:
    """The folder scanned by "import folder": ``$STRUCTEXT_RESULTS_DIR`` or ``annotations/results``."""
    return settings.results_dir()


def describe_problems(error: ResultsImportError, limit: int = 20) -> str:
    """An import error as Markdown: what was refused, then one bullet per faulty line."""
    lines = [f"**{error.source}** was not imported, nothing was stored: "
             f"{len(error.problems)} problem(s)."]
    for problem in error.problems[:limit]:
        where = f"line {problem.line}" if problem.line else "file"
        lines.append(f"- {where}: {problem.message}")
    if len(error.problems) > limit:
        lines.append(f"- ... and {len(error.problems) - limit} more")
    return "\n".join(lines)
