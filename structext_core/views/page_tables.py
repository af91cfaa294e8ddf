"""Tables of the Results page that belong to no single view: any table as safe CSV bytes, the
imported files' table, and the note on files that were scored with another ROUGE-L before import.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from structext_core.text import safe_text
from structext_core.views.result_options import ROUGE_DESCRIPTIONS, ValueChoice


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A table as UTF-8 CSV with a header and no index; a text cell (or column name) a
    spreadsheet would run as a formula gets a leading apostrophe
    (:func:`structext_core.text.safe_text.frame_csv`)."""
    return safe_text.frame_csv(frame).encode("utf-8")


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
