"""The layouts labs publish, each read with the right key TEXT, and a layout that is unknown or
ambiguous refused with the columns found and the mapping to write (never read as another kind)."""
from __future__ import annotations

import csv
import json

import pytest

from structext_core.labset.dataset import LabSetError, load_set, sidecar
from structext_core.labset.layouts import Mapping, permutation

N = 40


def rows() -> list[dict]:
    """40 questions: options, the index of the key, a subject."""
    out = []
    for i in range(N):
        options = [f"answer {x} to {i}" for x in "ABCD"]
        out.append({"question": f"Question {i}?", "options": options, "key": (i * 7) % 4,
                    "subject": ("maps", "tides")[i % 2], "qid": f"q{i}"})
    return out


def key_texts(items) -> list[str]:
    return [item["choices"]["ABCDEFGHIJ".index(item["target"][0])] for item in items]


def expected_keys() -> list[str]:
    return [r["options"][r["key"]] for r in rows()]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_csv(path, header, records):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(records)
    return path


def check_read(items):
    assert len(items) == N
    assert key_texts(items) == expected_keys()
    assert all(item["format"] == "choice" and len(item["choices"]) == 4 for item in items)


def test_mmlu_with_a_choices_list_and_an_integer_answer(tmp_path):
    path = write_jsonl(tmp_path / "mmlu.jsonl", [{"question": r["question"], "choices": r["options"],
                                                 "answer": r["key"], "subject": r["subject"]} for r in rows()])
    items = load_set(path)
    check_read(items)
    assert items[0]["stratum"] == "maps" and items[0]["metadata"] == {"subject": "maps"}


def test_mmlu_with_a_choices_list_and_a_letter_answer(tmp_path):
    path = write_jsonl(tmp_path / "mmlu.jsonl", [{"question": r["question"], "choices": r["options"],
                                                 "answer": "ABCD"[r["key"]]} for r in rows()])
    check_read(load_set(path))


def test_mmlu_with_columns_a_to_d(tmp_path):
    path = write_csv(tmp_path / "mmlu.csv", ["question", "A", "B", "C", "D", "answer", "subject"],
                     [[r["question"], *r["options"], "ABCD"[r["key"]], r["subject"]] for r in rows()])
    items = load_set(path)
    check_read(items)
    assert {i["stratum"] for i in items} == {"maps", "tides"}


def gpqa_rows():
    return [{"Record ID": r["qid"], "Question": r["question"], "Correct Answer": r["options"][r["key"]],
             "Incorrect Answer 1": f"wrong 1 of {i}", "Incorrect Answer 2": f"wrong 2 of {i}",
             "Incorrect Answer 3": f"wrong 3 of {i}", "Subdomain": r["subject"]} for i, r in enumerate(rows())]


def test_gpqa_options_in_a_recorded_seeded_order(tmp_path):
    records = gpqa_rows()
    path = write_csv(tmp_path / "gpqa.csv", list(records[0]), [list(r.values()) for r in records])
    items = load_set(path, seed=7)
    check_read(items)
    again = load_set(path, seed=7)
    assert [i["choices"] for i in again] == [i["choices"] for i in items]  # same seed, same order
    assert [i["permutation"] for i in items] == [permutation(7, r["Record ID"], 4) for r in records]
    for item, record in zip(items, records):
        originals = [record["Correct Answer"], *(record[f"Incorrect Answer {k}"] for k in (1, 2, 3))]
        assert item["choices"] == [originals[k] for k in item["permutation"]]
        assert item["source_id"] == record["Record ID"] and item["metadata"]["Subdomain"] == record["Subdomain"]
    assert len({i["target"][0] for i in items}) > 1  # the key is not always in one place
    other = load_set(path, seed=8)
    assert [i["choices"] for i in other] != [i["choices"] for i in items]
    assert key_texts(other) == expected_keys()


def test_choice_columns_with_a_letter_key_are_multiple_choice_not_short_answers(tmp_path):
    """The regression: question, choice_a..choice_d, answer "B" is 4-option multiple choice."""
    path = write_csv(tmp_path / "set.csv", ["question", "choice_a", "choice_b", "choice_c", "choice_d", "answer"],
                     [[r["question"], *r["options"], "ABCD"[r["key"]]] for r in rows()])
    items = load_set(path)
    check_read(items)
    assert items[0]["target"] == ["A"] and items[1]["target"] == ["D"]


@pytest.mark.parametrize("key", ["text", "index"])
def test_option_columns_with_a_text_or_index_key(tmp_path, key):
    path = write_csv(tmp_path / "set.csv", ["qid", "question", "option_1", "option_2", "option_3", "option_4", "label"],
                     [[r["qid"], r["question"], *r["options"], r["options"][r["key"]] if key == "text" else r["key"]]
                      for r in rows()])
    items = load_set(path)
    check_read(items)
    assert items[3]["source_id"] == "q3"


def test_a_key_outside_the_options_is_refused(tmp_path):
    records = [[r["question"], *r["options"], "ABCD"[r["key"]]] for r in rows()]
    records[5][-1] = "nothing like an option"
    path = write_csv(tmp_path / "set.csv", ["question", "choice_a", "choice_b", "choice_c", "choice_d", "answer"],
                     records)
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "set.csv:7: field 'answer': the key 'nothing like an option' is no option" in message


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    table = pa.Table.from_pylist([{"question": r["question"], "choices": r["options"], "answer": r["key"],
                                   "subject": r["subject"]} for r in rows()])
    pq.write_table(table, tmp_path / "set.parquet")
    items = load_set(tmp_path / "set.parquet")
    check_read(items)
    assert items[2]["line"] == 3


def test_a_datasets_folder_with_splits(tmp_path):
    datasets = pytest.importorskip("datasets")
    records = [{"question": r["question"], "choices": r["options"], "answer": r["key"], "subject": r["subject"]}
               for r in rows()]
    datasets.DatasetDict({"train": datasets.Dataset.from_list(records[:5]),
                          "test": datasets.Dataset.from_list(records)}).save_to_disk(tmp_path / "mmlu")
    check_read(load_set(tmp_path / "mmlu"))  # test, when there is one
    assert len(load_set(tmp_path / "mmlu", split="train")) == 5
    datasets.DatasetDict({"train": datasets.Dataset.from_list(records[:5]),
                          "dev": datasets.Dataset.from_list(records[:3])}).save_to_disk(tmp_path / "nosplit")
    message = str(pytest.raises(LabSetError, load_set, tmp_path / "nosplit").value)
    assert "splits train, dev" in message and "--split" in message
    datasets.Dataset.from_list(records).save_to_disk(tmp_path / "one")
    check_read(load_set(tmp_path / "one"))


def test_a_custom_csv_read_by_a_mapping_and_its_sidecar(tmp_path):
    path = write_csv(tmp_path / "custom.csv", ["qid", "prompt", "opt1", "opt2", "opt3", "opt4", "gold", "subject",
                                               "difficulty"],
                     [[r["qid"], r["question"], *r["options"], r["key"] + 1, r["subject"], "hard"] for r in rows()])
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "opt1, opt2, opt3, opt4 look like options but are mapped to nothing" in message
    mapping = Mapping.from_args(["question=prompt", "options=opt1,opt2,opt3,opt4", "key=gold:index1", "id=qid",
                                 "strata=subject,difficulty"])
    items = load_set(path, mapping=mapping, strata_key=None)
    check_read(items)
    assert items[0]["source_id"] == "q0" and items[0]["stratum"] == "maps"
    assert items[0]["metadata"] == {"subject": "maps", "difficulty": "hard"}
    sidecar(path).write_text(json.dumps(mapping.to_json()), encoding="utf-8")
    assert key_texts(load_set(path)) == expected_keys()  # read back from the mapping beside it


def test_an_unmapped_option_like_column_is_refused_naming_columns_and_mapping(tmp_path):
    path = write_csv(tmp_path / "set.csv", ["input", "choice_a", "choice_b", "target"],
                     [["Which?", "x", "y", "B"]])
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "columns found: input, choice_a, choice_b, target" in message
    assert "choice_a, choice_b look like options but are mapped to nothing" in message
    assert "write the mapping: --map question=input --map options=choice_a,choice_b --map key=target:letter" in message


@pytest.mark.parametrize(("header", "row", "expected"), [
    (["question", "choice_a", "choice_b", "answer", "label"], ["Q?", "x", "y", "B", "1"],
     "two candidate key columns: answer, label"),
    (["question", "choice_a", "choice_b", "option_a", "option_b", "answer"], ["Q?", "x", "y", "x", "y", "A"],
     "several sets of options"),
    (["question", "answer"], ["Q?", "Paris"], "no options"),
    (["prompt", "choice_a", "choice_b", "answer"], ["Q?", "x", "y", "A"], "no question column"),
    (["question", "choice_a", "choice_b", "gold"], ["Q?", "x", "y", "A"], "gold may hold it"),
])
def test_an_ambiguous_or_unknown_layout_is_refused(tmp_path, header, row, expected):
    path = write_csv(tmp_path / "set.csv", header, [row])
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert expected in message and "write the mapping: --map" in message and "columns found" in message


def test_a_key_read_two_ways_with_different_answers_is_refused(tmp_path):
    path = write_csv(tmp_path / "set.csv", ["question", "choice_a", "choice_b", "answer"],
                     [["Q1?", "B", "A", "B"], ["Q2?", "x", "A", "A"]])
    message = str(pytest.raises(LabSetError, load_set, path).value)
    assert "reads as letter or text with different answers (line 2: 'B')" in message


def test_every_metadata_field_is_kept_on_the_item(tmp_path):
    path = write_jsonl(tmp_path / "set.jsonl", [{"input": "Q?", "target": "x", "metadata": {"subject": "maps",
                                                 "difficulty": 3, "source": {"book": "b"}}}])
    item = load_set(path)[0]
    assert item["stratum"] == "maps" and item["metadata"] == {"subject": "maps", "difficulty": 3, "source": {"book": "b"}}


def test_a_mapping_of_strata_alone_keeps_the_layout_recognised(tmp_path):
    """What an import keeps beside a set checked with a strata field of its own (``--strata Subdomain``):
    the GPQA layout is still recognised, and its strata are read from that field."""
    records = gpqa_rows()
    path = write_csv(tmp_path / "gpqa.csv", list(records[0]), [list(r.values()) for r in records])
    sidecar(path).write_text(json.dumps({"strata": ["Subdomain"], "seed": 7}), encoding="utf-8")
    items = load_set(path)
    check_read(items)
    assert [i["stratum"] for i in items] == [r["Subdomain"] for r in records]
    assert [i["permutation"] for i in items] == [permutation(7, r["Record ID"], 4) for r in records]
