"""The light elements a page drew as parts of a panel (structext_core/ui/light_panel.py), seen by the tests as
the elements they would be alone: each part is an element of its kind's component with its data, in the
page's order, and what a test sends to it goes to its panel as the browser sends it (the ``part`` event).

The tests' readers (``light_choices``, ``html_tables``, ``heatmap_tables``, :func:`notes`) read pages through
:func:`bidi_elements` and :func:`expand`, so a test is the same whether an element is drawn alone or in a panel.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.testing.v1 import AppTest

from structext_core.ui import heatmap_table, light_choice, light_html, light_panel, light_section

#: The component a part of each kind is drawn by when alone.
COMPONENTS = {"choice": light_choice.COMPONENT_NAME, "html": light_html.COMPONENT_NAME,
              "section": light_section.COMPONENT_NAME, "heatmap": heatmap_table.COMPONENT_NAME}


def is_panel(node) -> bool:
    return getattr(node, "type", "") == "bidi_component" and node.proto.component_name.endswith(
        light_panel.COMPONENT_NAME)


def parts(node) -> list[SimpleNamespace]:
    """The parts of the panel ``node``, each as the element it would be alone: ``type``, ``proto``
    (``component_name``, ``json``, ``id``: the panel's), and ``part_id``, ``kind``, ``data``."""
    return [SimpleNamespace(type="bidi_component", part_id=part["id"], kind=part["kind"], data=part["data"],
                            width=part.get("width"),
                            proto=SimpleNamespace(component_name=COMPONENTS.get(part["kind"], part["kind"]),
                                                  json=json.dumps(part["data"]), id=node.proto.id))
            for part in _flat(json.loads(node.proto.json)["parts"])]


def _flat(parts: list[dict]):
    """``parts`` with each row (light_panel.row) replaced by its parts, in their order."""
    for part in parts:
        if part["kind"] == "row":
            yield from _flat(part["data"]["parts"])
        else:
            yield part


def expand(nodes):
    """``nodes`` with each panel replaced by its parts (in their order)."""
    for node in nodes:
        if is_panel(node):
            yield from parts(node)
        else:
            yield node


def children(node) -> list:
    """The blocks and elements right below ``node`` in the page's order: by their place (a panel is added to
    AppTest's tree when it is drawn, at the end of its run, in the place kept for it)."""
    return [child for _, child in sorted(getattr(node, "children", {}).items(), key=lambda item: item[0])]


def panels(node) -> list:
    """The panels below ``node``, in the page's order."""
    found, todo = [], [node]
    while todo:  # depth first, in order
        current = todo.pop()
        if is_panel(current):
            found.append(current)
        todo.extend(reversed(children(current)))
    return found


def walk(node):
    """Every block and element below ``node``, depth first, panels as their parts."""
    for child in children(node):
        if is_panel(child):
            yield from parts(child)
            continue
        yield child
        yield from walk(child)


def bidi_elements(at) -> list:
    """Every components-v2 element of the run ``at``, in page order, a panel's parts as elements."""
    return [node for node in walk(at._tree) if getattr(node, "type", "") == "bidi_component"]


def send_event(at, element, event: str, value):
    """Send ``value`` as ``element``'s ``event`` (a part's: as its panel's ``part`` event): the page runs once."""
    states = at._tree.get_widget_states()
    trigger = states.widgets.add()
    trigger.id = _make_trigger_id(element.proto.id, "events")
    if getattr(element, "part_id", None) is not None:
        event, value = "part", {"id": element.part_id, "value": value}
    trigger.json_trigger_value = json.dumps([{"event": event, "value": value}])
    return at._run(states)


def notes(at, kind: str = "caption") -> list[SimpleNamespace]:
    """Every caption (or info, warning... box: ``kind``) of the run ``at`` in page order, Streamlit's and a
    panel's notes (``light_panel.note``), each with its ``value`` (the text as written, in Markdown)."""
    found = []
    for node in walk(at._tree):
        if getattr(node, "type", "") == kind:
            found.append(SimpleNamespace(value=node.value))
        elif getattr(node, "kind", "") == "note" and node.data["kind"] == kind and node.data["runs"]:
            found.append(SimpleNamespace(value=node.data["text"]))
    return found


def run_script(script: str, **state) -> AppTest:
    """``script`` run once by AppTest with ``state`` in its session state first (the light elements' tests)."""
    at = AppTest.from_string(script, default_timeout=30)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()
