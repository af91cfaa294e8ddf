"""Who sees what: the one table of roles, pages and capabilities, and the functions that decide.

Every page guard (``ui.require_page``), the navigation in ``app.py``, the filters on Explore
and Results, and the README's "Who sees what" table read this module; nothing else decides.

Roles: ``visitor`` (not logged in), ``annotator``, ``researcher``, ``admin``. A rule grants a
page or a capability to some roles always, and to more roles only while an admin has turned
on the *public read-only mode*. What the public roles then see is limited to suites that are
in no open study, and never a sample of an open study (see :func:`visible_suites` and
:func:`hidden_samples`).

The sealing rule behind it: an annotator (and anyone not logged in) never gets the answer,
the rule hint or another person's response of an item someone may still answer. For the
services that compute or show answers to the annotators themselves (the rewriting page's answer
check, practice feedback, correctness notes) the rule is stated once, with its open items, in
:mod:`structext_core.studio.seal`.

No Streamlit here: this is tested as plain Python (tests/test_access.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
import sqlite_utils

from structext_core import protocol
from structext_core.aibench import seal
from structext_core.aibench import store as aibench_store
from structext_core.studio.storage import write_transaction

VISITOR, ANNOTATOR, RESEARCHER, ADMIN = "visitor", "annotator", "researcher", "admin"
#: Every role, the least trusted first. ``visitor`` is nobody logged in (not an account role).
ROLES = (VISITOR, ANNOTATOR, RESEARCHER, ADMIN)
ROLE_PLURALS = {VISITOR: "visitors", ANNOTATOR: "annotators", RESEARCHER: "researchers", ADMIN: "admins"}
PUBLIC_MODE_KEY = "public_read_only"
HUMAN_SOURCE_PREFIX = "human-study:"  # the source label of human rows (as results_store)
PUBLIC_CONDITION = "suites and AIBench data sets in no open study, never a sample of an open study"


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


def _rule(always: Iterable[str], public: Iterable[str] = (), condition: str = "") -> Rule:
    return Rule(frozenset(always), frozenset(public), condition)


@dataclass(frozen=True)
class Page:
    """A page of the app: where it lives, how the navigation shows it, who may open it."""

    key: str
    file: str
    title: str
    icon: str
    section: str
    url_path: str  # the URL slug Streamlit serves the page under ("" for the default page)
    rule: Rule
    shows: str = ""  # what the page shows each role, where that differs (README)
    default: bool = False


@dataclass(frozen=True)
class Capability:
    """Something a page may show or do, beyond opening it."""

    key: str
    label: str
    rule: Rule


EVERYONE = ROLES
# ---------------------------------------------------------------- THE table
PAGES: tuple[Page, ...] = (
    Page("home", "home.py", "Home", ":material/home:", "Benchmark", "", _rule(EVERYONE), default=True),
    Page("explore", "explore.py", "Explore", ":material/search:", "Benchmark", "explore",
         _rule((RESEARCHER, ADMIN), (VISITOR, ANNOTATOR), PUBLIC_CONDITION)),
    Page("results", "results.py", "Results", ":material/monitoring:", "Benchmark", "results",
         _rule(EVERYONE),
         shows="visitors and annotators: the paper's tables (in public read-only mode also model results "
               "of suites in no open study); researchers and admins: also imported and human results, and "
               "AIBench's human side (people beside the solvers, the pairwise human rank); the letters people "
               "chose, the disagreements and sending questions back to review, and loading data: admins"),
    Page("human_baseline", "human_baseline.py", "Human baseline", ":material/timer:", "Annotate",
         "human_baseline", _rule((ANNOTATOR, ADMIN)),
         shows="annotators: their own current question (StrucText: reference, question, requirement; AIBench: "
               "the image as blinded pixels, the question and its options), an answer key only after a practice "
               "answer; never a key of an item they may still answer, another person's answer, or an AIBench "
               "item's system, paper id or file name"),
    Page("rewrite", "rewrite.py", "Real-Test rewriting", ":material/edit_note:", "Annotate", "rewrite",
         _rule((ANNOTATOR, ADMIN))),
    Page("question_review", "question_review.py", "AIBench question review", ":material/rate_review:", "Annotate",
         "question_review", _rule((ANNOTATOR, ADMIN)),
         shows="reviewers: only the papers dealt to them (figure, method text, graph, questions with their keys); "
               "never another reviewer's decisions on a double-reviewed paper, nor a paper whose questions they "
               "still answer in an open AIBench study"),
    Page("pairwise", "pairwise.py", "Pairwise comparison", ":material/compare:", "Annotate", "pairwise",
         _rule((ANNOTATOR, ADMIN)),
         shows="annotators: their own current pair as two blinded images (no system name, paper id or file name, "
               "during or after the study), their progress; never another person's vote"),
    Page("study_admin", "study_admin.py", "Studies", ":material/science:", "Admin", "study_admin",
         _rule((ADMIN,))),
    Page("adjudication", "adjudication.py", "Adjudication", ":material/gavel:", "Admin", "adjudication",
         _rule((ADMIN,))),
    Page("pairwise_admin", "pairwise_admin.py", "Pairwise studies", ":material/leaderboard:", "Admin",
         "pairwise_admin", _rule((ADMIN,)),
         shows="admins: pairwise studies, their votes with system names, the human rank, agreement, correlations"),
    Page("campaign_admin", "campaign_admin.py", "Rewrite campaigns", ":material/folder_managed:", "Admin",
         "campaign_admin", _rule((ADMIN,))),
    Page("question_review_admin", "question_review_admin.py", "AIBench review campaigns", ":material/fact_check:",
         "Admin", "question_review_admin", _rule((ADMIN,))),
    Page("accounts", "accounts.py", "Accounts", ":material/manage_accounts:", "Admin", "accounts", _rule((ADMIN,))),
)

CAPABILITIES: tuple[Capability, ...] = (
    Capability("answers", "answers and rule hints of a suite's samples, AIBench answer keys (Explore, Results "
                          "drill-down)",
               _rule((RESEARCHER, ADMIN), (VISITOR, ANNOTATOR), PUBLIC_CONDITION)),
    Capability("model_results", "imported model results on Results",
               _rule((RESEARCHER, ADMIN), (VISITOR, ANNOTATOR), PUBLIC_CONDITION)),
    Capability("human_results", "human-baseline results on Results (the pool `human`)",
               _rule((RESEARCHER, ADMIN), condition="a study set to show only once closed waits until it is")),
    Capability("per_person_results", "per-person results (`human:<name>`) and responses",
               _rule((RESEARCHER, ADMIN), condition="as human results")),
    Capability("aibench_people", "AIBench on Results: people beside the VLM solvers (accuracy, agreement) and the "
               "pairwise human rank, without names",
               _rule((RESEARCHER, ADMIN), condition="as human results; pairwise: the rank, never a vote")),
    Capability("aibench_people_answers", "AIBench on Results: the letters people chose per question, where they and "
               "a solver part on the original figure, sending a question back to review", _rule((ADMIN,))),
    Capability("download", "downloads (JSONL, CSV, PNG, SVG)", _rule(EVERYONE, condition="what the page shows, nothing more")),
    Capability("review_export", "AIBench question review: the curated set, provenance and review log (zip)",
               _rule((ADMIN,))),
    Capability("load_data", "load results, generate and import suites", _rule((ADMIN,))),
    Capability("server_paths", "server paths of suite files and data folders (Home); others see the suite's name",
               _rule((ADMIN,))),
    Capability("public_mode", "turn the public read-only mode on or off", _rule((ADMIN,))),
)

_PAGES = {p.key: p for p in PAGES}
_CAPABILITIES = {c.key: c for c in CAPABILITIES}


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
    try:
        return _PAGES[key]
    except KeyError:
        raise ValueError(f"No page {key!r}: the pages are {', '.join(_PAGES)}.") from None


def capability(key: str) -> Capability:
    """The capability with this key; ValueError naming the known keys otherwise."""
    try:
        return _CAPABILITIES[key]
    except KeyError:
        raise ValueError(f"No capability {key!r}: they are {', '.join(_CAPABILITIES)}.") from None


def can_open(role: str, page_key: str, public_mode_on: bool = False) -> bool:
    """Whether ``role`` may open the page ``page_key``."""
    return page(page_key).rule.allows(role, public_mode_on)


def can(role: str, capability_key: str, public_mode_on: bool = False) -> bool:
    """Whether ``role`` has the capability ``capability_key``."""
    return capability(capability_key).rule.allows(role, public_mode_on)


@dataclass(frozen=True)
class HomeSection:
    """What Home says of one benchmark: its name, what it asks, and where to go for it (one
    Markdown line a page, each linking to the page)."""

    title: str
    summary: str
    places: tuple[str, ...]


def home_sections(role: str, public_mode_on: bool = False) -> list[HomeSection]:
    """One section a benchmark of the registry, in its order; a role is told only of the pages it may
    open (read against the table). A page that chooses a benchmark is linked opened on it."""
    sections = []
    for name in protocol.NAMES:
        member = protocol.get_module(name)
        lines = []
        for place in member.PLACES:
            if can_open(role, place.page, public_mode_on):
                target = page(place.page)
                link = target.url_path + (f"?benchmark={name}" if place.chooses_benchmark else "")
                lines.append(f"[**{target.title}**]({link}): {place.text}.")
        sections.append(HomeSection(member.DISPLAY_NAME, member.SUMMARY, tuple(lines)))
    return sections


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
    """Show the study's human results on Results only once it is closed (``on``), or always."""
    _refuse_unless(can_open(role_of(admin), "study_admin"), "change where a study's results are shown")
    with write_transaction(db):
        changed = db.execute("UPDATE studies SET results_when_closed = ? WHERE id = ?",
                             [int(bool(on)), study_id]).rowcount
    if not changed:
        raise ValueError(f"There is no study with id {study_id}.")


# ---------------------------------------------------------------- what a role may see


HINT_WITHHELD = ("(withheld: a question of an open study has this same rule hint; a task's rule hint is "
                 "the same for all its samples)")


@dataclass(frozen=True)
class Sealed:
    """Samples whose answers must not be shown (by id and by reference text), and their rule
    hints (one text serves every sample of a task, and some tasks share it)."""

    sample_ids: frozenset[str] = frozenset()
    references: frozenset[str] = frozenset()
    rule_hints: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.sample_ids or self.references or self.rule_hints)

    def covers(self, sample: dict) -> bool:
        """Whether ``sample`` is sealed (same id, or the same reference text)."""
        return sample.get("id") in self.sample_ids or sample.get("reference") in self.references

    def keep(self, rows: Iterable[dict]) -> list[dict]:
        """The rows that are not sealed, with a sealed rule hint withheld."""
        return [dict(row, rule_hint=HINT_WITHHELD) if row.get("rule_hint") in self.rule_hints else row
                for row in rows if not self.covers(row)]


def _sealed_from(db: sqlite_utils.Database, where: str, params: Sequence) -> Sealed:
    rows = db.execute(
        "SELECT i.sample_id, json_extract(i.sample_json, '$.reference'),"
        " json_extract(i.sample_json, '$.rule_hint') FROM study_items i"
        f" JOIN studies s ON s.id = i.study_id WHERE s.status = 'open' {where}", list(params),
    ).fetchall()
    return Sealed(frozenset(r[0] for r in rows), frozenset(r[1] for r in rows if r[1] is not None),
                  frozenset(r[2] for r in rows if r[2] is not None))


def sealed_references(db: sqlite_utils.Database, user: dict | None) -> Sealed:
    """The items of the open studies ``user`` takes part in (empty for anyone else)."""
    if user is None or role_of(user) != ANNOTATOR:
        return Sealed()
    return _sealed_from(db, "AND i.study_id IN (SELECT study_id FROM study_annotators WHERE user_id = ?)",
                        [user["id"]])


def hidden_samples(db: sqlite_utils.Database, user: dict | None) -> Sealed:
    """What Explore and Results must leave out for ``user``: for visitors and annotators,
    every item of every open study; nothing for researchers and admins."""
    return _sealed_from(db, "", []) if restricted(role_of(user)) else Sealed()


def open_study_suites(db: sqlite_utils.Database) -> set[str]:
    """Suite names of the open studies: the suite each was drawn from and its samples' ``suite``."""
    names = {row[0] for row in db.execute("SELECT suite FROM studies WHERE status = 'open'")}
    names |= {row[0] for row in db.execute(
        "SELECT DISTINCT json_extract(i.sample_json, '$.suite') FROM study_items i"
        " JOIN studies s ON s.id = i.study_id WHERE s.status = 'open'") if row[0] is not None}
    return names


def _visible(db: sqlite_utils.Database, user: dict | None, names: Iterable[str],
             sealed: Callable[[sqlite_utils.Database], set[str]]) -> list[str]:
    """``names`` for researchers and admins; for visitors and annotators none, or in public
    read-only mode those not in ``sealed(db)``. Order kept."""
    names = list(names)
    role = role_of(user)
    if not restricted(role):
        return names
    if not can(role, "answers", public_mode(db)):
        return []
    taken = sealed(db)
    return [name for name in names if name not in taken]


def visible_suites(db: sqlite_utils.Database, user: dict | None, names: Iterable[str]) -> list[str]:
    """Of the suites ``names``, those whose samples (with answers) ``user`` may browse:
    all for researchers and admins; for visitors and annotators none, or in public
    read-only mode those in no open study. Order kept."""
    return _visible(db, user, names, open_study_suites)


def _open_aibench_datasets(db: sqlite_utils.Database) -> set[str]:
    """Data sets that hold any paper (by content: every copy of it, whatever its name) an open
    AIBench study asks questions of (keys show on Results) or an open blind pairwise study compares
    (so do the systems' names beside their images)."""
    rows = db.execute(
        "SELECT DISTINCT s.suite, json_extract(i.strata, '$.paper_id') FROM study_items i JOIN studies s ON s.id = i.study_id"
        " WHERE s.status = 'open' AND s.benchmark = 'aibench' AND json_extract(i.strata, '$.paper_id') IS NOT NULL"
        " UNION SELECT DISTINCT w.dataset, p.paper_id FROM pairwise_pairs p JOIN pairwise_studies w"
        " ON w.id = p.study_id WHERE w.status = 'open'").fetchall()
    names = {row[0] for row in db.execute(
        "SELECT suite FROM studies WHERE status = 'open' AND benchmark = 'aibench'"
        " UNION SELECT dataset FROM pairwise_studies WHERE status = 'open'")}
    sealed = {seal.paper_key(dataset, paper_id) for dataset, paper_id in rows}
    for name in aibench_store.stored_datasets():
        if name not in names and sealed & set(aibench_store.prints_of(name).papers.values()):
            names.add(name)
    return names


def visible_aibench_datasets(db: sqlite_utils.Database, user: dict | None, names: Iterable[str]) -> list[str]:
    """Of the stored AIBench data sets ``names``, those whose questions with keys ``user`` may see
    (Results drill-down): all for researchers and admins; for visitors and annotators none, or
    in public read-only mode none that holds a paper (in any copy) an open AIBench study or an open
    pairwise study draws from, as for StrucText's suites. Order kept."""
    return _visible(db, user, names, _open_aibench_datasets)


def results_studies(db: sqlite_utils.Database, user: dict | None) -> list[str]:
    """Names of the studies whose human results ``user`` sees on Results: none for visitors
    and annotators; for researchers and admins every study except an open one set to show
    only once closed."""
    if not can(role_of(user), "human_results"):
        return []
    return [row[0] for row in db.execute(
        "SELECT name FROM studies WHERE NOT (results_when_closed = 1 AND status = 'open') ORDER BY id")]


@dataclass(frozen=True)
class ResultsScope:
    """What of the stored and human results one user sees (hashable: a cache key)."""

    everything: bool = False
    models: bool = False
    suites: tuple[str, ...] = ()
    human_sources: tuple[str, ...] = ()
    per_person: bool = False
    hidden_ids: tuple[str, ...] = ()


def results_scope(db: sqlite_utils.Database, user: dict | None, suites: Iterable[str]) -> ResultsScope:
    """The part of Results ``user`` sees, given the suites that have results."""
    role = role_of(user)
    studies = results_studies(db, user)
    all_studies = [row[0] for row in db.execute("SELECT name FROM studies ORDER BY id")]
    if not restricted(role):
        per_person = can(role, "per_person_results")
        if studies == all_studies and per_person:
            return ResultsScope(everything=True)
        return ResultsScope(models=True, suites=tuple(sorted(set(suites))),
                            human_sources=tuple(HUMAN_SOURCE_PREFIX + s for s in studies), per_person=per_person)
    if not can(role, "model_results", public_mode(db)):
        return ResultsScope()
    return ResultsScope(models=True, suites=tuple(sorted(visible_suites(db, user, set(suites)))),
                        hidden_ids=tuple(sorted(hidden_samples(db, user).sample_ids)))


def filter_results(frame: pd.DataFrame, scope: ResultsScope) -> pd.DataFrame:
    """The rows of a Results frame (``source``, ``suite``, ``sample_id``) that ``scope`` allows."""
    if scope.everything:
        return frame
    source = frame["source"].astype(str)
    human = source.str.startswith(HUMAN_SOURCE_PREFIX)
    models = ~human & frame["suite"].astype(str).isin(scope.suites) & ~frame["sample_id"].astype(str).isin(
        scope.hidden_ids) if scope.models else pd.Series(False, index=frame.index)
    people = human & source.isin(scope.human_sources)
    kept = frame[(models | people).to_numpy()]
    if scope.per_person:
        return kept
    # without per-person results, every person's answer is shown once, in the pool `human`
    return kept.assign(model=kept["model"].astype(str).where(~kept["model"].astype(str).str.startswith("human:"),
                                                           "human"))


def drop_hidden_samples(rows: pd.DataFrame, hidden: Sealed) -> pd.DataFrame:
    """Drill-down rows (``sample_id``, ``reference``) without the hidden samples."""
    if not hidden or rows.empty:
        return rows
    keep = ~rows["sample_id"].astype(str).isin(hidden.sample_ids)
    if "reference" in rows.columns:
        keep &= ~rows["reference"].astype(str).isin(hidden.references)
    return rows[keep.to_numpy()].reset_index(drop=True)


def rewrite_answer_refusal(db: sqlite_utils.Database, user: dict | None, sample: dict) -> str | None:
    """Why the Real-Test rewriting page must not show this sample's answer to ``user``
    (it is also an item of an open study they take part in), or None when it may."""
    if not sealed_references(db, user).covers(sample):
        return None
    rows = db.execute(
        "SELECT DISTINCT s.name FROM study_items i JOIN studies s ON s.id = i.study_id"
        " JOIN study_annotators sa ON sa.study_id = s.id AND sa.user_id = ?"
        " WHERE s.status = 'open' AND (i.sample_id = ? OR json_extract(i.sample_json, '$.reference') = ?)"
        " ORDER BY s.name",
        [user["id"], sample.get("id"), sample.get("reference")],
    ).fetchall()
    studies = ", ".join(repr(r[0]) for r in rows)
    return (f"This item's sample is also a question of the open study {studies}, in which you take part, so "
            "its answer stays hidden from you until that study is closed. Work on another item, or ask the "
            "admin to give this one to someone else.")


# ---------------------------------------------------------------- the README's tables


def who_text(page_key: str) -> str:
    """The README's "who" cell of a page: the roles that may open it, and when."""
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
    """Who sees what, one row per page and capability, one column per role (the README's table)."""
    lines = ["| | " + " | ".join(ROLES) + " | limits |", "|---|" + "---|" * (len(ROLES) + 1)]
    rows = [(f"page: {p.title}", p.rule) for p in PAGES] + [(c.label, c.rule) for c in CAPABILITIES]
    for label, rule in rows:
        lines.append(f"| {label} | " + " | ".join(_cell(rule, r) for r in ROLES) + f" | {rule.condition} |")
    return "\n".join(lines)

