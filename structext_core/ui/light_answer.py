"""A typed answer's screen as one page element the browser builds from plain data (issue 46: pages that
answer): the question's texts above, the answer box, its buttons (the first is the one Ctrl+Enter presses),
an optional pair of line boxes (From / To line) sent with every button, a hint and the answer's size as it
is typed. Streamlit drew these as about fourteen elements and blocks (Markdown, text, a form, a text area,
four form buttons, a row of two line boxes, two captions).

Like ``st.form``: nothing reaches the server before a button; a click sends the text as typed (and the
line boxes) with the button's name, as the element's ``action`` event, and the page runs once. The box keeps
what is typed in it from run to run: the server replaces it only by sending a new ``version`` (a text it
wrote, as "Add lines" does), and a box drawn anew (a reload, another tab) starts from the ``text`` it is
sent. The line boxes are written by the server the same way (:class:`LineRange`'s ``version``).

The server trusts none of it: :func:`box` hands its callback only a known button's name, a text of at most
``max_chars`` characters and line numbers within their bounds; anything else is ignored, a text too long
is refused with a message under the box (the browser keeps the text). Every text is written with textContent.

The activity script (:mod:`structext_core.ui.activity`) finds the box by ``window.__structextAnswerBox``:
the element draws in a shadow root, which ``document.querySelector`` does not enter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from structext_core.ui import light_form

COMPONENT_NAME = "structext_light_answer"


@dataclass(frozen=True)
class Button:
    """A button of the answer: its ``name`` (what is sent), ``label``, ``help`` (shown under the pointer);
    ``primary`` in the app's colour; ``wide`` on a row of its own under the others; ``disabled`` takes no click
    (a click sent anyway is ignored)."""
    name: str
    label: str
    primary: bool = False
    help: str = ""
    wide: bool = False
    disabled: bool = False


@dataclass(frozen=True)
class Sent:
    """What a click sent, checked: the button's name, the text in the box, the line boxes (``None``: empty)."""
    action: str
    text: str
    first: int | None = None
    last: int | None = None


ANSWER_CSS = r"""
.sxa { font-family: var(--st-font, "Source Sans Pro", sans-serif); color: var(--st-text-color, #31333f);
  display: flex; flex-direction: column; gap: 0.5rem; }
.sxa-heading { font-weight: 600; margin-top: 0.5rem; }
.sxa-heading:first-child { margin-top: 0; }
.sxa-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.sxa-label { font-size: 0.875rem; margin-top: 0.5rem; }
.sxa-box { font: inherit; color: inherit; width: 100%; box-sizing: border-box; resize: vertical;
  padding: 0.75rem; line-height: 1.5rem; border-radius: 0.5rem; border: 1px solid transparent;
  background: var(--st-secondary-background-color, #f0f2f6); }
.sxa-box:focus { outline: none; border-color: var(--st-primary-color, #ff4b4b); }
.sxa-row { display: flex; gap: 0.75rem; }
.sxa-row > * { flex: 1 1 auto; white-space: nowrap; }
.sxa-button { font: inherit; color: inherit; cursor: pointer; padding: 0.25rem 0.75rem; min-height: 2.5rem;
  border-radius: 0.5rem; border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2));
  background: var(--st-background-color, #ffffff); }
.sxa-button:hover:enabled { border-color: var(--st-primary-color, #ff4b4b); color: var(--st-primary-color, #ff4b4b); }
.sxa-button:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 1px; }
.sxa-button.sxa-primary { color: #ffffff; border-color: var(--st-primary-color, #ff4b4b);
  background: var(--st-primary-color, #ff4b4b); }
.sxa-button.sxa-primary:hover:enabled { color: #ffffff; filter: brightness(0.92); }
.sxa-button:disabled { cursor: not-allowed; opacity: 0.5; }
.sxa-lines { display: flex; gap: 1rem; }
.sxa-field { display: flex; flex-direction: column; gap: 0.25rem; width: 10rem; }
.sxa-field label { font-size: 0.875rem; }
.sxa-field input { font: inherit; color: inherit; padding: 0.45rem 0.6rem; border-radius: 0.5rem;
  border: 1px solid transparent; background: var(--st-secondary-background-color, #f0f2f6); }
.sxa-field input:focus { outline: none; border-color: var(--st-primary-color, #ff4b4b); }
.sxa-note { font-size: 0.875rem; opacity: 0.65; }
"""

ANSWER_JS = light_form.ELEMENT_JS + r"""
function count(n, noun) { return n.toLocaleString("en") + " " + noun + (n === 1 ? "" : "s"); }

// lines and characters as the server counts them (structext_core/views/reference.py: answer_size)
function size(text) {
  let lines = 0, chars = 0;
  for (const ch of text) { chars++; if (ch === "\n") lines++; }
  if (text && !text.endsWith("\n")) lines++;
  return [lines, count(lines, "line") + " \u00b7 " + count(chars, "character")];
}

function build(root, data) {
  root.replaceChildren();
  const uid = "sxa-" + data.key;
  const parts = { buttons: {} };
  for (const [heading, text] of data.blocks) {
    const body = el("div", "sxa-text", text);
    body.dataset.testid = "sxaText";  // the question first: what a test (or a person's script) reads
    root.append(el("div", "sxa-heading", heading), body);
  }
  const label = el("label", "sxa-label", data.label);
  label.htmlFor = uid;
  const box = el("textarea", "sxa-box");
  box.id = uid;
  box.setAttribute("aria-label", data.label);  // its name also where a script looks for it by attribute
  box.placeholder = data.placeholder;
  box.spellcheck = false;
  root.append(label, box);
  parts.box = box;
  const button = (b) => {
    const node = el("button", "sxa-button" + (b.primary ? " sxa-primary" : ""));
    node.type = "button";
    node.dataset.sendsText = "1";
    node.addEventListener("click", () => parts.send(b.name));
    parts.buttons[b.name] = node;
    return node;
  };
  const row = el("div", "sxa-row");
  for (const b of data.buttons.filter((b) => !b.wide)) row.appendChild(button(b));
  root.appendChild(row);
  for (const b of data.buttons.filter((b) => b.wide)) {
    const wide = el("div", "sxa-row");
    wide.appendChild(button(b));
    root.appendChild(wide);
  }
  if (data.range) {
    const lines = el("div", "sxa-lines");
    parts.range = data.range.labels.map(([text, placeholder], n) => {
      const field = el("div", "sxa-field");
      const name = el("label", null, text);
      const input = el("input");
      input.type = "number";
      input.min = "1";
      input.max = String(data.range.max);
      input.step = "1";
      input.id = uid + "-line-" + n;
      input.placeholder = placeholder;
      name.htmlFor = input.id;
      // Enter in a line box takes nothing: the lines go with the button beside them
      input.addEventListener("keydown", (event) => { if (event.key === "Enter") event.preventDefault(); });
      input.addEventListener("input", () => parts.name());
      field.append(name, input);
      lines.appendChild(field);
      return input;
    });
    root.appendChild(lines);
  }
  parts.hint = el("div", "sxa-note");
  parts.size = el("div", "sxa-note");
  parts.size.setAttribute("aria-live", "polite");
  root.append(parts.hint, parts.size);
  box.addEventListener("input", () => parts.fit());
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      const first = data.buttons[0];
      if (first && !parts.buttons[first.name].disabled) parts.send(first.name);
    }
  });
  return parts;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector("div.sxa");
  if (!root) {
    root = el("div", "sxa");
    parentElement.appendChild(root);
  }
  if (root.__key !== data.key) {  // a new question's box (or the first drawing)
    root.__key = data.key;
    root.__version = null;
    root.__rangeVersion = null;
    root.__parts = build(root, data);
  }
  const parts = root.__parts;
  const box = parts.box;
  parts.data = data;
  parts.fit = () => {
    const [lines, said] = size(box.value);
    const d = parts.data;
    box.style.height = (Math.min(d.max_rows, Math.max(d.min_rows, lines + 1)) * d.row_px + 26) + "px";
    parts.size.textContent = d.size ? d.label + ": " + said : "";
  };
  // the button the line boxes go with names the lines set in them ("Add lines 3–5 to the answer")
  parts.name = () => {
    const r = parts.data.range, node = r && parts.buttons[r.button];
    if (!node) return;
    const [first, last] = parts.range.map((input) => input.value);
    const span = first !== "" && last !== "" && Number.isFinite(Number(first)) && Number.isFinite(Number(last))
      ? ` ${Number(first).toLocaleString("en")}\u2013${Number(last).toLocaleString("en")}` : "";
    node.textContent = r.before + span + " " + r.after;
  };
  parts.send = (name) => {
    const value = { action: name, text: box.value };
    if (parts.range) {
      const [first, last] = parts.range.map((input) => input.value === "" ? null : Number(input.value));
      value.first = first;
      value.last = last;
    }
    setTriggerValue("action", value);
  };
  if (root.__version !== data.version) {  // a text the server wrote (or the box's first drawing)
    root.__version = data.version;
    box.value = data.text;
  }
  if (parts.range && root.__rangeVersion !== data.range.version) {
    root.__rangeVersion = data.range.version;
    parts.range.forEach((input, n) => {
      const value = data.range.values[n];
      input.value = value === null || value === undefined ? "" : String(value);
    });
  }
  for (const b of data.buttons) {
    const node = parts.buttons[b.name];
    if (!node) continue;
    node.textContent = b.label;
    node.title = b.help || "";
    node.disabled = !!(data.disabled || b.disabled);
  }
  parts.hint.textContent = data.hint || "";
  if (parts.range) parts.name();
  parts.fit();
  window.__structextAnswerBox = box;  // for the activity script: the shadow root hides it from the document
}
"""


def component():
    """The component, registered as the page runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=ANSWER_CSS, js=ANSWER_JS)


@dataclass(frozen=True)
class LineRange:
    """Two line boxes (From / To line: ``labels``, (label, placeholder) each) under the buttons, sent with every
    click: ``first`` and ``last`` written into them when ``version`` is new, whole numbers from 1 to ``max_line``.
    The button ``button`` names the lines set: "``before`` 3–5 ``after``", as :func:`span_label` does."""
    first: int | None
    last: int | None
    version: int
    labels: tuple[tuple[str, str], tuple[str, str]]
    button: str
    before: str
    after: str
    max_line: int = 10**9


def span_label(before: str, after: str, first: int | None, last: int | None) -> str:
    """A button's label naming the lines set: "Add lines 3–5 to the answer" ("Add lines to the answer" when a
    box is empty), as the browser writes it while the boxes are typed in."""
    span = f" {first:,.0f}\u2013{last:,.0f}" if first is not None and last is not None else ""
    return f"{before}{span} {after}"


@dataclass(frozen=True)
class Rows:
    """The answer box's height, in rows of text: one per line of the answer and one to type on, within bounds."""
    min_rows: int
    max_rows: int
    row_px: int


def checked(sent: object, names: Sequence[str], *, max_chars: int, max_line: int | None) -> Sent | None:
    """``sent`` (what the browser sent) as a :class:`Sent`, or ``None`` when it is not what this element
    sends (a forged request): a known button, text, and line numbers from 1 to ``max_line`` or empty. A text
    over ``max_chars`` raises :class:`ValueError` saying so (the page names the box before it)."""
    if not isinstance(sent, dict) or sent.get("action") not in names or not isinstance(sent.get("text"), str):
        return None
    lines: list[int | None] = []
    for name in ("first", "last"):
        value = sent.get(name)
        if value is None or max_line is None:
            lines.append(None)
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= max_line \
                or (isinstance(value, float) and not value.is_integer()):  # NaN is within no bounds
            return None
        else:
            lines.append(int(value))
    if len(sent["text"]) > max_chars:
        raise ValueError(f"over {max_chars:,} characters, so nothing was sent. Shorten it.")
    return Sent(sent["action"], sent["text"], *lines)


def box(key: str, *, label: str, text: str, version: int, buttons: Sequence[Button],
        on_action: Callable[[Sent], None], rows: Rows, max_chars: int, blocks: Sequence[tuple[str, str]] = (),
        placeholder: str = "", hint: str = "", disabled: bool = False, show_size: bool = True,
        line_range: LineRange | None = None, where=None) -> None:
    """Draw the answer element ``key``. ``text`` fills a box drawn anew, and the box drawn before when
    ``version`` differs from the one it showed; ``blocks`` are (heading, text) pairs above the box. A click
    calls ``on_action`` with what it sent, checked (:func:`checked`), before the page runs again, as a form
    button's ``on_click``. ``line_range`` adds the line boxes (written into them when its version is new)."""
    names = [] if disabled else [b.name for b in buttons if not b.disabled]  # what a click may name
    data = {"key": key, "label": label, "text": text, "version": version, "placeholder": placeholder,
            "blocks": [[heading, body] for heading, body in blocks], "hint": hint, "disabled": disabled,
            "size": show_size, "min_rows": rows.min_rows, "max_rows": rows.max_rows, "row_px": rows.row_px,
            "buttons": [{"name": b.name, "label": b.label, "primary": b.primary, "help": b.help, "wide": b.wide,
                         "disabled": b.disabled} for b in buttons],
            "range": None if line_range is None else {
                "values": [line_range.first, line_range.last], "version": line_range.version,
                "max": line_range.max_line, "labels": [list(pair) for pair in line_range.labels],
                "button": line_range.button, "before": line_range.before, "after": line_range.after}}

    def take() -> None:
        state = st.session_state.get(key)
        value = state.get("action") if hasattr(state, "get") else getattr(state, "action", None)
        try:
            sent = checked(value, names, max_chars=max_chars,
                           max_line=None if line_range is None else line_range.max_line)
        except ValueError as error:
            st.session_state[_error_key(key)] = f"{label}: {error}"  # shown under the box, drawn next
            return
        if sent is not None:
            on_action(sent)

    with light_form.inside(where):
        component()(data=data, key=key, on_action_change=take)
        if refused := st.session_state.pop(_error_key(key), None):
            st.error(refused)


def _error_key(key: str) -> str:
    return f"{key}:refused"  # no "__": Streamlit keeps it for the ids it derives
