"""Prompt settings, demonstration pools and the ``prompts`` command."""

from __future__ import annotations

import argparse
import json

import pytest

from structext_core.structext_eval import prompts
from structext_core.structext_eval.cli import model_runs as cli_results
from structext_core.structext_eval.prompts import (
    SETTINGS,
    DemonstrationPool,
    PromptError,
    build_prompt,
    build_prompts,
    check_setting,
)
from structext_core.structext_eval.samples import write_jsonl
from structext_core.structext_eval.suites import generate_cell
from structext_core.structext_eval.tasks import TASKS

# One task of every format, at a small grid cell.
TASK_PER_FORMAT = {}
for _task in TASKS.values():
    TASK_PER_FORMAT.setdefault(_task.language, _task.task_id)


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    rows = []
    for task_id in sorted(TASK_PER_FORMAT.values()):
        rows += generate_cell(task_id, 2, 1, 3, seed=5, suite="prompt-test")
    return rows


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_setting_holds_the_sample_and_asks_for_the_answer_marker(samples, setting):
    records = build_prompts(samples, setting)
    assert [r["sample_id"] for r in records] == [s["id"] for s in samples]
    for record, sample in zip(records, samples):
        text = record["prompt"]
        assert record["setting"] == setting
        assert f"### Question:\n{sample['question']}" in text
        assert f"### Reference:\n{sample['reference'].strip(chr(10))}" in text
        assert f"### Requirement:\n{sample['requirement']}" in text
        assert prompts.format_name(sample["language"]) in text.splitlines()[0]
        # the instruction comes last and names the marker the scorer extracts after
        instruction = text[text.rindex("### Requirement:"):]
        assert "### Answer:" in instruction
        expected_shots = prompts.DEFAULT_SHOTS if setting in prompts.FEW_SHOT_SETTINGS else 0
        assert len(record["demonstrations"]) == expected_shots


@pytest.mark.parametrize("setting, marker, present", [
    ("naive", "### Reasoning:", False),
    ("self-cot", "### Reasoning:", True),
    ("self-cot", "step by step", True),
    ("ps-cot", "### Plan:", True),
    ("ps-cot", "### Solution:", True),
    ("naive", "### Plan:", False),
    ("naive", "### Rule Hint:", False),
    ("hint", "### Rule Hint:", True),
    ("few-shot", "#### Demonstration 1", True),
    ("naive", "#### Demonstration", False),
])
def test_setting_specific_sections(samples, setting, marker, present):
    text = build_prompts(samples[:1], setting)[0]["prompt"]
    assert (marker in text) == present


def test_the_hint_is_the_tasks(samples):
    for sample in samples:
        text = build_prompt(sample, "hint")
        hint = TASKS[sample["task_id"]].rule_hint
        assert f"### Rule Hint:\n{hint}" in text
        others = {t.rule_hint for t in TASKS.values() if t.rule_hint != hint}
        assert not any(other in text for other in others)


@pytest.mark.parametrize("setting", ["few-shot", "simple-few-shot"])
def test_demonstrations_share_task_and_cell_and_never_include_the_sample(samples, setting):
    records = build_prompts(samples, setting, shots=4)
    evaluated_ids = {s["id"] for s in samples}
    evaluated_content = {(s["reference"], s["question"]) for s in samples}
    pool = DemonstrationPool(samples)
    for record, sample in zip(records, samples):
        demos = pool.select(sample, setting, 4)
        assert [d["id"] for d in demos] == record["demonstrations"]
        assert len(set(record["demonstrations"])) == 4
        for demo in demos:
            assert (demo["task_id"], demo["depth"], demo["width"], demo["col"]) == \
                (sample["task_id"], sample["depth"], sample["width"], sample["col"])
            assert demo["id"] not in evaluated_ids
            assert (demo["reference"], demo["question"]) not in evaluated_content
            assert f"### Reference:\n{demo['reference'].strip(chr(10))}" in record["prompt"]
            assert f"### Answer:\n{demo['answer'].strip(chr(10))}" in record["prompt"]
        # the evaluated sample comes after every demonstration
        assert record["prompt"].rindex("#### Demonstration") < record["prompt"].rindex("### Question:")


def test_demonstrations_skip_pool_samples_equal_to_evaluated_ones():
    # Tree height at depth 1, width 1 has few distinct documents; make the evaluated set the
    # very first pool samples under other ids, so the pool must look past all of them.
    first_pool = generate_cell(5, 1, 1, prompts.FEW_SHOT_POOL, seed=0, suite="demo-pool-0")
    evaluated = [dict(s, id=f"eval-{i}") for i, s in enumerate(first_pool)]
    build_prompts(evaluated, "few-shot", shots=3)
    taken = {(s["reference"], s["question"]) for s in evaluated}
    pool = DemonstrationPool(evaluated)
    for sample in evaluated:
        demos = pool.select(sample, "few-shot", 3)
        assert all((d["reference"], d["question"]) not in taken for d in demos)
        assert all(d["id"] not in {s["id"] for s in first_pool} for d in demos)


def test_demonstrations_are_deterministic_and_follow_the_seed(samples):
    first = build_prompts(samples, "few-shot")
    again = build_prompts(samples, "few-shot")
    other_seed = build_prompts(samples, "few-shot", demo_seed=1)
    assert first == again
    assert [r["demonstrations"] for r in first] != [r["demonstrations"] for r in other_seed]
    assert all(d.startswith("demo-pool-1-") for r in other_seed for d in r["demonstrations"])


def test_simple_few_shot_takes_the_shortest_of_its_pool(samples):
    sample = next(s for s in samples if s["language"] == "json")
    chosen = DemonstrationPool([sample]).select(sample, "simple-few-shot", 3)
    pool = generate_cell(sample["task_id"], sample["depth"], sample["width"], prompts.SIMPLE_POOL,
                         seed=0, suite="demo-pool-0", col=sample["col"])
    rest = [d for d in pool if d["id"] not in {c["id"] for c in chosen}]
    size = lambda d: len(d["reference"]) + len(d["answer"])  # noqa: E731
    assert max(map(size, chosen)) <= min(map(size, rest))
    few = DemonstrationPool([sample]).select(sample, "few-shot", 3)
    assert sum(map(size, chosen)) <= sum(map(size, few))


@pytest.mark.parametrize("setting, shots, message", [
    ("chain", None, "unknown prompt setting"),
    ("naive", 3, "applies to few-shot settings"),
    ("few-shot", 0, "between 1 and"),
    ("simple-few-shot", prompts.MAX_SHOTS + 1, "between 1 and"),
])
def test_bad_settings_are_refused(setting, shots, message):
    with pytest.raises(PromptError, match=message):
        check_setting(setting, shots)


def test_build_prompt_refuses_demonstrations_for_zero_shot(samples):
    with pytest.raises(PromptError):
        build_prompt(samples[0], "naive", demonstrations=[samples[1]])


# ---------------------------------------------------------------- the prompts command

def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="structext_core")
    cli_results.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_prompts_command_writes_one_record_per_sample(tmp_path, samples, capsys):
    source = tmp_path / "samples.jsonl"
    write_jsonl(source, samples)
    out = tmp_path / "prompts.jsonl"
    assert run_cli(["prompts", "--samples", str(source), "--setting", "few-shot", "--shots", "2",
                    "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(samples)
    assert set(records[0]) == {"sample_id", "setting", "prompt", "demonstrations"}
    assert all(len(r["demonstrations"]) == 2 for r in records)
    assert f"wrote {len(samples)} few-shot prompts" in capsys.readouterr().out


def test_prompts_command_zero_shot_has_no_demonstrations(tmp_path, samples):
    source = tmp_path / "samples.jsonl"
    write_jsonl(source, samples[:3])
    out = tmp_path / "prompts.jsonl"
    assert run_cli(["prompts", "--samples", str(source), "--setting", "ps-cot", "--out", str(out)]) == 0
    assert all(json.loads(line)["demonstrations"] == [] for line in out.read_text().splitlines())


@pytest.mark.parametrize("argv_tail, message", [
    (["--setting", "naive", "--shots", "2"], "applies to few-shot settings"),
    (["--setting", "few-shot", "--shots", "0"], "between 1 and"),
])
def test_prompts_command_errors(tmp_path, samples, capsys, argv_tail, message):
    source = tmp_path / "samples.jsonl"
    write_jsonl(source, samples[:2])
    out = tmp_path / "prompts.jsonl"
    assert run_cli(["prompts", "--samples", str(source), "--out", str(out), *argv_tail]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_prompts_command_names_a_broken_samples_line(tmp_path, samples, capsys):
    source = tmp_path / "samples.jsonl"
    source.write_text(json.dumps(samples[0]) + "\n{oops\n", encoding="utf-8")
    out = tmp_path / "prompts.jsonl"
    assert run_cli(["prompts", "--samples", str(source), "--setting", "naive", "--out", str(out)]) == 2
    assert "line 2" in capsys.readouterr().err
    assert not out.exists()
