"""``python -m structext_core aibench generate|import|score``: AIBench from the command line.

- ``generate --out DIR [--seed S] [--papers N]``: the synthetic set in the import's folder shape.
- ``import FOLDER [--out DEST] [--replace]``: check a folder of papers, images and aesthetic
  scores (images decoded in worker processes) and store it; every problem is named, nothing is
  stored on any.
- ``score PREDICTIONS.jsonl --data DEST [--metric M] [--by AXIS] [--out CSV]``: the paper's
  Table 3 with n and 95% intervals, or the level accuracies broken down by an axis.
- ``add-predictions FILE --data NAME [--label L]``: a predictions file checked and stored with a
  data set under ``$STRUCTEXT_AIBENCH_DIR``, where the Results page finds it.
- ``export-task --harness inspect --data DEST --out DIR [--systems ...]``: an Inspect AI task
  asking every question about every image, scored inside Inspect by our rule; ``score`` reads its
  log (``.eval`` or ``.json``) as predictions.
- ``draw --data DEST --base-url URL --model M --prompt closed|open [--system NAME] [--size WxH]``: a
  new system's figure of every paper from an OpenAI-compatible image endpoint, with the paper's
  prompts, checked as the import checks images and stored in the data set; resumable.
- ``run --data DEST --base-url URL --model M --out FILE``: every (image, question) asked of an
  OpenAI-compatible vision-language model endpoint as the paper asks; resumable, with retries,
  as StrucText's ``run``; its output is a predictions file ``score`` reads.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from structext_core.aibench import config as aibench_config
from structext_core.cli.flags import seconds, seconds_or_zero
from structext_core.cli.main import UsageError
from structext_core.text.words import noun

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
    papers, images, systems = len(built), len(built) * len(build.SYSTEMS), len(build.SYSTEMS)
    print(f"wrote {papers} {noun(papers, 'paper')}, {questions} {noun(questions, 'question')} and "
          f"{images} {noun(images, 'image')} ({systems} {noun(systems, 'system')}) to {args.out}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from structext_core.aibench import sandboxed_import as aibench_import
    from structext_core.aibench.dataset import ImportFailed
    dest = Path(args.out) if args.out else aibench_config.dataset_dir() / Path(args.folder).resolve().name
    try:
        stored = aibench_import.import_folder(args.folder, dest, replace=args.replace)
    except (ImportFailed, FileExistsError) as error:
        raise UsageError(str(error)) from None
    questions = sum(len(p.questions) for p in stored.papers.values())
    papers, images, systems, scores = len(stored.papers), len(stored.images), len(stored.systems), len(stored.aesthetics)
    print(f"imported {papers} {noun(papers, 'paper')}, {questions} {noun(questions, 'question')}, "
          f"{images} {noun(images, 'image')} of {systems} {noun(systems, 'system')} and "
          f"{scores} {noun(scores, 'aesthetic score')} into {dest}")
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
    inside = None
    try:
        data = ds.load_dataset(args.data)
        if Path(args.predictions).suffix.lower() != ".jsonl" and _inspect_log(args.predictions):
            from structext_core.aibench import harness as aibench_harness
            preds, inside = aibench_harness.read_inspect_log(args.predictions, data)
        else:
            preds = predictions.read_predictions(args.predictions, data)
        metric = scoring.choose_metric(data, args.metric)
    except (ValueError, OSError) as error:
        raise UsageError(str(error)) from None
    if inside is not None:
        _compare_inside(data, preds, inside)
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
              f"intervals: Wilson (levels), bootstrap over {scores[0].papers} {noun(scores[0].papers, 'paper')} (O)")
        unclear = sum(lv.unclear for s in scores for lv in s.levels.values())
        missing = sum(lv.missing for s in scores for lv in s.levels.values())
        print(f"replies without a clear letter: {unclear}; questions without a prediction: {missing} "
              f"(both count as not correct)")
    if args.out:
        scoring.table3(scores).to_csv(args.out, index=False)
    return 0


def _inspect_log(path: str) -> bool:
    """Whether ``path`` is an Inspect log (loads the harness modules: not asked of a .jsonl file)."""
    from structext_core.aibench import harness as aibench_harness
    return aibench_harness.is_inspect_log(path)


def _compare_inside(data, preds, inside: dict) -> None:
    """Say whether the scores Inspect gave each sample are ours (they should be, always)."""
    answers = {(p.id, q.id): q.answer for p in data.papers.values() for q in p.questions}
    differ = [p for p in preds if p.key in inside
              and inside[p.key] != (1.0 if p.letter == answers[(p.paper_id, p.question_id)] else 0.0)]
    print(f"Inspect log: {len(preds)} replies, {len(inside)} scored inside the harness, "
          f"{len(differ)} scored differently from ours" + (f" (e.g. {differ[0].paper_id}/{differ[0].question_id} on "
                                                          f"{differ[0].system!r})" if differ else ""))


def cmd_export_task(args: argparse.Namespace) -> int:
    from structext_core.aibench import harness as aibench_harness
    from structext_core.aibench.dataset import ImportFailed
    from structext_core.evaluation import task_files
    try:
        written = aibench_harness.export_inspect_task(args.data, args.out, args.systems, force=args.force)
    except (task_files.ExportError, ImportFailed, ValueError) as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot write {args.out}: {error.strerror or error}") from None
    samples = sum(1 for _ in written[0].open(encoding="utf-8"))
    print(f"wrote an Inspect task for {samples} (image, question) pairs to {args.out}: "
          f"{', '.join(p.name for p in written)}")
    print((written[0].parent / "README.txt").read_text(encoding="utf-8"))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import sys

    from structext_core.aibench import run as aibench_run
    from structext_core.aibench.dataset import load_dataset
    from structext_core.cli import exits as cli_exits
    from structext_core.cli.progress import ProgressLine
    from structext_core.evaluation import runner
    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if not args.base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url must start with http:// or https://, got {args.base_url!r}")
    if problem := cli_exits._out_problem(args.out):
        raise UsageError(problem)
    try:
        data = load_dataset(args.data)
        items = aibench_run.run_items(args.data, data, args.systems)
        already = runner.answered_samples(args.out, args.model, aibench_run.SETTING)
    except (ValueError, OSError) as error:
        raise UsageError(str(error)) from None
    config = runner.EndpointConfig(base_url=args.base_url, model=args.model,
                                   api_key=runner.api_key_from_env(args.api_key_env), timeout=args.timeout,
                                   temperature=args.temperature, max_tokens=args.max_tokens)
    policy = runner.RetryPolicy(max_retries=args.max_retries, backoff_base=args.backoff, backoff_max=60.0)
    todo = sum(1 for item in items if item["sample_id"] not in already)
    print(f"{len(items)} (image, question) pairs, {len(items) - todo} already answered in {args.out}, "
          f"{todo} to ask {args.model} at {args.base_url}", file=sys.stderr)
    progress = ProgressLine("answered")

    def report(summary: runner.RunSummary) -> None:
        progress.update(summary.finished, todo, f", {len(summary.failures)} failed" if summary.failures else "")

    try:
        summary = runner.run_prompts(items, config, args.out, aibench_run.SETTING, concurrency=args.concurrency,
                                     policy=policy, progress=report)
    except runner.RunInProgressError as error:
        raise UsageError(str(error)) from None
    finally:
        progress.close()
    for sample_id, message in summary.failures[:10]:
        print(f"failed: {sample_id}: {message}", file=sys.stderr)
    if summary.stopped_early:
        print(f"stopped early: {summary.stopped_early}", file=sys.stderr)
    print(f"answered {summary.answered}, skipped {summary.skipped} already answered, "
          f"failed {len(summary.failures)}; results in {args.out}")
    if summary.total - summary.skipped - summary.answered:
        print("some pairs have no answer: run the same command again to retry them", file=sys.stderr)
        return cli_exits.EXIT_INCOMPLETE
    return cli_exits.EXIT_OK


def cmd_draw(args: argparse.Namespace) -> int:
    import sys

    from structext_core.aibench import draw as aibench_draw
    from structext_core.aibench import sandboxed_import as aibench_import
    from structext_core.cli.progress import ProgressLine
    from structext_core.evaluation import runner
    if not args.base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url must start with http:// or https://, got {args.base_url!r}")
    system = args.system or args.model
    if not system.strip() or len(system) > 200 or any(not c.isprintable() for c in system):
        raise UsageError(f"--system must be a printable name of 1 to 200 characters, got {system[:60]!r}")
    try:
        size = aibench_draw.parse_size(args.size)
    except aibench_draw.DrawError as error:
        raise UsageError(f"--size: {error}") from None
    config = runner.EndpointConfig(base_url=args.base_url, model=args.model,
                                   api_key=runner.api_key_from_env(args.api_key_env), timeout=args.timeout)
    policy = runner.RetryPolicy(max_retries=args.max_retries, backoff_base=args.backoff, backoff_max=60.0)
    progress = ProgressLine("drawn")
    try:
        summary = aibench_draw.draw_system(
            args.data, config, system, args.prompt, size, aibench_import.sandboxed_image_check(), policy=policy,
            progress=lambda s, done: progress.update(done, s.total - s.skipped,
                                                     f", {s.stored} stored" if s.stored != done else ""))
    except (aibench_draw.DrawError, ValueError, OSError) as error:
        raise UsageError(str(error)) from None
    finally:
        progress.close()
    for outcome, papers in summary.outcomes.items():
        if outcome != aibench_draw.STORED:
            for paper_id in papers[:10]:
                print(f"{outcome}: {paper_id}: {summary.reasons[paper_id]}", file=sys.stderr)
    counts = ", ".join(f"{len(p)} {o}" for o, p in summary.outcomes.items()) or "nothing asked"
    print(f"{system!r}: {summary.skipped} of {summary.total} {noun(summary.total, 'paper')} drawn before; this run: {counts} "
          f"(each recorded in {Path(args.data) / aibench_draw.LOG})")
    if summary.missing:
        print(f"{summary.missing} {noun(summary.missing, 'paper')} {'has' if summary.missing == 1 else 'have'} no figure of {system!r}: run the same command again to ask for "
              "them again", file=sys.stderr)
        return 1  # as run's: some are still missing
    return 0


def cmd_add_predictions(args: argparse.Namespace) -> int:
    from structext_core.aibench import store as aibench_store
    from structext_core.aibench.dataset import ImportFailed
    from structext_core.aibench.limits import MAX_PREDICTIONS_FILE_BYTES
    label = args.label or Path(args.file).stem
    try:
        if Path(args.file).stat().st_size > MAX_PREDICTIONS_FILE_BYTES:
            raise UsageError(f"{args.file} is larger than {MAX_PREDICTIONS_FILE_BYTES:,} bytes")
        text = Path(args.file).read_text("utf-8", errors="replace")
        count = aibench_store.add_predictions(args.data, text, label)
    except (ImportFailed, ValueError, OSError) as error:
        raise UsageError(str(error)) from None
    print(f"stored {count} predictions as {label!r} with the data set {args.data!r}")
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
    i.add_argument("--out", help="where to store it (default: $STRUCTEXT_AIBENCH_DIR or annotations/aibench, /<folder name>)")
    i.add_argument("--replace", action="store_true", help="replace a data set stored there (only when all is well)")
    i.set_defaults(func=cmd_import)
    s = sub.add_parser("score", help="score predictions (JSONL) on a stored data set as the paper does")
    s.add_argument("predictions", help="JSONL: paper_id, question_id, system, solver, prediction; or the "
                                       "Inspect log (.eval, .json) of an exported AIBench task")
    s.add_argument("--data", required=True, help="a data set stored by 'aibench import'")
    s.add_argument("--metric", help="the aesthetic metric for A (default: UniPercept, or the only one)")
    s.add_argument("--by", choices=sorted(BREAKDOWNS), help="level accuracies per conference, paper or question")
    s.add_argument("--out", help="also write the table as CSV")
    s.set_defaults(func=cmd_score)
    e = sub.add_parser("export-task", help="write an Inspect AI task asking every question about every image "
                                           "of a stored data set, scored by our rule inside Inspect")
    e.add_argument("--harness", required=True, choices=["inspect"])
    e.add_argument("--data", required=True, help="a data set stored by 'aibench import'")
    e.add_argument("--out", required=True, help="folder to write the task into (new or empty)")
    e.add_argument("--force", action="store_true",
                   help="write into a folder that holds other files (only files an export wrote are replaced)")
    e.add_argument("--systems", nargs="+", help="only these systems' images (default: all)")
    e.set_defaults(func=cmd_export_task)
    a = sub.add_parser("add-predictions", help="check a predictions file and store it with a stored data set "
                                               "(the Results page shows what is stored)")
    a.add_argument("file", help="JSONL: paper_id, question_id, system, solver, prediction (or a run's output)")
    a.add_argument("--data", required=True, help="the name of a data set under $STRUCTEXT_AIBENCH_DIR")
    a.add_argument("--label", help="the stored file's name (default: the file's name)")
    a.set_defaults(func=cmd_add_predictions)
    d = sub.add_parser("draw", help="a new system's figure of every paper from an OpenAI-compatible image endpoint, "
                                    "with the paper's prompts (Fig. A2), stored in the data set")
    d.add_argument("--data", required=True, help="a data set stored by 'aibench import'")
    d.add_argument("--base-url", required=True, help="e.g. http://localhost:8000/v1 (POST .../images/generations)")
    d.add_argument("--model", required=True, help="the model name sent to the endpoint")
    d.add_argument("--prompt", required=True, choices=["closed", "open"],
                   help="the paper's short prompt for closed-source models, or its constrained one for open-source")
    d.add_argument("--system", help="the system's name in the data set (default: the model name)")
    d.add_argument("--size", default="1024x1024", help="WIDTHxHEIGHT asked for, each side at least 1024 "
                                                       "(default %(default)s)")
    d.add_argument("--max-retries", type=int, default=5, help="retries per figure (default %(default)s)")
    d.add_argument("--backoff", type=seconds_or_zero, default=1.0, help="first retry delay in seconds, doubled each time")
    d.add_argument("--timeout", type=seconds, default=600.0,
                   help="the whole request's deadline for one figure, in seconds (connecting, sending, reading the "
                        "whole reply), not a wait between two bytes (default %(default)s)")
    d.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the API key (default %(default)s)")
    d.set_defaults(func=cmd_draw)
    r = sub.add_parser("run", help="ask an OpenAI-compatible vision-language model every question about every image")
    r.add_argument("--data", required=True, help="a data set stored by 'aibench import'")
    r.add_argument("--base-url", required=True, help="e.g. http://localhost:8000/v1 (vLLM)")
    r.add_argument("--model", required=True, help="the model name sent to the endpoint, recorded as the solver")
    r.add_argument("--out", required=True, help="predictions .jsonl, appended to (rerun to resume)")
    r.add_argument("--systems", nargs="+", help="only these systems' images (default: all)")
    r.add_argument("--concurrency", type=int, default=4, help="requests in flight at most (default %(default)s)")
    r.add_argument("--max-retries", type=int, default=5, help="retries per request (default %(default)s)")
    r.add_argument("--backoff", type=seconds_or_zero, default=1.0, help="first retry delay in seconds, doubled each time")
    r.add_argument("--timeout", type=seconds, default=300.0,
                   help="the whole request's deadline for one answer, in seconds (connecting, sending, reading the "
                        "whole reply), not a wait between two bytes (default %(default)s)")
    r.add_argument("--temperature", type=float, default=0.0)
    r.add_argument("--max-tokens", type=int, help="cap on the answer length in tokens")
    r.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the API key (default %(default)s)")
    r.set_defaults(func=cmd_run)
