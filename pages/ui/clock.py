"""The time on screen of the pages that keep the honest clock (Human baseline, Pairwise
comparison), ticking in the browser: the server is heard from only at each heartbeat."""

from __future__ import annotations

import streamlit as st

from structext_core.studio.study.clock import ClockSettings

# The time on screen: the server sends the question's active seconds as of its reply and
# whether the clock runs; the browser adds the time since (at most the grace, as the server
# does: a page the server stops hearing from stops counting) and shows it each second. It
# stands while the tab is hidden (the server books that time as away). A correction from the
# server of less than two seconds never moves the time shown backwards. Every `beat_ms` the
# component sends a heartbeat (its state `beat`), which reruns only its fragment; nothing else
# reaches the server from it.
CLOCK_HTML = """
<div class="hb-clock" data-testid="hbClock">
  <div class="hb-clock-label" data-testid="hbClockLabel"></div>
  <div class="hb-clock-value" data-testid="hbClockValue"></div>
</div>
"""
CLOCK_CSS = """
.hb-clock { font-family: inherit; color: inherit; }
.hb-clock[hidden] { display: none; }
.hb-clock-label { font-size: 0.875rem; line-height: 1.6; min-height: 1.5rem; cursor: help; }
.hb-clock-value { font-size: 2.25rem; line-height: 1.2; padding-bottom: 0.25rem;
                  font-variant-numeric: tabular-nums; white-space: nowrap; }
"""
CLOCK_JS = """
function format(total) {
  const s = Math.max(0, Math.floor(total));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

function makeClock() {
  const clock = { send: null, data: null, root: null, base: 0, baseAt: 0, hiddenAt: null,
                  shown: null, seq: 0, lastBeat: Date.now(), ticker: null };
  const now = () => Date.now();
  const seconds = () => {
    const d = clock.data;
    if (!d) return 0;
    if (!d.running) return clock.base;
    const until = clock.hiddenAt === null ? now() : clock.hiddenAt;
    return clock.base + Math.min(Math.max(0, (until - clock.baseAt) / 1000), d.grace_s);
  };
  const draw = () => {
    const value = clock.root && clock.root.querySelector(".hb-clock-value");
    if (!value || !clock.data) return;
    const whole = Math.floor(seconds());
    if (clock.shown === null || whole > clock.shown || whole < clock.shown - 1) clock.shown = whole;
    const text = format(clock.shown);
    if (value.textContent !== text) value.textContent = text;
  };
  const tick = () => {
    draw();
    const d = clock.data;
    if (clock.send && d && now() - clock.lastBeat >= d.beat_ms) {
      clock.lastBeat = now();
      clock.send("beat", { assignment: d.assignment, seq: ++clock.seq, visible: !document.hidden });
    }
  };
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) { clock.hiddenAt = now(); }
    else if (clock.hiddenAt !== null) { clock.baseAt += now() - clock.hiddenAt; clock.hiddenAt = null; }
    draw();
  });
  clock.attach = (data, root, send) => {
    const fresh = !clock.data || clock.data.assignment !== data.assignment || clock.data.stamp !== data.stamp;
    if (!clock.data || clock.data.assignment !== data.assignment) clock.shown = null;
    if (fresh) {
      // A new reply of the server: its time is the truth from now on; it was a heartbeat too.
      clock.base = data.seconds; clock.baseAt = now(); clock.lastBeat = now();
      if (document.hidden) clock.hiddenAt = now(); else clock.hiddenAt = null;
    }
    clock.data = data; clock.root = root; clock.send = send;
    const box = root.querySelector(".hb-clock");
    if (box) box.hidden = !data.show;
    const label = root.querySelector(".hb-clock-label");
    if (label) { label.textContent = data.label || ""; label.title = data.help || ""; }
    if (!clock.ticker) clock.ticker = setInterval(tick, 250);
    draw();
  };
  clock.detach = (send) => { if (clock.send === send) clock.send = null; };
  return clock;
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const clock = window.__structextClock || (window.__structextClock = makeClock());
  clock.attach(data, parentElement, setStateValue);
  return () => clock.detach(setStateValue);
}
"""


def component():
    """The component, registered as the page runs (as the activity component is)."""
    return st.components.v2.component("structext_question_clock", html=CLOCK_HTML, css=CLOCK_CSS, js=CLOCK_JS)


def data(item: int | str, seconds: float, *, running: bool, settings: ClockSettings, stamp_key: str,
         show: bool = True, label: str = "", help: str = "") -> dict:
    """What the clock component is told: the active time as of now, whether it runs, and how
    often to send a heartbeat. ``stamp`` (counted in the session under ``stamp_key``) tells a new
    reply of the server from a redraw of the same one."""
    stamp = st.session_state[stamp_key] = st.session_state.get(stamp_key, 0) + 1
    return {"assignment": item, "seconds": round(seconds, 3), "running": running,
            "beat_ms": int(settings.heartbeat_seconds * 1000), "grace_s": settings.grace_seconds,
            "stamp": stamp, "show": show, "label": label, "help": help}
