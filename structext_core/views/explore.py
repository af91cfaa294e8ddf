"""Home and Explore as data: one line per sample, the filters, the statistics, a selection
as JSONL. The pages (``pages/home.py``, ``pages/explore.py``) only place these on the screen;
the rendered view of a reference is :func:`structext_core.benchmark.preview.preview` (run
in a worker by ``structext_core.studio.sandbox.preview``).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from structext_core.benchmark import samples
from structext_core.benchmark.formats import LANGUAGES
from structext_core.benchmark.tasks import ABBREVIATIONS, TASKS


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
