"""The heatmap drawn as a tinted table in the page (:mod:`structext_core.views.heatmap_table` makes its
data): one element the browser builds from plain data, where the Vega-Lite chart first loaded and ran a
chart library. With ``on_pick``, a click on a cell (or Enter on it, each cell can take the focus) calls it
with the cell's (row, column) before the page runs again, so that what the page draws next follows the pick."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from structext_core.ui import light_panel

# The browser writes every label with textContent: none is ever read as markup.
#: The heatmap's drawing: ``drawHeatmap(root, data, send)``, in its own element or a panel's part.
DRAW_JS = r"""
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function drawHeatmap(parent, data, send) {
  let root = parent.querySelector(".sx-hm");
  if (!root) {
    root = el("div", "sx-hm");
    parent.appendChild(root);
  }
  root.replaceChildren();
  if (data.title) root.appendChild(el("div", "sx-hm-title", data.title));
  for (const line of data.subtitle || []) root.appendChild(el("div", "sx-hm-subtitle", line));

  const legend = el("div", "sx-hm-legend");
  legend.appendChild(el("span", "sx-hm-legend-title", data.value_title));
  const scale = el("div", "sx-hm-scale");
  const bar = el("div", "sx-hm-bar");
  bar.style.background = "linear-gradient(to right, " + data.legend.join(", ") + ")";
  const ticks = el("div", "sx-hm-ticks");
  for (const tick of [0, 20, 40, 60, 80, 100]) ticks.appendChild(el("span", null, String(tick)));
  scale.append(bar, ticks);
  legend.appendChild(scale);
  root.appendChild(legend);

  const byCell = new Map(data.cells.map((c) => [JSON.stringify([c.row_label, c.col_label]), c]));
  const picked = data.picked ? JSON.stringify(data.picked) : null;
  const table = el("table");
  const head = el("tr");
  const corner = el("th", "sx-hm-corner", data.row_title + " \u2193  " + data.col_title + " \u2192");
  corner.scope = "col";
  head.appendChild(corner);
  for (const col of data.cols) {
    const th = el("th", null, col);
    th.scope = "col";
    head.appendChild(th);
  }
  table.appendChild(el("thead")).appendChild(head);
  const body = table.appendChild(el("tbody"));
  for (const row of data.rows) {
    const tr = body.appendChild(el("tr"));
    const th = tr.appendChild(el("th", null, row));
    th.scope = "row";
    for (const col of data.cols) {
      const id = JSON.stringify([row, col]);
      const cell = byCell.get(id);
      const td = tr.appendChild(el("td"));
      if (!cell) {
        td.className = "sx-hm-empty";
        continue;
      }
      td.append(el("span", "sx-hm-value", cell.text), el("span", "sx-hm-n", cell.n_label));
      td.style.background = cell.background;
      td.style.color = cell.colour;
      td.title = cell.tip;
      td.setAttribute("aria-label", cell.tip.split("\n").join("; "));
      td.dataset.cell = id;
      if (data.clickable) {
        td.tabIndex = 0;
        td.setAttribute("role", "button");
      }
      if (id === picked) td.classList.add("sx-hm-picked");
    }
  }
  const scroll = el("div", "sx-hm-scroll");
  scroll.appendChild(table);
  root.appendChild(scroll);
  if (!data.clickable) return;
  table.className = "sx-hm-click";

  const pick = (target) => {
    const td = target.closest("td[data-cell]");
    if (!td) return false;
    send(JSON.parse(td.dataset.cell));
    return true;
  };
  table.onclick = (event) => { pick(event.target); };
  table.onkeydown = (event) => {
    if ((event.key === "Enter" || event.key === " ") && pick(event.target)) event.preventDefault();
  };
}
"""

TABLE_JS = DRAW_JS + r"""
export default function ({ data, parentElement, setTriggerValue }) {
  drawHeatmap(parentElement, data, (cell) => setTriggerValue("cell", cell));
}
"""

TABLE_CSS = """
.sx-hm { font-size: 0.8rem; }
.sx-hm-title { font-weight: 600; font-size: 0.95rem; }
.sx-hm-subtitle { font-size: 0.75rem; opacity: 0.75; }
.sx-hm-legend { display: flex; align-items: center; flex-wrap: wrap; gap: 0.25rem 0.75rem; margin: 0.5rem 0; }
.sx-hm-legend-title { opacity: 0.8; }
.sx-hm-scale { width: 240px; }
.sx-hm-bar { height: 12px; }
.sx-hm-ticks { display: flex; justify-content: space-between; font-size: 0.7rem; opacity: 0.8; }
.sx-hm-scroll { overflow-x: auto; }
.sx-hm table { border-collapse: collapse; width: 100%; }
.sx-hm th { font-weight: normal; padding: 2px 6px; overflow-wrap: anywhere; }
.sx-hm thead th { vertical-align: bottom; max-width: 12rem; }
.sx-hm tbody th { text-align: right; max-width: 16rem; }
.sx-hm th.sx-hm-corner { text-align: right; opacity: 0.7; white-space: nowrap; }
.sx-hm td { text-align: center; border: 1px solid white; height: 38px; min-width: 3.2rem; padding: 0 2px;
            line-height: 1.15; }
.sx-hm table.sx-hm-click td[data-cell] { cursor: pointer; }
.sx-hm td span { display: block; }
.sx-hm td .sx-hm-n { font-size: 0.68rem; }
.sx-hm table.sx-hm-click td[data-cell]:hover, .sx-hm td:focus-visible { outline: 2px solid #888888; outline-offset: -2px; }
.sx-hm td.sx-hm-picked { outline: 3px solid #ff4b4b; outline-offset: -3px; }
"""

COMPONENT_NAME = "structext_heatmap_table"


def component():
    """The component, registered as the page runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=TABLE_CSS, js=TABLE_JS)


def draw(data: dict, key: str, on_pick: Callable[[tuple[str, str]], None] | None = None) -> None:
    """Draw the heatmap ``data`` (:func:`structext_core.views.heatmap_table.table_data`); a click on a cell
    calls ``on_pick((row, column))`` before the next run (its cells take clicks when ``data["clickable"]``)."""
    def picked() -> None:
        cell = light_panel.sent(key, "cell")
        if isinstance(cell, list) and len(cell) == 2:
            on_pick((str(cell[0]), str(cell[1])))

    if light_panel.add("heatmap", key, data, None if on_pick is None else picked):
        return
    if on_pick is None:
        component()(data=data, key=key)
        return
    component()(data=data, key=key, on_cell_change=picked)
