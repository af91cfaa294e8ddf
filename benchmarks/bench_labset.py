"""The lab's set check and import at scale: 20,000 questions naming one 5 MB image, and a 20 MB JSONL.

Builds both in a temporary folder, runs ``labset check`` and ``labset import`` on each (each step in a
fresh process: its imports and the sandbox worker's start, which decodes the image once, are counted),
and prints the wall time and the peak memory (the process's peak RSS, and tracemalloc's peak of Python
allocations from a second run of each step) of each step.
Target: at most 5 s for the check and for the import of the 20,000-question set.

    python benchmarks/bench_labset.py
"""
from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path


def noise_png(width: int, height: int, seed: int = 0) -> bytes:
    """An RGB PNG of random pixels (it hardly compresses: about 3 bytes a pixel)."""
    rng = random.Random(seed)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def one_image_set(folder: Path) -> Path:
    (folder / "images").mkdir(parents=True)
    data = noise_png(1280, 1290)
    (folder / "images" / "big.png").write_bytes(data)
    with (folder / "one-image.jsonl").open("w", encoding="utf-8") as out:
        for i in range(20_000):
            out.write(json.dumps({"id": f"q{i}", "input": f"Question {i}: what does the picture show?",
                                  "image": "images/big.png", "choices": [f"thing {k} of {i}" for k in range(4)],
                                  "target": "ABCD"[i % 4], "metadata": {"subject": f"s{i % 7}"}}) + "\n")
    return folder / "one-image.jsonl"


def big_jsonl(folder: Path) -> Path:
    path = folder / "big.jsonl"
    filler = "lorem ipsum dolor sit amet " * 33
    with path.open("w", encoding="utf-8") as out:
        for i in range(19_990):
            out.write(json.dumps({"id": i, "input": f"Question {i}? {filler}", "target": [f"answer {i}"],
                                  "metadata": {"subject": f"s{i % 5}"}}) + "\n")
    return path


STEP = """
import os, resource, sys, time, tracemalloc
sys.stdout = open(os.devnull, "w")
from structext_core.cli.main import main
memory = os.environ.get("BENCH_TRACEMALLOC") == "1"
if memory:
    tracemalloc.start()
start = time.perf_counter()
code = main(sys.argv[1:])
took = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1] if memory else 0
print(code, took, peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.__stdout__)
"""


def measure(label: str, argv: list[str]) -> float:
    """Run one command in a fresh process (its imports and the sandbox worker's start counted, the
    interpreter's own start not): its wall time and peak RSS; then again under tracemalloc, for the
    peak of Python allocations (tracemalloc slows the run, so its time is not the one reported)."""
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", STEP, *argv], capture_output=True, text=True, env=env, cwd=root)
    code, took, _, rss = out.stdout.split()
    again = [a + "-traced" if n and argv[n - 1] == "--to" else a for n, a in enumerate(argv)]  # a new folder
    traced = subprocess.run([sys.executable, "-c", STEP, *again], capture_output=True, text=True, cwd=root,
                            env=dict(env, BENCH_TRACEMALLOC="1"))
    peak = float(traced.stdout.split()[2]) / 1e6
    print(f"{label:<36} exit {code}  {float(took):6.2f} s  peak RSS {int(rss) / 1024:7.1f} MB  "
          f"peak Python allocations {peak:7.1f} MB", flush=True)
    return float(took)


def run() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ.setdefault("STRUCTEXT_DATA_DIR", str(folder / "data"))
        one = one_image_set(folder / "one")
        big = big_jsonl(folder / "one")
        print(f"one-image set: {one.stat().st_size / 1e6:.1f} MB, image "
              f"{(one.parent / 'images' / 'big.png').stat().st_size / 1e6:.2f} MB; big JSONL: "
              f"{big.stat().st_size / 1e6:.1f} MB", flush=True)
        times = [measure("check 20,000 questions, one image", ["labset", "check", str(one)]),
                 measure("import 20,000 questions, one image",
                         ["labset", "import", str(one), "--to", str(folder / "sets")]),
                 measure("check a 20 MB JSONL", ["labset", "check", str(big)]),
                 measure("import a 20 MB JSONL", ["labset", "import", str(big), "--to", str(folder / "sets")])]
        verdict = "within" if max(times[:2]) <= 5 else "OVER"
        print(f"target: check and import of the 20,000-question set at most 5 s each: {verdict}")


if __name__ == "__main__":
    run()
