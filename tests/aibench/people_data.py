"""People's answers to AIBench image questions, written straight into the schema of migration 10
(the study machinery that makes them is another page's): one place for every test that needs them."""
from __future__ import annotations

import json
import time

from structext_core.aibench.dataset import Dataset
from structext_core.aibench.model import LETTERS
from structext_core.studio.storage import write_transaction


def question(data: Dataset, paper_id: str, question_id: str):
    return next(q for q in data.papers[paper_id].questions if q.id == question_id)


def other_letter(data: Dataset, paper_id: str, question_id: str, skip: tuple[str, ...] = ()) -> str:
    """A letter of the question that is not its key (nor any of ``skip``)."""
    q = question(data, paper_id, question_id)
    return next(letter for letter in LETTERS[:len(q.options)] if letter != q.answer and letter not in skip)


def aibench_study(db, data: Dataset, dataset: str, name: str, answers, *, status: str = "open",
                  results_when_closed: int = 0) -> dict[tuple, int]:
    """An AIBench study over ``dataset`` with the given ``answers``: (user, system, paper_id,
    question_id, letter[, kind]) each; items are made per (system, paper, question, kind), the
    correctness stored as the answering page stores it (1 or 0 in ``rouge_l`` and ``exact_match``).
    Returns (user id, system, paper_id, question_id) -> response id."""
    now = time.time()
    out = {}
    with write_transaction(db):
        study_id = db.execute(
            "INSERT INTO studies (name, suite, n_items, seed, rule_text, status, created_at, benchmark, "
            "results_when_closed) VALUES (?, ?, 0, 0, '', ?, ?, 'aibench', ?)",
            [name, dataset, status, now, results_when_closed]).lastrowid
        items, seqs = {}, {}
        for answer in answers:
            user, system, paper_id, question_id, letter, *rest = answer
            kind = rest[0] if rest else "study"
            q = question(data, paper_id, question_id)
            key = (system, paper_id, question_id, kind)
            if key not in items:
                sample = {"paper_id": paper_id, "question_id": question_id, "system": system, "answer": q.answer}
                items[key] = db.execute(
                    "INSERT INTO study_items (study_id, position, sample_id, reference_chars, sample_json, strata, "
                    "kind) VALUES (?, ?, ?, 0, ?, ?, ?)",
                    [study_id, len(items) + 1, f"{paper_id}/{question_id}@{system}#{kind}", json.dumps(sample),
                     json.dumps({"paper_id": paper_id, "system": system, "question_id": question_id,
                                 "level": q.level, "conference": data.papers[paper_id].conference}), kind]).lastrowid
            if user["id"] not in seqs:
                seqs[user["id"]] = 0
                db.execute("INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (?, ?, ?)",
                           [study_id, user["id"], now])
            seqs[user["id"]] += 1
            assignment = db.execute("INSERT INTO assignments (study_id, user_id, item_id, seq, first_shown_at) "
                                    "VALUES (?, ?, ?, ?, ?)",
                                    [study_id, user["id"], items[key], seqs[user["id"]], now]).lastrowid
            correct = int(letter == q.answer)
            out[(user["id"], system, paper_id, question_id)] = db.execute(
                "INSERT INTO responses (assignment_id, study_id, user_id, item_id, response, submitted_at, "
                "elapsed_seconds, paused_seconds, rouge_l, exact_match, scored_at) VALUES (?, ?, ?, ?, ?, ?, 5, 0, ?, ?, ?)",
                [assignment, study_id, user["id"], items[key], letter, now, float(correct), correct, now]).lastrowid
    return out


def override(db, response_id: int, score: float | None, lead: dict, reason: str = "checked by hand") -> None:
    """A lead's override of one answer's score (None: back to the automatic score)."""
    with write_transaction(db):
        db.execute("INSERT INTO score_overrides (response_id, score, reason, by_user, at) VALUES (?, ?, ?, ?, ?)",
                   [response_id, score, reason, lead["id"], time.time()])


def solver_lines(data: Dataset, solver: str, letters: dict[tuple[str, str, str], str],
                 default_right: bool = True) -> str:
    """Predictions JSONL of ``solver``: ``letters`` (system, paper_id, question_id) -> letter; every
    other question of every system answered with its key when ``default_right``."""
    lines = []
    for system in data.systems:
        for paper in data.papers.values():
            for q in paper.questions:
                letter = letters.get((system, paper.id, q.id), q.answer if default_right else None)
                if letter is not None:
                    lines.append(json.dumps({"paper_id": paper.id, "question_id": q.id, "system": system,
                                             "solver": solver, "prediction": letter}))
    return "\n".join(lines) + "\n"


def people_and_votes(db, dataset: str, solver: str = "vlm-test") -> dict:
    """A scene on the stored set ``dataset`` (its accounts made here): three annotators answer two
    questions of the first paper's original figure, all three choosing another letter than the key
    on the first, as does ``solver`` (stored as its predictions; right everywhere else); two of
    them vote on 6 pairs of a pairwise study. Returns the names the tests check."""
    from structext_core.aibench import pairwise as pws
    from structext_core.aibench import question_review as qr
    from structext_core.aibench import store as aibench_store
    from structext_core.aibench.model import ORIGINAL_SYSTEM
    from structext_core.studio import accounts
    from structext_core.studio.clock import ClockSettings

    people = [accounts.create_user(db, f"ann{i}", "password1", "annotator") for i in (1, 2, 3)]
    data = qr.load_dataset(dataset)
    paper = sorted(data.papers)[0]
    q1, q2 = [q.id for q in data.papers[paper].questions][:2]
    wrong = other_letter(data, paper, q1)
    key2 = question(data, paper, q2).answer
    answers = [(p, ORIGINAL_SYSTEM, paper, q1, wrong) for p in people]
    answers += [(p, ORIGINAL_SYSTEM, paper, q2, key2) for p in people[:2]]
    aibench_study(db, data, dataset, "image study", answers)
    aibench_store.add_predictions(dataset, solver_lines(data, solver, {(ORIGINAL_SYSTEM, paper, q1): wrong}), solver)
    study = pws.create_study(db, "pairs", dataset, [p["id"] for p in people[:2]], n_pairs=6, practice=0,
                             repeat_share=0, seed=1)
    clock, settings = 1000.0, ClockSettings()
    for person in people[:2]:
        while (view := pws.current_task(db, study, person["id"], at=clock, settings=settings)) is not None:
            pws.vote(db, person["id"], view.token, "left", at=clock + 4, settings=settings)
            clock += 5
    return {"people": people, "paper": paper, "q1": q1, "wrong": wrong, "study": study}
