"""Seeded logic graphs for the synthetic AIBench.

A paper has 2-4 phases. Each phase holds one pattern: a chain, parallel branches (one node
fanning out to 2-3 branch modules that fan back in to a merge module) or a feedback loop (a
chain whose last module feeds back to an earlier one). Every paper has exactly one branch phase
and one loop phase, so "which component fans out / fans in / feeds back" has one answer. The
first phase starts with the input data (an ellipse), the last ends with the output data;
consecutive phases are joined by one edge. Nodes are listed in drawing order: an edge to an
earlier node is a feedback edge (drawn as a back arrow).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from structext_core.aibench.model import Edge, LogicGraph, Node, Phase

CONFERENCES = (("CVPR", 102), ("ICCV", 75), ("NeurIPS", 75), ("ICLR", 48))
TASKS = ("Image Segmentation", "Text-to-Image Generation", "Video Captioning", "Depth Estimation",
         "Visual Question Answering", "3D Reconstruction", "Speech Recognition", "Object Detection",
         "Image Restoration", "Motion Forecasting")
MODALITIES = ("Image", "Text", "Video", "Audio", "Point Cloud")
#: In pipeline order; a paper's phases keep this order.
PHASE_LABELS = ("Pre-training", "Feature Extraction", "Alignment", "Fusion", "Decoding", "Refinement",
                "Distillation", "Inference")
ADJECTIVES = ("Visual", "Semantic", "Temporal", "Spatial", "Global", "Local", "Sparse", "Dense", "Latent",
              "Cross-modal", "Masked", "Residual", "Adaptive", "Hierarchical")
MODULES = ("Encoder", "Decoder", "Adapter", "Projector", "Refiner", "Router", "Tokenizer", "Aggregator",
           "Predictor", "Planner", "Transformer", "Attention")
DATA = ("Features", "Tokens", "Embeddings", "Queries", "Latents", "Map")
PATTERNS = ("chain", "branch", "loop")


@dataclass(frozen=True)
class PaperSpec:
    """What the generator chose for one paper, and the graph it built."""

    paper_id: str
    conference: str
    year: int
    task: str
    modality: str
    patterns: tuple[str, ...]
    graph: LogicGraph
    unused_labels: tuple[str, ...]  # plausible labels the graph does not hold (level-1 "No" questions)


def paper_rng(seed: int, index: int) -> random.Random:
    """The random source of one paper: the same (seed, index) always gives the same paper."""
    return random.Random(f"aibench-synthetic|{seed}|{index}")


def _label_pool(rng: random.Random) -> list[str]:
    modules = [f"{a} {m}" for a in ADJECTIVES for m in MODULES]
    rng.shuffle(modules)
    return modules


def generate_paper(seed: int, index: int) -> PaperSpec:
    """The paper ``index`` of the synthetic set with ``seed``."""
    rng = paper_rng(seed, index)
    conference = rng.choices([c for c, _ in CONFERENCES], weights=[w for _, w in CONFERENCES])[0]
    task, modality = rng.choice(TASKS), rng.choice(MODALITIES)
    n_phases = rng.randint(2, 4)
    patterns = ["branch", "loop"] + ["chain"] * (n_phases - 2)
    rng.shuffle(patterns)
    phase_labels = sorted(rng.sample(PHASE_LABELS, n_phases), key=PHASE_LABELS.index)
    phases = tuple(Phase(f"ph{i + 1}", label) for i, label in enumerate(phase_labels))
    pool = _label_pool(rng)
    data_words = list(DATA)
    rng.shuffle(data_words)
    nodes: list[Node] = []
    edges: list[Edge] = []

    def add(label: str, phase: Phase, kind: str = "model") -> str:
        node_id = f"n{len(nodes) + 1}"
        nodes.append(Node(node_id, label, phase.id, kind, ""))
        return node_id

    previous: str | None = None
    for k, (phase, pattern) in enumerate(zip(phases, patterns)):
        entry = add(f"Input {modality}", phase, "data") if k == 0 else None
        if entry and previous is None:
            previous = entry
        first = add(pool.pop(), phase)
        if previous is not None:
            edges.append(Edge(previous, first))
        if pattern == "branch":
            branches = [add(pool.pop(), phase) for _ in range(rng.randint(2, 3))]
            merge = add(pool.pop(), phase)
            edges.extend(Edge(first, b) for b in branches)
            edges.extend(Edge(b, merge) for b in branches)
            last = merge
        elif pattern == "loop":
            middle = add(pool.pop(), phase)
            last = add(pool.pop(), phase)
            edges.extend([Edge(first, middle), Edge(middle, last), Edge(last, middle, "feedback")])
        else:
            chain = [first] + [add(pool.pop(), phase) for _ in range(rng.randint(1, 2))]
            edges.extend(Edge(a, b) for a, b in zip(chain, chain[1:]))
            last = chain[-1]
        if k == n_phases - 1:
            output = add(f"Output {data_words[0]}", phase, "data")
            edges.append(Edge(last, output))
            last = output
        previous = last
    graph = LogicGraph(phases, tuple(nodes), tuple(edges), title=f"{task} from {modality}",
                       layout_direction="phases top to bottom, flow left to right")
    return PaperSpec(f"syn{seed}-{index:04d}", conference, 2025, task, modality, tuple(patterns), graph,
                     tuple(pool[:8]))
