"""People beside models: which rows are people's (one pool ``human`` or one row set per person),
whose rows a view shows, the items people answered, and Figure 7 (people vs models).

People answer few items, models many: :func:`answered_items` and :func:`on_items` restrict a view
to the items people answered, so both are compared on the same items (:class:`ItemScope`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from structext_core.evaluation import aggregate
from structext_core.text.words import plural
from structext_core.views.result_options import DEFAULT_N_BOOT, ValueChoice, apply_filters

POOL = "human"
"""The model name of people pooled: every person's answers together, each answer once."""


def is_human(model: str) -> bool:
    """Whether a result row's model is a person (``human`` or ``human:<name>``)."""
    return model == POOL or model.startswith("human:")


#: What a table shows as a person's prompt: people answer the question as it is, with no prompt
#: setting (their rows carry ``naive`` only so that they sit beside the models' rows).
NO_PROMPT = "—"


def people_without_prompt(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` (with ``model`` and ``prompt``) whose people's rows show
    :data:`NO_PROMPT` as their prompt: a person has none (regression: ``prompt: naive``)."""
    if "prompt" not in frame.columns or "model" not in frame.columns or frame.empty:
        return frame
    out = frame.copy()
    out["prompt"] = out["prompt"].astype(object).where(~human_mask(out), NO_PROMPT)
    return out


def human_mask(frame: pd.DataFrame) -> np.ndarray:
    """Which rows of ``frame`` are people's answers: by pyarrow's string search on a string column (the
    results frame's), otherwise asked of each distinct model once; never of each row in Python (a
    Results run asks it ten times of some 3,000 rows: 25 ms of a 65 ms run, row by row under the profiler)."""
    column = frame["model"]
    if isinstance(column.dtype, pd.StringDtype):  # the results frame's: pyarrow's own string search
        named = column.str.startswith("human:").fillna(False).to_numpy(dtype=bool)
        return named | column.eq(POOL).fillna(False).to_numpy(dtype=bool)
    people = [model for model in column.unique() if is_human(str(model))]
    return column.isin(people).to_numpy(dtype=bool)


def people_of(frame: pd.DataFrame) -> list[str]:
    """Whose answers a view may be restricted to: the pool ``human`` (everyone) first, then each
    ``human:<name>`` sorted; [] when no person answered."""
    people = sorted({str(m) for m in frame["model"].dropna().unique() if is_human(str(m))} - {POOL})
    return [POOL, *people] if people or (frame["model"] == POOL).any() else []


def answered_items(frame: pd.DataFrame, people: str = POOL) -> frozenset[str]:
    """The items (sample ids) that ``people`` answered (``human``: any person)."""
    mask = human_mask(frame) if people == POOL else (frame["model"] == people).to_numpy()
    return frozenset(map(str, frame.loc[mask, "sample_id"].dropna().unique()))  # each id once, not each row


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


@dataclass(frozen=True)
class PeopleFacts:
    """What a view's controls ask of the people in a frame (each person apart), read together:
    whose items a view may be restricted to (:func:`people_of`), how many model results lie on the
    items people answered (:func:`models_on_people_items`) and whether the frame holds any model's."""

    people: tuple[str, ...] = ()
    models_on_people_items: int = 0
    any_model: bool = False


def people_facts(frame: pd.DataFrame) -> PeopleFacts:
    """:class:`PeopleFacts` of ``frame``."""
    return PeopleFacts(tuple(people_of(frame)), models_on_people_items(frame), bool((~human_mask(frame)).any()))


@dataclass(frozen=True)
class ScopeCaption:
    """A scope with what a view says of it over ``frame``: :meth:`ItemScope.sentence` and
    :meth:`ItemScope.left_out_warning` (None: nothing left out)."""

    scope: ItemScope
    sentence: str
    warning: str | None


def scope_caption(frame: pd.DataFrame, people: str | None) -> ScopeCaption:
    """The items ``people`` answered in ``frame`` (None: every item), with its sentence and warning."""
    scope = item_scope(frame, people)
    return ScopeCaption(scope, scope.sentence(frame), scope.left_out_warning(frame))


def item_scope(frame: pd.DataFrame, people: str | None) -> ItemScope:
    """The items ``people`` answered in ``frame`` (an :class:`ItemScope`); None: every item."""
    if people is None:
        return ItemScope()
    return ItemScope(people, answered_items(frame, people))


def people_vs_models_frame(
    frame: pd.DataFrame,
    by: str,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    people: str = "human",
    same_items: bool = True,
    items: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Per model (people included) and value of the column ``by`` (a benchmark's stratum, named by its
    view), on the items people answered.

    ``people`` is the model name that defines the item set (``human``: the pool), unless
    ``items`` gives the set (a person's items in a frame where people are pooled). Returns
    mean, n, ci_low, ci_high per (model, ``by``) and ``items``, the number of items used (the
    shared items; with ``same_items=False``, every item of ``frame``: models then answer items
    people never saw, which the page says).
    """
    items = answered_items(frame, people) if items is None else frozenset(map(str, items))
    if not items:
        return pd.DataFrame(columns=["model", by, "mean", "n", "ci_low", "ci_high", "items", "group"])
    shared = on_items(frame, items) if same_items else frame
    cells = aggregate.aggregate(shared, ["model", by], value="value", n_boot=n_boot, seed=seed)
    cells["items"] = len(items) if same_items else shared["sample_id"].nunique()
    cells["group"] = ["people" if is_human(str(m)) else "model" for m in cells["model"]]
    return cells


def missing_values(frame: pd.DataFrame, choice: ValueChoice) -> int:
    """How many model rows have no score for ``choice`` (the paper's ROUGE-L of rows stored
    before it was; people's BLEU is not counted: people have none by design)."""
    column = frame[choice.column]
    return int((column.isna().to_numpy() & ~human_mask(frame)).sum())
