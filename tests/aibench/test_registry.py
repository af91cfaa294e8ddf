"""The benchmark registry: the built-in members offer the whole interface and behave as their
packages do. A lab's installed benchmark may stand beside them: nothing here pins the whole list."""
from __future__ import annotations

import pytest

from structext_core import protocol
from structext_core.aibench import model
from structext_core.evaluation import scoring
from structext_core.structext_eval import prompts, suites

#: The built-in members: name -> (display name, ORDER, member module), in the app's order.
BUILT_IN = {
    "structext-eval": ("StrucText-Eval", 10, "structext_core.structext_eval.member"),
    "aibench": ("AIBench", 20, "structext_core.aibench.member"),
    "labset": ("The lab's own", 30, "structext_core.labset.member"),
}


def test_registry_lists_the_built_in_benchmarks_in_order():
    """Each built-in member is there with its display name, order and module, in that order among
    the members; any other installed member stands where its ORDER puts it."""
    names = protocol.NAMES
    assert set(BUILT_IN) <= set(names)
    assert [name for name in names if name in BUILT_IN] == list(BUILT_IN)
    for name, (display, order, module) in BUILT_IN.items():
        assert protocol.REGISTRY[name] == protocol.Benchmark(module, display)
        assert protocol.display_name(name) == display and protocol.option(protocol.get_module(name), "ORDER") == order
    orders = [(protocol.option(protocol.get_module(name), "ORDER"), name) for name in names]
    assert orders == sorted(orders)


@pytest.mark.parametrize("name", protocol.NAMES)
def test_every_member_offers_the_whole_interface(name):
    module = protocol.get_module(name)
    missing = [attr for attr in protocol.INTERFACE if not hasattr(module, attr)]
    assert missing == []
    assert module.NAME == name
    assert module.DISPLAY_NAME == protocol.REGISTRY[name].display_name


def test_unknown_benchmark_is_named():
    with pytest.raises(KeyError, match="no benchmark 'mmlu'; the benchmarks are ") as refused:
        protocol.get_module("mmlu")
    assert str(refused.value).strip("'\"").endswith(", ".join(protocol.NAMES))
    assert all(name in str(refused.value) for name in BUILT_IN)


def test_structext_member_is_a_thin_adapter():
    member = protocol.get_module("structext-eval")
    sample = suites.generate_sample(1, 2, 2, seed=0)
    shown = member.show_question(sample)
    assert shown.text == prompts.build_prompt(sample, "naive") and shown.choices == () and shown.image is None
    assert member.item_id(sample) == sample["id"]
    assert tuple(sample) == member.ITEM_FIELDS
    reply = f"### Answer: {sample['answer']}"
    assert member.score_answer(sample, reply) == scoring.score_response(sample["answer"], reply).score == 1.0
    assert member.score_answer(sample, "### Answer: nothing like it") == 0.0


def test_aibench_member_shows_the_papers_prompt_and_scores_the_letter():
    member = protocol.get_module("aibench")
    question = model.Question("q1", 2, "Where does the encoder's output go?",
                              ("Decoder", "Loss", "Tokenizer", model.INSUFFICIENT), "A")
    item = {"paper_id": "p1", "question_id": "q1", "system": "S", "image": "images/S/p1.png", "question": question}
    shown = member.show_question(item)
    assert shown.system == "You are a helpful assistant."
    assert shown.text == ("Question: Where does the encoder's output go?\nOptions:\nA. Decoder\nB. Loss\n"
                          "C. Tokenizer\nD. " + model.INSUFFICIENT + "\n\nBased on the given image only, answer "
                          "with the option's letter from the given choices directly.")
    assert shown.image == "images/S/p1.png" and shown.choices == question.options
    assert member.item_id(item) == "p1/q1@S"
    assert member.score_answer(item, "A") == 1.0
    assert member.score_answer(item, "B. Loss") == 0.0
    assert member.score_answer(item, "I cannot tell.") == 0.0


@pytest.mark.parametrize(("name", "strata", "message"), [
    ("structext-eval", {"language": "json", "task": "T", "task_id": 1, "depth": 2}, "stratum 'width' is missing"),
    ("structext-eval", {"language": "json", "task": "T", "task_id": 1, "depth": "2", "width": 1},
     "stratum 'depth' must be an integer, got '2'"),
    ("structext-eval", {"language": "json", "task": "T", "task_id": True, "depth": 2, "width": 1},
     "stratum 'task_id' must be an integer"),
    ("aibench", {"paper_id": "p", "system": "s", "question_id": "q", "level": 1, "conference": None},
     "stratum 'conference' must be a text, got None"),
    ("aibench", {"paper_id": "p", "system": "s", "question_id": "q", "level": 1, "conference": "c", "depth": 1},
     "aibench has no stratum 'depth'; its strata are paper_id, system, question_id, level, conference"),
])
def test_strata_are_checked_against_the_declaration_naming_the_field(name, strata, message):
    with pytest.raises(ValueError, match=message):
        protocol.check_strata(name, strata)


@pytest.mark.parametrize("name", protocol.NAMES)
def test_declared_strata_pass_in_declared_order(name):
    declared = protocol.get_module(name).STRATA
    values = {key: 1 if kind is int else "x" for key, kind in reversed(declared.items())}
    assert list(protocol.check_strata(name, values)) == list(declared)
