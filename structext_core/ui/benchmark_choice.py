"""The choice of benchmark at the top of Explore and Results: one choice over the registry
(:mod:`structext_core.protocol`), opened on the benchmark a link names (``?benchmark=``), and the
member's own view when it has one (its ``EXPLORE_VIEW`` / ``RESULTS_VIEW``)."""

from __future__ import annotations

import streamlit as st

from structext_core import protocol
from structext_core.text import safe_text
from structext_core.ui import light_choice

#: The session key a member's Results view keeps the URL it wrote last under (so the choice can
#: tell a pasted link from the view's own).
RESULTS_URL_WRITTEN = "rs_member_url_written"


def url_now() -> dict[str, list[str]]:
    return {key: st.query_params.get_all(key) for key in st.query_params}


def explore_benchmark() -> str:
    """The benchmark Explore shows; a link's ``?benchmark=`` opens on one (Home's links do), read
    once per link."""
    wanted = st.query_params.get("benchmark")
    if wanted != st.session_state.get("explore_bench_url_read"):
        st.session_state["explore_bench_url_read"] = wanted
        if wanted in protocol.names():
            st.session_state["explore_benchmark"] = wanted
    return light_choice.choose("Benchmark", protocol.names(), key="explore_benchmark", buttons=True,
                               format_func=protocol.display_name)


def written_by_page(current: dict) -> bool:
    """The URL is the one this page wrote last (a view that keeps it under ``rs_url_written``, or one
    that names its benchmark in it, under :data:`RESULTS_URL_WRITTEN`), not a pasted link."""
    return current in (st.session_state.get("rs_url_written"), st.session_state.get(RESULTS_URL_WRITTEN))


def results_benchmark() -> str:
    """The benchmark whose results the page shows; a pasted link chooses it with ``benchmark=``
    (none: the first member)."""
    current, state, names = url_now(), st.session_state, protocol.names()
    if current and not written_by_page(current) and current != state.get("rs_bench_url_read"):
        state["rs_bench_url_read"] = current
        wanted = (current.get("benchmark") or [names[0]])[-1]
        if wanted in names:
            state["rs_benchmark"] = wanted
        else:
            st.caption(f"Ignored in this link: benchmark={safe_text.markdown_text(repr(wanted[:40]))} is not a "
                       "valid choice.")
    elif current and current == state.get(RESULTS_URL_WRITTEN) and state.get(
            "rs_benchmark", names[0]) not in current.get("benchmark", ()):
        st.query_params.clear()  # another benchmark's view wrote this URL: the one chosen now starts from its defaults
    return light_choice.choose("Benchmark", names, key="rs_benchmark", format_func=protocol.display_name)


def own_view(benchmark: str, attr: str, db, user) -> bool:
    """Show ``benchmark``'s own view (``attr``: ``RESULTS_VIEW`` or ``EXPLORE_VIEW``) when it has one;
    whether it did (the page then stops)."""
    shown = protocol.view(benchmark, attr)
    if shown is None:
        return False
    shown(db, user)
    return True
