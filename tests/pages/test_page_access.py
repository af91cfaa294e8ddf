"""Every page, run as every role with AppTest: refused pages show only the refusal, allowed pages
render, and an annotator in an open Test-Hard study finds no answer, rule hint or other person's
response of the study's items in any element, dataframe, chart or download, with the public
read-only mode off and on. A researcher, run the same way, does find them (the search works).

The data are real: generated suites, model results scored by the core, a study answered
through the study API, a rewrite campaign.
"""

from __future__ import annotations

import html
import json
import os
import re
import string
from pathlib import Path

import pytest
import streamlit.elements.widgets.button as st_button
from streamlit.testing.v1 import AppTest

from structext_core.aibench import question_review as qr
from structext_core.structext_eval import campaign, results_store, sealed, suites
from structext_core.structext_eval import samples as samples_mod
from structext_core.structext_eval import study as structext_study
from structext_core.studio import access, accounts, data_scope, storage, study
from structext_core.studio.crowd import links
from tests.aibench import review_data
from tests.pages.html_tables import html_blocks
from tests.pages.light_choices import LightDownloads, choice, choices
from tests.results_data import result_lines

ROOT = Path(__file__).resolve().parents[2]
HARD = suites.SuiteConfig("test-hard", (2,), (1, 2), 1)  # 58 samples: every task, two cells
TEST = suites.SuiteConfig("test", (1,), (1,), 1)  # 29 samples
N_ITEMS = 24
USERS = ("visitor", "ann1", "researcher", "lead", "admin")
#: A participant who came by the study's link (an annotator account with no password, its external id kept):
#: the seal's searches run as them too, on every page an annotator may open.
PARTICIPANT = "participant"
REVIEW_SET = "review-set"
ANN2_REVIEW_REASON = "ann2 removes this because zqxj-review-secret"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Suites, accounts, an open Test-Hard study answered in part, model results, a campaign."""
    root = tmp_path_factory.mktemp("access_pages")
    accounts.credentials.SCRYPT_N, saved_n = 2**4, accounts.credentials.SCRYPT_N
    try:
        hard = suites.generate_suite(HARD, seed=0)
        test = suites.generate_suite(TEST, seed=0)
        samples_mod.write_jsonl(root / "suites" / "test-hard.jsonl", hard)
        samples_mod.write_jsonl(root / "suites" / "test.jsonl", test)
        db = storage.open_db(root / "structext.db")
        people = {
            "visitor": None,
            "admin": accounts.create_user(db, "lead", "password1", "admin"),
            "researcher": accounts.create_user(db, "reader", "password1", "researcher"),
            "lead": accounts.create_user(db, "pi", "password1", "lead"),
            "ann1": accounts.create_user(db, "ann1", "password1", "annotator"),
            "ann2": accounts.create_user(db, "ann2", "password1", "annotator"),
        }
    finally:
        accounts.credentials.SCRYPT_N = saved_n
    study_id = structext_study.create_study(db, name="hard-pilot", suite="test-hard", samples=hard, n_items=N_ITEMS,
                                  annotator_ids=[people["ann1"]["id"], people["ann2"]["id"]])
    study.add_lead(db, study_id, people["lead"]["id"], by=people["admin"])  # the lead runs the study
    link = links.create_link(db, study_id, places=3, expires_at=None, id_param="PROLIFIC_PID",
                             by=people["admin"]["id"])
    people[PARTICIPANT] = links.enrol(db, link.token, {"PROLIFIC_PID": "5f0a1b2c3d4e5f6a7b8c9d0e",
                                                       "STUDY_ID": "s-1", "SESSION_ID": "x-1"}).user
    responses = {"ann1": [], "ann2": [], PARTICIPANT: []}
    clock = 1000.0
    for who, count in (("ann2", 6), ("ann1", 2), (PARTICIPANT, 2)):
        study.accept_rule(db, study_id, people[who]["id"], at=clock)
        for n in range(count):
            view = study.open_question(db, study_id, people[who]["id"], at=clock)
            clock += 20
            text = f"{who} wrote reply number {n} zqxj"
            study.submit_answer(db, people[who]["id"], view.assignment_id, text, at=clock)
            responses[who].append(text)
    for name, rows in (("hard.jsonl", hard), ("test.jsonl", test)):
        results_store.import_results(db, "\n".join(result_lines(rows)).encode(), name, rows, user_id=people["admin"]["id"])
    campaign.create_campaign(db, "Real pilot", test, 4, [people["ann1"]["id"]], people["admin"])
    # An AIBench question review: one paper reviewed by ann1 and ann2; ann2 has decided (and submitted).
    review_data.stored_set(root, papers=1, name=REVIEW_SET)
    saved_dir = os.environ.get("STRUCTEXT_AIBENCH_DIR")
    os.environ["STRUCTEXT_AIBENCH_DIR"] = str(root / "aibench")
    try:
        cid = qr.create_campaign(db, "Review pilot", REVIEW_SET, [people["ann1"]["id"], people["ann2"]["id"]],
                                 people["admin"], double_share=1.0)
        mine = next(i for i in qr.list_items(db, cid) if i["reviewer_id"] == people["ann2"]["id"])
        for n, q in enumerate(qr.paper_of(mine).questions):
            qr.save_decision(db, mine["id"], people["ann2"], q.id, "remove" if n == 0 else "accept",
                             reason=ANN2_REVIEW_REASON if n == 0 else "")
        qr.submit(db, mine["id"], people["ann2"])
    finally:
        if saved_dir is None:
            os.environ.pop("STRUCTEXT_AIBENCH_DIR", None)
        else:
            os.environ["STRUCTEXT_AIBENCH_DIR"] = saved_dir
    items = [json.loads(r[0]) for r in db.execute("SELECT sample_json FROM study_items WHERE study_id = ?",
                                                   [study_id])]
    return {"root": root, "people": people, "items": items, "responses": responses, "study_id": study_id,
            "hard": hard, "test": test}


@pytest.fixture
def env(world, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(world["root"] / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(world["root"] / "suites"))
    monkeypatch.setenv("STRUCTEXT_AIBENCH_DIR", str(world["root"] / "aibench"))
    return world


def secrets_of(world, viewer: str = "ann1") -> dict[str, bytes]:
    """What ``viewer`` (ann1, or the participant who came by the link) must never receive: the answers
    (specific enough not to match by chance, and not copied out of a reference they are shown) and rule
    hints of the study's items, the other people's responses and per-person results."""
    items = world["items"]
    references = "\n".join(s["reference"] for s in items)
    answers = {f"answer of {s['id']}": s["answer"] for s in items
               if len(s["answer"]) >= 12 and s["answer"] not in references}
    hints = {f"rule hint of task {s['task_id']}": s["rule_hint"] for s in items}
    others = {f"{who}'s response {i}": text for who, texts in world["responses"].items() if who != viewer
              for i, text in enumerate(texts)}
    secrets = {**answers, **hints, **others, "per-person results of ann2": "human:ann2",
               "ann2's decision on a double-reviewed AIBench paper": ANN2_REVIEW_REASON}
    assert len(answers) >= 8, "too few specific answers to make the search meaningful"
    return {label: forms(text) for label, text in secrets.items()}


def forms(text: str) -> list[bytes]:
    """The bytes a text takes raw (page, Arrow, protobuf), inside JSON, inside CSV, in a Markdown
    table's cell (safe_text.markdown_table: each punctuation mark escaped, white space as one space)
    and in a text block's HTML (safe_text.preformatted_html: ``<``, ``>`` and ``&`` escaped)."""
    cell = "".join("\\" + c if c in string.punctuation else c for c in " ".join(text.split()))
    variants = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], text.replace('"', '""'), cell,
                html.escape(text, quote=False)}
    return [v.encode("utf-8") for v in variants]


class Downloads:
    """The bytes of every download a run builds: Streamlit's buttons' and the light download rows'
    (light_choice.downloads), files made on the click included (a click calls what makes them)."""

    def __init__(self, monkeypatch):
        self._files: list[tuple[str, bytes]] = []
        self._light = LightDownloads(monkeypatch)
        original = st_button.marshall_file

        def capture(coordinates, data, proto, mimetype, file_name=None, **kwargs):
            self._files.append((file_name or "", _bytes(data() if callable(data) else data)))
            return original(coordinates, data, proto, mimetype, file_name, **kwargs)

        monkeypatch.setattr(st_button, "marshall_file", capture)

    @property
    def files(self) -> list[tuple[str, bytes]]:
        return self._files + [(name, _bytes(make())) for name, make in self._light.offered]


def _bytes(content) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else bytes(content)


def nodes(node):
    """Every block and element below ``node`` (depth first)."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from nodes(child)


def elements(at) -> list:
    return [n for n in nodes(at._tree) if not hasattr(n, "children")]


def run_page(page_key: str, user: dict | None, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / access.page(page_key).file), default_timeout=90)
    if user is not None:
        at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def leaks(at, downloads: Downloads, secrets: dict[str, list[bytes]]) -> dict[str, list[str]]:
    """Where each secret shows up: element protos (text, tooltips, dataframes and chart data as
    Arrow bytes, options), block labels, dataframe values, download bytes."""
    found: dict[str, list[str]] = {}
    blobs = [(f"{type(n).__name__} element", n.proto.SerializeToString()) for n in nodes(at._tree)
             if getattr(n, "proto", None) is not None]
    blobs += [(f"dataframe {i}", d.value.to_csv().encode("utf-8")) for i, d in enumerate(at.dataframe)]
    blobs += [(f"download {name}", data) for name, data in downloads.files]
    for label, secret in secrets.items():  # each secret in each of its forms
        places = [where for where, blob in blobs if any(form in blob for form in secret)]
        if places:
            found[label] = places
    return found


CASES = [(p.key, who) for p in access.PAGES for who in USERS] + [
    (p.key, PARTICIPANT) for p in access.PAGES if access.can_open(access.ANNOTATOR, p.key, True)]


@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
@pytest.mark.parametrize("page_key, who", CASES, ids=[f"{p}-{w}" for p, w in CASES])
def test_page_as_role(env, monkeypatch, page_key, who, public):
    people = env["people"]
    db = storage.open_db()
    access.set_public_mode(db, public, people["admin"])
    user = people[who]
    role = access.role_of(user)
    downloads = Downloads(monkeypatch)
    at = run_page(page_key, user)
    if not access.can_open(role, page_key, public):
        shown = elements(at)
        assert [e.value for e in at.error] == [access.refusal(user, page_key, public)]
        assert len(shown) == 1, [type(e).__name__ for e in shown]  # the refusal and nothing else
        assert not downloads.files
        return
    assert at.title, "the page drew no title"
    if role == "annotator":
        assert leaks(at, downloads, secrets_of(env, who)) == {}


@pytest.mark.parametrize("who", ["ann1", PARTICIPANT])
@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
def test_annotator_finds_nothing_sealed_on_results_views_and_drill_downs(env, monkeypatch, public, who):
    """Beyond the default view: each Results view and the drill-down, as ann1 and as the participant."""
    access.set_public_mode(storage.open_db(), public, env["people"]["admin"])
    secrets = secrets_of(env, who)
    for view in ("heatmap", "people_vs_models", "paired", "depth_width", "leaderboard"):
        downloads = Downloads(monkeypatch)
        at = run_page("results", env["people"][who], rs_view=view, rs_row="suite", rs_col="model",
                      rs_drill_open=True)  # the drill-down open: the search reads it too
        if not public:
            charted = at.get("vega_lite_chart") or [c for c in at.get("bidi_component")
                                                     if c.proto.component_name.endswith("heatmap_table")]
            assert not charted or "rs_paper_view" in choices(at)  # paper tables only
            assert not at.radio  # no choice of data: there is nothing else for them
        assert leaks(at, downloads, secrets) == {}, view


def test_annotator_in_public_mode_sees_only_suites_in_no_open_study(env, monkeypatch):
    access.set_public_mode(storage.open_db(), True, env["people"]["admin"])
    at = run_page("explore", env["people"]["ann1"])
    assert choice(at, "explore_suite").options == ["test"]
    tasks_in_study = {s["task_id"] for s in env["items"]}
    sample = next(s for s in env["test"] if s["id"] == at.session_state["explore_sample"])
    hint = [html.unescape(h) for h in re.findall(r'<div class="sx-card-hint" role="note">(.*?)</div>', " ".join(html_blocks(at)), re.S)]
    assert hint == [sealed.HINT_WITHHELD if sample["task_id"] in tasks_in_study else sample["rule_hint"]]
    at = run_page("results", env["people"]["ann1"], rs_view="heatmap", rs_row="suite", rs_col="model",
                  rs_drill_open=True)
    suites_shown = {c for c in at.selectbox(key="rs_heatmap_suite_model_drill_row").options}
    assert suites_shown == {"test"}
    assert set(at.selectbox(key="rs_heatmap_suite_model_drill_col").options) == {"good", "weak"}


@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
def test_researcher_does_see_them_so_the_search_finds_leaks(env, monkeypatch, public):
    """The positive control: the same search on a researcher's Explore and Results finds the
    answers, rule hints and ann2's responses."""
    access.set_public_mode(storage.open_db(), public, env["people"]["admin"])
    secrets = secrets_of(env)
    downloads = Downloads(monkeypatch)
    explore = run_page("explore", env["people"]["researcher"], explore_suite="test-hard")
    found = leaks(explore, downloads, secrets)
    assert sum(label.startswith("answer of") for label in found) >= 8
    assert any(label.startswith("rule hint") for label in found)
    downloads = Downloads(monkeypatch)
    results = run_page("results", env["people"]["researcher"], rs_view="heatmap", rs_row="model", rs_col="suite",
                       rs_drill_open=True, rs_people_as="each")
    assert "human:ann2" in results.selectbox(key="rs_heatmap_model_suite_drill_row").options
    found = leaks(results, downloads, secrets)
    assert "per-person results of ann2" in found


def test_a_study_shown_only_when_closed_is_off_results_until_then(env, monkeypatch):
    admin = env["people"]["admin"]
    db = storage.open_db()
    access.set_results_when_closed(db, env["study_id"], True, admin)
    try:
        at = run_page("results", env["people"]["researcher"], rs_view="heatmap", rs_row="model", rs_col="suite",
                      rs_drill_open=True)
        assert not any(m.startswith("human") for m in at.selectbox(key="rs_heatmap_model_suite_drill_row").options)
        study.set_study_status(db, env["study_id"], "closed")
        at = run_page("results", env["people"]["researcher"], rs_view="heatmap", rs_row="model", rs_col="suite",
                      rs_drill_open=True)
        assert "human" in set(at.selectbox(key="rs_heatmap_model_suite_drill_row").options)  # pooled by default
        at = run_page("results", env["people"]["researcher"], rs_view="heatmap", rs_row="model", rs_col="suite",
                      rs_drill_open=True, rs_people_as="each")
        shown = set(at.selectbox(key="rs_heatmap_model_suite_drill_row").options)
        assert {"human:ann1", "human:ann2"} <= shown and "human" not in shown  # never the pool beside its people
    finally:
        study.set_study_status(db, env["study_id"], "open")
        access.set_results_when_closed(db, env["study_id"], False, admin)


def test_accounts_and_study_admin_offer_researcher_accounts_public_mode_and_results_visibility(env):
    admin = env["people"]["admin"]
    access.set_public_mode(storage.open_db(), False, admin)
    at = run_page("accounts", admin, ac_create_open=True, ac_public_open=True)  # its sections, opened
    assert at.radio(key="ac_new_role").options == ["annotator", "researcher", "lead", "admin"]
    assert at.toggle(key="ac_public_mode").value is False
    at.toggle(key="ac_public_mode").set_value(True).run()
    assert access.public_mode(storage.open_db())
    assert any(s.value == "Public read-only mode is on." for s in at.success)
    at.toggle(key="ac_public_mode").set_value(False).run()
    assert not access.public_mode(storage.open_db())
    at = run_page("study_admin", admin, sa_section="Dashboard", sa_open_settings=True)
    box = at.checkbox(key=f"sa_results_when_closed_{env['study_id']}")
    box.check().run()
    assert study.get_study(storage.open_db(), env["study_id"]).results_when_closed == 1
    at.checkbox(key=f"sa_results_when_closed_{env['study_id']}").uncheck().run()
    assert study.get_study(storage.open_db(), env["study_id"]).results_when_closed == 0


def test_rewrite_item_that_is_also_an_open_study_question_keeps_its_answer_hidden(isolated_env, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db()
    admin = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    sample = suites.generate_cell(8, 1, 1, 1, suite="test")[0]  # JSON object by id
    # The study first: a study leaves out what its annotators were already given to rewrite.
    study_id = structext_study.create_study(db, name="test-pilot", suite="test", samples=[sample], n_items=1,
                                  annotator_ids=[ann["id"]])
    campaign.create_campaign(db, "Pilot", [sample], 1, [ann["id"]], admin)
    downloads = Downloads(monkeypatch)
    at = run_page("rewrite", ann)
    assert [w.value for w in at.warning] == [data_scope.rewrite_answer_refusal(db, ann, sample)]
    assert "open study 'test-pilot'" in at.warning[0].value
    assert leaks(at, downloads, {"answer": forms(sample["answer"])}) == {}
    assert not at.text_area  # no workspace: nothing to rewrite without the answer
    study.set_study_status(db, study_id, "closed")
    at = run_page("rewrite", ann)
    assert not any("open study" in w.value for w in at.warning)
    assert sample["answer"] in [c.value for c in at.code]


def test_a_suite_chosen_before_its_study_opened_is_not_shown(env):
    """The session still names test-hard (chosen earlier, or forged): Explore falls back to a visible suite."""
    access.set_public_mode(storage.open_db(), True, env["people"]["admin"])
    at = run_page("explore", env["people"]["ann1"], explore_suite="test-hard")
    assert choice(at, "explore_suite").value == "test"
    assert choice(at, "explore_suite").options == ["test"]


def test_the_lead_does_see_a_reviewers_decision_so_the_search_finds_review_leaks(env, monkeypatch):
    """ann2's removal reason is on the lead's page (as ann1 it must not be anywhere: test_page_as_role)."""
    downloads = Downloads(monkeypatch)
    at = run_page("question_review_admin", env["people"]["admin"])
    found = leaks(at, downloads, {"review": forms(ANN2_REVIEW_REASON)})
    assert "review" in found
    at = run_page("question_review", env["people"]["ann1"])
    assert at.subheader and at.radio, "ann1's review page shows a paper with its decisions"
    assert leaks(at, downloads, {"review": forms(ANN2_REVIEW_REASON)}) == {}
