"""Tasks 5-7: the edge list of a tree (``parent -> child`` lines)."""

from __future__ import annotations

import random

from structext_core.structext_eval.formats import Document, tree_format
from structext_core.structext_eval.tasks._common import find_node, no_params, question_match
from structext_core.structext_eval.tasks._registry import Task, register

register(Task(
    5, "tree", "TreeHeight", "tree-height", 0,
    requirement="Answer an integer, leaf is of height 0.",
    rule_hint="Work bottom-up: a leaf has height 0 and every other node is one more than its highest child. "
              "The root is the node that never appears on the right of an arrow.",
    sample=lambda rng, doc: {},
    question=lambda p: "What is the height of the root node, i.e., the number of edges in the longest path from "
                       "root node to any leaf nodes?",
    expected=lambda doc, p: str(doc.tree.height()),
    parse=no_params,
    solve=lambda ref, p, d, w: str(tree_format.EdgeTree(ref).height()),
))


def _any_node(rng: random.Random, doc: Document, include_root: bool = True) -> dict:
    nodes = [n for n in doc.tree.walk() if include_root or n.parent is not None]
    return {"node": rng.choice(nodes).name}


register(Task(
    6, "tree", "NodeDepth", "tree-node-depth", 1,
    requirement="Answer an integer, root is of depth 0.",
    rule_hint="Follow the arrows back from the node to the root, counting one for every edge.",
    sample=_any_node,
    question=lambda p: f"What is the depth of node {p['node']}?",
    expected=lambda doc, p: str(find_node(doc, p["node"]).level),
    parse=lambda q: {"node": question_match(r"depth of node (.+?)\s*\?", q, "a node").group(1)},
    solve=lambda ref, p, d, w: str(tree_format.EdgeTree(ref).depth_of(p["node"])),
))

register(Task(
    7, "tree", "PathCompose", "tree-path-from-root", 2,
    requirement="Answer should look like A->D->H.",
    rule_hint="Start at the node and repeatedly find the line where it is the child; the parent on that line is "
              "the next step up. Stop at the root and write the nodes from root to target joined by ->.",
    sample=lambda rng, doc: _any_node(rng, doc, include_root=False),
    question=lambda p: f"What is the path from the root node to the node {p['node']}?",
    expected=lambda doc, p: "->".join(n.name for n in find_node(doc, p["node"]).path()),
    parse=lambda q: {"node": question_match(r"to the node (.+?)\s*(?:\?|\.\s|\.$)", q, "a node").group(1)},
    solve=lambda ref, p, d, w: "->".join(tree_format.EdgeTree(ref).path_to(p["node"])),
))
