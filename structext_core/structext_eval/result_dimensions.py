"""What StrucText's results break down by on Results: the dimensions of its heatmaps, filters and
URLs, the ones whose values have an order of their own, and the columns that name one item's result
(a pool of people's answers on it is averaged over them before a paired comparison)."""

from __future__ import annotations

DIMENSIONS = ("model", "prompt", "suite", "format", "task", "depth", "width")
"""What a heatmap's rows and columns (and the filters) can be."""
ORDERED_DIMENSIONS = ("depth", "width")
"""Dimensions whose values have an order of their own (1, 2, 3...): by default a heatmap keeps it."""
ITEM_COLUMNS = ("sample_id", "prompt", "model", "suite", "format", "task", "task_id", "depth", "width")
"""The columns of one model's result on one item (:func:`structext_core.views.comparisons.item_means`)."""
