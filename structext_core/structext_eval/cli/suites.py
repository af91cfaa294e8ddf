"""``python -m structext_core generate|audit|stats``: StrucText-Eval's suites from the command line.

- ``generate --suite test|test-hard|custom ... --out FILE [--official-dir DIR]``: a suite as JSONL,
  streamed a piece at a time (and the authors' folder layout).
- ``audit PATHS... [--report FILE]``: every sample solved from its own text and compared with its answer.
- ``stats FILE``: counts and mean lengths per format and grid cell.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
from collections import defaultdict, deque
from pathlib import Path
from typing import Callable, Iterator

from structext_core.cli.main import UsageError
from structext_core.cli.progress import ProgressLine
from structext_core.structext_eval import samples, suites
from structext_core.structext_eval.tasks import TASKS
from structext_core.text import outputs
from structext_core.text.words import plural

PARALLEL_MIN_NODES = 100_000  # Test: about 17,000 nodes in all; Test-Hard: about 280,000
CHUNK_CHARS = 4_000_000  # a worker hands back at most about this many characters at a time
CHUNK_SAMPLES = 64
#: Pieces handed to the workers and not yet written: at most this many, and at most about this many
#: characters. Pieces differ a hundredfold in cost (a Test-Hard cell of depth 1 against one of depth 3),
#: so the workers need many queued to stay busy; the characters keep memory bounded for big pieces.
IN_FLIGHT_PIECES = 64
IN_FLIGHT_CHARS = 16_000_000
MAX_JOBS = 64
ALLOW_LARGE_HINT = "add --allow-large to go beyond it deliberately"


def _int_list(text: str) -> tuple[int, ...]:
    """``1,2,3`` or ``1-3`` -> (1, 2, 3); a range is checked before it is built."""
    bounds: list[tuple[int, int]] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = part.split("-", 1)
                bounds.append((int(lo), int(hi)))
            elif part:
                bounds.append((int(part), int(part)))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1,2,3 or 1-3, got {text[:100]!r}") from None
    if not bounds:
        raise argparse.ArgumentTypeError("expected at least one number")
    count = 0
    for lo, hi in bounds:
        if hi < lo:
            raise argparse.ArgumentTypeError(f"the range {lo}-{hi} runs backwards; write it as {hi}-{lo}")
        count += hi - lo + 1
        if count > suites.MAX_LIST_VALUES:
            raise argparse.ArgumentTypeError(
                f"{text[:100]!r} holds {count:,} values or more; a list takes at most {suites.MAX_LIST_VALUES:,} "
                "(even with --allow-large)")
    values = tuple(n for lo, hi in bounds for n in range(lo, hi + 1))
    if len(set(values)) < len(values):  # a cell twice would give two samples the same id
        twice = next(n for i, n in enumerate(values) if n in values[:i])
        raise argparse.ArgumentTypeError(f"{text[:100]!r} names {twice} more than once")
    return values


def _chunk_lines(job: tuple) -> list[str]:
    """A piece of a cell as JSONL lines, encoded in the worker (half the cost of a big suite)."""
    return [samples.to_jsonl_line(row) for row in _chunk_rows(job)]


def _chunk_rows(job: tuple) -> list[dict]:
    config, seed, (task_id, depth, width, start, count) = job
    return suites.generate_cell(task_id, depth, width, count, seed=seed, suite=config.name, col=config.col,
                                start_index=start, csv_rows=config.csv_rows)


def _chunks(config: suites.SuiteConfig) -> Iterator[tuple[int, int, int, int, int]]:
    """(task, depth, width, first index, count): the suite in order, in pieces small enough to hold."""
    for piece, _chars in _sized_chunks(config):
        yield piece


def _sized_chunks(config: suites.SuiteConfig) -> Iterator[tuple[tuple[int, int, int, int, int], int]]:
    """:func:`_chunks`' pieces, each with its estimated size in characters."""
    for task_id, depth, width in config.cells():
        chars = suites.estimate_sample_chars(TASKS[task_id].language, depth, width, config.col, config.csv_rows)
        size = max(1, min(CHUNK_SAMPLES, CHUNK_CHARS // chars))
        for start in range(0, config.per_cell, size):
            count = min(size, config.per_cell - start)
            yield (task_id, depth, width, start, count), count * chars


def stream_chunks(config: suites.SuiteConfig, seed: int, jobs: int, encode: bool = False,
                  progress: Callable[[int, int], None] | None = None) -> Iterator[list]:
    """The suite's samples (or, with ``encode``, their JSONL lines) in order, a piece at a time.

    With ``jobs`` > 1 and a big enough suite, ``jobs`` worker processes build the pieces and this one
    only writes them. It builds none itself: while it builds, the pool's threads that hand pieces out
    and results back wait for the interpreter lock, and the workers wait on them (Test-Hard: 2.9 s
    with this process building every second piece, 1.8 s without; issue 46). Pieces not yet written
    are at most :data:`IN_FLIGHT_PIECES` and about :data:`IN_FLIGHT_CHARS` characters, so memory
    holds a bounded amount whatever the suite's size. The order, and so the bytes written, never
    depend on ``jobs``. ``config`` is validated by the caller."""
    build = _chunk_lines if encode else _chunk_rows
    work = config.per_cell * len(config.task_ids) * sum(
        suites.capped_node_count(d, w, PARALLEL_MIN_NODES) for d in config.depths for w in config.widths)
    done = 0
    if jobs > 1 and work >= PARALLEL_MIN_NODES:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs) as pool:
            pending: deque = deque()  # (a worker's result, its estimated characters), in order
            in_flight = 0
            for piece, chars in _sized_chunks(config):
                while pending and (len(pending) >= IN_FLIGHT_PIECES or in_flight + chars > IN_FLIGHT_CHARS):
                    result, written = pending.popleft()
                    in_flight -= written
                    chunk = result.get()
                    done += len(chunk)
                    _report(progress, done, config.size)
                    yield chunk
                pending.append((pool.apply_async(build, ((config, seed, piece),)), chars))
                in_flight += chars
            while pending:
                chunk = pending.popleft()[0].get()
                done += len(chunk)
                _report(progress, done, config.size)
                yield chunk
    else:
        for piece in _chunks(config):
            chunk = build((config, seed, piece))
            done += len(chunk)
            _report(progress, done, config.size)
            yield chunk


def _report(progress: Callable[[int, int], None] | None, done: int, total: int) -> None:
    if progress:
        progress(done, total)


def default_jobs(loadavg: str = "/proc/loadavg") -> int:
    """The processes ``generate`` builds with when --jobs is not given: two when the machine has a
    core nobody else is running on at this moment (``loadavg``'s count of runnable tasks, this one
    included), else one. On a busy machine a second process only competes for the same cores and
    waits on the first: Test-Hard took 1.23 times as long with two as with one there (issue 46)."""
    cores = os.cpu_count() or 1
    if cores < 2:
        return 1
    try:
        with open(loadavg, encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 2
    return 2 if running < cores else 1


def _generate_config(args: argparse.Namespace) -> suites.SuiteConfig:
    """The suite the command line asks for, validated (UsageError otherwise)."""
    if args.suite == "custom":
        config = suites.SuiteConfig(
            "custom", depths=args.depth or (1,), widths=args.width or (1,),
            per_cell=8 if args.per_task is None else args.per_task, col=6 if args.col is None else args.col,
            task_ids=args.tasks or tuple(range(1, 30)), csv_rows=args.csv_rows, allow_large=args.allow_large)
    else:
        given = [name for name in ("depth", "width", "per_task", "col", "tasks", "csv_rows")
                 if getattr(args, name) is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} only applies to --suite custom; "
                             f"{args.suite} has a fixed composition")
        config = suites.SUITES[args.suite]
    try:
        config.validate()
    except suites.SizeLimitError as exc:
        raise UsageError(f"{exc} ({ALLOW_LARGE_HINT})") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return config


def _check_generate_outputs(args: argparse.Namespace, config: suites.SuiteConfig) -> None:
    """--out and --official-dir can be written and the disk can hold the estimate: before any work."""
    try:
        outputs.check_output_file(args.out, "--out")
        if args.official_dir:
            outputs.check_export_folder(args.official_dir)
            if Path(args.official_dir).resolve() in Path(args.out).resolve().parents:
                raise UsageError(f"--out {args.out} lies inside --official-dir {args.official_dir}: "
                                 "keep the JSONL file outside the layout's folder")
    except outputs.OutputError as exc:
        raise UsageError(str(exc)) from None
    if not 0 <= args.jobs <= MAX_JOBS:
        raise UsageError(f"--jobs must be between 0 (automatic) and {MAX_JOBS}, got {args.jobs}")
    needed = config.estimated_chars() * (2 if args.official_dir else 1)
    folder = Path(args.out).resolve().parent
    while not folder.exists():
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise UsageError(f"the suite needs about {needed / 1e9:,.1f} GB of disk space; {free / 1e9:,.1f} GB "
                         f"are free in {folder}")


def cmd_generate(args: argparse.Namespace) -> int:
    """``generate``: validate, then stream the suite to --out (and --official-dir)."""
    config = _generate_config(args)
    _check_generate_outputs(args, config)
    jobs = args.jobs if args.jobs else default_jobs()
    progress = ProgressLine(f"generating {config.name}", config.size)
    written = n_layout = 0
    try:
        with samples.jsonl_writer(args.out) as fh:
            if args.official_dir:
                from structext_core.structext_eval import official  # the authors' layout: only when asked for

                def rows_also_written() -> Iterator[dict]:
                    nonlocal written
                    for chunk in stream_chunks(config, args.seed, jobs, progress=progress):
                        for row in chunk:
                            fh.write(samples.to_jsonl_line(row))
                            yield row
                        written += len(chunk)

                n_layout = official.write_layout(rows_also_written(), args.official_dir)
            else:
                for chunk in stream_chunks(config, args.seed, jobs, encode=True, progress=progress):
                    fh.writelines(chunk)
                    written += len(chunk)
    except outputs.OutputError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {exc.filename or args.out}: {exc.strerror or exc}") from None
    print(f"wrote {plural(written, 'sample')} to {args.out}")
    if args.official_dir:
        print(f"wrote {n_layout:,} files in the authors' layout under {args.official_dir}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from structext_core.structext_eval import audit as audit_mod  # the solvers: not for `generate`

    if args.report:
        try:
            outputs.check_output_file(args.report, "--report")
        except outputs.OutputError as exc:
            raise UsageError(str(exc)) from None
    line = ProgressLine("auditing")
    try:
        summary = audit_mod.audit(args.paths, progress=line.update)
    finally:
        line.close()  # no total: the line is never finished on its own
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
    out += ["", f"{plural(len(rows), 'sample')}, mean reference length {ref:,.0f} characters"]
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


def register(sub) -> None:
    """Add ``generate``, ``audit`` and ``stats`` to the command's subparsers."""
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
    g.add_argument("--jobs", type=int, default=0, help="processes that build samples: 1, this one; more, that many workers while this one writes (default: 2 when a core is idle, else 1)")
    g.add_argument("--allow-large", action="store_true",
                   help="custom: lift the default size limits (nodes per document, --col, --per-task, "
                        "--csv-rows, samples in all, estimated size; see docs/reference/limits.md)")
    g.set_defaults(func=cmd_generate)

    a = sub.add_parser("audit", help="solve samples from their text and compare with their answers")
    a.add_argument("paths", nargs="+", help=".jsonl files, released .json files or folders")
    a.add_argument("--report", help="write one JSON line per sample with the reason for any disagreement")
    a.set_defaults(func=cmd_audit)

    s = sub.add_parser("stats", help="counts and mean lengths per format and grid cell")
    s.add_argument("file")
    s.set_defaults(func=cmd_stats)
