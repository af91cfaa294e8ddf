"""Home and Explore as data: one line per sample, the filters, the statistics, a selection
as JSONL; AIBench's stored data sets and a paper as the seal lets a user see them. The pages (``pages/home.py``, ``pages/explore.py``) only place these on the screen;
the rendered view of a reference is :func:`structext_core.structext_eval.preview.preview` (run
in a check worker, :mod:`structext_core.studio.sandbox`).

Explore reruns its whole script on every filter change, so a suite is read and indexed once
per file version (:func:`load_suite_view`), not once per click: reading Test-Hard (41 MB) takes
most of a second, and even a copied cache (``st.cache_data`` unpickles what it returns) took a
third of one. A long reference's raw text is shown a page of lines at a time
(:func:`raw_page`): drawing 11,000 highlighted lines takes the browser seconds.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from structext_core.aibench import model
from structext_core.aibench import store as aibench_store
from structext_core.structext_eval import samples
from structext_core.structext_eval.formats import LANGUAGES
from structext_core.structext_eval.tasks import ABBREVIATIONS, TASKS
from structext_core.studio import access, question_review, seal


def task_label(task_id: int) -> str:
    """``8 · json TR: json-object-by-id``."""
    t = TASKS[task_id]
    return f"{task_id} · {t.language} {ABBREVIATIONS[t.category]}: {t.slug}"


def index_frame(rows: list[dict]) -> pd.DataFrame:
    """One line per sample with what the filters and statistics need (no texts)."""
    return pd.DataFrame({
        "id": [r["id"] for r in rows],
        "format": [r["language"] for r in rows],
        "task": [r["task"] for r in rows],
        "task_id": [r["task_id"] for r in rows],
        "depth": [r["depth"] for r in rows],
        "width": [r["width"] for r in rows],
        "reference_chars": [len(r["reference"]) for r in rows],
        "answer_chars": [len(r["answer"]) for r in rows],
    })


def format_choices(index: pd.DataFrame) -> list[str]:
    """The formats the suite has, in the app's order."""
    present = set(index["format"])
    return [language for language in LANGUAGES if language in present]


def task_choices(index: pd.DataFrame, formats: Iterable[str] | None = None) -> list[int]:
    """The tasks the suite has, by id; only those of ``formats`` when some are chosen."""
    present, chosen = set(index["task_id"]), set(formats or ())
    return [t for t in sorted(TASKS) if t in present and (not chosen or TASKS[t].language in chosen)]


def filter_index(index: pd.DataFrame, formats=None, task_ids=None, depths=None, widths=None) -> pd.DataFrame:
    """Rows matching every given filter (an empty or None filter keeps everything)."""
    mask = pd.Series(True, index=index.index)
    for column, wanted in (("format", formats), ("task_id", task_ids), ("depth", depths), ("width", widths)):
        if wanted:
            mask &= index[column].isin(list(wanted))
    return index[mask]


def suite_stats(index: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Counts and mean lengths by format and by (depth, width)."""
    def table(by: list[str]) -> pd.DataFrame:
        out = index.groupby(by).agg(samples=("id", "size"), ref=("reference_chars", "mean"),
                                    ans=("answer_chars", "mean")).reset_index()
        out["ref"] = out["ref"].round(0).astype(int)
        out["ans"] = out["ans"].round(0).astype(int)
        return out.rename(columns={"ref": "mean reference chars", "ans": "mean answer chars"})

    return {"format": table(["format"]), "grid": table(["depth", "width"])}


def selection_jsonl(rows: Iterable[dict]) -> bytes:
    """The chosen samples as a JSONL file's bytes (the sample file's own lines)."""
    return "".join(samples.to_jsonl_line(r) for r in rows).encode("utf-8")


# ---- a suite read once per file version ------------------------------------------------

#: How many suite files (each version of a file counts once) stay read; Test-Hard holds ~100 MB.
VIEW_CACHE_ENTRIES = 4


@dataclass(frozen=True)
class SuiteView:
    """A suite's samples in file order, the same by id, and the index the filters run on.

    One view serves every session that browses the file (:func:`load_suite_view`): read it,
    never change it; :meth:`keep` makes a narrower view for one person.
    """

    rows: tuple[dict, ...]
    by_id: Mapping[str, dict]
    index: pd.DataFrame

    @classmethod
    def of(cls, rows: Iterable[dict]) -> SuiteView:
        rows = tuple(rows)
        return cls(rows, MappingProxyType({r["id"]: r for r in rows}), index_frame(list(rows)))

    def keep(self, rows: Iterable[dict]) -> SuiteView:
        """A view of ``rows`` (some of this view's samples, as a sealing filter returns them:
        possibly copies with a field withheld), its index cut from this one's."""
        rows = tuple(rows)
        ids = {r["id"] for r in rows}
        return SuiteView(rows, MappingProxyType({r["id"]: r for r in rows}),
                         self.index[self.index["id"].isin(ids)])


def load_suite_view(path: str | Path) -> SuiteView:
    """The :class:`SuiteView` of a suite file, read once per version of the file (its path,
    modification time and size); a changed file is read again. Raises what
    :func:`structext_core.structext_eval.samples.read_jsonl` raises for a file that does not read."""
    path = Path(path)
    stat = path.stat()
    return _read_view(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=VIEW_CACHE_ENTRIES)
def _read_view(path: str, mtime_ns: int, size: int) -> SuiteView:
    # mtime_ns and size are only the key: a file rewritten in place reads again.
    return SuiteView.of(samples.read_jsonl(path))


def clear_view_cache() -> None:
    """Forget every read suite (the benchmark's "uncached" runs and tests use it)."""
    _read_view.cache_clear()


# ---- long raw text a page at a time ---------------------------------------------------------

#: References up to this many lines are shown whole and highlighted; longer ones a page at a time.
RAW_PAGE_LINES = 400


@dataclass(frozen=True)
class RawPage:
    """One page of a reference's lines: ``text`` holds lines ``first``..``last`` (1-based) of
    ``total``; ``page`` of ``pages``."""

    text: str
    first: int
    last: int
    total: int
    page: int
    pages: int

    @property
    def whole(self) -> bool:
        return self.pages == 1

    def numbered(self) -> str:
        """The page's lines, each after its number in the whole reference (a page's own line
        numbers would restart at 1)."""
        width = len(str(self.total))
        return "\n".join(f"{n:>{width}}  {line}" for n, line in enumerate(self.text.split("\n"), self.first))


def raw_page(reference: str, page: int = 1, lines: int = RAW_PAGE_LINES) -> RawPage:
    """Page ``page`` (1-based; clamped into range) of ``reference`` cut into ``lines`` lines a page."""
    if lines < 1:
        raise ValueError("a page holds at least one line")
    all_lines = reference.split("\n")
    pages = max(1, -(-len(all_lines) // lines))
    page = min(max(1, int(page)), pages)
    first = (page - 1) * lines
    chunk = all_lines[first:first + lines]
    return RawPage("\n".join(chunk), first + 1, first + len(chunk), len(all_lines), page, pages)


# ---- AIBench's stored data sets ---------------------------------------------------------------


@dataclass(frozen=True)
class AibenchPaper:
    """One AIBench paper as Explore shows it: its method text, original figure (``figure``: the
    stored PNG, None when the set has none) and questions, each ``{id, level, question, options}``
    and, only when ``keys_shown``, ``key`` and ``rationale``."""

    dataset: str
    paper_id: str
    conference: str
    year: int
    method_text: str
    figure: Path | None
    questions: tuple[dict, ...]
    keys_shown: bool


def aibench_datasets(db, user: dict | None) -> list[str]:
    """The stored AIBench data sets ``user`` may browse here: those whose questions with keys the
    seal lets them see (:func:`structext_core.studio.access.visible_aibench_datasets`: for visitors
    and annotators, only in public read-only mode and none holding a paper, in any copy, of an open
    AIBench or pairwise study)."""
    return access.visible_aibench_datasets(db, user, aibench_store.stored_datasets())


def aibench_paper_ids(db, user: dict | None, dataset: str) -> list[str]:
    """The papers of ``dataset`` shown to ``user``, sorted: none of a set they may not browse, and
    never a paper (by content) they still have to answer or vote on (:func:`structext_core.studio.seal.open_papers`,
    a second lock behind the set's)."""
    if dataset not in aibench_datasets(db, user):
        return []
    sealed = seal.open_papers(db, user["id"] if user else None)
    papers = question_review.load_dataset(dataset).papers
    return [pid for pid in sorted(papers) if seal.paper_key(dataset, pid) not in sealed]


def aibench_paper(db, user: dict | None, dataset: str, paper_id: str) -> AibenchPaper:
    """The paper ``paper_id`` of ``dataset`` as ``user`` may see it; a ``PermissionError`` when it
    is not theirs to see (:func:`aibench_paper_ids`). Keys only with the capability ``answers``."""
    if paper_id not in aibench_paper_ids(db, user, dataset):
        raise PermissionError(f"The paper {paper_id[:60]!r} of {dataset[:60]!r} is not shown to you.")
    data = question_review.load_dataset(dataset)
    paper = data.papers[paper_id]
    keys = access.can(access.role_of(user), "answers", access.public_mode(db))
    record = data.images.get((model.ORIGINAL_SYSTEM, paper_id))
    questions = []
    for q in paper.questions:
        row = {"id": q.id, "level": q.level, "question": q.question,
               "options": tuple(f"{model.LETTERS[i]}. {text}" for i, text in enumerate(q.options))}
        if keys:
            row.update(key=q.answer, rationale=q.rationale)
        questions.append(row)
    return AibenchPaper(dataset, paper_id, paper.conference, paper.year, paper.method_text,
                        aibench_store.dataset_path(dataset) / record.path if record else None,
                        tuple(questions), keys)
