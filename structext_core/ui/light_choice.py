"""Choosers the browser builds from plain data, each one page element of its own inputs: a select box or a
row of radio buttons (:func:`choose`), a row of tabs (:func:`tabs`), a whole number (:func:`number`), a line
of text (:func:`text`), a check box or switch (:func:`check`), a row of buttons (:func:`actions`) and a row of
download buttons (:func:`downloads`). Streamlit's own widgets make
the browser load and run each widget's code on the page's first view (issue 46: pages that answer).

Measured bare beside a trivial page (0.52 s, 9 visits): the page with one ``st.selectbox`` 0.57 s, with
this element 0.51 s. A choice reruns the page at once, as Streamlit's widgets do. The element's own code
is loaded once per page too (with Arrow's reader): a page gains only when no Streamlit widget of the
kind it replaces is left on the first view.

The value chosen is kept in ``st.session_state[key]`` (the option itself, as ``st.selectbox`` keeps it), so
a page or a test chooses by setting it, and a link's choice is written there before the chooser is
drawn. What the browser sends is an option's id (``ident``, text), looked up among the options it was
shown; a number within its bounds, true or false, a button's name: anything else is ignored. Labels and
options are written with textContent.

A list longer than :data:`FILTER_OVER` has a box beside it to type in: the options that contain what is
typed stay in the list, Enter takes the first of them (typing to search, as ``st.selectbox`` offers).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit import runtime

from structext_core.ui import light_form, light_panel
from structext_core.ui.light_choice_script import CHOICE_CSS, CHOICE_JS, DRAW_JS  # noqa: F401 - DRAW_JS: light_panel's

COMPONENT_NAME = "structext_light_choice"
#: Above this many options, a box to type in narrows the list.
FILTER_OVER = 12
_UNSET = object()


def component():
    """The component, registered as the page runs (as the other components are)."""
    return st.components.v2.component(COMPONENT_NAME, css=CHOICE_CSS, js=CHOICE_JS)


def element_key(key: str) -> str:
    """The key of the element that draws the choice kept under ``key``."""
    return f"{key}:choice"  # no "__": Streamlit keeps it for the ids it derives


def _default_ident(option) -> str:
    return str(option)


def current(options: Sequence, key: str, *, ident: Callable[[object], str] = _default_ident,
            index: int | None = 0):
    """The option chosen under ``key``: the one kept there (found by its id, so a list read anew still
    finds it), else ``options[index]`` (``None`` with ``index=None`` or no options)."""
    kept = st.session_state.get(key, _UNSET)
    if kept is not _UNSET and kept is not None:
        try:
            wanted = ident(kept)
        except (AttributeError, TypeError, ValueError):  # something else kept there: as if nothing were
            wanted = None
        for option in options:
            if ident(option) == wanted:
                return option
    if index is None or not options:
        return None
    return options[min(index, len(options) - 1)]


def sent(key: str):
    """What the element under ``key`` sent on this run (an option's id), or ``None``."""
    return light_panel.sent(element_key(key), "choose")


def _take(key: str, by_id: dict, on_change: Callable[[], None] | None) -> None:
    """The browser chose: keep the option it named (one of those it was shown; anything else is ignored)."""
    chosen = sent(key)
    if isinstance(chosen, str) and chosen in by_id:
        st.session_state[key] = by_id[chosen]
        if on_change is not None:
            on_change()


def _mount(key: str, data: dict, take: Callable[[], None], where, width: str | int = "stretch") -> None:
    """Draw the element of ``key`` (in ``where``, a column or container, when given; ``width`` "content" to
    take only its own width in a row); ``take`` keeps what it sends."""
    if light_panel.add("choice", element_key(key), data, take, where, width=width):
        return
    with light_form.inside(where):
        component()(data=data, key=element_key(key), on_choose_change=take, width=width)


def choice_data(key: str, label: str, options: Sequence, chosen, *, format_func: Callable[[object], object],
                ident: Callable[[object], str], kind: str = "select", help: str | None = None,
                disabled: bool = False, placeholder: str | None = None, label_visibility: str = "visible",
                filter_over: int = FILTER_OVER) -> dict:
    """What the browser is sent: the options as (id, label) pairs, the id chosen, the label and help."""
    pairs = [[ident(option), str(format_func(option))] for option in options]
    if len({i for i, _ in pairs}) != len(pairs):
        raise ValueError(f"choice {key!r}: two options with one id")
    return {"key": key, "kind": kind, "label": label, "options": pairs,
            "value": None if chosen is None else ident(chosen), "help": help or "", "disabled": disabled,
            "placeholder": placeholder if chosen is None else None,
            "collapsed": label_visibility != "visible", "filter_over": filter_over}


def choose(label: str, options: Sequence, *, key: str, format_func: Callable[[object], object] = str,
           ident: Callable[[object], str] = _default_ident, index: int | None = 0, help: str | None = None,
           buttons: bool = False, disabled: bool = False, placeholder: str = "Choose an option",
           on_change: Callable[[], None] | None = None, label_visibility: str = "visible", where=None,
           _kind: str | None = None):
    """Draw a choice of one of ``options`` (a select box, or with ``buttons`` a row of radio buttons) and
    return the option chosen (kept under ``key``; see :func:`current`). ``where`` is a column or container
    to draw it in."""
    options = list(options)
    chosen = current(options, key, ident=ident, index=index)
    st.session_state[key] = chosen
    data = choice_data(key, label, options, chosen, format_func=format_func, ident=ident,
                       kind=_kind or ("buttons" if buttons else "select"), help=help, disabled=disabled,
                       placeholder=placeholder, label_visibility=label_visibility)
    by_id = {ident(option): option for option in options}
    _mount(key, data, lambda: _take(key, by_id, on_change), where)
    return chosen


def tabs(sections: Sequence[str], *, key: str, default: str | None = None, label: str = "Sections") -> str:
    """A row of tabs over ``sections`` (their names): the name of the open one, kept under ``key``
    (``default`` until one is clicked, else the first). Only the open section is drawn by the page, after
    the row (a click reruns the page, as ``st.tabs(..., on_change="rerun")``); the browser's own buttons,
    where Streamlit's tabs made it load their code."""
    sections = list(sections)
    return choose(label, sections, key=key, index=sections.index(default) if default in sections else 0,
                  label_visibility="collapsed", _kind="tabs")


def _take_number(key: str, min_value: int, max_value: int, on_change: Callable[[], None] | None,
                 optional: bool = False) -> None:
    """The browser sent a number: keep it when it is a whole number within the bounds, or an emptied box
    (``None``) when it may be empty (anything else is ignored: only a changed page or a forged request sends it)."""
    value = sent(key)
    if value is None and optional and st.session_state.get(key) is not None:
        st.session_state[key] = None
        if on_change is not None:
            on_change()
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not value.is_integer():  # nan and infinity are not integers either
        return
    if min_value <= value <= max_value:
        st.session_state[key] = int(value)
        if on_change is not None:
            on_change()


def number(label: str, *, key: str, min_value: int, max_value: int, value: int | None = None,
           help: str | None = None, disabled: bool = False, on_change: Callable[[], None] | None = None,
           where=None, optional: bool = False, placeholder: str | None = None, width: str | int = "stretch"):
    """Draw a whole number between ``min_value`` and ``max_value`` (the browser's own number box, with its
    arrows; a change reruns the page at once) and return it. Kept under ``key`` as :func:`choose` keeps a
    choice (``value``, else ``min_value``, when nothing is kept or what is kept is out of bounds). With
    ``optional`` the box may be empty (``None``: it starts so, showing ``placeholder``, unless ``value``), as
    ``st.number_input(value=None)``; ``width`` a number of pixels, or "content"."""
    kept = st.session_state.get(key)
    if isinstance(kept, bool) or not isinstance(kept, int) or not min_value <= kept <= max_value:
        if optional and (value is None or (kept is None and key in st.session_state)):  # left or made empty
            kept = None
        else:
            kept = min_value if value is None else min(max(int(value), min_value), max_value)
    st.session_state[key] = kept
    data = {"key": key, "kind": "number", "label": label, "options": [], "value": kept, "help": help or "",
            "disabled": disabled, "placeholder": placeholder, "collapsed": False, "filter_over": FILTER_OVER,
            "min_value": min_value, "max_value": max_value, "step": 1, "optional": optional}
    _mount(key, data, lambda: _take_number(key, min_value, max_value, on_change, optional), where, width)
    return kept


def _take_text(key: str, max_chars: int, on_change: Callable[[], None] | None) -> None:
    """The browser sent the box's text: keep it when it is text within ``max_chars`` (anything else is
    ignored: only a changed page or a forged request sends it)."""
    value = sent(key)
    if isinstance(value, str) and len(value) <= max_chars and value != st.session_state.get(key):
        st.session_state[key] = value
        if on_change is not None:
            on_change()


def text(label: str, *, key: str, max_chars: int, placeholder: str = "", help: str | None = None,
         disabled: bool = False, on_change: Callable[[], None] | None = None, where=None,
         width: str | int = "stretch") -> str:
    """Draw a line of text (the browser's own text box; Enter or leaving it reruns the page, as
    ``st.text_input``) and return it ("" until something is typed). Kept under ``key`` as :func:`choose` keeps
    a choice; at most ``max_chars`` characters (the box takes no more, the server keeps no more)."""
    kept = st.session_state.get(key)
    if not isinstance(kept, str) or len(kept) > max_chars:
        kept = ""
    st.session_state[key] = kept
    data = {"key": key, "kind": "text", "label": label, "options": [], "value": kept, "help": help or "",
            "disabled": disabled, "placeholder": placeholder, "collapsed": False, "filter_over": FILTER_OVER,
            "max_chars": max_chars}
    _mount(key, data, lambda: _take_text(key, max_chars, on_change), where, width)
    return kept


def _press(key: str, handlers: dict[str, Callable[[], None]]) -> None:
    """A button of the row ``key`` was clicked: run what its name calls for (any other name is ignored)."""
    name = sent(key)
    if isinstance(name, str) and name in handlers:
        handlers[name]()


def actions(key: str, buttons: Sequence[tuple[str, str, Callable[[], None]]], *,
            expanded: dict[str, bool] | None = None, tips: dict[str, str] | None = None, label: str = "Actions",
            where=None) -> None:
    """A row of buttons, each ``(name, label, callback)``: a click runs its callback before the page runs
    again (as ``st.button``'s ``on_click``). ``expanded`` names the buttons that open and close a box, with
    whether it is open now (the button shows it: ``aria-expanded`` and an arrow); ``tips``, the text a
    button shows under the pointer (as ``st.button``'s ``help``)."""
    data = {"key": key, "kind": "actions", "label": label, "options": [[name, text] for name, text, _ in buttons],
            "value": None, "help": "", "disabled": False, "placeholder": None, "collapsed": True,
            "filter_over": FILTER_OVER, "expanded": expanded or {}, "tips": tips or {}}
    handlers = {name: callback for name, _, callback in buttons}
    _mount(key, data, lambda: _press(key, handlers), where)


def _take_check(key: str, on_change: Callable[[], None] | None) -> None:
    """The box was ticked or cleared: keep it (anything but true or false is ignored)."""
    value = sent(key)
    if isinstance(value, bool):
        st.session_state[key] = value
        if on_change is not None:
            on_change()


def check(label: str, *, key: str, value: bool = False, help: str | None = None, toggle: bool = False,
          disabled: bool = False, on_change: Callable[[], None] | None = None, where=None,
          width: str = "stretch") -> bool:
    """Draw a check box (with ``toggle``, drawn as a switch) and return whether it is ticked; a click
    reruns the page at once. ``help`` shows under the pointer (and is read out with the box). Kept under
    ``key`` as :func:`choose` keeps a choice (``value`` until then). ``width="content"``: beside others in a
    row, only as wide as itself."""
    kept = st.session_state.get(key)
    if not isinstance(kept, bool):
        kept = bool(value)
    st.session_state[key] = kept
    data = {"key": key, "kind": "check", "label": label, "options": [], "value": kept, "help": help or "",
            "disabled": disabled, "placeholder": None, "collapsed": False, "filter_over": FILTER_OVER,
            "toggle": toggle}
    _mount(key, data, lambda: _take_check(key, on_change), where, width)
    return kept


@dataclass(frozen=True)
class Download:
    """A file a download button gives: ``make()`` returns its content (text or bytes), called on the click
    (as ``st.download_button``'s ``data`` given a function). ``file_name`` names the button in its row."""

    label: str
    file_name: str
    make: Callable[[], bytes | str]
    mime: str = "application/octet-stream"
    tip: str | None = None


_LOG = logging.getLogger(__name__)
_SAVES = itertools.count(1)  # each file served, numbered: the browser saves a number once


def _asked_key(key: str) -> str:
    return f"{key}:asked"


def _ask(key: str, names: frozenset[str]) -> None:
    """A download button was clicked: note its file for the run this click starts (any other name is
    ignored)."""
    name = sent(key)
    if isinstance(name, str) and name in names:
        st.session_state[_asked_key(key)] = name


def media_url(content: bytes, mime: str, file_name: str, where: str) -> str:
    """Where the browser fetches ``content`` as the file ``file_name``: Streamlit's own media route, as
    ``st.download_button`` serves its files (kept while the session needs it). Empty without Streamlit's
    server (AppTest, a bare script)."""
    if not runtime.exists():
        return ""
    url = runtime.get_instance().media_file_mgr.add(content, mime, where, file_name=file_name,
                                                    is_for_static_download=True)
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{url}" if base and url.startswith("/") else url


def _served(key: str, download: Download) -> dict:
    """The file asked for, made now and served: what the element is sent to save it."""
    try:
        content = download.make()
    except Exception:  # noqa: BLE001 - the person reads what failed; the server's log has why
        _LOG.exception("download %s of %s could not be made", download.file_name, key)
        st.error(f"{download.file_name} could not be made; nothing was saved. The server's log says why.",
                 icon=":material/error:")
        return {"nonce": next(_SAVES), "url": "", "name": download.file_name}
    if isinstance(content, str):
        content = content.encode("utf-8")
    url = media_url(bytes(content), download.mime, download.file_name, f"{element_key(key)}:{download.file_name}")
    return {"nonce": next(_SAVES), "url": url, "name": download.file_name}


def downloads(key: str, files: Sequence[Download], *, label: str = "Downloads", disabled: bool = False,
              where=None) -> None:
    """A row of download buttons, one a file (:class:`Download`): a click runs the row alone again (a
    fragment of its own: the page is not run), the file is made then and the browser saves it. What
    ``st.download_button`` with ``data`` made on the click does, without the browser loading that button's
    code on the page's first view. In a panel (:mod:`light_panel`), a part of it: a click runs again what the
    panel is drawn by (its fragment, or the page)."""
    files = list(files)
    by_name = {download.file_name: download for download in files}
    if len(by_name) != len(files):
        raise ValueError(f"downloads {key!r}: two files of one name")

    def row() -> None:
        asked = st.session_state.pop(_asked_key(key), None)
        data = {"key": key, "kind": "downloads", "label": label,
                "options": [[download.file_name, download.label] for download in files], "value": None, "help": "",
                "disabled": disabled, "placeholder": None, "collapsed": True, "filter_over": FILTER_OVER,
                "tips": {download.file_name: download.tip for download in files if download.tip},
                "file": _served(key, by_name[asked]) if asked in by_name and not disabled else None}
        _mount(key, data, lambda: _ask(key, frozenset(by_name)), None)

    if light_panel.drawing(where):  # a part of the panel: a click runs what the panel is drawn by again
        row()
        return
    with light_form.inside(where):
        st.fragment(row)()
