"""The reviewer's diff of original and rewrite: what it marks, and its bounds."""

import time

import pytest

from structext_core.structext_eval import rewrite
from structext_core.structext_eval.rewrite import diff as diff_module
from structext_core.structext_eval.suites import generate_cell


@pytest.fixture
def sample():
    return generate_cell(8, 1, 1, 1)[0]  # JSON object by id: reference, question and answer all change


def test_a_faithful_rewrite_marks_each_changed_line_in_every_part(sample):
    mapping = rewrite.mechanical_mapping(sample)
    rewritten = rewrite.apply_mapping(sample, mapping)
    reference, question, answer = rewrite.diff_texts(rewrite.original_texts(sample), rewritten)
    assert [d.part for d in (reference, question, answer)] == ["reference", "question", "answer"]
    lines = reference.text.split("\n")
    assert lines[:2] == ["--- original reference", "+++ rewritten reference"] and lines[2].startswith("@@ ")
    removed = [line[1:] for line in lines[3:] if line.startswith("-")]
    added = [line[1:] for line in lines[3:] if line.startswith("+")]
    changed = [(o, r) for o, r in zip(sample["reference"].split("\n"), rewritten.reference.split("\n")) if o != r]
    assert removed == [o for o, _ in changed] and added == [r for _, r in changed]
    assert (reference.added, reference.removed) == (len(changed), len(changed))
    assert reference.summary == f"+{len(changed)} / -{len(changed)} lines" and reference.note is None
    assert question.text.split("\n")[-2:] == [f"-{sample['question']}", f"+{rewritten.question}"]
    assert answer.added == answer.removed > 0


def test_unchanged_parts_say_so(sample):
    texts = rewrite.original_texts(sample)
    edited = rewrite.Texts(texts.reference.replace('"id":', '"id" :', 1), texts.question, texts.answer)
    reference, question, answer = rewrite.diff_texts(texts, edited)
    assert (reference.added, reference.removed) == (1, 1) and not reference.identical
    assert question.identical and answer.identical and question.summary == "unchanged" and question.text == ""


def test_a_long_diff_is_cut_with_a_note_counting_everything(sample):
    original = "\n".join(f"a{i}" for i in range(100))
    rewritten = "\n".join(f"b{i}" for i in range(100))
    cut = rewrite.diff_text("reference", original, rewritten, max_lines=50)
    assert len(cut.text.split("\n")) == 50 and (cut.added, cut.removed) == (100, 100)
    assert cut.note == "The diff has 203 lines; the first 50 are shown (100 added and 100 removed in all)."


@pytest.mark.parametrize("side", ["original", "rewrite"])
def test_parts_beyond_the_bounds_are_not_compared_and_say_why(side):
    small = "x\ny"
    too_many_lines = "\n".join("z" for _ in range(diff_module.MAX_DIFF_INPUT_LINES + 1))
    too_long = "z" * (diff_module.MAX_DIFF_INPUT_CHARS + 1)
    for big in (too_many_lines, too_long):
        original, rewritten = (big, small) if side == "original" else (small, big)
        result = rewrite.diff_text("reference", original, rewritten)
        assert not result.compared and result.text == "" and result.summary == "not compared"
        assert result.note.startswith(f"Not compared: the {side}'s reference has ")


def test_the_worst_case_within_the_bounds_stays_quick():
    """difflib is quadratic at worst (every other line changed): the bound keeps it under a second
    or so even on a busy machine."""
    n = diff_module.MAX_DIFF_INPUT_LINES
    original = "\n".join(f"l{i}" for i in range(n))
    rewritten = "\n".join(f"l{i}" if i % 2 else f"m{i}" for i in range(n))
    start = time.perf_counter()
    result = rewrite.diff_text("reference", original, rewritten)
    assert time.perf_counter() - start < 5
    assert result.compared and result.added == n // 2 and result.note  # cut to MAX_DIFF_LINES
