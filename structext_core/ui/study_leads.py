"""The Studies page's part for who runs a study: the studies the person runs (a lead: those they lead),
the study's leads (an admin gives it more or takes one off), and the button that opens the preview as
an annotator. UI only: who may do what is decided by :mod:`structext_core.studio.study.leads`."""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from structext_core import ui
from structext_core.studio import access, accounts, study
from structext_core.text.safe_text import markdown_text
from structext_core.ui import people_import, study_dashboard, widgets
from structext_core.ui.question_screen import preview


def studies_of(db: sqlite_utils.Database, user: dict) -> list[study.Study]:
    """The studies ``user`` runs (every study for an admin), newest first."""
    return study.only_run(db, user, study.list_studies(db))


def none_yet(user: dict) -> str:
    """What the Studies page says when the person runs no study yet."""
    if access.role_of(user) == access.LEAD:
        return ("You lead no study yet: set one up under **Set up a study** (you then lead it), or ask an admin "
                "to make you a lead of one.")
    return "No study yet: create one under **Set up a study**."


def no_annotators(user: dict) -> str:
    """What the setup form says while there is no annotator account (a lead creates no account)."""
    if access.can_open(access.role_of(user), "accounts"):
        return ("There are no annotator accounts yet: create them on the **Accounts** page (Admin), or set up the "
                "study with nobody in it and make a study link on its **Crowd** tab.")
    return ("There are no annotator accounts yet: set up the study with nobody in it and make a study link on its "
            "**Crowd** tab, or ask an admin to create accounts on the **Accounts** page.")


def _on_add(study_id: int, user: dict) -> None:
    chosen = st.session_state.get(f"sl_add_{study_id}")
    if chosen is None:
        ui.flash("error", "Choose the lead to add.")
        return
    try:
        study.add_lead(ui.get_db(), study_id, chosen["id"], by=user)
    except (study.StudyError, access.AccessError) as error:
        ui.flash("error", f"Nobody was added. {error}")
        return
    ui.flash("success", f"{chosen['username']} now leads this study.")


def _on_remove(study_id: int, lead: study.Lead, user: dict) -> None:
    try:
        study.remove_lead(ui.get_db(), study_id, lead.user_id, by=user)
    except (study.StudyError, access.AccessError) as error:
        ui.flash("error", f"Nothing changed. {error}")
        return
    ui.flash("success", f"{lead.username} no longer leads this study.")


def leads_block(db: sqlite_utils.Database, user: dict, chosen: study.Study) -> None:
    """The study's leads, and the preview button. An admin adds and removes leads; a lead reads who they are."""
    preview.preview_button(user, chosen)
    current = study.leads_of(db, chosen.id)
    box = study_dashboard.lazy(f"Leads ({len(current):,})", key="sl_open_leads")
    if box is None:
        return
    with box:
        if current:
            for lead in current:
                row = st.container(horizontal=True, vertical_alignment="center")
                row.markdown(markdown_text(f"**{lead.username}**" + (f" · made a lead by {lead.added_by}"
                                                                     if lead.added_by else "")))
                if access.role_of(user) == access.ADMIN:
                    row.button("Take off", key=f"sl_remove_{chosen.id}_{lead.user_id}", on_click=_on_remove,
                               args=(chosen.id, lead, user))
        else:
            widgets.caption("No lead: admins run this study.")
        if access.role_of(user) != access.ADMIN:
            widgets.caption("Admins run every study; an admin gives a study more leads.")
            return
        taken = {lead.user_id for lead in current}
        free = [u for u in accounts.list_users(db, role=access.LEAD) if u["id"] not in taken]
        if not free:
            widgets.caption("Every lead account leads this study already, or there is none: create lead accounts "
                       "on **Accounts**.")
            return
        with st.form(f"sl_add_form_{chosen.id}", border=False):
            left, right = st.columns([3, 1], vertical_alignment="bottom")
            left.selectbox("Add a lead", free, index=None, key=f"sl_add_{chosen.id}",
                           format_func=lambda u: u["username"], placeholder="Choose a lead account")
            right.form_submit_button("Add", on_click=_on_add, args=(chosen.id, user))


def people_block(db: sqlite_utils.Database, user: dict) -> None:
    """A lead brings their people in from a CSV (annotators only, into the studies they lead), each with a
    one-time set-password link; an admin does it on Accounts (any role, any study)."""
    if access.role_of(user) != access.LEAD:
        return
    box = study_dashboard.lazy("Bring people in from a CSV", key="sl_open_people")
    if box is None:
        return
    with box:
        people_import.import_section(db, user, allowed_studies=set(study.studies_run_by(db, user) or ()),
                                     allowed_roles=("annotator",), page_slug=access.page("study_admin").url_path)


def export(user: dict, study_id: int, make):
    """A download's data (``make(db)``), made when clicked, for an admin or a lead of the study only (checked
    again then, by the core: a lead taken off the study since the page was drawn gets nothing)."""
    def build(db):
        study.check_runs(db, user, study_id, "export the study")
        return make(db)
    return ui.built_on_click(build)
