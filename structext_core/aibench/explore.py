"""AIBench on Explore, as data: its stored data sets and a paper as the seal lets a user see them
(the page's glue, the member's ``EXPLORE_VIEW``, only places these on the screen)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from structext_core.aibench import model, question_review, seal
from structext_core.aibench import store as aibench_store
from structext_core.studio import access, data_scope


@dataclass(frozen=True)
class AibenchPaper:
    """One AIBench paper as Explore shows it: its method text, original figure (``figure``: the
    stored PNG, None when the set has none) and questions, each ``{id, level, question, options}``
    and, only when ``keys_shown``, ``key`` and ``rationale``."""

    dataset: str
    paper_id: str
    conference: str
    year: int
    method_text: str
    figure: Path | None
    questions: tuple[dict, ...]
    keys_shown: bool


def aibench_datasets(db, user: dict | None) -> list[str]:
    """The stored AIBench data sets ``user`` may browse here: those whose questions with keys the
    seal lets them see (:func:`structext_core.studio.data_scope.visible_datasets`: for visitors
    and annotators, only in public read-only mode and none holding a paper, in any copy, of an open
    AIBench or pairwise study)."""
    return data_scope.visible_datasets(db, user, "aibench", aibench_store.stored_datasets())


def aibench_paper_ids(db, user: dict | None, dataset: str) -> list[str]:
    """The papers of ``dataset`` shown to ``user``, sorted: none of a set they may not browse, and
    never a paper (by content) they still have to answer or vote on (:func:`structext_core.studio.seal.open_papers`,
    a second lock behind the set's)."""
    if dataset not in aibench_datasets(db, user):
        return []
    sealed = seal.open_papers(db, user["id"] if user else None)
    papers = question_review.load_dataset(dataset).papers
    return [pid for pid in sorted(papers) if seal.paper_key(dataset, pid) not in sealed]


def aibench_paper(db, user: dict | None, dataset: str, paper_id: str) -> AibenchPaper:
    """The paper ``paper_id`` of ``dataset`` as ``user`` may see it; a ``PermissionError`` when it
    is not theirs to see (:func:`aibench_paper_ids`). Keys only with the capability ``answers``."""
    if paper_id not in aibench_paper_ids(db, user, dataset):
        raise PermissionError(f"The paper {paper_id[:60]!r} of {dataset[:60]!r} is not shown to you.")
    data = question_review.load_dataset(dataset)
    paper = data.papers[paper_id]
    keys = access.can(access.role_of(user), "answers", access.public_mode(db))
    record = data.images.get((model.ORIGINAL_SYSTEM, paper_id))
    questions = []
    for q in paper.questions:
        row = {"id": q.id, "level": q.level, "question": q.question,
               "options": tuple(f"{model.LETTERS[i]}. {text}" for i, text in enumerate(q.options))}
        if keys:
            row.update(key=q.answer, rationale=q.rationale)
        questions.append(row)
    return AibenchPaper(dataset, paper_id, paper.conference, paper.year, paper.method_text,
                        aibench_store.dataset_path(dataset) / record.path if record else None,
                        tuple(questions), keys)
