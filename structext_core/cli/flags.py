"""Argument types shared by the commands' parsers: a bad value is an argparse error (exit 2)."""

from __future__ import annotations

import argparse
import math


def seconds(text: str, *, allow_zero: bool = False, most: float = 86_400.0) -> float:
    """A number of seconds for a flag: finite, above 0 (or at 0 with ``allow_zero``), at most ``most``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text[:40]!r}") from None
    low_ok = value >= 0 if allow_zero else value > 0
    if not math.isfinite(value) or not low_ok or value > most:
        raise argparse.ArgumentTypeError(
            f"expected seconds {'from 0' if allow_zero else 'above 0'} up to {most:,.0f}, got {text[:40]!r}")
    return value


def seconds_or_zero(text: str) -> float:
    """:func:`seconds`, 0 allowed (a delay that may be none)."""
    return seconds(text, allow_zero=True)
