"""The views every benchmark gets without writing them (:mod:`structext_core.protocol`'s defaults for
``STUDY_SETUP_VIEW``, ``RESULTS_VIEW`` and ``EXPLORE_VIEW``), for a member that reads its items from
files (``load_items``) kept in its shared place (:mod:`structext_core.evaluation.item_sets`):

- :func:`study_setup`: the lead's form that opens a study over one of its item files;
- :func:`results_view`: people beside models on one item file, broken down by one or two strata;
- :func:`explore_view`: an item file's items as a table (with keys only for those who may see them).

A benchmark declares its own view only to do more; every widget key here carries the benchmark's name.
"""

from __future__ import annotations

import streamlit as st

from structext_core import protocol
from structext_core.evaluation import item_sets
from structext_core.studio import access, data_scope, study
from structext_core.text import limits, safe_text
from structext_core.text.words import plural
from structext_core.ui import benchmark_choice, light_choice, light_form, people_axes, widgets
from structext_core.ui.study_setup import created, files_help, form_key, people_and_rule_fields, people_and_rule_values
from structext_core.views import benchmark_results, charts, people_vs_models

PERCENT = {c: st.column_config.NumberColumn(c, format="%.1f") for c in ("mean", "ci_low", "ci_high")}


def _key(name: str, what: str) -> str:
    return f"default_{name}_{what}"


def study_setup(db, user: dict, annotators: list[dict], *, benchmark: str) -> None:
    """The lead's form (one light form): a study's name, one of the benchmark's item files, how many
    questions (drawn in proportion to its strata), a seed, annotators, the rule, practice and gold."""
    folder, files = item_sets.data_dir(benchmark), item_sets.item_files(benchmark)
    if not files:
        st.info(safe_text.markdown_text(files_help(user, "No item file yet: put the benchmark's item files", folder,
                                                   "No item file yet: an admin puts the benchmark's item files on "
                                                   "the server.")))
        return
    sent = light_form.form(form_key(_key(benchmark, "setup")), [
        light_form.Text("name", "Study name", placeholder="e.g. pilot-1", max_chars=limits.MAX_NAME_CHARS),
        (light_form.Choice("file", "Item file", {name: name for name in files},
                           help=files_help(user, "The files", folder, "The benchmark's item files on the server.")),
         light_form.Number("n_items", "Number of questions", 40, min_value=1,
                           help="Drawn in proportion to the benchmark's strata."),
         light_form.Number("seed", "Seed of the draw", 0, min_value=0)),
        *people_and_rule_fields(annotators),
    ], "Create study")
    if sent is None:
        return
    try:
        items = item_sets.load(benchmark, sent["file"], for_study=True)
        study_id = study.create_items_study(
            db, benchmark=benchmark, name=sent["name"], source=sent["file"], items=items, n_items=sent["n_items"],
            seed=sent["seed"], created_by=user["id"], **people_and_rule_values(sent))
    except ValueError as error:
        st.error(safe_text.markdown_text(f"The item file was not read, and no study was created. {str(error)[:2000]}"))
        return
    except study.StudyError as error:
        st.error(f"The study was not created. {error}")
        return
    created(db, study_id)


@st.cache_resource(max_entries=8, show_spinner="Reading the item file and the models' answers…")
def _scored(benchmark: str, file_name: str, signature: tuple):
    items = item_sets.load(benchmark, file_name)
    return items, benchmark_results.model_rows(benchmark, file_name, items)


#: The default Results view's state in the address (besides ``benchmark``): the item file, the breakdown
#: (a preset or field: ``by``; two fields together: ``pair``, twice), each person apart (``each=1``) and
#: the questionnaire field people are split by (``split``).
URL_KEYS = ("file", "by", "pair", "each", "split")


def _read_url(benchmark: str, files: list[str]) -> None:
    """A pasted link (or a reload) opens the view it names: its file now, its breakdown once the fields
    are known (:func:`_url_choice`); what it gets wrong is ignored, as the Benchmark choice does."""
    current, state = benchmark_choice.url_now(), st.session_state
    if not current or benchmark_choice.written_by_page(current) or current == state.get(_key(benchmark, "url_read")):
        return
    state[_key(benchmark, "url_read")] = current
    wanted = {key: current.get(key, [])[:2] for key in URL_KEYS}
    if wanted["file"] and wanted["file"][-1] in files:
        state[_key(benchmark, "file")] = wanted["file"][-1]
    state[_key(benchmark, "each")] = wanted["each"][-1:] == ["1"]
    state[_key(benchmark, "url_by")] = (wanted["by"][-1:] or [None])[0], wanted["pair"]
    state[_key(benchmark, "url_split")] = (wanted["split"][-1:] or [None])[0]  # set once the fields are known


def _url_choice(benchmark: str, presets: dict, fields: list[str]) -> None:
    """The breakdown a link named, set on the picker when its fields are those this file has."""
    by, pair = st.session_state.pop(_key(benchmark, "url_by"), (None, []))
    choices = [*presets, *fields]
    if by in choices:
        st.session_state[_key(benchmark, "by")] = by
    columns = {c for cols in presets.values() for c in cols} | set(fields)
    if len(pair) == 2 and set(pair) <= columns:
        st.session_state[_key(benchmark, "by_pair")] = list(pair)


def _write_url(benchmark: str) -> None:
    """This run's view in the address (only when it changed), so a reload or a copied link opens it again."""
    state = st.session_state
    wanted = {"benchmark": [benchmark]}
    if state.get(_key(benchmark, "file")):
        wanted["file"] = [str(state[_key(benchmark, "file")])]
    if state.get(_key(benchmark, "by")):
        wanted["by"] = [str(state[_key(benchmark, "by")])]
    if len(state.get(_key(benchmark, "by_pair")) or ()) == 2:
        wanted["pair"] = [str(v) for v in state[_key(benchmark, "by_pair")]]
    if state.get(_key(benchmark, "each")):
        wanted["each"] = ["1"]
    if state.get(_key(benchmark, "split")):
        wanted["split"] = [str(state[_key(benchmark, "split")])]
    if wanted != benchmark_choice.url_now():
        st.query_params.from_dict(wanted)
    state[benchmark_choice.RESULTS_URL_WRITTEN] = wanted


def results_view(db, user, *, benchmark: str) -> None:
    """People beside the models' answers kept with an item file, on the same items, with intervals; the
    address records the benchmark and the view (:data:`URL_KEYS`)."""
    try:
        _results_view(db, user, benchmark=benchmark)
    finally:
        _write_url(benchmark)


def _results_view(db, user, *, benchmark: str) -> None:
    display = protocol.display_name(benchmark)
    st.subheader(f"{display}: people beside models")
    if not access.can(access.role_of(user), "answers", access.public_mode(db)):
        st.caption("These results are shown to researchers and admins.")
        return
    visible = data_scope.results_studies(db, user)
    files = benchmark_results.files_with_studies(db, benchmark, visible)
    if not files:
        st.info(f"No study of {display} has answers yet (or none you may see).")
        return
    _read_url(benchmark, files)
    file_name = light_choice.choose("Item file", files, key=_key(benchmark, "file"))
    if access.can(access.role_of(user), "load_data", access.public_mode(db)):
        add_models_answers(benchmark, file_name)
    people = benchmark_results.people_rows(db, benchmark, file_name, visible)
    if people.empty:
        st.info("No counted answers of people on this file yet: they show here once people answer.")
        return
    where = item_sets.predictions_dir(benchmark, file_name)
    try:
        _, models = _scored(benchmark, file_name, item_sets.files_signature(benchmark, file_name))
    except (ValueError, OSError) as error:
        st.warning(safe_text.markdown_text(f"{file_name} cannot be read now, so no model's answers are shown "
                                           f"beside the people: {str(error)[:1000]}"))
        models = benchmark_results.Models(people.iloc[:0])
    for problem in models.problems:
        st.warning(safe_text.markdown_text(f"Left out: {problem}"))
    if models.rows.empty:
        st.caption(safe_text.markdown_text(f"No models' answers kept for this file: add them above (admins), or put "
                                           f"JSON-lines predictions ({{id, model, answer}}) or Inspect AI logs (.eval) "
                                           f"in {where}."))
    else:
        st.caption(safe_text.markdown_text(f"Models' answers from {', '.join(models.files)}."))
    frame = benchmark_results.combined(people, models.rows)
    presets, fields = benchmark_results.breakdowns(benchmark), benchmark_results.facet_names(frame, benchmark)
    _url_choice(benchmark, presets, fields)
    by = widgets.axes_picker("Break down by", presets, fields, key=_key(benchmark, "by"), default="Overall")
    left, right = st.columns(2, vertical_alignment="bottom")
    axes = benchmark_results.people_axes(db, benchmark, file_name, visible)
    if (named := st.session_state.pop(_key(benchmark, "url_split"), None)) in [a.name for a in axes]:
        st.session_state[_key(benchmark, "split")] = named
    split = people_axes.split_people_by(axes, _key(benchmark, "split"), right)
    each = left.toggle("Each person apart", key=_key(benchmark, "each"), disabled=split is not None)
    order = ()
    if split is not None:  # each group of people one row (each answer still once)
        frame = benchmark_results.combined(
            benchmark_results.people_rows(db, benchmark, file_name, visible, split_by=split), models.rows)
        order = benchmark_results.split_order(db, benchmark, file_name, visible, split)
    table = benchmark_results.beside(frame, by, each_person=each or split is not None, people_order=order)
    scope = people_vs_models.ItemScope(people_vs_models.POOL, people_vs_models.answered_items(frame))
    st.caption(safe_text.markdown_text(scope.sentence(frame)) + " Accuracy in percent with a 95% bootstrap "
               "interval; n: answers (people) or items (models; a model's epochs on an item averaged).")
    label = " x ".join(by) if by else "overall"
    chart = charts.interval_bars_chart(table, "group_of", "model", f"People beside models: {label}",
                                       "accuracy (%)", label)
    st.altair_chart(chart, width="content", key=_key(benchmark, "chart"))  # its own width: the legend stays in view
    # The chart's figures as a table, drawn only while its box is open (opening it reruns the page): a grid
    # costs the page about 0.6 s in the browser. Its label stays the same, so it stays open across breakdowns.
    box = widgets.lazy_section("The chart's figures: mean, 95% interval and n of each row",
                               key=_key(benchmark, "table_open"), icon=":material/table:")
    if box:
        box.dataframe(table.rename(columns={"group_of": label}), hide_index=True, key=_key(benchmark, "table"),
                      column_config=PERCENT)
    if len(models.logged):
        items, _ = _scored(benchmark, file_name, item_sets.files_signature(benchmark, file_name))
        logged = benchmark_results.logged_beside(benchmark, models, items, set(people["sample_id"]))
        st.markdown("**The models' own Inspect scores beside ours**")
        st.caption("On the items people answered: each model's score as its own Inspect log records it (its "
                   "scorer), beside the score by this benchmark's rule (percent); the items where the two differ "
                   "are named.")
        # one row a model: a plain table (a grid costs the page about 0.6 s)
        st.table(logged.assign(**{c: logged[c].map("{:.1f}".format) for c in ("rescored", "in its log")}),
                 hide_index=True)


def add_models_answers(benchmark: str, file_name: str) -> None:
    """Admins: a file of models' answers to ``file_name`` uploaded, checked against its items by the
    readers this view reads them with, and kept with it (:func:`item_sets.store_predictions`); its
    problems (the first 20) shown and nothing kept when it has any. Stored before the view reads
    the models' answers, so the table below has the new model at once."""
    box = widgets.lazy_section("Add models' answers", key=_key(benchmark, "answers_open"), icon=":material/upload_file:")
    if not box:  # its uploader is drawn only while it is open (opening it reruns the page)
        return
    with box:
        turn = st.session_state.get(_key(benchmark, "answers_turn"), 0)  # a new uploader after each file kept
        chosen = st.file_uploader(
            f"Models' answers to {file_name}: JSON lines, one {{id, model, answer}} a line, or an Inspect AI log "
            "(.eval, .json)", type=[s.lstrip(".") for s in item_sets.PREDICTION_SUFFIXES],
            key=_key(benchmark, f"answers_{turn}"),
            max_upload_size=item_sets.MAX_PREDICTION_UPLOAD_BYTES // 2**20)
        st.caption(safe_text.markdown_text(f"Read and checked against the items of {file_name} before it is kept, "
                                           "under its own name (never over another file)."))
        if not st.button("Check and keep", type="primary", disabled=chosen is None, key=_key(benchmark, "answers_go")):
            return
        try:
            if chosen.size > item_sets.MAX_PREDICTION_UPLOAD_BYTES:  # said before its bytes are read
                raise ValueError(f"{chosen.name}: {chosen.size:,} bytes; the page stores at most "
                                 f"{item_sets.MAX_PREDICTION_UPLOAD_BYTES:,}")
            with st.spinner("Reading and scoring the answers…"):
                path = item_sets.store_predictions(benchmark, file_name, chosen.name, chosen.getvalue())
        except ValueError as error:
            first, _, rest = str(error).partition("\n")
            st.error(safe_text.markdown_text(f"Nothing was kept. {first}"))
            if rest:
                st.code(rest, language=None, wrap_lines=True)
            return
        st.session_state[_key(benchmark, "answers_turn")] = turn + 1
        st.success(safe_text.markdown_text(f"Kept {path.name} with {file_name}: its models are in the table below."))


def explore_view(db, user, *, benchmark: str) -> None:
    """One item file's items as a table: id, strata, question and options; the key too for those who
    may see it (:func:`structext_core.studio.data_scope.visible_datasets`)."""
    member = protocol.get_module(benchmark)
    files = item_sets.item_files(benchmark)
    if not files:
        st.info(f"{member.DISPLAY_NAME} has no item file yet.")
        return
    file_name = light_choice.choose("Item file", files, key=_key(benchmark, "explore_file"))
    try:
        items = item_sets.load(benchmark, file_name)
    except ValueError as error:
        st.error(safe_text.markdown_text(f"{file_name} cannot be read: {str(error)[:2000]}"))
        return
    with_keys = bool(data_scope.visible_datasets(db, user, benchmark, [file_name]))
    answer = protocol.option(member, "study_answer") or (lambda item: item.get("answer", ""))
    rows = []
    for item in items:
        shown = member.show_question(item)
        row = {"id": member.item_id(item), **{key: item[key] for key in member.STRATA}, "question": shown.text,
               "options": " | ".join(shown.choices)}
        if with_keys:
            row["key"] = str(answer(item))
        rows.append(row)
    st.caption(f"{plural(len(items), 'item')} in {file_name}." + ("" if with_keys else
               " Keys are not shown: open work still seals this file, or your role does not see keys."))
    st.dataframe(rows, hide_index=True, key=_key(benchmark, "explore_table"))
