"""Where a page's time goes in the browser: each page's visit cut into its phases, beside the trivial page.

``bench_pages.py`` says how long each page takes to open; this says where that time goes, in the same
Chromium, on the same database (its ``PREPARE``: an admin, ``--annotators`` annotators who each answered
``--answers`` questions). The trivial page, the trivial page in a navigation sidebar like the app's
(Streamlit's frame: ``bench_pages.FLOORS``) and each page, as the admin, are opened ``--repeat`` times
(after one visit that fills the server's caches); printed, the medians, in ms since the navigation began:

- **first message**: the page's script handled the server's first message (Streamlit's code loaded and
  parsed, the connection open, the run asked for);
- **last message**: it handled the run's last one. Messages are handled on the browser's main thread, one
  after the other: a late last message is a browser still busy drawing the first ones, not a slow server
  (``bench_page_cpu.py`` times the server's run);
- **content**: the last change to the page but a placeholder's swap (below);
- **code swap**: the last of Streamlit's placeholders (``stSkeleton``) replaced by its element ("-": none).
  Streamlit draws an element whose code it has not loaded yet (any widget; a components-v2 element, which
  every light element is) as a placeholder first, and swaps them all in one pass once nothing else is
  pending;
- **settled**: the page's time as ``bench_pages.py`` measures it (its last change).

Then, from one traced visit of each page, the time the renderer's main thread was busy after the first
message, split: React's rendering (Streamlit's frontend), style, layout and paint, the rest (messages
decoded, code compiled and run, garbage collected), and how much of it was garbage collection.

    .venv/bin/python benchmarks/page_anatomy.py
    .venv/bin/python benchmarks/page_anatomy.py --only Results Studies --repeat 9
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pages as bp  # noqa: E402 - the same server, log-in, database and trivial page as the page times

#: Installed before the page's scripts: bench_pages' watch, then the time of the first and last message
#: handled, of the last change but a placeholder's swap, and of the last swap.
ANATOMY_JS = bp.WATCH_JS + """
window.__anatomy = {first: null, last: null, content: 0, swap: 0};
(function () {
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    socket.addEventListener("message", () => {
      const now = performance.now();
      if (window.__anatomy.first === null) window.__anatomy.first = now;
      window.__anatomy.last = now;
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  const isSkeleton = (node) => node.nodeType === 1 && node.getAttribute("data-testid") === "stSkeleton";
  new MutationObserver((records) => {
    const now = performance.now();
    // the containers whose placeholder left in this batch: every change there is the swap
    const swapped = new Set(records.filter((r) => [...r.removedNodes].some(isSkeleton)).map((r) => r.target));
    for (const record of records) {
      if (swapped.has(record.target)) window.__anatomy.swap = now;
      else window.__anatomy.content = now;
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();
"""
#: The trivial page in a navigation sidebar like the app's (Streamlit's frame, without ours).
FRAME = "floor: + a navigation sidebar"
PHASES = ("first message", "last message", "content", "code swap", "settled")
#: The main thread's time after the first message, by kind: key, column title.
KINDS = {"busy": "busy", "react": "React", "drawn": "style & layout", "rest": "the rest", "gc": "of it GC"}
TRACE_CATEGORIES = ["toplevel", "devtools.timeline", "v8.execute", "blink"]


def visit(context, url: str) -> dict[str, float]:
    """One visit of ``url`` in a new tab: each phase's time, ms since the navigation began."""
    tab = context.new_page()
    try:
        tab.goto(url, wait_until="commit")
        settled = bp.settle(tab) * 1000
        seen = tab.evaluate("window.__anatomy")
    finally:
        tab.close()
    return {"first message": seen["first"] or 0.0, "last message": seen["last"] or 0.0,
            "content": seen["content"], "code swap": seen["swap"], "settled": settled}


def main_thread(events: list[dict]) -> dict[str, float]:
    """The renderer's main-thread time (ms) after its first WebSocket message, split (see the module)."""
    pid = next((e["pid"] for e in sorted(events, key=lambda e: e.get("ts", 0)) if e.get("name") == "WebSocketReceive"), None)
    if pid is None:
        return {}
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name" and e["pid"] == pid}
    tid = next(t for t, n in names.items() if n == "CrRendererMain")
    start = min(e["ts"] for e in events if e.get("name") == "WebSocketReceive" and e["pid"] == pid)
    spans = sorted((e for e in events if e["pid"] == pid and e["tid"] == tid and e.get("ph") == "X" and "dur" in e
                    and e["ts"] >= start), key=lambda e: e["ts"])
    out = collections.Counter()
    inside: list[dict] = []  # the spans of the task being read
    task_end = -1.0

    def close(task):
        if task is None:
            return
        react = any(s["name"] == "FunctionCall" and "react-dom" in s.get("args", {}).get("data", {}).get("url", "")
                    for s in inside)
        drawn = any(s["name"] in ("WebFrameWidgetImpl::UpdateLifecycle", "Document::UpdateStyleAndLayout") for s in inside)
        out["react" if react else "drawn" if drawn else "rest"] += task["dur"] / 1000
        out["gc"] += sum(s["dur"] for s in inside if s["name"] in ("MinorGC", "MajorGC")) / 1000

    task = None
    for span in spans:
        if span["name"] in ("ThreadControllerImpl::RunTask", "RunTask") and span["ts"] >= task_end:
            close(task)
            task, inside, task_end = span, [], span["ts"] + span["dur"]
        elif task is not None and span["ts"] < task_end:
            inside.append(span)
    close(task)
    out["busy"] = out["react"] + out["drawn"] + out["rest"]
    return dict(out)


def traced(browser, context, url: str) -> dict[str, float]:
    tab = context.new_page()
    try:
        browser.start_tracing(page=tab, categories=TRACE_CATEGORIES)
        tab.goto(url, wait_until="commit")
        bp.settle(tab)
        data = json.loads(browser.stop_tracing())
    finally:
        tab.close()
    return main_thread(data["traceEvents"] if isinstance(data, dict) else data)


def measure(browser, context, url: str, repeat: int) -> tuple[dict, dict]:
    visit(context, url)  # the server's caches filled, the browser's cache too
    visits = [visit(context, url) for _ in range(repeat)]
    return {p: statistics.median(v[p] for v in visits) for p in PHASES}, traced(browser, context, url)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=300)
    parser.add_argument("--answers", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", nargs="+", metavar="PAGE", help=f"pages of bench_pages.PAGES (default: all: {', '.join(bp.PAGES)})")
    args = parser.parse_args(argv)
    unknown = set(args.only or ()) - set(bp.PAGES)
    if unknown:
        parser.error(f"no such page: {', '.join(sorted(unknown))} (pages: {', '.join(bp.PAGES)})")
    pages = {name: path for name, path in bp.PAGES.items() if not args.only or name in args.only}
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="page-anatomy-") as tmp:
        base = Path(tmp)
        bp.prepare(ROOT, base, args)
        (base / "trivial.py").write_text(bp.TRIVIAL)
        (base / "frame.py").write_text(bp.FLOORS[FRAME][0])
        trivial_port, frame_port, app_port = bp.free_port(), bp.free_port(), bp.free_port()
        servers = [bp.serve(ROOT, str(base / "trivial.py"), base, trivial_port),
                   bp.serve(ROOT, str(base / "frame.py"), base, frame_port), bp.serve(ROOT, "server.py", base, app_port)]
        rows = {}
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=bp.CHROMIUM, headless=True, args=bp.CHROMIUM_ARGS)
                bare = browser.new_context(viewport={"width": 1400, "height": 1000})
                bare.add_init_script(ANATOMY_JS)
                app = browser.new_context(viewport={"width": 1400, "height": 1000})
                app.add_init_script(ANATOMY_JS)
                bp.sign_in(app, f"http://127.0.0.1:{app_port}", bp.ADMIN, bp.PASSWORD)
                targets = {"trivial page": (bare, f"http://127.0.0.1:{trivial_port}/"),
                           "trivial, in a navigation": (bare, f"http://127.0.0.1:{frame_port}/"),
                           **{name: (app, f"http://127.0.0.1:{app_port}/{path}") for name, path in pages.items()}}
                for n, (name, (context, url)) in enumerate(targets.items(), 1):
                    print(f"  [{n}/{len(targets)}] {name}", file=sys.stderr, flush=True)
                    rows[name] = measure(browser, context, url, args.repeat)
                browser.close()
        finally:
            for server in servers:
                server.terminate()
                server.wait()
    report(rows, args)
    return 0


def report(rows: dict, args) -> None:
    print(f"Each page's phases, ms since the navigation began (medians of {args.repeat} visits; "
          f"{args.annotators} people x {args.answers} answers stored):")
    print(f"{'page':26s}" + "".join(f"{p:>15s}" for p in PHASES))
    for name, (phases, _) in rows.items():
        print(f"{name:26s}" + "".join(f"{phases[p]:15.0f}" if phases[p] else f"{'-':>15s}" for p in PHASES))
    print("\nThe browser's main thread after the first message, ms (one traced visit each):")
    print(f"{'page':26s}" + "".join(f"{title:>16s}" for title in KINDS.values()))
    for name, (_, busy) in rows.items():
        print(f"{name:26s}" + ("".join(f"{busy.get(k, 0.0):16.0f}" for k in KINDS) if busy
                                else "  the trace holds no message of the page's connection"))


if __name__ == "__main__":
    raise SystemExit(main())
