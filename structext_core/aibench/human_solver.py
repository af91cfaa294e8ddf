"""People as a solver of AIBench, beside the vision-language solvers, on the same (image, question)
pairs: pure functions over two frames, no database, no Streamlit.

- *people*: one row per counted answer of a person (:data:`PEOPLE_COLUMNS`): which image
  (``system``, ``paper_id``), which question (``question_id``, ``level``), the letter chosen and
  whether it counts as correct (the final score: a lead's override in force, else the automatic
  one);
- *solver rows*: :func:`structext_core.aibench.scoring.answer_rows` (one row per system, solver
  and question; a missing or unclear reply is not correct).

What is computed:

- :func:`accuracy_beside_solvers`: per level and overall, the people's accuracy (pooled over
  their answers, n = answers) and each solver's restricted to the SAME pairs people answered
  (n = pairs), each with a Wilson 95% interval. The people's interval treats answers as
  independent: several people on one pair make it somewhat too narrow;
- :func:`question_table`: per (image, question) and solver: the people's letters, their majority
  (a letter chosen by more than half of them; none on a split), whether the solver's letter is
  that majority;
- :func:`agreement_with_solvers`: per solver and level, how often the solver's letter is the
  people's majority (over the pairs that have one), with a Wilson interval;
- :func:`disagreements_on_original`: on the paper's own figure (``ORIGINAL_SYSTEM``), the
  questions where people and a solver part, or people miss the key, ranked so the likeliest
  bad questions come first (see :data:`CATEGORIES`).
"""

from __future__ import annotations

import math
from collections import Counter

import pandas as pd

from structext_core.aibench.model import LEVELS, ORIGINAL_SYSTEM
from structext_core.aibench.scoring import wilson

PEOPLE = "People"
PEOPLE_COLUMNS = ("annotator", "system", "paper_id", "question_id", "level", "letter", "correct")
PAIR = ["system", "paper_id", "question_id"]
#: Why a question on the original figure is listed, the strongest evidence of a bad question first.
CATEGORIES = {
    "key_disputed": "people and the solver agree on another letter than the key: the key is likely wrong",
    "people_wrong": "people miss the key on the paper's own figure: the question or its key is suspect",
    "solver_differs": "people agree with the key, the solver does not: the solver misreads the figure",
    "people_split": "people split with no majority: the question may be ambiguous",
}


def _interval(correct: int, n: int) -> tuple[float, float, float]:
    low, high = wilson(correct, n)
    return (100.0 * correct / n if n else math.nan), 100.0 * low, 100.0 * high


def same_pairs(solver_rows: pd.DataFrame, people: pd.DataFrame) -> pd.DataFrame:
    """The solver rows of the (image, question) pairs people answered."""
    answered = people[PAIR].drop_duplicates()
    return solver_rows.merge(answered, on=PAIR, how="inner")


def accuracy_beside_solvers(people: pd.DataFrame, solver_rows: pd.DataFrame,
                            split: tuple[str, pd.Series, list[str]] | None = None) -> pd.DataFrame:
    """``who, level, n, correct, accuracy, low, high, pairs`` (level ``all`` = every level pooled;
    accuracy and interval in percent): people first, then each solver on the same pairs. With
    ``split`` (a questionnaire field's name, each answer's group and the groups in order:
    :func:`structext_core.studio.crowd.profiles.split_column`), one row set per group of people
    (``People: expertise = expert``) instead of the pool; the solvers on all the people's pairs."""
    out = []

    def add(who: str, frame: pd.DataFrame) -> None:
        for level in [*LEVELS, "all"]:
            part = frame if level == "all" else frame[frame["level"] == level]
            n, correct = len(part), int(part["correct"].sum())
            if n == 0:
                continue
            accuracy, low, high = _interval(correct, n)
            out.append({"who": who, "level": str(level), "n": n, "correct": correct, "accuracy": accuracy,
                        "low": low, "high": high, "pairs": len(part[PAIR].drop_duplicates())})

    if people.empty:
        return pd.DataFrame(columns=["who", "level", "n", "correct", "accuracy", "low", "high", "pairs"])
    if split is None:
        add(PEOPLE, people)
    else:
        name, groups, order = split
        for group in order:
            add(f"{PEOPLE}: {name} = {group}", people[(groups == group).to_numpy()])
    matched = same_pairs(solver_rows, people)
    for solver, part in matched.groupby("solver", sort=True):
        add(str(solver), part)
    return pd.DataFrame(out, columns=["who", "level", "n", "correct", "accuracy", "low", "high", "pairs"])


def as_solver_rows(people: pd.DataFrame) -> pd.DataFrame:
    """People's answers in the shape of solver rows (``solver`` = "People"), so the AIBench
    heatmaps draw them as one more solver."""
    return people.assign(solver=PEOPLE, missing=False, unclear=people["letter"].isna())


def _majority(letters: list[str]) -> str | None:
    counts = Counter(letters)
    letter, count = counts.most_common(1)[0] if counts else (None, 0)
    return letter if count * 2 > len(letters) else None


def tally(letters: list[str]) -> str:
    """``A×3 B×1``: the letters chosen, most chosen first (no names)."""
    counts = Counter(letters)
    return " ".join(f"{letter}×{count}" for letter, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def question_table(people: pd.DataFrame, solver_rows: pd.DataFrame, keys: dict[tuple[str, str], str]) -> pd.DataFrame:
    """Per pair people answered and per solver: ``system, paper_id, question_id, level, key,
    people (n), letters (tally), majority, majority_share, people_correct (share), solver,
    solver_letter, solver_correct, agree`` (agree: the solver's letter is the majority; None when
    people have no majority). ``keys``: (paper_id, question_id) -> the key letter."""
    columns = ["system", "paper_id", "question_id", "level", "key", "people", "letters", "majority",
               "majority_share", "people_correct", "solver", "solver_letter", "solver_correct", "agree"]
    if people.empty:
        return pd.DataFrame(columns=columns)
    groups = {}
    for pair, part in people.groupby(PAIR, sort=True):
        letters = [str(x) for x in part["letter"] if isinstance(x, str)]
        majority = _majority(letters)
        groups[pair] = {"level": int(part["level"].iloc[0]), "people": len(part), "letters": tally(letters),
                        "majority": majority,
                        "majority_share": (Counter(letters)[majority] / len(letters)) if majority else
                        (Counter(letters).most_common(1)[0][1] / len(letters) if letters else math.nan),
                        "people_correct": float(part["correct"].mean())}
    out = []
    for r in same_pairs(solver_rows, people).itertuples(index=False):
        g = groups[(r.system, r.paper_id, r.question_id)]
        agree = None if g["majority"] is None else (r.letter == g["majority"])
        out.append({"system": r.system, "paper_id": r.paper_id, "question_id": r.question_id, **g,
                    "key": keys.get((r.paper_id, r.question_id)), "solver": r.solver,
                    "solver_letter": r.letter, "solver_correct": bool(r.correct), "agree": agree})
    return pd.DataFrame(out, columns=columns)


def agreement_with_solvers(table: pd.DataFrame) -> pd.DataFrame:
    """Per solver and level (and ``all``): ``solver, level, pairs, agree, agreement, low, high``
    over the pairs where people have a majority (the solver's letter is it), in percent."""
    out = []
    decided = table[table["agree"].notna()] if not table.empty else table
    for solver, part in (decided.groupby("solver", sort=True) if not decided.empty else []):
        for level in [*LEVELS, "all"]:
            chosen = part if level == "all" else part[part["level"] == level]
            if chosen.empty:
                continue
            agree = int(chosen["agree"].astype(bool).sum())
            accuracy, low, high = _interval(agree, len(chosen))
            out.append({"solver": solver, "level": str(level), "pairs": len(chosen), "agree": agree,
                        "agreement": accuracy, "low": low, "high": high})
    return pd.DataFrame(out, columns=["solver", "level", "pairs", "agree", "agreement", "low", "high"])


def _category(row) -> str | None:
    majority, key, solver = row.majority, row.key, row.solver_letter
    if not isinstance(majority, str):  # no majority (None, or NaN once in a frame)
        return "people_split" if row.people >= 2 and solver != key else None
    if majority != key:
        return "key_disputed" if solver == majority else "people_wrong"
    return "solver_differs" if solver != majority else None


def disagreements_on_original(table: pd.DataFrame, original: str = ORIGINAL_SYSTEM) -> pd.DataFrame:
    """The questions on the paper's own figure where people and a solver part, or people miss the
    key: :func:`question_table`'s columns plus ``category`` and ``why`` (:data:`CATEGORIES`),
    ranked: the category's order, then the people's consensus (majority share), then how many
    people answered (more first)."""
    if table.empty:
        return table.assign(category=[], why=[])
    part = table[table["system"] == original].copy()
    part["category"] = [_category(r) for r in part.itertuples(index=False)]
    part = part[part["category"].notna()]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    part["_order"] = part["category"].map(order)
    part = part.sort_values(["_order", "majority_share", "people", "paper_id", "question_id", "solver"],
                            ascending=[True, False, False, True, True, True], kind="stable")
    part["why"] = part["category"].map(CATEGORIES)
    return part.drop(columns=["_order"]).reset_index(drop=True)
