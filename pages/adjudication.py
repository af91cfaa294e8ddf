"""Adjudication: a study's questions one at a time, where the annotators disagree most first;
the lead may override a response's score with a reason, and resolve the flags on a question.

UI only: the items, responses, overrides and flags come from ``structext_core.studio.study``.
"""

import streamlit as st

from structext_core import ui
from structext_core.evaluation import choices
from structext_core.studio import access, study
from structext_core.text.safe_text import html_table, markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_choice, light_html, study_dashboard, widgets
from structext_core.ui.frame import ensure_frame
from structext_core.views import answer_card, cells, question_card

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("adjudication")
light_html.page_draws_light()  # its choosers are light elements: its HTML blocks are drawn as one too
db = ui.get_db()

#: The override form's choices: a verdict, or a score typed in (None).
VERDICTS = {"Correct (score 1)": 1.0, "Incorrect (score 0)": 0.0, "The score below": None}
SCORE_FORMAT = st.column_config.NumberColumn(format="%.2f")
#: The kinds of question listed unless practice ones are asked for too.
LISTED_KINDS = ("study", "gold")
#: How many questions the page lists at once (a static table); every one in a lazy expander.
FIRST = 10
#: The item list's columns as the lead reads them.
ITEM_COLUMNS = {"position": "#", "n_responses": "answers", "n_gave_up": "gave up", "mean_score": "mean score",
                "n_overridden": "overridden", "open_flags": "open flags", "name": "item"}
#: A question's answers drawn at once; more on further pages.
ANSWERS_PER_PAGE = 20


# ---------------------------------------------------------------- callbacks (run before the page is drawn)


def on_override(response_id: int, annotator: str) -> None:
    state = st.session_state
    verdict = state.get(f"adj_verdict_{response_id}")
    if verdict not in VERDICTS:  # none is chosen for the lead: the lead decides
        ui.flash("error", f"The score of {annotator}'s answer was not changed: choose a new score first "
                          f"({', '.join(VERDICTS)}).")
        return
    chosen = VERDICTS[verdict]
    score = state[f"adj_score_{response_id}"] if chosen is None else chosen
    try:
        study.override_score(ui.get_db(), response_id, score, state[f"adj_reason_{response_id}"], user)
    except (study.StudyError, access.AccessError) as error:
        ui.flash("error", f"The score of {annotator}'s answer was not changed. {error}")
        return
    state[f"adj_reason_{response_id}"] = ""
    ui.flash("success", f"The score of {annotator}'s answer is now {score:g} (set by hand).", toast=True)


def on_clear(response_id: int, annotator: str) -> None:
    state = st.session_state
    try:
        study.clear_override(ui.get_db(), response_id, state[f"adj_reason_{response_id}"], user)
    except (study.StudyError, access.AccessError) as error:
        ui.flash("error", f"The override of {annotator}'s answer was not cleared. {error}")
        return
    state[f"adj_reason_{response_id}"] = ""
    ui.flash("success", f"{annotator}'s answer is back to its automatic score.", toast=True)


def on_resolve(flag_id: int) -> None:
    try:
        study.resolve_flag(ui.get_db(), flag_id, user, st.session_state[f"adj_resolution_{flag_id}"])
    except (study.StudyError, access.AccessError) as error:
        ui.flash("error", f"The flag was not resolved. {error}")
        return
    ui.flash("success", "The flag is resolved.", toast=True)


# ---------------------------------------------------------------- the item list


def item_list(chosen: study.Study) -> study.ItemSummary | None:
    # one under the other, not in columns: the page's light elements then draw as one (issue 46)
    order = light_choice.choose("Order", list(study.ITEM_ORDERS), format_func=study.ITEM_ORDERS.get, buttons=True,
                                key="adj_order")
    practice = light_choice.check("Practice questions too", key="adj_practice",
                                  help="Practice answers are never counted; study and gold questions are always listed.")
    items = study_dashboard.adjudication_items(db, chosen.id, study_dashboard.version(db, chosen.id),
                                               order or "disagreement", None if practice else LISTED_KINDS)
    if not items:
        widgets.info("This study has no questions.")
        return None
    answered = sum(1 for s in items if s.n_responses)
    shown = f"the first {FIRST} below" if len(items) > FIRST else "all below"
    widgets.caption(f"{plural(len(items), 'question')}, {answered:,} with answers ({shown}). Disagreement: the spread of the final scores "
               "(standard deviation, 0 to 0.5) plus the mix of 'gave up' and 'answered' (0 to 0.5).")
    # an item no one answered yet has no mean: a dash, not None (issue 46)
    table = cells.without_missing(study.items_table(items).assign(
        mean_score=lambda t: [cells.number_text(v, 2) for v in t["mean_score"]]))
    first = table.head(FIRST).assign(**{column: [cells.number_text(v, 2) for v in table[column].head(FIRST)]
                                        for column in ("spread", "disagreement")})
    widgets.html_block(html_table(first.rename(columns=ITEM_COLUMNS)))  # static: the first ones, at once
    if len(items) > FIRST:
        box = study_dashboard.lazy(f"Every question in this order ({len(items):,}): a table to sort",
                                   key="adj_open_items")
        if box is not None:
            box.dataframe(table, hide_index=True, height=min(420, 38 + 35 * len(items)), column_config={
                **ITEM_COLUMNS, "spread": SCORE_FORMAT, "disagreement": SCORE_FORMAT})
    by_id = {s.item_id: s for s in items}
    item_id = light_choice.choose("Question", list(by_id), format_func=lambda i: by_id[i].label,
                                  key=f"adj_item_{chosen.id}")
    return by_id.get(item_id)


# ---------------------------------------------------------------- one item


def image_item_panel(detail: study.ItemDetail) -> None:
    """A multiple-choice item: the image the annotators saw (when it has one), the question, its
    options with the key marked."""
    item = detail.summary
    widgets.subheader(f"Question #{item.position}")
    widgets.caption(markdown_text(f"{item.describe} · {item.name} · {item.kind} item"))
    if detail.has_image:
        left, right = st.columns([3, 2], gap="large")
        with left, st.container(border=True):  # framed: a blank image still shows where it is
            try:
                st.image(study.lead_image(db, item.item_id), width="stretch", output_format="PNG")
            except study.StudyError as error:
                st.error(f"The image cannot be shown: {error}")
    else:
        right = st.container()
    with right:
        st.markdown(f"**Question:** {markdown_text(detail.question)}")
        st.markdown("  \n".join(
            f"{':material/check_circle: ' if letter == detail.answer else ''}**{letter}** · {markdown_text(text)}"
            + (" *(answer key)*" if letter == detail.answer else "")
            for letter, text in zip(choices.LETTERS, detail.options)))
        if detail.responses:
            widgets.caption("Chosen: " + ", ".join(f"{r.annotator} {'gave up' if r.gave_up else r.response}"
                                              for r in detail.responses))


def sample_panel(detail: study.ItemDetail) -> None:
    item = detail.summary
    if detail.options:
        image_item_panel(detail)
        return
    widgets.subheader(f"Question #{item.position}")
    widgets.caption(markdown_text(f"{item.describe} · {item.name} · {item.kind} item"))
    reference_view = study.kind_of(item.benchmark).reference_view  # None: its items have no reference panel
    name = (reference_view(dict(item.strata))[0] or "") if reference_view is not None else ""
    # one block, the question beside its reference (not two columns: the page's light elements draw as one)
    widgets.html_block(question_card.question_html(
        detail.question, detail.answer, requirement=detail.requirement or "",
        reference=None if reference_view is None else detail.reference, reference_name=name))
    widgets.figures([
        ("Answers", f"{item.n_responses:,}", f"{item.n_gave_up:,} gave up"),
        ("Mean score", "–" if item.mean_score is None else f"{item.mean_score:.2f}"),
        ("Spread", f"{item.spread:.2f}", "Standard deviation of the final scores."),
        ("Overridden", f"{item.n_overridden:,}"),
    ])


def answers_panel(responses: list[study.ResponseDetail], item_id: str, options: tuple[str, ...] = (),
                  score_label: str | None = None) -> None:
    """A page of answers: the form to change one's score, then every answer with its scores, the note of
    a score set by hand and its history, as one HTML block (``answer_card.answers_html``: twenty framed
    boxes of elements, each with a closed box for its form, made the page's first view 0.05 to 0.15 s
    slower in the browser; issue 46). ``score_label``: the name of the graded score its benchmark gives a free text
    (its kind's ``score_label``), None: right or wrong by its rule."""
    histories = study.override_histories(db, [r.response_id for r in responses])
    change_form(responses, item_id, options)
    widgets.html_block(answer_card.answers_html([(r, histories[r.response_id]) for r in responses], options, score_label))


def change_form(responses: list[study.ResponseDetail], item_id: str, options: tuple[str, ...] = ()) -> None:
    """One answer's override form, the answer chosen among those shown; drawn only while its box is open
    (a lead overrides one answer at a time). The form's fields are keyed by the answer, so what is typed
    for one never shows under another."""
    if not responses:  # nothing to change yet
        return
    box = widgets.lazy_section("Change a score", key=f"adj_change_{item_id}", icon=":material/edit:")
    if box is None:
        return
    shown = {r.response_id: r for r in responses}
    pick_key = f"adj_pick_{item_id}"
    if st.session_state.get(pick_key) not in shown:  # an answer of another page of answers
        st.session_state.pop(pick_key, None)
    with box:
        rid = st.selectbox("Answer", list(shown), key=pick_key,
                           format_func=lambda i: answer_card.answer_label(shown[i], options),
                           help="The answers shown below, by annotator.")
        response = shown[rid]
        with st.form(f"adj_form_{rid}"):
            left, right = st.columns([2, 1])
            left.radio("New score", list(VERDICTS), key=f"adj_verdict_{rid}", horizontal=True, index=None,
                       help="Nothing is chosen for you: pick the verdict this answer deserves.")
            right.number_input("Score (0 to 1)", min_value=0.0, max_value=1.0, step=0.05, value=response.score,
                               key=f"adj_score_{rid}", help="Used when 'The score below' is chosen.")
            st.text_input("Reason", key=f"adj_reason_{rid}", max_chars=study.MAX_REASON_CHARS,
                          placeholder="e.g. right in substance, worded differently")
            save, clear = st.columns(2)
            save.form_submit_button("Override the score", type="primary", on_click=on_override,
                                    args=(rid, response.annotator), key=f"adj_save_{rid}")
            clear.form_submit_button("Back to the automatic score", disabled=response.override is None,
                                     on_click=on_clear, args=(rid, response.annotator), key=f"adj_clear_{rid}")


def flags_panel(detail: study.ItemDetail) -> None:
    item = detail.summary
    found = study.flags(db, item.study_id, item_id=item.item_id)
    open_flags = [f for f in found if f.is_open]
    widgets.subheader("Flags on this question")
    if not found:
        widgets.caption("No annotator has flagged this question.")
        return
    for flag in open_flags:
        with st.container(border=True):
            st.markdown(f"**{study.FLAG_KINDS.get(flag.kind, flag.kind)}** · by {flag.username or '(deleted account)'}"
                        f" on {study.moment_text(flag.created_at)}")
            if flag.note:
                st.text(flag.note)
            with st.form(f"adj_flag_{flag.id}"):
                st.text_input("What was done about it", key=f"adj_resolution_{flag.id}",
                              max_chars=study.MAX_FLAG_NOTE_CHARS, placeholder="e.g. answer key checked: it is right")
                st.form_submit_button("Resolve the flag", on_click=on_resolve, args=(flag.id,), key=f"adj_resolve_{flag.id}")
    resolved = [f for f in found if not f.is_open]
    if resolved:
        widgets.caption(markdown_text("Resolved: " + "; ".join(
            f"{f.kind} by {f.username or '?'} → {f.resolution} ({f.resolved_by})" for f in resolved)))


# ---------------------------------------------------------------- the page

st.title("Adjudication")
ui.show_flash()
all_studies = study.only_run(db, user, study.list_studies(db))  # a lead: the studies they lead
if not all_studies:
    widgets.info("No study to adjudicate: you lead none yet." if user["role"] == "lead" else
            "No study yet: create one on **Studies**.")
    st.stop()
chosen = widgets.pick_study(all_studies, key="adj_study")
summary = item_list(chosen)
if summary is not None:
    detail = study.adjudication_item(db, summary.item_id)
    sample_panel(detail)
    flags_panel(detail)
    widgets.subheader("Responses")
    if not detail.responses:
        widgets.info("No annotator has answered this question yet.")
    every, responses = len(detail.responses), detail.responses
    if every > ANSWERS_PER_PAGE:  # hundreds of people: their answers a page at a time
        start = light_choice.choose(
            "Answers shown", list(range(0, every, ANSWERS_PER_PAGE)), key=f"adj_answers_{summary.item_id}",
            format_func=lambda i: f"{i + 1}-{min(i + ANSWERS_PER_PAGE, every)} of {every:,}")
        responses = detail.responses[start:start + ANSWERS_PER_PAGE]
    answers_panel(responses, summary.item_id, detail.options, score_label=study.kind_of(detail.summary.benchmark).score_label)
