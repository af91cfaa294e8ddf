"""The reference of a question with long answers, and its tools: search (the number of matches;
choosing one shows the lines around it, marked), go to a line, and "Add lines X–Y to the answer"
(the lines verbatim at the end of the answer). Everything is computed from the reference alone
(:mod:`structext_core.views.reference`); this module draws it.
"""

from __future__ import annotations

import streamlit as st

from structext_core import ui
from structext_core.studio import study
from structext_core.ui import light_choice, light_panel, widgets
from structext_core.ui.question_screen.common import (
    ADDED_FROM_KEY,
    Screen,
    answer_text,
    key,
    note,
    write_answer,
)
from structext_core.views import reference as viewer

REFERENCE_HEIGHT = 560
GO_TO_WIDTH = 160  # px: the Go to line box beside the search box
#: The largest line number a line box takes (the reference's own end is checked on the server, with its message).
MAX_LINE = 10**9

# The lines around a match or a line of the reference, the match marked. Every text of the
# reference is put on the page with `textContent`: nothing from it is read as HTML.
WINDOW_CSS = """
.hb-window { font-family: "Source Code Pro", monospace; font-size: .8rem; line-height: 1.6; overflow: auto;
             padding: .75rem 0; border-radius: .5rem; border: 1px solid rgba(128,128,128,.25); }
.hb-row { display: flex; }
.hb-row.hb-target { background: rgba(255,200,0,.18); }
.hb-number { flex: none; min-width: 4.5em; padding-right: 1em; text-align: right; opacity: .5; user-select: none; }
.hb-text { white-space: pre; word-break: break-all; }
.hb-window.hb-wrap .hb-text { white-space: pre-wrap; }
.hb-cut { opacity: .55; }
mark { padding: 0; border-radius: 2px; }
"""
WINDOW_JS = """
export default function (component) {
  const { data, parentElement } = component;
  // The root also holds the component's style sheet: only the window's own box is replaced.
  let box = parentElement.querySelector(".hb-window");
  if (!box) { box = document.createElement("div"); parentElement.appendChild(box); }
  box.replaceChildren();
  box.className = "hb-window" + (data.wrap ? " hb-wrap" : "");
  box.style.maxHeight = `${Number(data.max_height) || 560}px`;
  const span = (cls, text) => { const el = document.createElement("span"); el.className = cls;
                                el.textContent = text; return el; };
  for (const [number, text, mark, cutBefore, cutAfter] of data.rows) {
    const row = document.createElement("div");
    row.className = "hb-row" + (number === data.target ? " hb-target" : "");
    row.appendChild(span("hb-number", String(number)));
    const body = span("hb-text", "");
    if (cutBefore) body.appendChild(span("hb-cut", `[… ${cutBefore.toLocaleString("en")} characters] `));
    if (mark) {
      body.appendChild(document.createTextNode(text.slice(0, mark[0])));
      const marked = document.createElement("mark");
      marked.textContent = text.slice(mark[0], mark[1]);
      body.appendChild(marked);
      body.appendChild(document.createTextNode(text.slice(mark[1])));
    } else {
      body.appendChild(document.createTextNode(text || " "));
    }
    if (cutAfter) body.appendChild(span("hb-cut", ` [… ${cutAfter.toLocaleString("en")} characters]`));
    row.appendChild(body);
    box.appendChild(row);
  }
}
"""


def window_component():
    """The window component, registered as the page runs (as the clock component is)."""
    return st.components.v2.component("structext_reference_window", css=WINDOW_CSS, js=WINDOW_JS)


# ---------------------------------------------------------------- actions (callbacks)


def on_search_changed(assignment_id: int) -> None:
    """A new search: no match is chosen yet; the window stays where it was, unmarked."""
    st.session_state[key("hit", assignment_id)] = None
    target = st.session_state.get(key("target", assignment_id))
    if target is not None:
        st.session_state[key("target", assignment_id)] = (target[0], None)


def _show_line(assignment_id: int, line: int, hit: viewer.Hit | None) -> None:
    """Show the window around ``line``; From / To line start there, ready to take it."""
    st.session_state[key("target", assignment_id)] = (line, hit)
    st.session_state[key("from", assignment_id)] = line
    st.session_state[key("to", assignment_id)] = line
    st.session_state[key("lines_set", assignment_id)] = st.session_state.get(key("lines_set", assignment_id), 0) + 1


def on_hit_chosen(assignment_id: int, hits: tuple[viewer.Hit, ...]) -> None:
    chosen = st.session_state.get(key("hit", assignment_id))
    if chosen is not None and 0 <= chosen < len(hits):
        _show_line(assignment_id, hits[chosen].line, hits[chosen])


def on_go_to(assignment_id: int) -> None:
    line = st.session_state.get(key("goto", assignment_id))  # a whole number from 1 (light_choice.number)
    if line is not None:  # checked against the reference's end when the window is drawn
        _show_line(assignment_id, line, None)


def on_whole_reference(assignment_id: int) -> None:
    st.session_state[key("target", assignment_id)] = None
    st.session_state[key("goto", assignment_id)] = None
    st.session_state[key("hit", assignment_id)] = None


def on_add_lines(screen: Screen, assignment_id: int, reference: str) -> None:
    """"Add lines X–Y to the answer": the lines verbatim at the end of the answer (the rule of
    :func:`viewer.append`), saved as the draft as typing is. The form sent the text as typed
    so far and the line boxes with the click, so nothing typed is lost. A bad range changes nothing."""
    text = answer_text(assignment_id)
    first, last = (st.session_state.get(key(name, assignment_id)) for name in ("from", "to"))
    try:
        lines = viewer.take(viewer.Lines.of(reference), first, last)
        combined = viewer.append(text, lines, max_chars=study.MAX_RESPONSE_CHARS)
    except viewer.ReferenceInputError as error:
        st.session_state[key("take_error", assignment_id)] = f"Nothing was added. {error}"
        return
    write_answer(assignment_id, combined)
    # An input report the page's script sent before this click still holds ``text``: arriving after this
    # run, it must not put that older text back as the draft (watches._take_report).
    st.session_state[ADDED_FROM_KEY] = (assignment_id, text)
    try:
        status = study.record_activity(ui.get_db(), screen.user_id, assignment_id, screen.tab, draft=combined,
                                       settings=screen.settings)
    except study.StudyError as error:
        note(error)
        return
    if status.state == "elsewhere":
        st.session_state["hb_carry"] = (assignment_id, combined)  # for "Continue here", as on_submit keeps it
    ui.flash("toast", f"Added lines {int(first):,}–{int(last):,} to your answer.")


# ---------------------------------------------------------------- drawing


def reference_panel(screen: Screen, view: study.QuestionView) -> None:
    """The reference with line numbers and the tools for long answers: search (the number of
    matches; choosing one shows the lines around it, marked) and go to a line. The lines
    "Add lines" takes are set under the answer box (its line boxes, which a match or a line
    chosen fills). Everything is computed from the reference alone (:mod:`structext_core.views.reference`)."""
    aid = view.assignment_id
    lines = viewer.Lines.of(view.reference)
    # Two rows of light elements, each one part of the page's element (a row of Streamlit's, its elements each
    # their own, where the page draws none): the heading and its switches, then the search and the line box.
    with light_panel.row():
        # No length or other figure that would single the sample out elsewhere in the app.
        light_panel.note(f"**Reference** · {view.reference_label}", "markdown")
        # light switches (st.toggle made the browser load its code on every question page, issue 46)
        matching = light_choice.check("Match case", key=key("case", aid), toggle=True, width="content",
                                      on_change=lambda: on_search_changed(aid))
        wrap = light_choice.check("Wrap lines", key="hb_wrap", toggle=True, width="content")
    # The browser's own boxes (light elements: st.text_input and st.number_input made the browser load their
    # code on every question page, issue 46); what they send is checked on the server (text within its
    # length, a whole line number within its bounds), anything else ignored.
    with light_panel.row(vertical_alignment="bottom"):
        query = light_choice.text("Search the reference", key=key("find", aid), max_chars=viewer.MAX_QUERY_CHARS,
                                  placeholder="A key or a value, as plain text",
                                  on_change=lambda: on_search_changed(aid))
        light_choice.number("Go to line", key=key("goto", aid), min_value=1, max_value=MAX_LINE, optional=True,
                            placeholder="Line", width=GO_TO_WIDTH, on_change=lambda: on_go_to(aid))
    if query:
        search_results(aid, lines, query, matching)
    reference_view(screen, view, lines, wrap)


def search_results(aid: int, lines: viewer.Lines, query: str, matching: bool) -> None:
    try:
        found = viewer.search(lines, query, case_sensitive=matching)
    except viewer.ReferenceInputError as error:
        st.error(str(error))
        return
    if not found.hits:
        st.caption(found.summary)
        return
    st.selectbox(found.summary, list(range(len(found.hits))), index=None, key=key("hit", aid),
                 format_func=lambda i: found.hits[i].label, placeholder="Choose a match to show it",
                 on_change=on_hit_chosen, args=(aid, found.hits))


def reference_view(screen: Screen, view: study.QuestionView, lines: viewer.Lines, wrap: bool) -> None:
    """The lines around the chosen match or line (the match marked), else the whole reference."""
    aid = view.assignment_id
    target = st.session_state.get(key("target", aid))
    if target is not None:
        line, hit = target
        try:
            around = viewer.window(lines, line, hit=hit)
        except viewer.ReferenceInputError as error:
            st.error(str(error))
        else:
            caption_col, back_col = st.columns([3, 1], vertical_alignment="center")
            caption_col.caption(around.caption)
            back_col.button("Whole reference", key=key("whole", aid), width="stretch",
                            on_click=on_whole_reference, args=(aid,))
            screen.window(key=key("window", aid),
                          data={**viewer.window_data(around), "wrap": wrap, "max_height": REFERENCE_HEIGHT})
            return
    # A frame that scrolls beyond REFERENCE_HEIGHT (a short reference takes its own height). A text
    # block, not st.code: the question would wait for the browser to load and parse Streamlit's
    # 1.5 MB code highlighter (0.5-1 s after each page load, counted on the question's clock).
    # a light block: with the progress bar's, the question page has no st.html left (its code and DOMPurify)
    widgets.text_block(view.reference, line_numbers=True, wrap=wrap, max_height=REFERENCE_HEIGHT, light=True)
