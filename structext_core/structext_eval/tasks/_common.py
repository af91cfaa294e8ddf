"""Helpers the task families share: reading a question, and picking from the abstract tree."""

from __future__ import annotations

import random
import re

from structext_core.structext_eval.formats import Document, ReadError


def question_match(pattern: str, question: str, what: str) -> re.Match:
    """``pattern`` searched in ``question``; a ReadError naming ``what`` when it is not there."""
    m = re.search(pattern, question, re.S)
    if not m:
        raise ReadError(f"cannot find {what} in the question {question[:120]!r}")
    return m


def no_params(question: str) -> dict:
    """The parameters of a question that has none."""
    return {}


def true_false(value: bool) -> str:
    """``True`` or ``False``, the Syntax tasks' answers."""
    return "True" if value else "False"


def find_node(doc: Document, name: str):
    """The node of ``doc``'s tree called ``name``."""
    return next(n for n in doc.tree.walk() if n.name == name)


def value_sample(rng: random.Random, doc: Document) -> dict:
    """A value held by a random node of the tree."""
    node = rng.choice(list(doc.tree.walk()))
    return {"value": rng.choice(node.values)}
