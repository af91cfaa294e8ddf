"""Light elements drawn together as one page element (issue 46: pages that answer).

Every components-v2 element costs the browser about 2.5 ms of a page's time whatever it draws, a caption
about 1.3 ms (``benchmarks/page_anatomy.py``, docs/figures.yml). Inside ``with panel("key"):``, on a page that
draws light elements (``light_html.page_draws_light``), the light elements it draws (:mod:`light_choice`'s
choosers and buttons, :mod:`light_html`'s blocks, :mod:`light_section`'s headers, :mod:`heatmap_table`'s
heatmaps) and the notes of :func:`note` (a caption, a box as ``st.info`` draws one, a section's heading, a
flash) are parts of one element, drawn in their order: measured bare beside the trivial page (0.44 s), the
navigation alone 0.52 s, with ten light elements, six Markdown blocks and an info box 0.58 s, with the same
content as one element 0.52 s. ``ui.run_page`` opens one around the page, ``ui.fragment`` one around each
fragment.

Nothing changes for the page's code: each light function still returns what was chosen, keeps it under its
key and runs its callback when the browser sends something. Order is kept whatever else the page draws: a
part is added to the element being built only while nothing of Streamlit's own was drawn since its last part
in the same place; else it starts a new element, whose place is kept by a container made with its first part
(which shows the last run's element until the new one replaces it). The elements are drawn in their places
when the panel ends (so a note written later, :func:`placeholder`, shows what was last written); a part alone
between Streamlit's elements is drawn as its own element, as outside a panel, and so is a part given a column
or container of its own.

What the browser sends is one event, ``part``: ``{"id": the part's id, "value": ...}``; it is handed to the
part's own handler, which reads it with :func:`sent` as it reads its own element's event outside a panel.
Ids are the keys the parts' elements would have had; a value for an id not drawn on the last run is ignored.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

COMPONENT_NAME = "structext_light_panel"
#: The boxes a note is drawn in (a caption's grey line, a box in the colours of ``st.info`` and others, a
#: section's heading as ``st.subheader`` draws it, or a line of text as ``st.markdown`` draws it).
NOTE_KINDS = ("caption", "info", "warning", "error", "success", "subheader", "markdown")

TEXT_JS = r"""
// a note: its runs of text (plain, strong, emphasis, code), each written with textContent
function drawNote(root, data) {
  if (root.__note === JSON.stringify(data)) return;
  root.__note = JSON.stringify(data);
  root.replaceChildren();
  if (!data.runs.length) return;  // a place for a note not written: nothing shows
  const box = document.createElement("div");
  box.className = "sxp-note sxp-" + data.kind;
  if (data.kind === "subheader") {
    box.setAttribute("role", "heading");
    box.setAttribute("aria-level", "3");
  } else if (data.kind !== "markdown") box.setAttribute("role", data.kind === "caption" ? "note" : "status");
  if (data.icon) {
    const icon = document.createElement("span");
    icon.className = "sxp-icon";
    icon.setAttribute("aria-hidden", "true");
    icon.textContent = data.icon;
    box.appendChild(icon);
  }
  const text = document.createElement("div");
  text.className = "sxp-text";
  for (const [style, words] of data.runs) {
    if (style === "\n") { text.appendChild(document.createElement("br")); continue; }
    const tag = { b: "strong", i: "em", c: "code", bi: "strong" }[style];
    const node = tag ? document.createElement(tag) : document.createTextNode(words);
    if (tag) node.textContent = words;
    if (style === "bi") node.style.fontStyle = "italic";
    text.appendChild(node);
  }
  box.appendChild(text);
  root.appendChild(box);
}
"""

PANEL_CSS = r"""
.sxp { display: flex; flex-direction: column; gap: 1rem; }
.sxp-part:empty { display: none; }
.sxp-row { display: flex; flex-wrap: wrap; gap: 1rem; }
.sxp-row.sxp-small { gap: 0.5rem; }
.sxp-row.sxp-center { align-items: center; }
.sxp-row.sxp-bottom { align-items: flex-end; }
.sxp-row > .sxp-part { min-width: 0; }
.sxp-note { font-family: var(--st-font, "Source Sans Pro", sans-serif); display: flex; gap: 0.75rem;
  align-items: flex-start; overflow-wrap: anywhere; }
.sxp-caption { font-size: 0.875rem; color: var(--st-text-color, #31333f); opacity: 0.65; }
.sxp-info, .sxp-warning, .sxp-error, .sxp-success { padding: 1rem; border-radius: 0.5rem; }
.sxp-info { background: rgba(28, 131, 225, 0.1); color: rgb(0, 66, 128); }
.sxp-warning { background: rgba(255, 227, 18, 0.1); color: rgb(146, 108, 5); }
.sxp-error { background: rgba(255, 43, 43, 0.09); color: rgb(125, 53, 59); }
.sxp-success { background: rgba(33, 195, 84, 0.1); color: rgb(23, 114, 51); }
.sxp-subheader { font-size: 1.75rem; font-weight: 600; line-height: 1.2; letter-spacing: -0.005em;
  color: var(--st-text-color, #31333f); padding: 0.5rem 0 0 0; }
.sxp-note code { font-family: var(--st-code-font, "Source Code Pro", monospace); font-size: 0.9em;
  padding: 0.1em 0.25em; border-radius: 0.25rem; background: var(--st-secondary-background-color, #f0f2f6); }
.sxp-icon { font-family: "Material Symbols Rounded"; font-size: 1.25rem; line-height: 1.3; flex: none;
  font-feature-settings: "liga"; -webkit-font-smoothing: antialiased; }
"""

PANEL_JS = r"""
// the parts in ``box``, in order; each keeps its node from run to run (by id and kind): a select keeps its focus,
// a block its scroll. ``post(id, value)`` sends a part's event.
function drawParts(box, parts, post) {
  const kept = new Map([...box.children].map((node) => [node.__id, node]));
  parts.forEach((part, n) => {
    let node = kept.get(part.id);
    if (node && node.__kind !== part.kind) node.remove();  // another kind under that id: drawn anew
    if (!node || node.__kind !== part.kind) {
      node = document.createElement("div");
      node.className = "sxp-part";
      node.__id = part.id;
      node.__kind = part.kind;
    }
    kept.delete(part.id);
    if (box.children[n] !== node) box.insertBefore(node, box.children[n] || null);
    // in a row: as wide as asked ("stretch" shares the row, "content" its own width, a number in pixels)
    const width = part.width;
    node.style.flex = width === undefined || width === null ? "" : width === "stretch" ? "1 1 0"
      : width === "content" ? "0 0 auto" : `0 0 ${Number(width)}px`;
    DRAW[part.kind](node, part.data, (value) => post(part.id, value), post);
  });
  for (const node of kept.values()) node.remove();
}

// parts side by side (light_panel.row)
DRAW["row"] = (node, data, send, post) => {
  let row = node.firstElementChild;
  if (!row) {
    row = document.createElement("div");
    node.appendChild(row);
  }
  row.className = "sxp-row sxp-" + data.align + (data.gap === "small" ? " sxp-small" : "");
  drawParts(row, data.parts, post);
};

export default function ({ data, parentElement, setTriggerValue }) {
  let panel = parentElement.querySelector("div.sxp");
  if (!panel) {
    panel = document.createElement("div");
    panel.className = "sxp";
    parentElement.appendChild(panel);
  }
  drawParts(panel, data.parts, (id, value) => setTriggerValue("part", { id, value }));
}
"""

_LOCAL = threading.local()


@dataclass
class _Segment:
    """The parts of one element being built: where it goes, and the place the next part must be at."""
    key: str
    slot: object
    cursor: object
    index: int
    parts: list[dict] = field(default_factory=list)
    handlers: dict[str, Callable[[], None]] = field(default_factory=dict)


@dataclass
class _Panel:
    key: str
    segments: list[_Segment] = field(default_factory=list)


class _Kind(NamedTuple):
    """A kind of part: its drawing code and the name of its function there, its style sheet, and its own
    element's component and event (a note has none: alone, it is Streamlit's)."""
    code: str
    function: str
    css: str
    component: Callable | None
    event: str


def _kinds() -> dict[str, _Kind]:
    """Every kind of part, by name. Imported here, not at the top: the light modules import this one to add
    their parts."""
    from structext_core.ui import heatmap_table, light_choice, light_html, light_section
    return {"choice": _Kind(light_choice.DRAW_JS, "drawChoice", light_choice.CHOICE_CSS, light_choice.component, "choose"),
            "html": _Kind(light_html.DRAW_JS, "drawHtml", light_html.HTML_CSS, light_html.component, ""),
            "section": _Kind(light_section.DRAW_JS, "drawSection", light_section.SECTION_CSS, light_section.component,
                             "choose"),
            "heatmap": _Kind(heatmap_table.DRAW_JS, "drawHeatmap", heatmap_table.TABLE_CSS, heatmap_table.component,
                             "cell"),
            "note": _Kind(TEXT_JS, "drawNote", "", None, "")}


def component():
    """The component, registered as the page runs (as the other components are): each kind's code in a scope
    of its own (their helpers share names), and a table of them by kind."""
    kinds = _kinds()
    js = "const DRAW = {};\n" + "".join(f'DRAW["{name}"] = (() => {{\n{kind.code}\nreturn {kind.function};\n}})();\n'
                                        for name, kind in kinds.items()) + PANEL_JS
    css = PANEL_CSS + "".join(kind.css for kind in kinds.values())
    return st.components.v2.component(COMPONENT_NAME, css=css, js=js)


def _current() -> _Panel | None:
    stack = getattr(_LOCAL, "panels", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def panel(key: str):
    """Draw the light elements of the block as parts of as few elements as their order allows (one, when
    nothing of Streamlit's own comes between them). ``key`` names its elements (``key:0``, ``key:1``...)."""
    if get_script_run_ctx(suppress_warning=True) is None:  # a bare script: each element on its own
        yield
        return
    stack = _LOCAL.__dict__.setdefault("panels", [])
    stack.append(_Panel(key))
    try:
        yield
    finally:
        with _stop_held():  # after a stop, an error or a rerun too: what was drawn before it shows
            _close(stack.pop())


@contextlib.contextmanager
def _stop_held():
    """Hold back this run's stop request while the panel's elements are drawn: after st.stop() Streamlit raises
    again at every element drawn (its request stays until the run ends), which lost every part a panel drew at
    its end. The request is put back after, as it was (Streamlit is pinned: requirements.txt)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    requests = getattr(ctx, "script_requests", None)
    if requests is None or getattr(requests, "_state", None) is not ScriptRequestType.STOP:
        yield
        return
    with requests._lock:  # noqa: SLF001 - Streamlit's own request state, read and set as request_stop does
        requests._state = ScriptRequestType.CONTINUE  # noqa: SLF001
    try:
        yield
    finally:
        with requests._lock:  # noqa: SLF001
            if requests._state is ScriptRequestType.CONTINUE:  # noqa: SLF001 - no other request came meanwhile
                requests._state = ScriptRequestType.STOP  # noqa: SLF001


def _place():
    """The running cursor of the place the next element goes to (``None`` where a part cannot go: a place
    kept for one element, or no script run)."""
    from streamlit.cursor import RunningCursor
    cursor = st._main._active_dg._cursor  # noqa: SLF001 - Streamlit is pinned: requirements.txt
    return cursor if isinstance(cursor, RunningCursor) else None


def _page_draws_light() -> bool:
    """Whether this run's page said it draws light elements (``light_html.page_draws_light``): only such a page
    draws them as parts (another page's run is as it was, its elements each shown as it is drawn)."""
    from structext_core.ui import light_html
    return light_html.here()


def drawing(where=None) -> bool:
    """Whether a light element drawn now in ``where`` would be a part of a panel."""
    return (_current() is not None and (where is None or where is st) and _page_draws_light()
            and _place() is not None)


def add(kind: str, part_id: str, data: dict, handler: Callable[[], None] | None = None, where=None,
        width: str | int | None = None) -> bool:
    """Add a part to the panel being drawn: whether it was (else the caller draws its own element: no panel
    is open, or ``where`` names a column or container of its own). ``handler`` runs when the browser sends
    something for it (read with :func:`sent`). In a :func:`row`, the part goes into it, ``width`` wide."""
    now = _current()
    if now is None or (where is not None and where is not st) or not _page_draws_light():
        return False
    rows = getattr(_LOCAL, "rows", None)
    if rows and rows[-1].panel is now:  # a part of the row being drawn (its place is the row's)
        into = rows[-1]
        ctx = get_script_run_ctx(suppress_warning=True)
        if not ctx.shared.widget_user_keys_this_run.check_and_add(part_id):
            raise ValueError(f"two light elements of one key on this page: {part_id!r}")
        into.parts.append({"id": part_id, "kind": kind, "data": data, "width": width})
        if handler is not None:
            into.segment.handlers[part_id] = handler
        return True
    cursor = _place()
    if cursor is None:
        return False
    segment = now.segments[-1] if now.segments else None
    if segment is None or segment.cursor is not cursor or cursor.index != segment.index:
        segment = _Segment(f"{now.key}:{len(now.segments)}", _slot(), cursor, cursor.index)
        now.segments.append(segment)
    ctx = get_script_run_ctx(suppress_warning=True)
    if not ctx.shared.widget_user_keys_this_run.check_and_add(part_id):  # its key is taken, as a widget's
        raise ValueError(f"two light elements of one key on this page: {part_id!r}")
    segment.parts.append({"id": part_id, "kind": kind, "data": data})
    if handler is not None:
        segment.handlers[part_id] = handler
    return True


@dataclass
class _Row:
    """A row being drawn: its panel, the segment its part is in, and its parts."""
    panel: _Panel
    segment: _Segment
    parts: list[dict]


@contextlib.contextmanager
def row(vertical_alignment: str = "center", gap: str = "medium"):
    """The light elements of the block side by side (each as wide as its ``width``): in a panel, one part of
    it; elsewhere, a horizontal container of Streamlit's, each its own element as before. Only light
    elements and notes go in a row (``vertical_alignment`` "center" or "bottom"; ``gap`` "medium" or
    "small")."""
    if not drawing():
        with st.container(horizontal=True, vertical_alignment=vertical_alignment, gap=gap):
            yield
        return
    now = _current()
    parts: list[dict] = []
    add("row", free_key(f"{now.key}-row-"), {"parts": parts, "align": vertical_alignment, "gap": gap})
    stack = _LOCAL.__dict__.setdefault("rows", [])
    stack.append(_Row(now, now.segments[-1], parts))
    try:
        yield
    finally:
        stack.pop()


def _slot():
    """A place kept for one element at the place the next element goes to: a container, whose element is drawn
    when the panel ends. Not ``st.empty()``: an empty element blanks the last run's element in that place for
    the rest of the run (a flash on every click), where a container keeps showing what it held until the new
    element replaces it; and a place must be sent in its order (the browser refuses an element past the end)."""
    return st.container()


def _close(now: _Panel) -> None:
    """Draw each element built, in the place kept for it (when the panel ends: a note written later,
    :func:`placeholder`, is drawn as it was last written)."""
    for segment in now.segments:
        handlers = dict(segment.handlers)
        with segment.slot:
            if len(segment.parts) == 1 and segment.parts[0]["kind"] != "row":  # alone: its own element
                _alone(segment.parts[0], handlers.get(segment.parts[0]["id"]))
                continue
            component()(data={"key": segment.key, "parts": segment.parts}, key=segment.key,
                        on_part_change=lambda key=segment.key, handlers=handlers: _dispatch(key, handlers))


def _alone(part: dict, handler: Callable[[], None] | None) -> None:
    """A part drawn as the element it is outside a panel (under its own id, its handler on its own event): alone,
    it costs the browser less than a panel of one part would, whose element carries every kind's code."""
    data = part["data"]
    if part["kind"] == "note":
        if data["runs"]:
            icon = {"icon": f":material/{data['icon']}:"} if data["icon"] and data["kind"] not in ("caption", "subheader") else {}
            getattr(st, data["kind"])(data["text"], **icon)
        return
    kind = _kinds()[part["kind"]]
    taken = get_script_run_ctx(suppress_warning=True).shared.widget_user_keys_this_run
    with taken._lock:  # noqa: SLF001 - its key, taken for the part (:func:`add`), is now the element's own
        taken._data.discard(part["id"])  # noqa: SLF001
    kind.component()(data=data, key=part["id"], **({f"on_{kind.event}_change": handler} if handler is not None else {}))


def _dispatch(key: str, handlers: dict[str, Callable[[], None]]) -> None:
    """The browser sent an event of a part: hand it to that part's handler (an id not drawn, or anything
    but ``{"id", "value"}``, is ignored)."""
    state = st.session_state.get(key)
    event = state.get("part") if hasattr(state, "get") else getattr(state, "part", None)
    if not isinstance(event, dict) or not isinstance(event.get("id"), str) or event["id"] not in handlers:
        return
    _LOCAL.sent = (event["id"], event.get("value"))
    try:
        handlers[event["id"]]()
    finally:
        _LOCAL.sent = None


def sent(element_key: str, event: str):
    """What the element ``element_key`` sent as ``event`` on this run, or ``None``: as a part of a panel, the
    value being handed to it; else its own element's event."""
    handed = getattr(_LOCAL, "sent", None)
    if handed is not None and handed[0] == element_key:
        return handed[1]
    state = st.session_state.get(element_key)
    if state is None:
        return None
    return state.get(event) if hasattr(state, "get") else getattr(state, event, None)


# ---------------------------------------------------------------- notes

_TOKEN = re.compile(r"\\[!-/:-@\[-`{-~]|`+|\*\*|\*|\n")


def runs(text: str) -> list[list[str]]:
    """``text`` (Markdown as our captions write it: ``**strong**``, ``*emphasis*``, ``code`` in backticks,
    backslash escapes, line breaks, ``- `` list items shown with a bullet) as runs ``[style, words]`` (style ``""``, ``"b"``, ``"i"``, ``"bi"``,
    ``"c"``, or ``"\\n"`` for a line break), each drawn as text. One pass over the text, no recursion; a
    marker without its pair is shown as it is."""
    out: list[list[str]] = []
    closers = _closers(text)
    unclosed: set[str] = set()
    words: list[str] = []
    strong = emphasis = False
    at = 0

    def push() -> None:
        if words:
            out.append([("b" if strong else "") + ("i" if emphasis else ""), "".join(words)])
            words.clear()

    at = _bullet(text, at, words)
    while (match := _TOKEN.search(text, at)) is not None:
        words.append(text[at:match.start()])
        token, at = match.group(), match.end()
        if token.startswith("\\"):
            words.append(token[1])
        elif token.startswith("`"):
            close = -1 if token in unclosed else text.find(token, at)
            if close < 0:  # no run of these backticks closes it, here or later
                unclosed.add(token)
                words.append(token)
                continue
            push()
            out.append(["c", text[at:close]])
            at = close + len(token)
        elif token == "\n":
            push()
            out.append(["\n", ""])
            at = _bullet(text, at, words)
        elif ((strong if token == "**" else emphasis) and match.start() > 0 and not text[match.start() - 1].isspace()
              or not (strong if token == "**" else emphasis) and _closes(text, at, closers[token], closers["\n"])):
            push()
            if token == "**":
                strong = not strong
            else:
                emphasis = not emphasis
        else:
            words.append(token)
    words.append(text[at:])
    push()
    return [run for run in out if run[1] or run[0] == "\n"]


def _bullet(text: str, at: int, words: list[str]) -> int:
    """A line that starts a Markdown list item (``- ``) starts with a bullet: where its text begins."""
    if text.startswith("- ", at):
        words.append("\u2022 ")
        return at + 2
    return at


def _closers(text: str) -> dict[str, list[int]]:
    """Where each marker may close a pair: its places right after text (not after a space), and the lines'
    ends (``"\\n"``), each list in order."""
    found: dict[str, list[int]] = {"**": [], "*": [], "\n": []}
    for match in re.finditer(r"\*\*|\*|\n", text):
        at = match.start()
        if match.group() == "\n" or (at > 0 and not text[at - 1].isspace()):
            found[match.group()].append(at)
    return found


def _closes(text: str, at: int, closers: list[int], line_ends: list[int]) -> bool:
    """Whether a marker opening just before ``at`` has its pair later on its line (``closers``: where one may
    close, :func:`_closers`): text right after it, and a closer before the line ends. A search in sorted lists,
    not a walk along the line: a text of many markers is read in one pass."""
    if at >= len(text) or text[at].isspace():
        return False
    n = bisect.bisect_right(closers, at)
    end = bisect.bisect_left(line_ends, at)
    return n < len(closers) and (end == len(line_ends) or closers[n] < line_ends[end])


def note(text: str, kind: str = "caption", icon: str | None = None) -> dict | None:
    """A caption, or an info, warning, error or success box (``kind``), with ``text`` in our captions' Markdown
    (:func:`runs`) and a ``:material/name:`` ``icon``: a part of the panel being drawn, else the Streamlit
    element of that kind."""
    if kind not in NOTE_KINDS:
        raise ValueError(f"a note is one of {NOTE_KINDS}, not {kind!r}")
    if drawing():
        data = _note_data(text, kind, icon)
        add("note", free_key(f"{_current().key}-note-"), data)
        return data
    draw = getattr(st, kind)
    draw(text) if kind == "caption" or icon is None else draw(text, icon=icon)
    return None


class _Later:
    """A place for a note written later (:func:`placeholder`) in a panel: each write replaces the last."""

    def __init__(self) -> None:
        self._data = note("")

    def _write(self, text: str, kind: str, icon: str | None) -> None:
        self._data.update(_note_data(text, kind, icon))

    def caption(self, text: str) -> None:
        self._write(text, "caption", None)

    def info(self, text: str, icon: str | None = None) -> None:
        self._write(text, "info", icon)

    def warning(self, text: str, icon: str | None = None) -> None:
        self._write(text, "warning", icon)

    def empty(self) -> None:
        self._write("", "caption", None)


def placeholder():
    """A place for a note written later, as ``st.empty()`` is (its ``caption``, ``info`` and ``warning`` each
    replace what it showed, ``empty`` clears it): in a panel, a part of it, drawn as last written when the panel ends."""
    return _Later() if drawing() else st.empty()


def _note_data(text: str, kind: str, icon: str | None) -> dict:
    """What the browser is sent of a note: its kind, its text (as written, for the tests), its runs and its icon."""
    return {"kind": kind, "text": text, "runs": runs(text), "icon": material_name(icon)}


def material_name(icon: str | None) -> str:
    """The name in a ``:material/name:`` icon ("" for anything else)."""
    return icon[len(":material/"):-1] if icon and icon.startswith(":material/") and icon.endswith(":") else ""


def free_key(prefix: str) -> str:
    """``prefix`` and the first number no element of this run has taken as its key yet."""
    ctx = get_script_run_ctx(suppress_warning=True)
    taken = () if ctx is None else ctx.shared.widget_user_keys_this_run
    n = 0
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"
