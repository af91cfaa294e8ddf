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
- :func:`heatmap_data`: a heatmap's cells as the page draws them, a tinted table (value and n in each
  cell and its tooltip, levels named as Table 3 names them: :data:`LEVEL_LABELS`), :func:`heatmap_table`
  the same cells for a CSV;
- :func:`table3_headline` and :func:`table3_detail`: Table 3 split to fit the page (the scores,
  then each level's n and interval), :data:`TABLE3_HELP` the full name of each short column;
- :func:`human_rank_headline`, :func:`human_rank_detail` and :func:`rank_agreement_figures`: the
  pairwise human rank split the same way, and its agreement figures ("—" with the reason where a
  figure is undefined).
"""

from __future__ import annotations

import math

import pandas as pd

from structext_core.aibench import paper as aibench_paper
from structext_core.aibench import scoring
from structext_core.aibench.dataset import Dataset
from structext_core.aibench.model import LETTERS, LEVEL_COLUMNS, LEVELS
from structext_core.text.words import plural
from structext_core.views import cells
from structext_core.views import heatmap_table as tinted_table

AXES = ("system", "solver", "level", "conference", "paper_id", "question_id", "kind")
#: Axes whose every value holds questions of a single level.
WITHIN_A_LEVEL = {"kind", "question_id"}
#: A level as every table, chart and CSV of the view names it: Table 3's column, then its name.
LEVEL_LABELS: dict[int, str] = {level: f"{LEVEL_COLUMNS[level]} · {name}" for level, name in LEVELS.items()}
#: What each short column of Table 3 means (the column's help on the page).
TABLE3_HELP: dict[str, str] = {
    **{column: f"{LEVEL_LABELS[level]}: accuracy (%) pooled over the level's questions"
       for level, column in LEVEL_COLUMNS.items()},
    "A": "Aesthetics: the imported aesthetic score (none for the synthetic set)",
    "O": "Overall: the mean of C, T, P, S and A (none without A)",
    "O_interval": "Overall: 95% bootstrap interval over papers",
}
UNDEFINED = cells.DASH


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


def table3_headline(table: pd.DataFrame) -> pd.DataFrame:
    """Table 3's scores as the paper prints them (system, solver, C, T, P, S, A, O) and O's
    interval: few enough columns to fit the page. A score the data cannot give (A and O without
    imported aesthetics, a level with no question) is :data:`UNDEFINED`, its column's numbers then
    written to one decimal (never None)."""
    headline = table[[c for c in ("system", "solver", *LEVEL_COLUMNS.values(), "A", "O", "O_interval")
                      if c in table.columns]]
    headline = cells.without_missing(headline, [c for c in (*LEVEL_COLUMNS.values(), "A", "O")
                                                if c in headline.columns], digits=1)
    if "O_interval" in headline.columns:
        headline = headline.assign(O_interval=headline["O_interval"].replace("", UNDEFINED))
    return headline


def table3_detail(table: pd.DataFrame) -> pd.DataFrame:
    """Each level's n and Wilson 95% interval per (system, solver), columns named by the level
    (``C n``, ``C 95%``), in the headline's order."""
    out = table[["system", "solver"]].copy()
    for column in LEVEL_COLUMNS.values():
        out[f"{column} n"] = table[f"{column}_n"]
        out[f"{column} 95%"] = table[f"{column}_interval"].replace("", UNDEFINED)
    return out


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


def level_label(level) -> str:
    """``C · Component Existence`` for level 1 (or "1")."""
    return LEVEL_LABELS[int(level)]


def value_title(row_axis: str, column_axis: str) -> str:
    """What a heatmap cell's value is for these axes."""
    within = {"level", *WITHIN_A_LEVEL} & {row_axis, column_axis}
    return "accuracy (%)" if within else "mean of the four level accuracies (%)"


def _labelled(cells: pd.DataFrame) -> pd.DataFrame:
    return cells.assign(level=cells["level"].map(level_label)) if "level" in cells.columns else cells


def _order(cells: pd.DataFrame, axis: str) -> list[str]:
    if axis == "level":
        return [LEVEL_LABELS[level] for level in sorted({int(v) for v in cells["level"]})]
    return sorted(cells[axis].astype(str).unique())


def heatmap_table(cells: pd.DataFrame, row_axis: str, column_axis: str) -> pd.DataFrame:
    """The cells of :func:`heatmap` for a CSV: both axes (levels named as in the chart), the
    value rounded to 0.01 under its name and each cell's n."""
    table = _labelled(cells)[[row_axis, column_axis]].astype(str)
    table[value_title(row_axis, column_axis)] = cells["value"].astype(float).round(2).to_numpy()
    table["n"] = cells["n"].astype(int).to_numpy()
    return table


def heatmap_data(cells: pd.DataFrame, row_axis: str, column_axis: str) -> dict:
    """The cells of :func:`heatmap` as the page draws them (:mod:`structext_core.views.heatmap_table`, a
    tinted table): colour = the value (0-100, blues), the value and its n written in each cell and its
    tooltip; levels named as in Table 3; labels never cut (a table's cells wrap them)."""
    labelled = _labelled(cells)
    frame = pd.DataFrame({
        "row_label": labelled[row_axis].astype(str).to_numpy(), "col_label": labelled[column_axis].astype(str).to_numpy(),
        "mean": cells["value"].astype(float).to_numpy(), "n": cells["n"].astype(int).to_numpy()})
    title = value_title(row_axis, column_axis)
    row_title, column_title = AXIS_TITLES.get(row_axis, row_axis), AXIS_TITLES.get(column_axis, column_axis)
    return tinted_table.table_data(
        frame, row_title, column_title, title=f"AIBench: {row_title} x {column_title}, {title}", value_title=title,
        scheme=tinted_table.BLUES, white_text=lambda value: value > 60, clickable=False,
        order=(_order(cells, row_axis), _order(cells, column_axis)))


def _span(low, high, digits: str) -> str:
    if pd.isna(low) or pd.isna(high):
        return UNDEFINED
    return f"{low:{digits}} to {high:{digits}}"


def human_rank_headline(table: pd.DataFrame) -> pd.DataFrame:
    """The pairwise human rank (``pairwise.human_ranking``'s table) in few enough columns to fit
    the page: rank and its 95% interval in whole ranks (``2 to 5``, :func:`cells.rank_interval`),
    system, strength and its interval, win rate as text to three decimals (``—`` for a system with no
    decided vote), comparisons. Every page that shows the rank shows this."""
    return pd.DataFrame({
        "rank": table["rank"], "rank 95%": [cells.rank_interval(lo, hi) for lo, hi in zip(table["rank_low"],
                                                                                            table["rank_high"])],
        "system": table["system"], "strength": table["strength"],
        "strength 95%": [_span(lo, hi, ".2f") for lo, hi in zip(table["low"], table["high"])],
        "win_rate": [cells.number_text(v, 3) for v in table["win_rate"]], "comparisons": table["comparisons"]})


def human_rank_detail(table: pd.DataFrame) -> pd.DataFrame:
    """The votes behind the human rank, per system: wins, losses, ties, both bad and its share."""
    return table[["system", "wins", "losses", "ties", "both_bad", "both_bad_share"]].copy()


def judges_headline(fig6b: pd.DataFrame) -> pd.DataFrame:
    """Each judge against the human rank (``pairwise.fig6b``) in few enough columns to fit the
    page: rho's interval as one column, the paper's rho as text (``—`` where it printed none)."""
    out = fig6b[["metric", "n", "spearman_rho", "kendall_tau", "p_rho_exact", "p_tau_exact"]].copy()
    out["rho 95%"] = [_span(lo, hi, ".2f") for lo, hi in zip(fig6b["rho_low"], fig6b["rho_high"])]
    out["paper rho"] = [UNDEFINED if pd.isna(v) else f"{v:.3f}" for v in fig6b["paper_rho"]]
    return out


def rank_agreement_figures(agreement: dict, kendall_w: dict, consistency: dict) -> list[dict]:
    """The pairwise study's three agreement figures as ``label, value, help``: the value shown
    (``—`` where the votes cannot give it) and a help that says what it rests on, or why none."""
    def share(value) -> str:
        return UNDEFINED if value is None or pd.isna(value) else f"{value:.0%}"
    w = kendall_w.get("w")
    return [
        {"label": "Per-pair agreement",
         "value": share(agreement["agreement"]) if agreement["rater_pairs"] else UNDEFINED,
         "help": f"{agreement['pairs']} pairs judged by two or more people"
                 + ("" if agreement["rater_pairs"] else ": none yet, so no agreement to measure")},
        {"label": "Kendall's W", "value": UNDEFINED if w is None or pd.isna(w) else f"{w:.2f}",
         "help": f"over {plural(kendall_w['raters'], 'person')} who compared every system"
                 + ("" if w is not None and not pd.isna(w) else
                    ": needs two or more such people (and two or more systems), so not measured yet")},
        {"label": "Swap consistency",
         "value": share(consistency["consistency"]) if consistency["repeats"] else UNDEFINED,
         "help": f"{consistency['repeats']} pairs seen again with the sides swapped"
                 + ("" if consistency["repeats"] else ": none yet, so no consistency to measure")},
    ]


def review_progress_table(rows: list[dict]) -> pd.DataFrame:
    """A review campaign's progress (``question_review.progress``) as the lead reads it: papers per status and
    reviewer, and the median active time of a submitted paper in minutes (:data:`UNDEFINED` before any)."""
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    minutes = [cells.number_text(value, 1) for value in frame.pop("median_active_min")]
    return frame.assign(**{"median active (min)": minutes})


def review_agreement_table(rows: list[dict]) -> pd.DataFrame:
    """The double reviews' agreement (``question_review.agreement``) as the lead reads it: questions, agreement
    in percent, Cohen's kappa to three decimals; :data:`UNDEFINED` where a figure is not defined (no question
    at a level, or both reviewers one same decision throughout), never ``None``."""
    return pd.DataFrame({
        "level": [row["level"] for row in rows],
        "questions": [row["n"] for row in rows],
        "agreement (%)": [cells.number_text(row["agreement_pct"], 1) for row in rows],
        "kappa": [cells.number_text(row["kappa"], 3) for row in rows],
    })


def describe_failure(filename: str, error, limit: int = 20) -> str:
    """A refused predictions upload as Markdown: what was refused, then one bullet per problem
    (its file, line and field), every name escaped."""
    from structext_core.text.safe_text import markdown_text
    lines = [f"**{markdown_text(filename[:120])}** was not stored, nothing was: "
             f"{len(error.problems)} problem(s)."]
    lines += [f"- {markdown_text(str(problem)[:400])}" for problem in error.problems[:limit]]
    if len(error.problems) > limit:
        lines.append(f"- ... and {len(error.problems) - limit} more")
    return "\n".join(lines)
