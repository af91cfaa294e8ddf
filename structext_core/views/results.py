"""What the Results page shows, as data: values, filters, heatmap cells, the paper's figures
(depth x width, people vs models, Test vs Real-Test, metric correlation), paired comparisons,
drill-downs and CSV tables. Tested without Streamlit; the page only draws widgets.

Views work on a ``value`` column in percent (0-100), made by :func:`with_value` from the stored
per-response scores: ROUGE-L raw, or thresholded at a chosen threshold (a score below it counts
as 0, the paper's rule), exact match or BLEU. ROUGE-L comes in two versions, as in
``score --metric strict|paper``: ``strict`` (ours: rouge-score's tokens on the extracted answer)
and ``paper`` (the authors' pltrdy ``rouge`` on the whole response). :class:`ValueChoice` is
one such choice; it names itself in chart titles (:attr:`ValueChoice.title`), CSV tables
(a ``metric`` and a ``threshold`` column) and file names. Aggregation (means with bootstrap
intervals, paired comparisons) is :mod:`structext_core.evaluation.aggregate`'s.

People answer few items, models many: :func:`answered_items` and :func:`on_items` restrict a view
to the items people answered, so both are compared on the same items. Every cell carries its n;
:func:`flag_small_cells` marks cells below a minimum n (the charts grey them out). The
:func:`leaderboard` ranks models and people with a 95 % interval (Wilson for exact match, a
proportion; percentile bootstrap otherwise); :func:`correlate` refuses fewer than 3 groups.
A view's state in the page's URL is :mod:`structext_core.views.url_state`'s."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import sqlite_utils

from structext_core.evaluation import aggregate
from structext_core.evaluation.scoring import DEFAULT_THRESHOLD
from structext_core.text import safe_text
from structext_core.text.words import plural

# ------------------------------------------------------------------ constants

DIMENSIONS = ("model", "prompt", "suite", "format", "task", "depth", "width")
"""What a heatmap's rows and columns (and the filters) can be."""
ORDERED_DIMENSIONS = ("depth", "width")
"""Dimensions whose values have an order of their own (1, 2, 3...): by default a heatmap keeps it."""
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


# ------------------------------------------------------------------ values and filters

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


def missing_values(frame: pd.DataFrame, choice: ValueChoice) -> int:
    """How many model rows have no score for ``choice`` (the paper's ROUGE-L of rows stored
    before it was; people's BLEU is not counted: people have none by design)."""
    column = frame[choice.column]
    return int((column.isna().to_numpy() & ~human_mask(frame)).sum())


def filter_options(frame: pd.DataFrame) -> dict[str, list]:
    """The distinct values of every dimension, sorted (numbers as numbers)."""
    return {d: sorted(frame[d].dropna().unique().tolist()) for d in DIMENSIONS if d in frame.columns}


def apply_filters(frame: pd.DataFrame, filters: Mapping[str, Sequence]) -> pd.DataFrame:
    """Rows whose every filtered dimension is among the chosen values (an empty choice keeps all)."""
    mask = np.ones(len(frame), dtype=bool)
    for column, chosen in filters.items():
        if chosen:
            mask &= frame[column].isin(list(chosen)).to_numpy()
    return frame[mask]


# ------------------------------------------------------------------ heatmap

def _labels(series: pd.Series) -> pd.Series:
    return series.astype("string").fillna("(none)")


def heatmap_frame(
    frame: pd.DataFrame,
    row: str,
    col: str,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    sort: str = "auto",
) -> pd.DataFrame:
    """One cell per (row, col) value with ``mean``, ``n``, ``ci_low``, ``ci_high`` (percent).

    The row and column values become text labels (``row_label``, ``col_label``);
    ``row_rank`` / ``col_rank`` order them by their overall mean, best first (``sort="mean"``,
    ties alphabetical) or by the values themselves (``sort="name"``: depth 1, 2, 3...);
    ``sort="auto"`` (the default) keeps the values' order for :data:`ORDERED_DIMENSIONS` and
    sorts the others by mean.
    ``frame`` needs a ``value`` column (:func:`with_value`).
    """
    if row == col:
        raise ValueError("choose different dimensions for rows and columns")
    if frame.empty:
        return pd.DataFrame(columns=[row, col, "mean", "n", "ci_low", "ci_high", "row_label", "col_label",
                                     "row_rank", "col_rank"])
    cells = aggregate.aggregate(frame, [row, col], value="value", n_boot=n_boot, seed=seed)
    cells = cells[cells["n"] > 0].copy()
    cells["row_label"] = _labels(cells[row])
    cells["col_label"] = _labels(cells[col])
    if sort not in HEATMAP_SORTS:
        raise ValueError(f"unknown sort {sort!r}: use one of {', '.join(map(repr, HEATMAP_SORTS))}")
    for axis, name in (("row", row), ("col", col)):
        means = frame.groupby(name, dropna=False, observed=True)["value"].mean()
        by_mean = sort == "mean" or (sort == "auto" and name not in ORDERED_DIMENSIONS)
        order = means.sort_values(ascending=False, kind="stable") if by_mean else means.sort_index()
        ranks = {str(k): i for i, k in enumerate(order.index)}
        cells[f"{axis}_rank"] = cells[f"{axis}_label"].map(ranks).fillna(len(ranks)).astype(int)
    return cells.reset_index(drop=True)


def axis_order(cells: pd.DataFrame, axis: str) -> list[str]:
    """Labels of ``axis`` (``row`` or ``col``) in rank order."""
    pairs = cells[[f"{axis}_label", f"{axis}_rank"]].drop_duplicates().sort_values(f"{axis}_rank")
    return pairs[f"{axis}_label"].astype(str).tolist()


def check_min_n(min_n: int) -> int:
    """``min_n`` as an int in [1, :data:`MAX_MIN_N`]; anything else raises."""
    if isinstance(min_n, bool) or not isinstance(min_n, (int, np.integer)) or not 1 <= min_n <= MAX_MIN_N:
        raise ValueError(f"the minimum n must be a whole number from 1 to {MAX_MIN_N:,}, got {min_n!r}")
    return int(min_n)


def flag_small_cells(cells: pd.DataFrame, min_n: int = DEFAULT_MIN_N) -> pd.DataFrame:
    """``cells`` with ``below_min``: whether a cell's ``n`` is below ``min_n``. Such cells stay
    (greyed out by the charts, flagged in the tables): hiding them would hide that they are thin."""
    min_n = check_min_n(min_n)
    out = cells.copy()
    out["below_min"] = out["n"].astype(int) < min_n if len(out) else pd.Series(dtype=bool)
    return out


def min_n_note(min_n: int, cells: pd.DataFrame | None = None, rows: bool = False) -> str:
    """The caption's sentence about the minimum n: what is greyed out (a table's ``rows``:
    flagged), and how many of ``cells`` (flagged by :func:`flag_small_cells`)."""
    things, done = ("rows", "ticked under “n below minimum” (below_min_n)") if rows else ("cells", "greyed out")
    if min_n <= 1:
        return f"Raise “Minimum n” to grey out {things} with few results." if not rows else \
            f"Raise “Minimum n” to flag {things} with few results."
    count = "" if cells is None or "below_min" not in cells else f" ({int(cells['below_min'].sum())} of {len(cells)})"
    return (f"{things.capitalize()} with n below {min_n} are {done}{count}, not hidden: their means rest on "
            "few results.")


# ------------------------------------------------------------------ Figure 4: depth x width

def depth_width_frame(frame: pd.DataFrame, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per model and (depth, width): mean, n, 95 % interval, and the spread of the per-format
    and per-task means in that cell (``format_std``, ``task_std``: standard deviation across
    formats / task categories; NaN with fewer than two)."""
    if frame.empty:
        return pd.DataFrame(columns=["model", "depth", "width", "mean", "n", "ci_low", "ci_high",
                                     "format_std", "task_std"])
    cells = aggregate.aggregate(frame, ["model", "depth", "width"], value="value", n_boot=n_boot, seed=seed)
    keys = ["model", "depth", "width"]
    for dimension in ("format", "task"):
        per = frame.groupby([*keys, dimension], observed=True, dropna=False)["value"].mean()
        spread = per.groupby(level=keys, observed=True, dropna=False).std(ddof=0).rename(f"{dimension}_std")
        counts = per.groupby(level=keys, observed=True, dropna=False).size()
        spread[counts < 2] = np.nan
        cells = cells.merge(spread.reset_index(), on=keys, how="left")
    return cells


# ------------------------------------------------------------------ Figure 7: people vs models

POOL = "human"
"""The model name of people pooled: every person's answers together, each answer once."""


def is_human(model: str) -> bool:
    """Whether a result row's model is a person (``human`` or ``human:<name>``)."""
    return model == POOL or model.startswith("human:")


def human_mask(frame: pd.DataFrame) -> np.ndarray:
    """Which rows of ``frame`` are people's answers."""
    return frame["model"].astype(str).map(is_human).to_numpy(dtype=bool)


def people_of(frame: pd.DataFrame) -> list[str]:
    """Whose answers a view may be restricted to: the pool ``human`` (everyone) first, then each
    ``human:<name>`` sorted; [] when no person answered."""
    people = sorted({str(m) for m in frame["model"].dropna().unique() if is_human(str(m))} - {POOL})
    return [POOL, *people] if people or (frame["model"] == POOL).any() else []


def answered_items(frame: pd.DataFrame, people: str = POOL) -> frozenset[str]:
    """The items (sample ids) that ``people`` answered (``human``: any person)."""
    mask = human_mask(frame) if people == POOL else (frame["model"] == people).to_numpy()
    return frozenset(frame.loc[mask, "sample_id"].astype(str))


PEOPLE_AS = {
    "pool": "pooled as `human`",
    "each": "each person",
}
"""How a view shows people: one pool ``human`` (every answer of every person, once) or one
``human:<name>`` per person. Either way each answer is counted once."""


def people_as(frame: pd.DataFrame, how: str = "pool") -> pd.DataFrame:
    """``frame`` with people shown ``how`` (:data:`PEOPLE_AS`): ``pool`` renames every
    ``human:<name>`` to ``human``; ``each`` keeps them apart. Rows are never repeated."""
    if how not in PEOPLE_AS:
        raise ValueError(f"unknown way to show people {how!r}; choose one of {list(PEOPLE_AS)}")
    if how == "each":
        return frame
    people = human_mask(frame)
    if not people.any() or (frame.loc[people, "model"] == POOL).all():
        return frame
    out = frame.copy()
    out.loc[people, "model"] = POOL
    return out


WHOSE = {
    "models": "models",
    "people": "people",
    "both": "models and people together",
}
"""Whose results a view without a ``model`` axis averages: its cells would otherwise mix people
and models in one mean without saying so."""


def whose_rows(frame: pd.DataFrame, whose: str) -> pd.DataFrame:
    """The rows of ``frame`` that are ``whose`` (:data:`WHOSE`) results."""
    if whose not in WHOSE:
        raise ValueError(f"unknown choice of results {whose!r}; choose one of {list(WHOSE)}")
    if whose == "both":
        return frame
    people = human_mask(frame)
    return frame[people if whose == "people" else ~people]


def default_whose(frame: pd.DataFrame) -> str:
    """``models`` when ``frame`` holds model results, else ``people``."""
    return "models" if (~human_mask(frame)).any() or frame.empty else "people"


def heatmap_input(
    values: pd.DataFrame,
    row: str,
    col: str,
    items: "ItemScope",
    filters: Mapping[str, Sequence] = {},  # noqa: B006 - read only
    whose: str = "both",
    people: str = "pool",
) -> pd.DataFrame:
    """The rows a heatmap of ``values`` averages, as the page draws it: on ``items``, people
    shown as ``people`` (:data:`PEOPLE_AS`), filtered, and, when neither axis is ``model``,
    only ``whose`` results (:data:`WHOSE`). Each answer is one row: the sum of the cells' n is
    the number of rows returned (with a value)."""
    frame = apply_filters(people_as(items.apply(values), people), filters)
    if "model" not in (row, col):
        frame = whose_rows(frame, whose)
    return frame


def on_items(frame: pd.DataFrame, items: Iterable[str]) -> pd.DataFrame:
    """The rows of ``frame`` on ``items``: models and people compared on the same items."""
    return frame[frame["sample_id"].astype(str).isin(set(items)).to_numpy()]


@dataclass(frozen=True)
class ItemScope:
    """Which items a view uses: those ``people`` answered (``items``), or every item (``people``
    None). Says so in captions (:attr:`sentence`) and in CSV tables (an ``on_items`` column)."""

    people: str | None = None
    items: frozenset[str] = frozenset()

    @property
    def restricted(self) -> bool:
        return self.people is not None

    @property
    def label(self) -> str:
        """``the 12 items answered by human`` or ``all items``."""
        return f"the {plural(len(self.items), 'item')} answered by {self.people}" if self.restricted else "all items"

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        return on_items(frame, self.items) if self.restricted else frame

    def sentence(self, frame: pd.DataFrame) -> str:
        """How many items and results a view of ``frame`` (unrestricted) rests on, people and models apart."""
        part = self.apply(frame)
        human = human_mask(part)
        counts = (f"{plural(int(human.sum()), 'result')} of people, "
                  f"{int((~human).sum()):,} of {'a model' if int((~human).sum()) == 1 else 'models'}")
        if not self.restricted:
            return f"All items: {plural(part['sample_id'].nunique(), 'item')} ({counts})."
        models = sorted(set(part.loc[~human, "model"].astype(str)))
        return (f"People and models on the same items: {self.label}, n = {plural(len(self.items), 'shared item')} "
                f"({counts}; {plural(len(models), 'model')} answered them).")

    def left_out_warning(self, frame: pd.DataFrame) -> str | None:
        """When this scope leaves model results of ``frame`` (unrestricted) out, a sentence saying
        how many and how to include them; None when it leaves none out. (Why a first leaderboard of
        two complete runs ranked them on n = 4: a study's people had answered 4 items.)"""
        if not self.restricted:
            return None
        models = frame.loc[~human_mask(frame)]
        left_out = int((~models["sample_id"].isin(self.items)).sum())
        if not left_out:
            return None
        return (f"Models are compared with people here on the {plural(len(self.items), 'item')} "
                f"{self.people} answered only: {plural(left_out, 'model result')} on other items "
                "are left out. Turn on **All items** to rank the models on every item.")

    def label_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """``table`` with an ``on_items`` column first (:attr:`label`), for its CSV."""
        out = table.copy()
        out.insert(0, "on_items", self.label)
        return out


def models_on_people_items(frame: pd.DataFrame) -> int:
    """How many model results of ``frame`` lie on the items people answered: with none, a view
    restricted to those items shows people alone, so the page opens on every item instead."""
    items = answered_items(frame)
    if not items:
        return 0
    models = frame.loc[~human_mask(frame), "sample_id"].astype(str)
    return int(models.isin(items).sum())


def item_scope(frame: pd.DataFrame, people: str | None) -> ItemScope:
    """The items ``people`` answered in ``frame`` (an :class:`ItemScope`); None: every item."""
    if people is None:
        return ItemScope()
    return ItemScope(people, answered_items(frame, people))


def people_vs_models_frame(
    frame: pd.DataFrame,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    people: str = "human",
    same_items: bool = True,
    items: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Per model (people included) and task category, on the items people answered.

    ``people`` is the model name that defines the item set (``human``: the pool), unless
    ``items`` gives the set (a person's items in a frame where people are pooled). Returns
    mean, n, ci_low, ci_high per (model, task) and ``items``, the number of items used (the
    shared items; with ``same_items=False``, every item of ``frame``: models then answer items
    people never saw, which the page says).
    """
    items = answered_items(frame, people) if items is None else frozenset(map(str, items))
    if not items:
        return pd.DataFrame(columns=["model", "task", "mean", "n", "ci_low", "ci_high", "items", "group"])
    shared = on_items(frame, items) if same_items else frame
    cells = aggregate.aggregate(shared, ["model", "task"], value="value", n_boot=n_boot, seed=seed)
    cells["items"] = len(items) if same_items else shared["sample_id"].nunique()
    cells["group"] = ["people" if is_human(str(m)) else "model" for m in cells["model"]]
    return cells


# ------------------------------------------------------------------ Figure 6: Test vs Real-Test

def is_real_test(suite: str) -> bool:
    """Whether a suite name means Real-Test (``real-test``, ``real_test``, ``Real-Test``...)."""
    return str(suite).lower().replace("_", "-").replace(" ", "-").startswith("real")


def test_vs_real_frame(frame: pd.DataFrame, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per model: mean on Test and on Real-Test (``set`` column), for models that have both."""
    suites = frame["suite"].astype(str)
    real = suites.map(is_real_test)
    keep = real | (suites.str.lower() == "test")
    part = frame[keep.to_numpy()].assign(set=np.where(real[keep].to_numpy(), "Real-Test", "Test"))
    if part.empty:
        return pd.DataFrame(columns=["model", "set", "mean", "n", "ci_low", "ci_high"])
    both = part.groupby("model", observed=True)["set"].nunique()
    part = part[part["model"].isin(both[both == 2].index)]
    if part.empty:
        return pd.DataFrame(columns=["model", "set", "mean", "n", "ci_low", "ci_high"])
    return aggregate.aggregate(part, ["model", "set"], value="value", n_boot=n_boot, seed=seed)


# ------------------------------------------------------------------ Figure 5: metric correlation

CORRELATION_METRICS = {
    "rouge_l": "ROUGE-L strict (raw)",
    "score": "ROUGE-L strict (thresholded)",
    "rouge_l_paper": "ROUGE-L paper (raw)",
    "score_paper": "ROUGE-L paper (thresholded)",
    "exact_match": "Exact match",
    "bleu": "BLEU",
    "human_judgement": "Human judgement",
}


def metric_table(
    frame: pd.DataFrame,
    by: Sequence[str] = ("model", "prompt"),
    threshold: float = DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """Per group, the mean of every metric present (percent), for the correlation view: both
    ROUGE-L versions, raw and thresholded, exact match, BLEU.

    The thresholded ROUGE-L is recomputed at ``threshold``. Metrics with no values are dropped.
    """
    data = frame.copy()
    for raw, cut in (("rouge_l", "score"), ("rouge_l_paper", "score_paper")):
        if raw in data.columns:
            data[cut] = np.where(data[raw] >= threshold, data[raw], 0.0)
            data.loc[data[raw].isna(), cut] = np.nan
    metrics = [m for m in CORRELATION_METRICS if m in data.columns and data[m].notna().any()]
    table = data.groupby(list(by), observed=True)[metrics].mean().mul(100).reset_index()
    return table.rename(columns=CORRELATION_METRICS)


MIN_CORRELATION_GROUPS = 3
"""Over 2 groups any two metrics correlate perfectly (r = ±1), over 1 r is undefined: fewer is refused."""
CORRELATION_METHODS = ("pearson", "spearman")


@dataclass(frozen=True)
class Correlation:
    """A correlation matrix (``frame``: long ``metric_a, metric_b, r, n``) over ``n_groups``
    groups that have every metric, or None with the ``reason`` it was refused. ``constant``:
    metrics left out because they do not vary across the groups (their r is undefined)."""

    frame: pd.DataFrame | None
    reason: str | None
    n_groups: int
    constant: tuple[str, ...] = ()


def correlate(
    table: pd.DataFrame,
    metrics: Sequence[str],
    method: str = "pearson",
    min_groups: int = MIN_CORRELATION_GROUPS,
) -> Correlation:
    """Correlation of ``metrics`` over the rows of ``table`` (groups) that have every metric.

    Refused (``frame`` None, ``reason`` says why) with fewer than ``min_groups`` (at least 3)
    complete groups or fewer than 2 metrics that vary across them: a correlation over 2
    groups prints r = 1.000 whatever the metrics are.
    """
    if method not in CORRELATION_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {list(CORRELATION_METHODS)}")
    min_groups = max(int(min_groups), MIN_CORRELATION_GROUPS)
    data = table[list(metrics)].astype(float).dropna()
    n_groups = len(data)
    if len(metrics) < 2:
        return Correlation(None, f"A correlation needs at least 2 metrics; there are {len(metrics)}.", n_groups)
    if n_groups < min_groups:
        without = len(table) - n_groups
        left_out = f" ({without} more lack a metric, e.g. people have no BLEU)" if without else ""
        return Correlation(None, (
            f"A correlation needs at least {min_groups} groups with every metric; there "
            f"{'is' if n_groups == 1 else 'are'} {n_groups}{left_out}. Over 2 groups r is always ±1 and over "
            "1 it is undefined, so none is shown: group by more dimensions or widen the filters."), n_groups)
    spread = data.max() - data.min()
    constant = tuple(m for m in metrics if spread[m] == 0)
    varying = [m for m in metrics if m not in constant]
    if len(varying) < 2:
        return Correlation(None, (
            f"A correlation needs at least 2 metrics that vary across the groups; "
            f"{', '.join(constant)} {'is' if len(constant) == 1 else 'are'} the same in all {n_groups}."),
            n_groups, constant)
    corr = data[varying].corr(method=method)
    long = corr.stack(future_stack=True).reset_index()
    long.columns = ["metric_a", "metric_b", "r"]
    long["n"] = n_groups
    return Correlation(long, None, n_groups, constant)


def correlation_frame(table: pd.DataFrame, metrics: Sequence[str], method: str = "pearson") -> pd.DataFrame | None:
    """Long ``metric_a, metric_b, r, n`` over the rows of ``table`` (groups with every metric),
    or None when :func:`correlate` refuses (it says why)."""
    return correlate(table, metrics, method).frame


# ------------------------------------------------------------------ leaderboard

Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95 % interval."""
LEADERBOARD_N_BOOT = 1000
LEADERBOARD_SORTS = {
    "mean": "mean, best first",
    "ci_low": "lower 95% bound, best first",
    "n": "n, largest first",
    "name": "name",
}
CI_METHODS = {"wilson": "Wilson score", "bootstrap": "percentile bootstrap"}
"""The leaderboard's ``ci95_method`` column: which 95 % interval a row has."""
CI_DESCRIPTIONS = {
    "wilson": "Wilson score interval (exact match is a proportion: right or wrong)",
    "bootstrap": f"percentile bootstrap over responses ({LEADERBOARD_N_BOOT:,} resamples, seed 0)",
}


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (in [0, 1]); (nan, nan) for n = 0.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or n successes.
    """
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n], got {successes} of {n}")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def who_is(model: str) -> str:
    """``model``, ``person`` or ``people (pool)``: what a leaderboard row ranks."""
    if model == "human":
        return "people (pool)"
    return "person" if is_human(model) else "model"


def leaderboard(
    frame: pd.DataFrame,
    choice: ValueChoice,
    by: Sequence[str] = ("model", "prompt"),
    sort: str = "mean",
    min_n: int = DEFAULT_MIN_N,
    n_boot: int = LEADERBOARD_N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per model or person and prompt setting: ``rank`` (by mean, ties share it), ``who``,
    ``mean`` (percent), ``n`` (responses with a value), ``ci_low``, ``ci_high`` (95 %),
    ``ci_method`` and ``below_min`` (n below ``min_n``), sorted as ``sort`` says.

    ``frame`` has a ``value`` column made with ``choice`` (:func:`with_choice`). Exact match is a
    proportion: its interval is Wilson's. Other metrics are means of continuous scores (a
    thresholded ROUGE-L keeps its value above the threshold, so it is no proportion): their
    interval is the percentile bootstrap over responses. Rows without a value (people's BLEU)
    are left out.
    """
    if sort not in LEADERBOARD_SORTS:
        raise ValueError(f"unknown sort {sort!r}; choose one of {list(LEADERBOARD_SORTS)}")
    min_n = check_min_n(min_n)
    by = list(by)
    columns = ["rank", *by, "who", "mean", "n", "ci_low", "ci_high", "ci_method", "below_min"]
    data = frame[frame["value"].notna()]
    if data.empty:
        return pd.DataFrame(columns=columns)
    wilson = choice.metric == "exact_match"
    board = aggregate.aggregate(data, by, value="value", n_boot=0 if wilson else n_boot, seed=seed)
    board["ci_method"] = "bootstrap"
    if wilson:
        counts = data.groupby(by, observed=True, dropna=False, sort=True)["value"].agg(
            successes=lambda v: int((v >= 50).sum()), size="size").reset_index()
        board = board.merge(counts, on=by, how="left")
        bounds = [wilson_interval(int(k), int(n)) for k, n in zip(board["successes"], board["size"])]
        board["ci_low"] = [100 * low for low, _ in bounds]
        board["ci_high"] = [100 * high for _, high in bounds]
        board["ci_method"] = "wilson"
        board = board.drop(columns=["successes", "size"])
    board["who"] = board["model"].astype(str).map(who_is)
    board["rank"] = board["mean"].rank(method="min", ascending=False).astype(int)
    board["below_min"] = False
    return arrange_leaderboard(board[columns], sort, min_n)


def arrange_leaderboard(board: pd.DataFrame, sort: str = "mean", min_n: int = DEFAULT_MIN_N) -> pd.DataFrame:
    """A :func:`leaderboard` sorted again and flagged for another minimum n, without recomputing
    its intervals (the page keeps the computed board and only rearranges it)."""
    if sort not in LEADERBOARD_SORTS:
        raise ValueError(f"unknown sort {sort!r}; choose one of {list(LEADERBOARD_SORTS)}")
    min_n = check_min_n(min_n)
    board = board.copy()
    board["below_min"] = board["n"].astype(int) < min_n
    names = [c for c in board.columns if c not in ("rank", "who", "mean", "n", "ci_low", "ci_high", "ci_method",
                                                   "below_min")]
    if sort == "name":
        board = board.sort_values(names, kind="stable")
    else:
        board = board.sort_values([sort, *names], ascending=[False] + [True] * len(names), kind="stable")
    return board.reset_index(drop=True)


def leaderboard_table(board: pd.DataFrame, choice: ValueChoice) -> pd.DataFrame:
    """The leaderboard for display and CSV: the mean and interval columns name the metric
    (``mean_rouge_l_strict_t0.75``), the interval's method is spelt out, numbers rounded."""
    table = board.copy()
    for column in ("mean", "ci_low", "ci_high"):
        table[column] = table[column].astype(float).round(2)
    table["ci_method"] = table["ci_method"].map(CI_METHODS)
    table = table.rename(columns={
        "mean": choice.file_name("mean"), "ci_low": choice.file_name("ci95_low"),
        "ci_high": choice.file_name("ci95_high"), "ci_method": "ci95_method", "below_min": "below_min_n"})
    return table


# ------------------------------------------------------------------ paired comparison

ITEM_COLUMNS = ("sample_id", "prompt", "model", "suite", "format", "task", "task_id", "depth", "width")


def item_means(frame: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """The rows of ``models`` with one value per (model, sample, prompt): a pool of people
    (``human``) answers an item several times, and its mean on the item is what gets paired."""
    part = frame[frame["model"].isin(list(models))]
    keys = [c for c in ITEM_COLUMNS if c in part.columns]
    if not part.duplicated(["model", "sample_id", "prompt"]).any():
        return part
    return part.groupby(keys, observed=True, dropna=False, sort=False)["value"].mean().reset_index()


def shared_rows(frame: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """The rows of both models on the (sample, prompt) pairs both answered: what a paired
    comparison's cell is made of, for its drill-down."""
    keys = ["sample_id", "prompt"]
    a = frame.loc[frame["model"] == model_a, keys].drop_duplicates()
    b = frame.loc[frame["model"] == model_b, keys].drop_duplicates()
    both = a.merge(b, on=keys)
    part = frame[frame["model"].isin([model_a, model_b])]
    return part.merge(both, on=keys, how="inner")


def paired_frame(
    frame: pd.DataFrame,
    model_a: str,
    model_b: str,
    row: str,
    col: str,
    n_boot: int = DEFAULT_N_BOOT,
    n_perm: int = 2000,
    seed: int = 0,
    alpha: float = SIGNIFICANCE,
) -> pd.DataFrame:
    """Paired difference a - b (points) per (row, col) cell on the samples both answered
    (same sample and prompt), with its 95 % interval, p-value (sign-flip test) and
    ``significant`` (p < ``alpha``, no correction for the number of cells)."""
    if row == col:
        raise ValueError("choose different dimensions for rows and columns")
    by = [d for d in (row, col) if d != "model"]
    cells = aggregate.paired_compare(item_means(frame, (model_a, model_b)), model_a, model_b, by=by, value="value",
                                     n_boot=n_boot, n_perm=n_perm, seed=seed)
    for axis, name in (("row", row), ("col", col)):
        cells[f"{axis}_label"] = f"{model_a} - {model_b}" if name == "model" else _labels(cells[name])
    cells["significant"] = cells["p_value"] < alpha
    cells["mark"] = np.where(cells["significant"], "*", "")
    for axis in ("row", "col"):
        means = cells.groupby(f"{axis}_label")["diff"].mean().sort_values(ascending=False, kind="stable")
        ranks = {k: i for i, k in enumerate(means.index)}
        cells[f"{axis}_rank"] = cells[f"{axis}_label"].map(ranks).astype(int)
    return cells


# ------------------------------------------------------------------ drill-down

def cell_rows(frame: pd.DataFrame, row: str, row_value: str, col: str, col_value: str) -> pd.DataFrame:
    """The result rows behind one heatmap cell (values compared as their labels)."""
    mask = (_labels(frame[row]) == str(row_value)) & (_labels(frame[col]) == str(col_value))
    return frame[mask.to_numpy()]


def find_samples(
    sample_ids: Iterable[str],
    db: sqlite_utils.Database | None = None,
    data_dir: str | Path | None = None,
) -> dict[str, dict]:
    """The samples with these ids, from the suite files in ``data_dir`` (``*.jsonl``) and the
    human-baseline studies' stored items. Ids not found are simply absent."""
    from structext_core.benchmark import suites  # local: suites pulls in every format module

    wanted = {str(s) for s in sample_ids}
    found: dict[str, dict] = {}
    if db is not None and wanted:
        placeholders = ", ".join("?" * len(wanted))
        for sample_id, sample_json in db.execute(
            f"SELECT sample_id, sample_json FROM study_items WHERE sample_id IN ({placeholders})", list(wanted)
        ):
            found.setdefault(sample_id, json.loads(sample_json))
    missing = wanted - set(found)
    folder = Path(data_dir) if data_dir is not None else suites.data_dir()
    if missing and folder.is_dir():
        for path in sorted(folder.glob("*.jsonl")):
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    head = line[:200]  # "id" is the first key of a sample line
                    if not any(f'"{sid}"' in head for sid in missing):
                        continue
                    sample = json.loads(line)
                    if sample.get("id") in missing:
                        found[sample["id"]] = sample
                        missing.discard(sample["id"])
            if not missing:
                break
    return found


DRILL_COLUMNS = ("sample_id", "model", "prompt", "suite", "format", "task", "depth", "width", "value", "rouge_l",
                 "rouge_l_paper", "exact_match", "bleu", "question", "requirement", "answer", "answer_extracted",
                 "response", "reference")


def drill_down(
    rows: pd.DataFrame,
    db: sqlite_utils.Database | None = None,
    data_dir: str | Path | None = None,
    limit: int = 200,
) -> pd.DataFrame:
    """The samples behind a cell, worst first: reference, question, answer, response and scores.

    Responses of model results are read from the ``results`` table; human rows carry theirs.
    At most ``limit`` rows.
    """
    part = rows.sort_values(["value", "sample_id"], kind="stable").head(limit).copy()
    texts: dict[int, tuple[str, str]] = {}
    ids = [int(i) for i in part["row_id"].dropna()] if "row_id" in part.columns else []
    if db is not None and ids:
        placeholders = ", ".join("?" * len(ids))
        for row_id, response, extracted in db.execute(
            f"SELECT id, response, answer_extracted FROM results WHERE id IN ({placeholders})", ids
        ):
            texts[row_id] = (response or "", extracted or "")
    responses, extracted_answers = [], []
    for row_id, own in zip(part.get("row_id", [None] * len(part)),
                           part["response"] if "response" in part.columns else [None] * len(part)):
        if row_id is not None and not pd.isna(row_id) and int(row_id) in texts:
            response, extracted = texts[int(row_id)]
        else:
            response = "" if own is None or (isinstance(own, float) and math.isnan(own)) else str(own)
            extracted = response
        responses.append(response)
        extracted_answers.append(extracted)
    part["response"] = responses
    part["answer_extracted"] = extracted_answers
    samples = find_samples(part["sample_id"], db=db, data_dir=data_dir)
    for field_name in ("question", "requirement", "answer", "reference"):
        part[field_name] = [str(samples.get(s, {}).get(field_name, "(sample not found)")) for s in part["sample_id"]]
    return part[[c for c in DRILL_COLUMNS if c in part.columns]].reset_index(drop=True)


# ------------------------------------------------------------------ paper views

def paper_heatmap_cells(name: str, kind: str | None = None) -> pd.DataFrame:
    """A paper table as heatmap cells: ``row_label`` (model, with the prompt for Table 3),
    ``col_label`` (the printed column), ``mean`` (the value), ``label`` (the printed text),
    in the printed order."""
    from structext_core.evaluation import paper

    long = paper.long_table(name)
    if kind is not None:
        long = long[long["kind"] == kind]
    row_label = long["model"] + " / " + long["prompt"] if name == "table3" else long["model"]
    return pd.DataFrame({
        "row_label": row_label, "col_label": long["column"], "mean": long["value"], "label": long["label"],
        "row_rank": long["row_order"], "col_rank": long["col_order"],
    }).reset_index(drop=True)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A table as UTF-8 CSV with a header and no index; a text cell (or column name) a
    spreadsheet would run as a formula gets a leading apostrophe
    (:func:`structext_core.text.safe_text.frame_csv`)."""
    return safe_text.frame_csv(frame).encode("utf-8")


def cells_table(cells: pd.DataFrame, row: str, col: str) -> pd.DataFrame:
    """Heatmap cells as a tidy table for display and CSV: row, column, mean, n, 95 % interval."""
    table = pd.DataFrame({
        row: cells["row_label"].astype(str), col: cells["col_label"].astype(str),
        "mean": cells["mean"].astype(float).round(2), "n": cells["n"].astype(int),
        "ci_low": cells["ci_low"].astype(float).round(2), "ci_high": cells["ci_high"].astype(float).round(2),
    })
    if "below_min" in cells.columns:
        table["below_min_n"] = cells["below_min"].astype(bool).to_numpy()
    order = cells[["row_rank", "col_rank"]].to_numpy()
    return table.iloc[np.lexsort((order[:, 1], order[:, 0]))].reset_index(drop=True)


def uploads_table(uploads: Sequence) -> pd.DataFrame:
    """Stored uploads (:class:`structext_core.studio.results_store.StoredUpload`) as the page's
    table: which file, how many rows, how many of them carry the paper's ROUGE-L, which metric the
    file was scored with before it came here (empty for a file of responses only), when."""
    return pd.DataFrame(
        [{"id": u.id, "filename": u.filename, "source": u.source, "model": u.model, "rows_stored": u.rows_stored,
          "with_paper_metric": u.with_paper_metric, "scored_with": u.scored_with or "", "uploaded": u.uploaded}
         for u in uploads],
        columns=["id", "filename", "source", "model", "rows_stored", "with_paper_metric", "scored_with", "uploaded"],
    )


def scored_otherwise(uploads: Sequence, choice: ValueChoice) -> str | None:
    """A note for the page when files were scored with another ROUGE-L than the one the view
    shows: which files, with which metric, and which the view uses (every stored row has both,
    so the view's figures are the view's metric). None when nothing differs or the view shows
    no ROUGE-L."""
    if choice.metric != "rouge_l":
        return None
    other = [u for u in uploads if u.scored_with and u.scored_with != choice.rouge]
    if not other:
        return None
    names = ", ".join(f"{u.filename} ({u.scored_with})" for u in other[:5])
    more = f" and {len(other) - 5} more" if len(other) > 5 else ""
    return (f"Scored with another metric before import: {names}{more}. This view shows the "
            f"{ROUGE_DESCRIPTIONS[choice.rouge]}; every stored row carries both ROUGE-Ls, so its "
            f"figures for those files are {choice.rouge}, not the file's own `score`.")
