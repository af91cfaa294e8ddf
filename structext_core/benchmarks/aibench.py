"""AIBench as a member of the benchmark registry: a thin adapter over :mod:`structext_core.aibench`.

An item is one question about one paper, shown with one system's image of that paper:
``{paper_id, question_id, system, image, question}`` where ``question`` is a
:class:`~structext_core.aibench.model.Question` and ``image`` the image's path in the data set.
"""

from __future__ import annotations

from collections.abc import Mapping

from structext_core.aibench import model
from structext_core.benchmarks import Place, ShownQuestion

NAME = "aibench"
DISPLAY_NAME = "AIBench"
SUMMARY = ("Does a figure drawn from a paper's method text carry the method? Multiple-choice questions about "
           "each paper, at four levels (components, topology, phases, semantics), asked of each system's image "
           "and of the original figure.")
PLACES = (
    Place("explore", "its data sets: each paper's method text, original figure and questions", True),
    Place("results", "the paper's tables, and the scores on the stored data sets", True),
    Place("human_baseline", "an image-only study: answer the questions from the image alone"),
    Place("question_review", "check a paper's questions against its figure and method text"),
    Place("pairwise", "choose the better of two systems' images of a paper"),
)
ITEM_FIELDS = ("paper_id", "question_id", "system", "image", "question")
#: Results break down by these (level first: the paper's columns).
AXES = ("system", "solver", "level", "conference", "paper_id", "question_id")
#: A study item's strata: the (image, question) it is and what its draws balance (level x system x conference).
STRATA = {"paper_id": str, "system": str, "question_id": str, "level": int, "conference": str}


def item_id(item: Mapping) -> str:
    """``paper_id/question_id@system``: one question asked of one system's image."""
    return f"{item['paper_id']}/{item['question_id']}@{item['system']}"


def show_question(item: Mapping) -> ShownQuestion:
    """The paper's prompt: its system prompt, the question with lettered options, the image."""
    question: model.Question = item["question"]
    return ShownQuestion(text=model.solver_prompt(question), system=model.SYSTEM_PROMPT,
                         choices=question.options, image=item.get("image"))


def score_answer(item: Mapping, reply: str) -> float:
    """1.0 when the reply's clear letter is the key, else 0.0 (no clear letter counts as wrong)."""
    question: model.Question = item["question"]
    return 1.0 if model.parse_letter(reply, len(question.options)) == question.answer else 0.0
