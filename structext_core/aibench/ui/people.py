"""AIBench's human side on the Results page (Streamlit glue; every number comes from
``structext_core.aibench.people``, ``structext_core.aibench.human_solver`` and
``structext_core.aibench.pairwise.results``).

Who sees what (``structext_core.studio.access``): researchers and admins (``aibench_people``)
see people as one more solver beside the VLM solvers on the same (image, question) pairs, the
agreement of each solver with the people's majority, and each pairwise study's human rank; admins
(``aibench_people_answers``) also see each person's accuracy, the letters people chose per
question, where people and a solver part on the original figure, and send such a question back
to expert review. Visitors and annotators see none of it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from structext_core import settings, ui
from structext_core.aibench import human_solver
from structext_core.aibench import pairwise as pws
from structext_core.aibench import people as aibench_people
from structext_core.aibench import question_review as qr
from structext_core.aibench import store as aibench_store
from structext_core.aibench import views as views
from structext_core.aibench.model import LETTERS, ORIGINAL_SYSTEM
from structext_core.aibench.ui import widgets as aibench_widgets
from structext_core.studio import access, data_scope, storage
from structext_core.studio.crowd import profiles
from structext_core.text import safe_text
from structext_core.text.words import plural
from structext_core.ui import light_choice, people_axes, widgets
from structext_core.views import cells

NEXT_CAMPAIGN = 0  # the campaign choice "the next review campaign of this data set"


@st.cache_resource(max_entries=8, show_spinner="Ranking the systems from the votes…")
def _pairwise(db_path: str, study_id: int, version: tuple[int, int]) -> pws.Results:
    """One pairwise study's results (the bootstrap is the slow part: cached per set of votes)."""
    with storage.opened(db_path) as db:
        return pws.results(db, study_id)


def people_section(db, user, name: str, data, rows: pd.DataFrame | None) -> None:
    """The "People" section of the AIBench view, for the data set ``name``."""
    role = access.role_of(user)
    if not access.can(role, "aibench_people"):
        return
    widgets.subheader("AIBench's human side")
    if not light_choice.check("Show people beside the solvers and the pairwise human rank", key="rs_aib_people",
                              toggle=True):
        widgets.caption("People answering from the image alone (image studies), the questions where they and a solver "
                   "part on the original figure, and the human rank from blind pairwise votes.")
        return
    rows = rows if rows is not None else pd.DataFrame(columns=list(views.AXES))
    people = aibench_people.people_answers(db, data, name, data_scope.results_studies(db, user))
    people_beside_solvers(people, rows, data)
    if access.can(role, "aibench_people_answers") and not people.empty:
        lead_view(db, user, name, data, people, rows)
    pairwise_rank(db, name)


def _level_name(level: str) -> str:
    return "all" if level == "all" else views.level_label(level)


def _numbers(*columns: str) -> dict:
    return {c: st.column_config.NumberColumn(c, format="%.1f") for c in columns}


def people_beside_solvers(people: pd.DataFrame, rows: pd.DataFrame, data) -> None:
    st.markdown("#### People beside the solvers")
    if people.empty:
        widgets.info("No counted answers of people on this data set yet (or none you may see): an AIBench image study "
                "over it shows here once people answer.")
        return
    widgets.caption(f"{plural(len(people), 'counted answer')} by {plural(people['annotator'].nunique(), 'person')} on "
               f"{plural(len(people[human_solver.PAIR].drop_duplicates()), '(image, question) pair')}. Each solver is scored "
               "on the same pairs only. People: pooled over their answers (n answers; the interval treats answers "
               "as independent, so several people on one pair make it a little narrow); solvers: n pairs. Final "
               "scores: a lead's override counts where there is one.")
    split_by = people_axes.split_people_by(profiles.axes_of_named(ui.get_db(), people["study"].unique()),
                                           "rs_aib_people_split")
    split = (split_by, *profiles.split_column(ui.get_db(), people, split_by)) if split_by else None
    table = human_solver.accuracy_beside_solvers(people, rows, split)
    table["level"] = table["level"].map(_level_name)
    st.dataframe(table, hide_index=True, key="rs_aib_people_accuracy",
                 column_config=_numbers("accuracy", "low", "high"))
    beside = aibench_people.beside_rows(people, rows, data)
    choice = st.radio("Heatmap", ["solver x level", "solver x system"], horizontal=True, key="rs_aib_people_map")
    column = "level" if choice == "solver x level" else "system"
    aibench_widgets.heatmap(views.heatmap(beside, "solver", column), "solver", column,
                            f"aibench_people_solver_x_{column}")
    if column == "system":
        widgets.caption("A cell is the mean of the four level accuracies; blank where people answered no question of "
                   "some level on that system's images.")
    questions = human_solver.question_table(people, rows, aibench_people.answer_keys(data))
    agreement = human_solver.agreement_with_solvers(questions)
    if not agreement.empty:
        agreement["level"] = agreement["level"].map(_level_name)
        widgets.caption("How often each solver chose the people's majority letter (over the pairs where more than half "
                   "of the people chose one letter), with a Wilson 95% interval.")
        st.dataframe(agreement, hide_index=True, key="rs_aib_people_agreement",
                     column_config=_numbers("agreement", "low", "high"))


def on_send_back(name: str, paper_id: str, question_id: str, evidence: dict) -> None:
    state = st.session_state
    campaign = state.get("rs_aib_sb_campaign") or None
    try:
        qr.send_back(ui.get_db(), ui.current_user(), name, paper_id, question_id, state.get("rs_aib_sb_reason", ""),
                     evidence, campaign_id=campaign)
    except qr.ReviewError as error:
        ui.flash("error", f"Not sent back: {error}")
        return
    state["rs_aib_sb_reason"] = ""
    where = "the next review campaign of this data set" if campaign is None else "the chosen review campaign"
    ui.flash("success", f"Question {question_id} of paper {paper_id} sent back to expert review ({where}).")


def lead_view(db, user, name: str, data, people: pd.DataFrame, rows: pd.DataFrame) -> None:
    """Admins: each person's accuracy, and the questions where people and a solver part on the
    original figure, with the send-back action."""
    st.markdown("#### Per person (admins)")
    st.dataframe(aibench_people.per_person(people), hide_index=True, key="rs_aib_people_persons",
                 column_config=_numbers("accuracy", "low", "high"))
    st.markdown("#### Where people and a solver part on the original figure (admins)")
    questions = human_solver.question_table(people, rows, aibench_people.answer_keys(data))
    found = human_solver.disagreements_on_original(questions)
    if found.empty:
        widgets.caption(f"No question on the paper's own figure ({ORIGINAL_SYSTEM}) where people and a solver part, or "
                   "people miss the key.")
        return
    in_review = {(r["paper_id"], r["question_id"]): r["where"] for r in qr.sendbacks(db, dataset=name)}
    shown = found[["paper_id", "question_id", "level", "key", "people", "letters", "majority", "solver",
                   "solver_letter", "why"]].copy()
    shown["in review"] = [in_review.get((p, q), "") for p, q in zip(found["paper_id"], found["question_id"])]
    widgets.caption("Ranked: people and the solver agreeing on another letter than the key first (the key is likely "
               "wrong), then people missing the key, then a solver alone against agreeing people, then split "
               "people; within each, the people's consensus first.")
    st.dataframe(shown, hide_index=True, key="rs_aib_people_disagreements")
    pick = st.selectbox("Question to send back to expert review", range(len(found)), key="rs_aib_sb_pick",
                        format_func=lambda i: f"{found.at[i, 'paper_id']} {found.at[i, 'question_id']} "
                                              f"({found.at[i, 'solver']}: {found.at[i, 'category'].replace('_', ' ')})")
    row = found.iloc[pick]
    question = next(q for q in data.papers[row["paper_id"]].questions if q.id == row["question_id"])
    left, right = st.columns([2, 3])
    image = data.images.get((ORIGINAL_SYSTEM, row["paper_id"]))
    if image is not None:
        left.image(str(aibench_store.dataset_path(name) / image.path), width="stretch",
                   caption=f"{row['paper_id']}, the original figure")
    right.markdown(f"**{safe_text.markdown_text(question.question)}**  \n" + "  \n".join(
        f"{LETTERS[k]}. {safe_text.markdown_text(o)}{' (key)' if LETTERS[k] == question.answer else ''}"
        for k, o in enumerate(question.options)))
    evidence = aibench_people.evidence_of(row)
    right.caption(safe_text.markdown_text(qr.describe_evidence(evidence)))
    campaigns = {NEXT_CAMPAIGN: "the next review campaign of this data set"}
    campaigns.update({c["id"]: f"campaign {c['name']}" for c in qr.open_campaigns(db, name)})
    right.selectbox("Review in", list(campaigns), format_func=campaigns.get, key="rs_aib_sb_campaign")
    right.text_input("Reason (the reviewer reads it beside the question)", key="rs_aib_sb_reason",
                     max_chars=qr.MAX_REASON_CHARS, placeholder=str(row["why"]))
    right.button("Send back to review", key="rs_aib_sb_go", type="primary", on_click=on_send_back,
                 args=(name, str(row["paper_id"]), str(row["question_id"]), evidence))


def pairwise_rank(db, name: str) -> None:
    """Each pairwise study of the data set: the human rank with its uncertainty (no votes, no names)."""
    st.markdown("#### The human rank (blind pairwise comparison)")
    studies = [s for s in aibench_people.pairwise_studies(db, name) if s["votes"]]
    if not studies:
        widgets.info("No pairwise study over this data set has counted votes yet.")
        return
    labels = {s["id"]: f"{s['name']} ({s['status']}, {plural(s['votes'], 'counted vote')})" for s in studies}
    if st.session_state.get("rs_aib_pw_study") not in labels:
        st.session_state["rs_aib_pw_study"] = studies[-1]["id"]
    study_id = st.selectbox("Pairwise study", list(labels), format_func=labels.get, key="rs_aib_pw_study")
    res = _pairwise(str(settings.db_path()), study_id, aibench_people.pairwise_version(db, study_id))
    rank_block(res, "rs_aib_pw")


def rank_block(res: pws.Results, prefix: str, headings: bool = False) -> None:
    """A pairwise study's human rank and everything measured about it, as Results and the lead's
    page both show it (one wording: a figure the votes cannot give is ``—`` with the reason);
    ``headings``: a subheader over each part (the lead's page, where the rank is the whole tab)."""
    if headings:
        widgets.subheader("Human rank: Bradley-Terry strengths")
    widgets.caption(f"{plural(res.votes, 'counted vote')} (each person's first on a pair) by "
               f"{plural(res.annotators, 'person')}. Bradley-Terry "
               "strengths (log, mean 0) fitted by Hunter's MM; ties count half a win to each side; *both bad* is "
               f"left out and shown apart. 95% intervals: {res.ranking.n_boot} bootstrap resamples of the votes "
               f"(seed {res.ranking.seed}).")
    st.dataframe(views.human_rank_headline(res.ranking.table), hide_index=True, key=f"{prefix}_rank",
                 column_config={"strength": st.column_config.NumberColumn("strength", format="%.3f"),
                                "win_rate": "win rate"})
    with st.expander("Wins, losses, ties and both bad per system"):
        st.dataframe(views.human_rank_detail(res.ranking.table), hide_index=True, key=f"{prefix}_rank_detail",
                     column_config={"both_bad_share": st.column_config.NumberColumn("both bad share", format="%.3f")})
    figures = views.rank_agreement_figures(res.agreement, res.kendall_w, res.consistency)
    widgets.figures([(figure["label"], figure["value"], figure["help"]) for figure in figures])
    missing = [f"{f['label']} ({f['help'].split(': ', 1)[-1]})" for f in figures if f["value"] == views.UNDEFINED]
    if missing:
        widgets.caption(f"{views.UNDEFINED}: not measured from these votes. " + "; ".join(missing) + ".")
    if headings:
        widgets.subheader("Fig. 6b rebuilt: each judge against the human rank")
    widgets.caption("Each judge against the human rank: Spearman's rho and Kendall's tau, their exact one-sided p, and "
               "a 95% bootstrap interval of rho that carries the human rank's own uncertainty (the paper's Fig. 6b "
               "values beside, where it printed one).")
    st.dataframe(views.judges_headline(res.fig6b), hide_index=True, key=f"{prefix}_corr",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                for c in ("spearman_rho", "kendall_tau", "p_rho_exact", "p_tau_exact")})
    if headings:
        widgets.subheader("Table 2 rebuilt: aesthetic metrics and the human rank")
        if res.table2.shape[1] <= 3:
            widgets.caption("This data set has no imported aesthetic metric.")
    if res.table2.shape[1] > 3 or headings:
        widgets.caption("The paper's Table 2 rebuilt: each aesthetic metric's mean per system beside the human rank.")
        st.dataframe(cells.without_missing(res.table2.round(3)), hide_index=True, key=f"{prefix}_table2")
