"""Benchmarks behind one interface: StrucText-Eval and AIBench as members of one registry.

A benchmark declares what an item is, how a question is shown to a person or a model, how an
answer is scored and which axes its results break down by. Code that serves every benchmark
(the CLI today; the studio and Results later) reads this declaration and branches on no
benchmark's name, as it branches on no format's name (:mod:`structext_core.benchmark.formats`).

The benchmarks are registered in one table, :data:`REGISTRY` (name -> member module in this
package, display name); :func:`get_module` returns a member. Each member module offers every
name of :data:`INTERFACE` (``tests/aibench/test_registry.py`` checks it):

- ``NAME``, ``DISPLAY_NAME``: its key in the registry and how the app names it.
- ``SUMMARY``: what it asks, in a sentence or two (Home).
- ``PLACES``: where in the app to go for it, as :class:`Place` rows (Home; a role is told only of
  the pages it may open).
- ``ITEM_FIELDS``: the fields of one item, in order (StrucText: the sample schema).
- ``AXES``: the columns its results break down by, most general first.
- ``STRATA``: the strata of one of its study items, name -> type (``str`` or ``int``), in order:
  what its draws and dashboards group by, stored with the item (``study_items.strata``, JSON) and
  checked on insert by :func:`check_strata`.
- ``item_id(item) -> str``: the item's id, unique within its suite or data set.
- ``show_question(item) -> ShownQuestion``: how the item is put to a model or a person.
- ``score_answer(item, reply) -> float``: the item's score for a reply, in [0, 1].

The member modules are thin adapters: the benchmarks' own code stays in their peer packages
(:mod:`structext_core.benchmark` for StrucText-Eval, :mod:`structext_core.aibench` for AIBench).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class ShownQuestion:
    """One question as it is put to a model or a person.

    ``text``: the user prompt; ``system``: the system prompt ("" for none); ``choices``: the
    options of a multiple-choice question, lettered A, B, ... in order (empty for free text);
    ``image``: the path of an image shown beside the text, relative to the data set (None for text only).
    """

    text: str
    system: str = ""
    choices: tuple[str, ...] = ()
    image: str | None = None


@dataclass(frozen=True)
class Place:
    """Where to go for a benchmark: a page (its key in ``structext_core.studio.access.PAGES``) and
    what it offers there; ``chooses_benchmark``: the page reads ``?benchmark=<name>`` and opens on it."""

    page: str
    text: str
    chooses_benchmark: bool = False


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's row in the registry: its adapter module (in this package) and display name."""

    module: str
    display_name: str


#: The one table of benchmarks, in the app's order.
REGISTRY: dict[str, Benchmark] = {
    "structext-eval": Benchmark("structext_eval", "StrucText-Eval"),
    "aibench": Benchmark("aibench", "AIBench"),
}
NAMES = list(REGISTRY)
#: What every member module offers (see above).
INTERFACE = ("NAME", "DISPLAY_NAME", "SUMMARY", "PLACES", "ITEM_FIELDS", "AXES", "STRATA", "item_id",
             "show_question", "score_answer")


def get_module(name: str) -> ModuleType:
    """The member module of the benchmark ``name`` (a ``KeyError`` naming the known ones otherwise)."""
    if name not in REGISTRY:
        raise KeyError(f"no benchmark {name!r}; the benchmarks are {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{REGISTRY[name].module}")


def check_strata(name: str, strata: Mapping) -> dict:
    """``strata`` checked against the ``STRATA`` the benchmark ``name`` declares; returns them as a
    plain dict in the declared order.

    Raises ``KeyError`` for an unknown benchmark (as :func:`get_module`) and ``ValueError`` naming
    the field for a missing or unknown stratum or a value of the wrong type (``bool`` is not an
    ``int``; no value may be None).
    """
    declared: Mapping[str, type] = get_module(name).STRATA
    if not isinstance(strata, Mapping):
        raise ValueError(f"{name} strata must be a mapping of {', '.join(declared)}, got {type(strata).__name__}")
    unknown = [key for key in strata if key not in declared]
    if unknown:
        raise ValueError(f"{name} has no stratum {unknown[0]!r}; its strata are {', '.join(declared)}")
    checked = {}
    for key, kind in declared.items():
        if key not in strata:
            raise ValueError(f"{name} stratum {key!r} is missing; its strata are {', '.join(declared)}")
        value = strata[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{name} stratum {key!r} must be {'an integer' if kind is int else 'a text'}, "
                             f"got {value!r}")
        checked[key] = value
    return checked
