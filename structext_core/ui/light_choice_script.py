"""The light chooser's code in the browser (:mod:`structext_core.ui.light_choice`): its drawing, its element's
script and its style sheet. Every label and option is written with textContent."""

from __future__ import annotations

from structext_core.ui import light_form

#: The chooser's drawing: ``drawChoice(root, data, send)``, in its own element or a panel's part.
DRAW_JS = light_form.ELEMENT_JS + r"""
// ``text`` under ``input`` in ``box``, read out with it (aria-describedby); nothing when there is none
function helpLine(box, input, text, uid) {
  if (!text) return;
  const help = el("div", "sxc-help", text);
  help.id = uid + "-help";
  input.setAttribute("aria-describedby", help.id);
  box.appendChild(help);
}

// a field of ``type`` under its label (the label names it for a screen reader and a click): [field, input]
function labelledInput(data, uid, type, className) {
  const box = el("div", "sxc-field");
  const label = el("label", "sxc-label", data.label);
  label.htmlFor = uid;
  const input = el("input", className);
  input.id = uid;
  input.type = type;
  box.append(label, input);
  return [box, input];
}

function build(root, data) {
  root.replaceChildren();
  const uid = "sxc-" + data.key;
  const send = (value) => root.__send && root.__send(value);
  let set;
  if (data.kind === "tabs") {
    // a tab list: each tab a button; the open one marked (aria-selected), arrows move between them
    const bar = el("div", "sxc-tabs");
    bar.setAttribute("role", "tablist");
    bar.setAttribute("aria-label", data.label);
    const tabs = [];
    for (const [value, text] of data.options) {
      const tab = el("button", "sxc-tab", text);
      tab.type = "button";
      tab.setAttribute("role", "tab");
      tab.value = value;
      tab.disabled = !!data.disabled;
      tab.addEventListener("click", () => { if (tab.getAttribute("aria-selected") !== "true") send(value); });
      tab.addEventListener("keydown", (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        event.preventDefault();
        tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length].focus();
      });
      bar.appendChild(tab);
      tabs.push(tab);
    }
    root.appendChild(bar);
    set = (value) => {
      for (const tab of tabs) {
        const open = tab.value === value;
        tab.setAttribute("aria-selected", String(open));
        tab.tabIndex = open ? 0 : -1;
      }
    };
  } else if (data.kind === "check") {
    const box = el("div", "sxc-field");
    const item = el("label", "sxc-option sxc-check" + (data.toggle ? " sxc-toggle" : ""));
    const input = el("input");
    input.type = "checkbox";
    input.id = uid;
    input.disabled = !!data.disabled;
    if (data.toggle) input.setAttribute("role", "switch");
    input.addEventListener("change", () => send(input.checked));
    item.append(input, el("span", null, data.label));
    box.appendChild(item);
    if (data.help) {  // under the pointer, as st.checkbox's help, and read out with the box
      item.title = data.help;
      const help = el("div", "sxc-hidden", data.help);
      help.id = uid + "-help";
      input.setAttribute("aria-describedby", help.id);
      box.appendChild(help);
    }
    root.appendChild(box);
    set = (value) => { input.checked = !!value; };
  } else if (data.kind === "actions" || data.kind === "downloads") {
    // buttons in a row, each sending its name: an action (one that opens a box says whether it is open), or
    // a download (the page runs again and sends where to fetch the file)
    const row = el("div", "sxc-actions");
    for (const [name, text] of data.options) {
      const button = el("button", data.kind === "downloads" ? "sxc-button sxc-download" : "sxc-button", text);
      button.type = "button";
      button.disabled = !!data.disabled;
      if (data.expanded && name in data.expanded) button.setAttribute("aria-expanded", String(!!data.expanded[name]));
      if (data.tips && data.tips[name]) button.title = data.tips[name];
      button.addEventListener("click", () => send(name));
      row.appendChild(button);
    }
    root.appendChild(row);
    set = () => {};
  } else if (data.kind === "number") {
    const [box, input] = labelledInput(data, uid, "number", "sxc-input sxc-number");
    input.min = String(data.min_value);
    input.max = String(data.max_value);
    input.step = String(data.step);
    input.required = !data.optional;  // an optional box may be left empty (sent as null)
    if (data.placeholder) input.placeholder = data.placeholder;
    input.disabled = !!data.disabled;
    // sent when it changes (Enter, leaving the box, the arrows): the browser's own bounds checked first
    input.addEventListener("change", () => {
      if (input.value === "" && data.optional && input.validity.valid) send(null);
      else if (input.value !== "" && input.checkValidity()) send(Number(input.value));
      else input.reportValidity();
    });
    helpLine(box, input, data.help, uid);
    root.appendChild(box);
    set = (value) => {
      if (document.activeElement !== input || input.value === "") input.value = value === null ? "" : String(value);
    };
  } else if (data.kind === "text") {
    // a line of text, sent when it changes (Enter, or leaving the box), as st.text_input sends it
    const [box, input] = labelledInput(data, uid, "text", "sxc-input");
    input.maxLength = data.max_chars;
    input.autocomplete = "off";
    if (data.placeholder) input.placeholder = data.placeholder;
    input.disabled = !!data.disabled;
    input.addEventListener("change", () => send(input.value));
    helpLine(box, input, data.help, uid);
    root.appendChild(box);
    set = (value) => { if (document.activeElement !== input) input.value = value || ""; };
  } else if (data.kind === "buttons") {
    const box = el("fieldset", "sxc-field sxc-buttons");
    const legend = el("legend", "sxc-label", data.label);
    if (data.collapsed) legend.classList.add("sxc-hidden");
    box.appendChild(legend);
    const row = el("div", "sxc-row");
    const inputs = [];
    for (const [value, text] of data.options) {
      const item = el("label", "sxc-option");
      const input = el("input");
      input.type = "radio";
      input.name = uid;
      input.value = value;
      input.disabled = !!data.disabled;
      input.addEventListener("change", () => { if (input.checked) send(value); });
      item.append(input, el("span", null, text));
      row.appendChild(item);
      inputs.push(input);
    }
    box.appendChild(row);
    if (data.help) box.appendChild(el("div", "sxc-help", data.help));
    root.appendChild(box);
    set = (value) => { for (const input of inputs) input.checked = input.value === value; };
  } else {
    const box = el("div", "sxc-field");
    const label = el("label", "sxc-label", data.label);
    label.htmlFor = uid;
    if (data.collapsed) label.classList.add("sxc-hidden");
    box.appendChild(label);
    const select = el("select", "sxc-input");
    select.id = uid;
    select.disabled = !!data.disabled;
    if (data.placeholder !== null) {
      const none = el("option", null, data.placeholder);
      none.value = "";
      none.disabled = true;
      select.appendChild(none);
    }
    for (const [value, text] of data.options) {
      const option = el("option", null, text);
      option.value = value;
      select.appendChild(option);
    }
    select.addEventListener("change", () => { if (select.value !== "") send(select.value); });
    const line = el("div", "sxc-line");
    line.appendChild(select);
    if (data.options.length > data.filter_over) {
      const tools = el("div", "sxc-tools");
      const filter = el("input", "sxc-input sxc-filter");
      filter.type = "search";
      filter.placeholder = "Find among " + data.options.length.toLocaleString("en");
      filter.setAttribute("aria-label", "Find: " + data.label);
      filter.setAttribute("aria-controls", uid);
      filter.disabled = !!data.disabled;
      const count = el("span", "sxc-count");
      const shown = () => [...select.options].filter((o) => o.value !== "" && !o.hidden);
      filter.addEventListener("input", () => {
        const needle = filter.value.trim().toLowerCase();
        for (const o of select.options) if (o.value !== "") o.hidden = needle !== "" && !o.textContent.toLowerCase().includes(needle);
        count.textContent = needle === "" ? "" : shown().length.toLocaleString("en") + " found";
      });
      filter.addEventListener("keydown", (event) => {
        if (event.key !== "Enter") return;
        event.preventDefault();
        const first = shown()[0];
        if (first && first.value !== select.value) { select.value = first.value; send(first.value); }
      });
      tools.append(filter, count);
      line.appendChild(tools);
    }
    box.appendChild(line);
    helpLine(box, select, data.help, uid);
    root.appendChild(box);
    set = (value) => { select.value = value === null ? "" : value; };
  }
  return set;
}

function drawChoice(parent, data, send) {
  let root = parent.querySelector("div.sxc");
  if (!root) {
    root = el("div", "sxc");
    parent.appendChild(root);
  }
  root.__send = send;
  const shape = JSON.stringify([data.kind, data.label, data.options, data.help, data.disabled,
                                data.placeholder, data.collapsed, data.min_value, data.max_value, data.step,
                                data.expanded, data.toggle, data.tips, data.optional, data.max_chars]);
  if (root.__shape !== shape) {
    root.__set = build(root, data);
    root.__shape = shape;
  }
  root.__set(data.value);
  // a file asked for on this run: saved once (a later draw of the same data saves nothing)
  const file = data.file;
  if (file && root.__saved !== file.nonce) {
    root.__saved = file.nonce;
    if (file.url) {
      const link = document.createElement("a");
      link.href = file.url;
      link.download = file.name;
      link.rel = "noopener";
      link.click();
    }
  }
}
"""

CHOICE_JS = DRAW_JS + r"""
export default function ({ data, parentElement, setTriggerValue }) {
  drawChoice(parentElement, data, (value) => setTriggerValue("choose", value));
}
"""

CHOICE_CSS = r"""
.sxc { font-family: var(--st-font, "Source Sans Pro", sans-serif); color: var(--st-text-color, #31333f); }
.sxc-field { display: flex; flex-direction: column; gap: 0.25rem; border: 0; margin: 0; padding: 0; min-width: 0; }
.sxc-label { font-size: 0.875rem; padding: 0; }
.sxc-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.sxc-help { font-size: 0.8rem; opacity: 0.7; }
.sxc-input { font: inherit; color: inherit; width: 100%; box-sizing: border-box; padding: 0.45rem 0.6rem;
  border-radius: 0.5rem; border: 1px solid transparent; background: var(--st-secondary-background-color, #f0f2f6); }
.sxc-input:focus, .sxc-option input:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b);
  outline-offset: 1px; }
.sxc-input:disabled { opacity: 0.6; }
.sxc-input:invalid { outline: 2px solid var(--st-red-color, #ff2b2b); }
.sxc-line { display: flex; align-items: center; gap: 0.5rem; flex-wrap: wrap; }
.sxc-line > select { flex: 1 1 20rem; width: auto; min-width: 0; }
.sxc-tools { display: flex; align-items: center; gap: 0.5rem; flex: 0 1 16rem; }
.sxc-filter { flex: 1 1 8rem; min-width: 0; }
.sxc-count { font-size: 0.8rem; opacity: 0.7; white-space: nowrap; }
.sxc-tabs { display: flex; flex-wrap: wrap; gap: 0 1.5rem; margin-bottom: 0.25rem;
  border-bottom: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); }
.sxc-tab { font: inherit; font-size: 0.875rem; color: inherit; cursor: pointer; background: none; border: 0;
  padding: 0.5rem 0 0.6rem 0; margin-bottom: -1px; border-bottom: 2px solid transparent; }
.sxc-tab:hover { color: var(--st-primary-color, #ff4b4b); }
.sxc-tab[aria-selected="true"] { color: var(--st-primary-color, #ff4b4b);
  border-bottom-color: var(--st-primary-color, #ff4b4b); }
.sxc-tab:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 2px; }
.sxc-actions { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.sxc-button { font: inherit; color: inherit; cursor: pointer; padding: 0.25rem 0.75rem; min-height: 2.5rem;
  border-radius: 0.5rem; border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2));
  background: var(--st-background-color, #ffffff); }
.sxc-button:hover { border-color: var(--st-primary-color, #ff4b4b); color: var(--st-primary-color, #ff4b4b); }
.sxc-button:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 1px; }
.sxc-download::before { content: "\2193" / ""; margin-right: 0.4rem; opacity: 0.7; }
.sxc-button[aria-expanded]::after { content: " ▸"; }
.sxc-button[aria-expanded="true"]::after { content: " ▾"; }
.sxc-row { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; padding: 0.2rem 0; }
.sxc-option { display: flex; align-items: center; gap: 0.4rem; cursor: pointer; }
.sxc-option input { accent-color: var(--st-primary-color, #ff4b4b); margin: 0; }
.sxc-check { align-self: flex-start; font-size: 0.875rem; }  /* as st.checkbox and st.toggle label them */
.sxc-check input { width: 1rem; height: 1rem; }
.sxc-toggle input { appearance: none; width: 2rem; height: 1.1rem; border-radius: 1rem; position: relative;
  background: var(--st-border-color, rgba(49, 51, 63, 0.3)); transition: background 0.15s; flex: none; }
.sxc-toggle input::after { content: ""; position: absolute; top: 0.15rem; left: 0.15rem; width: 0.8rem; height: 0.8rem;
  border-radius: 50%; background: #ffffff; transition: left 0.15s; }
.sxc-toggle input:checked { background: var(--st-primary-color, #ff4b4b); }
.sxc-toggle input:checked::after { left: 1.05rem; }
"""
