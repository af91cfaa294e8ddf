"""The synthetic "systems": known damage done to a paper's graph before its figure is drawn.

Each mirrors a failure mode the paper reports: a missing component (``Dropped Node``),
hallucinated flow (``Rewired Edge``), text rendering (``Garbled Label``), layout (``Merged
Phases``) and a model that draws nothing usable (``Blank Image``, graph None). The damage is
chosen by a seeded rule per (seed, paper, system), so the right answer of every (image,
question) follows from :func:`structext_core.aibench.synthetic.rules.right_answer`.
"""

from __future__ import annotations

import random
from dataclasses import replace

from structext_core.aibench.model import Edge, LogicGraph

DAMAGES = ("Dropped Node", "Rewired Edge", "Garbled Label", "Merged Phases", "Blank Image")
#: The paper's failure mode each damage stands for.
FAILURE_MODES = {"Dropped Node": "missing component", "Rewired Edge": "hallucinated flow",
                 "Garbled Label": "text rendering", "Merged Phases": "layout", "Blank Image": "no figure"}


def _modules(graph: LogicGraph) -> list[str]:
    return [n.id for n in graph.nodes if n.type == "model"]


def drop_node(graph: LogicGraph, rng: random.Random) -> LogicGraph:
    """The graph without one module and its edges."""
    gone = rng.choice(_modules(graph))
    return replace(graph, nodes=tuple(n for n in graph.nodes if n.id != gone),
                   edges=tuple(e for e in graph.edges if gone not in (e.source, e.target)))


def rewire_edge(graph: LogicGraph, rng: random.Random) -> LogicGraph:
    """The graph with one edge between modules pointing at another module."""
    modules = set(_modules(graph))
    candidates = [i for i, e in enumerate(graph.edges) if e.source in modules and e.target in modules]
    i = rng.choice(candidates)
    old = graph.edges[i]
    successors = {e.target for e in graph.edges if e.source == old.source}
    new_target = rng.choice(sorted(modules - successors - {old.source}))
    edges = list(graph.edges)
    edges[i] = Edge(old.source, new_target, old.label)
    return replace(graph, edges=tuple(edges))


def garble(label: str, rng: random.Random) -> str:
    """``label`` misspelled: two inner letters of each word of four or more letters swapped."""
    words = []
    for word in label.split(" "):
        letters = list(word)
        inner = [i for i in range(1, len(letters) - 1) if letters[i].isalpha()]
        if len(word) >= 4 and len(inner) >= 2:
            a, b = sorted(rng.sample(inner, 2))
            letters[a], letters[b] = letters[b], letters[a]
        words.append("".join(letters))
    return " ".join(words)


def garble_label(graph: LogicGraph, rng: random.Random) -> LogicGraph:
    """The graph with one module's label misspelled (differing from every label it had)."""
    taken = {n.label for n in graph.nodes}
    for node_id in rng.sample(_modules(graph), len(_modules(graph))):
        node = graph.node(node_id)
        for _ in range(10):
            wrong = garble(node.label, rng)
            if wrong not in taken:
                nodes = tuple(replace(n, label=wrong) if n.id == node_id else n for n in graph.nodes)
                return replace(graph, nodes=nodes)
    raise ValueError("no label of this graph can be garbled")


def merge_phases(graph: LogicGraph, rng: random.Random) -> LogicGraph:
    """The graph with two consecutive phases drawn as one box (the first one's label)."""
    k = rng.randrange(len(graph.phases) - 1)
    keep, gone = graph.phases[k], graph.phases[k + 1]
    nodes = tuple(replace(n, phase_id=keep.id) if n.phase_id == gone.id else n for n in graph.nodes)
    return replace(graph, phases=tuple(p for p in graph.phases if p.id != gone.id), nodes=nodes)


def damaged_graph(graph: LogicGraph, damage: str, seed: int, paper_index: int) -> LogicGraph | None:
    """The graph the system ``damage`` draws for this paper (None: a blank image)."""
    rng = random.Random(f"aibench-synthetic-damage|{seed}|{paper_index}|{damage}")
    return {"Dropped Node": drop_node, "Rewired Edge": rewire_edge, "Garbled Label": garble_label,
            "Merged Phases": merge_phases, "Blank Image": lambda g, r: None}[damage](graph, rng)
