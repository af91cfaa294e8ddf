"""Keyboard shortcuts of a multiple-choice question (Human baseline, AIBench items): the keys A, B,
C, D choose an option and Enter submits, by clicking the page's own buttons.

Streamlit's button ``shortcut`` reserves the key C, so the keys are read here, in the page's
document (components v2 mount no iframe), and each press clicks the button of the element keyed
``keys[key]`` (its ``st-key-...`` class): what a key does is exactly what a click does, callbacks
and all. A key pressed in a text field, a select box or with a modifier is left alone, so typing
a flag's note never chooses an option; on a focused button the browser's own Enter is prevented,
so Enter submits rather than pressing the option that keeps the focus after a click.
"""

from __future__ import annotations

import streamlit as st

KEYS_JS = """
function makeKeys() {
  const hub = { keys: {} };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, select, [contenteditable='true']")) return;
    const name = event.key.length === 1 ? event.key.toUpperCase() : event.key;
    const elementKey = hub.keys[name];
    if (!elementKey) return;
    const button = document.querySelector(`.st-key-${elementKey} button`);
    if (!button || button.disabled) return;
    event.preventDefault();
    button.click();
  });
  return hub;
}

export default function (component) {
  const { data } = component;
  const hub = window.__structextOptionKeys || (window.__structextOptionKeys = makeKeys());
  // The keys of the newest drawing: the cleanup of an older one (which can run after the newer
  // one set its keys) clears nothing but its own.
  const keys = (data && data.keys) || {};
  hub.keys = keys;
  return () => { if (hub.keys === keys) hub.keys = {}; };
}
"""


def component():
    """The component, registered as the page runs (as the clock component is)."""
    return st.components.v2.component("structext_option_keys", js=KEYS_JS)

