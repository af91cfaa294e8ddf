"""The AIBench import: everything checked before anything is stored, every problem named with
its file and field; hostile inputs (bombs, truncated or lying images, huge graphs, escaping
paths, symlinks) refused; images decoded in a worker process, stored without metadata."""
from __future__ import annotations

import io
import json
import os
import random
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from structext_core.aibench import dataset, images
from structext_core.aibench import sandboxed_import as aibench_import
from structext_core.aibench.papers import parse_paper
from tests.aibench.conftest import paper_json, png_bytes, write_folder


def run_import(src: Path, dest: Path, pool):
    return aibench_import.import_folder(src, dest, pool=pool)


def refused(src: Path, tmp_path: Path, pool) -> list[str]:
    """The problems of an import that must fail, after checking nothing was written."""
    dest = tmp_path / "store" / "set"
    with pytest.raises(dataset.ImportFailed) as failed:
        run_import(src, dest, pool)
    assert not dest.exists()
    assert [p.name for p in (tmp_path / "store").iterdir()] == [] if (tmp_path / "store").exists() else True
    return [str(p) for p in failed.value.problems]


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def bomb_png(side: int) -> bytes:
    """A real 1-bit PNG of side x side black pixels: a few kilobytes that decode to side^2 pixels."""
    row = b"\x00" + bytes((side + 7) // 8)
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row * 1000) for _ in range(side // 1000)) + packer.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


def test_authors_shape_imports_and_round_trips(tmp_path, pool):
    src = write_folder(tmp_path / "src")
    (src / "aesthetics.jsonl").write_text(json.dumps({"system": "Sys A", "paper_id": "p1", "metric": "UniPercept",
                                                      "score": 51.5}) + "\n")
    stored = run_import(src, tmp_path / "store" / "set", pool)
    assert sorted(stored.papers) == ["p1", "p2"]
    assert stored.systems == ["Original Image", "Sys A"]
    q1, q2 = stored.papers["p1"].questions
    assert (q1.level, q1.options, q1.answer) == (1, ("No", "Yes"), "B")
    assert (q2.level, q2.answer) == (2, "B")  # the answer given as the option's text
    assert stored.aesthetics == {("Sys A", "p1", "UniPercept"): 51.5}
    again = dataset.load_dataset(tmp_path / "store" / "set")
    assert again.papers == stored.papers and again.images == stored.images and again.aesthetics == stored.aesthetics
    record = stored.images[("Sys A", "p2")]
    assert (record.width, record.height) == (64, 48)
    assert Image.open(tmp_path / "store" / "set" / record.path).getpixel((0, 0)) == (0, 0, 255)


def test_a_cyclic_graph_is_accepted(tmp_path, pool):
    stored = run_import(write_folder(tmp_path / "src", [paper_json("loop")]), tmp_path / "s", pool)
    edges = {(e.source, e.target) for e in stored.papers["loop"].graph.edges}
    assert {("n1", "n2"), ("n2", "n1")} <= edges


def test_images_are_decoded_in_a_worker_not_in_this_process(tmp_path, pool, monkeypatch):
    def forbidden(*args):
        raise AssertionError("decoded in the server's process")
    monkeypatch.setattr(images, "check_image", forbidden)
    stored = run_import(write_folder(tmp_path / "src", [paper_json("p1")]), tmp_path / "s", pool)
    assert len(stored.images) == 2


def test_metadata_is_not_kept(tmp_path, pool):
    from PIL import PngImagePlugin
    src = write_folder(tmp_path / "src", [paper_json("p1")])
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "secret author name")
    (src / "images" / "Sys A" / "p1.png").write_bytes(png_bytes(pnginfo=info))
    assert b"secret author name" in (src / "images" / "Sys A" / "p1.png").read_bytes()
    stored = run_import(src, tmp_path / "s", pool)
    kept = (tmp_path / "s" / stored.images[("Sys A", "p1")].path).read_bytes()
    assert b"secret" not in kept and b"tEXt" not in kept and b"eXIf" not in kept


def test_decompression_bomb_is_refused(tmp_path, pool):
    src = write_folder(tmp_path / "src", [paper_json("p1")])
    bomb = bomb_png(20_000)
    assert len(bomb) < 200_000
    (src / "images" / "Sys A" / "p1.png").write_bytes(bomb)
    problems = refused(src, tmp_path, pool)
    assert len(problems) == 1 and problems[0].startswith("images/Sys A/p1.png: ")
    assert "decompression bomb" in problems[0]


def test_a_bomb_below_pillows_own_limit_is_refused_too():
    result = images.check_image(bomb_png(5_000), ".png")  # 25 M pixels: Pillow only warns
    assert result == {"ok": False, "problem": result["problem"]} and "decompression bomb" in result["problem"]


def test_truncated_image_is_refused(tmp_path, pool):
    src = write_folder(tmp_path / "src", [paper_json("p1")])
    noise = Image.frombytes("RGB", (256, 256), random.Random(1).randbytes(256 * 256 * 3))
    out = io.BytesIO()
    noise.save(out, "PNG")
    (src / "images" / "Sys A" / "p1.png").write_bytes(out.getvalue()[: len(out.getvalue()) // 2])
    problems = refused(src, tmp_path, pool)
    assert len(problems) == 1 and "truncated" in problems[0], problems


def test_lying_header_and_lying_name_are_refused(tmp_path, pool):
    src = write_folder(tmp_path / "src", [paper_json("p1"), paper_json("p2")])
    data = bytearray(png_bytes())
    ihdr = struct.pack(">IIBBBBB", 640, 480, 8, 2, 0, 0, 0)  # the data holds 64 x 48
    data[8:33] = _chunk(b"IHDR", ihdr)
    (src / "images" / "Sys A" / "p1.png").write_bytes(bytes(data))
    jpeg = io.BytesIO()
    Image.new("RGB", (32, 32)).save(jpeg, "JPEG")
    (src / "images" / "Sys A" / "p2.png").write_bytes(jpeg.getvalue())
    problems = refused(src, tmp_path, pool)
    assert len(problems) == 2
    assert problems[0].startswith("images/Sys A/p1.png: ") and "640 x 480" in problems[0]
    assert problems[1] == "images/Sys A/p2.png: the name says PNG but the file holds JPEG"


def test_a_50000_node_graph_is_refused_by_its_count():
    nodes = [{"id": str(i), "label": "x", "type": "data"} for i in range(50_000)]
    paper = paper_json("big")
    paper["logic_graph"]["nodes"] = nodes
    data = json.dumps(paper, separators=(",", ":")).encode()
    assert len(data) < 5_000_000  # within the file size limit: the count itself refuses it
    result, problems = parse_paper(data, "papers/big.json")
    assert result is None
    assert [str(p) for p in problems][0] == ("papers/big.json: logic_graph.nodes: 50,000 nodes; "
                                             "at most 1,000 are read")


def test_every_problem_is_named_with_file_and_field(tmp_path, pool):
    bad = paper_json("p1")
    bad["questions"][0]["correct_option"] = "C"
    bad["questions"][1]["options"] = ["only one"]
    bad["questions"].append({"id": "q3", "level": "Level 2: Component Existence", "question": "?",
                             "options": ["a", "b"], "answer": "A"})
    bad["logic_graph"]["edges"].append({"source": "n1", "target": "ghost"})
    bad["logic_graph"]["nodes"][0]["phase_id"] = "nowhere"
    bad["year"] = "soon"
    src = write_folder(tmp_path / "src", [bad])
    (src / "papers" / "broken.json").write_text("{not json")
    assert refused(src, tmp_path, pool) == [
        "papers/broken.json: not JSON: Expecting property name enclosed in double quotes at line 1, column 2",
        "papers/p1.json: year: 'soon' is not a year",
        "papers/p1.json: logic_graph.nodes[0].phase_id: 'nowhere' is not a phase of this graph",
        "papers/p1.json: logic_graph.edges[3].target: 'ghost' is not a node of this graph",
        "papers/p1.json: questions[0].correct_option: 'C' is not among the options (A, B)",
        "papers/p1.json: questions[1].options: 1 options; a question has 2-4",
        "papers/p1.json: questions[2].level: 'Level 2: Component Existence' names level 2 wrongly "
        "(it is 'Local Topology')",
        "images/Sys A/p1.png: 'p1' is not the id of an imported paper",
    ]


def test_paths_escaping_the_folder_are_refused(tmp_path, pool):
    (tmp_path / "outside.png").write_bytes(png_bytes())
    src = write_folder(tmp_path / "src", [paper_json("p1", original_figure="../outside.png"),
                                          paper_json("p2", original_figure="/etc/hostname")])
    problems = refused(src, tmp_path, pool)
    assert problems == [
        "papers/p1 original_figure '../outside.png': '../outside.png' leads outside the import folder",
        "papers/p2 original_figure '/etc/hostname': '/etc/hostname' is an absolute path; "
        "paths are relative to the import folder",
    ]


def test_symlinks_are_not_followed(tmp_path, pool):
    (tmp_path / "outside.png").write_bytes(png_bytes())
    (tmp_path / "outside.json").write_text(json.dumps(paper_json("p9")))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "p2.png").write_bytes(png_bytes())
    src = write_folder(tmp_path / "src", [paper_json("p1"), paper_json("p2", original_figure="linked/p2.png")])
    os.remove(src / "images" / "Sys A" / "p1.png")
    os.symlink(tmp_path / "outside.png", src / "images" / "Sys A" / "p1.png")
    os.symlink(tmp_path / "outside.json", src / "papers" / "p9.json")
    os.symlink(tmp_path / "elsewhere", src / "linked")
    problems = refused(src, tmp_path, pool)
    assert problems == [
        "papers/p9.json: is a symbolic link; links are not followed",
        "images/Sys A/p1.png: is a symbolic link; links are not followed",
        "papers/p2 original_figure 'linked/p2.png': 'linked' is a symbolic link; links are not followed",
    ]


def test_an_existing_destination_is_kept_unless_replaced(tmp_path, pool):
    src = write_folder(tmp_path / "src", [paper_json("p1")])
    run_import(src, tmp_path / "s", pool)
    with pytest.raises(FileExistsError):
        run_import(src, tmp_path / "s", pool)
    broken = write_folder(tmp_path / "src2", [paper_json("p1", year=1)])
    with pytest.raises(dataset.ImportFailed):
        aibench_import.import_folder(broken, tmp_path / "s", replace=True, pool=pool)
    assert sorted(dataset.load_dataset(tmp_path / "s").papers) == ["p1"]  # the failed replacement changed nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s", "src", "src2"]


def test_the_result_does_not_depend_on_how_many_images_are_checked_at_once(tmp_path):
    src = write_folder(tmp_path / "src", [paper_json(f"p{i}") for i in range(5)], systems=("A", "B"))
    (src / "images" / "B" / "p3.png").write_bytes(b"broken")
    (src / "images" / "A" / "p1.png").write_bytes(png_bytes()[:40])
    outcomes = []
    for workers in (1, 3):
        with pytest.raises(dataset.ImportFailed) as failed:
            dataset.import_folder(src, tmp_path / f"s{workers}", images.check_image, workers=workers)
        outcomes.append([str(p) for p in failed.value.problems])
    assert outcomes[0] == outcomes[1] and len(outcomes[0]) == 2
    (src / "images" / "B" / "p3.png").write_bytes(png_bytes())
    (src / "images" / "A" / "p1.png").write_bytes(png_bytes())
    stored = [dataset.import_folder(src, tmp_path / f"ok{w}", images.check_image, workers=w) for w in (1, 3)]
    assert stored[0] == stored[1]
    assert files_of(tmp_path / "ok1") == files_of(tmp_path / "ok3")


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
