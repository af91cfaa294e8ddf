"""The navigation as one light element in the sidebar (issue 46: pages that answer).

Streamlit's own sidebar navigation is a React tree of styled links the browser builds on every page's
first view. Measured bare by ``benchmarks/bench_pages.py`` (its floors, 11 visits, the trivial page 0.58 s):
a page with one components-v2 element in Streamlit's navigation 0.68 s (1.18 x), the same page with this
menu in its place 0.59 s (1.02 x). A page with no light element of its own loads the elements' code for the
menu alone. ``st.navigation(..., position="hidden")`` still routes: each page keeps its address,
``st.switch_page`` and the pages' own guards.

The menu lists the pages ``st.navigation`` shows (its sections, titles and icons, in order), the page shown
marked as the current one. Each entry is a real link to the page's address (opened in a new tab with the
middle button or a modifier key, as any link); a plain click sends the page's address path, and the next run
switches to that page (:func:`menu`), as a click in Streamlit's navigation does, with no new page load.
Only a path of a page the menu listed is followed; anything else a browser sends is ignored. Every text
is written with ``textContent``.

Under the menu, in the same element, the app's name and who is logged in (``Logged in as name (role)``): two
Markdown elements of Streamlit's on every page before, each a React tree the browser built on every first view.
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

COMPONENT_NAME = "structext_light_nav"

NAV_JS = r"""
// under the menu: the app's name, and who is logged in (data.who: {name, role}, or none for a visitor)
function drawFooter(parentElement, data) {
  let footer = parentElement.querySelector("div.sx-app");
  if (!footer) {
    footer = document.createElement("div");
    footer.className = "sx-app";
    parentElement.appendChild(footer);
  }
  footer.textContent = "";
  if (data.app) {
    const name = document.createElement("div");
    name.className = "sx-app-name";
    name.textContent = String(data.app);
    footer.appendChild(name);
  }
  const who = data.who;
  if (who && typeof who === "object" && who.name) {
    const line = document.createElement("div");
    line.className = "sx-app-who";
    const name = document.createElement("strong");
    name.textContent = String(who.name);
    line.append("Logged in as ", name, ` (${String(who.role || "")})`);
    footer.appendChild(line);
  }
}

export default function ({ data, parentElement, setTriggerValue }) {
  const drawn = JSON.stringify(data || {});
  let nav = parentElement.querySelector("nav");
  if (nav && nav.dataset.drawn === drawn) return;  // the same menu: nothing to change
  if (!nav) {
    nav = document.createElement("nav");
    nav.className = "sx-nav";
    nav.setAttribute("aria-label", "Pages");
    nav.setAttribute("data-testid", "sxNav");
    parentElement.appendChild(nav);
  }
  nav.dataset.drawn = drawn;
  nav.textContent = "";
  drawFooter(parentElement, data);
  const here = typeof data.current === "string" ? data.current : "";
  // the app's root: the address shown, less the page's own segment (a page is one segment under the root)
  let root = location.pathname.replace(/\/+$/, "");
  if (here && root.endsWith("/" + here)) root = root.slice(0, root.length - here.length - 1);
  root += "/";
  for (const section of Array.isArray(data.sections) ? data.sections : []) {
    if (section.title) {
      const head = document.createElement("div");
      head.className = "sx-nav-head";
      head.textContent = String(section.title);
      nav.appendChild(head);
    }
    const list = document.createElement("ul");
    for (const entry of Array.isArray(section.links) ? section.links : []) {
      const path = String(entry.path || "");
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = root + encodeURI(path);
      if (path === here) link.setAttribute("aria-current", "page");
      if (entry.icon) {
        const icon = document.createElement("span");
        icon.className = "sx-nav-icon";
        icon.setAttribute("aria-hidden", "true");
        icon.textContent = String(entry.icon);
        link.appendChild(icon);
      }
      const label = document.createElement("span");
      label.textContent = String(entry.label || "");
      link.appendChild(label);
      link.addEventListener("click", (event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();  // the page is switched by the next run, not by a new page load
        if (path === here) return;
        for (const other of nav.querySelectorAll("a[aria-current]")) other.removeAttribute("aria-current");
        link.setAttribute("aria-current", "page");
        setTriggerValue("go", path);
      });
      item.appendChild(link);
      list.appendChild(item);
    }
    nav.appendChild(list);
  }
}
"""

NAV_CSS = """
.sx-nav { font-family: var(--st-font); color: var(--st-text-color); margin: 0 0 1rem 0; }
.sx-nav ul { list-style: none; margin: 0; padding: 0; }
.sx-nav li { margin: 0.0625rem 0; }
.sx-nav-head { font-size: 0.875rem; font-weight: 600; opacity: 0.65; margin: 1rem 0 0.25rem 0; }
.sx-nav-head:first-child { margin-top: 0; }
.sx-nav a { display: flex; align-items: center; gap: 0.5rem; padding: 0.125rem 0.5rem; border-radius: 0.5rem;
            color: inherit; text-decoration: none; line-height: 1.75rem; font-size: 0.875rem; }
.sx-nav a:hover { background: color-mix(in srgb, var(--st-text-color) 6%, transparent); }
.sx-nav a:focus-visible { outline: 2px solid var(--st-primary-color); outline-offset: -2px; }
.sx-nav a[aria-current="page"] { background: color-mix(in srgb, var(--st-text-color) 10%, transparent); font-weight: 600; }
.sx-app { font-family: var(--st-font); color: var(--st-text-color); }
.sx-app-name { font-weight: 700; line-height: 1.6; margin: 0 0 1rem 0; }
.sx-app-who { font-size: 0.875rem; line-height: 1.6; opacity: 0.6; overflow-wrap: anywhere; }
.sx-app-who strong { font-weight: 600; }
.sx-nav-icon { font-family: "Material Symbols Rounded"; font-size: 1.125rem; line-height: 1; width: 1.25rem;
               font-weight: normal; font-feature-settings: "liga"; -webkit-font-feature-settings: "liga";
               opacity: 0.8; overflow: hidden; }
"""


def component():
    """The component, registered as the app runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=NAV_CSS, js=NAV_JS)


def icon_name(icon: str | None) -> str:
    """The Material symbol's name of a page's icon (``":material/home:"`` -> ``"home"``); other icons
    (an emoji) as they are; none, ``""``."""
    if not icon:
        return ""
    if icon.startswith(":material/") and icon.endswith(":"):
        return icon[len(":material/"):-1]
    return icon


def menu_data(sections: dict[str, list[StreamlitPage]], current: StreamlitPage, app: str = "",
              who: dict | None = None) -> dict:
    """What the browser is sent: the sections with the pages shown in them (title, address path, icon),
    in order, empty sections left out, the current page's address path, and what shows under the menu: the
    app's name and who is logged in (``{"name", "role"}``, None for a visitor)."""
    out = []
    for title, pages in sections.items():
        links = [{"label": page.title, "path": page.url_path, "icon": icon_name(page.icon)}
                 for page in pages if page.visibility != "hidden"]
        if links:
            out.append({"title": title, "links": links})
    return {"sections": out, "current": current.url_path, "app": app,
            "who": None if who is None else {"name": str(who["name"]), "role": str(who["role"])}}


def menu(sections: dict[str, list[StreamlitPage]], current: StreamlitPage, app: str = "",
         who: dict | None = None) -> None:
    """Draw the menu of ``sections`` (what ``st.navigation`` was given, the page it chose ``current``) where
    the script is (app.py: the sidebar), the app's name and who is logged in under it (:func:`menu_data`), and
    switch to the page a click named: one of those listed."""
    result = component()(data=menu_data(sections, current, app, who), key="structext_nav", on_go_change=lambda: None)
    chosen = result.get("go")  # this run's click, or None
    listed = {page.url_path: page for pages in sections.values() for page in pages if page.visibility != "hidden"}
    if isinstance(chosen, str) and chosen != current.url_path and chosen in listed:
        st.switch_page(listed[chosen])
