"""The lead's *Places and people* block of a study's dashboard (Studies page): how places fill (k
people per item, a cap per person, the hold time), the items' coverage and each person's status.

UI only: the figures come from :mod:`structext_core.studio.crowd.status` and
:mod:`structext_core.studio.crowd.dealing`, the settings are kept by
:func:`structext_core.studio.crowd.settings.save_settings`.
"""

from __future__ import annotations

import pandas as pd
import sqlite_utils
import streamlit as st

from structext_core import ui
from structext_core.studio.crowd import dealing, settings, status
from structext_core.studio.errors import StudyError
from structext_core.text.words import plural
from structext_core.ui import study_dashboard, widgets

#: Longest hold time the lead may set (a day), in minutes.
MAX_HOLD_MINUTES = 24 * 60


def fleiss_help(agreement: dict) -> str:
    """What the Fleiss' kappa figure was computed over, in the lead's words."""
    items = plural(agreement.get("fleiss_items", 0), "item")
    if agreement.get("fleiss_basis") == "same number":
        return (f"People answered different items: over the {items} with "
                f"{plural(agreement.get('fleiss_raters', 0), 'answer')} each (Fleiss' kappa needs the same "
                "number of answers per item, not the same people).")
    return f"Over the {items} every annotator answered."


def _settings_form(db: sqlite_utils.Database, study_id: int, by: int) -> None:
    found = settings.crowd_settings(db, study_id)
    n_counted = db.execute("SELECT n_items FROM studies WHERE id = ?", [study_id]).fetchone()[0]
    with st.form(f"sa_places_form_{study_id}", border=True):
        st.markdown("**How places fill**")
        left, middle, right = st.columns(3)
        per_item = left.number_input(
            "People per item (k)", min_value=0, max_value=100_000, step=1, value=found.per_item or 0,
            key=f"sa_places_k_{study_id}",
            help="0: everyone in the study answers every item (as without a crowd).")
        per_person = middle.number_input(
            "Questions per person", min_value=0, max_value=max(1, n_counted), step=1,
            value=min(found.per_person or 0, max(1, n_counted)), key=f"sa_places_per_person_{study_id}",
            help="The most counted questions one person is dealt (gold and practice come on top). 0: no cap.")
        hold = right.number_input(
            "Hold time (minutes)", min_value=0, max_value=MAX_HOLD_MINUTES, step=5,
            value=round((found.hold_seconds or 0) / 60), key=f"sa_places_hold_{study_id}",
            help="A dealt question whose person shows no sign of life (tab closed, paused) for this long goes "
                 "back to the pool. 0: held until answered.")
        widgets.caption("With k set, each person is dealt one counted question at a time: among the items with the "
                   "fewest answers, one they have not had. Setting k on a study with people in it deals again "
                   "the questions they were given but never shown.")
        if st.form_submit_button("Save places"):
            _save(db, study_id, by, int(per_item) or None, int(per_person) or None, int(hold) * 60 or None)


def _save(db: sqlite_utils.Database, study_id: int, by: int, per_item: int | None, per_person: int | None,
          hold_seconds: float | None) -> None:
    try:
        said = dealing.check_change(db, study_id, per_item)
        settings.save_settings(db, study_id, by, per_item=per_item, per_person=per_person, hold_seconds=hold_seconds)
    except (StudyError, settings.CrowdSettingsError) as error:
        st.error(str(error))
        return
    words = "everyone answers every item" if per_item is None else f"{plural(per_item, 'person', 'people')} per item"
    ui.flash("success", f"Places saved: {words}." + (f" {said}" if said else ""))
    st.rerun()


def _places_words(found) -> str:
    """The places' settings in a few words, for the label of the expander that changes them."""
    if found is None or not found.per_item:
        return "everyone answers every item"
    words = [plural(found.per_item, "person", "people") + " per item"]
    if found.per_person:
        words.append(f"at most {plural(found.per_person, 'question')} each")
    if found.hold_seconds:
        words.append(f"held {round(found.hold_seconds / 60):,} min")
    return ", ".join(words)


def _coverage_block(cover: pd.DataFrame) -> None:
    if cover.empty:
        widgets.caption("The study has no counted items.")
        return
    k = int(cover["k"].iloc[0])
    full = int((cover["answers"] >= k).sum())
    widgets.figures([
        (f"Items with {plural(k, 'answer')}", f"{full:,} of {len(cover):,}"),
        ("Answers", f"{int(cover['answers'].sum()):,} of {k * len(cover):,}",
         "Counted answers, each once (practice and gold apart), against k places per item."),
        ("Questions held now", f"{int(cover['held'].sum()):,}",
         "Dealt and shown, not answered yet, by someone still in the study."),
    ])
    box = study_dashboard.lazy("Answers per item: chart", key="sa_open_spread")
    if box is None:
        return
    spread = (cover["answers"].value_counts().rename_axis("answers").reset_index(name="items")
              .sort_values("answers"))
    spread["answers"] = spread["answers"].astype(str)
    box.bar_chart(spread, x="answers", y="items", x_label="answers per item", y_label="items", height=220)


def _people_block(people: pd.DataFrame) -> None:
    if people.empty:
        widgets.caption("Nobody takes part in the study yet.")
        return
    counts = people["status"].value_counts()
    widgets.caption(" · ".join(f"{name}: {int(counts[name]):,}" for name in status.STATUSES if name in counts))
    box = study_dashboard.lazy(f"Each person's status ({len(people):,})", key="sa_open_statuses")
    if box is None:
        return
    box.dataframe(people[["username", "status", "answers"]], hide_index=True, width="content",
                 column_config={"username": "person", "answers": st.column_config.NumberColumn(
                     "answers", help="Study questions answered (practice apart, gold in).")})


def release_stale(db: sqlite_utils.Database, study_id: int, by: int) -> list:
    """Questions held past the hold time go back to the pool (before the dashboard reads its figures)."""
    return dealing.release_stale(db, study_id, by=by)


def places_section(db: sqlite_utils.Database, study_id: int, by: int, version: tuple | None = None,
                   released: list | None = None) -> None:
    """The block: the questions held too long that went back to the pool (``released``: by
    :func:`release_stale`, else released here), then the coverage and the people; the settings
    and the detail of each item and person in lazy expanders. ``version``: the study's data
    version (:func:`study_dashboard.version`) its figures are cached by."""
    widgets.subheader("Places and people")
    if released is None:
        released = release_stale(db, study_id, by)
        version = None
    if released:
        widgets.info(f"{plural(len(released), 'question')} held past the hold time went back to the pool.")
    version = version or study_dashboard.version(db, study_id)
    found = dealing.places(db, study_id)
    box = study_dashboard.lazy(f"How places fill: {_places_words(found)}", key="sa_open_places")
    if box is not None:
        with box:
            _settings_form(db, study_id, by)
    cover = study_dashboard.coverage(db, study_id, version)
    if found is None:
        widgets.caption("Everyone answers every item: k is the number of people in the study.")
    _coverage_block(cover)
    _people_block(study_dashboard.statuses(db, study_id, version))
