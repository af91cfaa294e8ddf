"""What a figure drawn from a graph answers to each kind of synthetic question.

One function, :func:`right_answer`, gives the right option for a question about the figure
drawn from ``graph`` (None: a blank image). The keys are this function on the undamaged graph;
the right answers for a damaged "system" are this function on its damaged graph. It reads only
what the figure shows: node labels (by their text), the arrows, the phase boxes (by their label)
and the title. Levels 2-4 answer "insufficient information" when the figure does not single out
one option; level 1 answers "No" for a label that is not drawn (a blank image draws none).

Kinds (``rule["kind"]``): ``exists`` (label), ``successor`` / ``predecessor`` (of), ``fan_out``,
``fan_in``, ``feedback``, ``in_phase`` (phase), ``task``, ``modality``. An edge to a node earlier
in the node list is a feedback edge (the figure draws it as a back arrow); fan-out and fan-in
count forward arrows only.
"""

from __future__ import annotations

from collections.abc import Sequence

from structext_core.aibench.model import INSUFFICIENT, LETTERS, LogicGraph

TITLE_JOIN = " from "


def _by_label(graph: LogicGraph) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in graph.nodes:
        found.setdefault(node.label, []).append(node.id)
    return found


def _forward_edges(graph: LogicGraph) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    order = {n.id: i for i, n in enumerate(graph.nodes)}
    forward, backward = [], []
    for e in graph.edges:
        (forward if order[e.target] > order[e.source] else backward).append((e.source, e.target))
    return forward, backward


def qualifying_labels(rule: dict, graph: LogicGraph) -> set[str] | None:
    """The labels of the nodes the figure of ``graph`` shows satisfying ``rule`` (kinds of levels
    2-3), or None when the figure does not show what the rule asks about."""
    labels = {n.id: n.label for n in graph.nodes}
    kind = rule["kind"]
    if kind in ("successor", "predecessor"):
        ids = _by_label(graph).get(rule["of"], [])
        if len(ids) != 1:
            return None
        ends = [(e.source, e.target) for e in graph.edges]
        if kind == "successor":
            return {labels[t] for s, t in ends if s == ids[0]}
        return {labels[s] for s, t in ends if t == ids[0]}
    forward, backward = _forward_edges(graph)
    if kind in ("fan_out", "fan_in"):
        side = 0 if kind == "fan_out" else 1
        counts: dict[str, int] = {}
        for edge in forward:
            counts[edge[side]] = counts.get(edge[side], 0) + 1
        return {labels[n] for n, c in counts.items() if c >= 2}
    if kind == "feedback":
        return {labels[s] for s, _ in backward}
    if kind == "in_phase":
        phase_ids = [p.id for p in graph.phases if p.label == rule["phase"]]
        if len(phase_ids) != 1:
            return None
        return {n.label for n in graph.nodes if n.phase_id == phase_ids[0]}
    raise ValueError(f"unknown rule kind {kind!r}")


def right_answer(rule: dict, options: Sequence[str], graph: LogicGraph | None) -> str:
    """The letter of the right option for a question of ``rule`` with ``options`` about the
    figure drawn from ``graph`` (None: a blank image)."""
    if rule["kind"] == "exists":
        drawn = graph is not None and any(n.label == rule["label"] for n in graph.nodes)
        return LETTERS[list(options).index("Yes" if drawn else "No")]
    insufficient = LETTERS[list(options).index(INSUFFICIENT)]
    if graph is None:
        return insufficient
    if rule["kind"] in ("task", "modality"):
        task, _, modality = graph.title.partition(TITLE_JOIN)
        shown = task if rule["kind"] == "task" else modality
        matches = [i for i, o in enumerate(options) if o == shown]
    else:
        qualifying = qualifying_labels(rule, graph)
        matches = [] if qualifying is None else [i for i, o in enumerate(options) if o in qualifying]
    return LETTERS[matches[0]] if len(matches) == 1 else insufficient
