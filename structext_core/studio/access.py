"""Who sees what: the one table of roles, pages and capabilities, and the functions that decide.

Every page guard (``ui.require_page``), the navigation in ``app.py``, the filters on Explore
and Results, and the docs' "Who sees what" page (docs/reference/access.md) read this module; nothing else decides.

The table is one: the shared pages and capabilities written here, and the ones a benchmark
declares for itself (the module its member names as ``PAGES``, :mod:`structext_core.protocol`, with
rows ``PAGES`` and ``CAPABILITIES``: the pages only it serves live in its package), put together
by :func:`pages` and :func:`capabilities`. A key (or a page's URL) declared twice is refused with a
message naming both declarers. ``PAGES`` and ``CAPABILITIES`` read as the assembled table.

Roles: ``visitor`` (not logged in), ``annotator``, ``researcher``, ``lead``, ``admin``. A ``lead``
sees what a researcher sees and runs the studies they lead (which ones is decided per study by
:mod:`structext_core.studio.study.leads`, ``study_leads``; an admin runs every study); a lead
administers nothing else (accounts, the public read-only mode, server paths). A rule grants a
page or a capability to some roles always, and to more roles only while an admin has turned
on the *public read-only mode*. What the public roles then see is limited to suites that are
in no open study, and never a sample of an open study (what of the stored data each person may read,
by these rules, is :mod:`structext_core.studio.data_scope`; a benchmark's own views withhold more of
its open items, in its package).

The sealing rule behind it: an annotator (and anyone not logged in) never gets the answer,
the rule hint or another person's response of an item someone may still answer. For the
services that compute or show answers to the annotators themselves (the rewriting page's answer
check, practice feedback, correctness notes) the rule is stated once, with its open items, in
:mod:`structext_core.studio.seal`.

No Streamlit here: this is tested as plain Python (tests/studio/test_access.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from structext_core import protocol
from structext_core.studio.storage import write_transaction

VISITOR, ANNOTATOR, RESEARCHER, LEAD, ADMIN = "visitor", "annotator", "researcher", "lead", "admin"
#: Every role, the least trusted first. ``visitor`` is nobody logged in (not an account role).
ROLES = (VISITOR, ANNOTATOR, RESEARCHER, LEAD, ADMIN)
ROLE_PLURALS = {VISITOR: "visitors", ANNOTATOR: "annotators", RESEARCHER: "researchers", LEAD: "leads",
                ADMIN: "admins"}
#: The roles that run studies: an admin every study, a lead those they lead (study/leads.py).
STUDY_RUNNERS = (LEAD, ADMIN)
PUBLIC_MODE_KEY = "public_read_only"
HUMAN_SOURCE_PREFIX = "human-study:"  # the source label of human rows (as results_store)
#: What the public read-only mode keeps back, after the data each benchmark names (its ``PUBLIC_DATA``).
PUBLIC_CONDITION_TAIL = "in no open study, never a sample of an open study"
#: A shared row's condition that reads :func:`public_condition` (filled in when the table is put together).
_PUBLIC = "{public condition}"


class AccessError(PermissionError):
    """Someone asked for a change their role may not make; the message says who may."""


@dataclass(frozen=True)
class Rule:
    """Roles granted something ``always``, and ``public`` roles granted it only while the
    public read-only mode is on (limited as ``condition`` says)."""

    always: frozenset[str]
    public: frozenset[str] = frozenset()
    condition: str = ""

    def allows(self, role: str, public_mode_on: bool = False) -> bool:
        """Whether ``role`` has it (with the public read-only mode on or off)."""
        return role in self.always or (public_mode_on and role in self.public)


def rule(always: Iterable[str], public: Iterable[str] = (), condition: str = "") -> Rule:
    """A :class:`Rule`: the roles that have it always, and those that have it in public read-only mode."""
    return Rule(frozenset(always), frozenset(public), condition)


_rule = rule


@dataclass(frozen=True)
class Page:
    """A page of the app: where it lives, how the navigation shows it, who may open it."""

    key: str
    #: The page's script: a shared page's file in ``pages/``; a benchmark's page names its file from the
    #: folder of the module that declares it (its ``pages`` package), and the assembled table holds the full path.
    file: str
    title: str
    icon: str
    section: str
    url_path: str  # the URL slug Streamlit serves the page under ("" for the default page)
    rule: Rule
    shows: str = ""  # what the page shows each role, where that differs (docs/reference/access.md)
    default: bool = False
    #: Where it stands in its section, lower first (ties: shared pages first, then the benchmarks in their order).
    order: int = 50
    #: Whether the page has work for a person now, as ``"module:function"`` taking ``(db, user)`` (the test its own
    #: "nothing for you yet" message makes): the navigation lists the page only while it does
    #: (:func:`has_work`); its URL still opens it, with that message. Empty: always listed.
    work: str = ""
    #: Whether the navigation lists it (to the roles that may open it); an unlisted page is reached by its
    #: URL alone (the join page, opened by a study link).
    listed: bool = True


@dataclass(frozen=True)
class Capability:
    """Something a page may show or do, beyond opening it."""

    key: str
    label: str
    rule: Rule


EVERYONE = ROLES
# ---------------------------------------------------------------- THE table: its shared rows
SHARED_PAGES: tuple[Page, ...] = (
    Page("home", "home.py", "Home", ":material/home:", "Benchmark", "", _rule(EVERYONE), default=True, order=10),
    Page("explore", "explore.py", "Explore", ":material/search:", "Benchmark", "explore",
         _rule((RESEARCHER, LEAD, ADMIN), (VISITOR, ANNOTATOR), _PUBLIC), order=20),
    Page("results", "results.py", "Results", ":material/monitoring:", "Benchmark", "results",
         _rule(EVERYONE),
         shows="visitors and annotators: the paper's tables (in public read-only mode also model results "
               "of data sets in no open study); researchers, leads and admins: also imported and human results, "
               "and each benchmark's human side (people beside the models, a human rank); loading data "
               "(bringing a set): leads and admins; the choices people made, the disagreements and sending "
               "questions back to review: admins",
         order=30),
    Page("human_baseline", "human_baseline.py", "Human baseline", ":material/timer:", "Annotate",
         "human_baseline", _rule((ANNOTATOR, ADMIN)), work="structext_core.studio.study.store:has_open_study",
         shows="annotators: their own current question (a reference, question and requirement; or a question "
               "with its options, and an image as blinded pixels), an answer key only after a practice answer; "
               "never a key of an item they may still answer, another person's answer, or what names an image "
               "item's maker, source or file", order=10),
    Page("join", "join.py", "Join a study", ":material/login:", "Annotate", "join", _rule(EVERYONE),
         shows="anyone who opens a study link: their own new account in that study, its resume code once, or "
               "the resume form; nothing of anyone else (not listed in the navigation)",
         order=90, listed=False),
    Page("study_admin", "study_admin.py", "Studies", ":material/science:", "Admin", "study_admin",
         _rule(STUDY_RUNNERS, condition="a lead: only the studies they lead"),
         shows="leads: the studies they lead (set up, follow, preview as an annotator, export; a study a "
               "lead sets up is theirs); admins: every study, and who leads each", order=10),
    Page("adjudication", "adjudication.py", "Adjudication", ":material/gavel:", "Admin", "adjudication",
         _rule(STUDY_RUNNERS, condition="a lead: only the studies they lead"),
         shows="leads: the studies they lead; admins: every study", order=20),
    Page("accounts", "accounts.py", "Accounts", ":material/manage_accounts:", "Admin", "accounts", _rule((ADMIN,)),
         order=90),
    # The navigation's last section: the person's own account (no button in the sidebar, issue 46).
    Page("account", "account.py", "Change password", ":material/password:", "Your account", "account",
         _rule((ANNOTATOR, RESEARCHER, LEAD, ADMIN)), work="structext_core.studio.accounts.credentials:has_own_password",
         shows="anyone logged in: their own password, changed with the current one (listed only for whoever "
               "has a password; someone who came in by a link is told they have none)", order=10),
    Page("logout", "logout.py", "Log out", ":material/logout:", "Your account", "logout",
         _rule((ANNOTATOR, RESEARCHER, LEAD, ADMIN)),
         shows="anyone logged in: a click in the navigation logs them out (every session of theirs ends); "
               "opened at its address, the page asks first", order=20),
)

SHARED_CAPABILITIES: tuple[Capability, ...] = (
    Capability("answers", "answers, rule hints and answer keys of a data set's items (Explore, Results "
                          "drill-down)",
               _rule((RESEARCHER, LEAD, ADMIN), (VISITOR, ANNOTATOR), _PUBLIC)),
    Capability("model_results", "imported model results on Results",
               _rule((RESEARCHER, LEAD, ADMIN), (VISITOR, ANNOTATOR), _PUBLIC)),
    Capability("human_results", "human-baseline results on Results (the pool `human`)",
               _rule((RESEARCHER, LEAD, ADMIN),
                     condition="a study set to show only once closed waits until it is")),
    Capability("per_person_results", "per-person results (`human:<name>`) and responses",
               _rule((RESEARCHER, LEAD, ADMIN), condition="as human results")),
    Capability("download", "downloads (JSONL, CSV, PNG, SVG)", _rule(EVERYONE, condition="what the page shows, nothing more")),
    Capability("load_data", "load results, generate and import suites; bring a set, add models' answers (uploads)",
               _rule((LEAD, ADMIN), condition="a lead brings their lab's set and its models' answers")),
    Capability("run_studies", "set up, follow, adjudicate, preview and export studies; their leads",
               _rule(STUDY_RUNNERS, condition="a lead: the studies they lead; who leads a study: admins")),
    Capability("server_paths", "server paths of suite files and data folders (Home); others see the suite's name",
               _rule((ADMIN,))),
    Capability("public_mode", "turn the public read-only mode on or off", _rule((ADMIN,))),
)



class TableError(ValueError):
    """A benchmark's rows that cannot join the table (a key or URL declared twice, a page file missing)."""


def public_condition() -> str:
    """What the public read-only mode shows only while it is in no open study: each benchmark's
    ``PUBLIC_DATA`` (its suites, its data sets), in the registry's order."""
    named = [protocol.option(module, "PUBLIC_DATA") for module in protocol.members().values()]
    return " ".join([" and ".join(n for n in named if n) or "data", PUBLIC_CONDITION_TAIL])


@dataclass(frozen=True)
class _Table:
    pages: tuple[Page, ...]
    capabilities: tuple[Capability, ...]
    page_by_key: dict[str, Page]
    capability_by_key: dict[str, Capability]


def _filled(row, condition: str):
    return dataclasses.replace(row, rule=dataclasses.replace(row.rule, condition=condition)) \
        if row.rule.condition == _PUBLIC else row


def _assemble(members: dict) -> _Table:
    condition = public_condition()
    pages: list[tuple[Page, str]] = [(_filled(p, condition), "the shared table") for p in SHARED_PAGES]
    capabilities: list[tuple[Capability, str]] = [(_filled(c, condition), "the shared table")
                                                  for c in SHARED_CAPABILITIES]
    for name, module in members.items():
        target = protocol.option(module, "PAGES")
        if target is None:
            continue
        owner = f"benchmark {name!r} ({target})"
        try:
            declared = importlib.import_module(target)
        except Exception as exc:  # noqa: BLE001 - the message names the member and the cause
            raise TableError(f"benchmark {name!r} names {target!r} as its PAGES, which cannot be imported: "
                             f"{type(exc).__name__}: {exc}") from exc
        folder = Path(declared.__file__).resolve().parent
        for row in getattr(declared, "PAGES", ()):
            if not isinstance(row, Page):
                raise TableError(f"{owner} lists {row!r} in PAGES: each must be a structext_core.studio.access.Page")
            path = folder / row.file
            if not path.is_file():
                raise TableError(f"{owner} declares the page {row.key!r} in {path}, which does not exist")
            pages.append((dataclasses.replace(_filled(row, condition), file=str(path)), owner))
        for row in getattr(declared, "CAPABILITIES", ()):
            if not isinstance(row, Capability):
                raise TableError(f"{owner} lists {row!r} in CAPABILITIES: each must be a "
                                 "structext_core.studio.access.Capability")
            capabilities.append((_filled(row, condition), owner))
    for what, rows, field in (("page", pages, "key"), ("page URL", pages, "url_path"),
                              ("capability", capabilities, "key")):
        seen: dict[str, str] = {}
        for row, owner in rows:
            value = getattr(row, field)
            if value in seen:
                raise TableError(f"the {what} {value!r} is declared twice, by {seen[value]} and by {owner}: "
                                 "every page and capability of the table needs a key (and a page a URL) of its own")
            seen[value] = owner
    sections = list(dict.fromkeys(p.section for p, _ in pages))
    ordered = sorted(enumerate(p for p, _ in pages), key=lambda ip: (sections.index(ip[1].section), ip[1].order, ip[0]))
    page_rows = tuple(p for _, p in ordered)
    capability_rows = tuple(c for c, _ in capabilities)
    return _Table(page_rows, capability_rows, {p.key: p for p in page_rows}, {c.key: c for c in capability_rows})


_table_lock = threading.Lock()
_table_cache: tuple[dict, _Table] | None = None


def _table() -> _Table:
    """The assembled table, put together again when the registry was looked up again (protocol.reload)."""
    global _table_cache
    members = protocol.members()
    cached = _table_cache
    if cached is None or cached[0] is not members:
        with _table_lock:
            cached = (members, _assemble(members))
            _table_cache = cached
    return cached[1]


def pages() -> tuple[Page, ...]:
    """Every page of the app, shared and the benchmarks' own, by section (in the table's order) and order."""
    return _table().pages


def capabilities() -> tuple[Capability, ...]:
    """Every capability, shared and the benchmarks' own."""
    return _table().capabilities


def __getattr__(attr: str):
    # PAGES, CAPABILITIES and PUBLIC_CONDITION read as before, from the assembled table (put together
    # at first use, not at import: the member modules that declare rows import this module).
    if attr == "PAGES":
        return pages()
    if attr == "CAPABILITIES":
        return capabilities()
    if attr == "PUBLIC_CONDITION":
        return public_condition()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


# ---------------------------------------------------------------- deciding


def role_of(user: dict | None) -> str:
    """The role of a session user (``{id, username, role}``), ``visitor`` for None."""
    if user is None:
        return VISITOR
    role = user.get("role")
    if role not in ROLES or role == VISITOR:
        raise AccessError(f"Unknown role {role!r} for user {user.get('username')!r}.")
    return role


def page(key: str) -> Page:
    """The page with this key; ValueError naming the known keys otherwise."""
    known = _table().page_by_key
    try:
        return known[key]
    except KeyError:
        raise ValueError(f"No page {key!r}: the pages are {', '.join(known)}.") from None


def capability(key: str) -> Capability:
    """The capability with this key; ValueError naming the known keys otherwise."""
    known = _table().capability_by_key
    try:
        return known[key]
    except KeyError:
        raise ValueError(f"No capability {key!r}: they are {', '.join(known)}.") from None


def can_open(role: str, page_key: str, public_mode_on: bool = False) -> bool:
    """Whether ``role`` may open the page ``page_key``."""
    return page(page_key).rule.allows(role, public_mode_on)


def can(role: str, capability_key: str, public_mode_on: bool = False) -> bool:
    """Whether ``role`` has the capability ``capability_key``."""
    return capability(capability_key).rule.allows(role, public_mode_on)


@dataclass(frozen=True)
class HomePlace:
    """A page where a benchmark's work is done, as Home links it: the page's title, its address (opened on
    the benchmark when the page chooses one) and what is done there."""

    title: str
    link: str
    text: str


@dataclass(frozen=True)
class HomeSection:
    """What Home says of one benchmark: its name, what it asks, and where to go for it (a place a page)."""

    title: str
    summary: str
    places: tuple[HomePlace, ...]


def home_sections(role: str, public_mode_on: bool = False) -> list[HomeSection]:
    """One section a benchmark of the registry, in its order; a role is told only of the pages it may
    open (read against the table). A page that chooses a benchmark is linked opened on it."""
    sections = []
    for name in protocol.NAMES:
        member = protocol.get_module(name)
        places = []
        for place in member.PLACES:
            if can_open(role, place.page, public_mode_on):
                target = page(place.page)
                link = target.url_path + (f"?benchmark={name}" if place.chooses_benchmark else "")
                places.append(HomePlace(target.title, link, place.text))
        sections.append(HomeSection(member.DISPLAY_NAME, member.SUMMARY, tuple(places)))
    return sections


def has_work(page_key: str, db: sqlite_utils.Database, user: dict | None) -> bool:
    """Whether the page has work for ``user`` now (its ``work`` function); True for a page that declares
    none. Nobody logged in has none on a page that declares it."""
    target = page(page_key).work
    if not target:
        return True
    if user is None:
        return False
    module, _, function = target.partition(":")
    return bool(getattr(importlib.import_module(module), function)(db, user))


def restricted(role: str) -> bool:
    """Whether what ``role`` sees is limited to suites in no open study (visitors, annotators)."""
    return not capability("answers").rule.allows(role, False)


def _plural_list(roles: Iterable[str]) -> str:
    names = [ROLE_PLURALS[r] for r in ROLES if r in set(roles)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def refusal(user: dict | None, page_key: str, public_mode_on: bool = False) -> str | None:
    """Why ``user`` may not open the page, as one sentence for the page; None when they may."""
    role = role_of(user)
    if can_open(role, page_key, public_mode_on):
        return None
    if role == VISITOR:
        return "You are not logged in: log in with the form in the sidebar to use this page."
    return (f"This page is for {_plural_list(page(page_key).rule.always)} only. "
            f"You are logged in as {user['username']} ({role}).")


# ---------------------------------------------------------------- settings (migration 5)


def _refuse_unless(allowed: bool, what: str) -> None:
    if not allowed:
        raise AccessError(f"Only an admin may {what}.")


def public_mode(db: sqlite_utils.Database) -> bool:
    """Whether the public read-only mode is on (off on a new database)."""
    row = db.execute("SELECT value FROM app_settings WHERE key = ?", [PUBLIC_MODE_KEY]).fetchone()
    return row is not None and row[0] == "on"


def set_public_mode(db: sqlite_utils.Database, on: bool, admin: dict | None) -> None:
    """Turn the public read-only mode on or off; :class:`AccessError` unless ``admin`` is one."""
    _refuse_unless(can(role_of(admin), "public_mode"), "turn the public read-only mode on or off")
    with write_transaction(db):
        db.execute(
            "INSERT INTO app_settings (key, value, updated_by, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by,"
            " updated_at = excluded.updated_at",
            [PUBLIC_MODE_KEY, "on" if on else "off", admin["id"], time.time()],
        )


def set_results_when_closed(db: sqlite_utils.Database, study_id: int, on: bool, admin: dict | None) -> None:
    """Show the study's human results on Results only once it is closed (``on``), or always; by an
    admin or a lead of the study (:func:`structext_core.studio.study.leads.check_runs`)."""
    from structext_core.studio.study import leads  # the study package imports this module

    what = "change where a study's results are shown"
    if not can_open(role_of(admin), "study_admin"):
        raise AccessError(f"Only {leads.WHO_MAY} may {what}.")
    leads.check_runs(db, admin, study_id, what)
    with write_transaction(db):
        changed = db.execute("UPDATE studies SET results_when_closed = ? WHERE id = ?",
                             [int(bool(on)), study_id]).rowcount
    if not changed:
        raise ValueError(f"There is no study with id {study_id}.")


# ---------------------------------------------------------------- the tables of docs/reference/access.md


def who_text(page_key: str) -> str:
    """The "who" cell (docs/reference/access.md) of a page: the roles that may open it, and when."""
    rule = page(page_key).rule
    if rule.always == frozenset(ROLES):
        text = "everyone"
    else:
        text = ", ".join(ROLE_PLURALS[r] for r in ROLES if r in rule.always)
        if rule.public:
            text += (f"; {' and '.join(ROLE_PLURALS[r] for r in ROLES if r in rule.public)} in public "
                     f"read-only mode ({rule.condition})")
    shows = page(page_key).shows
    return f"{text}; {shows}" if shows else text


def _cell(rule: Rule, role: str) -> str:
    if role in rule.always:
        return "yes"
    return "public mode" if role in rule.public else "no"


def markdown_table() -> str:
    """Who sees what, one row per page and capability, one column per role (generated into docs/reference/access.md)."""
    lines = ["| | " + " | ".join(ROLES) + " | limits |", "|---|" + "---|" * (len(ROLES) + 1)]
    rows = [(f"page: {p.title}", p.rule) for p in pages()] + [(c.label, c.rule) for c in capabilities()]
    for label, rule in rows:
        lines.append(f"| {label} | " + " | ".join(_cell(rule, r) for r in ROLES) + f" | {rule.condition} |")
    return "\n".join(lines)

