"""Any table of a Results view as safe CSV bytes."""

from __future__ import annotations

import pandas as pd

from structext_core.text import safe_text


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A table as UTF-8 CSV with a header and no index; a text cell (or column name) a
    spreadsheet would run as a formula gets a leading apostrophe
    (:func:`structext_core.text.safe_text.frame_csv`)."""
    return safe_text.frame_csv(frame).encode("utf-8")
