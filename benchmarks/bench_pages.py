"""How long each page takes to open, and one click to answer, in Chromium, beside a trivial Streamlit page.

For each checkout (this one, and with ``--compare REF`` another commit, checked out beside in a git
worktree), a private database is filled by that checkout's own code: an admin, ``--annotators``
annotators (300) who each answered ``--answers`` questions (10) of one Test-Hard study, two small
studies more and one of the first annotator's own (whose questions their clicks answer), and what a first start makes in the background (Test, Test-Hard, AIBench's synthetic
set), so that no page is measured while the server makes them. A trivial Streamlit page (a title and a
line) is measured first, alone; then each checkout's app (``streamlit run server.py``, the README's
command) is started, both at once with ``--compare``, and each page's visits alternate between them
(one checkout's visit, then the other's, then the trivial page's), so that a machine slowing down for a
minute weighs on both alike, and on the trivial page the ratios are read against.

Headless Chromium (Debian's, at /usr/bin/chromium; never downloaded) logs in once as the admin, then
opens each page's address (and then as one of the annotators, their Home, Human baseline and a question of
the big study) ``--repeat`` times (a new Streamlit session each time, logged in by the
session cookie, as a bookmark does). A page's time is from the start of the navigation until the
page stops changing: the app connected, no script run in progress, and for ``QUIET_MS`` no change to
the page, no file loaded and no long task of the browser's main thread (loading an element's code:
Streamlit's code highlighter is 1.5 MB, parsed for about a second with the page unchanged); the time is
that of the last change. A click's time is from the press of the mouse
(the page's own pointerdown event) until the page stops changing again. Printed: the median and the worst of each page and click, each page's ratio to
the trivial page visited in that page's own rounds (and to the trivial page of the whole run: on a machine
that slows down for a few minutes the two differ), and the checkouts side by side. For reference (``--no-floors`` to skip), what Streamlit's
own elements cost: bare scripts with the trivial page in a navigation sidebar like the app's, opened at the
root and at a page's own address (every page but Home is opened there: the browser first asks that
address's /_stcore/health, then the root's; and once more served as server.py serves app.py, whose
HTML page tells the browser where the server is), then with one st.button (a page's first one loads its code),
one st.selectbox, st.radio or st.segmented_control (three ways to choose one of a few), one st.table,
one st.dataframe or one Altair chart more; and two clicks in that page, on
a button (the whole script reruns) and on a tab of st.tabs in a fragment (only the fragment reruns).

    .venv/bin/python benchmarks/bench_pages.py                          # this checkout
    .venv/bin/python benchmarks/bench_pages.py --compare db60d0c        # beside db60d0c
    .venv/bin/python benchmarks/bench_pages.py --annotators 50 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run",
                 "--disable-component-update", "--disable-sync"]
ADMIN, PASSWORD = "admin", "admin-password-1"
QUIET_MS = 600
SESSION_COOKIE = "structext_session"  # structext_core/ui/__init__.py's COOKIE_NAME
GOAL_RATIO, GOAL_CLICK = 1.3, 0.3
#: The admin's pages, by URL path ("" is Home).
PAGES = {"Home": "", "Explore": "explore", "Results": "results", "Studies": "study_admin",
         "Adjudication": "adjudication", "Accounts": "accounts", "Rewrite campaigns": "campaign_admin",
         "Pairwise studies": "pairwise_admin", "AIBench review campaigns": "question_review_admin",
         "Results, AIBench": "results?benchmark=aibench"}
#: An annotator of the big study (10 of its 20 questions answered, three small studies more): their pages.
ANNOTATOR, ANNOTATOR_PASSWORD = "ann000", "annotator-password"
#: The studies' ids in the database :data:`PREPARE` fills (made in this order): the two pilots, the one the
#: annotator answers in (:data:`ANSWERING_ITEMS` questions, theirs alone, its rule read), the big study.
ANSWERING_STUDY, BIG_STUDY = 3, 4
ANSWERING_ITEMS = 40
#: Human baseline without a study named is the chooser of the annotator's studies; with the big one named,
#: its question screen (their 11th question, its clock going).
ANNOTATOR_PAGES = {"Home (annotator)": "", "Human baseline (annotator)": "human_baseline",
                   "Question page (annotator)": f"human_baseline?study={BIG_STUDY}"}
#: What must be on a page once it has settled (a label), or its time is not that page's.
EXPECT = {"Question page (annotator)": "Your answer"}
TRIVIAL = 'import streamlit as st\nst.title("A trivial page")\nst.write("One line of text.")\n'
#: What Streamlit's own elements cost, each a bare script beside the trivial page (printed for reference,
#: not goals): the trivial page in a navigation sidebar like the app's, then with one element more.
_NAV_PAGES = textwrap.dedent('''
    import streamlit as st, pandas as pd, altair as alt
    def page():
        st.title("A trivial page")
        st.write("One line of text.")
        {extra}
    pages = [st.Page(page, title="Home", default=True), st.Page(page, title="A page", url_path="a_page")] + [
        st.Page(lambda: None, title=f"Page {{n}}", url_path=f"page{{n}}") for n in range(7)]
''')
_NAV = _NAV_PAGES + textwrap.dedent('''\
    chosen = st.navigation(pages, expanded=True)
    with st.sidebar:
        st.markdown("**An app**")
    chosen.run()
''')
#: The same page in the navigation as the app draws it: Streamlit's routing, the menu a light element
#: (structext_core/ui/light_nav.py).
_LIGHT_NAV = _NAV_PAGES + textwrap.dedent('''\
    from structext_core.ui import light_nav
    chosen = st.navigation(pages, position="hidden")
    with st.sidebar:
        light_nav.menu({{"": pages}}, chosen)
        st.markdown("**An app**")
    chosen.run()
''')
_ELEMENT = ('st.components.v2.component("floor_element", js="export default function ({ parentElement }) '
            '{ parentElement.textContent = \'An element\'; }")(key="element")')
#: The floor served as server.py serves app.py (:data:`TOLD`), not by ``streamlit run`` of the bare script.
FLOOR_TOLD = "floor: + navigation, at a page's own address, told where the server is"
#: name: (script, the address opened under the server's root).
FLOORS = {
    "floor: + a navigation sidebar": (_NAV.format(extra=""), ""),
    "floor: + navigation, at a page's own address": (_NAV.format(extra=""), "a_page"),
    FLOOR_TOLD: (_NAV.format(extra=""), "a_page"),
    "floor: + navigation, one st.button": (_NAV.format(extra='st.button("A button")'), ""),
    "floor: + navigation, one st.selectbox": (_NAV.format(extra='st.selectbox("A choice", ["one", "two"])'), ""),
    "floor: + navigation, one st.radio": (_NAV.format(extra='st.radio("A choice", ["one", "two"])'), ""),
    "floor: + navigation, one st.segmented_control": (_NAV.format(
        extra='st.segmented_control("A choice", ["one", "two"], default="one")'), ""),
    # the light elements' own cost (structext_core/ui/light_*.py): Streamlit's code for any components-v2 element
    "floor: + navigation, one components-v2 element": (_NAV.format(extra=_ELEMENT), ""),
    # the same page with the app's menu (structext_core/ui/light_nav.py) in the place of Streamlit's navigation
    "floor: + the app's menu, one components-v2 element": (_LIGHT_NAV.format(extra=_ELEMENT), ""),
    "floor: + navigation, one st.table": (_NAV.format(
        extra='st.table(pd.DataFrame({"n": range(8), "word": list("abcdefgh")}), hide_index=True)'), ""),
    "floor: + navigation, one st.dataframe": (_NAV.format(
        extra='st.dataframe(pd.DataFrame({"n": range(8), "word": list("abcdefgh")}), hide_index=True)'), ""),
    "floor: + navigation, one Altair chart": (_NAV.format(
        extra='st.altair_chart(alt.Chart(pd.DataFrame({"n": range(8), "v": range(8)})).mark_bar().encode(x="n:O", y="v"))'),
        ""),
}

#: A bare script served as server.py serves app.py, its HTML page telling where the server is
#: (structext_core/ui/page_base.py): Streamlit's page opened at /a_page asks the root at once.
TOLD = textwrap.dedent('''
    import streamlit as st
    from starlette.middleware import Middleware
    from structext_core.ui import page_base
    app = st.App({script!r}, middleware=[Middleware(page_base.PageBase)])
''')

#: What Streamlit itself needs for a click, to read the click goal by: name: (script, the click). In the
#: trivial page in a navigation: a button (its click reruns the whole script) and a tab of st.tabs in a
#: fragment (its click reruns only the fragment, as Studies' tabs do).
FLOOR_CLICKS = {
    "floor click: one st.button, the whole page reruns": (
        _NAV.format(extra='st.button("A button")'), lambda tab: tab.get_by_role("button", name="A button").click()),
    "floor click: a tab in a fragment, the fragment reruns": (
        _NAV.format(extra='st.fragment(lambda: [t.write(f"What tab {i + 1} shows.") for i, t in enumerate('
                          'st.tabs(["One", "Two"], key="t", on_change="rerun")) if t.open])()'),
        lambda tab: tab.get_by_role("tab", name="Two").click()),
}

#: Run by each checkout's own Python code (its PYTHONPATH), so the database is the one its code writes.
PREPARE = textwrap.dedent('''
    import sys
    from pathlib import Path
    from structext_core.structext_eval import samples, suites
    from structext_core.structext_eval import study as structext_study
    from structext_core.studio import accounts, storage, study
    base, n_people, n_answers = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    accounts.credentials.SCRYPT_N = 2 ** 4  # the annotators never log in here: a cheap hash
    # What the app makes in the background on its first start (Test, Test-Hard, AIBench's synthetic set),
    # made here first: left to the server, it runs during the first pages measured.
    (base / "suites").mkdir()
    samples.write_jsonl(base / "suites" / "test.jsonl", suites.generate_suite("test", seed=0))
    rows = suites.generate_suite("test-hard", seed=0)
    samples.write_jsonl(base / "suites" / "test-hard.jsonl", rows)
    from structext_core.aibench import store as aibench_store  # its folder: STRUCTEXT_AIBENCH_DIR (base / "aibench")
    aibench_store.add_reference_predictions(in_child=True)
    db = storage.open_db(base / "structext.db")
    people = [accounts.create_user(db, f"ann{i:03d}", "annotator-password", "annotator")["id"] for i in range(n_people)]
    for name, seed in (("pilot-a", 1), ("pilot-b", 2)):
        structext_study.create_study(db, name=name, suite="test-hard", samples=rows, n_items=20,
                                     annotator_ids=people[:3], seed=seed)
    # the first annotator's own study, its rule read: each click of Submit answer answers one of its questions
    answering = structext_study.create_study(db, name="answering", suite="test-hard", samples=rows,
                                             n_items=int(sys.argv[4]), annotator_ids=people[:1], seed=3)
    study.accept_rule(db, answering, people[0], at=0.0)
    # the newest study, the one each page shows first (Studies, Adjudication, Export): the 300 people's
    big = structext_study.create_study(db, name="crowd-300", suite="test-hard", samples=rows, n_items=n_answers * 2,
                                       annotator_ids=people, seed=0)
    answers = {row["question"]: row["answer"] for row in rows}
    for index, person in enumerate(people):
        study.accept_rule(db, big, person, at=0.0)
        for k in range(n_answers):
            view = study.open_question(db, big, person, at=10.0 * k)
            right = (index + k) % 3 != 0
            study.submit_answer(db, person, view.assignment_id,
                                answers.get(view.question, "x") if right else "a wrong answer", at=10.0 * k + 8)
        if index % 50 == 49:
            print(f"  {index + 1} of {n_people} people answered", file=sys.stderr, flush=True)
''')

#: Installed in every page before its scripts: the time (ms since the navigation began) of the page's last
#: change, and of the last press of the mouse (the click a person makes; Playwright first spends 40-90 ms
#: finding the element and waiting for it to hold still, which no person waits for).
WATCH_JS = """
window.__lastChange = performance.now();
window.__lastActivity = window.__lastChange;
new MutationObserver(() => { window.__lastChange = window.__lastActivity = performance.now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    window.__lastActivity = Math.max(window.__lastActivity, entry.startTime + entry.duration);
  }
}).observe({entryTypes: ["longtask", "resource"]});
document.addEventListener("pointerdown", () => { window.__pressedAt = performance.now(); }, true);
"""
SETTLED = ('[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
           '[data-test-script-state="notRunning"]')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(checkout: Path, script: str, base: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "STRUCTEXT_DB": str(base / "structext.db"), "STRUCTEXT_DATA_DIR": str(base / "suites"),
           "STRUCTEXT_AIBENCH_DIR": str(base / "aibench"),
           "STRUCTEXT_ADMIN_USER": ADMIN, "STRUCTEXT_ADMIN_PASSWORD": PASSWORD, "PYTHONPATH": str(checkout),
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = open(base / f"server-{port}.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
                                "--server.headless", "true", "--server.address", "127.0.0.1"],
                               cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        if process.poll() is not None:
            break
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
            return process
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server of {checkout} did not start: see {base / f'server-{port}.log'}")


def settle(tab, since_ms: float = 0.0) -> float:
    """Seconds from ``since_ms`` (page time) until the page stopped changing."""
    tab.wait_for_selector(SETTLED, state="attached", timeout=120_000)
    while True:
        now, last, active = tab.evaluate("() => [performance.now(), window.__lastChange, window.__lastActivity]")
        if now - active >= QUIET_MS:
            tab.wait_for_selector(SETTLED, state="attached", timeout=120_000)
            return (last - since_ms) / 1000
        tab.wait_for_timeout(QUIET_MS - (now - active) + 20)


def open_page(context, url: str, logged_in: bool = True, expect: str | None = None) -> float:
    tab = context.new_page()
    try:
        tab.goto(url, wait_until="commit")
        seconds = settle(tab)
        if logged_in and tab.get_by_text("You are not logged in").count():
            raise SystemExit(f"{url} was opened logged out: its time would not be the admin's")
        if expect is not None and not tab.get_by_label(expect, exact=True).count():
            raise SystemExit(f"{url} settled without {expect!r}: its time would not be that page's")
        return seconds
    finally:
        tab.close()


def click_time(context, url: str, click) -> float:
    """Open ``url``, wait for it to settle, then time ``click(tab)`` from the press of the mouse until the
    page settles again."""
    tab = context.new_page()
    try:
        tab.goto(url, wait_until="commit")
        settle(tab)
        started = tab.evaluate("() => performance.now()")
        try:
            click(tab)
        except Exception:
            shot = Path(tempfile.gettempdir()) / "bench-pages-failed-click.png"
            tab.screenshot(path=str(shot), full_page=True)
            print(f"the click failed on {url}: the page as it was is in {shot}", file=sys.stderr)
            raise
        tab.wait_for_timeout(50)  # the rerun begins
        pressed = tab.evaluate("() => window.__pressedAt")
        if pressed is None or pressed < started:
            raise SystemExit(f"the click on {url} pressed no mouse button: its time would not be a click's")
        return settle(tab, pressed)
    finally:
        tab.close()


def measure_bare(browser, url: str, repeat: int) -> list[float]:
    """A bare script's times (no log-in), the first visit warming the browser's cache."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(WATCH_JS)
    try:
        open_page(context, url, logged_in=False)
        return [open_page(context, url, logged_in=False) for _ in range(repeat)]
    finally:
        context.close()


def measure_apps(browser, apps: dict[str, str], repeat: int, only: set[str] | None = None,
                 trivial: str | None = None) -> dict[str, dict]:
    """Each page and click of each app in ``apps`` (label: the app's root URL), ``repeat`` visits each, as the
    admin and then as an annotator: label -> name -> times. With two apps each page's visits alternate
    between them (A, B, A, B, ...): a machine that slows down for a minute weighs on both alike (measured
    one after the other, the halves of a run differed by up to 0.23 s on pages neither changed). With
    ``trivial`` (the trivial page's URL), each round of a page's visits ends with a visit of it, kept for
    every app as ``TRIVIAL_IN_TURN``: the ratio's base measured in the same minutes as the pages (the
    trivial page measured alone, before, took 0.66 to 1.13 s by the hour). The trivial page's visits made in
    the rounds of each page are also kept apart (``TRIVIAL_BESIDE``: page name -> times), the base of that
    page's own ratio: a machine that slows down in the minutes of one page slows its trivial visits too."""
    times: dict[str, dict[str, list[float]]] = {label: {} for label in apps}
    in_turn: list[float] = []
    beside: dict[str, list[float]] = {}
    bare = browser.new_context(viewport={"width": 1400, "height": 1000})
    bare.add_init_script(WATCH_JS)
    if trivial:
        open_page(bare, trivial, logged_in=False)
        for label in apps:
            times[label][TRIVIAL_IN_TURN] = in_turn
            times[label][TRIVIAL_BESIDE] = beside

    def contexts(user: str, password: str) -> dict:
        made = {}
        for label, url in apps.items():
            made[label] = browser.new_context(viewport={"width": 1400, "height": 1000})
            made[label].add_init_script(WATCH_JS)
            sign_in(made[label], url, user, password)
        return made

    def visits(made: dict, name: str, visit) -> None:
        for label, url in apps.items():
            visit(made[label], url, True)  # the first visit warms the server's caches
        for _ in range(repeat):
            for label, url in apps.items():
                times[label].setdefault(name, []).append(visit(made[label], url, False))
            if trivial and not name.startswith("click"):
                in_turn.append(open_page(bare, trivial, logged_in=False))
                beside.setdefault(name, []).append(in_turn[-1])
        print(f"  {name}: " + " | ".join(f"{statistics.median(times[label][name]):.2f} s" for label in apps),
              file=sys.stderr, flush=True)

    def page_visit(path: str, expect: str | None = None):
        return lambda context, url, warming: open_page(context, f"{url}/{path}", expect=expect)

    def click_visit(path: str, click):
        return lambda context, url, warming: 0.0 if warming else click_time(context, f"{url}/{path}", click)

    for user, password, pages, clicks in ((ADMIN, PASSWORD, PAGES, CLICKS),
                                          (ANNOTATOR, ANNOTATOR_PASSWORD, ANNOTATOR_PAGES, ANNOTATOR_CLICKS)):
        chosen = {name: path for name, path in pages.items() if only is None or name in only}
        chosen_clicks = {name: c for name, c in clicks.items() if only is None or name in only}
        if not chosen and not chosen_clicks:
            continue
        made = contexts(user, password)
        try:
            for name, path in chosen.items():
                visits(made, name, page_visit(path, EXPECT.get(name)))
            for name, (path, click) in chosen_clicks.items():
                visits(made, name, click_visit(path, click))
        finally:
            for context in made.values():
                context.close()
    bare.close()
    return times


def measure_clicks(browser, url: str, repeat: int, click) -> list[float]:
    """A click's times on a page that needs no log-in (a floor), the first visit warming the browser's cache."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(WATCH_JS)
    try:
        open_page(context, url, logged_in=False)
        return [click_time(context, url, click) for _ in range(repeat)]
    finally:
        context.close()


def sign_in(context, url: str, name: str, password: str) -> None:
    """Log in by the sidebar's form; the session cookie then logs in every page opened in ``context``."""
    tab = context.new_page()
    tab.goto(url)
    tab.wait_for_selector(SETTLED, state="attached", timeout=120_000)
    tab.get_by_label("User name", exact=True).fill(name)
    tab.get_by_label("Password", exact=True).fill(password)
    tab.get_by_role("button", name="Log in").click()
    tab.get_by_text(f"Logged in as {name}").wait_for(timeout=60_000)
    deadline = time.time() + 30  # the session cookie is written by the page's script after the run
    while not any(c["name"] == SESSION_COOKIE and c["value"] for c in context.cookies()):
        if time.time() > deadline:
            raise SystemExit("the log-in set no session cookie: every page would be measured logged out")
        tab.wait_for_timeout(100)
    tab.close()


#: The trivial page's visits made in turn with the app's pages (:func:`measure_apps`).
TRIVIAL_IN_TURN = "trivial page, in turn"
#: The trivial page's visits made in the rounds of each page, by page (:func:`measure_apps`).
TRIVIAL_BESIDE = "trivial page, beside each page"

#: One click each, that reruns its page: (the page's URL path, the click).
CLICKS = {
    "click: Studies, Export tab": ("study_admin", lambda tab: tab.get_by_role("tab", name="Export").click()),
    # the heaviest tab a lead opens on Studies: the set-up form of the first benchmark
    "click: Studies, Set up a study tab": ("study_admin", lambda tab: tab.get_by_role("tab", name="Set up a study").click()),
    "click: Results, Paper tables": ("results", lambda tab: tab.get_by_text("Paper tables", exact=True).first.click()),
    # another benchmark's set-up form: the tab opened and settled first, then the click timed (the last press)
    "click: Studies, a lab set's set-up form": ("study_admin", lambda tab: _then(
        tab, lambda: tab.get_by_role("tab", name="Set up a study").click(),
        lambda: tab.get_by_text("The lab's own (multiple choice and short answers)", exact=True).first.click())),
}


#: The annotator's clicks: Submit answer on their own study's question (its answer typed first, untimed), until
#: the next question is drawn. Each click answers a question: at most :data:`ANSWERING_ITEMS` a run.
ANNOTATOR_CLICKS = {
    "click: Question page, Submit answer": (f"human_baseline?study={ANSWERING_STUDY}", lambda tab: _then(
        tab, lambda: tab.get_by_label("Your answer", exact=True).fill("an answer"),
        lambda: tab.get_by_role("button", name="Submit answer").click())),
}


def _then(tab, first, timed) -> None:
    """Do ``first`` and wait until the page has settled, then ``timed``: a click measured on the page the first
    one opened (:func:`click_time` times from the last press of the mouse)."""
    first()
    tab.wait_for_timeout(50)
    settle(tab)
    timed()


def prepare(checkout: Path, base: Path, args) -> None:
    """Fill ``base``'s database with ``checkout``'s own code (the database its code writes)."""
    print(f"{checkout}: filling a database ({args.annotators} people x {args.answers} answers)…",
          file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-c", PREPARE, str(base), str(args.annotators), str(args.answers),
                    str(ANSWERING_ITEMS)],
                   cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout),
                                      "STRUCTEXT_AIBENCH_DIR": str(base / "aibench")}, check=True)


def measure_floors(browser, base: Path, args) -> dict[str, list[float]]:
    """The trivial page, and (``--floors``) the bare scripts and their clicks, each served alone. Streamlit's
    own cost: the same for every checkout run by this Python, so measured once."""
    baseline = {}
    for n, (name, (script, path)) in enumerate({"trivial page": (TRIVIAL, ""), **(FLOORS if args.floors else {})}.items()):
        (base / f"bare{n}.py").write_text(script)
        served = base / f"bare{n}.py"
        if name == FLOOR_TOLD:  # served as server.py serves app.py: with its middleware
            served = base / f"bare{n}_server.py"
            served.write_text(TOLD.format(script=str(base / f"bare{n}.py")))
        bare_port = free_port()
        bare = serve(ROOT, str(served), base, bare_port)
        try:
            baseline[name] = measure_bare(browser, f"http://127.0.0.1:{bare_port}/{path}", args.repeat)
        finally:
            bare.terminate()
            bare.wait()
    for n, (name, (script, click)) in enumerate(FLOOR_CLICKS.items() if args.floors else ()):
        (base / f"bare-click{n}.py").write_text(script)
        bare_port = free_port()
        bare = serve(ROOT, str(base / f"bare-click{n}.py"), base, bare_port)
        try:
            baseline[name] = measure_clicks(browser, f"http://127.0.0.1:{bare_port}", args.repeat, click)
        finally:
            bare.terminate()
            bare.wait()
    return baseline


def report(label: str, baseline: dict, times: dict) -> dict[str, float]:
    alone = statistics.median(baseline["trivial page"])
    times = dict(times)
    beside = times.pop(TRIVIAL_IN_TURN, None)
    by_page = times.pop(TRIVIAL_BESIDE, {})
    trivial = statistics.median(beside) if beside else alone
    print(f"\n{label}\n  trivial Streamlit page: median {trivial:.2f} s"
          + (f" visited in turn with the pages ({len(beside)} visits; {alone:.2f} s alone, before)" if beside else "")
          + f" (goal for a page: {GOAL_RATIO} x the trivial page of its rounds, {GOAL_RATIO * trivial:.2f} s at the"
            f" run's; for a click: {GOAL_CLICK} s)")
    medians = {"trivial page": trivial}
    for name, values in baseline.items():
        if name != "trivial page":
            medians[name] = statistics.median(values)
            ratio = "" if name in FLOOR_CLICKS else f"  {medians[name] / trivial:.2f} x trivial"
            print(f"  {name:40s} median {medians[name]:5.2f} s  worst {max(values):5.2f} s{ratio}  "
                  "(reference: Streamlit's own cost)")
    for name, values in times.items():
        median = statistics.median(values)
        medians[name] = median
        # a page's ratio: against the trivial page visited in its own rounds (the same minutes), and the run's
        own = statistics.median(by_page[name]) if by_page.get(name) else trivial
        goal = GOAL_CLICK if name.startswith("click") else GOAL_RATIO * own
        ratio = "" if name.startswith("click") else (f"  {median / own:.2f} x trivial (its rounds' {own:.2f} s;"
                                                     f" {median / trivial:.2f} x the run's)")
        print(f"  {name:40s} median {median:5.2f} s  worst {max(values):5.2f} s{ratio}  "
              f"{'ok' if median <= goal else 'OVER the goal'}")
    return medians


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=300)
    parser.add_argument("--answers", type=int, default=10, help="answers of each annotator (default 10)")
    parser.add_argument("--repeat", type=int, default=5, help="visits of each page (default 5)")
    parser.add_argument("--floors", action=argparse.BooleanOptionalAction, default=True,
                        help="also time bare scripts: the trivial page in a navigation, with one table, "
                             "data frame or chart more, and a click on a button and on a tab (default: on)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="measure only these pages and clicks (names as printed: "
                             f"{', '.join([*PAGES, *CLICKS, *ANNOTATOR_PAGES, *ANNOTATOR_CLICKS])})")
    parser.add_argument("--compare", metavar="REF", help="also measure this commit, checked out in a git worktree")
    args = parser.parse_args(argv)
    if args.repeat >= ANSWERING_ITEMS:
        parser.error(f"--repeat {args.repeat}: the annotator's study has {ANSWERING_ITEMS} questions to submit")
    from playwright.sync_api import sync_playwright

    checkouts = [("this checkout", ROOT)]
    worktree = None
    if args.compare:
        worktree = Path(tempfile.mkdtemp(prefix="bench-pages-ref-")) / "checkout"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.compare], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        checkouts.append((args.compare, worktree))
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pages-") as tmp, sync_playwright() as playwright:
            bases = {label: Path(tmp) / f"app{n}" for n, (label, _) in enumerate(checkouts)}
            for (_label, checkout), base in zip(checkouts, bases.values(), strict=True):
                base.mkdir()
                prepare(checkout, base, args)
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            servers = []
            try:
                (Path(tmp) / "bare").mkdir()
                baseline = measure_floors(browser, Path(tmp) / "bare", args)
                apps = {}
                for (label, checkout), base in zip(checkouts, bases.values(), strict=True):
                    port = free_port()
                    servers.append(serve(checkout, "server.py", base, port))
                    apps[label] = f"http://127.0.0.1:{port}"
                trivial_port = free_port()  # the trivial page again, visited in turn with the pages
                (Path(tmp) / "bare" / "trivial.py").write_text(TRIVIAL)
                servers.append(serve(ROOT, str(Path(tmp) / "bare" / "trivial.py"), Path(tmp) / "bare", trivial_port))
                times = measure_apps(browser, apps, args.repeat, only=set(args.only) if args.only else None,
                                     trivial=f"http://127.0.0.1:{trivial_port}/")
                for label, checkout in checkouts:
                    results[label] = report(f"{label} ({checkout})", baseline, times[label])
            finally:
                for server in servers:
                    server.terminate()
                    server.wait()
                browser.close()
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
    if len(results) == 2:
        (mine, ours), (theirs, old) = results.items()
        print(f"\nside by side (median seconds; each page's visits alternated between the two): {mine} | {theirs}")
        for name in ours:
            if name in old and name not in {**FLOORS, **FLOOR_CLICKS}:  # the floors: measured once, for both
                print(f"  {name:40s} {ours[name]:5.2f} | {old[name]:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
