"""What an AIBench paper and question *are*, whatever data set they are stored in and whatever
ids they carry there: fingerprints of their content.

The seal (:mod:`structext_core.studio.seal`) knows papers and questions by these, never by the
name of the set they were stored under: the question review's curated export is made to be
imported again, so copies of a set under other names (and with other ids) are normal, and a key
seen in one copy is a key seen in all of them.

- A **paper** is its method text and its logic graph (what decides every key; the original figure
  is drawn from them): :func:`paper_print`. Every image of a paper, of any system, is known by its
  paper: a person who may not see a paper's keys or names may not see any image of it named.
- A **question** is its paper, its text, its options and its key (what a person is shown and what
  decides the answer): :func:`question_print`. An edited question is another question of the same
  paper.

Both are the first 32 hex digits of a SHA-256 over a canonical JSON form (ids left out, text with
its white space collapsed), so they are stable across re-imports and across processes.
"""

from __future__ import annotations

import hashlib
import json
import re

from structext_core.aibench.model import Paper, Question

_SPACE = re.compile(r"\s+")


def _text(value: str) -> str:
    return _SPACE.sub(" ", value).strip()


def _digest(kind: str, content: object) -> str:
    data = json.dumps([kind, content], ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def paper_print(paper: Paper) -> str:
    """The paper's fingerprint: its method text and its graph's phases, nodes and edges by their
    labels (node and phase ids are names of the file, not content)."""
    graph = paper.graph
    phase_label = {p.id: _text(p.label) for p in graph.phases}
    node_label = {n.id: _text(n.label) for n in graph.nodes}
    nodes = sorted((node_label[n.id], n.type, phase_label.get(n.phase_id, "")) for n in graph.nodes)
    edges = sorted((node_label.get(e.source, ""), node_label.get(e.target, ""), _text(e.label)) for e in graph.edges)
    return _digest("paper", {"method": _text(paper.method_text), "phases": sorted(phase_label.values()),
                             "nodes": nodes, "edges": edges})


def question_print(paper_fingerprint: str, question: Question | dict) -> str:
    """The fingerprint of one question of the paper ``paper_fingerprint``: its text, options and key.
    ``question``: a :class:`Question` or a stored study item (``question``, ``options``, ``answer``)."""
    if isinstance(question, dict):
        text, options, answer = question["question"], question["options"], question["answer"]
    else:
        text, options, answer = question.question, question.options, question.answer
    return _digest("question", {"paper": paper_fingerprint, "question": _text(text),
                                "options": [_text(o) for o in options], "answer": answer})


def prints(papers: dict[str, Paper]) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """Every paper's fingerprint (by id) and every question's (by (paper id, question id))."""
    by_paper = {pid: paper_print(paper) for pid, paper in papers.items()}
    by_question = {(pid, q.id): question_print(by_paper[pid], q) for pid, paper in papers.items()
                   for q in paper.questions}
    return by_paper, by_question
