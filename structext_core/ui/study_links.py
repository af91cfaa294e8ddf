"""The lead's *Study link* section of the Studies page, and the way a link to the app's root reaches
the join page. UI only: every rule is :mod:`structext_core.studio.crowd.links`.

The link starts with the app's address as participants reach it: ``STRUCTEXT_PUBLIC_URL`` when set,
else the address in the lead's own browser (``st.context.url`` without the page's path).
"""

from __future__ import annotations

import datetime as dt

import sqlite_utils
import streamlit as st
from streamlit.navigation.page import StreamlitPage

from structext_core import settings, ui
from structext_core.studio import access
from structext_core.studio.crowd import links, outcomes
from structext_core.text.words import noun, plural

#: Used when neither the setting nor the browser gives an address (a test run): said on the page.
FALLBACK_URL = "http://localhost:8501"
STATE_WORDS = {"open": "open", "closed": "closed", "expired": "expired", "full": "full"}


def follow_link_at_root(page: StreamlitPage, pages: dict[str, list[StreamlitPage]]) -> None:
    """A study link opened at the app's root (``/?join=<token>&...``) goes to the join page, its parameters kept."""
    if page.url_path != "" or links.TOKEN_PARAM not in st.query_params:
        return
    join_path = access.page("join").url_path
    target = next((p for section in pages.values() for p in section if p.url_path == join_path), None)
    if target is not None:
        st.switch_page(target, query_params=st.query_params.to_dict())


def base_url() -> tuple[str, str | None]:
    """The address links start with, and a note for the lead when it is a guess."""
    try:
        configured = settings.public_url()
    except settings.SettingError as error:
        return FALLBACK_URL, f"{error}. Until it is fixed, links start with {FALLBACK_URL}."
    if configured:
        return configured, None
    seen = (st.context.url or "").rstrip("/")
    if not seen.startswith(("http://", "https://")):
        return FALLBACK_URL, (f"This server's address is unknown here: links start with {FALLBACK_URL}. Set "
                              f"{settings.PUBLIC_URL_ENV} to the address participants reach the app at.")
    return seen.removesuffix("/" + access.page("study_admin").url_path), None


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _on_close(link_id: int, user_id: int) -> None:
    try:
        links.close_link(ui.get_db(), link_id, by=user_id)
    except (links.LinkError, access.AccessError) as error:  # AccessError: not a lead of this study
        ui.flash("error", str(error))
    else:
        ui.flash("success", "The study link is closed: it takes nobody more. People already in keep their place.")


def _link_block(link: links.Link, url: str, user: dict, now: float) -> None:
    state = link.state(now)
    with st.container(border=True):
        expiry = "no expiry" if link.expires_at is None else (
            f"{'expired' if state == 'expired' else 'expires'} {_when(link.expires_at)}")
        who = f"participant id from {link.id_param}" if link.id_param else "no participant id"
        gone = (f" ({link.timed_out:,} more timed out: their {noun(link.timed_out, 'place')} reopened)"
                if link.timed_out else "")
        st.markdown(f"**{link.filled:,} of {plural(link.places, 'place')} filled**{gone} · {STATE_WORDS[state]} · "
                    f"{expiry} · {who}")
        st.code(links.link_url(url, link.token, link.id_param), language=None, wrap_lines=True)
        if link.id_param and link.id_param != links.PROLIFIC_ID_PARAM:
            st.caption(f"Your platform puts each person's id after `{link.id_param}=`: add its placeholder there.")
        if state != "closed":
            st.button("Close this link", key=f"sl_close_{link.id}", on_click=_on_close, args=(link.id, user["id"]),
                      help="It takes nobody more; the people already in keep their place and their resume codes.")


def _create_form(db: sqlite_utils.Database, study_id: int, user: dict) -> None:
    with st.form(f"sl_create_{study_id}", clear_on_submit=False):
        st.markdown("**Make a study link**")
        places_col, param_col = st.columns(2)
        places = places_col.number_input("Places", min_value=1, max_value=links.MAX_PLACES, value=100, step=1,
                                         key="sl_places", help="How many people the link takes; then it is full.")
        id_param = param_col.text_input(
            "Participant id parameter", value=links.PROLIFIC_ID_PARAM, max_chars=40, key="sl_id_param",
            help="The name of the link's parameter that carries each person's id on the platform (Prolific: "
                 "PROLIFIC_PID; STUDY_ID and SESSION_ID are kept too). Empty: no id; each browser is a person.")
        day_col, time_col = st.columns(2)
        day = day_col.date_input("Expires on (UTC; empty: never)", value=None, key="sl_expiry_day")
        hour = time_col.time_input("at (UTC)", value=dt.time(23, 59), key="sl_expiry_time")
        submitted = st.form_submit_button("Make the link", type="primary")
    if not submitted:
        return
    expires_at = None if day is None else dt.datetime.combine(day, hour, tzinfo=dt.UTC).timestamp()
    try:
        made = links.create_link(db, study_id, places=int(places), expires_at=expires_at,
                                 id_param=(id_param or "").strip() or None, by=user["id"])
    except (links.LinkError, access.AccessError) as error:  # AccessError: not a lead of this study
        st.error(f"No link was made: {error}")
        return
    ui.flash("success", f"A study link for {plural(made.places, 'place')} is made: copy it below.")
    st.rerun()


def link_section(db: sqlite_utils.Database, user: dict, study_id: int) -> None:
    """The selected study's links (each with its address to copy, places filled, a close button) and a form for a new one."""
    with st.expander("Study link", icon=":material/link:"):
        st.caption("People who open a study link get an account in this study, with no password: their browser is "
                   "remembered, and a resume code is shown once for another device. The same participant id "
                   "twice gets no second account.")
        url, note = base_url()
        if note:
            st.warning(note)
        now = dt.datetime.now(dt.UTC).timestamp()
        outcomes.time_out_overdue(db, study_id, now)  # before the places are counted
        for link in links.links_of(db, study_id):
            _link_block(link, url, user, now)
        _create_form(db, study_id, user)
