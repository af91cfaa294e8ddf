"""A Results view's state in the page's URL, the part every benchmark's view shares: what a URL
asked for, checked (:class:`UrlState`), the bounds on what is read of it, and how a note quotes a
value. Each benchmark's view reads and writes its own keys, in its own package: a URL is anyone's
input, checked against the known values, never trusted."""

from __future__ import annotations

from dataclasses import dataclass

URL_MAX_PARAMS = 40
URL_MAX_CHARS = 200
URL_MAX_VALUES = 50


@dataclass(frozen=True)
class UrlState:
    """What a URL asked for, checked: ``values`` (URL key -> value, typed as the page's controls
    hold it; filters as tuples of the known values) and ``notes`` (one per thing ignored)."""

    values: dict
    notes: tuple[str, ...] = ()


def _shown(text: str) -> str:
    """A URL value as a note quotes it: short, whatever it holds."""
    return repr(text if len(text) <= 40 else text[:40] + "…")
