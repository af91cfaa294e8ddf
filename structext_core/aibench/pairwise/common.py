"""Pairwise studies: their names and bounds."""

from __future__ import annotations

CHOICES = {"left": "Left is better", "right": "Right is better", "tie": "Equally good", "both_bad": "Both bad"}
FLAG_KINDS = {"broken": "An image does not show or is cut off", "unclear": "I cannot judge this pair",
              "other": "Other (say what in the note)"}
#: Served image sizes are padded up to a multiple of this many bytes.
SIZE_BUCKET = 256 * 1024
#: Both images of a pair are served on this canvas (width, height), letterboxed: the paper's
#: floor for generated figures (1024 x 1024), so a figure drawn at the floor is served as drawn.
CANVAS = (1024, 1024)
MAX_PAIRS = 2_000
#: Served images are at most this wide (Streamlit's widest image, 2 x 730 px).
MAX_SERVED_WIDTH = 1460
MAX_NAME_CHARS = 80
DEFAULT_BOOT = 500
#: The lead's page (who may open it leads pairwise studies: the one role table).
LEAD_PAGE = "pairwise_admin"
