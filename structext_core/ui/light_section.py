"""The header of a closed section, drawn as Streamlit's expander draws one, as a light element (issue 46).

``widgets.lazy_section`` draws a section's content only while it is open; closed, on a page that draws light
elements anyway (``light_html.page_draws_light``), its header is this element, and a click opens it in
Streamlit's own expander (the page runs again). Studies, whose eleven sections are closed on its first view:
0.665 s with Streamlit's expanders, 0.633 s with these headers, 0.614 s with no header at all (15 alternated
visits, the trivial page 0.445 s; docs/figures.yml).

An element of its own, not a kind of :mod:`light_choice`'s: each element carries its component's code to
the browser, and eleven copies of the chooser's (14 KB) made Studies no faster than the expanders did.
"""

from __future__ import annotations

import streamlit as st

from structext_core.ui import light_choice, light_form, light_panel

COMPONENT_NAME = "structext_light_section"

#: The header's drawing: ``drawSection(root, data, send)``, in its own element or a panel's part.
DRAW_JS = r"""
function drawSection(parent, data, send) {
  let button = parent.querySelector("button.sxs");
  if (!button) {
    button = document.createElement("button");
    button.className = "sxs";
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", () => button.__send("open"));
    parent.appendChild(button);
  }
  button.__send = send;
  const shape = JSON.stringify([data.label, data.icon, data.bold]);
  if (button.__shape === shape) return;
  button.__shape = shape;
  button.replaceChildren();
  // as Streamlit's expander: its icon when it has one, else an arrow
  const symbol = document.createElement("span");
  symbol.className = "sxs-symbol";
  symbol.setAttribute("aria-hidden", "true");
  symbol.textContent = data.icon || "chevron_right";
  const label = document.createElement("span");
  label.className = "sxs-label";
  // the label's first words in bold (a name before its figures), written as text as the rest is
  const bold = typeof data.bold === "string" && data.bold && data.label.startsWith(data.bold) ? data.bold : "";
  if (bold) {
    const strong = document.createElement("strong");
    strong.textContent = bold;
    label.appendChild(strong);
  }
  label.appendChild(document.createTextNode(data.label.slice(bold.length)));
  button.append(symbol, label);
}
"""

SECTION_JS = DRAW_JS + r"""
export default function ({ data, parentElement, setTriggerValue }) {
  drawSection(parentElement, data, (value) => setTriggerValue("choose", value));
}
"""

SECTION_CSS = r"""
.sxs { font-family: var(--st-font, "Source Sans Pro", sans-serif); font-size: 0.875rem;
  color: var(--st-text-color, #31333f); cursor: pointer; width: 100%; text-align: left; display: flex;
  align-items: center; gap: 0.5rem; padding: 0.5rem 0.75rem; min-height: 2.5rem; box-sizing: border-box;
  border-radius: 0.5rem; border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2));
  background: var(--st-background-color, #ffffff); }
.sxs:hover { color: var(--st-primary-color, #ff4b4b); }
.sxs:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 1px; }
.sxs-label { flex: 1 1 auto; min-width: 0; }
.sxs-symbol { font-family: "Material Symbols Rounded"; font-size: 1.125rem; line-height: 1; width: 1.125rem;
  overflow: hidden; flex: none; font-feature-settings: "liga"; -webkit-font-smoothing: antialiased; }
"""


def component():
    """The component, registered as the page runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=SECTION_CSS, js=SECTION_JS)


def _open(key: str) -> None:
    """The header was clicked: the section is open from this run on (anything but "open" is ignored)."""
    if light_choice.sent(key) == "open":
        st.session_state[key] = True


def section(label: str, *, key: str, icon: str | None = None, where=None, bold: str = "") -> None:
    """The header of the closed section ``key`` (in ``where``, a column or container, when given): ``icon`` (a
    ``:material/name:``; an arrow without one) and ``label``, as text, its first words ``bold`` (what the label
    starts with) in bold. A click sets ``st.session_state[key]`` and the page runs again, to draw the section
    open in Streamlit's own expander of that key (``widgets.lazy_section``)."""
    if bold and not label.startswith(bold):
        raise ValueError(f"the bold words {bold!r} are not the start of the label {label!r}")
    name = light_panel.material_name(icon)
    data = {"key": key, "label": label, "icon": name, "bold": bold}
    if light_panel.add("section", light_choice.element_key(key), data, lambda: _open(key), where):
        return
    with light_form.inside(where):
        component()(data=data, key=light_choice.element_key(key), on_choose_change=lambda: _open(key))
