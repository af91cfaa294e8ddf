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
- ``RESULTS_VIEW``, ``EXPLORE_VIEW``, ``HOME_VIEW``: ``"module:function"`` of its own view on
  Results, Explore and its section of Home (called with ``(db, user)`` by the page); None: Results
  shows the page's own view, Explore says it has none, Home shows its summary only.
- ``load_items(path) -> list[item]``: its items read from a file it names (checked; a ``ValueError``
  naming the line otherwise), so that ``structext items score`` scores replies to them.
- ``study_answer(item) -> str``: the key a person's answer is scored against in a study (an
  option's letter for a multiple-choice item; the item's ``answer`` when it does not say).
- ``STUDY``: a :class:`StudyKind`, how a human-baseline study of
  it scores, checks and breaks down answers (None: it has no studies); ``STUDY_SETUP_VIEW``:
  ``"module:function"`` of the lead's form that opens one (called with ``(db, user, annotators)``).
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
  their keys (:func:`structext_core.studio.access.visible_datasets`); None: it seals none.
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


def plain_reference(language: str | None) -> tuple[str, str | None]:
    """A reference named by its ``language`` stratum as it is, and shown as plain text."""
    return language or "", None


def free_text(response: str, n_options: int) -> str | None:
    """Any text is an answer (``refuse_response`` of a free-text kind)."""
    return None


@dataclass(frozen=True)
class StudyKind:
    """How studies of one benchmark differ (see the module notes)."""

    benchmark: str
    #: ``(answer key, response, gave_up) -> (rouge_l column, exact_match column)``.
    score: Callable[[str | None, str | None, bool], tuple[float, int]]
    #: ``(response, number of options) -> why it is no valid answer, or None``.
    refuse_response: Callable[[str, int], str | None]
    #: The item columns of a response row (dashboard frame, export), in order.
    item_columns: tuple[str, ...]
    #: The dashboard's "Group by" choices: label -> columns.
    groupings: dict[str, list[str]]
    #: Whether the study's answers join StrucText's Results as model rows (``human:<annotator>``).
    model_results: bool
    #: How the dashboard names its score, in one line.
    score_note: str
    #: The columns of the dashboard's "time per cell" table.
    time_cells: tuple[str, ...]
    #: Whether time is set against the item's length (``reference_chars``) on the dashboard.
    time_by_length: bool
    #: How a study names what it draws from (``{suite}``: its suite or data set), in choosers.
    source_label: str
    #: The rule screen's line on how to answer and submit.
    how_to_answer: str
    #: How the lead's "Benchmark" choice names a study of this kind.
    setup_label: str = ""
    #: ``(the item's language stratum) -> (how the question screen and adjudication name its
    #: reference, the code highlighting it is shown with or None)``.
    reference_view: Callable[[str | None], tuple[str, str | None]] = plain_reference


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
                               "INSPECT_SCORER": None}


class RegistryError(RuntimeError):
    """A registered benchmark that cannot be loaded or does not offer the protocol (what and where)."""


def check_member(name: str, module: ModuleType) -> None:
    """Refuse a member module that lacks a required name or whose ``NAME`` is not its entry's name."""
    missing = [attr for attr in INTERFACE if not hasattr(module, attr)]
    if missing:
        raise RegistryError(f"benchmark {name!r} ({module.__name__}) does not offer {', '.join(missing)} "
                            f"(see structext_core.protocol)")
    if module.NAME != name:
        raise RegistryError(f"benchmark {name!r} ({module.__name__}) says its NAME is {module.NAME!r}: "
                            "the entry point's name and NAME must be the same")
    commands = getattr(module, "CLI_COMMANDS", ())
    if commands and not callable(getattr(module, "register_cli", None)):
        raise RegistryError(f"benchmark {name!r} ({module.__name__}) lists CLI_COMMANDS but has no register_cli")


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
    ``STUDY_IMAGE``, ...) as a callable, or None when it declares none."""
    target = option(get_module(name), attr)
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
