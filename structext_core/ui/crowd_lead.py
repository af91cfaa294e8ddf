"""The lead's *Crowd* section of a study on the Studies page: the platform's codes and addresses, the
time budget, the time-out and the bonus rule; the consent text and the questionnaire; the payment export.

UI only: every value is checked and kept by :mod:`structext_core.studio.crowd` (settings, consent,
questionnaire, payments); an error is shown where it happened and nothing is written.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from structext_core import ui
from structext_core.studio import access, study
from structext_core.studio.crowd import consent, payments, questionnaire, settings
from structext_core.text.safe_text import frame_csv, markdown_text
from structext_core.text.words import plural
from structext_core.ui import study_dashboard, study_links


def crowd_section(chosen: study.Study) -> None:
    """The whole section for the chosen study."""
    user = ui.current_user()
    study_links.link_section(ui.get_db(), user, chosen.id)
    st.divider()
    settings_form(chosen, user)
    st.divider()
    consent_editor(chosen, user)
    st.divider()
    questionnaire_editor(chosen, user)
    st.divider()
    payments_block(chosen)


# ---------------------------------------------------------------- codes, addresses, budget, bonus

_CODES = (("completion", "Completed"), ("screenout", "Screened out"), ("no_consent", "Did not consent"))


def settings_form(chosen: study.Study, user: dict) -> None:
    st.subheader("Codes, addresses, time and bonus")
    now = settings.crowd_settings(ui.get_db(), chosen.id)
    with st.form(f"crowd_settings_{chosen.id}"):
        st.caption("What the platform gave you for each way a visit ends: a code the person copies, and the "
                   "address the page sends them back to (used exactly as written; nothing is added). Leave "
                   "both empty and people are told they are done and can close the tab.")
        given = {}
        for prefix, label in _CODES:
            left, right = st.columns([1, 2])
            given[f"{prefix}_code"] = left.text_input(f"{label}: code", value=getattr(now, f"{prefix}_code") or "",
                                                      max_chars=settings.MAX_CODE_CHARS)
            given[f"{prefix}_url"] = right.text_input(f"{label}: address", value=getattr(now, f"{prefix}_url") or "",
                                                      max_chars=settings.MAX_URL_CHARS,
                                                      placeholder="https://app.prolific.com/submissions/complete?cc=…")
        budget = now.time_budget_seconds
        minutes = st.number_input("Time budget per person (minutes of active time; empty: none)", min_value=0.0,
                                  value=None if budget is None else round(budget / 60, 2), step=5.0,
                                  help="Counted on the honest clock, practice included. When it is used up the "
                                       "person sees \"time is up\" and the completion code.")
        timeout = now.timeout_seconds
        timeout_minutes = st.number_input(
            "Time-out for people from a study link (minutes after they arrive; empty: none)", min_value=0.0,
            value=None if timeout is None else round(timeout / 60, 2), step=5.0,
            help="The platform's maximum time allowed: a person who has not finished this long after opening "
                 "the link is timed out (wall time, as the platform counts it), and their place goes to the "
                 "next person who opens the link. What they answered is kept.")
        left, middle, right = st.columns(3)
        per_correct = left.number_input("Bonus per correct answer", min_value=0.0, value=float(now.bonus_per_correct),
                                        step=0.05, format="%.2f")
        cap = middle.number_input("Bonus cap (empty: none)", min_value=0.0, value=now.bonus_cap, step=0.5,
                                  format="%.2f")
        currency = right.selectbox("Currency", settings.CURRENCIES, index=settings.CURRENCIES.index(now.currency))
        sent = st.form_submit_button("Save the settings")
    if not sent:
        return
    given.update(time_budget_seconds=None if not minutes else minutes * 60,
                 timeout_seconds=None if not timeout_minutes else timeout_minutes * 60, bonus_per_correct=per_correct,
                 bonus_cap=cap, currency=currency)
    try:
        settings.save_settings(ui.get_db(), chosen.id, user["id"] if user else None, **given)
    except (settings.CrowdSettingsError, access.AccessError) as error:
        st.error(f"Nothing was saved. {markdown_text(str(error))}")
        return
    st.success("The crowd settings are saved.")


# ---------------------------------------------------------------- consent


def consent_editor(chosen: study.Study, user: dict) -> None:
    st.subheader("Consent")
    db = ui.get_db()
    current = consent.current_consent(db, chosen.id)
    if current is None:
        st.caption("No consent text: people start with the study's rule. Write one (Markdown) and everyone who "
                   "has not started answering accepts it first.")
    else:
        st.caption(f"Version {current.version} is in force. Saving a changed text makes a new version: people who "
                   "have not started answering are asked to accept it; people already answering keep the version "
                   "they accepted.")
    with st.form(f"crowd_consent_{chosen.id}"):
        text = st.text_area("Consent text (Markdown)", value=current.text if current else "", height=240,
                            max_chars=consent.MAX_CONSENT_CHARS,
                            help="Headings, lists and emphasis show as written; HTML and images show as text.")
        sent = st.form_submit_button("Save the consent text")
    if current is not None:
        with st.expander("What people see"):
            st.markdown(markdown_text(current.text))
    if not sent:
        return
    try:
        version = consent.set_consent(db, chosen.id, text, by=user["id"] if user else None)
    except (study.StudyError, access.AccessError) as error:
        st.error(f"The consent text was not saved. {error}")
        return
    if current is not None and version == current.version:
        st.info(f"The text is unchanged: version {version} stays in force.")
    else:
        ui.flash("success", f"Consent text version {version} is in force.")
        st.rerun()


# ---------------------------------------------------------------- questionnaire


def _field_row(field: dict) -> dict:
    if field["kind"] == "choice":
        detail = " / ".join(field["options"])
    elif field["kind"] == "number":
        low, high = field.get("min"), field.get("max")
        detail = ("any number" if low is None and high is None else
                  f"{'' if low is None else questionnaire.number_text(low)} to "
                  f"{'' if high is None else questionnaire.number_text(high)}".strip())
    else:
        detail = f"up to {questionnaire.MAX_TEXT_CHARS} characters"
    return {"name": field["name"], "question": field["label"], "kind": questionnaire.KIND_LABELS[field["kind"]],
            "answers": detail, "required": bool(field.get("required", True))}


def questionnaire_editor(chosen: study.Study, user: dict) -> None:
    st.subheader("Questionnaire")
    db = ui.get_db()
    fields = questionnaire.questionnaire(db, chosen.id)
    st.caption(f"A few questions people answer after consent and before the rule (at most "
               f"{questionnaire.MAX_FIELDS}): who they are, e.g. field of study, years of experience, self-rated "
               "expertise. A change is for people who have not answered yet; answers given are kept.")
    if fields:
        st.dataframe(pd.DataFrame([_field_row(field) for field in fields]), hide_index=True)
    else:
        st.caption("No questionnaire yet.")
    # A new form after each question added (its inputs empty); after an error the inputs stay as typed.
    added_count = st.session_state.setdefault(f"crowd_fields_added_{chosen.id}", 0)
    with st.form(f"crowd_field_{chosen.id}_{added_count}"):
        st.markdown("**Add a question**")
        left, right = st.columns([1, 2])
        name = left.text_input("Name (the column in exports)", placeholder="years_experience", max_chars=40)
        label = right.text_input("Question", placeholder="How many years have you worked in this field?",
                                 max_chars=questionnaire.MAX_LABEL_CHARS)
        kind = st.selectbox("Kind of answer", questionnaire.KINDS, format_func=questionnaire.KIND_LABELS.get)
        options = st.text_area("Options (a choice: one a line)", height=100)
        low_col, high_col, required_col = st.columns(3, vertical_alignment="bottom")
        low = low_col.text_input("Smallest (a number)")
        high = high_col.text_input("Largest (a number)")
        required = required_col.checkbox("Required", value=True)
        added = st.form_submit_button("Add the question")
    if added:
        try:
            field = questionnaire.make_field(name, label, kind, options=options, minimum=low, maximum=high,
                                             required=required)
            questionnaire.add_field(db, chosen.id, field, by=user["id"] if user else None)
        except (study.StudyError, access.AccessError) as error:
            st.error(f"The question was not added. {markdown_text(str(error))}")
        else:
            st.session_state[f"crowd_fields_added_{chosen.id}"] = added_count + 1
            ui.flash("success", f"Question {field['name']} added.")
            st.rerun()
    if fields:
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        gone = left.selectbox("Question to remove", [field["name"] for field in fields], index=None,
                              key=f"crowd_remove_field_{chosen.id}", placeholder="Choose a question")
        if right.button("Remove", disabled=gone is None, key=f"crowd_remove_{chosen.id}"):
            try:
                questionnaire.remove_field(db, chosen.id, gone, by=user["id"] if user else None)
            except (study.StudyError, access.AccessError) as error:
                st.error(f"Nothing was removed. {markdown_text(str(error))}")
                return
            ui.flash("success", f"Question {gone} removed; answers already given to it are kept.")
            st.rerun()


# ---------------------------------------------------------------- payments


def payments_block(chosen: study.Study) -> None:
    st.subheader("Payments")
    db = ui.get_db()
    rows = payments.payment_rows(db, chosen.id)  # not cached: the minutes of people answering now grow
    if rows.empty:
        st.caption("Nobody takes part yet.")
        return
    owed = rows[rows["bonus"] > 0]
    st.caption(f"One row per person: the id they came with (else their user name), where they stand, active "
               f"minutes on the clock, counted answers (each once; gold and practice apart) and the bonus by your "
               f"rule. {plural(len(owed), 'person')} {'is' if len(owed) == 1 else 'are'} owed a bonus. No answer "
               "and no key is in these files.")
    box = study_dashboard.lazy(f"Each person's minutes, answers and bonus ({len(rows):,})", key="crowd_open_payments")
    if box is not None:
        box.dataframe(rows, hide_index=True, column_config={
            "external_id": "external id", "active_minutes": st.column_config.NumberColumn("active minutes", format="%.1f"),
            "accuracy_pct": st.column_config.NumberColumn("accuracy (%)", format="%.1f"),
            "bonus": st.column_config.NumberColumn("bonus", format="%.2f"),
        })
    study_id, stem = chosen.id, chosen.name
    row = st.container(horizontal=True)  # the two files side by side, as every page's downloads
    row.download_button("Payments (CSV)", ui.built_on_click(lambda db: frame_csv(payments.payment_rows(db, study_id))),
                        file_name=f"{stem}-payments.csv", mime="text/csv", on_click="ignore")
    row.download_button("Bonus lines (id,amount)", ui.built_on_click(lambda db: payments.bonus_lines(db, study_id)),
                        file_name=f"{stem}-bonuses.txt", mime="text/plain", on_click="ignore",
                        help="One line per person with an external id and a bonus: paste them into the "
                             "platform's bulk bonus form.")
