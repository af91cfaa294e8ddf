"""The benchmark protocol: what a benchmark declares, and how the workbench finds its members.

A benchmark is one package. Its *member module* declares what an item is, how a question is shown
to a person or a model, how an answer is scored, which axes its results break down by, and the
places of the app and the command line it offers. Code that serves every benchmark reads this
declaration and branches on no benchmark's name, as it branches on no format's name.

**Members are found through the Python entry-point group** :data:`ENTRY_POINT_GROUP`: each entry is
``<name> = "<member module>"``. The built-in benchmarks register the same way, in this project's
``pyproject.toml``; a lab's benchmark registers from its own installed package::

    [project.entry-points."structext_studio.benchmarks"]
    my-bench = "my_lab_bench.member"

**Required** (:data:`INTERFACE`; :func:`check_member` refuses a member without one):

- ``NAME``, ``DISPLAY_NAME``: its key (the entry point's name) and how the app names it.
- ``SUMMARY``: what it asks, in a sentence or two (Home).
- ``PLACES``: where in the app to go for it, as :class:`Place` rows (Home; a role is told only of
  the pages it may open).
- ``ITEM_FIELDS``: the fields of one item, in order.
- ``AXES``: the columns its results break down by, most general first.
- ``STRATA``: the strata of one of its study items, name -> type (``str`` or ``int``), in order:
  what its draws and dashboards group by, stored with the item (``study_items.strata``, JSON) and
  checked on insert by :func:`check_strata`.
- ``item_id(item) -> str``: the item's id, unique within its data set.
- ``show_question(item) -> ShownQuestion``: how the item is put to a model or a person.
- ``score_answer(item, reply) -> float``: the item's score for a reply, in [0, 1].

**Optional** (:data:`OPTIONAL`, with their defaults):

- ``ORDER``: where it stands among the members (lower first; ties by name).
- ``CLI_DESCRIPTION``: the command's description in ``--help`` when it is the first member.
- ``CLI_COMMANDS`` and ``register_cli(subparsers)``: its command-line verbs, added to the
  ``structext`` command's subparsers (the names it adds, so the command line knows they are its);
  a ``register_cli(subparsers, command)`` is also told the verb being run (None: the whole list),
  so that it can leave out verbs slow to load.
- ``load_items(path) -> list[item]``: its items read from a file (checked; a ``ValueError`` naming
  the line otherwise). A member that declares it gets the rest by default: studies
  (``STUDY = StudyKind()``), the lead's study form, a Results section with people beside models,
  Explore, ``structext items score``, exports and the Inspect log, over the item files in its shared
  place (:mod:`structext_core.evaluation.item_sets`): ``<data dir>/<DATA_FOLDER>/`` (default
  ``benchmarks/<NAME>``), files ending in one of ``ITEM_SUFFIXES`` (default ``(".jsonl",)``); its
  models' answers (JSON lines ``{id, model, answer}`` or Inspect logs) in
  ``<that folder>/predictions/<item file name>/``. ``item_names(item) -> tuple[str, ...]``: the ids
  those files may name an item by (default: its ``item_id``). ``load_for_study(path)``: its items
  read for a study, when that asks more than ``load_items`` (images decoded, hashed for the seal;
  default: ``load_items``).
- ``SAMPLE_ITEMS``: the path of a small item file shipped with the package (a demo for a lab, and
  what the members' shared tests, ``tests/protocol/test_members.py``, run every member with it
  through); ``right_reply(item) -> str``: a reply its rule scores right (default: the option letter
  that ``score_answer`` scores 1, or the item's ``answer``).
- ``item_facets(item) -> Mapping[str, str]``: more fields of an item that results may break down by,
  beyond its strata, that differ from data set to data set (a set's metadata, "on an image"); kept
  with each study item and shown as columns of the dashboard, the exports and Results, one or two
  at a time (:func:`clean_facets` bounds them). None: its strata only.
- ``RESULTS_VIEW``, ``EXPLORE_VIEW``, ``HOME_VIEW``: ``"module:function"`` of its own view on
  Results, Explore and its section of Home (called with ``(db, user)`` by the page); None: the
  default view of :mod:`structext_core.ui.defaults` for a member with ``load_items`` (Results,
  Explore), else Results and Explore say it has none; Home shows its summary only.
- ``study_answer(item) -> str``: the key a person's answer is scored against in a study and shown to
  the lead (an option's letter for a multiple-choice item; default: the item's ``answer``).
- ``STUDY``: a :class:`StudyKind`, how a human-baseline study of it scores, checks and shows answers
  (keyword arguments, each defaulted; default ``StudyKind()`` for a member with ``load_items``, else
  no studies). ``STUDY_SETUP_VIEW``: ``"module:function"`` of the lead's form that opens one (called
  with ``(db, user, annotators)``; on success it sets ``st.session_state["sa_study_id"]`` to the new
  study and calls ``st.rerun()``, so Study admin shows it); default: the shared form
  (:func:`structext_core.ui.defaults.study_setup`) for a member with ``load_items``.
  :func:`check_member` refuses studies with neither, and a stratum named like a shared column
  (:data:`RESERVED_STRATA`).
- ``SEAL``: the name of the module holding its part of the seal (:mod:`structext_core.studio.seal`):
  ``is_open_for(db, user_id, item)`` (whether ``item`` is the same item, by content, as an open
  item of the user) and ``seen_keys(db, user_ids)`` (where those people were shown answers
  outside a study: an object with ``where(item)``, ``covers(item)``, ``said(kind, items)`` and
  truth). None: an item is the same as another of the benchmark with its id or with the same
  question and options (:class:`structext_core.studio.seal.ByContent`).
- ``STUDY_IMAGE``: ``"module:function"`` of ``(db, suite, strata, nonce) -> bytes``, the image one of
  its study items is answered from (a PNG, blinded: pixels only, no name or path of its file),
  served by :func:`structext_core.studio.study.item_image` and ``lead_image`` (None: its items show
  no image). A function that takes the keyword ``item`` is also given the stored item
  (``study_items.sample_json``, with its ``image`` field); the shared items study
  (:func:`structext_core.studio.study.create_items_study`) keeps an item's image (``show_question``'s
  ``image``) only for a benchmark that declares ``STUDY_IMAGE``.
- ``CLOCK_BEATS``: the honest clock's kinds of its own timed work (beside a study's question), as
  ``{kind: ("module:function", item is a number)}``; the function books a heartbeat posted to the
  clock's route (:mod:`structext_core.studio.clock_beat`) with ``(db, user_id, item, tab, visible)
  -> (state, active seconds)`` and raises :class:`~structext_core.studio.errors.StudyError` when the
  item is not the user's.
- ``AT_START``: ``"module:function"`` called with no arguments on every run of the app, before the
  page (work a benchmark starts when the app does: it returns at once, and is cheap once done).
- ``SANDBOXED``: ``{name: "module:function"}``, functions of its own that its code runs on untrusted
  input in the sandbox's workers (:mod:`structext_core.studio.sandbox`), by ``name``.
- ``PAGES``: the import name of a module of its own (usually its ``pages`` package) whose ``PAGES``
  are the rows of the pages only it serves (:class:`structext_core.studio.access.Page`, each
  ``file`` named from that module's folder) and whose ``CAPABILITIES`` are the capabilities only it
  uses (:class:`structext_core.studio.access.Capability`). The access table takes them in beside
  its shared rows (a key or a URL declared twice is refused), so who may see them is decided, and
  tested, as for every page; the navigation lists them. None: it has no pages of its own. (A name,
  not the rows: the table imports what the command line does not need.)
- ``PUBLIC_DATA``: what of its data the public read-only mode shows only while it is in no open
  study, in words (``"suites"``); the access table's condition names each member's ("" : none).
- ``sealed_datasets(db) -> set[str]``: the names of its stored data sets that open work (an open
  study, ...) still seals, so that visitors and annotators in public read-only mode do not see
  their keys (:func:`structext_core.studio.data_scope.visible_datasets`); None: it seals none.
- ``study_keep(item) -> dict``: what more of an item a study keeps with it for its exports (JSON
  values, stored under ``kept`` in the study item, never shown to an annotator); None: nothing more.
- ``log_item(stored, strata, source) -> LoggedItem``: how one of its study items reads in an Inspect
  AI log of the study's answers (:mod:`structext_core.studio.study.inspect_log`): the sample's id,
  input, choices, target and image, from the stored item (``study_items.sample_json``), its strata
  and the study's data set (``studies.suite``); None:
  :func:`plain_log_item`. ``INSPECT_SCORER``: the name the study's scores carry in that log (a
  model task's scorer of the same name puts people and models in one column of Inspect's data
  frames); None: ``<name>_score``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

#: The entry-point group every benchmark registers in.
ENTRY_POINT_GROUP = "structext_studio.benchmarks"


@dataclass(frozen=True)
class ShownQuestion:
    """One question as it is put to a model or a person.

    ``text``: the user prompt; ``system``: the system prompt ("" for none); ``choices``: the
    options of a multiple-choice question, lettered A, B, ... in order (empty for free text);
    ``image``: the path of an image shown beside the text, relative to the data set (None for text only).
    """

    text: str
    system: str = ""
    choices: tuple[str, ...] = ()
    image: str | None = None


@dataclass(frozen=True)
class Place:
    """Where to go for a benchmark: a page (its key in the access table, ``structext_core.studio.access.pages()``) and
    what it offers there; ``chooses_benchmark``: the page reads ``?benchmark=<name>`` and opens on it."""

    page: str
    text: str
    chooses_benchmark: bool = False


def free_text(response: str, n_options: int) -> str | None:
    """Any text is an answer (``refuse_response`` of a free-text kind)."""
    return None


class StudyScore(tuple):
    """One answer's score as a study stores it: ``score`` in [0, 1] (the studio counts a score below
    its pass mark, :data:`structext_core.studio.study.store.PASS_THRESHOLD`, as 0) and ``exact``
    (whether the answer is exactly the key; for a right-or-wrong benchmark, whether it is right)."""

    def __new__(cls, score: float, exact: bool | int):
        return super().__new__(cls, (float(score), int(bool(exact))))

    @property
    def score(self) -> float:
        return self[0]

    @property
    def exact(self) -> int:
        return self[1]


@dataclass(frozen=True, kw_only=True)
class StudyKind:
    """How a human-baseline study of one benchmark scores, checks and shows its answers. Every field
    has a default, so ``StudyKind()`` is a whole declaration: a benchmark declares only what it does
    differently. The studio reads the kind through
    :func:`structext_core.studio.study.kinds.kind_of`, which fills each ``None`` below from the
    member module (its ``STRATA``, ``DISPLAY_NAME`` and ``score_answer``).
    """

    #: ``(answer key, response, gave_up) -> score`` of one answer: a float in [0, 1], or a
    #: :class:`StudyScore` (score, exact). None (the default): the member's
    #: ``score_answer(item, response)`` on the item kept with the study; a give-up scores 0.
    score: Callable[[str | None, str | None, bool], float | tuple] | None = None
    #: ``(response, number of options) -> why it is no valid answer, or None``. Default
    #: (:func:`structext_core.studio.study.kinds.choice_or_text`): one clear option letter when the
    #: item has options, else a non-empty text of at most 1,000 characters.
    refuse_response: Callable[[str, int], str | None] | None = None
    #: The item columns of the dashboard's frame and the export, in order. None: its ``STRATA``.
    item_columns: tuple[str, ...] | None = None
    #: The dashboard's "Group by" choices, label -> columns. None: the annotator, each stratum
    #: alone and the first two strata together.
    groupings: Mapping[str, list[str]] | None = None
    #: Whether the study's answers join the benchmark's imported model results as model rows.
    model_results: bool = False
    #: How the dashboard names its score, in one line.
    score_note: str = ("Score: accuracy, the share of answers scored right by the benchmark's rule, in percent "
                       "(a give-up is wrong). Intervals: 95% bootstrap over answers.")
    #: The columns of the dashboard's "time per cell" table. None: its first two strata.
    time_cells: tuple[str, ...] | None = None
    #: Whether time is set against the item's length (``reference_chars``) on the dashboard.
    time_by_length: bool = False
    #: How a study names what it draws from, in choosers (``{suite}``: its data set;
    #: ``{benchmark}``: the benchmark's display name).
    source_label: str = "{benchmark} {suite}"
    #: The rule screen's line on how to answer and submit. None: a sentence for options and text.
    how_to_answer: str | None = None
    #: How the lead's "Benchmark" choice names a study of this kind. None: its display name.
    setup_label: str | None = None
    #: ``(the item's strata) -> (how the question screen and adjudication name the item's reference
    #: text, a code highlighting for it or None)``. Both pages show the reference as plain monospace
    #: text with line numbers, as the annotators read it, so no page uses the highlighting now (the
    #: pair stays, for members outside this repository). None: its items have no reference panel (the
    #: question, options and image are all a person reads).
    reference_view: Callable[[Mapping], tuple[str, str | None]] | None = None
    #: The name of the graded score a text answer gets (shown beside each answer in adjudication, as
    #: "ROUGE-L 0.812"). None: answers are right or wrong by the benchmark's rule.
    score_label: str | None = None
    #: ``(the item's strata) -> what the item is, in a few words`` (adjudication's list and heading).
    #: None: each stratum as ``name value``, `` · `` apart.
    describe_item: Callable[[Mapping], str] | None = None
    #: The benchmark's name (filled in by ``kind_of``; a member need not say it).
    benchmark: str = ""


#: The most facets an item keeps, and the longest name and value of one.
MAX_FACETS, MAX_FACET_CHARS = 20, 100


def clean_facets(member: ModuleType, item: Mapping) -> dict[str, str]:
    """The member's ``item_facets(item)`` as a study keeps them: text values, at most
    :data:`MAX_FACETS`, names and values cut at :data:`MAX_FACET_CHARS`, none named like a stratum
    or a shared column (:data:`RESERVED_STRATA`: such a field is kept as ``<name> (field)``)."""
    facets = getattr(member, "item_facets", None)
    if facets is None:
        return {}
    out: dict[str, str] = {}
    for key, value in dict(facets(item)).items():
        name = str(key)[:MAX_FACET_CHARS]
        if name in RESERVED_STRATA or name in member.STRATA:
            name = f"{name} (field)"
        if len(out) < MAX_FACETS and value is not None and not isinstance(value, (dict, list, tuple)):
            out[name] = str(value)[:MAX_FACET_CHARS]
    return out


def describe_strata(strata: Mapping) -> str:
    """Each stratum as ``name value``, `` · `` apart (the default ``describe_item``)."""
    return " · ".join(f"{key} {value}" for key, value in strata.items())


def stratum_label(key: str) -> str:
    """How a stratum's name reads as a heading: ``task_id`` -> ``Task id``."""
    return key.replace("_", " ").capitalize()


@dataclass(frozen=True)
class LoggedItem:
    """One study item as an Inspect AI log's sample shows it: ``id`` (as the benchmark's model tasks
    name the item, so that people and models line up by id), ``input`` (the question as the person
    saw it, in text), ``choices`` (the options, empty for free text), ``target`` (the key: a text,
    or the accepted answers) and ``image`` (the image shown beside it, if any)."""

    id: str
    input: str
    target: str | tuple[str, ...]
    choices: tuple[str, ...] = ()
    #: The image shown with the question, as a ``data:image/...;base64,`` URI (None: text only).
    image: str | None = None


def plain_log_item(stored: Mapping, strata: Mapping, source: str = "") -> LoggedItem:
    """A stored study item as a log's sample: its id, its reference, question and requirement as
    shown (the non-empty ones, a blank line apart), its options, and its answer key."""
    text = "\n\n".join(str(stored[key]) for key in ("reference", "question", "requirement") if stored.get(key))
    return LoggedItem(id=str(stored["id"]), input=text, target=str(stored.get("answer") or ""),
                      choices=tuple(str(option) for option in stored.get("options") or ()))


@dataclass(frozen=True)
class Benchmark:
    """A member of the registry: its member module's import name and its display name."""

    module: str
    display_name: str


#: What every member module offers (see above).
INTERFACE = ("NAME", "DISPLAY_NAME", "SUMMARY", "PLACES", "ITEM_FIELDS", "AXES", "STRATA", "item_id",
             "show_question", "score_answer")
#: What a member may offer, and what it means when it does not.
OPTIONAL: dict[str, object] = {"ORDER": 100, "CLI_COMMANDS": (), "CLI_DESCRIPTION": None, "register_cli": None, "RESULTS_VIEW": None,
                               "EXPLORE_VIEW": None, "STUDY": None, "STUDY_SETUP_VIEW": None,
                               "load_items": None, "study_answer": None, "STUDY_IMAGE": None,
                               "CLOCK_BEATS": {}, "SANDBOXED": {}, "AT_START": None,
                               "SEAL": None, "HOME_VIEW": None, "PAGES": None, "PUBLIC_DATA": "",
                               "sealed_datasets": None, "study_keep": None, "log_item": None,
                               "INSPECT_SCORER": None, "DATA_FOLDER": None, "ITEM_SUFFIXES": (".jsonl",),
                               "item_names": None, "SAMPLE_ITEMS": None, "right_reply": None,
                               "item_facets": None, "load_for_study": None}
#: The views a member that reads its items from files (``load_items``) gets when it declares none
#: (:mod:`structext_core.ui.defaults`, called with the benchmark's name as ``benchmark=``).
DEFAULT_VIEWS = {"STUDY_SETUP_VIEW": "structext_core.ui.defaults:study_setup",
                 "RESULTS_VIEW": "structext_core.ui.defaults:results_view",
                 "EXPLORE_VIEW": "structext_core.ui.defaults:explore_view"}
#: The columns every study frame and export has beside an item's strata (:func:`check_member`
#: refuses a stratum of one of these names: it would hide the shared column).
RESERVED_STRATA = frozenset({
    "response_id", "study", "suite", "annotator", "user_id", "seq", "item_id", "item_position", "sample_id", "item",
    "reference_chars", "answer", "response", "gave_up", "first_shown_at", "submitted_at", "elapsed_seconds",
    "paused_seconds", "idle_seconds", "away_seconds", "wall_seconds", "pause_count", "idle_pauses", "takeovers",
    "rouge_l", "exact_match", "kind", "score", "score_auto", "score_override", "override_reason", "override_by",
    "override_at", "passed", "benchmark", "model", "value", "group", "group_of", "mean", "n", "ci_low",
    "ci_high", "items", "flagged_fast", "rouge_l_auto", "annotator_removed", "strata",
})


class RegistryError(RuntimeError):
    """A registered benchmark that cannot be loaded or does not offer the protocol (what and where)."""


def declared_study(module: ModuleType) -> StudyKind | None:
    """The ``STUDY`` a member declares, or the default ``StudyKind()`` for a member that declares
    none but reads its items from files (``load_items``); None: it has no studies."""
    if hasattr(module, "STUDY"):
        return module.STUDY
    return StudyKind() if callable(getattr(module, "load_items", None)) else None


def check_member(name: str, module: ModuleType) -> None:
    """Refuse a member module that does not offer the protocol, with a message naming the member and
    what to change: a required name missing, a ``NAME`` that is not its entry's name, a stratum of a
    reserved name or an unknown type, a ``StudyKind`` that is not one, studies with no form to open
    them (neither ``load_items``, for the default form, nor ``STUDY_SETUP_VIEW``), a grouping or item
    column that is no stratum, or ``CLI_COMMANDS`` without ``register_cli``."""
    where = f"benchmark {name!r} ({module.__name__})"
    missing = [attr for attr in INTERFACE if not hasattr(module, attr)]
    if missing:
        raise RegistryError(f"{where} does not offer {', '.join(missing)} (see structext_core.protocol)")
    if module.NAME != name:
        raise RegistryError(f"{where} says its NAME is {module.NAME!r}: the entry point's name and NAME must be the same")
    commands = getattr(module, "CLI_COMMANDS", ())
    if commands and not callable(getattr(module, "register_cli", None)):
        raise RegistryError(f"{where} lists CLI_COMMANDS but has no register_cli")
    strata = module.STRATA
    if not isinstance(strata, Mapping):
        raise RegistryError(f"{where}: STRATA must be a mapping of stratum name -> str or int")
    for key, kind in strata.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise RegistryError(f"{where}: stratum {key!r} must be a name (letters, digits and _)")
        if key in RESERVED_STRATA:
            raise RegistryError(f"{where}: stratum {key!r} has the name of a shared column of studies and exports; "
                                "call it something else")
        if kind not in (str, int):
            raise RegistryError(f"{where}: stratum {key!r} must be str or int, not {kind!r}")
    study = declared_study(module)
    if study is None:
        return
    if not isinstance(study, StudyKind):
        raise RegistryError(f"{where}: STUDY must be a StudyKind(...), not {type(study).__name__}")
    if getattr(module, "STUDY_SETUP_VIEW", None) is None and not callable(getattr(module, "load_items", None)):
        raise RegistryError(f"{where} declares STUDY but no form to open one: declare load_items (the lead's default "
                            "form then draws from its item files) or STUDY_SETUP_VIEW")
    named = {column for columns in (study.groupings or {}).values() for column in columns}
    named |= set(study.item_columns or ()) | set(study.time_cells or ())
    unknown = sorted(named - set(strata) - {"annotator", "reference_chars"})
    if unknown:
        raise RegistryError(f"{where}: STUDY names {', '.join(map(repr, unknown))}, which is no stratum of it "
                            f"(its strata: {', '.join(strata) or 'none'})")


_lock = threading.Lock()
_members: dict[str, ModuleType] | None = None


def _load() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in found:
            continue  # the first distribution on the path wins, as for console scripts
        try:
            module = importlib.import_module(entry.value.split(":")[0])
        except Exception as exc:  # noqa: BLE001 - the message names the member and the cause
            raise RegistryError(f"benchmark {entry.name!r} ({entry.value}) cannot be loaded: "
                                f"{type(exc).__name__}: {exc}") from exc
        check_member(entry.name, module)
        same = [name for name, other in found.items() if other.DISPLAY_NAME.casefold() == module.DISPLAY_NAME.casefold()]
        if same:  # people tell benchmarks apart by these names (Home, every chooser)
            raise RegistryError(f"benchmarks {same[0]!r} and {entry.name!r} ({entry.value}) both call themselves "
                                f"{module.DISPLAY_NAME!r}: give one another DISPLAY_NAME")
        found[entry.name] = module
    if not found:
        raise RegistryError(f"no benchmark is registered in the entry-point group {ENTRY_POINT_GROUP!r}: install "
                            "the project (pip install -e .) so that its built-in benchmarks are found")
    return dict(sorted(found.items(), key=lambda kv: (option(kv[1], "ORDER"), kv[0])))


def members() -> dict[str, ModuleType]:
    """Every registered benchmark's member module by name, in the app's order (loaded once)."""
    global _members
    if _members is None:
        with _lock:
            if _members is None:
                _members = _load()
    return _members


def reload() -> dict[str, ModuleType]:
    """Look the entry points up again (after a distribution was added to the path, as a test does)."""
    global _members
    with _lock:
        _members = None
    return members()


def option(module: ModuleType, attr: str):
    """A member's optional declaration, or its default (:data:`OPTIONAL`)."""
    return getattr(module, attr, OPTIONAL[attr])


def get_module(name: str) -> ModuleType:
    """The member module of the benchmark ``name`` (a ``KeyError`` naming the known ones otherwise)."""
    found = members()
    if name not in found:
        raise KeyError(f"no benchmark {name!r}; the benchmarks are {', '.join(found)}")
    return found[name]


def names() -> list[str]:
    """The registered benchmarks' names, in the app's order."""
    return list(members())


def display_name(name: str) -> str:
    return get_module(name).DISPLAY_NAME


def resolve(target: str) -> Callable:
    """The function a member names as ``"module:function"`` (imported when first asked for)."""
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def view(name: str, attr: str) -> Callable | None:
    """A member's own hook named as ``"module:function"`` (``RESULTS_VIEW``, ``EXPLORE_VIEW``,
    ``STUDY_IMAGE``, ...) as a callable; for a view it does not declare, the default view
    (:data:`DEFAULT_VIEWS`, given ``benchmark=name``) when it reads its items from files
    (``load_items``); else None."""
    member = get_module(name)
    target = option(member, attr)
    if target is None and attr in DEFAULT_VIEWS and callable(getattr(member, "load_items", None)):
        return functools.partial(resolve(DEFAULT_VIEWS[attr]), benchmark=name)
    return None if target is None else resolve(target)


def declared(attr: str) -> dict[str, object]:
    """Every member's entries of a mapping it may declare (``CLOCK_BEATS``, ``SANDBOXED``), merged
    in the app's order; a :class:`RegistryError` naming both when two members declare one key."""
    merged: dict[str, object] = {}
    owner: dict[str, str] = {}
    for name, module in members().items():
        for key, value in option(module, attr).items():
            if key in merged:
                raise RegistryError(f"benchmarks {owner[key]!r} and {name!r} both declare {attr} {key!r}")
            merged[key], owner[key] = value, name
    return merged



def owner_of_command(command: str) -> str | None:
    """The benchmark whose command-line verb ``command`` is (None: a shared verb)."""
    for name, module in members().items():
        if command in option(module, "CLI_COMMANDS"):
            return name
    return None


def __getattr__(attr: str):
    # NAMES and REGISTRY read as before, from the entry points (loaded at first use, not at import:
    # the member modules import this one).
    if attr == "NAMES":
        return names()
    if attr == "REGISTRY":
        return {name: Benchmark(module.__name__, module.DISPLAY_NAME) for name, module in members().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def check_strata(name: str, strata: Mapping) -> dict:
    """``strata`` checked against the ``STRATA`` the benchmark ``name`` declares; returns them as a
    plain dict in the declared order.

    Raises ``KeyError`` for an unknown benchmark (as :func:`get_module`) and ``ValueError`` naming
    the field for a missing or unknown stratum or a value of the wrong type (``bool`` is not an
    ``int``; no value may be None).
    """
    declared: Mapping[str, type] = get_module(name).STRATA
    if not isinstance(strata, Mapping):
        raise ValueError(f"{name} strata must be a mapping of {', '.join(declared)}, got {type(strata).__name__}")
    unknown = [key for key in strata if key not in declared]
    if unknown:
        raise ValueError(f"{name} has no stratum {unknown[0]!r}; its strata are {', '.join(declared)}")
    checked = {}
    for key, kind in declared.items():
        if key not in strata:
            raise ValueError(f"{name} stratum {key!r} is missing; its strata are {', '.join(declared)}")
        value = strata[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{name} stratum {key!r} must be {'an integer' if kind is int else 'a text'}, "
                             f"got {value!r}")
        checked[key] = value
    return checked
