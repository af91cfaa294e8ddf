"""A lab's question set in Inspect's JSONL form: 40 multiple-choice questions, 20 short answers and
10 multiple-choice questions on an image (PNGs written here, no imaging library)."""
from __future__ import annotations

import json
import struct
import zlib

import pytest

SUBJECTS = ("maps", "music", "tides")


def png(width: int, height: int, shade: int = 0) -> bytes:
    """A grey PNG of ``width`` x ``height`` pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes([shade % 256]) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def samples() -> list[dict]:
    """The 70 samples (the last 20 short answers), as Inspect's json_dataset reads them."""
    out = []
    for i in range(50):
        text = f"Question {i}: which option is {'ABCD'[i % 4]}?"
        sample = {"id": f"mc{i:02d}", "choices": [f"option {x} of {i}" for x in "ABCD"], "target": "ABCD"[i % 4],
                  "metadata": {"subject": SUBJECTS[i % 3]}}
        if i >= 40:
            sample["input"] = [{"role": "user", "content": [{"type": "text", "text": text},
                                                             {"type": "image", "image": f"images/q{i - 40}.png"}]}]
        else:
            sample["input"] = text
        out.append(sample)
    for i in range(20):
        out.append({"id": i, "input": f"Short {i}: name the city number {i}.",
                    "target": [f"City {i}", f"the city {i}"] if i % 2 else f"City {i}",
                    "metadata": {"subject": SUBJECTS[i % 3]}})
    return out


def write_set(folder, records, name="set.jsonl") -> object:
    (folder / "images").mkdir(exist_ok=True)
    for i in range(10):
        (folder / "images" / f"q{i}.png").write_bytes(png(4 + i, 3, i * 20))
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def lab_set(tmp_path):
    """The 70-sample set written to a file (with its images); its path."""
    return write_set(tmp_path, samples())
