"""``items score``: any benchmark's replies scored by its own rule, through the protocol."""
from __future__ import annotations

import json

import pytest

from structext_core.cli.main import main
from structext_core.structext_eval import samples, suites
from structext_core.text import limits


@pytest.fixture
def items(tmp_path):
    rows = [suites.generate_sample(task_id, 2, 2, seed=task_id) for task_id in (1, 2, 3)]
    path = tmp_path / "items.jsonl"
    samples.write_jsonl(path, rows)
    return path, rows


def write(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
                    encoding="utf-8")
    return path


def test_replies_are_scored_by_the_benchmarks_rule_and_broken_down(items, tmp_path, capsys):
    path, rows = items
    replies = write(tmp_path / "replies.jsonl", [
        {"id": rows[0]["id"], "reply": f"### Answer: {rows[0]['answer']}", "model": "m"},
        {"id": rows[1]["id"], "reply": "### Answer: nothing like it", "model": "m"},
        {"id": rows[0]["id"], "reply": f"### Answer: {rows[0]['answer']}", "model": "n"},
    ])
    out = tmp_path / "scored.jsonl"
    assert main(["items", "score", str(replies), "--benchmark", "structext-eval", "--items", str(path),
                 "--by", "task", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["model"], r["id"], r["score"]) for r in scored] == [
        ("m", rows[0]["id"], 1.0), ("m", rows[1]["id"], 0.0), ("n", rows[0]["id"], 1.0)]
    assert scored[0]["task"] == rows[0]["task"] and scored[0]["depth"] == 2
    assert "StrucText-Eval: 3 replies scored" in printed.out
    assert f"m\t{rows[0]['task']}\t1\t1.000\t±0.000" in printed.out
    assert "scoring: 3/3 (100%)" in printed.err  # the progress line


@pytest.mark.parametrize("lines, message", [
    (["{not json"], "replies.jsonl:1: not a JSON line"),
    ([{"reply": "x"}], "replies.jsonl:1: the field 'id' is missing or not text"),
    ([{"id": "nope", "reply": "x"}], "replies.jsonl:1: 'nope' is no item of"),
    (["[1]"], "replies.jsonl:1: a reply line is a JSON object, not list"),
    ("twice", "replies.jsonl:2: 'replies' answered"),
    (["[" * 200_000 + "]" * 200_000], "replies.jsonl:1: not a JSON line"),  # nesting far past the depth limit
    ([{"id": "x", "reply": "\ud800"}], "replies.jsonl:1: not a JSON line"),  # a lone surrogate
    ("huge", "replies.jsonl:1: longer than"),  # one line past the record limit: refused before it is held
])
def test_bad_replies_are_named_by_line_and_nothing_is_written(items, tmp_path, capsys, lines, message):
    path, rows = items
    if lines == "twice":
        lines = [{"id": rows[0]["id"], "reply": "a"}, {"id": rows[0]["id"], "reply": "b"}]
    elif lines == "huge":
        lines = [json.dumps({"id": rows[0]["id"], "reply": "x" * (limits.MAX_RECORD_CHARS + 10)})]
    replies = write(tmp_path / "replies.jsonl", lines)
    out = tmp_path / "scored.jsonl"
    assert main(["items", "score", str(replies), "--benchmark", "structext-eval", "--items", str(path),
                 "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_an_existing_out_file_and_an_unknown_axis_are_refused(items, tmp_path, capsys):
    path, rows = items
    replies = write(tmp_path / "replies.jsonl", [{"id": rows[0]["id"], "reply": "x"}])
    out = tmp_path / "mine.jsonl"
    out.write_text("someone's file\n")
    args = ["items", "score", str(replies), "--benchmark", "structext-eval", "--items", str(path)]
    assert main([*args, "--out", str(out)]) == 2
    assert "exists already" in capsys.readouterr().err and out.read_text() == "someone's file\n"
    assert main([*args, "--by", "colour"]) == 2
    assert "--by colour: not an axis of StrucText-Eval" in capsys.readouterr().err
