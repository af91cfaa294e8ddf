"""The mapping: which replacements may stand where, applying them, reading pasted lines."""

import pytest

from structext_core.structext_eval import rewrite as rw
from structext_core.structext_eval.tasks import TASKS
from tests.structext_eval.rewrite.support import check, sample


def test_substitution_replaces_whole_tokens_only():
    assert rw.substitute("male,female\nmale", {"male": "men"}) == "men,female\nmen"
    assert rw.substitute("a->ab\nab->b", {"a": "Root", "ab": "Child"}) == "Root->Child\nChild->b"
    assert rw.substitute("![alt](vq.png \"hover text\")", {"vq.png": "x.jpg"}) == '![alt](x.jpg "hover text")'


def test_substitution_is_one_pass_never_chained():
    assert rw.substitute("k->l", {"k": "l", "l": "m"}) == "l->m"


def test_question_frame_is_kept_even_when_a_token_equals_a_frame_word():
    s = sample(6, depth=2)
    node = s["params"]["node"]
    texts = rw.apply_mapping(s, {node: "the"})
    assert texts.question == "What is the depth of node the?"
    assert check(s, texts).answer_ok


def test_count_answers_are_never_mapped():
    s = sample(5, depth=1)  # tree height: answer "1"
    s = {**s, "reference": s["reference"]}
    texts = rw.apply_mapping(s, {t.text: "1" for t in rw.extract_tokens(s)[:1]})
    assert texts.answer == s["answer"]


def test_empty_and_unchanged_replacements_mean_unmapped():
    s = sample(9, depth=1)
    first = rw.extract_tokens(s)[0].text
    assert rw.clean_mapping({first: "  ", "x": None, "y": "y", "z": " Zed "}) == {"z": "Zed"}
    assert rw.apply_mapping(s, {first: ""}) == rw.original_texts(s)


@pytest.mark.parametrize("task_id, pick, replacement, expected", [
    (1, "cell", "New York, NY", "comma"),
    (8, "value", 'say "hi"', "double quote"),
    (13, "value", "time: noon", "YAML"),
    (18, "tag", "Race Event", "XML tag and attribute names"),
    (18, "value", "R&D", "markup characters"),
    (5, "node", "a->b", "'->'"),
    (21, "word", "**loud**", "markup"),
    (23, "file", "my photo.png", "file name"),
    (2, "number", "lots", "number"),
])
def test_replacements_that_would_break_the_format_are_refused(task_id, pick, replacement, expected):
    s = sample(task_id)
    tokens = rw.extract_tokens(s)
    if pick == "cell":
        token = next(t for t in tokens if "location" in t.kinds)
    else:
        token = next(t for t in tokens if pick in t.kinds)
    problems = rw.validate_mapping(s, {token.text: replacement})
    assert len(problems) == 1
    assert token.text in problems[0].where and expected in problems[0].message
    with pytest.raises(rw.MappingError):
        rw.apply_mapping(s, {token.text: replacement})


def test_unknown_token_and_reserved_word_are_refused():
    s = sample(8)
    problems = rw.validate_mapping(s, {"nope-not-here": "X", rw.extract_tokens(s)[1].text: "subs"})
    messages = " | ".join(str(p) for p in problems)
    assert "'nope-not-here' is not an abstract token" in messages
    assert "word of the json syntax" in messages


def test_two_ids_may_not_get_the_same_name():
    s = sample(8)
    ids = [t.text for t in rw.extract_tokens(s) if "id" in t.kinds]
    problems = rw.validate_mapping(s, {ids[0]: "Tokyo", ids[1]: "Tokyo"})
    assert len(problems) == 1 and "both would be named 'Tokyo'" in problems[0].message
    # ... nor take the name of a token left as it is
    problems = rw.validate_mapping(s, {ids[0]: ids[1]})
    assert len(problems) == 1 and f"both would be named {ids[1]!r}" in problems[0].message


def test_plain_values_may_repeat():
    s = sample(1)
    genders = [t.text for t in rw.extract_tokens(s) if "gender" in t.kinds]
    assert rw.validate_mapping(s, {g: "woman" for g in genders}) == []


def test_pasted_mapping_lines_are_read_and_bad_lines_named():
    assert rw.parse_mapping_text("k -> Tokyo\n\n# comment\nZ ->  City  \n") == {"k": "Tokyo", "Z": "City"}
    with pytest.raises(rw.MappingError) as info:
        rw.parse_mapping_text("k -> Tokyo\nk Osaka\nk -> Kyoto")
    assert [p.where for p in info.value.problems] == ["line 2", "line 3"]
    assert "expected 'token -> replacement'" in info.value.problems[0].message
    assert "mapped twice" in info.value.problems[1].message


def test_has_free_edits():
    s = sample(9, depth=1)
    mapping = rw.mechanical_mapping(s)
    texts = rw.apply_mapping(s, mapping)
    assert not rw.has_free_edits(s, mapping, texts)
    edited = rw.Texts(texts.reference.replace("Real", "Reel", 1), texts.question, texts.answer)
    assert rw.has_free_edits(s, mapping, edited)


def test_fixed_answer_tasks_come_from_the_registry():
    # Counts (Statistic, Join, NodeDepth, TreeHeight) and True/False (Syntax): what the mapping never touches.
    assert rw.FIXED_ANSWER_TASKS == {2, 3, 4, 5, 6, 10, 15, 20}
    assert rw.FIXED_ANSWER_TASKS == {t for t, task in TASKS.items() if task.category in rw.FIXED_ANSWER_CATEGORIES}
