"""``python -m structext_core aibench generate|import|score``: AIBench from the command line.

- ``generate --out DIR [--seed S] [--papers N]``: the synthetic set in the import's folder shape.
- ``import FOLDER [--out DEST] [--replace]``: check a folder of papers, images and aesthetic
  scores (images decoded in worker processes) and store it; every problem is named, nothing is
  stored on any.
- ``score PREDICTIONS.jsonl --data DEST [--metric M] [--by AXIS] [--out CSV]``: the paper's
  Table 3 with n and 95% intervals, or the level accuracies broken down by an axis.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from structext_core import settings
from structext_core.cli.main import UsageError

BREAKDOWNS = {"conference": ["system", "solver", "conference"], "paper": ["system", "solver", "paper_id"],
              "question": ["solver", "paper_id", "question_id"]}


def cmd_generate(args: argparse.Namespace) -> int:
    from structext_core.aibench.synthetic import build
    if args.papers < 1 or args.papers > 5000:
        raise UsageError("--papers must be between 1 and 5000")
    try:
        built = build.write_set(args.out, seed=args.seed, papers=args.papers)
    except FileExistsError as error:
        raise UsageError(str(error)) from None
    questions = sum(len(b.questions) for b in built)
    print(f"wrote {len(built)} papers, {questions} questions and {len(built) * len(build.SYSTEMS)} images "
          f"({len(build.SYSTEMS)} systems) to {args.out}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from structext_core.aibench.dataset import ImportFailed
    from structext_core.studio import aibench_import
    dest = Path(args.out) if args.out else settings.ANNOTATIONS_DIR / "aibench" / Path(args.folder).resolve().name
    try:
        stored = aibench_import.import_folder(args.folder, dest, replace=args.replace)
    except (ImportFailed, FileExistsError) as error:
        raise UsageError(str(error)) from None
    questions = sum(len(p.questions) for p in stored.papers.values())
    print(f"imported {len(stored.papers)} papers, {questions} questions, {len(stored.images)} images of "
          f"{len(stored.systems)} systems and {len(stored.aesthetics)} aesthetic scores into {dest}")
    return 0


def _cell(value: float, low: float | None = None, high: float | None = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if low is None or math.isnan(low):
        return f"{value:.2f}"
    return f"{value:.2f} [{low:.1f}, {high:.1f}]"


def cmd_score(args: argparse.Namespace) -> int:
    from structext_core.aibench import dataset as ds
    from structext_core.aibench import predictions, scoring
    try:
        data = ds.load_dataset(args.data)
        preds = predictions.read_predictions(args.predictions, data)
        metric = scoring.choose_metric(data, args.metric)
    except (ValueError, OSError) as error:
        raise UsageError(str(error)) from None
    if args.by:
        table = scoring.accuracy_by(scoring.answer_rows(data, preds), BREAKDOWNS[args.by])
        print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        if args.out:
            table.to_csv(args.out, index=False)
        return 0
    scores = scoring.score_systems(data, preds, metric=metric)
    header = ["system", "solver", "C", "T", "P", "S", "A", "O"]
    lines = [header]
    for s in scores:
        row = [s.system, s.solver]
        row += [_cell(s.levels[lv].accuracy, s.levels[lv].low, s.levels[lv].high) if lv in s.levels else "-"
                for lv in (1, 2, 3, 4)]
        row += [_cell(s.aesthetics), _cell(s.overall, s.overall_low, s.overall_high)]
        lines.append(row)
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
    for r in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    if scores:
        first = scores[0].levels
        chance = ", ".join(f"{col} {first[lv].chance:.1f}" for lv, col in zip((1, 2, 3, 4), "CTPS") if lv in first)
        n = ", ".join(f"{col} {first[lv].n}" for lv, col in zip((1, 2, 3, 4), "CTPS") if lv in first)
        print(f"n questions: {n}; chance (%): {chance}; aesthetics: {metric or 'none imported (no A, no O)'}; "
              f"intervals: Wilson (levels), bootstrap over {scores[0].papers} papers (O)")
        unclear = sum(lv.unclear for s in scores for lv in s.levels.values())
        missing = sum(lv.missing for s in scores for lv in s.levels.values())
        print(f"replies without a clear letter: {unclear}; questions without a prediction: {missing} "
              f"(both count as not correct)")
    if args.out:
        scoring.table3(scores).to_csv(args.out, index=False)
    return 0


def register(subparsers) -> None:
    """Add the ``aibench`` command and its subcommands."""
    top = subparsers.add_parser("aibench", help="AIBench: generate the synthetic set, import data, score predictions")
    sub = top.add_subparsers(dest="aibench_command", required=True, metavar="COMMAND")
    g = sub.add_parser("generate", help="write the synthetic AIBench (import folder shape) into a new folder")
    g.add_argument("--out", required=True, help="a new or empty folder")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--papers", type=int, default=20)
    g.set_defaults(func=cmd_generate)
    i = sub.add_parser("import", help="check an AIBench folder and store it (nothing stored on any problem)")
    i.add_argument("folder")
    i.add_argument("--out", help="where to store it (default: annotations/aibench/<folder name>)")
    i.add_argument("--replace", action="store_true", help="replace a data set stored there (only when all is well)")
    i.set_defaults(func=cmd_import)
    s = sub.add_parser("score", help="score predictions (JSONL) on a stored data set as the paper does")
    s.add_argument("predictions", help="JSONL: paper_id, question_id, system, solver, prediction")
    s.add_argument("--data", required=True, help="a data set stored by 'aibench import'")
    s.add_argument("--metric", help="the aesthetic metric for A (default: UniPercept, or the only one)")
    s.add_argument("--by", choices=sorted(BREAKDOWNS), help="level accuracies per conference, paper or question")
    s.add_argument("--out", help="also write the table as CSV")
    s.set_defaults(func=cmd_score)
