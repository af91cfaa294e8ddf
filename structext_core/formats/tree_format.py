"""The custom tree format: one ``parent->child`` edge a line, depth-first."""

from __future__ import annotations

import random

from ..tree import Node, build_tree
from . import Document, ReadError

LANGUAGE = "tree"


def render(root: Node) -> str:
    """Edges in pre-order of the child."""
    return "\n".join(f"{n.parent.name}->{n.name}" for n in root.walk() if n.parent is not None)


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False) -> Document:
    root = build_tree(rng, depth, width, col, with_fields=False)
    return Document(render(root), root)


class EdgeTree:
    """A tree read from edge lines: children lists and the root."""

    def __init__(self, text: str):
        self.children: dict[str, list[str]] = {}
        self.parent: dict[str, str] = {}
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line:
                continue
            if "->" not in line:
                raise ReadError(f"line {lineno}: expected 'parent->child', got {raw!r}")
            parent, child = (part.strip() for part in line.split("->", 1))
            if child in self.parent:
                raise ReadError(f"line {lineno}: node {child!r} has two parents")
            self.parent[child] = parent
            self.children.setdefault(parent, []).append(child)
        if not self.children:
            raise ReadError("the tree has no edges")
        roots = [n for n in self.children if n not in self.parent]
        if len(roots) != 1:
            raise ReadError(f"expected exactly one root, found {len(roots)}")
        self.root = roots[0]

    def depth_of(self, name: str) -> int:
        if name != self.root and name not in self.parent:
            raise ReadError(f"node {name!r} does not occur in the tree")
        return len(self.path_to(name)) - 1

    def path_to(self, name: str) -> list[str]:
        if name != self.root and name not in self.parent:
            raise ReadError(f"node {name!r} does not occur in the tree")
        path = [name]
        while path[-1] != self.root:
            path.append(self.parent[path[-1]])
        return path[::-1]

    def height(self, name: str | None = None) -> int:
        name = self.root if name is None else name
        best = 0
        stack = [(name, 0)]
        while stack:
            node, d = stack.pop()
            best = max(best, d)
            stack.extend((c, d + 1) for c in self.children.get(node, []))
        return best
