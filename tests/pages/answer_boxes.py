"""The light answer element (structext_core/ui/light_answer.py) as the tests see it: the question's texts, the
answer box, its buttons and line boxes, and a person's typing and click.

AppTest has no element for a components-v2 element, so the box's text lives here as the browser keeps it:
:meth:`AnswerBox.input` types into it (kept on the AppTest object until the server writes the box anew), and
:func:`press` clicks a button as the browser does, sending the text (and the line boxes) as the element's
``action`` event with the page's other widgets as they are: the page runs once.
"""

from __future__ import annotations

import json

from structext_core.ui import light_answer
from tests.pages.light_parts import bidi_elements, send_event


def _elements(at) -> list:
    return [e for e in bidi_elements(at) if e.proto.component_name.endswith(light_answer.COMPONENT_NAME)]


def _typed(at) -> dict:
    if not hasattr(at, "_answer_typed"):
        at._answer_typed = {}
    return at._answer_typed


class AnswerBox:
    """One answer element of the run ``at``: ``label``, ``value`` (the box's text as the browser shows it),
    ``question`` and ``requirement`` (the texts above it), ``buttons`` (their labels), ``disabled``, ``hint``,
    ``lines`` (the line boxes' values, or ``None`` without them), ``data`` (all it was sent)."""

    def __init__(self, at, element):
        self._at = at
        self.element = element
        self.data = json.loads(element.proto.json)
        self.key = self.data["key"]
        self.label = self.data["label"]
        blocks = dict(self.data["blocks"])
        self.question, self.requirement = blocks.get("Question"), blocks.get("Requirement")
        self.buttons = [b["label"] for b in self.data["buttons"]]
        self.disabled = self.data["disabled"]
        self.hint = self.data["hint"]
        self.placeholder = self.data["placeholder"]
        self.lines = None if self.data["range"] is None else tuple(self.data["range"]["values"])

    @property
    def value(self) -> str:
        typed = _typed(self._at).get(self.key)
        if typed is not None and typed[1] == self.data["version"]:
            return typed[0]
        return self.data["text"]

    def input(self, text: str) -> AnswerBox:
        """Type ``text`` into the box (replacing what it held), as the browser keeps it until a click."""
        _typed(self._at)[self.key] = (text, self.data["version"])
        return self


def answer_boxes(at) -> list[AnswerBox]:
    return [AnswerBox(at, e) for e in _elements(at)]


def answer_box(at) -> AnswerBox:
    """The run's one answer element."""
    boxes = answer_boxes(at)
    assert len(boxes) == 1, f"{len(boxes)} answer boxes on the page"
    return boxes[0]


def has_button(at, label: str) -> bool:
    return any(label in box.buttons for box in answer_boxes(at))


def press(at, label: str, *, first: int | None = None, last: int | None = None, sent: object = None):
    """Click the answer's button ``label`` with the box's text (the line boxes set to ``first`` and ``last``
    when given, else as the server last wrote them): the page runs once, and is returned. ``sent`` sends that
    instead of what the browser would (a forged request)."""
    box = answer_box(at)
    (button,) = [b for b in box.data["buttons"] if b["label"] == label] or [None]
    assert button is not None, f"the answer has no button {label!r}: {box.buttons}"
    value = {"action": button["name"], "text": box.value}
    if box.lines is not None:
        value["first"], value["last"] = (first, last) if first is not None or last is not None else box.lines
    at = send_event(at, box.element, "action", value if sent is None else sent)
    return at
