"""What the Results page will show for AIBench, as data (tested without Streamlit).

- :func:`table3_view`: the paper's Table 3 from scores, numbers with their n and intervals;
- :func:`heatmap`: cells of system x level, system x conference, solver x system (any two of
  the answer rows' axes). With ``level`` as an axis a cell is that level's pooled accuracy;
  with ``kind`` or ``question_id`` (each within one level) the cell's pooled accuracy;
  otherwise the mean of the four pooled level accuracies within the cell (the levels' part of
  the overall; aesthetics are per image, not per question), with the cell's n;
- :func:`solver_rank_agreement`: the paper's Fig. 6a question, does the ranking of systems
  change with the solver: Kendall's tau between every two solvers' rankings;
- :func:`question_kinds` and :func:`failing_kinds`: accuracy per kind of question, so the
  paper's failure modes show where the synthetic damage makes them known;
- :func:`drill_down`: the questions behind a cell, each with its image, the key (only when the
  viewer may see keys), the letter read and the reply;
- :func:`heatmap_chart`: a heatmap's cells as an Altair chart (value and n in the tooltip).
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from structext_core.aibench import paper as aibench_paper
from structext_core.aibench import scoring
from structext_core.aibench.dataset import Dataset
from structext_core.aibench.model import LETTERS, LEVEL_COLUMNS, LEVELS

AXES = ("system", "solver", "level", "conference", "paper_id", "question_id", "kind")
#: Axes whose every value holds questions of a single level.
WITHIN_A_LEVEL = {"kind", "question_id"}


def table3_view(scores: list[scoring.SystemScore]) -> pd.DataFrame:
    """One row per (system, solver): C, T, P, S, A, O as numbers, each level's n and Wilson
    interval, O's bootstrap interval, sorted by O (best first; rows without O last)."""
    rows = []
    for s in scores:
        row = {"system": s.system, "solver": s.solver}
        for level, column in LEVEL_COLUMNS.items():
            score = s.levels.get(level)
            row[column] = score.accuracy if score else math.nan
            row[f"{column}_n"] = score.n if score else 0
            row[f"{column}_interval"] = f"{score.low:.1f}-{score.high:.1f}" if score else ""
        row["A"] = s.aesthetics if s.aesthetics is not None else math.nan
        row["O"] = s.overall if s.overall is not None else math.nan
        row["O_interval"] = f"{s.overall_low:.1f}-{s.overall_high:.1f}" if s.overall is not None else ""
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    return table.sort_values(["O", "system", "solver"], ascending=[False, True, True], na_position="last",
                             kind="stable").reset_index(drop=True)


def question_kinds(dataset: Dataset) -> dict[tuple[str, str], str]:
    """(paper_id, question_id) -> the kind of question: the synthetic set's rule (its rationale
    reads ``rule <kind>``), else the level's name."""
    kinds = {}
    for paper in dataset.papers.values():
        for q in paper.questions:
            kind = q.rationale[5:] if q.rationale.startswith("rule ") else LEVELS[q.level]
            kinds[(paper.id, q.id)] = kind
    return kinds


def with_kinds(rows: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """The answer rows with a ``kind`` column."""
    kinds = question_kinds(dataset)
    return rows.assign(kind=[kinds[(p, q)] for p, q in zip(rows["paper_id"], rows["question_id"])])


def heatmap(rows: pd.DataFrame, row_axis: str, column_axis: str) -> pd.DataFrame:
    """Long cells ``row_axis, column_axis, value, n`` (see the module for what a value is)."""
    for axis in (row_axis, column_axis):
        if axis not in rows.columns:
            raise ValueError(f"no axis {axis!r}; the axes are {', '.join(a for a in AXES if a in rows.columns)}")
    if row_axis == column_axis:
        raise ValueError("a heatmap needs two different axes")
    by = [row_axis, column_axis]
    if "level" in by:
        cells = scoring.accuracy_by(rows, [a for a in by if a != "level"])
        return cells.rename(columns={"accuracy": "value"})[[*by, "value", "n"]]
    if set(by) & WITHIN_A_LEVEL:  # the cell's questions are of one level: its pooled accuracy
        cells = rows.groupby(by, sort=True).agg(n=("correct", "size"), correct=("correct", "sum")).reset_index()
        return cells.assign(value=100.0 * cells["correct"] / cells["n"])[[*by, "value", "n"]]
    levels = scoring.accuracy_by(rows, by)
    cells = levels.groupby(by, sort=True).agg(value=("accuracy", "mean"), n=("n", "sum"), levels=("level", "size"))
    cells.loc[cells["levels"] < len(LEVELS), "value"] = math.nan  # a cell without all four levels has no mean
    return cells.reset_index()[[*by, "value", "n"]]


def solver_rank_agreement(rows: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau between every two solvers' rankings of the systems (by the mean of the four
    level accuracies), over the systems both scored: ``solver_a, solver_b, systems, tau``."""
    cells = heatmap(rows, "solver", "system").dropna(subset=["value"])
    by_solver = {s: dict(zip(g["system"], g["value"])) for s, g in cells.groupby("solver", sort=True)}
    solvers = sorted(by_solver)
    out = []
    for i, a in enumerate(solvers):
        for b in solvers[i + 1:]:
            shared = sorted(set(by_solver[a]) & set(by_solver[b]))
            tau = (aibench_paper.kendall([by_solver[a][s] for s in shared], [by_solver[b][s] for s in shared])
                   if len(shared) >= 2 else math.nan)
            out.append({"solver_a": a, "solver_b": b, "systems": len(shared), "tau": tau})
    return pd.DataFrame(out, columns=["solver_a", "solver_b", "systems", "tau"])


def failing_kinds(rows: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """Accuracy per system and kind of question (``system, solver, kind, n, correct, accuracy``),
    weakest first within each system: which kinds of question a system fails."""
    kinded = with_kinds(rows, dataset)
    table = kinded.groupby(["system", "solver", "kind"], sort=True).agg(
        n=("correct", "size"), correct=("correct", "sum")).reset_index()
    table["correct"] = table["correct"].astype(int)
    table["accuracy"] = 100.0 * table["correct"] / table["n"]
    return table.sort_values(["system", "solver", "accuracy", "kind"], kind="stable").reset_index(drop=True)


def drill_down(rows: pd.DataFrame, dataset: Dataset, *, show_keys: bool, limit: int = 200, **where) -> list[dict]:
    """The questions behind a cell (``where``: axis=value filters, e.g. system=..., level=2), at
    most ``limit``: paper, question, options, image path, the letter read and the reply, and the
    key and whether it was right only when ``show_keys``."""
    selected = rows
    for axis, value in where.items():
        if axis not in rows.columns:
            raise ValueError(f"no axis {axis!r}")
        selected = selected[selected[axis] == value]
    out = []
    for r in selected.head(limit).itertuples(index=False):
        paper = dataset.papers[r.paper_id]
        question = next(q for q in paper.questions if q.id == r.question_id)
        image = dataset.images.get((r.system, r.paper_id))
        item = {"system": r.system, "solver": r.solver, "paper_id": r.paper_id, "question_id": r.question_id,
                "level": int(r.level), "question": question.question,
                "options": [f"{LETTERS[i]}. {o}" for i, o in enumerate(question.options)],
                "image": image.path if image else None, "letter": r.letter, "reply": r.reply,
                "missing": bool(r.missing)}
        if show_keys:
            item["key"] = question.answer
            item["correct"] = bool(r.correct)
        out.append(item)
    return out


AXIS_TITLES = {"system": "system", "solver": "solver", "level": "level", "conference": "conference",
               "paper_id": "paper", "question_id": "question", "kind": "kind of question"}


def heatmap_chart(cells: pd.DataFrame, row_axis: str, column_axis: str) -> alt.Chart:
    """The cells of :func:`heatmap` drawn: colour = accuracy (0-100), the value written in each cell."""
    within = {"level", *WITHIN_A_LEVEL} & {row_axis, column_axis}
    value_title = "accuracy (%)" if within else "mean of the four level accuracies (%)"
    frame = cells.assign(label=cells["value"].map(lambda v: "" if pd.isna(v) else f"{v:.1f}"))
    base = alt.Chart(frame).encode(
        x=alt.X(f"{column_axis}:N", title=AXIS_TITLES.get(column_axis, column_axis)),
        y=alt.Y(f"{row_axis}:N", title=AXIS_TITLES.get(row_axis, row_axis)))
    rects = base.mark_rect().encode(
        color=alt.Color("value:Q", title=value_title, scale=alt.Scale(domain=[0, 100], scheme="blues")),
        tooltip=[row_axis, column_axis, alt.Tooltip("value:Q", format=".1f", title=value_title), "n"])
    text = base.mark_text().encode(text="label:N", color=alt.condition("datum.value > 60", alt.value("white"),
                                                                       alt.value("black")))
    return (rects + text).properties(title=f"AIBench: {AXIS_TITLES.get(row_axis, row_axis)} x "
                                           f"{AXIS_TITLES.get(column_axis, column_axis)}, {value_title}")


def describe_failure(filename: str, error, limit: int = 20) -> str:
    """A refused predictions upload as Markdown: what was refused, then one bullet per problem
    (its file, line and field), every name escaped."""
    from structext_core.benchmark.safe_text import markdown_text
    lines = [f"**{markdown_text(filename[:120])}** was not stored, nothing was: "
             f"{len(error.problems)} problem(s)."]
    lines += [f"- {markdown_text(str(problem)[:400])}" for problem in error.problems[:limit]]
    if len(error.problems) > limit:
        lines.append(f"- ... and {len(error.problems) - limit} more")
    return "\n".join(lines)
