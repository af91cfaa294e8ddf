"""The custom tree format: one ``parent->child`` edge a line, depth-first."""

from __future__ import annotations

import random

from structext_core.structext_eval.formats import MAX_GRAPH_EDGES, Document, Preview, Problem, ReadError, tokens_in
from structext_core.structext_eval.formats.sizes import NodeSize
from structext_core.structext_eval.tree import Node, build_tree
from structext_core.text import limits

LANGUAGE = "tree"
MAX_DEPTH = None
SIZE = NodeSize(per_node=8, per_field=0)


def render(root: Node) -> str:
    """Edges in pre-order of the child."""
    return "\n".join(f"{n.parent.name}->{n.name}" for n in root.walk() if n.parent is not None)


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False,
             rows: int | None = None) -> Document:
    root = build_tree(rng, depth, width, col, with_fields=False)
    return Document(render(root), root)


class EdgeTree:
    """A tree read from edge lines: children lists and the root.

    Refused with ReadError saying where: a line that is not an edge, a node with two
    parents, a cycle (``x->y``, ``y->x``), no root or several; and text beyond the limits."""

    def __init__(self, text: str):
        limits.check_reference(LANGUAGE, text)
        self.children: dict[str, list[str]] = {}
        self.parent: dict[str, str] = {}
        self.line_of: dict[str, int] = {}  # the line of the edge that leads to a node
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line:
                continue
            if "->" not in line:
                raise ReadError(f"line {lineno}: expected 'parent->child', got {raw[:200]!r}")
            parent, child = (part.strip() for part in line.split("->", 1))
            if child in self.parent:
                raise ReadError(f"line {lineno}: node {child[:200]!r} has two parents")
            self.parent[child] = parent
            self.line_of[child] = lineno
            self.children.setdefault(parent, []).append(child)
        if not self.children:
            raise ReadError("the tree has no edges")
        roots = [n for n in self.children if n not in self.parent]
        self._refuse_cycles(roots)
        if len(roots) != 1:
            raise ReadError(f"expected exactly one root, found {len(roots)}: "
                            f"{', '.join(repr(r[:40]) for r in roots[:5])}{' …' if len(roots) > 5 else ''}")
        self.root = roots[0]

    def _refuse_cycles(self, roots: list[str]) -> None:
        """Every node must hang below a root; one that does not lies on or below a cycle."""
        reached = set(roots)
        stack = list(roots)
        while stack:
            for child in self.children.get(stack.pop(), ()):
                if child not in reached:
                    reached.add(child)
                    stack.append(child)
        stray = next((n for n in self.parent if n not in reached), None)
        if stray is None:
            return
        seen: dict[str, int] = {}
        node = stray
        while node not in seen:  # up the parents until a node repeats: that is the cycle
            seen[node] = len(seen)
            node = self.parent[node]
        cycle = [n for n, i in sorted(seen.items(), key=lambda item: item[1]) if i >= seen[node]]
        shown = "->".join(c[:40] for c in [*reversed(cycle), cycle[-1]][:12])
        line = min(self.line_of[n] for n in cycle)
        raise ReadError(f"line {line}: the edges form a cycle ({shown}{' …' if len(cycle) > 11 else ''}); "
                        "a tree has none")

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

    def preorder(self) -> list[str]:
        """Every node, depth-first, children in the order of their edges."""
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(self.children.get(node, [])))
        return out

    def depths(self, preorder: list[str]) -> dict[str, int]:
        """Every node's depth in one pass over :meth:`preorder` (a parent before its children)."""
        depth = {self.root: 0}
        for node in preorder[1:]:
            depth[node] = depth[self.parent[node]] + 1
        return depth


def preview(reference: str) -> Preview:
    """The tree drawn as a graph (Graphviz dot), unless it has too many edges to read."""
    edges = [line.split("->", 1) for line in reference.splitlines() if "->" in line]
    if len(edges) > MAX_GRAPH_EDGES:
        return Preview("none", note=f"{len(edges):,} edges are too many to draw; see the raw text.")
    dot = "digraph {\n  node [shape=circle, fontsize=10];\n" + "".join(
        f'  "{a.strip()}" -> "{b.strip()}";\n' for a, b in edges) + "}"
    return Preview("graph", dot)


RESERVED_WORDS = frozenset()


def rewrite_tokens(reference: str) -> list[tuple[str, str]]:
    return [(t, "node") for line in reference.replace("\r\n", "\n").split("\n") for t in tokens_in(line)]


def value_problem(new: str, kinds: set[str]) -> str | None:
    return "'->' separates parent and child in this format" if "->" in new else None


def parse_error(text: str) -> str | None:
    """What the reader says about ``text`` (None: it reads); ``text`` is within the limits."""
    try:
        EdgeTree(text)
    except ValueError as exc:
        return str(exc)
    return None


def line_signature(line: str) -> str:
    """A line's shape with the data masked (this format's lines are compared as they are)."""
    return line


# ---- the skeleton, for the rewrite check ----------------------------------------------

def compare_structure(original: str, rewrite: str) -> list[Problem]:
    """The first node (in pre-order) with another number of children, then the node count,
    then the first edge that leads to another depth (the edges' order)."""
    o_tree, r_tree = EdgeTree(original), EdgeTree(rewrite)
    o_order, r_order = o_tree.preorder(), r_tree.preorder()
    for o_name, r_name in zip(o_order, r_order):
        oc, rc = len(o_tree.children.get(o_name, [])), len(r_tree.children.get(r_name, []))
        if oc != rc:
            return [Problem("structure", f"node {r_name!r} (was {o_name!r})",
                            f"{oc} child(ren) in the original, {rc} in the rewrite")]
    if len(o_order) != len(r_order):
        return [Problem("structure", "document", f"{len(o_order)} nodes in the original, {len(r_order)} in the "
                                                 "rewrite")]
    o_depth, r_depth = o_tree.depths(o_order), r_tree.depths(r_order)
    for (_, _, oc), (line, _, rc) in zip(_edges(original), _edges(rewrite)):
        if o_depth[oc] != r_depth.get(rc, -1):
            return [Problem("structure", f"line {line}", f"this edge leads to depth {r_depth.get(rc)} in the rewrite, "
                                                         f"to depth {o_depth[oc]} in the original: keep the edges in "
                                                         "the original (depth-first) order")]
    return []


def _edges(text: str) -> list[tuple[int, str, str]]:
    edges = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            parent, _, child = raw.partition("->")
            edges.append((lineno, parent.strip(), child.strip()))
    return edges
