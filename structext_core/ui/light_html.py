"""An HTML block of our builders' (``safe_text``, ``answer_card``: every text from a person escaped) drawn as
one components-v2 element, on a page whose first view draws such elements anyway (the light choosers'):
``st.html`` made the browser load its own code and DOMPurify for it (Studies and Results on AIBench 0.025 to
0.03 s faster without, 15 alternated visits; issue 46). A page says so once, at its top
(:func:`page_draws_light`); ``widgets.html_block`` then draws its blocks here, elsewhere with ``st.html``.

The markup is checked again in the browser, as ``st.html`` has DOMPurify check it: parsed in an inert
template (nothing runs, nothing loads), then every element not in :data:`TAGS` is dropped with what it holds,
every attribute not in :data:`ATTRIBUTES` (event handlers, sources) is removed, a link keeps its address only
when it is one of the app's own pages (:data:`PAGE_LINK`: a page's path and a plain query, no scheme, host or
slash), and no style may name a URL. The walk is a loop, not a recursion. The element's styles are its own (a
shadow root): each builder's block carries its style sheet. A block with a link to anywhere else is drawn with
``st.html`` (:func:`keeps_links`).
"""

from __future__ import annotations

import html
import json
import re

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

from structext_core.ui import light_form, light_panel

COMPONENT_NAME = "structext_light_html"
#: The elements a block may hold: what the builders write (anything else is dropped with its content).
TAGS = ("div", "span", "p", "strong", "em", "b", "i", "code", "pre", "small", "br", "abbr", "sub", "sup",
        "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td", "details", "summary", "style",
        "ul", "ol", "li", "h3", "h4", "a")
#: The attributes an element may keep (and any ``aria-``); no event handler or source, and a link's address only
#: as :data:`PAGE_LINK` allows.
ATTRIBUTES = ("class", "style", "title", "role", "colspan", "rowspan", "scope", "open", "data-testid")
#: The one address a link keeps: a page of this app by its path (``results``, ``human_baseline``), with a plain
#: query (``?study=3``, ``?benchmark=aibench&view=paper``); no scheme, host, slash or fragment. The same pattern
#: in the browser's check.
PAGE_LINK = r"^[A-Za-z0-9_-]+(?:\?[A-Za-z0-9_-]+=[A-Za-z0-9_.-]*(?:&[A-Za-z0-9_-]+=[A-Za-z0-9_.-]*)*)?$"
_HREF = re.compile(r'\bhref="([^"]*)"')

#: The block's drawing: ``drawHtml(root, data)``, in its own element or a panel's part.
DRAW_JS = r"""
const TAGS = new Set(%(tags)s);
const ATTRIBUTES = new Set(%(attributes)s);
const PAGE_LINK = new RegExp(%(page_link)s);
const URL_IN_STYLE = /url\s*\(|@import|expression\s*\(/i;

// ``markup`` as nodes, every element and attribute outside the lists dropped (a loop over the tree)
function cleaned(markup) {
  const template = document.createElement("template");
  template.innerHTML = markup;  // inert: no script runs and nothing loads in a template
  const walker = document.createTreeWalker(template.content, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_COMMENT);
  const dropped = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeType !== Node.ELEMENT_NODE || !TAGS.has(node.localName)) { dropped.push(node); continue; }
    for (const attribute of [...node.attributes]) {
      const name = attribute.name.toLowerCase();
      const allowed = ATTRIBUTES.has(name) || /^aria-[a-z]+$/.test(name)
        || (name === "href" && node.localName === "a" && PAGE_LINK.test(attribute.value));
      if (!allowed || URL_IN_STYLE.test(attribute.value)) node.removeAttribute(attribute.name);
    }
    if (node.localName === "style" && URL_IN_STYLE.test(node.textContent)) node.textContent = "";
  }
  for (const node of dropped) node.remove();
  return template.content;
}

function drawHtml(parent, data) {
  let root = parent.querySelector("div.sxh");
  if (!root) {
    root = document.createElement("div");
    root.className = "sxh";
    parent.appendChild(root);
  }
  if (root.__markup === data.html) return;
  root.__markup = data.html;
  root.replaceChildren(cleaned(data.html));
}
""" % {"tags": list(TAGS).__repr__().replace("'", '"'), "attributes": list(ATTRIBUTES).__repr__().replace("'", '"'),
       "page_link": json.dumps(PAGE_LINK)}

HTML_JS = DRAW_JS + r"""
export default function ({ data, parentElement }) { drawHtml(parentElement, data); }
"""

HTML_CSS = """
.sxh { font-family: var(--st-font, "Source Sans Pro", sans-serif); color: var(--st-text-color, #31333f); }
.sxh p { margin: 0 0 0.5rem 0; }
"""

_PAGE_KEY = "_light_html_page"


def component():
    """The component, registered as the page runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=HTML_CSS, js=HTML_JS)


def keeps_links(markup: str) -> bool:
    """Whether every link of ``markup`` (a builder's) is to one of the app's pages (:data:`PAGE_LINK`): then a light
    block shows it as it is; else it is drawn with ``st.html``."""
    if "<a " not in markup:
        return True
    hrefs = _HREF.findall(markup)
    return markup.count("<a ") == len(hrefs) and all(re.fullmatch(PAGE_LINK, html.unescape(href)) for href in hrefs)


def _page() -> str | None:
    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.page_script_hash


def page_draws_light() -> None:
    """Called at the top of a page whose first view draws light elements: its HTML blocks are drawn as one
    too, on this run and its fragments' (the page is known by Streamlit's hash of it: another page's
    blocks stay ``st.html``), and its light elements and notes as the parts of as few elements as their
    order allows (:mod:`light_panel`)."""
    st.session_state[_PAGE_KEY] = _page()


def here() -> bool:
    """Whether this run's page said it draws light elements (:func:`page_draws_light`)."""
    page = _page()
    return page is not None and st.session_state.get(_PAGE_KEY) == page


def _key() -> str:
    """The next block's key on this run: its place among the blocks of the page (or of the fragment running),
    so a block whose markup changes is the same element with new data, and two alike are two."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return "sxh-0"
    return light_panel.free_key(f"sxh-{ThreadState.get().fragment_id or 'page'}-")  # (Streamlit is pinned)


def draw(markup: str, where=st) -> None:
    """``markup`` (from one of the builders) as one element, in ``where`` (a column or container)."""
    key = _key()
    if light_panel.add("html", key, {"html": markup}, where=where):
        return
    with light_form.inside(where):
        component()(data={"html": markup}, key=key)
