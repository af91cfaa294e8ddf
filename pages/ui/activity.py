"""The activity component of the pages that keep the honest clock (Human baseline, AIBench
question review): input anywhere on the page and the tab's visibility, reported to the server."""

from __future__ import annotations

import streamlit as st

# Runs in the app's page (components v2 mount no iframe), so it sees the whole document:
# keys, mouse, wheel, scroll and touch anywhere are input; `input` events of the answer box
# mark the text as changed. Reports are throttled (first at once, then at most one per
# interval), say how long ago the last input was (`idle_ms`), and are sent as the
# component's state `report`, which reruns only its fragment.
# The function runs again on every render of the component, so one hub per page holds the
# listeners and just takes the latest `setStateValue`.
ACTIVITY_JS = """
function makeHub() {
  const hub = { send: null, data: null, seq: 0, lastSent: 0, lastInput: Date.now(), dirty: false,
                active: false, hiddenChanged: false, timer: null };
  const box = () => hub.data &&
    document.querySelector(`textarea[aria-label="${hub.data.label}"]`);
  const flush = () => {
    if (hub.timer) { clearTimeout(hub.timer); hub.timer = null; }
    if (!hub.send || !(hub.active || hub.dirty || hub.hiddenChanged)) return;
    const report = { assignment: hub.data.assignment, seq: ++hub.seq, visible: !document.hidden,
                     idle_ms: Date.now() - hub.lastInput };
    const answer = box();
    if (hub.dirty && answer) report.text = answer.value;
    hub.dirty = false; hub.active = false; hub.hiddenChanged = false;
    hub.lastSent = Date.now();
    hub.send("report", report);
  };
  const schedule = () => {
    if (!hub.send || hub.timer) return;
    const wait = hub.lastSent + (hub.dirty ? hub.data.text_ms : hub.data.activity_ms) - Date.now();
    if (wait <= 0) flush(); else hub.timer = setTimeout(flush, wait);
  };
  const onActivity = () => { hub.active = true; hub.lastInput = Date.now(); schedule(); };
  const onInput = (event) => {
    const answer = box();
    if (answer && event.target === answer) {
      hub.dirty = true;
      if (hub.timer && hub.lastSent + hub.data.text_ms <= Date.now()) flush();
    }
    onActivity();
  };
  // A button of the answer's form (Submit, Pause, Add lines…) sends the text with it; a
  // pending text report, read before the page updates the box, would be older than that.
  const onClick = (event) => {
    const answer = box();
    const form = answer && answer.closest('[data-testid="stForm"]');
    if (form && event.target instanceof Element && event.target.closest("button") && form.contains(event.target)) {
      hub.dirty = false;
    }
    onActivity();
  };
  const onVisibility = () => {
    hub.hiddenChanged = true; hub.active = !document.hidden;
    if (hub.active) hub.lastInput = Date.now();
    flush();
  };
  for (const name of ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart"]) {
    document.addEventListener(name, onActivity, { capture: true, passive: true });
  }
  document.addEventListener("input", onInput, true);
  document.addEventListener("click", onClick, true);
  document.addEventListener("visibilitychange", onVisibility);
  hub.attach = (data, send) => {
    if (!hub.data || hub.data.assignment !== data.assignment) {
      hub.dirty = false; hub.active = false;
    }
    hub.data = data; hub.send = send;
  };
  hub.detach = (send) => { if (hub.send === send) hub.send = null; };
  return hub;
}

export default function (component) {
  const { data, setStateValue } = component;
  const hub = window.__structextActivity || (window.__structextActivity = makeHub());
  hub.attach(data, setStateValue);
  return () => hub.detach(setStateValue);
}
"""


def component():
    """The component, registered as the page runs (as the Human baseline page always did)."""
    return st.components.v2.component("structext_answer_activity", js=ACTIVITY_JS)
