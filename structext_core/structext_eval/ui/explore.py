"""StrucText-Eval's Explore view (its ``EXPLORE_VIEW``): browse a suite's samples by format, task,
depth and width; see them rendered and raw; export a selection.

Researchers and admins see every suite; visitors and annotators only in public read-only mode,
and then only suites in no open study, without any sample of an open study (``access``).
"""

import copy

import streamlit as st

from structext_core.structext_eval import explore, samples, sealed, suites
from structext_core.structext_eval.formats import HIGHLIGHT, Preview
from structext_core.studio import access, data_scope, sandbox
from structext_core.text.safe_text import html_table, markdown_text
from structext_core.text.words import plural
from structext_core.ui import light_choice, widgets

#: A reference's table of at most this many rows is drawn as an HTML table, a longer one as a scrolling grid.
SMALL_TABLE_ROWS = 25
#: The sample shown (its id) and its place among the samples that match (the number a person sets).
SAMPLE_KEY, SAMPLE_NUMBER_KEY = "explore_sample", "explore_sample_number"



class PreviewNotNow(Exception):
    """The check workers could not make a preview just now (busy, unavailable): said, not cached."""


@st.cache_data(max_entries=32, show_spinner=False)
def rendered_view(language: str, reference: str) -> Preview:
    """The rendered view of a reference, made in a check worker (the file may be hostile) and
    kept, so a filter change that keeps the sample, or a return to it, does not parse it again
    (a large YAML reference takes the worker half a second). A text the worker could not
    preview (too large, nested too deeply) is kept as its note; a busy or missing worker is not."""
    result = sandbox.run("preview", language, reference)
    if isinstance(result, sandbox.Unchecked):
        if not result.too_big:
            raise PreviewNotNow(result.describe("preview"))  # not cached: the next run asks again
        return Preview("none", note=result.describe("preview"))
    return result


def show_tables(tables) -> None:
    """A reference's tables: a small one as an HTML table, each cell exactly as the file has it (the
    browser draws it at once, where a table element first loads half a second of code); a long one in a
    scrolling grid."""
    for table in tables:
        if len(table) <= SMALL_TABLE_ROWS:
            widgets.html_block(html_table(table))
        else:
            st.dataframe(table, hide_index=True, width="stretch")


# How each kind of preview is drawn (structext_core.structext_eval.formats.Preview); "none" draws nothing.
SHOW_PREVIEW = {
    "markdown": lambda data: st.markdown(markdown_text(data)),  # a suite file may hold anything
    "json": lambda data: st.json(data, expanded=2),
    "tables": show_tables,
    "graph": st.graphviz_chart,
}


#: The filters' box (open: drawn; closed: not, its filters kept on) and each filter's key.
FILTERS_OPEN = "explore_filters_open"
FILTER_KEYS = ("explore_formats", "explore_tasks", "explore_depths", "explore_widths")
#: The text a sample's id must contain (a filter in the same box), at most this many characters.
ID_KEY, ID_MAX_CHARS = "explore_id_text", 200
#: Every filter of the box, each kept under ``<key>_kept`` while the box is closed.
KEPT_KEYS = (*FILTER_KEYS, ID_KEY)


def choose_filters(index) -> tuple[list, list, list, list, str]:
    """The formats, tasks, depths and widths chosen, and the text the ids must contain, in a box whose
    boxes are drawn only while it is open (its four multiselects cost a first view about a third of a
    second in the browser); closed, the filters chosen stay on and a caption says which. A filter's
    value is kept under ``<key>_kept``, as Streamlit forgets a widget it did not draw; values the suite
    does not have (another suite chosen meanwhile) drop out."""
    state = st.session_state
    options = {"explore_formats": explore.format_choices(index),
               "explore_depths": sorted(index["depth"].unique().tolist()),
               "explore_widths": sorted(index["width"].unique().tolist())}
    for key in KEPT_KEYS:
        if key not in state and f"{key}_kept" in state:
            state[key] = state[f"{key}_kept"]
    for key, offered in options.items():
        if key in state:
            state[key] = [v for v in state[key] if v in offered]
    tasks = explore.task_choices(index, state.get("explore_formats") or [])
    if "explore_tasks" in state:
        state["explore_tasks"] = [t for t in state["explore_tasks"] if t in tasks]
    box = widgets.lazy_section("Filters: format, task, depth, width, id", key=FILTERS_OPEN,
                               icon=":material/filter_list:")
    if box:
        box.text_input("Id contains", key=ID_KEY, max_chars=ID_MAX_CHARS, placeholder="Any (e.g. t05-d2w1)",
                       help="Keeps the samples whose id contains this text, as written. An id reads suite, task, "
                            "depth and width, then a number: test-t05-d2w1-003.")
        c = box.columns([2, 3, 1, 1])
        c[0].multiselect("Format", options["explore_formats"], key="explore_formats", placeholder="Any")
        c[1].multiselect("Task", explore.task_choices(index, state.get("explore_formats") or []),
                         format_func=explore.task_label, key="explore_tasks", placeholder="Any")
        c[2].multiselect("Depth", options["explore_depths"], key="explore_depths", placeholder="Any")
        c[3].multiselect("Width", options["explore_widths"], key="explore_widths", placeholder="Any")
        for key in KEPT_KEYS:
            state[f"{key}_kept"] = copy.copy(state.get(key))  # a list of choices, or the id's text
    chosen = [list(state.get(key) or []) for key in FILTER_KEYS]
    id_text = str(state.get(ID_KEY) or "")[:ID_MAX_CHARS]  # the box's limit, kept by a forged message too
    if not box and (any(chosen) or id_text):
        named = zip(("format", "task", "depth", "width"), chosen, (str, explore.task_label, str, str))
        on = [f"{name} {', '.join(map(label, values))}" for name, values, label in named if values]
        on += [f"id contains “{id_text}”"] if id_text else []
        st.caption(markdown_text("Filters on: " + "; ".join(on) + "."))
    return (*chosen, id_text)


def _follow_number(ids: list[str]) -> None:
    """The number typed or stepped to (:func:`choose_sample`) names the sample: the one at that place
    among the ``ids`` the person saw when they changed it."""
    st.session_state[SAMPLE_KEY] = ids[st.session_state[SAMPLE_NUMBER_KEY] - 1]


def choose_sample(ids: list[str], where=st) -> str:
    """The sample shown, chosen by its place among ``ids`` (the samples that match, in order): a number
    with steps to the next and the one before, not a list of every id (a Test suite's 3,712 options
    cost the browser about a quarter of a second on each visit; issue 46), the browser's own number box
    (Streamlit's made the browser load its code: 0.04 s of the page). The sample stays when the
    filters change and still match it; otherwise the first that matches is shown."""
    state = st.session_state
    if state.get(SAMPLE_KEY) not in ids:
        state[SAMPLE_KEY] = ids[0]
    state[SAMPLE_NUMBER_KEY] = ids.index(state[SAMPLE_KEY]) + 1
    light_choice.number(f"Sample (1 to {len(ids):,})", min_value=1, max_value=len(ids), key=SAMPLE_NUMBER_KEY,
                        on_change=lambda: _follow_number(ids), where=where,
                        help="Its place among the samples that match the filters, in the order of their ids.")
    return state[SAMPLE_KEY]


def explore_view(db, user) -> None:
    """The view, for ``user`` (its page has checked that they may open Explore)."""
    files = suites.suite_files()
    if not files:
        st.warning("No suites yet: open Home once to generate the default suites.")
        return
    shown = data_scope.visible_suites(db, user, [f.stem for f in files])
    if not shown:
        st.info("Every suite is part of an open study, so its answers stay sealed until the study is closed.")
        return
    if access.restricted(access.role_of(user)):
        st.caption("Public read-only mode: suites of open studies are not shown, nor any sample of an open study.")
    files = [f for f in files if f.stem in shown]
    hidden = sealed.hidden_samples(db, user)

    names = [f.stem for f in files]
    suite_name = light_choice.choose("Suite", names, key="explore_suite", buttons=True)
    suite_file = files[names.index(suite_name)]
    try:  # read once per version of the file, shared by every session (not copied per run)
        with st.spinner("Loading samples…"):
            view = explore.load_suite_view(suite_file)
    except (samples.SampleError, OSError) as error:
        st.error(f"The suite {suite_name!r} cannot be read: {error}", icon=":material/error:")
        return
    if hidden:
        view = view.keep(hidden.keep(view.rows))
    index, by_id = view.index, view.by_id

    formats, task_ids, depths, widths, id_text = choose_filters(index)
    selected = explore.filter_index(index, formats, task_ids, depths, widths, id_contains=id_text)
    st.caption(f"{len(selected):,} of {plural(len(index), 'sample')} match.")
    if selected.empty:
        st.info("No sample matches these filters.")
        return

    ids = selected["id"].tolist()
    left, right = st.columns([3, 1], vertical_alignment="center")
    light_choice.downloads("explore_download", [light_choice.Download(
        f"Download {len(ids):,} as JSONL", f"{suite_name}-selection.jsonl", lambda: explore.selection_jsonl(by_id[i] for i in ids),
        "application/jsonl", "The samples that match the filters, one JSON object a line")],
        label="Download the samples shown", where=right)
    sample_id = choose_sample(ids, left)
    sample = by_id[sample_id]

    # One block (issue 46): its heading, facts, question and answer were seventeen elements for the browser.
    widgets.html_block(explore.sample_html(sample))
    # Long references scroll inside a fixed frame; short ones take the space they need.
    frame_height = 560 if sample["reference"].count("\n") > 24 else "content"
    # Only the open tab is drawn: each view of a long reference costs the browser a second or more.
    if light_choice.tabs(["Rendered", "Raw text"], key="explore_view", label="Reference") == "Rendered":
        try:
            preview = rendered_view(sample["language"], sample["reference"])
        except PreviewNotNow as busy:
            preview = Preview("none", note=str(busy))
        if preview.note:
            st.caption(preview.note)
        if preview.kind in SHOW_PREVIEW:  # "none" (too large to draw, busy): the note alone, no empty frame
            with st.container(height=frame_height):
                SHOW_PREVIEW[preview.kind](preview.data)
    else:
        lang = HIGHLIGHT.get(sample["language"])
        first = explore.raw_page(sample["reference"])
        if first.whole:
            with st.container(height=frame_height):
                st.code(sample["reference"], language=lang, line_numbers=True)
        else:
            number = st.number_input(f"Page (of {first.pages:,})", min_value=1, max_value=first.pages, step=1,
                                     key=f"explore_raw_page_{sample_id}")
            page = explore.raw_page(sample["reference"], number)
            st.caption(f"Lines {page.first:,}–{page.last:,} of {page.total:,}, {explore.RAW_PAGE_LINES} a page "
                       "(the download above holds the whole file).")
            with st.container(height=frame_height):
                st.code(page.numbered(), language=lang)
