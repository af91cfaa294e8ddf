"""The options of a Results view, as data: which views there are (imported results and the
paper's tables), the value a view shows (:class:`ValueChoice`: metric, mode, threshold, ROUGE-L
version), the filters (over the dimensions a benchmark's view passes), and the minimum n.

Views work on a ``value`` column in percent (0-100), made by :func:`with_value` from the stored
per-response scores: ROUGE-L raw, or thresholded at a chosen threshold (a score below it counts
as 0, the paper's rule), exact match or BLEU. ROUGE-L comes in two versions, as in
``score --metric strict|paper``: ``strict`` (ours: rouge-score's tokens on the extracted answer)
and ``paper`` (the authors' pltrdy ``rouge`` on the whole response). :class:`ValueChoice` is
one such choice; it names itself in chart titles (:attr:`ValueChoice.title`), CSV tables
(a ``metric`` and a ``threshold`` column) and file names. Aggregation (means with bootstrap
intervals, paired comparisons) is :mod:`structext_core.evaluation.aggregate`'s. A view's state
in the page's URL is the benchmark's own (the shared part in :mod:`structext_core.views.url_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from structext_core.evaluation.scoring import DEFAULT_THRESHOLD

HEATMAP_SORTS = {
    "auto": "natural: depth, width in order",
    "mean": "all by mean",
    "name": "all by name",
}
"""How a heatmap orders its rows and columns (the default first)."""
METRICS = {
    "rouge_l": "ROUGE-L",
    "exact_match": "Exact match",
    "bleu": "BLEU",
}


MODES = ("thresholded", "raw")
"""``thresholded``: a ROUGE-L below the threshold counts as 0 (the paper's rule)."""
ROUGE_METRICS = {
    "strict": "strict (ours: the extracted answer)",
    "paper": "paper (the authors': the whole response)",
}
"""The two ROUGE-L versions, as ``score --metric strict|paper``: key -> the control's label."""
ROUGE_DESCRIPTIONS = {
    "strict": "strict ROUGE-L: rouge-score's tokens on the text after the last '### Answer:' line",
    "paper": "paper ROUGE-L: the authors' metric (pltrdy rouge 1.0.1) on the whole response, as in the paper",
}


ROUGE_COLUMNS = {"strict": "rouge_l", "paper": "rouge_l_paper"}
"""Where each version's per-response ROUGE-L F1 is stored."""
DEFAULT_N_BOOT = 500
SIGNIFICANCE = 0.05
DEFAULT_MIN_N = 1
"""The minimum n below which a cell is greyed out: 1 greys out nothing until the reader asks."""
MAX_MIN_N = 100_000


@dataclass(frozen=True)
class ValueChoice:
    """What a view's values are: the metric, for ROUGE-L its version (``strict`` or ``paper``)
    and whether it is thresholded, and the threshold. Validated when made."""

    metric: str = "rouge_l"
    rouge: str = "strict"
    mode: str = "thresholded"
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self):
        if self.metric not in METRICS:
            raise ValueError(f"unknown metric {self.metric!r}; choose one of {list(METRICS)}")
        if self.rouge not in ROUGE_METRICS:
            raise ValueError(f"unknown ROUGE-L version {self.rouge!r}; choose one of {list(ROUGE_METRICS)}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {list(MODES)}")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"the threshold must lie in [0, 1], got {self.threshold}")

    @property
    def is_rouge(self) -> bool:
        return self.metric == "rouge_l"

    @property
    def thresholded(self) -> bool:
        return self.is_rouge and self.mode == "thresholded"

    @property
    def column(self) -> str:
        """The stored per-response score the values come from."""
        return ROUGE_COLUMNS[self.rouge] if self.is_rouge else self.metric

    @property
    def name(self) -> str:
        """``rouge_l_strict``, ``rouge_l_paper``, ``exact_match`` or ``bleu``: the CSV's ``metric``."""
        return f"rouge_l_{self.rouge}" if self.is_rouge else self.metric

    @property
    def title(self) -> str:
        """The values as a chart names them: ``paper ROUGE-L ≥ 0.75 (%)``, ``BLEU (%)``."""
        return value_title(self.metric, self.mode, self.threshold, self.rouge)

    @property
    def description(self) -> str:
        """One line saying how the values are computed, for a chart's subtitle."""
        if not self.is_rouge:
            return f"{METRICS[self.metric]} on the extracted answer"
        cut = f"; below {self.threshold:g} counts as 0" if self.thresholded else "; raw F1"
        return ROUGE_DESCRIPTIONS[self.rouge] + cut

    def file_name(self, base: str) -> str:
        """``base`` with the metric appended: ``heatmap_model_format_rouge_l_paper_t0.75``."""
        if self.thresholded:
            return f"{base}_{self.name}_t{self.threshold:g}"
        return f"{base}_{self.name}_raw" if self.is_rouge else f"{base}_{self.name}"

    def label_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """``table`` with a ``metric`` and a ``threshold`` column first (the threshold empty
        for raw ROUGE-L, exact match and BLEU), for its CSV."""
        out = table.copy()
        out.insert(0, "threshold", self.threshold if self.thresholded else np.nan)
        out.insert(0, "metric", self.name)
        return out


def settings_line(choice: ValueChoice, people: str | None = None, min_n: int | None = None,
                  axes: tuple[str, str, str] | None = None) -> str:
    """What a closed Settings box keeps on, in one line: the values (``choice``), how people are shown
    (``people``: a label of ``PEOPLE_AS``, None when not offered), the minimum n (None when not
    offered) and a heatmap's ``axes`` (rows, columns, order: labels)."""
    parts = [choice.title.removesuffix(" (%)")]
    if people is not None:
        parts.append(f"people {people}")
    if min_n is not None:
        parts.append(f"minimum n {min_n:,}")
    if axes is not None:
        rows, columns, order = axes
        parts.append(f"rows {rows} × columns {columns} ({order})")
    return "Settings: " + " · ".join(parts) + "."


@dataclass(frozen=True)
class View:
    """One view of imported results: its label, and whether it redraws one of the paper's
    figures (then it opens on the paper's ROUGE-L, so its numbers compare with the paper's)."""

    label: str
    beside_paper: bool = False

    @property
    def default_rouge(self) -> str:
        return "paper" if self.beside_paper else "strict"


#: The views of imported results: key -> :class:`View`. The page offers them by key and
#: draws each with its own function; nothing parses a label.
VIEWS = {
    "heatmap": View("Heatmap"),
    "depth_width": View("Depth x width (Fig. 4)", beside_paper=True),
    "people_vs_models": View("People vs models (Fig. 7)", beside_paper=True),
    "test_vs_real": View("Test vs Real-Test (Fig. 6)", beside_paper=True),
    "metric_correlation": View("Metric correlation (Fig. 5)", beside_paper=True),
    "paired": View("Compare two models"),
    "leaderboard": View("Leaderboard"),
}


ITEM_VIEWS = ("heatmap", "leaderboard", "people_vs_models")
"""The views that compare people with models on the items people answered (unless told otherwise)."""
MIN_N_VIEWS = ("heatmap", "leaderboard", "depth_width", "paired")
"""The views with a minimum n: their cells (or rows) below it are greyed out (flagged), not hidden."""
#: The page's two sources of data: key -> label.
SOURCES = {"imported": "Imported results (models and people)", "paper": "Paper tables"}
PAPER_ROUGE_AS_PRINTED = "paper ROUGE-L ≥ 0.75 (%), as printed"


@dataclass(frozen=True)
class PaperView:
    """One view of the paper's tables: which table, which cut of Table 3, or Figure 5, and
    the metric its values are (``metric`` names it on the chart; ``metric_key`` in the CSV)."""

    label: str
    table: str | None  # table3, table4, table6; None for Figure 5 (computed from Table 6)
    kind: str | None = None  # Table 3's cut: format, task or overall
    row_title: str = "model"
    col_title: str = "column"
    metric: str = PAPER_ROUGE_AS_PRINTED
    metric_key: str = "rouge_l_paper"

    def file_name(self) -> str:
        """``paper_table3_format_rouge_l_paper``: the view and its metric."""
        return f"paper_{self.table or 'figure5'}_{self.kind or 'all'}_{self.metric_key}"

    def label_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """``table`` with a ``metric`` column first, for its CSV."""
        out = table.copy()
        out.insert(0, "metric", self.metric_key)
        return out


PAPER_VIEWS = {
    "table3_format": PaperView("Table 3: Test, by format", "table3", "format", "model / prompt", "format"),
    "table3_task": PaperView("Table 3: Test, by task category", "table3", "task", "model / prompt", "task"),
    "table3_overall": PaperView("Table 3: Test, overall", "table3", "overall", "model / prompt", "overall"),
    "table4": PaperView("Table 4: Test-Hard, models and humans", "table4", None, "model", "prompt"),
    "table6": PaperView("Table 6: Test-Hard, six metrics", "table6", None, "model", "metric",
                        metric="six metrics (%), as printed", metric_key="table6_metrics"),
    "figure5": PaperView("Figure 5: metric correlation (from Table 6)", None,
                         metric="Pearson r between Table 6's metrics", metric_key="pearson_r"),
}


def value_title(metric: str, mode: str, threshold: float, rouge: str = "strict") -> str:
    """What a chart's values are, for its title and axis: ``strict ROUGE-L ≥ 0.75 (%)``,
    ``paper ROUGE-L (%)``, ``BLEU (%)``."""
    if metric != "rouge_l":
        return f"{METRICS[metric]} (%)"
    cut = f" ≥ {threshold:g}" if mode == "thresholded" else ""
    return f"{rouge} {METRICS[metric]}{cut} (%)"


def with_value(
    frame: pd.DataFrame,
    metric: str = "rouge_l",
    mode: str = "thresholded",
    threshold: float = DEFAULT_THRESHOLD,
    rouge: str = "strict",
) -> pd.DataFrame:
    """``frame`` with a ``value`` column in percent.

    ``rouge_l`` is the per-response ROUGE-L F1 of version ``rouge`` (``strict``: column
    ``rouge_l``; ``paper``: ``rouge_l_paper``), ``thresholded`` (below ``threshold`` counts
    as 0) or ``raw``; ``exact_match`` and ``bleu`` ignore the version, mode and threshold.
    A missing score (NaN: no BLEU for people, no paper ROUGE-L for rows stored before it was)
    stays missing, so the means leave it out.
    """
    return with_choice(frame, ValueChoice(metric, rouge, mode, threshold))


def with_choice(frame: pd.DataFrame, choice: ValueChoice) -> pd.DataFrame:
    """``frame`` with a ``value`` column in percent, as ``choice`` says (see :func:`with_value`)."""
    score = frame[choice.column].to_numpy(dtype=float)
    if choice.thresholded:
        score = np.where(score >= choice.threshold, score, np.where(np.isnan(score), np.nan, 0.0))
    out = frame.copy()
    out["value"] = 100.0 * score
    return out


def filter_options(frame: pd.DataFrame, dimensions: Sequence[str]) -> dict[str, list]:
    """The distinct values of every one of ``dimensions`` in ``frame``, sorted (numbers as numbers)."""
    return {d: sorted(frame[d].dropna().unique().tolist()) for d in dimensions if d in frame.columns}


def apply_filters(frame: pd.DataFrame, filters: Mapping[str, Sequence]) -> pd.DataFrame:
    """Rows whose every filtered dimension is among the chosen values (an empty choice keeps all)."""
    mask = np.ones(len(frame), dtype=bool)
    for column, chosen in filters.items():
        if chosen:
            mask &= frame[column].isin(list(chosen)).to_numpy()
    return frame[mask]


def check_min_n(min_n: int) -> int:
    """``min_n`` as an int in [1, :data:`MAX_MIN_N`]; anything else raises."""
    if isinstance(min_n, bool) or not isinstance(min_n, (int, np.integer)) or not 1 <= min_n <= MAX_MIN_N:
        raise ValueError(f"the minimum n must be a whole number from 1 to {MAX_MIN_N:,}, got {min_n!r}")
    return int(min_n)
