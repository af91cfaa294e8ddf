"""A set-up form the browser builds from plain data: native inputs in one page element, where
``st.form`` drew one of Streamlit's widgets per field (issue 46: pages that answer).

Measured bare beside a trivial page (0.52 s): a form of a name, two numbers, 300 annotators to
choose and a button took 0.67 s as ``st.form``, 0.54 s as this element. The fields are the browser's
own (``<input>``, ``<textarea>``, ``<select>``, check boxes), each with its ``<label>``, help text tied to it
(``aria-describedby``), the browser's own checks of a number's bounds and step (and of a text marked
``required``) before the form is sent; Enter in a text field sends it, as in ``st.form``. Nothing is
sent to the server before the button: a click on it (or Enter) sends every value at once, the page
runs again, and the button takes no other click until the page has answered (no second create).

The server trusts none of it: :func:`form` checks what arrives against the declaration (text
length, number bounds and type, choices among the options) and returns the values, typed, on the
run the button started (``None`` on every other run). A value that fails is shown as an error
naming its field, and nothing is returned. ``clear(key)`` empties the form to its defaults (after
a create that worked); otherwise what a person typed stays, also after an error.

Labels and options come from the lab's files and people's names: the browser writes every one of
them with textContent (a test holds the script to that).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import streamlit as st

COMPONENT_NAME = "structext_light_form"


@dataclass(frozen=True)
class Text:
    """A line of text, or with ``lines`` above 1 a box of that many lines (Enter there starts a new line)."""
    name: str
    label: str
    value: str = ""
    placeholder: str = ""
    help: str = ""
    max_chars: int = 200
    required: bool = False
    lines: int = 1
    kind: str = field(default="text", init=False)


@dataclass(frozen=True)
class Number:
    """A whole number (``step`` 1) or a decimal one, within ``min_value`` and ``max_value``. The browser takes
    only ``min_value`` (else 0) plus a multiple of ``step`` (``st.number_input``'s step moves its arrows only):
    a count any person may type keeps ``step`` 1."""
    name: str
    label: str
    value: float
    min_value: float | None = None
    max_value: float | None = None
    step: float = 1
    help: str = ""
    kind: str = field(default="number", init=False)


@dataclass(frozen=True)
class Choices:
    """Any of ``options`` (value -> label, in the order shown; a value of any kind, sent to the browser as
    text and given back as it was), as check boxes; a filter box above them when there are more than 8.
    With ``follows`` (the name of a :class:`Choice` above it), the options are ``options_by`` of the value
    chosen there, shown anew when that choice changes (``options`` is then not used)."""
    name: str
    label: str
    options: Mapping
    value: Sequence = ()
    help: str = ""
    follows: str | None = None
    options_by: Mapping | None = None
    kind: str = field(default="choices", init=False)


@dataclass(frozen=True)
class Choice:
    """One of ``options`` (value -> label, as :class:`Choices`), as the browser's select box."""
    name: str
    label: str
    options: Mapping
    value: object = None
    help: str = ""
    kind: str = field(default="choice", init=False)


@dataclass(frozen=True)
class Check:
    """Yes or no, as one check box beside its label."""
    name: str
    label: str
    value: bool = False
    help: str = ""
    kind: str = field(default="check", init=False)


Field = Text | Number | Choices | Choice | Check
#: A row of the form: one field, or several side by side.
Row = Field | tuple[Field, ...]


class FormError(ValueError):
    """What arrived does not fit the form (only a changed page or a forged request sends it)."""


#: The one way the light elements' scripts make a node: text is written with textContent, never parsed.
ELEMENT_JS = r"""
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null && text !== "") node.textContent = text;
  return node;
}
"""

FORM_JS = ELEMENT_JS + r"""
function build(form, data, keep) {
  form.replaceChildren();
  const readers = [];
  const selects = {};  // the select boxes by name, for the choices that follow one
  const uid = "sxf-" + data.key + "-";
  const fieldBox = (f) => {
    const box = el("div", "sxf-field");
    const label = el("label", "sxf-label", f.label);
    label.htmlFor = uid + f.name;
    box.appendChild(label);
    return box;
  };
  const helpLine = (box, f, input) => {
    if (!f.help) return;
    const help = el("div", "sxf-help", f.help);
    help.id = uid + f.name + "-help";
    input.setAttribute("aria-describedby", help.id);
    box.appendChild(help);
  };
  const make = (f) => {
    const old = keep[f.name];
    if (f.kind === "check") {
      const box = el("div", "sxf-field");
      const label = el("label", "sxf-option");
      const input = el("input");
      input.type = "checkbox";
      input.id = uid + f.name;
      input.name = f.name;
      input.checked = old !== undefined ? old : f.value;
      label.append(input, el("span", null, f.label));
      box.appendChild(label);
      helpLine(box, f, input);
      readers.push(() => [f.name, input.checked]);
      return box;
    }
    if (f.kind === "text" || f.kind === "number") {
      const box = fieldBox(f);
      const area = f.kind === "text" && f.lines > 1;
      const input = el(area ? "textarea" : "input", "sxf-input");
      input.id = uid + f.name;
      input.name = f.name;
      if (area) input.rows = f.lines;
      if (f.kind === "text") {
        if (!area) input.type = "text";
        input.maxLength = f.max_chars;
        input.placeholder = f.placeholder || "";
        input.required = !!f.required;
        input.value = old !== undefined ? old : f.value;
        readers.push(() => [f.name, input.value]);
      } else {
        input.type = "number";
        if (f.min_value !== null) input.min = String(f.min_value);
        if (f.max_value !== null) input.max = String(f.max_value);
        input.step = String(f.step);
        input.required = true;
        input.value = String(old !== undefined ? old : f.value);
        readers.push(() => [f.name, input.value === "" ? null : Number(input.value)]);
      }
      box.appendChild(input);
      helpLine(box, f, input);
      return box;
    }
    if (f.kind === "choice") {
      const box = fieldBox(f);
      const select = el("select", "sxf-input");
      select.id = uid + f.name;
      select.name = f.name;
      for (const [value, text] of f.options) {
        const option = el("option", null, text);
        option.value = value;
        select.appendChild(option);
      }
      const chosen = old !== undefined ? old : f.value;
      if (chosen !== null && chosen !== undefined) select.value = chosen;
      box.appendChild(select);
      helpLine(box, f, select);
      selects[f.name] = select;
      readers.push(() => [f.name, select.value]);
      return box;
    }
    // choices: check boxes in a fieldset, a filter above more than a few; with ``follows``, the options
    // of the choice made in that select box (filled again when it changes, what is still there kept)
    const box = el("fieldset", "sxf-field sxf-choices");
    box.appendChild(el("legend", "sxf-label", f.label));
    helpLine(box, f, box);  // under the legend, describing the whole list
    const count = el("span", "sxf-count");
    const list = el("div", "sxf-list");
    list.id = uid + f.name;
    const empty = el("div", "sxf-help", "Nothing to choose here.");
    let boxes = [];
    const recount = () => { count.textContent = boxes.filter((b) => b.checked).length + " of " + boxes.length + " chosen"; };
    const filter = el("input", "sxf-input sxf-filter");
    filter.type = "search";
    filter.setAttribute("aria-label", "Filter " + f.label);
    filter.setAttribute("aria-controls", list.id);
    filter.addEventListener("keydown", (e) => { if (e.key === "Enter") e.preventDefault(); });
    filter.addEventListener("input", () => {
      const needle = filter.value.trim().toLowerCase();
      for (const b of boxes) b.parentElement.hidden = needle !== "" && !b.parentElement.textContent.toLowerCase().includes(needle);
    });
    const fill = (options, chosen) => {
      list.replaceChildren();
      boxes = [];
      for (const [value, text] of options) {
        const item = el("label", "sxf-option");
        const check = el("input");
        check.type = "checkbox";
        check.value = value;
        check.checked = chosen.has(value);
        check.addEventListener("change", recount);
        item.appendChild(check);
        item.appendChild(el("span", null, text));
        list.appendChild(item);
        boxes.push(check);
      }
      filter.value = "";
      filter.hidden = options.length <= 8;
      filter.placeholder = "Filter " + options.length + " names";
      empty.hidden = options.length > 0;
      recount();
    };
    const tools = el("div", "sxf-tools");
    const all = el("button", "sxf-small", "Choose all shown");
    all.type = "button";
    all.setAttribute("aria-label", "Choose all shown: " + f.label);
    all.addEventListener("click", () => { for (const b of boxes) if (!b.parentElement.hidden) b.checked = true; recount(); });
    const none = el("button", "sxf-small", "Clear");
    none.type = "button";
    none.setAttribute("aria-label", "Clear: " + f.label);
    none.addEventListener("click", () => { for (const b of boxes) b.checked = false; recount(); });
    tools.append(filter, all, none, count);
    box.append(tools, list, empty);
    const leader = f.follows ? selects[f.follows] : null;
    const optionsNow = () => (leader ? (new Map(f.options_by).get(leader.value) || []) : f.options);
    fill(optionsNow(), new Set(old !== undefined ? old : f.value));
    if (leader) {
      leader.addEventListener("change", () => {
        fill(optionsNow(), new Set(boxes.filter((b) => b.checked).map((b) => b.value)));
      });
    }
    readers.push(() => [f.name, boxes.filter((b) => b.checked).map((b) => b.value)]);
    return box;
  };
  for (const row of data.rows) {
    if (row.length === 1) { form.appendChild(make(row[0])); continue; }
    const line = el("div", "sxf-row");
    for (const f of row) line.appendChild(make(f));
    form.appendChild(line);
  }
  const submit = el("button", "sxf-submit", data.submit);
  submit.type = "submit";
  form.appendChild(submit);
  return () => Object.fromEntries(readers.map((read) => read()));
}

export default function ({ data, parentElement, setTriggerValue }) {
  let form = parentElement.querySelector("form.sxf");
  const shape = JSON.stringify([data.rows, data.submit, data.generation]);
  if (!form) {
    form = el("form", "sxf");
    parentElement.appendChild(form);
  }
  if (form.__shape !== shape) {
    // a new generation (cleared after a create) starts from the defaults; a changed declaration keeps what
    // was typed or chosen, and takes its new defaults where the field was left at its old one
    const keep = form.__read && form.__generation === data.generation ? form.__read() : {};
    for (const [name, value] of Object.entries(form.__defaults || {})) {
      if (JSON.stringify(keep[name]) === value) delete keep[name];
    }
    form.__read = build(form, data, keep);
    form.__defaults = Object.fromEntries(data.rows.flat().map((f) => [f.name, JSON.stringify(f.value)]));
    form.__shape = shape;
    form.__generation = data.generation;
  }
  // sent once: the button waits for the page's answer (a draw with a new count of answers) before it
  // takes another click
  const button = form.querySelector(".sxf-submit");
  if (form.__answers !== data.answers) button.disabled = false;
  form.__answers = data.answers;
  form.onsubmit = (event) => {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    setTriggerValue("submit", form.__read());
  };
}
"""

FORM_CSS = """
.sxf { display: flex; flex-direction: column; gap: 1rem; padding: 1rem; border-radius: 0.5rem;
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); font-family: var(--st-font, inherit);
  color: var(--st-text-color, inherit); font-size: 1rem; }
.sxf-row { display: flex; gap: 1rem; flex-wrap: wrap; }
.sxf-row > .sxf-field { flex: 1 1 12rem; }
.sxf-field { display: flex; flex-direction: column; gap: 0.25rem; min-width: 0; margin: 0; padding: 0; border: 0; }
.sxf-label { font-size: 0.875rem; padding: 0; }
.sxf-help { font-size: 0.8rem; opacity: 0.7; }
.sxf-input { font: inherit; color: inherit; padding: 0.5rem 0.75rem; border-radius: 0.5rem; min-width: 0;
  border: 1px solid transparent; background: var(--st-secondary-background-color, #f0f2f6); }
textarea.sxf-input { resize: vertical; line-height: 1.5; }
.sxf-input:focus, .sxf-option input:focus-visible, .sxf button:focus-visible {
  outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 1px; }
.sxf-tools { display: flex; align-items: center; gap: 0.5rem; flex-wrap: wrap; }
.sxf-filter { flex: 1 1 12rem; padding: 0.35rem 0.75rem; }
.sxf-count { font-size: 0.8rem; opacity: 0.7; }
.sxf-list { max-height: 11rem; overflow-y: auto; display: grid; gap: 0.1rem 1rem; padding: 0.25rem 0;
  grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); }
.sxf-option { display: flex; align-items: center; gap: 0.4rem; font-size: 0.9rem; overflow-wrap: anywhere; }
.sxf-option[hidden] { display: none; }
.sxf-option input { accent-color: var(--st-primary-color, #ff4b4b); }
.sxf button { font: inherit; cursor: pointer; border-radius: 0.5rem; }
.sxf button:disabled { cursor: wait; opacity: 0.6; }
.sxf .sxf-small { font-size: 0.8rem; padding: 0.2rem 0.6rem; color: inherit; background: transparent;
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); }
.sxf-submit { align-self: flex-start; padding: 0.4rem 0.9rem; border: 0; color: #ffffff;
  background: var(--st-primary-color, #ff4b4b); }
"""


def inside(where):
    """What to draw a light element in: ``where`` (a column or container), or the page's place when it is
    ``None`` or ``st`` itself."""
    return contextlib.nullcontext() if where is None or where is st else where


def component():
    """The component, registered as the page runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=FORM_CSS, js=FORM_JS)


def _generation_key(key: str) -> str:
    return f"{key}__generation"


def _answers_key(key: str) -> str:
    return f"{key}__answers"


def _answered(key: str) -> None:
    """The button's click arrived: the form's next draw differs (``answers``), which frees its button."""
    st.session_state[_answers_key(key)] = st.session_state.get(_answers_key(key), 0) + 1


def clear(key: str) -> None:
    """Empty the form ``key`` to its defaults on its next draw (after what it sent was done)."""
    st.session_state[_generation_key(key)] = st.session_state.get(_generation_key(key), 0) + 1


def _declared(field_: Field) -> dict:
    out = {"kind": field_.kind, "name": field_.name, "label": field_.label, "help": field_.help}
    if isinstance(field_, Text):
        out |= {"value": field_.value, "placeholder": field_.placeholder, "max_chars": field_.max_chars,
                "required": field_.required, "lines": field_.lines}
    elif isinstance(field_, Check):
        out |= {"value": bool(field_.value)}
    elif isinstance(field_, Number):
        out |= {"value": field_.value, "min_value": field_.min_value, "max_value": field_.max_value,
                "step": field_.step}
    elif isinstance(field_, Choices):
        out |= {"options": [[str(v), str(t)] for v, t in field_.options.items()],
                "value": [str(v) for v in field_.value], "follows": field_.follows}
        if field_.follows is not None:
            out["options_by"] = [[str(k), [[str(v), str(t)] for v, t in options.items()]]
                                 for k, options in (field_.options_by or {}).items()]
    else:  # the browser's select box shows its first option when none is chosen: so does the declaration
        first = next(iter(field_.options), None)
        chosen = field_.value if field_.value is not None else first
        out |= {"options": [[str(v), str(t)] for v, t in field_.options.items()],
                "value": None if chosen is None else str(chosen)}
    return out


def form_data(key: str, rows: Sequence[Row], submit: str, generation: int = 0, answers: int = 0) -> dict:
    """What the browser is sent: the rows of declared fields, the button's words, the generation (a new
    one empties the form) and the count of clicks answered (a new one frees the button)."""
    rows = [row if isinstance(row, tuple) else (row,) for row in rows]
    names = [f.name for row in rows for f in row]
    if len(set(names)) != len(names):
        raise ValueError(f"form {key!r}: two fields named alike in {names}")
    fields = [f for row in rows for f in row]
    for at, f in enumerate(fields):
        if isinstance(f, Choices) and f.follows is not None and not any(
                isinstance(g, Choice) and g.name == f.follows for g in fields[:at]):
            raise ValueError(f"form {key!r}: {f.name!r} follows {f.follows!r}, which is no select box above it")
    return {"key": key, "rows": [[_declared(f) for f in row] for row in rows], "submit": submit,
            "generation": generation, "answers": answers}


def checked(rows: Sequence[Row], sent: object) -> dict:
    """``sent`` (what the browser sent) checked against the form's ``rows`` and typed: text stripped of
    nothing (the page decides), numbers as int when their step is whole, choices in the options' order.
    Raises :class:`FormError` naming the field that does not fit."""
    if not isinstance(sent, Mapping):
        raise FormError("The form sent nothing readable: reload the page and fill it again.")
    out: dict = {}
    for f in (f for row in rows for f in (row if isinstance(row, tuple) else (row,))):
        value = sent.get(f.name)
        if isinstance(f, Text):
            if not isinstance(value, str) or len(value) > f.max_chars:
                raise FormError(f"{f.label}: at most {f.max_chars:,} characters of text.")
            out[f.name] = value
        elif isinstance(f, Check):
            if not isinstance(value, bool):
                raise FormError(f"{f.label}: yes or no (a check box) is needed.")
            out[f.name] = value
        elif isinstance(f, Number):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    isinstance(value, float) and not math.isfinite(value)):  # an int of any size compares exactly
                raise FormError(f"{f.label}: a number is needed.")
            if (f.min_value is not None and value < f.min_value) or (f.max_value is not None and value > f.max_value):
                shown = f"{value:,}" if abs(value) < 1e15 else "this number"
                if f.min_value is not None and f.max_value is not None:
                    raise FormError(f"{f.label}: {shown} is not between {f.min_value:,} and {f.max_value:,}.")
                bound = f"at least {f.min_value:,}" if f.min_value is not None else f"at most {f.max_value:,}"
                raise FormError(f"{f.label}: {shown}, where it must be {bound}.")
            whole = float(f.step).is_integer()
            if whole and isinstance(value, float) and not value.is_integer():
                raise FormError(f"{f.label}: a whole number is needed, not {value}.")
            out[f.name] = int(value) if whole else float(value)
        elif isinstance(f, Choices):
            offered = f.options if f.follows is None else (f.options_by or {}).get(out.get(f.follows), {})
            options = [str(v) for v in offered]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise FormError(f"{f.label}: the choice sent is not a list of names.")
            unknown = [v for v in value if v not in options]
            if unknown:
                raise FormError(f"{f.label}: {len(unknown):,} of the chosen are not among the options "
                                "(the list changed meanwhile: reload the page).")
            chosen = set(value)
            out[f.name] = [v for v in offered if str(v) in chosen]
        else:
            by_text = {str(v): v for v in f.options}
            if not isinstance(value, str) or value not in by_text:
                raise FormError(f"{f.label}: choose one of the options.")
            out[f.name] = by_text[value]
    return out


def form(key: str, rows: Sequence[Row], submit: str) -> dict | None:
    """Draw the form ``key`` and return what it sent, checked and typed (:func:`checked`), on the run
    its button started; ``None`` on every other run, and when what it sent does not fit (an error
    on the page names the field)."""
    data = form_data(key, rows, submit, st.session_state.get(_generation_key(key), 0),
                     st.session_state.get(_answers_key(key), 0))
    result = component()(data=data, key=key, on_submit_change=lambda: _answered(key))
    sent = result.get("submit") if hasattr(result, "get") else getattr(result, "submit", None)
    if sent is None:
        return None
    try:
        return checked(rows, sent)
    except FormError as error:
        st.error(str(error))
        return None
