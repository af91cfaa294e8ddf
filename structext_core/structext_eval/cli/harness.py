"""Command-line subcommand ``export-task`` (registered by ``cli_results.py``).

Writes a ready Inspect AI or lm-evaluation-harness task (see :mod:`structext_core.structext_eval.harness_export`);
``score`` reads those harnesses' logs back (see :mod:`structext_core.evaluation.harness`). A mistake in the
command or its files is a message and exit status 2, with nothing written.
"""

from __future__ import annotations

import argparse
import sys

from structext_core.structext_eval import harness_export, prompts
from structext_core.structext_eval.samples import SampleError, read_jsonl
from structext_core.text.words import noun

EXIT_OK = 0
EXIT_ERROR = 2


def cmd_export_task(args: argparse.Namespace) -> int:
    """``export-task``: write the task folder and say how to run it."""
    try:
        samples = read_jsonl(args.suite)
        written = harness_export.export_task(args.harness, samples, args.setting, args.out, shots=args.shots,
                                             demo_seed=args.demo_seed, threshold=args.threshold,
                                             max_tokens=args.max_tokens, suite_path=args.suite,
                                             force=args.force)
    except (SampleError, harness_export.ExportError, prompts.PromptError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wrote {'an' if args.harness[0] in 'aeiou' else 'a'} {args.harness} task for {len(samples)} {noun(len(samples), 'sample')} ({args.setting}) to {args.out}: "
          f"{', '.join(p.name for p in written)}")
    print((written[0].parent / "README.txt").read_text(encoding="utf-8"))
    return EXIT_OK


def register(subparsers) -> None:
    """Add the ``export-task`` subcommand to an argparse subparsers object."""
    export = subparsers.add_parser(
        "export-task", help="write a ready Inspect AI or lm-evaluation-harness task for a suite",
        description="Write a task folder for a harness: the suite's samples with our ids, the prompt of one "
                    "setting, and a scorer that calls StrucText Studio's scoring. `score` reads the "
                    "harness's logs back.")
    export.add_argument("--harness", required=True, choices=harness_export.HARNESSES)
    export.add_argument("--suite", required=True, help="samples .jsonl")
    export.add_argument("--setting", required=True, choices=prompts.SETTINGS)
    export.add_argument("--out", required=True, help="folder to write the task into (new or empty)")
    export.add_argument("--force", action="store_true",
                        help="write into a folder that holds other files (only files an export wrote are replaced)")
    export.add_argument("--shots", type=int, help=f"demonstrations for few-shot settings (default {prompts.DEFAULT_SHOTS})")
    export.add_argument("--demo-seed", type=int, default=0, help="seed of the demonstration pool (default 0)")
    export.add_argument("--threshold", type=float, default=harness_export.DEFAULT_THRESHOLD,
                        help="ROUGE-L below this scores 0 in the harness (default: %(default)s)")
    export.add_argument("--max-tokens", type=int, default=4096,
                        help="lm-eval: max_gen_toks of the task (default: %(default)s)")
    export.set_defaults(func=cmd_export_task)
