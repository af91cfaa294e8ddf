"""How a table cell or a figure says a value to a person, in one place: a missing value as a dash
(never ``None`` or ``nan``), a rank interval in whole ranks, a table of durations in the unit
that fits its size (seconds, minutes or hours).

Pure functions over values and frames; the pages place what they return.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

#: What a cell or a figure shows where there is no value (not measured, not defined, none yet).
DASH = "—"


def missing(value) -> bool:
    """True for None, NaN and pandas' missing values."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array is a value
        return False


def number_text(value, digits: int = 2, *, percent: bool = False) -> str:
    """``value`` to ``digits`` decimals (as a percentage with ``percent``), :data:`DASH` when missing."""
    if missing(value):
        return DASH
    return f"{float(value):.{digits}%}" if percent else f"{float(value):.{digits}f}"


def rank_interval(low, high) -> str:
    """A rank's 95% interval in whole ranks, as a person reads it: ``2 to 5`` (the bootstrap's
    fractional ends widened to the whole ranks around them, so the interval never shrinks), ``3``
    when both ends are the same rank, :data:`DASH` when either end is missing."""
    if missing(low) or missing(high):
        return DASH
    first, last = math.floor(float(low) + 1e-9), math.ceil(float(high) - 1e-9)
    return str(first) if first == last else f"{first} to {last}"


def rank_text(rank) -> str:
    """A rank as a person reads it: a whole rank as ``3``, a shared rank as ``2.5`` (the mean of
    the places it shares), :data:`DASH` when missing."""
    if missing(rank):
        return DASH
    value = float(rank)
    return str(int(value)) if value.is_integer() else f"{value:g}"


#: The units a table of durations is shown in: (name, abbreviation, seconds in one), smallest first.
UNITS = (("seconds", "s", 1.0), ("minutes", "min", 60.0), ("hours", "h", 3600.0))


def duration_unit(seconds: Iterable[float]) -> tuple[str, str, float]:
    """The unit that fits a set of durations in seconds: seconds while the largest is under two
    minutes, minutes while it is under two hours, else hours (``name, abbreviation, seconds``)."""
    values = [float(s) for s in seconds if not missing(s)]
    largest = max(values, default=0.0)
    if largest < 120:
        return UNITS[0]
    if largest < 2 * 3600:
        return UNITS[1]
    return UNITS[2]


def in_unit(seconds: Sequence[float], unit: tuple[str, str, float]) -> list[float]:
    """``seconds`` in ``unit`` (one decimal; missing stays missing)."""
    return [math.nan if missing(s) else round(float(s) / unit[2], 1) for s in seconds]


def without_missing(frame: pd.DataFrame, columns: Sequence[str] | None = None, text: str = DASH,
                    digits: int | None = None) -> pd.DataFrame:
    """A copy of ``frame`` whose missing cells in ``columns`` (default: every column with one) read
    ``text``; such a column becomes text: its numbers to ``digits`` decimals when given, else as they are."""
    out = frame.copy()
    for column in columns if columns is not None else list(out.columns):
        values = out[column]
        if not values.map(missing).any():
            continue
        shown = [text if missing(v) else (number_text(v, digits) if digits is not None and isinstance(v, (int, float))
                                          else v) for v in values]
        out[column] = pd.Series(shown, index=out.index, dtype=object)
    return out
