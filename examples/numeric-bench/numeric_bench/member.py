"""Numeric word problems whose answer is a number: a reply is right when its last number is within
1% of the answer. It declares its items, how a question is shown and how a reply is scored; the
workbench gives the rest (studies, the lead's form, Results, Explore, exports, the Inspect log)."""

import re
from pathlib import Path

from structext_core.evaluation.item_sets import read_jsonl
from structext_core.protocol import Place, ShownQuestion

NAME = "numeric"
DISPLAY_NAME = "Numeric"
SUMMARY = "Word problems whose answer is a number; a reply is right within 1% of the answer."
PLACES = (
    Place("human_baseline", "answer its problems"),
    Place("results", "people beside models, by topic and by steps", True),
)
ITEM_FIELDS = {"id": str, "question": str, "answer": float, "topic": str, "steps": int}
AXES = ("topic", "steps")
STRATA = {"topic": str, "steps": int}
#: 25 problems shipped with the package (a demo, and the members' shared tests read them).
SAMPLE_ITEMS = str(Path(__file__).with_name("problems.jsonl"))

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def item_id(item) -> str:
    return item["id"]


def show_question(item) -> ShownQuestion:
    return ShownQuestion(text=item["question"] + "\n\nAnswer with a number.")


def score_answer(item, reply: str) -> float:
    numbers = _NUMBER.findall(reply)
    if not numbers:
        return 0.0
    value, answer = float(numbers[-1].replace(",", "")), float(item["answer"])
    return 1.0 if abs(value - answer) <= 0.01 * abs(answer) else 0.0


def load_items(path) -> list[dict]:
    return read_jsonl(path, ITEM_FIELDS)
