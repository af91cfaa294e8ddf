"""The live checks: a faithful rewrite passes; a broken structure or answer is caught and located."""

import json
import re

import pytest

from structext_core.structext_eval import rewrite as rw
from structext_core.structext_eval.formats import LANGUAGES
from structext_core.structext_eval.tasks import TASKS
from tests.structext_eval.rewrite.support import check, edited, only_structure_problem, rewritten, sample

# ---- faithful rewrites ------------------------------------------------------------

@pytest.mark.parametrize("task_id", sorted(TASKS))
@pytest.mark.parametrize("depth", [1, 2])
def test_faithful_mapping_passes_every_check(task_id, depth):
    for index in range(3):
        s = sample(task_id, depth, index)
        texts = rewritten(s)
        report = check(s, texts)
        assert report.ok, (s["id"], [str(p) for p in report.problems])
        assert texts.reference != s["reference"]


def test_every_format_is_covered_by_the_faithful_test():
    assert {TASKS[t].language for t in TASKS} == set(LANGUAGES)


def test_unchanged_sample_passes():
    for task_id in TASKS:
        s = sample(task_id)
        assert check(s, rw.original_texts(s)).ok


def test_realistic_json_rewrite_by_hand():
    s = sample(8, depth=1)  # {"id":"k","Z":"w","subs":[{"id":"l","Y":"v","subs":[]}]}
    texts = rw.apply_mapping(s, {"k": "Stadium", "Z": "City", "w": "Eugene", "l": "Track",
                                 "Y": "Surface", "v": "synthetic rubber"})
    assert '"City":"Eugene"' in texts.reference
    assert texts.question == "What is the object with id Track?"
    assert texts.answer == '{\n"id":"Track",\n"Surface":"synthetic rubber",\n"subs":[]\n}'
    assert check(s, texts).ok


# ---- structure check: caught and located ---------------------------------------------

def test_json_dropped_field_is_caught_with_path_and_line():
    s = sample(9)  # answer: an id, so only the structure check can see a dropped field
    lines = rewritten(s).reference.split("\n")
    drop = next(i for i, ln in enumerate(lines) if ln.startswith(' "') and not ln.strip().startswith(('"id"', '"subs"')))
    report = edited(s, reference=lambda r: "\n".join(lines[:drop] + lines[drop + 1:]))
    problem = only_structure_problem(report)
    assert problem.where.startswith('obj["subs"][0]') and "line 1" in problem.where
    assert "a field is missing" in problem.message


def test_json_added_field_is_caught():
    s = sample(9)
    report = edited(s, reference=lambda r: r.replace('"subs":[', '"Extra":"thing",\n"subs":[', 1))
    problem = only_structure_problem(report)
    assert problem.where.startswith("obj (line 1") and "a field was added" in problem.message


def test_json_broken_nesting_is_caught():
    s = sample(9)
    ref = rewritten(s).reference
    # Move the first leaf object out of its parent's subs into the root's subs.
    obj = json_loads_pairs(ref)
    first_child = obj["subs"][0]
    leaf = first_child["subs"].pop()
    obj["subs"].append(leaf)
    report = rw.check_rewrite(s, json.dumps(obj, indent=1), rewritten(s).question, rewritten(s).answer)
    problem = only_structure_problem(report)
    assert "object(s) in subs" in problem.message and problem.where.startswith("obj ")


def json_loads_pairs(text):
    return json.loads(text)


def test_json_duplicate_key_from_free_edit_is_caught():
    s = next(x for x in (sample(9, 1, i) for i in range(20)) if len(re.findall(r'^"[A-Z]+":', x["reference"], re.M)) >= 2)
    lines = s["reference"].split("\n")
    first_key = re.match(r'"([A-Z]+)":', lines[2]).group(1)
    lines[3] = re.sub(r'^"[A-Z]+":', f'"{first_key}":', lines[3])  # same shape, but a duplicate key
    report = rw.check_rewrite(s, "\n".join(lines), s["question"], s["answer"])
    assert any(p.message == f"the key {first_key!r} appears twice in one object" and p.where == "obj (line 1)"
               for p in report.structure), report.structure


def test_json_that_does_not_parse_is_caught_with_line_and_column():
    s = sample(8)
    report = edited(s, reference=lambda r: r.replace("},", "}", 1))
    assert report.parse and re.search(r"line \d+, column \d+", report.parse[0].message)


def test_yaml_dropped_field_and_broken_nesting_are_caught():
    s = sample(14)
    base = rewritten(s).reference.split("\n")
    drop = next(i for i, ln in enumerate(base) if i > 0 and not re.match(r"^\s*(-\s+)?(id|subs):", ln))
    report = rw.check_rewrite(s, "\n".join(base[:drop] + base[drop + 1:]), rewritten(s).question, rewritten(s).answer)
    problem = only_structure_problem(report)
    assert "a field is missing" in problem.message and "line" in problem.where
    # Broken nesting: indent the second top-level item under the first one's subs.
    lines = rewritten(s).reference.split("\n")
    items = [i for i, ln in enumerate(lines) if ln.startswith("- id:")]
    moved = lines[:items[1]] + ["  " + ln for ln in lines[items[1]:]]
    report = rw.check_rewrite(s, "\n".join(moved), rewritten(s).question, rewritten(s).answer)
    assert not report.structure_ok
    assert any("subs" in p.message or "nesting" in p.message or "read" in p.message
               for p in report.parse + report.structure)


def test_xml_dropped_attribute_and_extra_element_are_caught():
    s = sample(19)
    texts = rewritten(s)
    declaration, body = texts.reference.split("\n", 1)
    dropped = declaration + "\n" + re.sub(r' \w+="[^"]*"', "", body, count=1)
    report = rw.check_rewrite(s, dropped, texts.question, texts.answer)
    problem = only_structure_problem(report)
    assert problem.where.startswith("element /") and "an attribute is missing" in problem.message
    lines = texts.reference.split("\n")
    extra = lines[:2] + ['<Extra kind="x">', " note", "</Extra>"] + lines[2:]
    report = rw.check_rewrite(s, "\n".join(extra), texts.question, texts.answer)
    problem = only_structure_problem(report)
    assert "child element(s)" in problem.message and "line 2" in problem.where


def test_xml_missing_declaration_is_caught():
    s = sample(19)
    texts = rewritten(s)
    report = rw.check_rewrite(s, texts.reference.split("\n", 1)[1], texts.question, texts.answer)
    assert any("declaration" in p.message for p in report.structure)


@pytest.mark.parametrize("task_id, marker", [(22, "#"), (25, None), (28, "*")])
def test_markup_changed_heading_level_is_caught(task_id, marker):
    s = sample(task_id)
    texts = rewritten(s)
    lines = texts.reference.split("\n")
    i = next(n for n, ln in enumerate(lines) if n > 0 and (ln.startswith(marker + " ") if marker else
                                                          ln.startswith("\\subsection{")))
    if marker:
        lines[i] = marker + lines[i]
    else:
        lines[i] = lines[i].replace("\\subsection{", "\\subsubsection{", 1)
    report = rw.check_rewrite(s, "\n".join(lines), texts.question, texts.answer)
    problem = only_structure_problem(report)
    assert f"line {i + 1} of the rewrite" in problem.where
    assert "level 2" in problem.message or "level 3" in problem.message


def test_markup_added_heading_and_lost_bold_are_caught():
    s = sample(21)
    texts = rewritten(s)
    report = rw.check_rewrite(s, texts.reference + "\n# Extra\nmore words", texts.question, texts.answer)
    problem = only_structure_problem(report)
    assert "the first extra heading is 'Extra'" in problem.message
    report = rw.check_rewrite(s, texts.reference.replace("**", "", 2), texts.question, texts.answer)
    problem = report.structure[0]
    assert "bold run(s)" in problem.message and "line" in problem.where


def test_csv_extra_row_is_caught_with_its_line():
    s = sample(1)
    texts = rewritten(s)
    lines = texts.reference.split("\n")
    lines.insert(3, lines[2])
    report = rw.check_rewrite(s, "\n".join(lines), texts.question, texts.answer)
    problem = only_structure_problem(report)
    assert problem.where.startswith("table 1") and "an extra row starts on line 4" in problem.message


def test_csv_changed_header_non_number_and_broken_join_are_caught():
    s = sample(4)
    texts = rewritten(s)
    report = rw.check_rewrite(s, texts.reference.replace("height", "tallness", 1), texts.question, texts.answer)
    assert "they must stay" in only_structure_problem(report).message
    lines = texts.reference.split("\n")
    cells = lines[1].split(",")
    cells[4] = "tall"
    report = rw.check_rewrite(s, "\n".join([lines[0], ",".join(cells)] + lines[2:]), texts.question, texts.answer)
    assert any(p.where == "line 2, column height" for p in report.structure)
    first_job = lines.index("") + 2  # 0-based index of the first row of the second table
    cells = lines[first_job].split(",")
    cells[0] = "Nobody"
    joined = lines[:first_job] + [",".join(cells)] + lines[first_job + 1:]
    report = rw.check_rewrite(s, "\n".join(joined), texts.question, texts.answer)
    assert any("no longer join" in p.message and p.where == f"line {first_job + 1}, column primeKey"
               for p in report.structure)


def test_tree_broken_nesting_is_caught():
    s = sample(5)
    texts = rewritten(s)
    lines = texts.reference.split("\n")
    root = lines[0].split("->")[0]
    leaf = lines[1].split("->")[1]
    lines[1] = f"{root}->{leaf}"  # re-hang a grandchild under the root
    report = rw.check_rewrite(s, "\n".join(lines), texts.question, texts.answer)
    problem = only_structure_problem(report)
    assert problem.where == f"node {root!r} (was {s['reference'].split('->')[0]!r})"
    assert "child(ren) in the original" in problem.message


def test_syntax_sample_that_loses_its_error_is_caught():
    for index in range(20):
        s = sample(10, index=index)
        if s["answer"] == "True":
            break
    assert s["answer"] == "True"
    texts = rewritten(s)
    valid = rewritten(sample(9)).reference  # a document of the same kind without the error
    report = rw.check_rewrite(s, valid, texts.question, texts.answer)
    assert any("must keep it" in p.message for p in report.parse)
    assert not report.answer_ok  # and the solver now says False


# ---- answer check -------------------------------------------------------------------

def test_salary_moved_above_the_threshold_is_caught():
    for index in range(64):
        s = sample(2, index=index)
        threshold = s["params"]["threshold"]
        below = [t.text for t in rw.extract_tokens(s)
                 if "number" in t.kinds and t.text.isdigit() and 10000 <= int(t.text) <= threshold
                 and t.text in s["reference"].split("\n\n")[1]]
        if below:
            break
    mapping = {below[0]: str(threshold + 1)}
    texts = rw.apply_mapping(s, mapping)
    report = check(s, texts)
    assert report.structure_ok and not report.answer_ok
    expected = str(int(s["answer"]) + 1)
    assert report.answer[0].message == (f"the rewritten answer is {s['answer']!r}, the solver derives "
                                        f"{expected!r} from the rewritten reference")


def test_height_in_the_join_changed_by_free_edit_is_caught():
    for index in range(64):
        s = sample(4, index=index)
        if s["answer"] != "0":
            break
    assert s["answer"] != "0"
    texts = rewritten(s, {})
    height = str(int(s["params"]["height"]))
    people = texts.reference.split("\n\n")[0].split("\n")
    for n, row in enumerate(people[1:], 1):
        cells = row.split(",")
        if float(cells[4]) > float(height):
            cells[4] = height  # no longer strictly taller
            people[n] = ",".join(cells)
            break
    reference = "\n".join(people) + "\n\n" + texts.reference.split("\n\n")[1]
    report = rw.check_rewrite(s, reference, texts.question, texts.answer)
    assert report.structure_ok and not report.answer_ok
    assert "the solver derives" in report.answer[0].message


def test_broken_question_frame_is_reported_on_the_question():
    s = sample(6)
    texts = rewritten(s)
    report = rw.check_rewrite(s, texts.reference, "How deep is node X?", texts.answer)
    assert report.answer[0].where == "question" and "keep the original sentence" in report.answer[0].message


def test_excerpt_answer_difference_names_the_line():
    s = sample(8)
    texts = rewritten(s)
    lines = texts.answer.split("\n")
    lines[1] = lines[1].replace('"', "'")
    report = rw.check_rewrite(s, texts.reference, texts.question, "\n".join(lines))
    assert report.answer[0].message.startswith("line 2 of the answer reads")


def test_warnings_for_leftover_tokens_and_contact_details():
    s = sample(21)
    report = rw.check_rewrite(s, s["reference"] + " mail me at jo@example.com", s["question"], s["answer"])
    assert any("still in the reference" in w for w in report.warnings)
    assert any("e-mail" in w for w in report.warnings)


def test_yaml_alias_inside_its_own_collection_is_a_parse_problem():
    s = sample(13)
    texts = rewritten(s)
    for recursive in ("&a [*a]", "a: &x\n  b: *x\n"):
        report = rw.check_rewrite(s, recursive, texts.question, texts.answer)
        assert not report.structure_ok
        assert any("alias stands inside the collection it names" in p.message for p in report.parse), report.parse


def test_every_format_compares_its_own_structure():
    for language in LANGUAGES:
        task_id = min(t for t, task in TASKS.items() if task.language == language and not task.inject_errors)
        s = sample(task_id)
        assert rw.check_structure(language, s["reference"], rewritten(s).reference) == ([], [])
