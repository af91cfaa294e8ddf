"""The AIBench view's state in the Results page's URL, so a view can be shared, as
:mod:`structext_core.structext_eval.url_state` does for StrucText's: :func:`write_url` turns the controls'
values into query parameters, :func:`read_url` reads them back, each value checked against the
values the viewer may choose from, never trusted: unknown keys, unknown or malformed values,
over-long values and too many parameters are ignored, each with a note; nothing raises.

``?benchmark=aibench&table=table3&data=synthetic&heatmap=system+x+level&system=Blank+Image&solver=...&level=2``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from structext_core.views.url_state import URL_MAX_CHARS, URL_MAX_PARAMS, UrlState, _shown

KEYS = ("benchmark", "table", "data", "heatmap", "system", "solver", "level")
"""Every parameter an AIBench URL may carry, in the order :func:`write_url` writes them."""
LEVELS = ("1", "2", "3", "4")


def read_url(params: Mapping[str, str | Sequence[str]], options: Mapping[str, Sequence[str]]) -> UrlState:
    """The AIBench view a URL's query ``params`` (key -> value or list of values) asks for.

    ``options``: for each key this viewer may set, the values it may take (a visitor gets only
    ``benchmark`` and ``table``; the other keys of :data:`KEYS` are then skipped without a
    note, as StrucText's view skips what a visitor may not see). ``level`` is read as 1-4 (an
    int). Anything else is ignored with a note."""
    values: dict = {}
    notes: list[str] = []
    items = list(params.items())
    if len(items) > URL_MAX_PARAMS:
        notes.append(f"only the first {URL_MAX_PARAMS} of {len(items)} parameters were read")
        items = items[:URL_MAX_PARAMS]
    for key, raw in items:
        key = str(key)
        if key.startswith("embed"):  # Streamlit's own (embedding options)
            continue
        if key not in KEYS:
            notes.append(f"unknown parameter {_shown(key)}")
            continue
        if key != "level" and key not in options:
            continue
        texts = [raw] if isinstance(raw, str) else [str(t) for t in list(raw)[:URL_MAX_PARAMS]]
        if not texts:
            continue
        text = texts[-1]  # a repeated key: the last one counts, as in st.query_params
        if len(text) > URL_MAX_CHARS:
            notes.append(f"{key}: a value longer than {URL_MAX_CHARS} characters")
            continue
        allowed = LEVELS if key == "level" else [str(v) for v in options[key]]
        if text not in allowed:
            notes.append(f"{key}={_shown(text)} is not a valid choice")
            continue
        values[key] = int(text) if key == "level" else text
    return UrlState(values, tuple(notes))


def write_url(values: Mapping[str, object]) -> dict[str, str]:
    """The query parameters for ``values`` (key -> value, as :func:`read_url` returns them), in
    :data:`KEYS` order; unknown keys and None are dropped."""
    return {key: str(values[key]) for key in KEYS if values.get(key) is not None}
