"""Widgets more than one page draws (Streamlit; the data they show comes from the core)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from structext_core.studio import study
from structext_core.text.safe_text import figures_html, markdown_literal, preformatted_html, progress_html
from structext_core.ui import light_choice, light_html, light_panel, light_section


def pick_study(studies: list[study.Study], key: str, label: str = "Study") -> study.Study:
    """A chooser of ``studies`` (name, suite, size, annotators, status); its choice is kept under ``key``
    (the study, found again by its id once the list is read anew)."""
    return light_choice.choose(label, studies, key=key, format_func=lambda s: s.label, ident=lambda s: str(s.id))


def axes_picker(label: str, presets: dict[str, list[str]], fields: list[str], key: str,
                default: str | None = None) -> list[str]:
    """The columns a breakdown groups by: one of ``presets`` (label -> columns) or one of ``fields``
    alone, on a button group; or any two of the presets' columns and ``fields`` together, chosen in
    "Two fields together" (which takes precedence while two are chosen)."""
    choices = [*presets, *(f for f in fields if f not in presets)]
    chosen = st.segmented_control(label, choices, default=default or choices[0], key=key) or default or choices[0]
    columns = list(dict.fromkeys([c for cols in presets.values() for c in cols if c != "annotator"] + list(fields)))
    pair = st.multiselect("Two fields together", columns, max_selections=2, key=f"{key}_pair",
                          placeholder="Choose two fields")
    if len(pair) == 2:
        return pair
    return list(presets.get(chosen, [chosen]))


def lazy_section(label: str, key: str, icon: str | None = None, where=st, name: str = ""):
    """An expander whose content is drawn only while it is open (opening it reruns the page), so a
    page's first view sends the browser none of it: the expander to draw into, or None while it is
    closed. ``label`` says what is inside (with its count); a label that changes is a new expander,
    which starts closed. On a page that draws light elements (``light_html.page_draws_light``), a closed
    one's header is a light element (:mod:`light_section`), which shows ``label`` as text: there, a label
    holds no Markdown. ``name``, what the label starts with (a suite's file name), is drawn in bold, closed
    and open (as the text it is, in the expander's Markdown). Every box of this kind is drawn here but where
    this does not fit: a box open by default (Studies' questionnaire box)."""
    if name and not label.startswith(name):
        raise ValueError(f"the name {name!r} is not the start of the label {label!r}")
    if light_html.here() and not st.session_state.get(key):
        if key in st.session_state:  # the expander's last state, which Streamlit would hand back to a later run
            del st.session_state[key]
        light_section.section(label, key=key, icon=icon, where=where, bold=name)
        return None
    shown = f"**{markdown_literal(name)}**{label[len(name):]}" if name else label
    box = where.expander(shown, key=key, icon=icon, on_change="rerun")
    return box if box.open else None


def new_form_section(label: str, key: str, draw: Callable[[], None], *, first: bool, first_line: str) -> None:
    """Where a lead page's form for a new campaign or study goes. With nothing created yet (``first``) the
    form is the page: drawn at once under ``first_line``, and the page stops there (an open box holding it
    and a note pointing at it were all the page had, issue 46). Else it waits in a closed box (``label``,
    open state under ``key``): a :func:`lazy_section`, drawn only while open."""
    if first:
        st.caption(first_line)
        draw()
        st.stop()
    box = lazy_section(label, key=key)
    if box is not None:
        with box:
            draw()


class _Markup:
    """HTML made by our own builders (``safe_text``: escaped, no space around it), handed to ``st.html``
    as an object with ``_repr_html_``, which it sends as it is: a plain string it first dedents and
    strips (``textwrap.dedent`` runs two regular expressions over every character: 3 to 4 ms of the
    server's time on each run of a question with Test-Hard's longest reference; issue 46) and looks up
    as a file name."""

    __slots__ = ("markup",)

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup


def caption(text: str) -> None:
    """A caption (our captions' Markdown: ``light_panel.runs``): a part of the panel being drawn
    (:mod:`light_panel`), else ``st.caption``."""
    light_panel.note(text)


def info(text: str, icon: str | None = None) -> None:
    """An info box, as :func:`caption` draws a caption (``st.info`` outside a panel)."""
    light_panel.note(text, "info", icon)


def warning(text: str, icon: str | None = None) -> None:
    """A warning box, as :func:`caption` draws a caption (``st.warning`` outside a panel)."""
    light_panel.note(text, "warning", icon)


def subheader(text: str) -> None:
    """A section's heading, as :func:`caption` draws a caption (``st.subheader`` outside a panel)."""
    light_panel.note(text, "subheader")


def html_block(markup: str, where=st, *, light: bool | None = None) -> None:
    """``markup`` from one of ``safe_text``'s builders, drawn with ``st.html`` as it is: every page's
    way to draw a built HTML block (``st.html`` itself only for a constant style sheet). On a page that
    draws light elements (``light_html.page_draws_light``), or with ``light`` (a page whose every block asks
    for it: the question page's), one of them, unless it holds a link to anywhere but one of the app's pages
    (a light block keeps only those: ``light_html.keeps_links``). A person's text never reads as ``<a`` here:
    the builders escape it."""
    if (light_html.here() if light is None else light) and light_html.keeps_links(markup):
        light_html.draw(markup, where)
    else:
        where.html(_Markup(markup))


def text_block(text: str, *, line_numbers: bool = False, wrap: bool = True, max_height: int | None = None,
               where=st, light: bool | None = None) -> None:
    """``text`` shown exactly as it is, monospace, in a frame (``safe_text.preformatted_html``): what
    ``st.code`` shows without a copy button or syntax colours, and without making the browser load
    Streamlit's code highlighter (1.5 MB, about half a second of a page's first view)."""
    html_block(preformatted_html(text, line_numbers=line_numbers, wrap=wrap, max_height=max_height), where,
               light=light)


def figures(row, columns: int | None = None, where=st) -> None:
    """A row of figures, each ``(label, value)`` or ``(label, value, definition)``, as a row of ``st.metric``
    shows them, in one HTML block (``safe_text.figures_html``): the page's one way to show figures, without
    the browser loading st.metric's own file and drawing each figure as an element (issue 46)."""
    html_block(figures_html(row, columns), where)


def progress(fraction: float, text: str, where=st, light: bool | None = None) -> None:
    """A progress bar with its text, as ``st.progress`` draws it, in one HTML block
    (``safe_text.progress_html``): without the browser loading st.progress's own file (issue 46)."""
    html_block(progress_html(text, fraction), where, light=light)
