"""StrucText-Eval's section of Home (its ``HOME_VIEW``): the suites on disk, generating them on a
first start, and (admins) generating a suite or serving the authors' released samples."""

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from structext_core import settings, ui
from structext_core.structext_eval import first_start, samples, suites
from structext_core.structext_eval.ui import suites as ui_suites
from structext_core.studio import access
from structext_core.text.safe_text import markdown_table, markdown_text
from structext_core.text.words import plural
from structext_core.ui import widgets

#: Session key: this session saw the first start's generation run (it is told when it ends).
_WATCHED_KEY = "structext_first_start_watched"


@ui.fragment(run_every=1.0)
def first_start_progress(show_paths: bool) -> None:
    """The first start's generation, redrawn every second (the rest of the page, and every other
    page, stays usable); when it ends, the whole page runs again and shows the suites."""
    state = first_start.progress()
    if state is None or state.finished:
        if get_script_run_ctx() is not None and get_script_run_ctx().fragment_ids_this_run:
            st.rerun()  # the fragment's own run: the page shows the suites
        return
    where = f" into `{suites.data_dir()}`" if show_paths else ""
    st.info(f"First start: generating the default suites ({', '.join(state.names)}: "
            f"{plural(state.total, 'sample')}){where}. This takes about "
            f"{duration_words(first_start.expected_seconds(state.names))} on a quiet machine, longer on a busy one; "
            "the other pages can be used meanwhile.")
    st.progress(state.fraction, text=f"{state.done:,} of {plural(state.total, 'sample')} generated, "
                                      f"{duration_words(state.seconds_left())} left")


def duration_words(seconds: float) -> str:
    """``about 3 s``, ``about 2 min``: a time still to go, in words."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def home_view(db, user) -> None:
    """The section, for ``user`` (server paths only for those who may see them)."""
    role = access.role_of(user)
    show_paths = access.can(role, "server_paths")  # a server's folders are the admin's business
    generation = first_start.start() if suites.missing_default_suites() else first_start.progress()
    generating = generation is not None and not generation.finished
    if generating:
        st.session_state[_WATCHED_KEY] = True
        first_start_progress(show_paths)
    elif generation is not None and st.session_state.pop(_WATCHED_KEY, False):  # this session watched it
        if generation.error:
            st.error(f"Generating the default suites ({', '.join(generation.names)}) failed: "
                     f"{markdown_text(generation.error)}. An admin can generate them below.")
        else:
            st.success(f"Generated {', '.join(generation.names)} in {generation.elapsed:,.1f} s"
                       + (f" into `{suites.data_dir()}`." if show_paths else "."))

    st.header("Suites")
    files = suites.suite_files()
    if not files and generating:
        st.caption("The suites show here once they are generated.")
    elif not files:
        st.warning(f"No suite files in `{suites.data_dir()}`." if show_paths
                   else "No suites yet: an admin generates them on this page.")
    for path in files:
        stats = ui_suites.load_summary(path)
        # The figures in the label, its tables drawn only while it is open (opening it reruns the page): open
        # on every visit, the default suites' boxes were ten of Home's elements. The tables are Markdown, where
        # a table element (st.dataframe) took it half a second to load; the figures are one line, where
        # four st.metric loaded a number formatter and a chart library of their own. Closed, a light header;
        # open, an expander; the name in bold in both.
        box = widgets.lazy_section(f"{path.stem}: {suite_figures(stats)}", key=f"home_suite_{path.stem}",
                                   name=path.stem)
        if box is None:
            continue
        with box:
            left, right = st.columns(2)
            left.caption("By format")
            left.markdown(markdown_table(stats["format"]))
            right.caption("By depth and width")
            right.markdown(markdown_table(stats["grid"]))
            where = f"File: `{path}`" if show_paths else f"Suite: **{markdown_text(path.stem)}**"
            st.caption(f"{where} ({path.stat().st_size / 1e6:,.1f} MB)")

    if access.can(role, "load_data"):
        st.header("Add a suite")
        generate_form()
        import_form()


def suite_figures(stats: dict) -> str:
    """A suite's headline figures in a few words (its box's label)."""
    return (f"{plural(stats['samples'], 'sample')} · {plural(stats['formats'], 'format')} · "
            f"{plural(stats['tasks'], 'task')} · mean reference {stats['mean_reference']:,.0f} characters")


def generate_form() -> None:
    """Generate a suite (an admin's, now and then): drawn only while its section is open."""
    box = widgets.lazy_section("Generate a suite", key="home_generate_open", icon=":material/add_circle:")
    if not box:
        return
    with box:
        with st.form("home_generate"):
            c = st.columns(3)
            kind = c[0].selectbox("Suite", ["test", "test-hard", "custom"], key="home_kind")
            seed = c[1].number_input("Seed", min_value=0, value=0, step=1, key="home_seed")
            name = c[2].text_input("Name (custom)", value="custom", key="home_name")
            c2 = st.columns(3)
            depths = c2[0].multiselect("Depths (custom)", [1, 2, 3, 4], default=[1, 2], key="home_depths")
            widths = c2[1].multiselect("Widths (custom)", [1, 2, 3, 4], default=[1], key="home_widths")
            per_cell = c2[2].number_input("Samples per task and cell (custom)", 1, 500, 8, key="home_per_cell")
            go = st.form_submit_button("Generate", type="primary")
        if go:
            try:
                if kind == "custom":
                    suites.check_suite_name(name)
                    config = suites.SuiteConfig(name, tuple(sorted(depths)), tuple(sorted(widths)), int(per_cell))
                else:
                    config, name = suites.SUITES[kind], kind
                config.validate()
            except ValueError as exc:
                st.error(f"Cannot generate: {exc}.")
            else:
                bar = st.progress(0.0, text="Starting…")
                rows = suites.generate_suite(config, seed=int(seed), progress=lambda d, t: bar.progress(d / t, text=f"{d:,} of {plural(t, 'sample')}"))
                samples.write_jsonl(suites.suite_path(name), rows)
                st.success(f"Wrote {plural(len(rows), 'sample')} to `{suites.suite_path(name)}`.")


def import_form() -> None:
    """Serve the authors' released samples (an admin's, once): drawn only while its section is open."""
    box = widgets.lazy_section("Serve the authors' released samples", key="home_import_open",
                               icon=":material/folder_open:")
    if not box:
        return
    with box:
        st.caption("Reads a folder in the authors' layout (`0Shotbenchmark/<format>/<Category>/*.json`) into a "
                   "suite file that Explore and the studies can use.")
        with st.form("home_import"):
            folder = st.text_input("Folder", value=str(settings.official_dir()), key="home_import_folder")
            import_name = st.text_input("Suite name", value="official", key="home_import_name")
            go_import = st.form_submit_button("Import")
        if go_import:
            try:
                count, problems = suites.import_official(folder, import_name)
            except ValueError as exc:
                st.error(f"Cannot import: {exc}.")
            else:
                for problem in problems:
                    st.warning(problem)
                if count:
                    st.success(f"Imported {plural(count, 'sample')} as suite `{import_name}`.")
