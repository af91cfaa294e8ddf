"""The lab's own benchmark's section of Results (Streamlit glue only): people's accuracy by format and stratum."""

from __future__ import annotations


def results_view(db, user) -> None:
    import streamlit as st

    from structext_core.labset.member import NAME
    from structext_core.studio import study
    st.subheader("The lab's own: people's accuracy by format and stratum")
    shown = False
    for each in study.list_studies(db):
        if each.benchmark == NAME:
            frame = study.responses_frame(db, each.id)
            if len(frame):
                st.caption(f"Study {each.name}")
                st.dataframe(study.accuracy_by(frame, ["format", "stratum"], n_boot=200), key=f"labset_{each.id}")
                shown = True
    if not shown:
        st.info("No study of a lab's set has answers yet.")
