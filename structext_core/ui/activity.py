"""The activity component of the pages that keep the honest clock (Human baseline, and a benchmark's
own timed pages such as question review and pairwise comparison): input anywhere on the page and the
tab's visibility, reported to the server."""

from __future__ import annotations

import streamlit as st

# Runs in the app's page (components v2 mount no iframe), so it sees the whole document:
# keys, mouse, wheel, scroll and touch anywhere are input; `input` events of the answer box
# mark the text as changed. Reports are throttled with a trailing edge: the first at once,
# then at most one per interval, and whatever is pending when the interval ends goes out
# then, with no further input needed (typed text after `text_ms`, other input after
# `activity_ms`). A report says how long ago the last input was (`idle_ms`) and is sent as
# the component's state `report`, which reruns only its fragment.
# The function runs again on every render of the component, so one hub per page holds the
# listeners and just takes the latest `setStateValue`.
ACTIVITY_JS = """
function makeHub() {
  const hub = { send: null, data: null, seq: 0, lastSent: 0, lastInput: Date.now(), dirty: false,
                active: false, hiddenChanged: false, timer: null, due: 0 };
  // the answer box: the light answer element's (in its shadow root, so it names itself), else one of the page
  const box = () => {
    if (!hub.data) return null;
    const own = window.__structextAnswerBox;
    return own && own.isConnected ? own : document.querySelector(`textarea[aria-label="${hub.data.label}"]`);
  };
  const pending = () => hub.active || hub.dirty || hub.hiddenChanged;
  // After a cleanup of Streamlit's that came without a new drawing (send is then null), the
  // element is still on the page and its last drawing's setStateValue still reaches the same
  // widget: reports (and the draft) go on. Off the page, nothing is sent.
  const sender = () => hub.send || (hub.root && hub.root.isConnected ? hub.lastSend : null);
  const flush = () => {
    if (hub.timer) { clearTimeout(hub.timer); hub.timer = null; }
    const send = sender();
    if (!send || !pending()) return;  // kept pending: the next attach schedules it
    const report = { assignment: hub.data.assignment, seq: ++hub.seq, visible: !document.hidden,
                     idle_ms: Date.now() - hub.lastInput };
    const answer = box();
    if (hub.dirty && answer) report.text = answer.value;
    hub.dirty = false; hub.active = false; hub.hiddenChanged = false;
    hub.lastSent = Date.now();
    send("report", report);
  };
  // The earliest moment something pending may go out; a timer set for a later moment (other
  // input, 10 s) is brought forward when text becomes pending (2.5 s).
  // Never sent from inside an input event: Streamlit's page sends a state change made
  // there together with the click being handled, as one run of this component's fragment
  // alone, so a button outside it would not act. `settle_ms` later, it goes alone.
  const schedule = () => {
    if (!sender() || !hub.data || !pending()) return;
    const due = Math.max(hub.lastSent + (hub.dirty || hub.hiddenChanged ? hub.data.text_ms : hub.data.activity_ms),
                         Date.now() + hub.data.settle_ms);
    if (hub.timer && hub.due <= due) return;
    if (hub.timer) clearTimeout(hub.timer);
    hub.due = due;
    hub.timer = setTimeout(flush, due - Date.now());
  };
  const onActivity = () => { hub.active = true; hub.lastInput = Date.now(); schedule(); };
  const onInput = (event) => {
    const answer = box();
    if (answer && event.composedPath()[0] === answer) hub.dirty = true;
    onActivity();
  };
  // A button of the answer's form or light element (Submit, Pause, Add lines…) sends the text with it; a
  // pending text report, read before the page updates the box, would be older than that.
  const onClick = (event) => {
    const answer = box();
    const form = answer && answer.closest('[data-testid="stForm"]');
    const sends = event.composedPath().some((node) => node instanceof HTMLElement && node.dataset.sendsText);
    if (sends || (form && event.target instanceof Element && event.target.closest("button") && form.contains(event.target))) {
      hub.dirty = false;
    }
    onActivity();
  };
  const onVisibility = () => {
    hub.hiddenChanged = true; hub.active = !document.hidden;
    if (hub.active) hub.lastInput = Date.now();
    schedule();
  };
  for (const name of ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart"]) {
    document.addEventListener(name, onActivity, { capture: true, passive: true });
  }
  document.addEventListener("input", onInput, true);
  document.addEventListener("click", onClick, true);
  document.addEventListener("visibilitychange", onVisibility);
  // Each drawing of the component owns the hub until a newer drawing attaches: the cleanup of
  // an older drawing (which can run after the newer one attached, with the same setStateValue)
  // must not detach it, or no input report (and no draft) is sent again.
  hub.attach = (data, send, owner, root) => {
    if (!hub.data || hub.data.assignment !== data.assignment) {
      hub.dirty = false; hub.active = false;
    }
    hub.data = data; hub.send = send; hub.lastSend = send; hub.root = root; hub.owner = owner;
    schedule();
  };
  hub.detach = (owner) => { if (hub.owner === owner) { hub.send = null; hub.owner = null; } };
  return hub;
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const hub = window.__structextActivity || (window.__structextActivity = makeHub());
  const owner = {};
  hub.attach(data, setStateValue, owner, parentElement);
  return () => hub.detach(owner);
}
"""


def component():
    """The component, registered as the page runs (as the Human baseline page always did)."""
    return st.components.v2.component("structext_answer_activity", js=ACTIVITY_JS)
