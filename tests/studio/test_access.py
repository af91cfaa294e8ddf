"""Who sees what (structext_core.studio.access), without Streamlit: the table, the suites and samples
each role may see, the settings of migration 5, and the README kept in step with the table.

The table is checked for the shared rows and the built-in members' (:data:`BUILT_IN`): a lab's
benchmark installed beside them adds its own rows (:func:`installed_rows`), which fail nothing here."""

import importlib
import importlib.util
import types
from pathlib import Path

import pandas as pd
import pytest

from structext_core import protocol
from structext_core.structext_eval import results_store, suites
from structext_core.structext_eval import sealed as sealed_mod
from structext_core.structext_eval import study as structext_study
from structext_core.studio import access, accounts, data_scope, storage, study

ROOT = Path(__file__).resolve().parents[2]
ROLES = ("visitor", "annotator", "researcher", "lead", "admin")
#: The members this project ships; an installed one may stand beside them.
BUILT_IN = ("structext-eval", "aibench", "labset")


def installed_rows() -> tuple[set[str], set[str]]:
    """The keys of the pages and of the capabilities that installed members other than the built-in
    ones declare (their ``PAGES`` module's rows)."""
    pages, capabilities = set(), set()
    for name, module in protocol.members().items():
        target = protocol.option(module, "PAGES")
        if name in BUILT_IN or target is None:
            continue
        declared = importlib.import_module(target)
        pages |= {row.key for row in getattr(declared, "PAGES", ())}
        capabilities |= {row.key for row in getattr(declared, "CAPABILITIES", ())}
    return pages, capabilities


def built_in_pages() -> list:
    """The table's page rows but an installed member's, in the table's order."""
    others = installed_rows()[0]
    return [p for p in access.PAGES if p.key not in others]

# Written out by hand (not read from the table), so a change to the table has to be made twice.
# "P": only while the public read-only mode is on.
EXPECTED_PAGES = {
    #                  visitor annotator researcher lead admin
    "home":           ("Y",    "Y",      "Y",       "Y", "Y"),
    "explore":        ("P",    "P",      "Y",       "Y", "Y"),
    "results":        ("Y",    "Y",      "Y",       "Y", "Y"),
    "human_baseline": ("-",    "Y",      "-",       "-", "Y"),
    "join":           ("Y",    "Y",      "Y",       "Y", "Y"),
    "rewrite":        ("-",    "Y",      "-",       "-", "Y"),
    "study_admin":    ("-",    "-",      "-",       "Y", "Y"),
    "adjudication":   ("-",    "-",      "-",       "Y", "Y"),
    "campaign_admin": ("-",    "-",      "-",       "-", "Y"),
    "question_review": ("-",   "Y",      "-",       "-", "Y"),
    "question_review_admin": ("-", "-",  "-",       "-", "Y"),
    "pairwise":       ("-",    "Y",      "-",       "-", "Y"),
    "pairwise_admin": ("-",    "-",      "-",       "-", "Y"),
    "accounts":       ("-",    "-",      "-",       "-", "Y"),
    "account":        ("-",    "Y",      "Y",       "Y", "Y"),
    "logout":         ("-",    "Y",      "Y",       "Y", "Y"),
}
EXPECTED_CAPABILITIES = {
    "answers":            ("P", "P", "Y", "Y", "Y"),
    "model_results":      ("P", "P", "Y", "Y", "Y"),
    "human_results":      ("-", "-", "Y", "Y", "Y"),
    "per_person_results": ("-", "-", "Y", "Y", "Y"),
    "aibench_people":     ("-", "-", "Y", "Y", "Y"),
    "aibench_people_answers": ("-", "-", "-", "-", "Y"),
    "download":           ("Y", "Y", "Y", "Y", "Y"),
    "review_export":      ("-", "-", "-", "-", "Y"),
    "load_data":          ("-", "-", "-", "Y", "Y"),
    "run_studies":        ("-", "-", "-", "Y", "Y"),
    "server_paths":       ("-", "-", "-", "-", "Y"),
    "public_mode":        ("-", "-", "-", "-", "Y"),
}


def cases(expected):
    return [(key, role, marks[i]) for key, marks in expected.items() for i, role in enumerate(ROLES)]


@pytest.mark.parametrize("page_key, role, mark", cases(EXPECTED_PAGES))
@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
def test_who_may_open_each_page(page_key, role, mark, public):
    assert access.can_open(role, page_key, public) == (mark == "Y" or (mark == "P" and public))


@pytest.mark.parametrize("key, role, mark", cases(EXPECTED_CAPABILITIES))
@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
def test_each_capability_per_role(key, role, mark, public):
    assert access.can(role, key, public) == (mark == "Y" or (mark == "P" and public))


def page_files() -> set[str]:
    """The shared pages (pages/) and every benchmark's own (structext_core/<benchmark>/pages/)."""
    member_pages = (p for p in (ROOT / "structext_core").glob("*/pages/*.py") if p.name != "__init__.py")
    return {str(p) for p in (*(ROOT / "pages").glob("*.py"), *member_pages)}


def test_the_table_covers_every_page_file_and_nothing_else():
    pages, capabilities = installed_rows()
    assert {str(ROOT / "pages" / p.file) for p in built_in_pages()} == page_files()
    assert set(EXPECTED_PAGES) | pages == {p.key for p in access.PAGES}
    assert set(EXPECTED_CAPABILITIES) | capabilities == {c.key for c in access.CAPABILITIES}
    assert [p.key for p in access.PAGES if p.default] == ["home"]
    # URL slugs are the file names (what Streamlit infers, and what links and tests use).
    assert all(p.url_path == Path(p.file).stem for p in access.PAGES if not p.default)


def test_the_benchmarks_pages_are_in_their_packages_and_keep_their_place_and_url():
    """Issue 35: a page that serves one benchmark lives in its package and is declared there
    (its member's PAGES), yet the table, the navigation's order and the URLs are as before."""
    built_in = built_in_pages()
    owners = {p.key: Path(p.file).parent.parent.name for p in built_in if Path(p.file).is_absolute()}
    assert owners == {"question_review": "aibench", "pairwise": "aibench", "pairwise_admin": "aibench",
                      "question_review_admin": "aibench", "rewrite": "structext_eval",
                      "campaign_admin": "structext_eval"}
    assert {name: protocol.option(protocol.get_module(name), "PAGES") for name in BUILT_IN} == {
        "structext-eval": "structext_core.structext_eval.pages", "aibench": "structext_core.aibench.pages", "labset": None}
    # the navigation's order (by hand): by section, the benchmarks' pages where they always stood
    assert [p.key for p in built_in] == [
        "home", "explore", "results", "human_baseline", "rewrite", "question_review", "pairwise", "join", "study_admin",
        "adjudication", "pairwise_admin", "campaign_admin", "question_review_admin", "accounts", "account", "logout"]
    assert {p.key: p.url_path for p in built_in} == {key: "" if key == "home" else key for key in EXPECTED_PAGES}
    # the built-in members' data, then any installed member's (its PUBLIC_DATA), in the registry's order
    data = [protocol.option(module, "PUBLIC_DATA") for module in protocol.members().values()]
    assert access.PUBLIC_CONDITION == " and ".join(d for d in data if d) + " in no open study, never a sample of an open study"
    assert [protocol.option(protocol.get_module(name), "PUBLIC_DATA") for name in BUILT_IN] == [
        "suites", "AIBench data sets", ""]
    assert access.page("explore").rule.condition == access.PUBLIC_CONDITION


def a_member(tmp_path, monkeypatch, name, pages_source):
    """A stand-in member module whose PAGES names a module written in ``tmp_path``."""
    import sys
    import types

    folder = tmp_path / f"{name}_pages"
    folder.mkdir()
    (folder / "__init__.py").write_text(pages_source)
    (folder / "own.py").write_text("import streamlit as st\nst.title('own')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, f"{name}_pages", raising=False)
    member = types.ModuleType(f"{name}_member")
    member.PAGES = f"{name}_pages"
    return member


ROWS = "from structext_core.studio.access import ADMIN, Capability, Page, rule\n"


@pytest.mark.parametrize("rows, message", [
    ("PAGES = (Page('pairwise', 'own.py', 'Mine', ':material/star:', 'Admin', 'mine', rule((ADMIN,))),)",
     "the page 'pairwise' is declared twice, by benchmark 'aibench' (structext_core.aibench.pages) and by "
     "benchmark 'extra' (extra_pages)"),
    ("PAGES = (Page('mine', 'own.py', 'Mine', ':material/star:', 'Admin', 'explore', rule((ADMIN,))),)",
     "the page URL 'explore' is declared twice, by the shared table and by benchmark 'extra' (extra_pages)"),
    ("CAPABILITIES = (Capability('review_export', 'mine', rule((ADMIN,))),)",
     "the capability 'review_export' is declared twice, by benchmark 'aibench' (structext_core.aibench.pages) "
     "and by benchmark 'extra' (extra_pages)"),
    ("CAPABILITIES = (Capability('download', 'mine', rule((ADMIN,))),)",
     "the capability 'download' is declared twice, by the shared table and by benchmark 'extra'"),
    ("PAGES = (Page('mine', 'gone.py', 'Mine', ':material/star:', 'Admin', 'mine', rule((ADMIN,))),)",
     "benchmark 'extra' (extra_pages) declares the page 'mine' in "),
    ("PAGES = ({'key': 'mine'},)", "benchmark 'extra' (extra_pages) lists {'key': 'mine'} in PAGES: each must be"),
    ("raise ImportError('no such thing')",
     "benchmark 'extra' names 'extra_pages' as its PAGES, which cannot be imported: ImportError: no such thing"),
])
def test_a_benchmarks_rows_that_cannot_join_the_table_are_refused(tmp_path, monkeypatch, rows, message):
    extra = a_member(tmp_path, monkeypatch, "extra", ROWS + rows + "\n")
    with pytest.raises(access.TableError) as refused:
        access._assemble({**protocol.members(), "extra": extra})
    assert message in str(refused.value)


def test_a_benchmarks_own_page_joins_the_table_and_its_rules(tmp_path, monkeypatch):
    extra = a_member(tmp_path, monkeypatch, "extra", ROWS + (
        "PAGES = (Page('mine', 'own.py', 'Mine', ':material/star:', 'Admin', 'mine', rule((ADMIN,)), order=95),)\n"
        "CAPABILITIES = (Capability('mine_export', 'its export', rule((ADMIN,))),)\n"))
    extra.PUBLIC_DATA = "its data sets"
    others = installed_rows()[0]  # an installed member's pages, which may stand anywhere
    monkeypatch.setattr(protocol, "_members", {**protocol.members(), "extra": extra})
    table = access.pages()
    # Admin, order 95: after Accounts (90), before the last section (Your account)
    assert [p.key for p in table if p.key not in others][-3:] == ["mine", "account", "logout"]
    assert access.page("mine").file == str(tmp_path / "extra_pages" / "own.py")
    assert access.can_open("admin", "mine") and not access.can_open("annotator", "mine", True)
    assert access.can("admin", "mine_export") and not access.can("researcher", "mine_export")
    assert access.page("explore").rule.condition.startswith("suites and AIBench data sets and ")
    assert access.page("explore").rule.condition.endswith(" and its data sets in no open study, never a sample "
                                                          "of an open study")
    monkeypatch.undo()
    assert "mine" not in {p.key for p in access.pages()}  # the registry looked up again: the table too


def test_account_roles_are_the_table_roles_but_visitor():
    assert set(accounts.ROLES) == set(access.ROLES) - {"visitor"}
    assert access.HUMAN_SOURCE_PREFIX == results_store.HUMAN_SOURCE_PREFIX


def test_unknown_page_role_or_capability_is_an_error():
    with pytest.raises(ValueError, match="No page 'nope'"):
        access.can_open("admin", "nope")
    with pytest.raises(ValueError, match="No capability"):
        access.can("admin", "nope")
    with pytest.raises(access.AccessError, match="Unknown role 'root'"):
        access.role_of({"id": 1, "username": "x", "role": "root"})


def test_refusal_says_why():
    assert access.refusal(None, "home") is None
    assert "not logged in" in access.refusal(None, "explore")
    assert access.refusal(None, "explore", public_mode_on=True) is None
    ann = {"id": 2, "username": "ann1", "role": "annotator"}
    assert access.refusal(ann, "explore") == (
        "This page is for researchers, leads or admins only. You are logged in as ann1 (annotator).")
    assert access.refusal(ann, "study_admin") == (
        "This page is for leads or admins only. You are logged in as ann1 (annotator).")
    reader = {"id": 3, "username": "reader", "role": "researcher"}
    assert access.refusal(reader, "human_baseline") == (
        "This page is for annotators or admins only. You are logged in as reader (researcher).")
    assert access.refusal(reader, "study_admin") == (
        "This page is for leads or admins only. You are logged in as reader (researcher).")
    lead = {"id": 4, "username": "pi", "role": "lead"}
    assert access.refusal(lead, "study_admin") is None and access.refusal(lead, "adjudication") is None
    assert access.refusal(lead, "accounts") == "This page is for admins only. You are logged in as pi (lead)."


# ---------------------------------------------------------------- with a database


@pytest.fixture
def db(monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return storage.open_db(":memory:")


@pytest.fixture
def people(db):
    return {
        "visitor": None,
        "ann1": accounts.create_user(db, "ann1", "password1", "annotator"),
        "ann2": accounts.create_user(db, "ann2", "password1", "annotator"),
        "researcher": accounts.create_user(db, "reader", "password1", "researcher"),
        "admin": accounts.create_user(db, "lead", "password1", "admin"),
    }


def samples_of(suite, task_id=8, count=4):
    return suites.generate_cell(task_id, 2, 2, count, suite=suite)


def make_study(db, people, name, suite, annotators=("ann1",), n=2, status="open", when_closed=False):
    study_id = structext_study.create_study(db, name=name, suite=suite, samples=samples_of(suite), n_items=n,
                                  annotator_ids=[people[a]["id"] for a in annotators])
    if status == "closed":
        study.set_study_status(db, study_id, "closed")
    if when_closed:
        access.set_results_when_closed(db, study_id, True, people["admin"])
    return study_id


SUITES = ["test", "test-hard", "custom"]
WHO = ["visitor", "ann1", "researcher", "admin"]


@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
@pytest.mark.parametrize("who", WHO)
def test_visible_suites_with_open_closed_and_when_closed_studies(db, people, who, public):
    make_study(db, people, "hard-open", "test-hard")                        # open: sealed
    make_study(db, people, "test-closed", "test", status="closed")          # closed: free
    make_study(db, people, "custom-later", "custom", when_closed=True, status="closed")
    access.set_public_mode(db, public, people["admin"])
    shown = data_scope.visible_suites(db, people[who], SUITES)
    if who in ("researcher", "admin"):
        assert shown == SUITES
    elif public:
        assert shown == ["test", "custom"]
    else:
        assert shown == []


def test_a_study_set_to_show_when_closed_is_sealed_while_open(db, people):
    access.set_public_mode(db, True, people["admin"])
    study_id = make_study(db, people, "custom-later", "custom", when_closed=True)
    assert data_scope.visible_suites(db, None, SUITES) == ["test", "test-hard"]
    assert data_scope.results_studies(db, people["researcher"]) == []
    study.set_study_status(db, study_id, "closed")
    assert data_scope.visible_suites(db, None, SUITES) == SUITES
    assert data_scope.results_studies(db, people["researcher"]) == ["custom-later"]


@pytest.mark.parametrize("who, expected", [("visitor", []), ("ann1", []), ("ann2", []),
                                           ("researcher", ["open-now", "closed-later", "closed"]),
                                           ("admin", ["open-now", "closed-later", "closed"])])
def test_human_results_reach_results_for_researchers_and_admins_only(db, people, who, expected):
    make_study(db, people, "open-now", "test-hard")
    make_study(db, people, "open-later", "test", when_closed=True)
    make_study(db, people, "closed-later", "custom", when_closed=True, status="closed")
    make_study(db, people, "closed", "other", status="closed")
    access.set_public_mode(db, True, people["admin"])  # public mode never opens human results
    assert data_scope.results_studies(db, people[who]) == expected


def test_sealed_references_of_an_annotator(db, people):
    hard = samples_of("test-hard")
    study_id = structext_study.create_study(db, name="hard", suite="test-hard", samples=hard, n_items=2,
                                  annotator_ids=[people["ann1"]["id"]])
    make_study(db, people, "theirs", "test", annotators=("ann2",))
    items = [access_sample(db, study_id, position) for position in (1, 2)]
    sealed = sealed_mod.sealed_references(db, people["ann1"])
    assert sealed.sample_ids == {s["id"] for s in items}
    assert sealed.references == {s["reference"] for s in items}
    # Same text under another id (the sample copied into another suite) is sealed too.
    copy = dict(items[0], id="elsewhere-1", suite="custom")
    assert sealed.covers(copy)
    kept = sealed.keep([copy, *hard])
    assert [s["id"] for s in kept] == [s["id"] for s in hard if s not in items]
    # The rule hint is the same for every sample of a task: withheld for the sealed items' tasks.
    assert {s["rule_hint"] for s in kept} == {sealed_mod.HINT_WITHHELD}
    # JSON and YAML object-by-id (tasks 8 and 13) share one rule hint: withheld for both.
    yaml_twin = suites.generate_cell(13, 1, 1, 1, suite="test")[0]
    assert sealed.keep([yaml_twin])[0]["rule_hint"] == sealed_mod.HINT_WITHHELD
    other_task = suites.generate_cell(1, 1, 1, 1, suite="test")[0]
    assert sealed.keep([other_task]) == [other_task]
    # Not their study, not an annotator, or the study closed: nothing sealed for them.
    assert not (sealed_mod.sealed_references(db, people["ann2"]).sample_ids & sealed.sample_ids)
    assert not sealed_mod.sealed_references(db, people["researcher"])
    assert not sealed_mod.sealed_references(db, None)
    study.set_study_status(db, study_id, "closed")
    assert not sealed_mod.sealed_references(db, people["ann1"])


def access_sample(db, study_id, position):
    import json

    return json.loads(db.execute("SELECT sample_json FROM study_items WHERE study_id = ? AND position = ?",
                                 [study_id, position]).fetchone()[0])


def test_hidden_samples_are_every_open_item_for_visitors_and_annotators(db, people):
    make_study(db, people, "a", "test-hard")
    make_study(db, people, "b", "test", annotators=("ann2",))
    make_study(db, people, "c", "custom", status="closed")
    everything_open = {row[0] for row in db.execute(
        "SELECT i.sample_id FROM study_items i JOIN studies s ON s.id = i.study_id WHERE s.status = 'open'")}
    assert len(everything_open) == 4
    for who in ("visitor", "ann1", "ann2"):
        assert sealed_mod.hidden_samples(db, people[who]).sample_ids == everything_open
        assert data_scope.hidden_sample_ids(db, people[who]) == everything_open  # what Results leaves out
    assert not sealed_mod.hidden_samples(db, people["researcher"]) and not sealed_mod.hidden_samples(db, people["admin"])
    assert not data_scope.hidden_sample_ids(db, people["researcher"]) and not data_scope.hidden_sample_ids(db, people["admin"])


def test_rewrite_answer_is_refused_only_for_the_annotators_own_open_items(db, people):
    hard = samples_of("test")
    study_id = structext_study.create_study(db, name="pilot", suite="test", samples=hard, n_items=2,
                                  annotator_ids=[people["ann1"]["id"]])
    item = access_sample(db, study_id, 1)
    message = data_scope.rewrite_answer_refusal(db, people["ann1"], item)
    assert "open study 'pilot'" in message and "answer stays hidden" in message
    # Matched by the reference text too (same sample under another id).
    assert data_scope.rewrite_answer_refusal(db, people["ann1"], dict(item, id="copy")) is not None
    other = next(s for s in hard if s["reference"] != item["reference"] and s["id"] not in
                 sealed_mod.sealed_references(db, people["ann1"]).sample_ids)
    assert data_scope.rewrite_answer_refusal(db, people["ann1"], other) is None
    assert data_scope.rewrite_answer_refusal(db, people["ann2"], item) is None
    assert data_scope.rewrite_answer_refusal(db, people["admin"], item) is None
    study.set_study_status(db, study_id, "closed")
    assert data_scope.rewrite_answer_refusal(db, people["ann1"], item) is None


def test_only_an_admin_changes_the_settings_and_nothing_is_written_otherwise(db, people):
    study_id = make_study(db, people, "s", "test")
    for who in ("visitor", "ann1", "researcher"):
        with pytest.raises(access.AccessError, match="Only an admin"):
            access.set_public_mode(db, True, people[who])
        with pytest.raises(access.AccessError, match="Only an admin"):
            access.set_results_when_closed(db, study_id, True, people[who])
    assert not access.public_mode(db)
    assert db.execute("SELECT COUNT(*) FROM app_settings").fetchone()[0] == 0
    assert study.get_study(db, study_id).results_when_closed == 0
    access.set_public_mode(db, True, people["admin"])
    assert access.public_mode(db)
    access.set_public_mode(db, False, people["admin"])
    assert not access.public_mode(db)
    with pytest.raises(ValueError, match="no study with id 999"):
        access.set_results_when_closed(db, 999, True, people["admin"])


# ---------------------------------------------------------------- Results rows


def results_frame():
    rows = [
        ("upload", "test-hard", "th-1", "good"), ("upload", "test-hard", "th-2", "good"),
        ("upload", "test", "t-1", "good"), ("upload", "test", "t-sealed", "good"),
        ("human-study:open-now", "test-hard", "th-1", "human:ann1"),
        ("human-study:closed", "test", "t-1", "human:ann2"),
    ]
    return pd.DataFrame(rows, columns=["source", "suite", "sample_id", "model"])


def test_filter_results_per_scope():
    frame = results_frame()
    assert len(data_scope.filter_results(frame, data_scope.ResultsScope(everything=True))) == 6
    assert data_scope.filter_results(frame, data_scope.ResultsScope()).empty
    public = data_scope.ResultsScope(models=True, suites=("test",), hidden_ids=("t-sealed",))
    assert data_scope.filter_results(frame, public)["sample_id"].tolist() == ["t-1"]
    reader = data_scope.ResultsScope(models=True, suites=("test", "test-hard"), human_sources=("human-study:closed",),
                                 per_person=True)
    assert data_scope.filter_results(frame, reader)["model"].tolist() == ["good"] * 4 + ["human:ann2"]
    pooled_only = data_scope.ResultsScope(models=True, suites=("test",), human_sources=("human-study:closed",))
    assert "human:ann2" not in data_scope.filter_results(frame, pooled_only)["model"].tolist()


def test_results_scope_per_role(db, people):
    make_study(db, people, "open-now", "test-hard")
    make_study(db, people, "later", "test", when_closed=True)
    present = ["test-hard", "test", "custom"]
    assert data_scope.results_scope(db, None, present) == data_scope.ResultsScope()
    assert data_scope.results_scope(db, people["ann1"], present) == data_scope.ResultsScope()
    access.set_public_mode(db, True, people["admin"])
    public = data_scope.results_scope(db, people["ann1"], present)
    assert public.models and public.suites == ("custom",) and not public.human_sources
    assert set(public.hidden_ids) == sealed_mod.hidden_samples(db, None).sample_ids
    reader = data_scope.results_scope(db, people["researcher"], present)
    assert reader.human_sources == ("human-study:open-now",) and set(reader.suites) == set(present)
    assert reader.per_person


def test_drill_down_rows_of_hidden_samples_are_dropped():
    hidden = sealed_mod.Sealed(frozenset({"a"}), frozenset({"secret text"}))
    rows = pd.DataFrame({"sample_id": ["a", "b", "c"], "reference": ["x", "secret text", "y"]})
    assert sealed_mod.drop_hidden_samples(rows, hidden)["sample_id"].tolist() == ["c"]
    assert len(sealed_mod.drop_hidden_samples(rows, sealed_mod.Sealed())) == 3


# ---------------------------------------------------------------- migration 5


def test_migration_5_adds_the_researcher_role_and_keeps_existing_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    path = tmp_path / "old.db"
    monkeypatch.setattr(storage, "MIGRATIONS", storage.MIGRATIONS[:4])
    old = storage.open_db(path)
    # Rows as the code of schema 4 wrote them (today's code writes columns of later migrations).
    with storage.write_transaction(old):
        ann = old.execute("INSERT INTO users (username, password_hash, role, created_at)"
                          " VALUES ('ann1', ?, 'annotator', 0)", [accounts.hash_password("password1")]).lastrowid
        old.execute("INSERT INTO studies (name, suite, n_items, seed, rule_text, created_at)"
                    " VALUES ('s', 'test', 2, 0, 'rule', 0)")
        old.execute("INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (1, ?, 0)", [ann])
    with pytest.raises(Exception, match="CHECK"):
        old.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('r', 'x', 'researcher', 0)")
    old.conn.close()
    monkeypatch.undo()
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(path)
    assert storage.schema_version(db) == storage.latest_version()
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert accounts.create_user(db, "reader", "password1", "researcher")["role"] == "researcher"
    assert accounts.authenticate(db, "ann1", "password1")["role"] == "annotator"
    with pytest.raises(Exception, match="CHECK"):
        db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('b', 'x', 'boss', 0)")
    assert study.list_studies(db)[0].results_when_closed == 0 and not access.public_mode(db)
    # Another connection reads the new schema too.
    assert storage.open_db(path).execute("SELECT COUNT(*) FROM users WHERE role = 'researcher'").fetchone()[0] == 1


def test_researcher_accounts_cannot_take_part_in_studies(db, people):
    with pytest.raises(study.StudyError, match="not an annotator"):
        make_study(db, people, "s", "test", annotators=("researcher",))


# ---------------------------------------------------------------- the docs in step with the table


ACCESS_PAGE = ROOT / "docs" / "reference" / "access.md"


def test_docs_pages_table_names_who_opens_each_page_as_the_table_says():
    """The 'who' column of docs/reference/access.md's page table (hand-written beside its 'what')."""
    section = ACCESS_PAGE.read_text(encoding="utf-8").split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    who = {cells[0].strip("| "): cells[1] for cells in rows[1:]}
    assert who == {p.title: access.who_text(p.key) for p in built_in_pages()}, (
        "docs/reference/access.md's page table and structext_core/studio/access.py disagree; "
        "the 'who' column is access.who_text()")


def test_docs_who_sees_what_table_is_generated_from_the_access_table():
    """The site's hook (docs/hooks.py) puts access.markdown_table() where the page's marker is."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="reference/access.md"))
    built = hooks.on_page_markdown(ACCESS_PAGE.read_text(encoding="utf-8"), page, {}, None)
    assert access.markdown_table() in built and "<!-- generated" not in built


def test_aibench_data_sets_on_results_are_sealed_by_open_studies_and_open_pairwise_studies(db, people):
    """The Results drill-down shows keys and the systems' names beside their images: visitors
    and annotators see no data set without public mode, and in it none that an open AIBench
    study asks questions of or an open blind pairwise study compares."""
    names = ["asked", "compared", "free"]
    now = 1.0
    db.execute("INSERT INTO studies (name, suite, n_items, seed, rule_text, created_at, benchmark)"
               " VALUES ('s', 'asked', 1, 0, 'rule', ?, 'aibench')", [now])
    db.execute("INSERT INTO pairwise_studies (name, dataset, seed, created_at) VALUES ('p', 'compared', 0, ?)", [now])
    for who in ("visitor", "ann1"):
        assert data_scope.visible_datasets(db, people[who], "aibench", names) == []
    assert data_scope.visible_datasets(db, people["researcher"], "aibench", names) == names
    access.set_public_mode(db, True, people["admin"])
    for who in ("visitor", "ann1"):
        assert data_scope.visible_datasets(db, people[who], "aibench", names) == ["free"]
    db.execute("UPDATE pairwise_studies SET status = 'closed'")
    db.execute("UPDATE studies SET status = 'closed'")
    assert data_scope.visible_datasets(db, people["ann1"], "aibench", names) == names


@pytest.mark.parametrize("public_on", [False, True])
@pytest.mark.parametrize("role", access.ROLES)
def test_home_presents_every_benchmark_and_only_pages_the_role_may_open(role, public_on):
    """Issue 32, item 6: a section a benchmark of the registry, each linking only to pages ``role`` opens."""
    sections = access.home_sections(role, public_on)
    assert [s.title for s in sections] == [b.display_name for b in protocol.REGISTRY.values()]
    for name, section in zip(protocol.NAMES, sections):
        assert section.summary
        linked = [(place.title, place.link.partition("?")[0], place.text) for place in section.places]
        wanted = [p for p in protocol.get_module(name).PLACES if access.can_open(role, p.page, public_on)]
        assert [(access.page(p.page).title, access.page(p.page).url_path, p.text) for p in wanted] == linked
    aibench = sections[protocol.NAMES.index("aibench")]
    assert "results?benchmark=aibench" in [place.link for place in aibench.places]  # everyone opens Results
