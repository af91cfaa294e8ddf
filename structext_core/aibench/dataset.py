"""An AIBench data set: a folder checked as a whole, then stored; and a stored data set read back.

The folder an import reads (every path relative to it)::

    papers/<any name>.json               one paper each (:mod:`structext_core.aibench.papers`)
    images/<system>/<paper_id>.png       one image per system and paper (.png, .jpg, .jpeg, .webp)
    aesthetics.jsonl                     optional: {"system", "paper_id", "metric", "score"} a line

A paper's ``original_figure`` (a path in the folder) is the image of the system
``Original Image``. Every file is untrusted: paths are opened one component at a time, relative
to the folder, never following a symbolic link (a link is refused and named), never leaving the
folder (an absolute path or ``..`` is refused); sizes are checked before reading. Images are
checked by the ``check_image`` the caller passes (the studio passes one that runs
:func:`structext_core.aibench.images.check_image` in a worker process) and stored as the PNG it
returns, so no file's metadata is kept.

Everything is checked before anything is stored: the images are written into a staging folder
beside the destination, which becomes the destination only when no problem was found, and is
removed otherwise. A failed import raises :class:`ImportFailed` with every :class:`Problem`.

The stored shape (``DEST/``): ``papers/<id>.json`` (our normalized paper), ``images.jsonl``
(``system, paper_id, path, width, height``), ``images/<n>/<paper_id>.png``, ``aesthetics.jsonl``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from structext_core.aibench import limits
from structext_core.aibench.model import ORIGINAL_SYSTEM, Paper
from structext_core.aibench.papers import ID_RE, Problem, paper_to_dict, parse_paper

ImageChecker = Callable[[bytes, str], dict]
STORED_MARKER = "aibench-dataset.json"


class ImportFailed(ValueError):
    """The import found problems; nothing was stored. ``problems`` names each with file and field."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:50])
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        super().__init__(f"{len(problems)} problem(s); nothing was imported:\n{shown}{more}")


@dataclass(frozen=True)
class ImageRecord:
    """One system's image of one paper, stored at ``path`` (relative to the data set)."""

    system: str
    paper_id: str
    path: str
    width: int
    height: int


@dataclass
class Dataset:
    """Papers by id, images by (system, paper_id), aesthetic scores by (system, paper_id, metric)."""

    papers: dict[str, Paper] = field(default_factory=dict)
    images: dict[tuple[str, str], ImageRecord] = field(default_factory=dict)
    aesthetics: dict[tuple[str, str, str], float] = field(default_factory=dict)

    @property
    def systems(self) -> list[str]:
        """The systems with images, the original first, the others sorted."""
        names = {system for system, _ in self.images}
        return sorted(names, key=lambda s: (s != ORIGINAL_SYSTEM, s))


# ---------------------------------------------------------------- reading untrusted files

class _Refused(Exception):
    pass


def _split_inside(relative: str) -> list[str]:
    """The components of a relative path that stays inside its folder; :class:`_Refused` otherwise."""
    if not relative or "\x00" in relative:
        raise _Refused("is empty" if not relative else "holds a NUL character")
    if relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise _Refused(f"{relative[:80]!r} is an absolute path; paths are relative to the import folder")
    parts = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Refused(f"{relative[:80]!r} leads outside the import folder")
    if not parts:
        raise _Refused(f"{relative[:80]!r} names no file")
    return parts


def _read_inside(root: Path, relative: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``relative`` inside ``root``, opened one component at a time
    without following any symbolic link; :class:`_Refused` saying why otherwise."""
    parts = _split_inside(relative)
    flags_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                info = os.lstat(part, dir_fd=fds[-1])
            except FileNotFoundError:
                raise _Refused(f"{relative[:80]!r} does not exist") from None
            if stat.S_ISLNK(info.st_mode):
                raise _Refused(f"{'/'.join(parts[:i + 1])[:80]!r} is a symbolic link; links are not followed")
            if last:
                if not stat.S_ISREG(info.st_mode):
                    raise _Refused(f"{relative[:80]!r} is not a regular file")
                fd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fds[-1])
                fds.append(fd)
                size = os.fstat(fd).st_size
                if size > max_bytes:
                    raise _Refused(f"{size:,} bytes; at most {max_bytes:,} are read")
                with os.fdopen(os.dup(fd), "rb") as handle:
                    data = handle.read(max_bytes + 1)
                if len(data) > max_bytes:
                    raise _Refused(f"grew past {max_bytes:,} bytes while being read")
                return data
            if not stat.S_ISDIR(info.st_mode):
                raise _Refused(f"{'/'.join(parts[:i + 1])[:80]!r} is not a folder")
            fds.append(os.open(part, flags_dir, dir_fd=fds[-1]))
    except OSError as error:
        raise _Refused(f"{relative[:80]!r} cannot be read ({error.strerror})") from None
    finally:
        for fd in fds:
            os.close(fd)
    raise AssertionError("unreachable")


def _list(root: Path, relative: str, problems: list[Problem], *, dirs: bool, limit: int) -> list[str]:
    """The names in the folder ``relative`` (none when it is absent); links and entries of the
    wrong kind are problems; dot files are skipped."""
    folder = root / relative
    if not os.path.lexists(folder):
        return []
    if folder.is_symlink() or not folder.is_dir():
        problems.append(Problem(relative, "", "is a symbolic link; links are not followed" if folder.is_symlink()
                                else "must be a folder"))
        return []
    names = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            where = f"{relative}/{entry.name}"
            if entry.is_symlink():
                problems.append(Problem(where, "", "is a symbolic link; links are not followed"))
            elif entry.is_dir(follow_symlinks=False) != dirs:
                problems.append(Problem(where, "", "must be a folder" if dirs else "must be a file"))
            else:
                names.append(entry.name)
            if len(names) > limit:
                problems.append(Problem(relative, "", f"more than {limit:,} entries; at most {limit:,} are read"))
                return []
    return sorted(names)


# ---------------------------------------------------------------- the import

def _read_papers(root: Path, problems: list[Problem]) -> dict[str, Paper]:
    papers: dict[str, Paper] = {}
    names = _list(root, "papers", problems, dirs=False, limit=limits.MAX_PAPERS)
    if not names and not any(p.file.startswith("papers") for p in problems):
        problems.append(Problem("papers", "", "no paper: put one JSON file per paper in papers/"))
    for name in names:
        where = f"papers/{name}"
        if not name.endswith(".json"):
            problems.append(Problem(where, "", "is not a .json file"))
            continue
        try:
            data = _read_inside(root, where, limits.MAX_PAPER_FILE_BYTES)
        except _Refused as why:
            problems.append(Problem(where, "", str(why)))
            continue
        paper, found = parse_paper(data, where)
        problems.extend(found)
        if paper is None:
            continue
        if paper.id in papers:
            problems.append(Problem(where, "id", f"{paper.id!r} is also the id of another paper"))
            continue
        papers[paper.id] = paper
    return papers


def _image_sources(root: Path, papers: dict[str, Paper], problems: list[Problem]) -> list[tuple[str, str, str]]:
    """(system, paper_id, relative path) of every image to import."""
    sources = [(ORIGINAL_SYSTEM, p.id, p.original_figure) for p in papers.values() if p.original_figure]
    systems = _list(root, "images", problems, dirs=True, limit=limits.MAX_SYSTEMS)
    for system in systems:
        if system == ORIGINAL_SYSTEM:
            problems.append(Problem(f"images/{system}", "", f"{ORIGINAL_SYSTEM!r} is each paper's original_figure"))
            continue
        for name in _list(root, f"images/{system}", problems, dirs=False, limit=limits.MAX_PAPERS):
            stem, dot, _ = name.rpartition(".")
            where = f"images/{system}/{name}"
            if not dot or stem not in papers:
                problems.append(Problem(where, "", f"{stem or name!r} is not the id of an imported paper"))
                continue
            sources.append((system, stem, where))
        if len(sources) > limits.MAX_IMAGE_FILES:
            problems.append(Problem("images", "", f"more than {limits.MAX_IMAGE_FILES:,} images"))
            return []
    return sources


def _read_aesthetics(root: Path, problems: list[Problem]) -> dict[tuple[str, str, str], float]:
    scores: dict[tuple[str, str, str], float] = {}
    where = "aesthetics.jsonl"
    if not os.path.lexists(root / where):
        return scores
    try:
        data = _read_inside(root, where, limits.MAX_AESTHETICS_FILE_BYTES)
    except _Refused as why:
        problems.append(Problem(where, "", str(why)))
        return scores
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        field_where = f"line {number}"
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            problems.append(Problem(where, field_where, "not a JSON object"))
            continue
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) and row.get(k)
                                                for k in ("system", "paper_id", "metric")):
            problems.append(Problem(where, field_where, "needs system, paper_id and metric (texts) and score"))
            continue
        score = row.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            problems.append(Problem(where, f"{field_where}.score", f"{str(score)[:40]!r} is not a finite number"))
            continue
        key = (row["system"], row["paper_id"], row["metric"])
        if key in scores:
            problems.append(Problem(where, field_where, f"a second score for {key}"))
            continue
        scores[key] = float(score)
    return scores


def _in_order(function, items: list, workers: int):
    """``function`` of each item, in order, computed by up to ``workers`` threads, at most
    ``2 * workers`` results held at a time."""
    if workers <= 1:
        yield from map(function, items)
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="aibench-import") as pool:
        window = 2 * workers
        for start in range(0, len(items), window):
            yield from pool.map(function, items[start:start + window])


def import_folder(folder: str | Path, dest: str | Path, check_image: ImageChecker, *, replace: bool = False,
                  workers: int = 1, progress: Callable[[int, int], None] | None = None) -> Dataset:
    """Check the AIBench folder ``folder`` and store it at ``dest``; the stored :class:`Dataset`.
    ``progress(done, total)`` is called after each image checked.

    ``check_image`` is called from ``workers`` threads at once (the sandbox pool is thread-safe);
    the result does not depend on ``workers``.

    Raises :class:`ImportFailed` naming every problem, having written nothing, when anything is
    wrong; a ``FileExistsError`` when ``dest`` exists and ``replace`` is false.
    """
    root, dest = Path(folder), Path(dest)
    if not root.is_dir():
        raise ImportFailed([Problem(str(folder), "", "is not a folder")])
    if os.path.lexists(dest) and not replace:
        raise FileExistsError(f"{dest} exists; choose another name or replace it")
    problems: list[Problem] = []
    papers = _read_papers(root, problems)
    sources = _image_sources(root, papers, problems)
    aesthetics = _read_aesthetics(root, problems)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.parent / f".{dest.name}.importing-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        dataset = Dataset(papers=papers, aesthetics=aesthetics)
        system_dirs: dict[str, str] = {}

        def read_and_check(source: tuple[str, str, str]) -> dict:
            try:
                data = _read_inside(root, source[2], limits.MAX_IMAGE_BYTES)
            except _Refused as why:
                return {"ok": False, "problem": str(why)}
            return check_image(data, Path(source[2]).suffix)

        for done, ((system, paper_id, relative), checked) in enumerate(
                zip(sources, _in_order(read_and_check, sources, workers)), start=1):
            if progress is not None:
                progress(done, len(sources))
            where = relative if system != ORIGINAL_SYSTEM else f"papers/{paper_id} original_figure {relative!r}"
            if not checked.get("ok"):
                problems.append(Problem(where, "", str(checked.get("problem"))))
                continue
            folder_name = system_dirs.setdefault(system, f"{len(system_dirs):03d}")
            stored = f"images/{folder_name}/{paper_id}.png"
            (staging / stored).parent.mkdir(parents=True, exist_ok=True)
            (staging / stored).write_bytes(checked["png"])
            dataset.images[(system, paper_id)] = ImageRecord(system, paper_id, stored, checked["width"],
                                                             checked["height"])
        imported = {(system, paper_id) for system, paper_id, _ in sources}
        for system, paper_id, metric in aesthetics:
            if (system, paper_id) not in imported:
                problems.append(Problem("aesthetics.jsonl", f"{system}/{paper_id}/{metric}",
                                        "scores an image that was not imported"))
        if problems:
            raise ImportFailed(problems)
        _write_stored(staging, dataset)
        if os.path.lexists(dest):
            old = dest.parent / f".{dest.name}.replaced-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            os.rename(dest, old)
            os.rename(staging, dest)
            shutil.rmtree(old)
        else:
            os.rename(staging, dest)
        return dataset
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_stored(folder: Path, dataset: Dataset) -> None:
    (folder / "papers").mkdir(exist_ok=True)
    for paper in dataset.papers.values():
        (folder / "papers" / f"{paper.id}.json").write_text(
            json.dumps(paper_to_dict(paper), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    rows = [{"system": r.system, "paper_id": r.paper_id, "path": r.path, "width": r.width, "height": r.height}
            for r in sorted(dataset.images.values(), key=lambda r: (r.system, r.paper_id))]
    (folder / "images.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    scores = [{"system": s, "paper_id": p, "metric": m, "score": v} for (s, p, m), v in sorted(dataset.aesthetics.items())]
    (folder / "aesthetics.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in scores),
                                             "utf-8")
    (folder / STORED_MARKER).write_text(json.dumps({"format": "aibench-dataset", "version": 1}) + "\n", "utf-8")


def load_dataset(folder: str | Path) -> Dataset:
    """A data set stored by :func:`import_folder` (its papers checked again as they are read)."""
    folder = Path(folder)
    if not (folder / STORED_MARKER).is_file():
        raise ValueError(f"{folder} is not a stored AIBench data set (no {STORED_MARKER})")
    dataset = Dataset()
    problems: list[Problem] = []
    for path in sorted((folder / "papers").glob("*.json")):
        paper, found = parse_paper(path.read_bytes(), f"papers/{path.name}")
        problems.extend(found)
        if paper is not None:
            dataset.papers[paper.id] = paper
    if problems:
        raise ImportFailed(problems)
    for line in (folder / "images.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        dataset.images[(row["system"], row["paper_id"])] = ImageRecord(**row)
    for line in (folder / "aesthetics.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        dataset.aesthetics[(row["system"], row["paper_id"], row["metric"])] = float(row["score"])
    return dataset


def safe_id(value: str) -> bool:
    """True when ``value`` may name a paper (and so a file)."""
    return bool(ID_RE.match(value)) and len(value) <= limits.MAX_ID_CHARS
