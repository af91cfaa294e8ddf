"""Results import (our schema and the original repository's output), validation, scoring, ``score`` CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from structext_core.evaluation.scoring import rouge_l
from structext_core.structext_eval import official
from structext_core.structext_eval.cli import model_runs as cli_results
from structext_core.structext_eval.result_files import (
    ResultsImportError,
    SampleIndex,
    original_prompt_label,
    parse_results,
    read_results,
    score_results,
    scored_frame,
    split_original_prompt,
)
from structext_core.structext_eval.samples import write_jsonl
from structext_core.structext_eval.suites import generate_cell


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    rows = []
    for task_id in (2, 7, 9, 19, 21):
        rows += generate_cell(task_id, 2, 1, 4, seed=3, suite="import-test")
    return rows


def ours(sample_id, response, model="m", prompt="naive", **extra) -> str:
    return json.dumps({"sample_id": sample_id, "model": model, "prompt": prompt, "response": response, **extra})


def original_prompt(sample: dict, language: str, hint: str | None = None, examples=()) -> str:
    """The prompt the original repository's Evaluation/generate_dataset.py builds."""
    question = f"{sample['question']} {sample['requirement']}"
    prompt = ("There are References in %s. Based on the content under \u201c### Question:\u201d, please provide "
              "the answer directly after \u201c### Answer:\u201d. Avoid including any redundant information in "
              "your answer.\n\n" % language)
    if hint:
        prompt += "### Hint:\n" + hint + "\n\n"
    if examples:
        prompt += "### Examples:\n\n"
        for ex in examples:
            prompt += ("### Question:\n" + ex["question"] + "\n\n### Reference:\n" + ex["reference"]
                       + "\n\n### Answer:\n" + ex["answer"] + "\n\n")
    return prompt + "### Question:\n" + question + "\n\n### Reference:\n" + sample["reference"] + "\n\n### Answer:\n"


def original(index, sample, response, engine="gpt-x", rule_hint=False, few_shot_num=0, overrides=None) -> str:
    line = {
        "index": index,
        "q": original_prompt(sample, sample["language"], sample["rule_hint"] if rule_hint else None),
        "a": sample["answer"],
        "r": response,
        "info": {"type": sample["language"], "task": sample["task"], "depth": sample["depth"],
                 "width": sample["width"], "llm_engine": engine, "rule_hint": rule_hint,
                 "few_shot_num": few_shot_num},
    }
    line.update(overrides or {})
    return json.dumps(line)


# ---------------------------------------------------------------- our schema

def test_our_format_imports_and_keeps_extra_fields(samples):
    lines = [ours(samples[0]["id"], "1", latency_s=2.5), "", ours(samples[1]["id"], "x", model="other")]
    file_format, rows = parse_results(lines, samples)
    assert file_format == "ours"
    assert [r["sample_id"] for r in rows] == [samples[0]["id"], samples[1]["id"]]
    assert rows[0]["latency_s"] == 2.5


@pytest.mark.parametrize("line, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('{"foo": 1}', "neither a result line"),
    ('{"sample_id": "S0", "model": "m", "prompt": "naive"}', "missing field 'response'"),
    ('{"sample_id": "S0", "model": "m", "prompt": "naive", "response": null}', "'response' must be a string"),
    ('{"sample_id": "S0", "model": "", "prompt": "naive", "response": "x"}', "'model' must be a non-empty string"),
    ('{"sample_id": "nope", "model": "m", "prompt": "naive", "response": "x"}', "unknown sample_id 'nope'"),
])
def test_our_format_errors_name_the_line(samples, line, message):
    line = line.replace('"S0"', json.dumps(samples[0]["id"]))
    lines = [ours(samples[1]["id"], "ok"), line, ours(samples[2]["id"], "ok")]
    with pytest.raises(ResultsImportError) as caught:
        parse_results(lines, samples, source="run.jsonl")
    problems = caught.value.problems
    assert [p.line for p in problems] == [2]
    assert message in problems[0].message
    assert "run.jsonl:2: " in str(caught.value)


def test_every_problem_is_reported_and_nothing_imported(samples):
    lines = [ours(samples[0]["id"], "a"), "oops", ours("missing", "b"), ours(samples[0]["id"], "c")]
    with pytest.raises(ResultsImportError) as caught:
        parse_results(lines, samples)
    described = [(p.line, p.message) for p in caught.value.problems]
    assert [line for line, _ in described] == [2, 3, 4]
    assert "first on line 1" in described[2][1]


def test_mixed_formats_are_refused(samples):
    lines = [ours(samples[0]["id"], "a"), original(0, samples[1], "b")]
    with pytest.raises(ResultsImportError, match="2: original format line in a file of ours format lines"):
        parse_results(lines, samples)


def test_empty_file_is_refused(samples):
    with pytest.raises(ResultsImportError, match="no results"):
        parse_results(["", "  "], samples)


# ---------------------------------------------------------------- the original format

def test_original_prompt_is_split_into_question_and_reference(samples):
    sample = samples[5]
    demo = samples[6]
    q = original_prompt(sample, "tree", hint="look at the edges", examples=[demo])
    question, reference = split_original_prompt(q)
    assert question == f"{sample['question']} {sample['requirement']}"
    assert reference == sample["reference"]
    assert split_original_prompt("just a question") is None


def test_original_format_matches_samples(samples):
    lines = [original(i, s, s["answer"]) for i, s in enumerate(samples)]
    file_format, rows = parse_results(lines, samples, source="results/gpt-x.jsonl")
    assert file_format == "original"
    assert [r["sample_id"] for r in rows] == [s["id"] for s in samples]
    assert {r["model"] for r in rows} == {"gpt-x"}
    assert {r["prompt"] for r in rows} == {"naive"}
    assert rows[3]["original_index"] == 3


def test_original_hint_lines_become_a_second_setting(samples):
    lines = []
    for i, s in enumerate(samples[:5]):
        lines.append(original(2 * i, s, "wrong"))
        lines.append(original(2 * i + 1, s, s["answer"], rule_hint=True))
    _, rows = parse_results(lines, samples)
    assert [r["prompt"] for r in rows] == ["naive", "hint"] * 5
    assert [r["sample_id"] for r in rows[::2]] == [r["sample_id"] for r in rows[1::2]]


@pytest.mark.parametrize("file_name, info, label", [
    ("gpt4.jsonl", {}, "naive"),
    ("gpt4.cot.jsonl", {}, "self-cot"),
    ("out/gpt4.ps.jsonl", {}, "ps-cot"),
    ("gpt4.jsonl", {"rule_hint": True}, "hint"),
    ("gpt4.cot.jsonl", {"rule_hint": True}, "self-cot+hint"),
    ("gpt4.jsonl", {"few_shot_num": 3}, "few-shot"),
])
def test_original_prompt_labels(file_name, info, label):
    assert original_prompt_label({"rule_hint": False, "few_shot_num": 0, **info}, file_name) == label


def test_jump_alone_is_a_failed_call_scored_zero(samples):
    _, rows = parse_results([original(0, samples[0], "<JUMP>")], samples)
    assert rows[0]["failed"] is True and rows[0]["response"] == ""
    scored = score_results(rows, samples)
    assert scored[0]["score"] == 0.0 and scored[0]["rouge_l"] == 0.0


def test_a_later_answer_supersedes_a_jump(samples):
    s = samples[0]
    lines = [original(0, s, "<JUMP>"), original(1, samples[1], "x"), original(0, s, s["answer"]),
             original(0, s, "<JUMP>")]
    _, rows = parse_results(lines, samples)
    first = next(r for r in rows if r["original_index"] == 0)
    assert first["response"] == s["answer"] and not first["failed"]
    assert len(rows) == 2


def test_two_different_answers_for_one_index_are_refused(samples):
    s = samples[0]
    with pytest.raises(ResultsImportError, match=r":3: second response for index 0 .*first on line 1"):
        parse_results([original(0, s, "a"), original(1, samples[1], "x"), original(0, s, "b")], samples,
                      source="f.jsonl")


def test_duplicates_last_lets_the_last_line_win_as_the_authors_scripts_do(samples):
    """Issue 12: the authors' get_evaluation_result.py keeps the last line for an index;
    issue 20: but a <JUMP> that follows a response does not replace it (their loop skips it)."""
    s = samples[0]
    lines = [original(0, s, "a"), original(1, samples[1], "x"), original(0, s, "b")]
    _, rows = parse_results(lines, samples, duplicates="last")
    assert [(r["original_index"], r["response"]) for r in rows] == [(1, "x"), (0, "b")]
    # a <JUMP> after a response keeps the response
    _, rows = parse_results(lines + [original(0, s, "<JUMP>")], samples, duplicates="last")
    kept = next(r for r in rows if r["original_index"] == 0)
    assert kept["failed"] is False and kept["response"] == "b"
    # a <JUMP> alone stands (a failed call, scored 0); a response after it replaces it
    _, rows = parse_results([original(0, s, "<JUMP>")], samples, duplicates="last")
    assert rows[0]["failed"] is True
    _, rows = parse_results([original(0, s, "<JUMP>"), original(0, s, "c")], samples, duplicates="last")
    assert rows[0]["failed"] is False and rows[0]["response"] == "c"
    # our schema: the result keeps the place of its first line and the content of its last
    ours_lines = [ours(s["id"], "first"), ours(samples[1]["id"], "other"), ours(s["id"], "second")]
    _, rows = parse_results(ours_lines, samples, duplicates="last")
    assert [(r["sample_id"], r["response"]) for r in rows] == [(s["id"], "second"), (samples[1]["id"], "other")]
    with pytest.raises(ResultsImportError, match=r":3: second result for sample"):
        parse_results(ours_lines, samples)  # the default is unchanged
    with pytest.raises(ValueError, match="unknown duplicates rule"):
        parse_results(ours_lines, samples, duplicates="first")


def test_score_command_duplicates_option(tmp_path, samples, sample_file, capsys):
    results = tmp_path / "results.jsonl"
    s = samples[0]
    results.write_text("\n".join([ours(s["id"], "### Answer:\nno idea"), ours(s["id"], f"### Answer:\n{s['answer']}")])
                       + "\n", encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    assert run_cli(["score", str(results), "--samples", str(sample_file), "--out", str(out)]) == 2
    assert "second result for sample" in capsys.readouterr().err and not out.exists()
    assert run_cli(["score", str(results), "--samples", str(sample_file), "--out", str(out), "--duplicates", "last"]) == 0
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(scored) == 1 and scored[0]["score"] == 1.0


@pytest.mark.parametrize("change, message", [
    ({"index": -1}, "'index' must be a non-negative integer"),
    ({"r": 5}, "field 'r' must be a string"),
    ({"info": {"type": "json"}}, "missing field 'info.task'"),
    ({"q": "no blocks at all"}, "holds no '### Question:'"),
    ({"q": "### Question:\nWhat is it?\n\n### Reference:\nnot a sample\n\n### Answer:\n"}, "no sample matches index 1"),
])
def test_original_format_errors_name_the_line(samples, change, message):
    lines = [original(0, samples[0], "a"), original(1, samples[1], "b", overrides=change)]
    with pytest.raises(ResultsImportError) as caught:
        parse_results(lines, samples)
    assert [p.line for p in caught.value.problems] == [2]
    assert message in caught.value.problems[0].message


def test_identical_samples_are_taken_in_turn():
    twin = generate_cell(5, 1, 1, 1, seed=0, suite="twins")[0]
    twins = [dict(twin, id="twin-a"), dict(twin, id="twin-b")]
    lines = [original(0, twins[0], "1"), original(1, twins[1], "0")]
    _, rows = parse_results(lines, twins)
    assert [r["sample_id"] for r in rows] == ["twin-a", "twin-b"]
    with pytest.raises(ResultsImportError, match="no sample matches index 2"):
        parse_results(lines + [original(2, twins[0], "1")], twins)


def test_original_output_on_the_released_samples(official_dir):
    # The original pipeline: each released file becomes two prompts (without and with the
    # hint) in evaluate_dataset.jsonl; the index is the line number there.
    files = official.find_files(official_dir)
    released = [official.read_file(path) for path in files]
    lines, expected = [], []
    for path, sample in zip(files, released):
        raw = json.loads(path.read_text(encoding="utf-8"))
        folded = dict(sample, question=raw["Question"], requirement="", reference=raw["Reference"])
        for hint in (False, True):
            line = json.loads(original(len(lines), folded, raw["Answer"], engine="qwen", rule_hint=hint))
            line["q"] = original_prompt(folded, raw["Label"]["typename"], raw["RuleHint"] if hint else None)
            lines.append(json.dumps(line, ensure_ascii=False))
            expected.append(sample)
    _, rows = parse_results(lines, released, source="qwen.jsonl")
    assert len(rows) == 2 * len(released) == 232
    for row, sample in zip(rows, expected):
        matched = next(s for s in released if s["id"] == row["sample_id"])
        # the very file, or a released twin with the same reference, question and answer
        assert (matched["reference"], matched["question"], matched["answer"]) == \
            (sample["reference"], sample["question"], sample["answer"])
    scored = score_results(rows, released)
    assert all(r["score"] == 1.0 for r in scored)


# ---------------------------------------------------------------- scoring rows

def test_score_results_joins_sample_fields_and_scores_the_extracted_answer(samples):
    s = samples[6]
    rows = [{"sample_id": s["id"], "model": "m", "prompt": "self-cot",
             "response": f"### Reasoning:\nlong thoughts about nodes\n### Answer:\n{s['answer']}"}]
    progress = []
    scored = score_results(rows, samples, progress=lambda done, total: progress.append((done, total)))
    row = scored[0]
    assert row["answer_extracted"] == s["answer"]
    assert row["score"] == 1.0 and row["exact_match"] == 1
    assert row["rouge_l_full"] == pytest.approx(rouge_l(s["answer"], rows[0]["response"]))
    for key in ("suite", "language", "task", "task_id", "depth", "width"):
        assert row[key] == s[key]
    assert progress == [(1, 1)]
    assert scored_frame(scored).shape[0] == 1


def test_read_results_from_a_file(tmp_path, samples):
    path = tmp_path / "r.jsonl"
    path.write_text(ours(samples[0]["id"], "a") + "\n", encoding="utf-8")
    assert len(read_results(path, SampleIndex(samples))) == 1
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(ResultsImportError, match="not UTF-8"):
        read_results(path, samples)
    with pytest.raises(ResultsImportError, match="missing.jsonl: cannot open"):
        read_results(tmp_path / "missing.jsonl", samples)


# ---------------------------------------------------------------- the score command

def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="structext_core")
    cli_results.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def sample_file(tmp_path, samples) -> Path:
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, samples)
    return path


def test_score_command_prints_a_summary_and_writes_scored_rows(tmp_path, samples, sample_file, capsys):
    results = tmp_path / "results.jsonl"
    lines = [ours(s["id"], f"### Answer:\n{s['answer']}", model="good") for s in samples]
    lines += [ours(s["id"], "### Answer:\nno idea", model="bad") for s in samples]
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    status = run_cli(["score", str(results), "--samples", str(sample_file), "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 0
    table = {line.split()[0]: line.split() for line in captured.out.splitlines() if line.startswith(("good", "bad"))}
    assert table["good"][1:4] == ["naive", str(len(samples)), "100.0"]
    assert table["bad"][3] == "0.0"
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(scored) == 2 * len(samples)
    assert {"rouge_l", "score", "exact_match", "bleu", "answer_extracted", "language", "task_id"} <= set(scored[0])
    assert "scoring:" in captured.err


def test_score_command_groups_by_format(tmp_path, samples, sample_file, capsys):
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(ours(s["id"], s["answer"]) for s in samples), encoding="utf-8")
    assert run_cli(["score", str(results), "--samples", str(sample_file), "--by", "format,depth"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("format"))
    assert header.split()[:3] == ["format", "depth", "n"]


def test_score_command_stops_on_a_bad_line_and_writes_nothing(tmp_path, samples, sample_file, capsys):
    results = tmp_path / "results.jsonl"
    results.write_text(ours(samples[0]["id"], "a") + "\n{broken\n", encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    status = run_cli(["score", str(results), "--samples", str(sample_file), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert f"{results}:2: not valid JSON" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_score_command_reports_a_bad_samples_file(tmp_path, capsys):
    bad = tmp_path / "samples.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    results = tmp_path / "results.jsonl"
    results.write_text(ours("x", "a"), encoding="utf-8")
    assert run_cli(["score", str(results), "--samples", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "samples.jsonl, line 1" in err and "Traceback" not in err


def test_score_command_rejects_a_bad_threshold(tmp_path, sample_file, capsys):
    assert run_cli(["score", "x.jsonl", "--samples", str(sample_file), "--threshold", "2"]) == 2
    assert "--threshold" in capsys.readouterr().err
