"""The set-up forms a page drew as one element (structext_core/ui/light_form.py): what AppTest sees of
them, and a person's click on their button.

AppTest has no element for a components-v2 element, so :func:`submit` does what the browser does: it
sends the form's values as the element's ``submit`` event (the widget state the browser's
``setTriggerValue`` sends) with the page's other widgets as they are, and runs the page once.
"""

from __future__ import annotations

import json

from streamlit.components.v2.bidi_component.main import _make_trigger_id

from structext_core.ui import light_form


def _elements(at) -> list:
    return [e for e in at.get("bidi_component") if e.proto.component_name.endswith(light_form.COMPONENT_NAME)]


def light_forms(at) -> dict[str, dict]:
    """Each light form on the page: its key -> the data the browser was sent (rows of declared fields)."""
    return {data["key"]: data for data in (json.loads(e.proto.json) for e in _elements(at))}


def fields(at, key: str) -> dict[str, dict]:
    """The form ``key``'s fields in order: name -> what was declared (kind, label, value, options...)."""
    return {f["name"]: f for row in light_forms(at)[key]["rows"] for f in row}


def submit(at, key: str, **values):
    """Fill the form ``key`` (the fields not given keep their defaults, as a person leaves them) and
    click its button: the page runs once with the values sent. Choices are given by their option's value
    as declared (sent as text, as the browser sends them)."""
    (element,) = [e for e in _elements(at) if json.loads(e.proto.json)["key"] == key]
    declared = fields(at, key)
    unknown = set(values) - set(declared)
    assert not unknown, f"form {key!r} has no fields {sorted(unknown)}"
    sent = {name: f["value"] for name, f in declared.items()}
    for name, value in values.items():
        sent[name] = [str(v) for v in value] if declared[name]["kind"] == "choices" else (
            str(value) if declared[name]["kind"] == "choice" else value)
    states = at._tree.get_widget_states()
    trigger = states.widgets.add()
    trigger.id = _make_trigger_id(element.proto.id, "events")
    trigger.json_trigger_value = json.dumps([{"event": "submit", "value": sent}])
    return at._run(states)


def only(at) -> str:
    """The key of the page's one light form (a set-up tab draws one, whichever the benchmark)."""
    (key,) = light_forms(at)
    return key


def options(at, key: str, name: str) -> list[str]:
    """The values (as sent to the browser, text) of the options of the field ``name`` of the form ``key``."""
    return [value for value, _ in fields(at, key)[name]["options"]]
