"""A synthetic AIBench written in the import's folder shape, byte-identical per seed.

``write_set(folder, seed, papers)`` writes::

    papers/<id>.json           the paper in the authors' shape (correct_option, "Level 1: ...")
                               plus each question's "rule" (ignored by the import)
    figures/<id>.png           the original figure (system "Original Image")
    images/<system>/<id>.png   one image per damaged system (see ``damage.DAMAGES``)
    truth.jsonl                the right answer of every (system, paper, question)
    expected.json              per system and level: the accuracy (%) of a perfect solver, one that
                               reads each image exactly (answers with the right answer for that
                               image), scored against the keys as the paper scores: 100 on the
                               original figures, less where the damage changed the answer

Each paper depends only on (seed, index), so one paper can be rebuilt alone
(``write_paper``) and gives the same bytes as in the whole set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from structext_core.aibench.model import LEVELS, ORIGINAL_SYSTEM, LogicGraph
from structext_core.aibench.synthetic import damage, draw, graphs, rules
from structext_core.aibench.synthetic.questions import RuledQuestion, make_questions

SYSTEMS = (ORIGINAL_SYSTEM, *damage.DAMAGES)


@dataclass(frozen=True)
class BuiltPaper:
    """One synthetic paper: what the generator chose, its questions, and each system's drawn graph."""

    index: int
    spec: graphs.PaperSpec
    questions: tuple[RuledQuestion, ...]
    drawn: dict[str, LogicGraph | None]

    def truth(self, system: str, ruled: RuledQuestion) -> str:
        """The right answer of ``ruled`` about this paper's image by ``system``."""
        return rules.right_answer(ruled.rule, ruled.question.options, self.drawn[system])


def build_paper(seed: int, index: int) -> BuiltPaper:
    """The synthetic paper ``index`` of the set with ``seed``."""
    spec = graphs.generate_paper(seed, index)
    drawn = {ORIGINAL_SYSTEM: spec.graph}
    for name in damage.DAMAGES:
        drawn[name] = damage.damaged_graph(spec.graph, name, seed, index)
    return BuiltPaper(index, spec, tuple(make_questions(spec, seed, index)), drawn)


def paper_document(built: BuiltPaper) -> dict:
    """The paper's JSON in the authors' shape."""
    s, g = built.spec, built.spec.graph
    return {
        "id": s.paper_id, "conference": s.conference, "year": s.year,
        "method_text": (f"A synthetic method for {s.task.lower()} from {s.modality.lower()} input, made by rule "
                        f"(phases: {', '.join(p.label for p in g.phases)})."),
        "original_figure": f"figures/{s.paper_id}.png",
        "logic_graph": {
            "title": g.title, "layout_direction": g.layout_direction,
            "phases": [{"id": p.id, "label": p.label} for p in g.phases],
            "nodes": [{"id": n.id, "label": n.label, "phase_id": n.phase_id, "type": n.type, "icon_hint": n.icon_hint}
                      for n in g.nodes],
            "edges": [{"source": e.source, "target": e.target, "label": e.label} for e in g.edges],
        },
        "questions": [{"id": r.question.id, "level": f"Level {r.question.level}: {LEVELS[r.question.level]}",
                       "question": r.question.question, "options": list(r.question.options),
                       "correct_option": r.question.answer, "rationale": r.question.rationale, "rule": r.rule}
                      for r in built.questions],
    }


def truth_rows(built: BuiltPaper) -> list[dict]:
    """One row per (system, question): the key, the right answer for that system's image, the damage."""
    return [{"paper_id": built.spec.paper_id, "question_id": r.question.id, "system": system,
             "level": r.question.level, "key": r.question.answer, "truth": built.truth(system, r),
             "failure_mode": damage.FAILURE_MODES.get(system, "none")}
            for system in SYSTEMS for r in built.questions]


def expected_accuracy(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per system and level (as text keys): 100 x the share of questions whose key is the right
    answer for that system's image: the accuracy of a perfect solver scored against the keys."""
    counts: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        hit = counts.setdefault((row["system"], row["level"]), [0, 0])
        hit[0] += row["key"] == row["truth"]
        hit[1] += 1
    return {system: {str(level): 100.0 * counts[(system, level)][0] / counts[(system, level)][1]
                     for level in LEVELS if (system, level) in counts} for system in SYSTEMS}


def _dump(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1) + "\n"


def write_paper(folder: str | Path, seed: int, index: int) -> BuiltPaper:
    """Write one paper's JSON and images into ``folder`` (its truth is written by :func:`write_set`)."""
    folder = Path(folder)
    built = build_paper(seed, index)
    pid = built.spec.paper_id
    (folder / "papers").mkdir(parents=True, exist_ok=True)
    (folder / "papers" / f"{pid}.json").write_text(_dump(paper_document(built)), "utf-8")
    (folder / "figures").mkdir(exist_ok=True)
    (folder / "figures" / f"{pid}.png").write_bytes(draw.figure_png(built.drawn[ORIGINAL_SYSTEM]))
    for system in damage.DAMAGES:
        (folder / "images" / system).mkdir(parents=True, exist_ok=True)
        (folder / "images" / system / f"{pid}.png").write_bytes(draw.figure_png(built.drawn[system]))
    return built


def write_set(folder: str | Path, seed: int = 0, papers: int = 20,
              progress: Callable[[int, int], None] | None = None) -> list[BuiltPaper]:
    """Write the synthetic set of ``papers`` papers with ``seed`` into the new or empty ``folder``;
    ``progress(done, papers)`` is called after each paper."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty; the synthetic set is written into a new or empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    built = []
    for index in range(papers):
        built.append(write_paper(folder, seed, index))
        if progress is not None:
            progress(index + 1, papers)
    rows = [row for b in built for row in truth_rows(b)]
    (folder / "truth.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    (folder / "expected.json").write_text(_dump({"seed": seed, "papers": papers,
                                                 "perfect_solver": expected_accuracy(rows)}), "utf-8")
    return built
