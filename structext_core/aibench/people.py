"""AIBench's human side as Results reads it: people's answers from the image-answering studies of
a stored data set, set beside the VLM solvers (:mod:`structext_core.aibench.human_solver`),
and the data set's blind pairwise studies (:func:`structext_core.aibench.pairwise.results`).

Which answers count: the ``study`` items (not practice, not gold) of the AIBench studies whose
``suite`` is the data set and which are not archived, limited to the studies the viewer may see
(:func:`structext_core.studio.data_scope.results_studies`: a study set to show its results only once
closed waits until it is). Each answer counts by its final score (:func:`study.scores.final_score`:
the newest override of the lead unless cleared, else the automatic correctness stored at commit,
else the letter against the data set's key); correct means a final score of at least 0.5.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import sqlite_utils

from structext_core.aibench import human_solver
from structext_core.aibench import store as aibench_store
from structext_core.aibench.dataset import Dataset
from structext_core.aibench.scoring import answer_rows, wilson
from structext_core.studio.study.scores import OVERRIDE_JOIN, final_score

BENCHMARK = "aibench"


def aibench_studies(db: sqlite_utils.Database, dataset: str, visible: Sequence[str] | None = None) -> list[dict]:
    """The unarchived AIBench studies over ``dataset`` (``id, name, status``), oldest first; only
    those named in ``visible`` when given."""
    rows = list(db.query("SELECT id, name, status FROM studies WHERE benchmark = ? AND suite = ? "
                         "AND archived_at IS NULL ORDER BY id", [BENCHMARK, dataset]))
    if visible is not None:
        allowed = set(visible)
        rows = [r for r in rows if r["name"] in allowed]
    return rows


def people_answers(db: sqlite_utils.Database, data: Dataset, dataset: str,
                   visible: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per counted answer of the AIBench studies over ``dataset`` the viewer may see
    (:data:`human_solver.PEOPLE_COLUMNS` plus ``study``); see the module for what counts."""
    studies = aibench_studies(db, dataset, visible)
    columns = ["study", *human_solver.PEOPLE_COLUMNS]
    if not studies:
        return pd.DataFrame(columns=columns)
    keys = answer_keys(data)
    marks = ",".join("?" * len(studies))
    rows = db.execute(
        f"""
        SELECT s.name, u.username, json_extract(i.strata, '$.system'), json_extract(i.strata, '$.paper_id'),
               json_extract(i.strata, '$.question_id'), json_extract(i.strata, '$.level'), r.response, r.gave_up,
               r.exact_match, o.score
        FROM responses r JOIN study_items i ON i.id = r.item_id JOIN studies s ON s.id = r.study_id
        JOIN users u ON u.id = r.user_id {OVERRIDE_JOIN}
        WHERE r.study_id IN ({marks}) AND i.kind = 'study' AND json_extract(i.strata, '$.paper_id') IS NOT NULL
        ORDER BY r.id
        """, [s["id"] for s in studies]).fetchall()
    out = []
    for study, who, system, paper_id, question_id, level, response, gave_up, exact, override in rows:
        letter = None if gave_up or not response else str(response).strip().upper()[:1] or None
        automatic = float(exact) if exact is not None else float(letter is not None and
                                                                   letter == keys.get((paper_id, question_id)))
        score = final_score(automatic, None if override is None else float(override))
        out.append((study, who, system, paper_id, question_id, int(level), letter, score >= 0.5))
    return pd.DataFrame(out, columns=columns)


def answer_keys(data: Dataset) -> dict[tuple[str, str], str]:
    """(paper_id, question_id) -> the key letter of every question of the data set."""
    return {(p.id, q.id): q.answer for p in data.papers.values() for q in p.questions}


def pairwise_studies(db: sqlite_utils.Database, dataset: str) -> list[dict]:
    """The unarchived pairwise studies over ``dataset`` with their counted votes (``id, name,
    status, votes``: :func:`structext_core.aibench.pairwise.counted_votes`), oldest first."""
    from structext_core.aibench.pairwise import counted_votes
    return [{**row, "votes": counted_votes(db, row["id"])} for row in db.query(
        "SELECT s.id, s.name, s.status FROM pairwise_studies s WHERE s.dataset = ? AND s.archived_at IS NULL"
        " ORDER BY s.id", [dataset])]


def pairwise_version(db: sqlite_utils.Database, study_id: int) -> tuple[int, int]:
    """(number of votes, newest vote id) of a pairwise study: changes whenever a vote is cast."""
    row = db.execute("SELECT COUNT(v.id), COALESCE(MAX(v.id), 0) FROM pairwise_votes v JOIN pairwise_tasks t "
                     "ON t.id = v.task_id WHERE t.study_id = ?", [study_id]).fetchone()
    return int(row[0]), int(row[1])


def solver_rows(data: Dataset, dataset: str) -> pd.DataFrame:
    """The VLM solvers' answer rows of the stored set (:func:`scoring.answer_rows` of its predictions)."""
    return answer_rows(data, aibench_store.load_predictions(dataset))


def evidence_of(row) -> dict:
    """What a send-back carries from a row of :func:`human_solver.disagreements_on_original`: the
    people's letters as counts (no names), the majority, the solver and its letter, the key, why."""
    return {"system": str(row["system"]), "people": int(row["people"]), "letters": str(row["letters"]),
            "majority": row["majority"] if isinstance(row["majority"], str) else None,
            "solver": str(row["solver"]),
            "solver_letter": row["solver_letter"] if isinstance(row["solver_letter"], str) else None,
            "key": str(row["key"]), "category": str(row["category"]), "why": str(row["why"])}


def beside_rows(people: pd.DataFrame, rows: pd.DataFrame, data: Dataset) -> pd.DataFrame:
    """People's answers as one more solver ("People") and the solvers' rows on the same pairs, in
    the answer rows' shape, for the AIBench heatmaps (solver x level, solver x system)."""
    if people.empty:
        return rows.iloc[0:0]
    options = {(p.id, q.id): len(q.options) for p in data.papers.values() for q in p.questions}
    conference = {p.id: p.conference for p in data.papers.values()}
    mine = human_solver.as_solver_rows(people).assign(
        options=[options[(p, q)] for p, q in zip(people["paper_id"], people["question_id"])],
        conference=people["paper_id"].map(conference))
    columns = ["system", "solver", "paper_id", "conference", "question_id", "level", "options", "letter", "correct",
               "unclear", "missing"]
    matched = human_solver.same_pairs(rows, people) if not rows.empty else rows
    parts = [mine[columns]] + ([matched[columns]] if not matched.empty else [])
    out = pd.concat(parts, ignore_index=True)
    out["correct"] = out["correct"].astype(bool)
    return out


def per_person(people: pd.DataFrame) -> pd.DataFrame:
    """Per person (the lead's view): answers, correct, accuracy (%) with its Wilson interval."""
    out = []
    for who, part in people.groupby("annotator", sort=True):
        n, correct = len(part), int(part["correct"].sum())
        low, high = wilson(correct, n)
        out.append({"annotator": who, "answers": n, "correct": correct, "accuracy": 100.0 * correct / n,
                    "low": 100.0 * low, "high": 100.0 * high})
    return pd.DataFrame(out, columns=["annotator", "answers", "correct", "accuracy", "low", "high"])
