"""Home and Explore as data: one line per sample, the filters, the statistics, a selection
as JSONL (a benchmark's own stored data sets are its package's: its member's ``EXPLORE_VIEW``). The pages (``pages/home.py``, ``pages/explore.py``) only place these on the screen;
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
import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from structext_core.structext_eval import samples
from structext_core.structext_eval.formats import LANGUAGES
from structext_core.structext_eval.tasks import ABBREVIATIONS, TASKS
from structext_core.text.safe_text import preformatted_html


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


def filter_index(index: pd.DataFrame, formats=None, task_ids=None, depths=None, widths=None,
                 id_contains: str | None = None) -> pd.DataFrame:
    """Rows matching every given filter (an empty or None filter keeps everything); ``id_contains``:
    the text the id must contain, as written (no pattern)."""
    mask = pd.Series(True, index=index.index)
    for column, wanted in (("format", formats), ("task_id", task_ids), ("depth", depths), ("width", widths)):
        if wanted:
            mask &= index[column].isin(list(wanted))
    if id_contains:
        mask &= index["id"].astype(str).str.contains(id_contains, regex=False).to_numpy(dtype=bool)
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


# ---- a sample as one HTML block ---------------------------------------------------------------

#: An answer longer than this many lines scrolls in a frame this many pixels high.
ANSWER_LINES_IN_FULL = 12
ANSWER_FRAME = 300

#: The card's style sheet: its heading, a line of the sample's facts, then two columns (what is asked |
#: what is answered) that stack on a narrow screen; a rule hint tinted as Streamlit's info box.
_CARD_STYLE = (
    "<style>.sx-card h3{font-size:1.5rem;font-weight:600;line-height:1.3;margin:1rem 0 0.25rem 0}"
    ".sx-card h4{font-size:1rem;font-weight:600;margin:0 0 0.25rem 0}"
    ".sx-card-facts{font-size:0.875rem;opacity:0.7;margin:0 0 1rem 0;overflow-wrap:anywhere}"
    ".sx-card-columns{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:1rem}"
    "@media (max-width:640px){.sx-card-columns{grid-template-columns:minmax(0,1fr)}}"
    ".sx-card-text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0 0 1rem 0}"
    ".sx-card-hint{white-space:pre-wrap;overflow-wrap:anywhere;padding:0.75rem 1rem;border-radius:0.5rem;"
    "background:rgba(28,131,225,0.12);margin:0 0 1rem 0}</style>")


def sample_html(sample: Mapping) -> str:
    """``sample`` as Explore shows it, one HTML block: its task as a heading, its facts (id, format,
    category, depth, width, column, seed, length), the question, the requirement and what it was built
    from beside the answer (a long one scrolls in its frame) and the rule hint; every text escaped,
    shown exactly as it is (no Markdown read into a question), white space kept."""
    def e(value) -> str:
        return html.escape(str(value), quote=False)

    facts = " · ".join([f"<strong>{e(sample['id'])}</strong>", *(
        f"{name} <strong>{e(sample[key])}</strong>" for name, key in (
            ("format", "language"), ("category", "task"), ("depth", "depth"), ("width", "width"), ("col", "col"),
            ("seed", "seed"))), f"{len(sample['reference']):,} characters"])
    asked = (f"<h4>Question</h4><p class=\"sx-card-text\">{e(sample['question'])}</p>"
             f"<h4>Requirement</h4><p class=\"sx-card-text\">{e(sample['requirement'])}</p>")
    if sample.get("params"):
        asked += "<h4>Built from</h4>" + preformatted_html(json.dumps(sample["params"], indent=2, ensure_ascii=False))
    lines = sample["answer"].count("\n") + 1
    answered = (f"<h4>Answer{f' ({lines:,} lines)' if lines > 1 else ''}</h4>"
                + preformatted_html(sample["answer"], max_height=ANSWER_FRAME if lines > ANSWER_LINES_IN_FULL else None)
                + f"<h4>Rule hint</h4><div class=\"sx-card-hint\" role=\"note\">{e(sample['rule_hint'])}</div>")
    return (f'{_CARD_STYLE}<div class="sx-card" data-testid="sxSample"><h3>{e(task_label(sample["task_id"]))}</h3>'
            f'<p class="sx-card-facts">{facts}</p><div class="sx-card-columns"><div>{asked}</div>'
            f'<div>{answered}</div></div><h4>Reference</h4></div>')
