"""The lab's set import: Inspect-style JSONL, CSV, read as Inspect reads them, and hostile input refused."""
from __future__ import annotations

import json
import os

import pytest

from structext_core.labset.dataset import LIMITS, LabSetError, load_set
from tests.labset.conftest import png, samples, write_set


def test_the_70_sample_inspect_file_is_read_with_its_images_and_strata(lab_set):
    items = load_set(lab_set)
    assert len(items) == 70
    assert [i["format"] for i in items].count("choice") == 50 and [i["format"] for i in items].count("short") == 20
    with_image = [i for i in items if i["image"]]
    assert [i["image"] for i in with_image] == [f"images/q{n}.png" for n in range(10)]
    assert len({i["image_sha256"] for i in with_image}) == 10
    assert {i["stratum"] for i in items} == {"maps", "music", "tides"}
    assert items[1]["target"] == ["B"] and items[51]["target"] == ["City 1", "the city 1"]
    assert items[50]["source_id"] == "0" and len({i["id"] for i in items}) == 70


def test_an_item_is_identified_by_its_content_not_by_its_set_or_id(tmp_path, lab_set):
    first = load_set(lab_set)
    renamed = [dict(s, id=f"other-{n}") for n, s in enumerate(samples())]
    other = tmp_path / "copy"
    other.mkdir()
    assert [i["id"] for i in load_set(write_set(other, renamed, "another.jsonl"))] == [i["id"] for i in first]
    (other / "images" / "q0.png").write_bytes(png(4, 3, 99))  # other pixels: another item
    changed = load_set(other / "another.jsonl")
    assert changed[40]["id"] != first[40]["id"] and changed[41]["id"] == first[41]["id"]


def test_it_reads_the_file_as_inspects_json_dataset_does(lab_set):
    from inspect_ai.dataset import json_dataset
    ours = load_set(lab_set)
    theirs = list(json_dataset(str(lab_set)))
    assert [str(s.id) for s in theirs] == [i["source_id"] for i in ours]
    for sample, item in zip(theirs, ours):
        assert (sample.choices or []) == item["choices"]
        assert ([sample.target] if isinstance(sample.target, str) else sample.target) == item["target"]
        if isinstance(sample.input, str):
            assert sample.input == item["question"]
        else:
            content = sample.input[0].content
            assert "\n\n".join(c.text for c in content if c.type == "text") == item["question"]
            images = [c.image for c in content if c.type == "image"]
            assert images == [str(lab_set.parent / item["image"])]  # resolved beside the file, as ours


def test_a_sample_without_an_id_is_named_by_its_line(tmp_path):
    path = write_set(tmp_path, [{"input": "Q1?", "target": "x"}, {"id": None, "input": "Q2?", "target": "y"}])
    assert [i["source_id"] for i in load_set(path)] == ["1", "2"]


def test_a_csv_set_is_read(tmp_path):
    (tmp_path / "set.csv").write_text(
        "id,input,A,B,C,target,subject\n"
        "1,\"Which, of these?\",red,green,,B,maps\n"
        "2,Capital of France?,,,,Paris | paris city,music\n", encoding="utf-8")
    first, second = load_set(tmp_path / "set.csv")
    assert first["choices"] == ["red", "green"] and first["target"] == ["B"] and first["stratum"] == "maps"
    assert second["format"] == "short" and second["target"] == ["Paris", "paris city"]


def _refused(tmp_path, records, *expected, name="set.jsonl"):
    path = write_set(tmp_path, records, name)
    with pytest.raises(LabSetError) as error:
        load_set(path)
    for text in expected:
        assert text in str(error.value)
    return str(error.value)


def _one(**fields):
    return {"id": "x", "input": "Which?", "choices": ["a", "b"], "target": "A", **fields}


@pytest.mark.parametrize(("records", "expected"), [
    ([_one(), _one(input="Other?")], ("set.jsonl:2:", "'x' is already the id of line 1")),
    ([_one(), _one(id="y")], ("set.jsonl:2:", "same question, options and target as line 1")),
    ([_one(choices=["only"])], ("set.jsonl:1:", "field 'choices'", "one option asks nothing")),
    ([_one(target="C")], ("field 'target'", "one letter among A, B")),
    ([_one(target=["A", "B"])], ("field 'target'",)),
    ([_one(choices=[f"o{n}" for n in range(11)])], ("field 'choices'",)),
    ([_one(image="../secret.png")], ("field 'image'", "leaves the dataset's folder")),
    ([_one(image="/etc/passwd")], ("field 'image'", "leaves the dataset's folder")),
    ([_one(image="images/missing.png")], ("does not exist",)),
    ([_one(image="data:image/png;base64,AAAA")], ("embedded image",)),
    ([_one(input=[{"role": "user", "content": [{"type": "image", "image": "../x.png"}]}])],
     ("field 'input[0]'.content[0].image", "leaves")),
    ([_one(input=[{"role": "user", "content": [{"type": "audio", "audio": "a.wav"}]}])], ("only text and image",)),
    ([_one(input="x" * (LIMITS["question_chars"] + 1))], ("field 'input'", "more than")),
    ([_one(input="")], ("field 'input'", "non-empty")),
    ([_one(metadata={"subject": {"deep": 1}})], ("metadata.subject",)),
    ([_one(metadata={"answer_rule": "fuzzy"})], ("metadata.answer_rule",)),
    ([_one(id=True)], ("field 'id'",)),
    ([_one(), "not an object"], ("set.jsonl:2:", "JSON object")),
])
def test_hostile_or_wrong_lines_are_refused_naming_line_and_field(tmp_path, records, expected):
    _refused(tmp_path, records, *expected)


def test_every_line_at_fault_is_listed_and_none_is_kept(tmp_path):
    message = _refused(tmp_path, [_one(id="a"), _one(id="b", target="Z"), _one(id="c", input=""), _one(id="a", input="Q")])
    assert "3 problem(s)" in message and ":2:" in message and ":3:" in message and ":4:" in message


def test_bad_json_deep_json_long_lines_and_bad_images_are_refused(tmp_path):
    path = write_set(tmp_path, [_one()])
    deep = "[" * (LIMITS["json_depth"] + 5) + "]" * (LIMITS["json_depth"] + 5)
    path.write_text(json.dumps(_one()) + "\n{not json\n" + deep + "\n" + "x" * (LIMITS["line_chars"] + 1) + "\n")
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert ":2: not JSON" in message and ":3: nests deeper" in message and ":4:" in message and "characters" in message
    (tmp_path / "images" / "big.png").write_bytes(png(1, 1)[:16] + (5000).to_bytes(4, "big") * 2 + png(1, 1)[24:])
    (tmp_path / "images" / "text.png").write_text("not an image")
    os.symlink("/etc/hostname", tmp_path / "images" / "out.png")
    _refused(tmp_path, [_one(id="1", image="images/big.png"), _one(id="2", image="images/text.png", input="Q2"),
                        _one(id="3", image="images/out.png", input="Q3")],
             ":1:", "pixels", ":2:", "not a PNG or JPEG", ":3:", "link out")


def test_size_limits_on_file_and_items(tmp_path, monkeypatch):
    path = write_set(tmp_path, [_one(id=n, input=f"Q{n}") for n in range(5)])
    monkeypatch.setitem(LIMITS, "items", 4)
    assert "more than 4" in _refused(tmp_path, [_one(id=n, input=f"Q{n}") for n in range(5)])
    monkeypatch.setitem(LIMITS, "file_bytes", 10)
    assert "bytes, more than 10" in str(pytest.raises(LabSetError, load_set, path).value)
    assert "cannot be read" in str(pytest.raises(LabSetError, load_set, tmp_path / "nope.jsonl").value)


@pytest.mark.parametrize(("text", "expected"), [
    ("id,question,target\n1,Q?,A\n", "no options"),
    ("id,input,A,B,target\n1,Q?,x,y,B\n2,Q2?,x,B\n", "set.csv:3: 4 cells, the header has 5"),
    ("id,input,A,B,target\n1,Q?,x,,A\n", "set.csv:2: field 'choices'"),  # one option given: refused
    ("id,input,target\n1,\"" + "x" * 200_000 + "\",A\n", "cannot be read"),
])
def test_a_wrong_csv_is_refused_naming_the_line(tmp_path, text, expected):
    (tmp_path / "set.csv").write_text(text, encoding="utf-8")
    assert expected in str(pytest.raises(LabSetError, load_set, tmp_path / "set.csv").value)


# ---------------------------------------------------------------- hostile text (issue 44, item 6)

@pytest.mark.parametrize(("record", "expected"), [
    (_one(input="Wh\x00ich?"), "set.jsonl:1: field 'input': holds a NUL character"),
    (_one(choices=["a", "b\x00"]), "set.jsonl:1: field 'choices[1]': holds a NUL character"),
    (_one(id="x\x00"), "set.jsonl:1: field 'id': holds a NUL character"),
    (_one(target="A\x00"), "set.jsonl:1: field 'target': holds a NUL character"),
    (_one(metadata={"subject": "m\x00"}), "set.jsonl:1: field 'metadata.subject': holds a NUL character"),
])
def test_a_nul_in_any_text_is_refused_by_line_and_field(tmp_path, record, expected):
    _refused(tmp_path, [record], expected)


@pytest.mark.parametrize("field", ["input", "id", "target", "choices", "metadata"])
def test_a_lone_surrogate_is_a_named_refusal_not_a_traceback(tmp_path, field):
    value = {"input": '"Wh\\ud800ich?"', "id": '"x\\udc00"', "target": '"\\ud83d"', "choices": '["a", "\\udfff"]',
             "metadata": '{"subject": "\\ud800"}'}[field]
    path = tmp_path / "set.jsonl"
    record = json.dumps(_one())[:-1] + f', "{field}": {value}}}'
    path.write_text(json.dumps(_one(id="ok", input="Fine?")) + "\n" + record + "\n", encoding="utf-8")
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "set.jsonl:2: field" in message and "a lone surrogate (U+" in message


def test_a_file_that_is_not_utf8_is_refused_by_line(tmp_path):
    path = tmp_path / "set.jsonl"
    lines = [json.dumps(_one(id=str(n), input=f"Q{n}?")).encode() for n in range(4)]
    lines[2] = lines[2].replace(b"Q2", b"Q\xe92")
    path.write_bytes(b"\n".join(lines) + b"\n")
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "set.jsonl:3: not UTF-8: byte 0xe9" in message and "1 problem(s)" in message


def test_a_json_line_holding_u2028_keeps_the_line_numbers(tmp_path):
    path = tmp_path / "set.jsonl"
    first = json.dumps(_one(id="a", input="Which\u2028 one\u2029?"), ensure_ascii=False)
    path.write_text(first + "\n" + json.dumps(_one(id="b", input="Q2?", target="Z")) + "\n", encoding="utf-8")
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "set.jsonl:2: field 'target'" in message and "1 problem(s)" in message
    path.write_text(first + "\n", encoding="utf-8")
    assert load_set(path)[0]["question"] == "Which\u2028 one\u2029?"


def test_ids_differing_only_by_unicode_normalisation_are_one_id(tmp_path):
    message = _refused(tmp_path, [_one(id="caf\u00e9"), _one(id="cafe\u0301", input="Other?")], "set.jsonl:2:")
    assert "the same id once Unicode-normalised" in message


def test_a_json_array_names_the_line_each_sample_begins_on(tmp_path):
    path = tmp_path / "set.json"
    path.write_text("[\n" + json.dumps(_one(id="a")) + ",\n\n" + json.dumps(_one(id="b", input="Q", target="Z"))
                    + "\n]\n", encoding="utf-8")
    assert "set.json:4: field 'target'" in str(pytest.raises(LabSetError, load_set, path).value)


def test_an_image_path_through_a_linked_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "q.png").write_bytes(png(2, 2))
    inner = tmp_path / "set"
    inner.mkdir()
    os.symlink(outside, inner / "pictures")
    _refused(inner, [_one(image="pictures/q.png")], "set.jsonl:1: field 'image'", "link")


def test_many_questions_naming_one_image_read_it_once(tmp_path, monkeypatch):
    from structext_core.labset import dataset
    reads = []
    real = dataset.read_inside
    monkeypatch.setattr(dataset, "read_inside", lambda *a: reads.append(a[1]) or real(*a))
    path = write_set(tmp_path, [_one(id=str(n), input=f"Q{n}?", image="images/q1.png") for n in range(300)])
    assert len(load_set(path)) == 300 and len(reads) == 1
