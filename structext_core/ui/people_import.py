"""*Import people from CSV* and *New set-password link* (issue 45, item 6): the Accounts page's
sections, callable from a lead's page too with the lead's limits. UI only: every rule is in
:mod:`structext_core.studio.accounts.bulk` and :mod:`~structext_core.studio.accounts.password_links`.

The section reads a CSV (an uploaded file or pasted text), previews what would happen (each
problem with its line and column, or the accounts to be made), and imports on a button. The links
are then shown once (name, role, studies, link) with a ``name,link`` CSV to download and hand out:
the workbench sends no email. A link is the app's address (``STRUCTEXT_PUBLIC_URL``, else this page's
own, ``st.context.url``) with ``?set_password=<token>``.
"""

from __future__ import annotations

import csv
import io

import pandas as pd
import streamlit as st

from structext_core import settings, ui
from structext_core.studio.accounts import AccountError, bulk, password_links
from structext_core.text.words import plural

#: Session key of the links of the last import (shown until "Done").
DONE_KEY = "pi_created"
#: Session key of a counter in the input widgets' keys: raised after an import, it empties them.
ROUND_KEY = "pi_round"
LINK_KEY = "pi_new_link"


def app_address(page_slug: str) -> str:
    """The app's address as people reach it: ``STRUCTEXT_PUBLIC_URL`` when set, else this page's own
    address (``st.context.url``) without the page's path; a warning says when it is a guess."""
    try:
        configured = settings.public_url()
    except settings.SettingError as error:
        st.warning(f"{error}. Until it is fixed, links start with this browser's address.")
        configured = ""
    if configured:
        return configured + "/"
    seen = st.context.url or ""
    if not seen.startswith(("http://", "https://")):
        st.warning(f"This server's address is unknown here: the links are only paths. Set "
                   f"{settings.PUBLIC_URL_ENV} to the address people reach the app at.")
    return password_links.app_root(seen, page_slug)


def _links_csv(rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["name", "link"])
    for row in rows:
        writer.writerow([row["name"], row["link"]])
    return out.getvalue().encode("utf-8")


def _input(round_: int) -> bytes | str | None:
    """The CSV given: the uploaded file (its size checked before it is read), else the pasted text."""
    uploaded = st.file_uploader("CSV file", type=["csv", "txt"], key=f"pi_file_{round_}",
                                help="Columns: name, role (annotator, researcher, lead, admin; empty: annotator), "
                                     "studies (study names separated by ';', optional).")
    pasted = st.text_area("Or paste the CSV here", key=f"pi_text_{round_}", height=140,
                          placeholder="name,role,studies\nada,annotator,Pilot study\nbob,annotator,Pilot study;Main study",
                          max_chars=bulk.MAX_CSV_BYTES)
    if uploaded is not None:
        if uploaded.size > bulk.MAX_CSV_BYTES:
            st.error(f"{uploaded.name} is larger than {bulk.MAX_CSV_BYTES:,} bytes: split it into smaller files. "
                     "Nothing was imported.")
            return None
        return uploaded.getvalue()
    return pasted if pasted.strip() else None


def _problems(report: bulk.ImportReport, limit: int = 50) -> str:
    lines = report.problem_lines()
    shown = "\n".join(f"- {ui_text(line)}" for line in lines[:limit])
    more = f"\n- ... and {len(lines) - limit:,} more" if len(lines) > limit else ""
    return shown + more


def ui_text(text: str) -> str:
    """``text`` for st.markdown: what a file holds must not turn into emphasis or links."""
    return "".join("\\" + c if c in "\\`*_{}[]()#+-.!|<>~$" else c for c in text)


def import_section(db, user: dict, *, allowed_studies: set[int] | None = None,
                   allowed_roles=bulk.IMPORT_ROLES, page_slug: str = "accounts", heading: bool = True) -> None:
    """The *Import people from CSV* section for ``user`` (an admin: everything; a lead: the caller
    gives the studies they run and ``("annotator",)``); ``heading=False`` when the caller's box names it."""
    if heading:
        st.markdown("**Import people from CSV**")
    st.caption("One line per person under a header line `name,role,studies`; each new account gets a one-time "
               "link to choose a password. No email is sent by the workbench: you hand out the links.")
    created = st.session_state.get(DONE_KEY)
    if created:
        _show_links(created)
        return
    round_ = st.session_state.get(ROUND_KEY, 0)
    given = _input(round_)
    if given is None:
        return
    plan = bulk.plan_import(db, given, by=user, allowed_studies=allowed_studies, allowed_roles=allowed_roles)
    if not plan.ok:
        st.error(f"Nothing can be imported from this file: fix these lines and try again.\n\n{_problems(plan)}")
        return
    st.markdown(f"**Preview:** {plural(len(plan.people), 'account')} would be made, "
                "each with a set-password link.")
    st.dataframe(pd.DataFrame([{"line": p.line, "name": p.name, "role": p.role, "studies": "; ".join(p.studies)}
                               for p in plan.people]), hide_index=True)
    base = app_address(page_slug)  # before the button: a warning about it is seen before the import
    if not st.button(f"Import {plural(len(plan.people), 'person')}", type="primary", key=f"pi_import_{round_}"):
        return
    try:
        report = bulk.import_people(db, given, by=user, allowed_studies=allowed_studies, allowed_roles=allowed_roles)
    except AccountError as error:  # a bad link setting
        st.error(f"Nothing was imported. {error}")
        return
    if not report.ok:
        st.error(f"Nothing was imported: fix these lines and try again.\n\n{_problems(report)}")
        return
    st.session_state[DONE_KEY] = [{"name": c.name, "role": c.role, "studies": "; ".join(c.studies),
                                   "link": password_links.link_url(base, c.token)} for c in report.created]
    st.session_state[ROUND_KEY] = round_ + 1
    ui.flash("success", f"{plural(len(report.created), 'account')} made. "
                        "Hand each person their link: it is shown only now.")
    st.rerun()


def _show_links(created: list[dict]) -> None:
    st.warning("These links are shown only now: download them or copy them before you leave. "
               "No email is sent by the workbench.")
    st.dataframe(pd.DataFrame(created), hide_index=True,
                 column_config={"link": st.column_config.TextColumn("link", width="large")})
    st.download_button("Download name,link (CSV)", _links_csv(created), file_name="set-password-links.csv",
                       mime="text/csv", key="pi_download", on_click="ignore")
    if st.button("Done: hide the links", key="pi_done"):
        st.session_state.pop(DONE_KEY, None)
        st.rerun()


def new_link_block(db, user: dict, users: list[dict], *, page_slug: str = "accounts", heading: bool = True) -> None:
    """*New set-password link* for one account (a lost or expired link): its earlier links stop working;
    ``heading=False`` when the caller's box names it."""
    with st.form("pi_link_form"):
        if heading:
            st.markdown("**New set-password link**")
        by_id = {u["id"]: u for u in users}
        who = st.selectbox("Account for the link", list(by_id), key="pi_link_user", index=None, placeholder="Choose an account",
                           format_func=lambda i: by_id[i]["username"])
        submitted = st.form_submit_button("Make a link")
    if submitted:
        if who is None:
            st.error("Choose the account to make a link for.")
        else:
            try:
                token = password_links.new_password_link(db, who, by=user)
            except AccountError as error:
                st.error(f"No link was made. {error}")
            else:
                st.session_state[LINK_KEY] = (by_id[who]["username"], password_links.link_url(app_address(page_slug), token))
    shown = st.session_state.get(LINK_KEY)
    if shown:
        name, link = shown
        st.markdown(f"Link for **{ui_text(name)}** (works once; earlier links of the account no longer work; "
                    "hand it over yourself, no email is sent):")
        st.code(link, language=None)
