"""The time on screen of the pages that keep the honest clock (Human baseline, Pairwise
comparison), ticking in the browser: the server is heard from only at each heartbeat."""

from __future__ import annotations

import streamlit as st

from structext_core.studio import clock_beat
from structext_core.studio.clock import ClockSettings
from structext_core.text.safe_text import PROGRESS_STYLE, progress_share
from structext_core.ui import TOKEN_KEY

# The time on screen: the server sends the question's active seconds as of its reply and
# whether the clock runs; the browser adds the time since (at most the grace, as the server
# does: a page the server stops hearing from stops counting) and shows it each second. It
# stands while the tab is hidden (the server books that time as away). A correction from the
# server of less than two seconds never moves the time shown backwards. Every `beat_ms` the
# component sends a heartbeat (its state `beat`), which reruns only its fragment; nothing else
# reaches the server from it.
# Beside the clock, in the same element, where the question stands (a bar with its text, as
# ``safe_text.progress_html`` draws one) when the page gives it: the two were a row of Streamlit's
# columns, three blocks and two elements more for the browser to build on every question.
CLOCK_HTML = """
<div class="hb-top">
  <div class="hb-progress" data-testid="sxProgress" hidden>
    <div class="hb-progress-text"></div>
    <div class="hb-progress-track" role="progressbar" aria-valuemin="0" aria-valuemax="100">
      <div class="hb-progress-bar"></div>
    </div>
  </div>
  <div class="hb-clock" data-testid="hbClock">
    <div class="hb-clock-label" data-testid="hbClockLabel"></div>
    <div class="hb-clock-value" data-testid="hbClockValue"></div>
  </div>
</div>
"""
CLOCK_CSS = """
.hb-top { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 1rem; font-family: var(--st-font, inherit);
          color: var(--st-text-color, inherit); }
.hb-top[hidden], .hb-progress[hidden], .hb-clock[hidden] { display: none; }
.hb-progress { flex: 4 1 0; min-width: 0; padding-bottom: 0.75rem; }
.hb-progress-text { %s }
.hb-progress-track { %s }
.hb-progress-bar { %s }
.hb-clock { flex: 1 1 0; min-width: 8rem; font-family: inherit; color: inherit; }
.hb-clock-label { font-size: 0.875rem; line-height: 1.6; min-height: 1.5rem; cursor: help; }
.hb-clock-value { font-size: 2.25rem; line-height: 1.2; padding-bottom: 0.25rem;
                  font-variant-numeric: tabular-nums; white-space: nowrap; }
""" % PROGRESS_STYLE
CLOCK_JS = """
function format(total) {
  const s = Math.max(0, Math.floor(total));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

// How long a page waits, after the route said it must change, for a reply of the server that
// changes it anyway before it asks for a run of the clock's fragment. "answered" waits longer:
// only the tab that holds a question can answer it, so that is almost always this tab's own
// submit, whose run redraws the page by itself; on a busy server it can take seconds, and a
// fragment run asked for meanwhile is wasted work queued behind it (at 300 simulated annotators
// such runs were a tenth of all the server's runs).
// A run asked for can be lost on the way (a drawing of the component replaced meanwhile, a run
// of the whole page under way); while no new reply has come, the page asks again this long after
// the last time, so a page that must change never stays as it is for good.
const RECHECK_MS = 1500;
const ANSWERED_RECHECK_MS = 10000;
const RECHECK_AGAIN_MS = 3000;

// where the question stands ({text, percent}), or nothing shown
function drawProgress(root, progress) {
  const box = root.querySelector(".hb-progress");
  if (!box) return;
  box.hidden = !progress;
  if (!progress) return;
  const percent = Math.min(100, Math.max(0, Number(progress.percent) || 0));
  const text = String(progress.text || "");
  box.querySelector(".hb-progress-text").textContent = text;
  const track = box.querySelector(".hb-progress-track");
  track.setAttribute("aria-label", text);
  track.setAttribute("aria-valuenow", String(Math.round(percent)));
  box.querySelector(".hb-progress-bar").style.width = `${percent.toFixed(1)}%`;
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
  // A heartbeat as a run of the clock's fragment on the server (its component state "beat").
  // After a cleanup of Streamlit's that came without a new drawing (send is then null), the
  // element is still on the page: its last drawing's setStateValue still reaches the same
  // widget, so a page that must change (taken over, paused elsewhere) still asks for its run.
  // Off the page, nothing is sent.
  const sender = () => clock.send || (clock.root && clock.root.isConnected ? clock.lastSend : null);
  const viaRun = (d) => {
    const send = sender();
    if (send) send("beat", { assignment: d.assignment, seq: ++clock.seq, visible: !document.hidden });
  };
  // A heartbeat posted to the clock's route (server.py): no run on the server unless the
  // answer says the page must change (then the fragment's run redraws it). No route (404),
  // no pass, or any failure: the fragment's run, as before.
  const beat = (d) => {
    const route = d.beat;
    if (!route || clock.noRoute) { viaRun(d); return; }
    if (clock.inFlight) return;
    clock.inFlight = true;
    const visible = !document.hidden;
    fetch(route.url, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      // A reply that never comes must not keep every later heartbeat back (inFlight).
      signal: AbortSignal.timeout(Math.max(5000, 3 * d.beat_ms)),
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ kind: route.kind, item: route.item, tab: route.tab, visible, pass: route.pass }),
    }).then((response) => {
      // Not the route's JSON (a plain `streamlit run app.py` has no route): runs from now on.
      if (!(response.headers.get("content-type") || "").includes("json")) clock.noRoute = true;
      return response.ok ? response.json() : null;
    }).then((reply) => {
      if (!clock.data || clock.data.assignment !== d.assignment) return;  // the page moved on meanwhile
      if (!reply || !route.stay.includes(reply.state)) {
        // The page must change, or the route failed: a run of the fragment redraws it, unless a
        // reply of the server came meanwhile (an answer just sent from this tab moves the page on
        // by itself; a second run for it would be wasted).
        // One such run per reply of the server, asked again only if no new reply came
        // RECHECK_AGAIN_MS after it was asked for: heartbeats that say the same thing meanwhile
        // add none.
        const wait = reply && reply.state === "answered" ? ANSWERED_RECHECK_MS : RECHECK_MS;
        const asked = clock.recheck;
        if (asked && asked.stamp === d.stamp && now() < asked.due + RECHECK_AGAIN_MS) return;
        clock.recheck = { stamp: d.stamp, due: now() + wait };
        setTimeout(() => {
          const now_ = clock.data;
          if (now_ && now_.assignment === d.assignment && now_.stamp === d.stamp) viaRun(now_);
        }, wait);
        return;
      }
      // The server's time is the truth from now on, as with a reply of a run.
      clock.base = reply.seconds; clock.baseAt = now();
      clock.data = { ...clock.data, running: reply.state === "active" };
      if (document.hidden) clock.hiddenAt = now(); else clock.hiddenAt = null;
      draw();
    }).catch(() => viaRun(d)).finally(() => { clock.inFlight = false; });
  };
  const tick = () => {
    draw();
    const d = clock.data;
    // Heard while it can ask for a run (sender: its element is on the page, even after a
    // cleanup of Streamlit's without a new drawing); off the page (another screen), it stops.
    if (sender() && d && now() - clock.lastBeat >= d.beat_ms) {
      clock.lastBeat = now();
      beat(d);
    }
  };
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) { clock.hiddenAt = now(); }
    else if (clock.hiddenAt !== null) { clock.baseAt += now() - clock.hiddenAt; clock.hiddenAt = null; }
    draw();
  });
  // Each drawing of the component is an owner of its own: the cleanup of an older drawing
  // (which may run after a newer drawing attached, with the very same setStateValue) must
  // never detach the newer one, or no heartbeat is sent again and the time on screen stops.
  clock.attach = (data, root, send, owner) => {
    const fresh = !clock.data || clock.data.assignment !== data.assignment || clock.data.stamp !== data.stamp;
    if (!clock.data || clock.data.assignment !== data.assignment) clock.shown = null;
    if (fresh) {
      // A new reply of the server: its time is the truth from now on; it was a heartbeat too.
      clock.base = data.seconds; clock.baseAt = now(); clock.lastBeat = now();
      if (document.hidden) clock.hiddenAt = now(); else clock.hiddenAt = null;
    }
    clock.data = data; clock.root = root; clock.send = send; clock.lastSend = send; clock.owner = owner;
    const top = root.querySelector(".hb-top");
    if (top) top.hidden = !data.show;
    drawProgress(root, data.progress);
    const label = root.querySelector(".hb-clock-label");
    if (label) { label.textContent = data.label || ""; label.title = data.help || ""; }
    if (!clock.ticker) clock.ticker = setInterval(tick, 250);
    draw();
  };
  clock.detach = (owner) => { if (clock.owner === owner) { clock.send = null; clock.owner = null; } };
  return clock;
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const clock = window.__structextClock || (window.__structextClock = makeClock());
  const owner = {};
  clock.attach(data, parentElement, setStateValue, owner);
  return () => clock.detach(owner);
}
"""


COMPONENT_NAME = "structext_question_clock"


def component():
    """The component, registered as the page runs (as the activity component is)."""
    return st.components.v2.component(COMPONENT_NAME, html=CLOCK_HTML, css=CLOCK_CSS, js=CLOCK_JS)


def data(item: int | str, seconds: float, *, running: bool, settings: ClockSettings, stamp_key: str,
         show: bool = True, label: str = "", help: str = "", beat: dict | None = None,
         progress: tuple[str, float] | None = None) -> dict:
    """What the clock component is told: the active time as of now, whether it runs, and how
    often to send a heartbeat. ``stamp`` (counted in the session under ``stamp_key``) tells a new
    reply of the server from a redraw of the same one. ``beat`` (:func:`beat_route`): where to
    post the heartbeats; without it they are fragment runs. ``progress`` (text, fraction done): a
    bar shown beside the clock, as ``widgets.progress`` draws one."""
    stamp = st.session_state[stamp_key] = st.session_state.get(stamp_key, 0) + 1
    return {"assignment": item, "seconds": round(seconds, 3), "running": running,
            "beat_ms": int(settings.heartbeat_seconds * 1000), "grace_s": settings.grace_seconds,
            "stamp": stamp, "show": show, "label": label, "help": help, "beat": beat,
            "progress": None if progress is None else {"text": progress[0],
                                                       "percent": round(progress_share(progress[1]) * 100, 1)}}


def beat_route(db, kind: str, item: int | str, tab: str, stay: tuple[str, ...]) -> dict | None:
    """How the clock posts its heartbeats to the route of ``server.py`` (clock_beat): the
    route, the clock's kind, item and tab, the pass that lets it speak for this session about
    them alone, and the states in which the page stays as it is (any other answer reruns the
    fragment). None when this session has no log-in token (AppTest): fragment runs then."""
    token = st.session_state.get(TOKEN_KEY)
    beat_pass = clock_beat.page_pass(db, token, kind, item, tab)
    if beat_pass is None:
        return None
    return {"url": clock_beat.BEAT_PATH, "kind": kind, "item": item, "tab": tab, "pass": beat_pass,
            "stay": list(stay)}
