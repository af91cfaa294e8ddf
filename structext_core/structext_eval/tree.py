"""The abstract tree every format is rendered from.

A tree has ``depth`` levels below the root; every non-leaf node has
``depth * width`` children; every node carries between 1 and ``depth * col``
fields. Names, keys and values are counters (see :mod:`structext_core.structext_eval.names`)
that start at a random offset, so that no two documents look alike.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

from structext_core.structext_eval import names


@dataclass(slots=True, eq=False)
class Node:
    """One node of the abstract tree (pre-order ``index`` from 0 at the root)."""

    index: int
    level: int
    name: str
    tag: str
    keys: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    children: list["Node"] = field(default_factory=list)
    parent: "Node | None" = field(default=None, repr=False)
    preorder: "list[Node] | None" = field(default=None, repr=False)  # kept on a built tree's root

    @property
    def fields(self) -> list[tuple[str, str]]:
        """``(KEY, value)`` pairs in document order."""
        return list(zip(self.keys, self.values))

    def walk(self) -> Iterator["Node"]:
        """Pre-order (depth-first) traversal, the order every format uses."""
        if self.preorder is not None:
            return iter(self.preorder)
        return self._walk()

    def _walk(self) -> Iterator["Node"]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def path(self) -> list["Node"]:
        """Nodes from the root down to this node, both included."""
        out: list[Node] = []
        node: Node | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def child_position(self) -> int:
        """0-based position among the parent's children (0 for the root)."""
        return 0 if self.parent is None else self.parent.children.index(self)

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def height(self) -> int:
        """Edges on the longest path down to a leaf."""
        return 0 if not self.children else 1 + max(c.height() for c in self.children)


def fan_out(depth: int, width: int) -> int:
    """Children of every non-leaf node."""
    return depth * width


def node_count(depth: int, width: int) -> int:
    """Nodes of a complete tree with the given knobs."""
    k = fan_out(depth, width)
    return sum(k**level for level in range(depth + 1))


def capped_node_count(depth: int, width: int, cap: int) -> int:
    """:func:`node_count`, or ``cap + 1`` as soon as the count passes ``cap`` (no huge numbers)."""
    k = fan_out(depth, width)
    total, level_size = 0, 1
    for _ in range(depth + 1):
        total += level_size
        if total > cap:
            return cap + 1
        level_size *= k
    return total


def build_tree(
    rng: random.Random,
    depth: int,
    width: int,
    col: int,
    *,
    with_fields: bool = True,
    name_offset: int | None = None,
    value_offset: int | None = None,
) -> Node:
    """Build a complete tree; node names, keys and values follow pre-order."""
    if depth < 1 or width < 1 or col < 1:
        raise ValueError(f"depth, width and col must be >= 1 (got {depth}, {width}, {col})")
    total = node_count(depth, width)
    name_start = rng.randrange(26) if name_offset is None else name_offset
    node_names = names.names_range("node", name_start, total)
    most_fields = depth * col
    counts = [1 + int(rng.random() * most_fields) for _ in range(total)] if with_fields else [0] * total
    n_fields = sum(counts)
    value_start = rng.randrange(26) if value_offset is None else value_offset
    keys = names.names_range("key", 0, n_fields)
    values = names.names_range("value", value_start, n_fields)
    levels, parents = _shape(depth, width)
    tags = names.names_range("tag", 0, total)
    # One pass in pre-order: a node's parent always comes before it.
    root = Node(0, 0, node_names[0], tags[0], keys[:counts[0]], values[:counts[0]], [], None)
    nodes = [root]
    append = nodes.append
    f = counts[0]
    for idx, level, name, tag, parent_idx, n in zip(range(1, total), levels[1:], node_names[1:], tags[1:],
                                                   parents[1:], counts[1:]):
        parent = nodes[parent_idx]
        node = Node(idx, level, name, tag, keys[f:f + n], values[f:f + n], [], parent)
        parent.children.append(node)
        append(node)
        f += n
    root.preorder = nodes
    return root


@lru_cache(maxsize=64)
def _shape(depth: int, width: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Level and parent index of every node of the complete tree, in pre-order."""
    k = fan_out(depth, width)
    levels: list[int] = []
    parents: list[int] = []

    def visit(level: int, parent: int) -> None:
        me = len(levels)
        levels.append(level)
        parents.append(parent)
        if level < depth:
            for _ in range(k):
                visit(level + 1, me)

    visit(0, -1)
    return tuple(levels), tuple(parents)
