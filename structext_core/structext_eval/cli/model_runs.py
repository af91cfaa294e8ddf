"""StrucText-Eval's command-line subcommands ``score``, ``prompts`` and ``run`` (registered by its
member module, :mod:`structext_core.structext_eval.cli`).

Each command is a thin wrapper: read the inputs, call one library function, turn a
user's mistake into a message naming the file and line (exit status 2, nothing written;
``run`` exits 1 when some prompts are still unanswered, 130 when interrupted).
Progress goes to stderr, results to stdout or the ``--out`` file.
"""

from __future__ import annotations

import argparse
import math
import sys

from structext_core.cli.exits import EXIT_ERROR, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, _out_problem
from structext_core.cli.flags import seconds, seconds_or_zero
from structext_core.cli.progress import ProgressLine
from structext_core.evaluation import aggregate, runner, scoring
from structext_core.structext_eval import prompts
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval.samples import decode_line, read_jsonl, write_jsonl
from structext_core.studio import durations
from structext_core.text import limits
from structext_core.text.words import noun

DEFAULT_MAX_TOKENS = 4096
"""``run``'s cap on an answer, in tokens (export-task's lm-eval task uses the same): about 16,000
characters, more than every Test answer (869 at most) and all but 34 of Test-Hard's 2,088 (up to
156,064); without a cap a small model decoding greedily runs on to the context limit."""


def _tokens(max_tokens: int) -> str:
    return f"{max_tokens:,}" if max_tokens else "the server's default"


def _duration(seconds: float) -> str:
    """A time left, to the two largest units: ``45 s``, ``3 min 20 s``, ``1 h 5 min``."""
    return durations.words(seconds, units=2)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _load_samples(path: str) -> list[dict]:
    rows = read_jsonl(path)
    if not rows:
        raise ValueError(f"{path}: no samples in the file")
    return rows


# ------------------------------------------------------------------ score

def format_summary(table, value: str = "score", value_label: str | None = None) -> str:
    """The summary of :func:`structext_core.evaluation.aggregate.summarise` as a plain-text table
    (percentages); every column is headed by the scored rows' column it means, ``value`` by
    ``value_label`` when given."""
    known = {"n", value, "ci_low", "ci_high", *aggregate.SUMMARY_MEANS, *aggregate.PAPER_SUMMARY_MEANS}
    by = [c for c in table.columns if c not in known]
    extra = [c for c in table.columns if c in known and c not in ("n", value, "ci_low", "ci_high")]
    headers = [*by, "n", f"{value_label or value} %", "95% CI"]
    headers += [f"{c} %" for c in extra]
    lines = []
    for row in table.itertuples(index=False):
        record = row._asdict()
        cells = [str(record[c]) for c in by] + [str(record["n"]), _percent(record[value]),
                                                 f"[{_percent(record['ci_low'])}, {_percent(record['ci_high'])}]"]
        cells += [_percent(record[c]) for c in extra]
        lines.append(cells)
    widths = [max(len(h), *(len(cells[i]) for cells in lines)) if lines else len(h) for i, h in enumerate(headers)]
    numeric_from = len(by)

    def render(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i >= numeric_from else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([render(headers), render(["-" * w for w in widths])] + [render(c) for c in lines])


def _percent(value) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


METRIC_DESCRIPTIONS = {
    "strict": "metric strict: rouge-score's ROUGE-L on the text after the last '### Answer:' line",
    "paper": "metric paper: the authors' ROUGE-L (pltrdy rouge 1.0.1) on the whole response, as in the paper",
}


def _left_out_note(scored: list[dict]) -> str | None:
    """``--as-authors``: how many results the authors' script leaves out of every mean, and why."""
    reasons: dict[str, int] = {}
    for row in scored:
        if row.get(results.LEFT_OUT_FIELD):
            reasons[row[results.LEFT_OUT_FIELD]] = reasons.get(row[results.LEFT_OUT_FIELD], 0) + 1
    if not reasons:
        return ("as the authors' script: every result counts (no line raised in their library; "
                "a <JUMP> after a response kept the response)")
    why = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
    return (f"as the authors' script: {sum(reasons.values())} of {len(scored)} results left out of every mean "
            f"({why}: their library raises on every line of these, and their loop skips such lines); "
            f"they stay in --out with `{results.LEFT_OUT_FIELD}` saying why")


def cmd_score(args: argparse.Namespace) -> int:
    """``score``: import, validate, score and summarise a results file."""
    if not 0.0 <= args.threshold <= 1.0:
        return _error(f"--threshold must lie in [0, 1], got {args.threshold}")
    if args.as_authors and args.metric != "paper":
        return _error("--as-authors reproduces the authors' script, which scores with their metric: "
                      "add --metric paper")
    if args.as_authors and args.duplicates == "refuse":
        return _error("--as-authors follows the authors' rule for repeated lines (a later response wins, a <JUMP> "
                      "keeps what is there); leave out --duplicates refuse")
    duplicates = args.duplicates or ("last" if args.as_authors else "refuse")
    if problem := _out_problem(args.out):
        return _error(problem)
    by = [c.strip() for c in args.by.split(",") if c.strip()]
    try:
        samples = _load_samples(args.samples)
        index = results.SampleIndex(samples)
        rows = results.read_results(args.results, index, prompt=args.prompt, duplicates=duplicates,
                                    as_authors=args.as_authors)
    except results.ResultsImportError as exc:
        for problem in exc.problems[:20]:
            print(f"error: {problem.describe(exc.source)}", file=sys.stderr)
        if len(exc.problems) > 20:
            print(f"error: ... and {len(exc.problems) - 20} more problem(s)", file=sys.stderr)
        print(f"nothing imported from {exc.source}", file=sys.stderr)
        return EXIT_ERROR
    except (ValueError, OSError) as exc:  # SampleError is a ValueError
        return _error(str(exc))
    failed = sum(1 for row in rows if row.get("failed"))
    if failed:
        print(f"note: {failed} of {len(rows)} responses are failed calls (a <JUMP> or a harness error) and score 0; "
              "the `failed` column marks them", file=sys.stderr)
    progress = ProgressLine("scoring")
    try:
        scored = results.score_results(rows, index, threshold=args.threshold, with_bleu=not args.no_bleu,
                                       progress=progress.update, metric=args.metric)
    finally:
        progress.close()
    notes = []
    if not args.keep_epochs:  # harness logs: one row per sample, its epochs averaged
        from structext_core.evaluation.harness import average_epochs

        responses, scored = len(scored), average_epochs(scored)
        if len(scored) < responses:
            notes.append(f"averaged {responses} responses over their epochs: one row per sample "
                         "(--keep-epochs keeps them apart)")
    counted = [row for row in scored if not row.get(results.LEFT_OUT_FIELD)]
    if args.as_authors:
        notes.append(_left_out_note(scored))
    paper = args.metric == "paper"
    table = None
    if counted:
        try:
            table = aggregate.summarise(results.scored_frame(counted), by=by, n_boot=args.n_boot, seed=args.seed,
                                        means=aggregate.PAPER_SUMMARY_MEANS if paper else aggregate.SUMMARY_MEANS,
                                        aliases=results.COLUMN_ALIASES)
        except KeyError as exc:
            return _error(f"--by: {exc.args[0]}")
    # --out first: whatever happens to stdout (a closed pipe), the scored rows are complete
    if args.out:
        try:
            write_jsonl(args.out, scored)  # all or nothing: a temporary file, renamed
        except OSError as exc:
            return _error(f"cannot write {args.out}: {exc.strerror or exc}")
    print(f"scored {len(scored)} {noun(len(scored), 'response')} from {args.results} against {len(samples)} {noun(len(samples), 'sample')} "
          f"(threshold {args.threshold:g}; {METRIC_DESCRIPTIONS[args.metric]})")
    for note in notes:
        print(note)
    if table is not None:
        print(format_summary(table, value_label="score_paper" if paper else None))
    else:
        print("no result left to summarise")
    if args.out:
        print(f"wrote {len(scored)} {noun(len(scored), 'scored row')} to {args.out}")
    return EXIT_OK


# ------------------------------------------------------------------ prompts

def cmd_prompts(args: argparse.Namespace) -> int:
    """``prompts``: write one prompt record per sample."""
    if problem := _out_problem(args.out):
        return _error(problem)
    try:
        prompts.check_setting(args.setting, args.shots)
        samples = _load_samples(args.samples)
    except (ValueError, OSError) as exc:
        return _error(str(exc))
    progress = ProgressLine("prompts")
    try:
        records = prompts.build_prompts(samples, args.setting, args.shots, demo_seed=args.demo_seed,
                                        progress=progress.update)
    except prompts.PromptError as exc:
        return _error(str(exc))
    except KeyError as exc:
        return _error(f"{args.samples}: a sample lacks field {exc.args[0]!r}")
    finally:
        progress.close()
    try:
        write_jsonl(args.out, records)
    except OSError as exc:
        return _error(f"cannot write {args.out}: {exc.strerror or exc}")
    print(f"wrote {len(records)} {args.setting} prompts to {args.out}")
    return EXIT_OK


# ------------------------------------------------------------------ run

def _read_prompt_records(path: str) -> list[dict]:
    """A prompts file (``prompts --out``), each line held to the limits a sample file is held to
    (its length, its JSON nesting); ValueError naming the file and line otherwise."""
    records = []
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot open ({exc.strerror})") from None
    with handle:
        try:
            for number, line in limits.read_record_lines(handle):
                record = decode_line(line, f"{path}, line {number}")
                if record is None:
                    continue
                if not isinstance(record, dict) or not isinstance(record.get("sample_id"), str) \
                        or not isinstance(record.get("prompt"), str):
                    raise ValueError(f"{path}, line {number}: expected an object with string fields sample_id "
                                     "and prompt")
                records.append(record)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    if not records:
        raise ValueError(f"{path}: no prompts in the file")
    return records


def _run_items(args: argparse.Namespace) -> tuple[str, list[dict]]:
    if args.prompts:
        records = _read_prompt_records(args.prompts)
        settings = {r.get("setting") for r in records}
        setting = args.setting or (settings.pop() if len(settings) == 1 else None)
        if not setting:
            raise ValueError(f"{args.prompts}: the prompts mix settings {sorted(map(str, settings))}; "
                             "give --setting to label the results")
        return setting, records
    if not args.setting:
        raise ValueError("give --setting (or --prompts FILE with ready prompts)")
    prompts.check_setting(args.setting, args.shots)
    samples = _load_samples(args.samples)
    return args.setting, prompts.build_prompts(samples, args.setting, args.shots, demo_seed=args.demo_seed)


def cmd_run(args: argparse.Namespace) -> int:
    """``run``: ask an OpenAI-compatible endpoint for every prompt not yet answered."""
    if bool(args.samples) == bool(args.prompts):
        return _error("give exactly one of --samples FILE and --prompts FILE")
    if args.concurrency < 1:
        return _error("--concurrency must be at least 1")
    if not args.base_url.startswith(("http://", "https://")):
        return _error(f"--base-url must start with http:// or https://, got {args.base_url!r}")
    if problem := _out_problem(args.out):
        return _error(problem)
    if args.max_tokens < 0:
        return _error(f"--max-tokens must be 0 (no cap) or more, got {args.max_tokens}")
    try:
        setting, items = _run_items(args)
        runner.answered_samples(args.out, args.model, setting)  # a damaged file is refused before any request
    except (ValueError, OSError) as exc:
        return _error(str(exc))
    config = runner.EndpointConfig(
        base_url=args.base_url, model=args.model, api_key=runner.api_key_from_env(args.api_key_env),
        timeout=args.timeout, temperature=args.temperature, max_tokens=args.max_tokens or None,
    )
    policy = runner.RetryPolicy(max_retries=args.max_retries, backoff_base=args.backoff, backoff_max=60.0)
    # a run's progress is worth seeing often: answers are slow and each is already in the file
    progress = ProgressLine("answered", min_interval=None if sys.stderr.isatty() else 1.0)
    state = {"todo": 0, "summary": None}

    def start(summary: runner.RunSummary) -> None:  # the file is locked and read: nothing printed before
        state["todo"], state["summary"] = summary.total - summary.skipped, summary
        print(f"{summary.total} prompts ({setting}), {summary.skipped} already answered in {args.out}, "
              f"{state['todo']} to ask {args.model} at {args.base_url} (max {_tokens(args.max_tokens)} tokens "
              "an answer)", file=sys.stderr)

    def report(summary: runner.RunSummary) -> None:
        failed = f", {len(summary.failures)} failed" if summary.failures else ""
        progress.update(summary.finished, state["todo"],
                        f"{failed}; {summary.skipped + summary.answered} of {summary.total} answered in the file")

    try:
        summary = runner.run_prompts(items, config, args.out, setting, concurrency=args.concurrency,
                                     policy=policy, progress=report, on_start=start)
    except runner.RunInProgressError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        progress.close()
        done = state["summary"]
        counts = (f" after {done.answered} new answer(s) ({done.skipped + done.answered} of {done.total} answered "
                  f"in all, {done.total - done.skipped - done.answered} still to ask)" if done is not None else "")
        print(f"interrupted{counts}; the answers received so far are in {args.out}; run the same command to resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    for sample_id, message in summary.failures[:10]:
        print(f"failed: {sample_id}: {message}", file=sys.stderr)
    if len(summary.failures) > 10:
        print(f"failed: ... and {len(summary.failures) - 10} more", file=sys.stderr)
    if summary.stopped_early:
        print(f"stopped early: {summary.stopped_early}", file=sys.stderr)
    print(f"answered {summary.answered}, skipped {summary.skipped} already answered, "
          f"failed {len(summary.failures)}; results in {args.out}")
    unanswered = summary.total - summary.skipped - summary.answered
    if unanswered:
        print(f"{unanswered} prompt(s) without an answer: run the same command again to retry them", file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK


# ------------------------------------------------------------------ registration

def register(subparsers) -> None:
    """Add the ``score``, ``prompts`` and ``run`` subcommands to an argparse subparsers object."""
    score = subparsers.add_parser(
        "score", help="score model results against their samples and print a summary",
        description="Import a results file (our schema or the original repository's evaluation output), "
                    "score every response and print the mean score per model and prompt.")
    score.add_argument("results", help="results .jsonl: {sample_id, model, prompt, response} lines, "
                                       "or the original's {index, q, a, r, info} lines, or a harness log: "
                                       "Inspect AI .eval / .json, lm-eval samples_*.jsonl or results_*.json")
    score.add_argument("--samples", required=True, help="the samples .jsonl the results answer")
    score.add_argument("--out", help="write the scored rows here (.jsonl)")
    score.add_argument("--threshold", type=float, default=scoring.DEFAULT_THRESHOLD,
                       help="ROUGE-L below this scores 0 (default: %(default)s, the paper's rule)")
    score.add_argument("--metric", choices=results.METRICS, default="strict",
                       help="which ROUGE-L is `score`: strict (rouge-score tokens on the text after '### Answer:') "
                            "or paper (the authors' pltrdy rouge on the whole response, as in the paper's tables); "
                            "default: %(default)s. Both are always in the scored rows.")
    score.add_argument("--by", default="model,prompt",
                       help="comma-separated columns to group the summary by (default: %(default)s); "
                            "any of model, prompt, suite, format, task, task_id, depth, width")
    score.add_argument("--prompt", help="prompt-setting label for original-format results "
                                        "(default: derived from the file name and info)")
    score.add_argument("--duplicates", choices=results.DUPLICATES, default=None,
                       help="repeated lines for one result: refuse (default: a problem; an original <JUMP> still "
                            "gives way to a real response) or last (a later line wins, except that a <JUMP> never "
                            "replaces a response, as in the authors' get_evaluation_result.py)")
    score.add_argument("--as-authors", action="store_true",
                       help="with --metric paper: the authors' get_evaluation_result.py rules exactly. A line whose "
                            "scoring raises in their library (an empty response; a pair deeper than Python's "
                            "recursion limit) is skipped, so an index whose every line raises is in no mean; "
                            "repeated lines as --duplicates last. Left-out rows stay in --out with "
                            "authors_left_out saying why; the summary counts them")
    score.add_argument("--no-bleu", action="store_true", help="skip BLEU (faster on very long answers)")
    score.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples for the 95%% interval")
    score.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    score.add_argument("--keep-epochs", action="store_true",
                       help="harness logs: keep one row per epoch / repeat (default: average them per sample)")
    score.set_defaults(func=cmd_score)

    prompt = subparsers.add_parser(
        "prompts", help="write the prompt of every sample under one prompt setting",
        description="Write one {sample_id, setting, prompt, demonstrations} line per sample.")
    prompt.add_argument("--samples", required=True, help="samples .jsonl")
    prompt.add_argument("--setting", required=True, choices=prompts.SETTINGS)
    prompt.add_argument("--shots", type=int, help=f"demonstrations for few-shot settings (default {prompts.DEFAULT_SHOTS})")
    prompt.add_argument("--demo-seed", type=int, default=0, help="seed of the demonstration pool (default 0)")
    prompt.add_argument("--out", required=True, help="prompts .jsonl to write")
    prompt.set_defaults(func=cmd_prompts)

    run = subparsers.add_parser(
        "run", help="ask an OpenAI-compatible chat endpoint for every sample (resumable)",
        description="Send each prompt to {base-url}/chat/completions and append the answers to --out. "
                    "Answered samples are skipped, so rerunning the command resumes. The API key, if any, "
                    "is read from the environment variable named by --api-key-env.")
    run.add_argument("--base-url", required=True, help="e.g. http://localhost:8000/v1 (vLLM), "
                                                       "http://localhost:11434/v1 (Ollama)")
    run.add_argument("--model", required=True, help="model name sent to the endpoint and recorded in the results")
    run.add_argument("--setting", choices=prompts.SETTINGS,
                     help="prompt setting (taken from --prompts records when omitted)")
    run.add_argument("--samples", help="samples .jsonl; prompts are built with --setting")
    run.add_argument("--prompts", help="ready prompts .jsonl from the prompts command (instead of --samples)")
    run.add_argument("--out", required=True, help="results .jsonl, appended to")
    run.add_argument("--shots", type=int, help="demonstrations for few-shot settings")
    run.add_argument("--demo-seed", type=int, default=0, help="seed of the demonstration pool")
    run.add_argument("--concurrency", type=int, default=4, help="requests in flight at most (default %(default)s)")
    run.add_argument("--max-retries", type=int, default=5, help="retries per prompt (default %(default)s)")
    run.add_argument("--backoff", type=seconds_or_zero, default=1.0, help="first retry delay in seconds, doubled each time")
    run.add_argument("--timeout", type=seconds, default=300.0,
                     help="the whole request's deadline for one answer, in seconds (connecting, sending, reading the "
                          "whole reply), not a wait between two bytes (default %(default)s)")
    run.add_argument("--temperature", type=float, default=0.0)
    run.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                     help="cap on the answer length in tokens, sent as max_tokens (default %(default)s: room for "
                          "every Test answer and all but the 34 longest of Test-Hard's 2,088, and a bound on what a "
                          "model that never stops costs; raise it for Test-Hard's longest answers; 0 sends no cap)")
    run.add_argument("--api-key-env", default=runner.DEFAULT_API_KEY_ENV,
                     help="environment variable holding the API key (default %(default)s)")
    run.set_defaults(func=cmd_run)

    from structext_core.structext_eval.cli import harness as cli_harness
    cli_harness.register(subparsers)
