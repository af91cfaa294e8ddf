"""``python -m structext_core``: generate, audit, stats (and score, prompts, run)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
from collections import defaultdict
from pathlib import Path

from . import audit as audit_mod
from . import official, samples, suites
from .progress import ProgressLine
from .tree import node_count

PARALLEL_MIN_NODES = 100_000  # Test: about 17,000 nodes in all; Test-Hard: about 280,000


class UsageError(Exception):
    """A mistake in the command line or its inputs, reported without a traceback."""


def _int_list(text: str) -> tuple[int, ...]:
    """``1,2,3`` or ``1-3`` -> (1, 2, 3)."""
    out: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = part.split("-", 1)
                out.extend(range(int(lo), int(hi) + 1))
            elif part:
                out.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1,2,3 or 1-3, got {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError("expected at least one number")
    return tuple(out)


def _cell_worker(job: tuple) -> list[dict]:
    config, seed, cell = job
    task_id, depth, width = cell
    return suites.generate_cell(task_id, depth, width, config.per_cell, seed=seed, suite=config.name,
                                col=config.col, csv_rows=config.csv_rows)


def _cell_lines(job: tuple) -> list[str]:
    """A cell's samples as JSONL lines, encoded in the worker (half the cost of a big suite)."""
    return [samples.to_jsonl_line(row) for row in _cell_worker(job)]


def generate_rows(config: suites.SuiteConfig, seed: int, jobs: int, progress=None, encode: bool = False) -> list:
    """Generate a suite, in ``jobs`` processes when worthwhile; the order never depends on ``jobs``.

    With ``encode`` the result is the JSONL lines instead of the sample dicts."""
    config.validate()
    cells = config.cells()
    rows: list[dict] = []
    jobs_list = [(config, seed, cell) for cell in cells]
    # Worker processes cost about half a second to start: worth it only for big trees (Test-Hard).
    work = sum(node_count(d, w) for _, d, w in cells) * config.per_cell
    if jobs > 1 and work >= PARALLEL_MIN_NODES:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs) as pool:
            for chunk in pool.imap(_cell_lines if encode else _cell_worker, jobs_list, chunksize=2):
                rows.extend(chunk)
                if progress:
                    progress(len(rows), config.size)
    else:
        for job in jobs_list:
            rows.extend(_cell_lines(job) if encode else _cell_worker(job))
            if progress:
                progress(len(rows), config.size)
    return rows


def cmd_generate(args: argparse.Namespace) -> int:
    if args.suite == "custom":
        config = suites.SuiteConfig("custom", depths=args.depth or (1,), widths=args.width or (1,),
                                    per_cell=args.per_task or 8, col=args.col or 6,
                                    task_ids=args.tasks or tuple(range(1, 30)), csv_rows=args.csv_rows)
    else:
        given = [name for name in ("depth", "width", "per_task", "col", "tasks", "csv_rows")
                 if getattr(args, name) is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} only applies to --suite custom; "
                             f"{args.suite} has a fixed composition")
        config = suites.SUITES[args.suite]
    try:
        config.validate()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    jobs = args.jobs if args.jobs else min(2, os.cpu_count() or 1)
    progress = ProgressLine(f"generating {config.name}", config.size)
    if args.official_dir:
        rows = generate_rows(config, args.seed, jobs, progress)
        n = samples.write_jsonl(args.out, rows)
    else:
        n = samples.write_jsonl_lines(args.out, generate_rows(config, args.seed, jobs, progress, encode=True))
    print(f"wrote {n:,} samples to {args.out}")
    if args.official_dir:
        official.write_layout(rows, args.official_dir)
        print(f"wrote {n:,} files in the authors' layout under {args.official_dir}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    line = ProgressLine("auditing")
    summary = audit_mod.audit(args.paths, progress=lambda n: line(n))
    problems = [v for v in summary.verdicts if v.status != audit_mod.AGREE]
    for v in problems[:20]:
        print(f"{v.status}: {v.source}: {v.reason}")
    if len(problems) > 20:
        print(f"... and {len(problems) - 20} more (see --report)")
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        with open(args.report, "w", encoding="utf-8") as fh:
            for v in summary.verdicts:
                fh.write(json.dumps(v.as_dict(), ensure_ascii=False) + "\n")
    print(summary.line())
    return 0 if summary.ok else 1


def stats_table(rows: list[dict]) -> str:
    """Counts and mean reference / answer length per format and per (depth, width)."""
    def block(title: str, key) -> list[str]:
        groups: dict = defaultdict(list)
        for r in rows:
            groups[key(r)].append(r)
        lines = [f"{title:<14} {'samples':>8} {'mean ref chars':>15} {'mean answer chars':>18}"]
        for k in sorted(groups):
            g = groups[k]
            ref = sum(len(r["reference"]) for r in g) / len(g)
            ans = sum(len(r["answer"]) for r in g) / len(g)
            label = k if isinstance(k, str) else f"({k[0]}, {k[1]})"
            lines.append(f"{label:<14} {len(g):>8,} {ref:>15,.0f} {ans:>18,.0f}")
        return lines

    out = block("format", lambda r: r["language"]) + [""] + block("(depth, width)", lambda r: (r["depth"], r["width"]))
    ref = sum(len(r["reference"]) for r in rows) / len(rows)
    out += ["", f"{len(rows):,} samples, mean reference length {ref:,.0f} characters"]
    return "\n".join(out)


def cmd_stats(args: argparse.Namespace) -> int:
    try:
        rows = samples.read_jsonl(args.file)
    except samples.SampleError as exc:
        raise UsageError(str(exc)) from None
    if not rows:
        raise UsageError(f"{args.file}: holds no samples")
    print(stats_table(rows))
    return 0


CORE_COMMANDS = ("generate", "audit", "stats")


def build_parser(with_results: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m structext_core",
                                     description="Generate, audit and score StrucText-Eval samples.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser("generate", help="generate a suite as JSONL (and optionally the authors' layout)")
    g.add_argument("--suite", choices=["test", "test-hard", "custom"], required=True)
    g.add_argument("--depth", type=_int_list, help="custom: depths, e.g. 1,2,3 or 1-3")
    g.add_argument("--width", type=_int_list, help="custom: widths, e.g. 1,2")
    g.add_argument("--col", type=int, help="custom: fields / paragraph length factor (default 6)")
    g.add_argument("--per-task", type=int, help="custom: samples per task and grid cell (default 8)")
    g.add_argument("--tasks", type=_int_list, help="custom: task ids (default 1-29)")
    g.add_argument("--csv-rows", type=int, help="custom: rows per CSV table (default: depth, as the original)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True, help="output .jsonl file")
    g.add_argument("--official-dir", help="also write the authors' folder layout here")
    g.add_argument("--jobs", type=int, default=0, help="worker processes (default: up to 2)")
    g.set_defaults(func=cmd_generate)

    a = sub.add_parser("audit", help="solve samples from their text and compare with their answers")
    a.add_argument("paths", nargs="+", help=".jsonl files, released .json files or folders")
    a.add_argument("--report", help="write one JSON line per sample with the reason for any disagreement")
    a.set_defaults(func=cmd_audit)

    s = sub.add_parser("stats", help="counts and mean lengths per format and grid cell")
    s.add_argument("file")
    s.set_defaults(func=cmd_stats)

    if with_results:  # score, prompts, run: they need pandas, so load them only when asked for
        from . import cli_results
        cli_results.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(with_results=not (argv and argv[0] in CORE_COMMANDS))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
