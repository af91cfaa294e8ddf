"""StrucText's Results view's state in the page's URL, so a view can be shared: :func:`write_url` turns the
controls' values into query parameters, :func:`read_url` reads them back, checked against the
known values (and, for filters and models, against what the user may see), never trusted:
unknown keys, bad values, over-long values and too many of them are ignored, each with a note."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from structext_core.structext_eval.result_dimensions import DIMENSIONS
from structext_core.views.leaderboards import LEADERBOARD_SORTS
from structext_core.views.people_vs_models import PEOPLE_AS, POOL, WHOSE, is_human
from structext_core.views.result_options import (
    HEATMAP_SORTS,
    MAX_MIN_N,
    METRICS,
    MODES,
    PAPER_VIEWS,
    ROUGE_METRICS,
    SOURCES,
    VIEWS,
)
from structext_core.views.url_state import URL_MAX_CHARS, URL_MAX_PARAMS, URL_MAX_VALUES, UrlState, _shown

ITEM_SCOPES = ("shared", "all")
"""``shared``: people and models on the items people answered; ``all``: every item."""
PAIR_DIMENSIONS = tuple(d for d in DIMENSIONS if d != "model")
THRESHOLD_STEP = 0.05

_URL_CHOICES: dict[str, Sequence[str]] = {
    "source": tuple(SOURCES), "paper": tuple(PAPER_VIEWS), "view": tuple(VIEWS), "metric": tuple(METRICS),
    "rouge": tuple(ROUGE_METRICS), "mode": MODES, "rows": DIMENSIONS, "cols": DIMENSIONS,
    "sort": tuple(HEATMAP_SORTS), "items": ITEM_SCOPES, "board": tuple(LEADERBOARD_SORTS),
    "pair_rows": PAIR_DIMENSIONS, "pair_cols": PAIR_DIMENSIONS, "people_as": tuple(PEOPLE_AS),
    "whose": tuple(WHOSE),
}
_URL_MODELS = ("people", "a", "b")
URL_KEYS = (*_URL_CHOICES, "threshold", "min_n", *_URL_MODELS, *DIMENSIONS)
"""Every parameter a Results URL may carry, in the order :func:`write_url` writes them: the
choices above, the threshold, the minimum n, the people whose items are shared, the two models
compared, and one repeated parameter per filtered dimension (``?model=good&model=weak``)."""


_ASCII_INT = re.compile(r"[0-9]{1,7}")
_ASCII_DECIMAL = re.compile(r"[0-9]{1,3}(\.[0-9]{1,6})?|\.[0-9]{1,6}")


def _read_threshold(text: str) -> float | None:
    # ASCII only: float() would take '١' or '\u2007'-padded text; str.isdigit() takes '²'.
    if not _ASCII_DECIMAL.fullmatch(text.strip()):
        return None
    value = float(text)
    steps = value / THRESHOLD_STEP
    if not math.isfinite(value) or not 0 <= value <= 1 or abs(steps - round(steps)) > 1e-6:
        return None
    return round(round(steps) * THRESHOLD_STEP, 2)


def _read_min_n(text: str) -> int | None:
    text = text.strip()
    if not _ASCII_INT.fullmatch(text):  # ASCII digits only: no sign, point, exponent or '²'
        return None
    value = int(text)
    return value if 1 <= value <= MAX_MIN_N else None


def read_url(params: Mapping[str, str | Sequence[str]], options: Mapping[str, Sequence]) -> UrlState:
    """The view state a URL's query ``params`` (key -> value or list of values) asks for.

    ``options`` are the values each dimension can take (:func:`filter_options` of the rows
    this session may see): a filter, a model or person is taken only if it is among them. A
    URL is anyone's input: an unknown key, an unknown or malformed value, a value longer than
    :data:`URL_MAX_CHARS`, more than :data:`URL_MAX_VALUES` values or :data:`URL_MAX_PARAMS`
    keys are ignored, each with a note; nothing raises.
    """
    values: dict = {}
    notes: list[str] = []
    items = list(params.items())
    if len(items) > URL_MAX_PARAMS:
        notes.append(f"only the first {URL_MAX_PARAMS} of {len(items)} parameters were read")
        items = items[:URL_MAX_PARAMS]
    models = [str(m) for m in options.get("model", [])]
    if any(is_human(m) for m in models):
        models.append(POOL)  # people pooled: a choice even where each person's rows are shown
    for key, raw in items:
        key = str(key)
        if key.startswith("embed") or key == "benchmark":  # Streamlit's own; the Benchmark choice's
            continue
        if key not in URL_KEYS:
            notes.append(f"unknown parameter {_shown(key)}")
            continue
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
        if len(texts) > URL_MAX_VALUES:
            notes.append(f"{key}: only the first {URL_MAX_VALUES} of {len(texts)} values were read")
            texts = texts[:URL_MAX_VALUES]
        if any(len(t) > URL_MAX_CHARS for t in texts):
            notes.append(f"{key}: a value longer than {URL_MAX_CHARS} characters")
            continue
        if key in DIMENSIONS:
            known = {str(v): v for v in options.get(key, [])}
            if key == "model" and any(is_human(m) for m in known):
                known.setdefault(POOL, POOL)  # people pooled: a filter even where each person's rows are stored
            chosen = tuple(dict.fromkeys(known[t] for t in texts if t in known))
            unknown = [t for t in texts if t not in known]
            if unknown:
                notes.append(f"{key}: {', '.join(_shown(t) for t in unknown[:5])} not among the results")
            if chosen:
                values[key] = chosen
            continue
        if not texts:
            continue
        text = texts[-1]  # a repeated single-valued key: the last one counts, as in st.query_params
        if key in _URL_CHOICES:
            value = text if text in _URL_CHOICES[key] else None
        elif key == "threshold":
            value = _read_threshold(text)
        elif key == "min_n":
            value = _read_min_n(text)
        else:  # people, a, b
            value = text if text in models and (key != "people" or is_human(text)) else None
        if value is None:
            notes.append(f"{key}={_shown(text)} is not a valid choice")
        else:
            values[key] = value
    return UrlState(values, tuple(notes))


def write_url(values: Mapping[str, object]) -> dict[str, str | list[str]]:
    """The query parameters for ``values`` (URL key -> value, as :func:`read_url` returns them),
    in :data:`URL_KEYS` order; filters become repeated parameters, unknown keys are dropped."""
    out: dict[str, str | list[str]] = {}
    for key in URL_KEYS:
        if key not in values or values[key] is None:
            continue
        value = values[key]
        if key in DIMENSIONS:
            if value:
                out[key] = [str(v) for v in value]
        elif key == "threshold":
            out[key] = f"{float(value):g}"
        else:
            out[key] = str(value)
    return out
