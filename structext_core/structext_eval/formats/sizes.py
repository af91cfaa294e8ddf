"""How long a sample of a format grows: each format module's ``SIZE``, read by the suites'
size limits (:func:`structext_core.structext_eval.suites.estimate_sample_chars`).

The figures are estimated characters of a sample's JSONL line: least-squares fits over
Test-Hard at col 1, 6 and 20 (2,088 samples each); whole suites come out 2% (Test-Hard) and
17% (Test) over their files.
"""

from __future__ import annotations

from dataclasses import dataclass

from structext_core.structext_eval.tree import capped_node_count


@dataclass(frozen=True)
class NodeSize:
    """A document that grows with its tree: characters per node, and per field of a node (a
    node has (depth x col + 1) / 2 fields on average)."""

    per_node: int
    per_field: int

    def sample_chars(self, base: int, depth: int, width: int, col: int, rows: int | None, cap: int) -> int:
        """``base`` plus the document's estimated characters, at most ``cap + 1``."""
        nodes = capped_node_count(depth, width, cap)
        if nodes > cap:
            return cap + 1
        return min(cap + 1, base + round(nodes * (self.per_node + self.per_field * (depth * col + 1) / 2)))


@dataclass(frozen=True)
class RowSize:
    """A document of rows: characters per row (``rows`` of them, ``depth`` when not given)."""

    per_row: int

    def sample_chars(self, base: int, depth: int, width: int, col: int, rows: int | None, cap: int) -> int:
        """``base`` plus the rows' estimated characters."""
        return base + self.per_row * (rows or depth)
