"""Keyboard shortcuts of a multiple-choice question (Human baseline, question review): the keys A, B,
C, D choose an option and Enter submits, by clicking the page's own buttons.

Streamlit's button ``shortcut`` reserves the key C, so the keys are read here, in the page's
document (components v2 mount no iframe), and each press clicks the button of the element keyed
``keys[key]`` (its ``st-key-...`` class): what a key does is exactly what a click does, callbacks
and all. The key of a letter the question does not offer shows its note (``notes[key]``, such as
"This question has options A and B; D is not one of them.") under the options for a few seconds,
rather than doing nothing. A key pressed in a text field, a select box or with a modifier is left alone, so typing
a flag's note never chooses an option; on a focused button the browser's own Enter is prevented,
so Enter submits rather than pressing the option that keeps the focus after a click.
"""

from __future__ import annotations

import streamlit as st

NOTE_HTML = '<div class="hb-key-note" role="status" aria-live="polite" data-testid="hbKeyNote" hidden></div>'
NOTE_CSS = """
.hb-key-note { font-size: 0.875rem; line-height: 1.6; padding: 0.25rem 0; }
.hb-key-note[hidden] { display: none; }
"""
KEYS_JS = """
const NOTE_MS = 4000;  // how long a note on a key stays

function makeKeys() {
  const hub = { keys: {}, notes: {}, root: null, timer: null };
  const say = (text) => {
    const box = hub.root && hub.root.querySelector(".hb-key-note");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
    clearTimeout(hub.timer);
    hub.timer = setTimeout(() => { box.hidden = true; }, NOTE_MS);
  };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, select, [contenteditable='true']")) return;
    const name = event.key.length === 1 ? event.key.toUpperCase() : event.key;
    const elementKey = hub.keys[name];
    if (!elementKey) {
      const note = hub.notes[name];
      if (note) { event.preventDefault(); say(note); }
      return;
    }
    const button = document.querySelector(`.st-key-${elementKey} button`);
    if (!button || button.disabled) return;
    event.preventDefault();
    button.click();
  });
  return hub;
}

export default function (component) {
  const { data, parentElement } = component;
  const hub = window.__structextOptionKeys || (window.__structextOptionKeys = makeKeys());
  // The keys of the newest drawing: the cleanup of an older one (which can run after the newer
  // one set its keys) clears nothing but its own.
  const keys = (data && data.keys) || {};
  hub.keys = keys;
  hub.notes = (data && data.notes) || {};
  hub.root = parentElement;
  return () => { if (hub.keys === keys) { hub.keys = {}; hub.notes = {}; hub.root = null; } };
}
"""


def component():
    """The component, registered as the page runs (as the clock component is)."""
    return st.components.v2.component("structext_option_keys", html=NOTE_HTML, css=NOTE_CSS, js=KEYS_JS)

