"""The choosers a page drew as one element each (structext_core/ui/light_choice.py): what AppTest sees of
them, and a person's choice in them.

AppTest has no element for a components-v2 element, so :func:`choose` does what the browser does: it
sends the option's id as the element's ``choose`` event (the widget state the browser's
``setTriggerValue`` sends) with the page's other widgets as they are, and runs the page once.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from structext_core.ui import light_choice, light_section
from tests.pages.light_parts import bidi_elements, send_event, walk


def _elements(at) -> list:
    return [e for e in bidi_elements(at) if e.proto.component_name.endswith(light_choice.COMPONENT_NAME)]


def choices(at) -> dict[str, dict]:
    """Each chooser on the page: its key -> the data the browser was sent (label, options, value)."""
    return {data["key"]: data for data in (json.loads(e.proto.json) for e in _elements(at))}


def choice(at, key: str) -> SimpleNamespace:
    """The chooser ``key`` as a person sees it: ``label``, ``options`` (their labels, in order), ``ids``,
    ``value`` (the id chosen) and ``shown`` (the label of the option chosen; None when none is)."""
    data = choices(at)[key]
    ids = [i for i, _ in data["options"]]
    labels = [text for _, text in data["options"]]
    shown = labels[ids.index(data["value"])] if data["value"] in ids else None
    return SimpleNamespace(label=data["label"], options=labels, ids=ids, value=data["value"], shown=shown,
                           disabled=data["disabled"], help=data["help"], buttons=data["kind"] == "buttons")


def choose(at, key: str, option):
    """Choose ``option`` (an option's id, as ``str(option)`` or an object's ``id``, or the label a person
    reads) in the chooser ``key``: the page runs once with the choice sent."""
    now = choice(at, key)
    wanted = str(getattr(option, "id", option))
    if wanted not in now.ids:
        assert str(option) in now.options, f"chooser {key!r} offers no {option!r}: {now.options}"
        wanted = now.ids[now.options.index(str(option))]
    return send(at, key, wanted)


def send(at, key: str, value, elements=_elements):
    """Send ``value`` as the chooser ``key``'s event, whatever it is (as a forged request may): the page
    runs once."""
    (element,) = [e for e in elements(at) if json.loads(e.proto.json)["key"] == key]
    return send_event(at, element, "choose", value)


def number_box(at, key: str) -> SimpleNamespace:
    """The number box ``key`` (light_choice.number) as a person sees it: ``label``, ``min``, ``max``,
    ``value``. Set it with ``send(at, key, number)``, as the browser sends it."""
    data = choices(at)[key]
    assert data["kind"] == "number", f"{key!r} is a {data['kind']}, not a number box"
    return SimpleNamespace(label=data["label"], min=data["min_value"], max=data["max_value"], value=data["value"],
                           help=data["help"])


def press(at, label: str):
    """Click the light button that reads ``label`` (light_choice.actions; one on the page): the page runs
    once."""
    found = [(key, name) for key, data in choices(at).items() if data["kind"] == "actions"
             for name, text in data["options"] if text == label]
    assert len(found) == 1, f"{len(found)} light buttons read {label!r}"
    (key, name), = found
    return send(at, key, name)


def download_buttons(at) -> list[str]:
    """The labels of the light download buttons (light_choice.downloads) on the page, in its order."""
    return [text for data in choices(at).values() if data["kind"] == "downloads" for _, text in data["options"]]


def save(at, label: str, row: str | None = None):
    """Click the light download button that reads ``label`` (in the row ``row``, when given; one such button
    on the page): the page runs once; returns it and what its element was sent to save (``nonce``,
    ``url``: empty without Streamlit's server, ``name``)."""
    found = [(key, name) for key, data in choices(at).items() if data["kind"] == "downloads"
             and (row is None or key == row) for name, text in data["options"] if text == label]
    assert len(found) == 1, f"{len(found)} light download buttons read {label!r}"
    (key, name), = found
    at = send(at, key, name)
    return at, choices(at)[key]["file"]


class LightDownloads:
    """Every file the page's light download rows offer (light_choice.downloads), as their makers are handed
    to the row: ``offered`` lists each (file name, what makes it), in order; ``files`` maps a file name to
    the last offered under it (called when a test reads it)."""

    def __init__(self, monkeypatch):
        self.offered: list[tuple[str, object]] = []
        original = light_choice.downloads

        def capture(key, files, **kwargs):
            self.offered += [(download.file_name, download.make) for download in files]
            return original(key, files, **kwargs)

        monkeypatch.setattr(light_choice, "downloads", capture)

    @property
    def files(self) -> dict[str, object]:
        return dict(self.offered)


def _section_elements(at) -> list:
    return [e for e in bidi_elements(at) if e.proto.component_name.endswith(light_section.COMPONENT_NAME)]


def sections(at) -> list[str]:
    """The label of every section on the page, in its order, as a person reads them: Streamlit's expanders
    (open or closed) and the headers of closed sections drawn as light elements (light_section)."""
    labels = []
    for node in walk(at._tree):
        if getattr(node, "type", "") == "expander":
            labels.append(node.label)
        elif getattr(node, "type", "") == "bidi_component" and node.proto.component_name.endswith(
                light_section.COMPONENT_NAME):
            labels.append(json.loads(node.proto.json)["label"])
    return labels


def open_section(at, label: str):
    """Click the header of the closed section that reads ``label`` (light_section; one on the page): the page
    runs once, and draws it open."""
    found = [data["key"] for data in (json.loads(e.proto.json) for e in _section_elements(at)) if data["label"] == label]
    assert len(found) == 1, f"{len(found)} closed sections read {label!r}: {sections(at)}"
    return send(at, found[0], "open", elements=_section_elements)
