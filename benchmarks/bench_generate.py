"""Generating Test + Test-Hard (5,800 samples) as whole processes, ours beside the original.

    .venv/bin/python benchmarks/bench_generate.py [--repeat 5] [--no-jobs1]

Runs ``python -m structext_core generate`` for both suites in fresh processes
(imports, generation and writing the JSONL all count), with the default number of
processes and with ``--jobs 1``, and prints the median wall time. The output goes to
memory (/dev/shm) when the machine has it, as the original's does below. Both run with
their modules' bytecode written (one untimed run of each first), as Python does by default,
even where PYTHONDONTWRITEBYTECODE is set.

The original generator is not part of this project (its code is never committed).
When a local copy exists, point ``STRUCTEXT_ORIGINAL_GENERATOR`` at a script that
regenerates the same 5,800 samples (default: /tmp/original_generator/run_original.sh)
and it is timed in the same run, interleaved with ours; otherwise the figure quoted in
the issue is shown, marked as quoted. To make that script from the authors' repository
(https://github.com/MikeGu721/StrucText-Eval, or a local mirror of it)::

    git clone https://github.com/MikeGu721/StrucText-Eval /tmp/StrucText-Eval
    mkdir -p /tmp/original_generator
    git -C /tmp/StrucText-Eval archive HEAD Generation | tar -x -C /tmp/original_generator
    .venv/bin/python benchmarks/bench_generate.py --write-original /tmp/original_generator
    /tmp/original_generator/run_original.sh --keep /tmp/original_check   # check: 5,800 files
    find /tmp/original_check -name '*.json' | wc -l
    STRUCTEXT_ORIGINAL_GENERATOR=/tmp/original_generator/run_original.sh \
        .venv/bin/python benchmarks/bench_generate.py --repeat 5

``--write-original DIR`` writes two files of ours beside the authors' ``Generation``
folder: ``gen_suites.py``, which calls the original's own ``gen_QAs`` and
``write_data_for_sample`` once per sample slot (8 formats x (2 depths x 64 for Test + 9
cells x 8 for Test-Hard) = 1,600 calls, each a sample of every task of its format: 5,800
samples, 0-shot, ``node`` = depth, ``n_ary_ratio`` = width, ``para_len_ratio`` = 6 as the
released files' labels say), and ``run_original.sh``, which runs it in one fresh python
process into a new folder in /dev/shm and deletes the folder after. The original writes
one JSON file per sample: on this machine's disk the file system alone costs it 4-5 s of
system time, so it writes to memory, which keeps the comparison about generation. Its
``datagen.py`` imports ``fire`` for its command line only; where ``fire`` is not installed
(this project does not need it) a stub stands in, which makes the original a little faster.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUOTED_ORIGINAL_SECONDS = 3.1  # the figure for the original generator on this machine kind
GOAL = 0.6  # issue 46: generation under 0.6 of the original generator's time
MEMORY = Path("/dev/shm")

# Ours, written beside the authors' Generation folder by --write-original (see the docstring).
ORIGINAL_DRIVER = '''"""Write, with the original StrucText-Eval generator (./Generation), as many samples as
structext_core's Test + Test-Hard: one gen_QAs call per format and sample slot, each written by
the original's write_data_for_sample (0-shot). Written by benchmarks/bench_generate.py.

usage (from the Generation folder): python gen_suites.py OUTPUT_DIR
"""
import os
import sys
import types

sys.path.insert(0, os.getcwd())  # the Generation folder
try:
    import fire  # noqa: F401  (datagen imports it for its command line only)
except ImportError:
    sys.modules["fire"] = types.ModuleType("fire")

import datagen  # noqa: E402

# (node = depth, n_ary_ratio = width, calls): Test, then Test-Hard; para_len_ratio 6
CELLS = [(d, 1, 64) for d in (1, 2)] + [(d, w, 8) for d in (1, 2, 3) for w in (1, 2, 3)]

for Type, typename in zip(datagen.type_set, datagen.type_name):
    for depth, width, calls in CELLS:
        for _ in range(calls):
            sample = Type.gen_QAs(node=depth, n_ary_ratio=width, para_len_ratio=6)
            datagen.write_data_for_sample(sample, [], depth, width, 6, 0, typename, output_dir=sys.argv[1])
'''

ORIGINAL_SCRIPT = '''#!/bin/bash
# The original StrucText-Eval generator writing as many samples as Test + Test-Hard (5,800) in one
# fresh python process. Written by benchmarks/bench_generate.py --write-original.
# usage: run_original.sh [--keep DIR]   (default: a new folder in ${ORIGINAL_OUT_BASE:-/dev/shm},
# deleted after; --keep DIR: into DIR, which must not exist, kept to count the files)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ "${1:-}" = "--keep" ]; then
    mkdir "$2"; OUT="$(cd "$2" && pwd)"; KEEP=1
else
    OUT="$(mktemp -d "${ORIGINAL_OUT_BASE:-/dev/shm}/original_out.XXXXXX")"; KEEP=0
fi
cd "$HERE/Generation"
"${PYTHON:-%(python)s}" "$HERE/gen_suites.py" "$OUT"
if [ "$KEEP" = 0 ]; then rm -rf "$OUT"; fi
'''


def write_original(folder: Path) -> None:
    """gen_suites.py and run_original.sh beside the authors' Generation folder in ``folder``."""
    if not (folder / "Generation" / "datagen.py").is_file():
        sys.exit(f"{folder}/Generation/datagen.py not found: extract the authors' Generation folder there first "
                 "(see this script's docstring)")
    (folder / "gen_suites.py").write_text(ORIGINAL_DRIVER, encoding="utf-8")
    script = folder / "run_original.sh"
    script.write_text(ORIGINAL_SCRIPT % {"python": sys.executable}, encoding="utf-8")
    script.chmod(0o755)
    print(f"wrote {folder / 'gen_suites.py'} and {script}")


#: Both generators run as Python runs by default: modules compiled once to bytecode (__pycache__) and
#: read from it after. A machine with PYTHONDONTWRITEBYTECODE set would compile every module of each
#: at every start (about 0.15 s a process more for ours, which has more code); one untimed run of each
#: first writes the bytecode.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def ours(out: Path, jobs: int | None) -> float:
    total = 0.0
    for suite in ("test", "test-hard"):
        cmd = [sys.executable, "-m", "structext_core", "generate", "--suite", suite, "--seed", "0",
               "--out", str(out / f"{suite}.jsonl")]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        total += wall(cmd)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-jobs1", action="store_true", help="leave out ours with --jobs 1")
    parser.add_argument("--write-original", type=Path, metavar="DIR",
                        help="write gen_suites.py and run_original.sh beside the authors' Generation folder in DIR")
    args = parser.parse_args()
    if args.write_original:
        write_original(args.write_original)
        return
    original = Path(os.environ.get("STRUCTEXT_ORIGINAL_GENERATOR", "/tmp/original_generator/run_original.sh"))
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory(dir=MEMORY if MEMORY.is_dir() else None) as tmp:
        out = Path(tmp)
        runs: dict[str, list[float]] = {"ours (default jobs)": [], "ours (--jobs 1)": [], "original": []}
        ours(out, None)  # untimed: each writes its bytecode
        if original.exists():
            wall(["bash", str(original)])
        for _ in range(args.repeat):  # interleaved, so load on the machine hits all alike
            runs["ours (default jobs)"].append(ours(out, None))
            if not args.no_jobs1:
                runs["ours (--jobs 1)"].append(ours(out, 1))
            if original.exists():
                runs["original"].append(wall(["bash", str(original)]))
        rows = [(name, times) for name, times in runs.items() if times]
    print(f"Generating Test (3,712) + Test-Hard (2,088) = 5,800 samples as whole processes, "
          f"{args.repeat} runs, {os.cpu_count()} CPUs")
    print(f"{'generator':<22} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, times in rows:
        print(f"{name:<22} {statistics.median(times):>9.2f} {min(times):>7.2f} {max(times):>7.2f}")
    ours_median = statistics.median(runs["ours (default jobs)"])
    if runs["original"]:
        measured = statistics.median(runs["original"])
        pairs = [a / b for a, b in zip(runs["ours (default jobs)"], runs["original"])]
        print(f"side by side: ours {ours_median:.2f} s = {ours_median / measured:.0%} of the original's "
              f"{measured:.2f} s measured in this run; run by run (ours / the original run just after it): "
              f"median {statistics.median(pairs):.0%}, {min(pairs):.0%} to {max(pairs):.0%} (goal: under {GOAL:.0%})")
    else:
        print(f"the original was not run ({original} not found)")
    print(f"against the issue's quoted {QUOTED_ORIGINAL_SECONDS:.1f} s for the original: ours "
          f"{ours_median:.2f} s = {ours_median / QUOTED_ORIGINAL_SECONDS:.0%} (goal: under {GOAL:.0%})")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (figures are only comparable on a quiet machine)")


if __name__ == "__main__":
    main()
