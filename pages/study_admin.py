"""Study admin: set up human-baseline studies, watch the dashboard, export (accounts: pages/accounts.py).

UI only: every figure comes from ``structext_core.studio.study``, every chart and table
from ``structext_core.views.dashboard``.
"""

import pandas as pd
import streamlit as st

from structext_core import protocol, ui
from structext_core.studio import access, accounts, study
from structext_core.studio.crowd import outcomes
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import noun, plural
from structext_core.ui import (
    crowd_lead,
    light_choice,
    light_html,
    people_axes,
    study_dashboard,
    study_leads,
    study_places,
    widgets,
)
from structext_core.ui.frame import ensure_frame
from structext_core.ui.question_screen import preview
from structext_core.views import dashboard

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("study_admin")
light_html.page_draws_light()  # its choosers are light elements: its HTML blocks are drawn as one too
db = ui.get_db()

SECTIONS = ["Dashboard", "Set up a study", "Export", "Crowd"]
PERCENT = st.column_config.NumberColumn(format="%.1f")
lazy = study_dashboard.lazy  # an expander whose content is drawn only while it is open


def pick_study(studies: list[study.Study]) -> study.Study | None:
    """The study chooser; archived studies only while "Show archived studies" is on."""
    show_archived = False
    if any(s.archived for s in studies):
        show_archived = st.toggle("Show archived studies", key="sa_show_archived",
                                  help="Archived studies are hidden from their annotators and from this list; "
                                       "they are kept whole.")
    shown = [s for s in studies if show_archived or not s.archived]
    if not shown:
        widgets.info("Every study is archived: turn on **Show archived studies** to see them, or set up a new one.")
        return None
    return widgets.pick_study(shown, key="sa_study")


# ---------------------------------------------------------------- set up


def setup_section() -> None:
    annotators = accounts.list_users(db, role="annotator")
    if not annotators:
        widgets.info(study_leads.no_annotators(user))
    benchmarks = study.study_benchmarks()
    # the browser's own radio buttons (a light chooser): the tab's click loads no code of Streamlit's widgets
    benchmark = light_choice.choose("Benchmark", benchmarks, key="sa_benchmark", buttons=True,
                                    format_func=lambda b: study.kind_of(b).setup_label)
    protocol.view(benchmark, "STUDY_SETUP_VIEW")(db, user, annotators)  # the benchmark's own form


# ---------------------------------------------------------------- accounts


def on_results_when_closed(study_id: int) -> None:
    on = bool(st.session_state[f"sa_results_when_closed_{study_id}"])
    access.set_results_when_closed(ui.get_db(), study_id, on, user)
    ui.flash("success", "The study's human results reach Results once it is closed." if on else
             "The study's human results reach Results as they are committed.")


def results_visibility_block(chosen: study.Study) -> None:
    st.checkbox(
        "Show this study's human results on Results only once it is closed",
        value=chosen.results_when_closed, key=f"sa_results_when_closed_{chosen.id}",
        on_change=on_results_when_closed, args=(chosen.id,),
        help="Results shows human results to researchers and admins only, never to annotators or visitors.",
    )


# ---------------------------------------------------------------- dashboard


def reselect(study_id: int, message: str) -> None:
    """Say what was done and keep (or put) ``study_id`` in the chooser on the rerun."""
    ui.flash("success", message)
    st.session_state["sa_study_id"] = study_id
    st.rerun()


def manage_study(chosen: study.Study, version: tuple) -> None:
    details = lazy(f"Study details and annotators ({chosen.n_annotators:,}): add, take off, close the study",
                   key="sa_open_details")
    if details is not None:
        with details:
            study_details(chosen, version)
    settings = lazy("Rename, archive or copy the study; when Results shows it", key="sa_open_settings")
    if settings is not None:
        with settings:
            results_visibility_block(chosen)
            rename_col, archive_col = st.columns(2, gap="large")
            with rename_col:
                rename_form(chosen)
            with archive_col:
                archive_block(chosen)
            clone_form(chosen)


def study_details(chosen: study.Study, version: tuple) -> None:
    """The rule and settings, everyone in the study, adding or taking off a person, closing it."""
    st.markdown(f"**Rule:** {markdown_text(chosen.rule_text)}")
    widgets.caption(
        f"Suite {chosen.suite} · seed {chosen.seed} · correctness shown after each answer: "
        f"{'yes' if chosen.show_correctness else 'no'}"
    )
    members = study_dashboard.members(db, chosen.id, version)
    if members:  # a static table
        st.table(pd.DataFrame([{"annotator": m.username, "status": m.status, "progress": m.progress_words}
                               for m in members]).set_index("annotator"))
    taken = {m.username for m in members}
    others = [u for u in accounts.list_users(db, role="annotator") if u["username"] not in taken]
    add_col, status_col = st.columns(2, vertical_alignment="bottom")
    newcomer = add_col.selectbox("Add an annotator", others, index=None, format_func=lambda u: u["username"],
                                 placeholder="Choose an annotator", key="sa_add_annotator")
    if add_col.button("Add to study", disabled=newcomer is None):
        try:
            study.add_annotator(db, chosen.id, newcomer["id"], by_user=user["id"])
        except study.StudyError as error:
            st.error(f"{newcomer['username']} was not added: {error}")
        else:
            ui.flash("success", f"{newcomer['username']} now takes part in {chosen.name}.")
            st.rerun()
    target = "closed" if chosen.status == "open" else "open"
    label = "Close the study (no more answers)" if target == "closed" else "Reopen the study"
    if status_col.button(label):
        study.set_study_status(db, chosen.id, target, by_user=user["id"])
        st.rerun()
    remove_annotator_form(chosen, [m for m in members if not m.removed], others)


def remove_annotator_form(chosen: study.Study, active: list[study.StudyMember], others: list[dict]) -> None:
    if not active:
        return
    with st.form(f"sa_remove_annotator_{chosen.id}"):
        st.markdown("**Take an annotator off the study**")
        left, right = st.columns(2)
        leaving = left.selectbox("Annotator to take off", active, key="sa_remove_who",
                                 format_func=lambda m: f"{m.username} ({m.progress_words})")
        replacement = right.selectbox("Replacement (optional)", others, index=None, key="sa_replacement",
                                      format_func=lambda u: u["username"], placeholder="Nobody: only take them off")
        widgets.caption("The annotator no longer sees the study and answers nothing more in it. Their answers so far "
                   "are kept: they stay in the dashboard and on Results, and the export marks them "
                   "(annotator_removed). A replacement gets the same questions in the same order as the person "
                   "they replace and answers every one of them afresh; the answers already given stay the "
                   "removed person's. This cannot be undone.")
        sure = st.checkbox("Yes, take them off this study", key="sa_remove_sure")
        submitted = st.form_submit_button("Take off the study")
    if not submitted:
        return
    if not sure:
        st.error("Nothing changed: tick 'Yes, take them off this study' to confirm.")
        return
    try:
        if replacement is None:
            kept = study.remove_annotator(db, chosen.id, leaving.user_id, by_user=user["id"])
            message = f"{leaving.username} is off {chosen.name}; their {plural(kept, 'answer')} {'is' if kept == 1 else 'are'} kept."
        else:
            given = study.replace_annotator(db, chosen.id, leaving.user_id, replacement["id"], by_user=user["id"])
            message = (f"{replacement['username']} replaces {leaving.username} in {chosen.name} with the same "
                       f"{plural(given, 'question')} in the same order; {leaving.username}'s "
                       f"{plural(leaving.answered, 'answer')} {'is' if leaving.answered == 1 else 'are'} kept as theirs.")
    except study.StudyError as error:
        st.error(f"Nothing changed. {error}")
        return
    reselect(chosen.id, message)


def rename_form(chosen: study.Study) -> None:
    with st.form(f"sa_rename_{chosen.id}"):
        new_name = st.text_input("New name", value=chosen.name, key=f"sa_rename_name_{chosen.id}")
        submitted = st.form_submit_button("Rename")
    if submitted:
        try:
            stored = study.rename_study(db, chosen.id, new_name, by_user=user["id"])
        except study.StudyError as error:
            st.error(f"The study was not renamed. {error}")
            return
        reselect(chosen.id, f"Study {chosen.name!r} is now called {stored!r}.")


def archive_block(chosen: study.Study) -> None:
    if chosen.archived:
        widgets.caption("Archived: hidden from its annotators and from the study list (unless **Show archived "
                   "studies** is on), closed for answering. Nothing was deleted.")
        label = "Bring back from the archive"
    else:
        widgets.caption("Archiving hides the study from its annotators and from the study list, and closes it for "
                   "answering. It is kept whole: dashboard, export and Results still have every answer.")
        label = "Archive the study"
    if st.button(label, key=f"sa_archive_{chosen.id}"):
        try:
            study.set_study_archived(db, chosen.id, not chosen.archived, by_user=user["id"])
        except study.StudyError as error:
            st.error(str(error))
            return
        if chosen.archived:
            reselect(chosen.id, f"Study {chosen.name!r} is back from the archive.")
        else:
            reselect(chosen.id, f"Study {chosen.name!r} is archived. Turn on Show archived studies to see it.")


def clone_form(chosen: study.Study) -> None:
    with st.form(f"sa_clone_{chosen.id}"):
        st.markdown("**Copy the study**")
        widgets.caption("A new open study with the same suite, settings, rule and questions (practice and gold "
                   "included), and no answers. Its crowd settings come too (consent text, questionnaire, the "
                   "platform's codes and addresses: change the codes if the platform gave the copy its own); "
                   "its study link does not: make one on the copy. Only the annotators chosen here take part "
                   "(none is fine: add them later), each in a new order of their own.")
        copy_name = st.text_input("Name of the copy", key=f"sa_clone_name_{chosen.id}",
                                  placeholder=f"e.g. {chosen.name}-2")
        copy_annotators = st.multiselect("Annotators of the copy", accounts.list_users(db, role="annotator"),
                                         format_func=lambda u: u["username"], key=f"sa_clone_annotators_{chosen.id}")
        submitted = st.form_submit_button("Create the copy")
    if submitted:
        try:
            copy_id = study.clone_study(db, chosen.id, name=copy_name,
                                        annotator_ids=[u["id"] for u in copy_annotators], by_user=user["id"])
        except study.StudyError as error:
            st.error(f"No copy was made. {error}")
            return
        reselect(copy_id, f"Study {copy_name.strip()!r} created as a copy of {chosen.name!r} with "
                          f"{plural(len(copy_annotators), 'annotator')}.")


def dashboard_section(chosen: study.Study) -> None:
    """The study's state at once (progress, who is where, scores, agreement); each person's rows,
    charts and the settings used now and then in lazy expanders (drawn only while open)."""
    if chosen.archived:
        widgets.info("This study is archived: hidden from its annotators and closed for answering. Its data is kept "
                "whole.", icon=":material/inventory_2:")
    released = study_places.release_stale(db, chosen.id, user["id"])  # before the figures are read
    timed_out = outcomes.time_out_overdue(db, chosen.id)
    if timed_out:
        widgets.info(f"{plural(len(timed_out), 'person', 'people')} from a study link passed the time-out before "
                f"finishing: timed out, their {noun(len(timed_out), 'place')} reopened.", icon=":material/timer_off:")
    version = study_dashboard.version(db, chosen.id)
    study_leads.leads_block(db, user, chosen)  # the preview as an annotator, and who leads the study
    study_leads.people_block(db, user)  # a lead: people from a CSV, into the studies they lead
    manage_study(chosen, version)
    progress_block(chosen, version)
    study_places.places_section(db, chosen.id, user["id"], version, released)
    gold_block(chosen, version)
    flags_block(chosen)
    df = study_dashboard.answers(db, chosen.id, version)  # the figures' frame: no answer's text (a spinner while read)
    if df.empty:
        widgets.info("No answers yet. Figures appear here as soon as annotators submit.")
        return
    kind = study.kind_of(chosen.benchmark)
    headline(chosen, version, df, kind)
    accuracy_block(chosen, version, kind)
    people_axes.who_answered_block(db, chosen.id, df)  # accuracy by the questionnaire's answers
    agreement_block(chosen, version)
    widgets.subheader("Time per question")
    time_block(chosen, version, df, kind)
    fast_block(chosen, version, df)


def progress_block(chosen: study.Study, version: tuple) -> None:
    widgets.subheader("Progress")
    counts = chosen.counts
    widgets.caption(counts.progress_terms(markdown_text(chosen.name)))
    where, hours = study_dashboard.progress(db, chosen.id, version)
    summary = dashboard.progress_summary(where)
    widgets.figures([
        ("People", f"{summary['people']:,}", f"In the study now; {plural(summary['removed'], 'person', 'people')} "
                                              "taken off (their answers stay in every figure)."),
        ("Done", f"{summary['done']:,}", "Every study question they were given answered."),
        ("Answering", f"{summary['answering']:,}", "Some study questions answered, not all."),
        ("Not started", f"{summary['not_started']:,}", "No study question answered yet."),
        (f"Answered of {summary['total']:,}", f"{summary['answered']:,}",
         "Study questions answered (gold included, practice apart) of those given, everyone in the table below "
         "summed (people taken off included)."),
    ])
    box = lazy(f"Each person's progress and time ({len(where):,})", key="sa_open_progress")
    if box is not None:
        with box:
            progress_tables(where, hours)
    if chosen.practice_items or chosen.gold_items:
        widgets.caption(f"Practice ({plural(chosen.practice_items, 'question')}) is left out of every figure; gold "
                   f"({plural(chosen.gold_items, 'question')}) is in the progress above and out of every other figure.")


def progress_tables(where: pd.DataFrame, hours: pd.DataFrame) -> None:
    small = {"width": "small"}
    st.dataframe(
        where, hide_index=True, width="content",
        column_config={
            "answered": st.column_config.NumberColumn("answered", **small),
            "gave_up": st.column_config.NumberColumn("gave up", **small),
            "remaining": st.column_config.NumberColumn("left", help="Questions still to answer.", **small),
            "total": st.column_config.NumberColumn("total", **small),
            "done_pct": st.column_config.ProgressColumn("done", format="%.0f%%", min_value=0, max_value=100,
                                                        **small),
            "last_answer": st.column_config.TextColumn("last answer (UTC)", width="medium"),
            "rule_accepted": st.column_config.CheckboxColumn("rule", help="The study's rule accepted.", **small),
            "removed": st.column_config.CheckboxColumn(
                "taken off", help="Taken off the study by a lead: their answers stay in every figure.", **small),
        },
    )
    st.dataframe(hours, hide_index=True, width="content", column_config={
        column: st.column_config.NumberColumn(help=help, format="%.1f")
        for column, help in zip(hours.columns[1:], dashboard.TIME_PARTS.values())})
    widgets.caption("Time on answered questions. Answering (active) + paused + idle + away = the time from "
               "each question's first showing to its submission; time per question below is active time.")


def gold_block(chosen: study.Study, version: tuple) -> None:
    if not chosen.gold_items:
        return
    widgets.subheader("Gold items")
    report = study_dashboard.gold(db, chosen.id, version)
    if report.empty:
        mixed = "is" if chosen.gold_items == 1 else "are"
        widgets.caption(f"{plural(chosen.gold_items, 'gold item')} {mixed} mixed in; no one has answered one yet.")
        return
    table = dashboard.gold_table(report)
    to_check = table.loc[table["check"] == dashboard.CHECK_WORK, "annotator"].tolist()
    if to_check:
        widgets.warning(f"Below the gold pass mark ({chosen.gold_pass:.0%}): {', '.join(to_check)}. "
                   "Check this person's work.")
    else:
        widgets.caption(f"Everyone who answered a gold item is at or above the gold pass mark ({chosen.gold_pass:.0%}).")
    box = lazy(f"Gold answers of each person ({len(table):,})", key="sa_open_gold")
    if box is not None:
        box.dataframe(table, hide_index=True, column_config={
            "gold_answered": "gold answered", "gold_passed": "gold passed",
            "gold_accuracy": st.column_config.NumberColumn("gold accuracy (%)", format="%.1f"),
        })


def on_resolve_flag(study_id: int) -> None:
    flag_id = st.session_state.get(f"sa_flag_pick_{study_id}")
    resolution = st.session_state.get(f"sa_flag_resolution_{study_id}", "")
    if flag_id is None:
        ui.flash("error", "Choose the flag to resolve.")
        return
    try:
        study.resolve_flag(ui.get_db(), flag_id, user, resolution)
    except (study.StudyError, access.AccessError) as error:
        ui.flash("error", f"The flag was not resolved. {error}")
        return
    st.session_state[f"sa_flag_resolution_{study_id}"] = ""
    ui.flash("success", f"Flag {flag_id} resolved.")


def flags_block(chosen: study.Study) -> None:
    widgets.subheader("Flags on questions")
    everything = study.flags(db, chosen.id)
    still_open = [f for f in everything if f.is_open]
    widgets.figures([("Open flags", f"{len(still_open):,}", "Questions annotators reported as broken or unclear.")],
                    columns=5)
    if not everything:
        widgets.caption("No annotator has flagged a question.")
        return
    box = lazy(f"Read and resolve the flags ({len(still_open):,} open, {len(everything) - len(still_open):,} resolved)",
               key="sa_open_flags")
    if box is None:
        return
    with box:
        flags_table(chosen, everything, still_open)


def flags_table(chosen: study.Study, everything: list, still_open: list) -> None:
    show_all = st.toggle("Show resolved flags too", key=f"sa_flags_all_{chosen.id}")
    shown = everything if show_all else still_open
    if not shown:
        widgets.caption("No open flag.")
        return
    st.dataframe(dashboard.flags_table(shown), hide_index=True,
                 column_config={"flagged": "flagged (UTC)", "resolved": "resolved (UTC)", "resolved_by": "resolved by"})
    if not still_open:
        return
    by_id = {f.id: f for f in still_open}
    with st.form(f"sa_resolve_flag_{chosen.id}", border=False):
        pick_col, note_col = st.columns([2, 3], vertical_alignment="bottom")
        pick_col.selectbox("Flag to resolve", list(by_id), key=f"sa_flag_pick_{chosen.id}",
                           format_func=lambda flag_id: (f"#{flag_id} · question {by_id[flag_id].position} · "
                                                        f"{by_id[flag_id].kind} · {by_id[flag_id].username}"))
        note_col.text_input("What was done", key=f"sa_flag_resolution_{chosen.id}", max_chars=study.MAX_FLAG_NOTE_CHARS,
                            placeholder="e.g. answer key checked: it is right")
        st.form_submit_button("Resolve flag", on_click=on_resolve_flag, args=(chosen.id,))


def headline(chosen: study.Study, version: tuple, df: pd.DataFrame, kind: study.StudyKind) -> None:
    widgets.subheader("Accuracy")
    summary = study_dashboard.headline(db, chosen.id, version)
    pool = summary["pool"].iloc[0]
    widgets.figures([
        ("Counted answers", f"{len(df):,}", "Answers to the counted study questions, give-ups included; gold and "
                                             "practice answers apart (a person's study questions answered, less gold)."),
        ("Mean annotator", f"{summary['mean_annotator']:.1f}",
         "Mean of the annotators' scores: the paper's human figure (92.6 on Test-Hard)."),
        ("Best annotator", f"{summary['best_score']:.1f}", summary["best_annotator"]),
        ("All answers pooled", f"{pool['score']:.1f}",
         f"95% CI {pool['score_low']:.1f}-{pool['score_high']:.1f}, n = {pool['n']}"),
    ])
    widgets.caption(kind.score_note)


def accuracy_block(chosen: study.Study, version: tuple, kind: study.StudyKind) -> None:
    box = lazy("Accuracy of each annotator and of each group of questions: table and chart",
               key="sa_open_accuracy")
    if box is None:
        return
    with box:
        by = widgets.axes_picker("Group by", kind.groupings, study.study_facets(db, chosen.id),
                                 key=f"sa_group_{kind.benchmark}", default="Annotator")
        table = study_dashboard.accuracy(db, chosen.id, version, tuple(by))
        st.dataframe(table, hide_index=True, column_config={
            "score": PERCENT, "exact_match": st.column_config.NumberColumn("exact match", format="%.1f"),
            "score_low": st.column_config.NumberColumn("score CI low", format="%.1f"),
            "score_high": st.column_config.NumberColumn("score CI high", format="%.1f"),
            "em_low": st.column_config.NumberColumn("EM CI low", format="%.1f"),
            "em_high": st.column_config.NumberColumn("EM CI high", format="%.1f"),
        })
        st.altair_chart(dashboard.accuracy_chart(table, by), width="stretch")


def time_block(chosen: study.Study, version: tuple, df: pd.DataFrame, kind: study.StudyKind) -> None:
    box = lazy("Time per question: charts, and the times of each person and each group of questions",
               key="sa_open_time")
    if box is None:
        return
    with box:
        times = study_dashboard.times(db, chosen.id, version, tuple(kind.time_cells))
        if kind.time_by_length:
            left, right = st.columns(2)
            left.altair_chart(dashboard.time_histogram(df), width="stretch")
            right.altair_chart(dashboard.time_by_length(df), width="stretch")
            widgets.caption(f"Spearman correlation of time with reference length: {times['spearman_length']:.2f}")
        else:
            st.altair_chart(dashboard.time_histogram(df), width="stretch")
        left, right = st.columns(2)
        time_columns = {"median_s": "median (s)", "p10_s": "10th pct (s)", "p90_s": "90th pct (s)",
                        "total_h": "total (h)"}
        left.dataframe(times["per_annotator"], hide_index=True, column_config=time_columns)
        right.dataframe(times["per_cell"], hide_index=True, column_config=time_columns)


def agreement_block(chosen: study.Study, version: tuple) -> None:
    widgets.subheader("Agreement between annotators (pass/fail)")
    agreement = study_dashboard.agreement(db, chosen.id, version, pairwise=False)
    widgets.figures([
        ("Fleiss' kappa", dashboard.statistic_text(agreement["fleiss_kappa"]), study_places.fleiss_help(agreement)),
        ("Krippendorff's alpha", dashboard.statistic_text(agreement["krippendorff_alpha"]),
         f"Over the {plural(agreement['alpha_items'], 'item')} with at least two answers."),
    ], columns=4)
    if dashboard.cells.DASH in (dashboard.statistic_text(agreement["fleiss_kappa"]),
                                dashboard.statistic_text(agreement["krippendorff_alpha"])):
        widgets.caption(f"{dashboard.cells.DASH}: not measured from these answers (it needs two or more annotators' "
                   "answers on the same items, not all of one verdict).")
    if agreement["alpha_items"] == 0:
        widgets.caption("Agreement needs at least two annotators with answers to the same items.")
        return
    box = lazy("Each pair of annotators: items both answered, same verdict, Cohen's kappa", key="sa_open_pairs")
    if box is None:
        return
    with box:
        pairs = study_dashboard.agreement(db, chosen.id, version, pairwise=True)["pairwise"]
        if pairs.empty:
            widgets.caption("Agreement needs at least two annotators with answers to the same items.")
            return
        table = dashboard.agreement_table(pairs)
        st.dataframe(table, hide_index=True, column_config={
            "annotator_a": "annotator", "annotator_b": "and annotator", "n": "items both answered",
            "agreement_pct": st.column_config.NumberColumn("same verdict (%)", format="%.1f"),
            "cohen_kappa": "Cohen's kappa",
        })
        if (table["cohen_kappa"] == dashboard.cells.DASH).any():
            widgets.caption(f"{dashboard.cells.DASH}: not measured (a kappa is undefined where the answers leave no "
                       "room for chance: every verdict the same).")


def fast_block(chosen: study.Study, version: tuple, df: pd.DataFrame) -> None:
    min_seconds = st.session_state.get("sa_fast_seconds", study.FAST_MIN_SECONDS)
    fraction = st.session_state.get("sa_fast_fraction", study.FAST_FRACTION_OF_MEDIAN)
    flagged = study_dashboard.fast(db, chosen.id, version, float(min_seconds), float(fraction))
    box = lazy(f"Answers to review: implausibly fast ({len(flagged):,} with the thresholds inside)",
               key="sa_open_fast")
    if box is None:
        return
    with box:
        left, right = st.columns(2)
        min_seconds = left.number_input("Faster than (seconds)", min_value=0.0, value=study.FAST_MIN_SECONDS,
                                        step=1.0, key="sa_fast_seconds")
        fraction = right.slider("or faster than this share of the others' median time", 0.0, 1.0,
                                study.FAST_FRACTION_OF_MEDIAN, 0.05, key="sa_fast_fraction")
        flagged = study_dashboard.fast(db, chosen.id, version, float(min_seconds), float(fraction))
        if flagged.empty:
            widgets.caption("No answer is flagged with these thresholds.")
            return
        st.dataframe(dashboard.fast_table(flagged), hide_index=True, column_config={
            "seconds": st.column_config.NumberColumn(format="%.1f"),
            "score (0-1)": st.column_config.NumberColumn(format="%.2f")})


# ---------------------------------------------------------------- export


def export_section(chosen: study.Study) -> None:
    study_id, stem = chosen.id, chosen.name
    st.write("Downloads are built when you click, from the answers committed at that moment.")
    columns = study.study_export_columns(db, study_id)  # its items' more fields and questionnaire too
    row = st.container(horizontal=True)  # every file in one row, wrapping: no button alone in a column
    problem = study.inspect_log_problem(db, study_id)
    row.download_button(
        "Responses (CSV)", study_leads.export(user, study_id, lambda db: study.to_csv(study.export_rows(db, study_id), columns)),
        file_name=f"{stem}-responses.csv", mime="text/csv", on_click="ignore",
    )
    row.download_button(
        "Responses (JSONL)", study_leads.export(user, study_id, lambda db: study.to_jsonl(study.export_rows(db, study_id))),
        file_name=f"{stem}-responses.jsonl", mime="application/jsonl", on_click="ignore",
    )
    if study.kind_of(chosen.benchmark).model_results:
        row.download_button(
            "Human results (model-result JSONL)", study_leads.export(user, study_id, lambda db: study.to_jsonl(study.human_results(db, study_id))),
            file_name=f"{stem}-human-results.jsonl", mime="application/jsonl", on_click="ignore",
            help="One row per answer as model human:<annotator>, and again as model human (the pool).",
        )
    if problem is None:
        row.download_button(
            "People as an Inspect AI log (.eval)", study_leads.export(user, study_id, lambda db: study.inspect_log_bytes(db, study_id)),
            file_name=study.inspect_log_name(stem), mime="application/zip", on_click="ignore",
            help="One sample per question and person (each person an epoch), model human/<study name>, each "
                 "answer's score as counted here, time in the sample; open it with inspect view or Inspect's "
                 "samples_df.",
        )
    if chosen.practice_items or chosen.gold_items:
        row.download_button(
            "Practice and gold answers (CSV)",
            study_leads.export(user, study_id, lambda db: study.to_csv(study.export_rows(db, study_id, kinds=("practice", "gold")), columns)),
            file_name=f"{stem}-practice-and-gold.csv", mime="text/csv", on_click="ignore",
            help="Not counted, so not in the files above; the column kind says which each row is.",
        )
    if problem is not None:
        widgets.caption(problem)
    st.divider()
    if study.kind_of(chosen.benchmark).model_results:
        st.write("**Results** (under *Benchmark*) shows this study's answers as they are committed, beside the "
                 "models: model `human:<annotator>` per person and `human` for the pool.")
    st.write(study.export_description(db, study_id, columns))


# ---------------------------------------------------------------- the page

st.title("Human-baseline studies")


@ui.fragment
def studies_page() -> None:
    """The page under its title, in a fragment: a click on a tab, a study, an expander or a form
    reruns only this, not the app's frame (the study's figures are cached by its data version)."""
    global db
    if ui.current_user() != user:  # logged out meanwhile (another tab): the whole app reruns
        st.rerun(scope="app")
    db = ui.get_db()  # this run's connection: a fragment's own run has its own
    ui.show_flash()
    if preview.show(db, user):  # the preview as an annotator, in place of the page while it is open
        return
    all_studies = study_leads.studies_of(db, user)  # a lead: the studies they lead
    if "sa_study_id" in st.session_state:  # a study just created, renamed, copied: select it
        created_id = st.session_state.pop("sa_study_id")
        st.session_state["sa_study"] = next((s for s in all_studies if s.id == created_id), None)
    # The open tab only is drawn (a click reruns the page)
    section = light_choice.tabs(SECTIONS, key="sa_section", default="Dashboard" if all_studies else "Set up a study")
    if section == "Set up a study":
        setup_section()
    elif not all_studies:
        widgets.info(study_leads.none_yet(user))
    else:
        chosen = pick_study(all_studies)
        if chosen is not None:
            {"Dashboard": dashboard_section, "Export": export_section,
             "Crowd": crowd_lead.crowd_section}[section](chosen)


studies_page()
