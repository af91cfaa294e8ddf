"""The study admin page and the log-in widgets of ``structext_core.ui``, with AppTest."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import samples, suites
from structext_core.structext_eval import study as structext_study
from structext_core.studio import access, accounts, storage, study
from structext_core.views import dashboard
from tests.pages import light_forms
from tests.pages.accounts_page import open_sections
from tests.pages.html_tables import html_figures
from tests.pages.light_choices import choice, choices, choose, open_section, sections
from tests.pages.light_parts import notes

PAGE = Path(__file__).resolve().parents[2] / "pages" / "study_admin.py"
ACCOUNTS_PAGE = Path(__file__).resolve().parents[2] / "pages" / "accounts.py"


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.delenv("STRUCTEXT_ADMIN_USER", raising=False)
    monkeypatch.delenv("STRUCTEXT_ADMIN_PASSWORD", raising=False)
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator"))}


@pytest.fixture
def mini_suite(tmp_path):
    """A small suite file in the data folder, listed by the setup form as 'mini'."""
    rows = [suites.generate_sample(t, d, w, suite="mini", index=0)
            for t in range(1, 30) for d in (1, 2) for w in (1, 2)]
    samples.write_jsonl(tmp_path / "suites" / "mini.jsonl", rows)
    return rows


#: The dashboard's lazy expanders (drawn only while open), by what is inside.
OPEN = {"details": "sa_open_details", "settings": "sa_open_settings", "progress": "sa_open_progress",
        "gold": "sa_open_gold", "flags": "sa_open_flags", "accuracy": "sa_open_accuracy", "time": "sa_open_time",
        "pairs": "sa_open_pairs", "fast": "sa_open_fast", "statuses": "sa_open_statuses", "who": "sa_open_who",
        "places": "sa_open_places", "spread": "sa_open_spread", "leads": "sl_open_leads"}


def open_page(user, section=None, opened=()) -> AppTest:
    """The page as ``user``; ``opened``: the dashboard's lazy expanders open (names of :data:`OPEN`)."""
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    if user is not None:
        at.session_state["user"] = user
    if section is not None:
        at.session_state["sa_section"] = section
    for name in opened:
        at.session_state[OPEN[name]] = True
    return at.run()


def open_accounts(user) -> AppTest:
    """The Accounts page (Admin), where accounts are managed (once a tab of this page)."""
    at = AppTest.from_file(str(ACCOUNTS_PAGE), default_timeout=60)
    at.session_state["user"] = user
    return open_sections(at).run()  # every section open, as a lead who clicked them


def click(at, label) -> AppTest:
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}; buttons: {[b.label for b in at.button]}"
    return found[0].click().run()


def widget(widgets, label):
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{label!r}: {[w.label for w in widgets]}"
    return found[0]


def count(db, table):
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


# ---------------------------------------------------------------- access


@pytest.mark.parametrize("who, message", [("ann1", "This page is for leads or admins only. You are logged in as ann1 (annotator)."),
                                          (None, "You are not logged in")])
def test_page_is_refused_to_annotators_and_visitors(db, people, who, message):
    at = open_page(people.get(who))
    assert message in notes(at, "error")[0].value
    assert not at.title and not choices(at) and not at.text_input  # nothing of the page was drawn


# ---------------------------------------------------------------- set up


def setup_key(at) -> str:
    """The key of the StrucText set-up form on the page (one light form; a new one after each study created)."""
    (key,) = [key for key in light_forms.light_forms(at) if key.startswith("sa_new_study")]
    return key


def create(at, name="pilot", suite="mini", n_items=20, annotators=("ann1", "ann2"), rule=None, **more) -> AppTest:
    """Fill the set-up form (what is not given keeps its default; ``more``: other fields by name) and click
    Create study."""
    ids = [u["id"] for u in accounts.list_users(storage.open_db()) if u["username"] in annotators]
    values = {"name": name, "suite": suite, "n_items": n_items, "annotators": ids, **more}
    if rule is not None:
        values["rule_text"] = rule
    at = light_forms.submit(at, setup_key(at), **values)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_setup_form_defaults(db, people):
    at = open_page(people["lead"])
    assert choice(at, "sa_section").shown == "Set up a study"  # no study yet: the setup tab is the default
    assert setup_key(at) == "sa_new_study_0" and not at.text_input and not at.number_input  # one element
    fields = light_forms.fields(at, setup_key(at))
    assert fields["suite"]["value"] == "test-hard" and fields["n_items"]["value"] == 500
    assert fields["suite"]["help"].endswith(f"the .jsonl files in {suites.data_dir()}.")  # the admin: where they are
    assert fields["rule_text"]["value"] == structext_study.DEFAULT_RULE and fields["rule_text"]["lines"] > 1
    assert fields["show_correctness"] == {**fields["show_correctness"], "kind": "check", "value": False,
                                          "label": "Tell annotators after each answer whether it was correct"}
    assert [f["label"] for f in fields.values()][-3:] == ["Practice items", "Gold items", "Gold pass mark (%)"]
    assert [label for _, label in fields["annotators"]["options"]] == ["ann1", "ann2"]


def test_admin_creates_a_study(db, people, mini_suite):
    at = create(open_page(people["lead"]), rule="No tools, no web.")
    assert not notes(at, "error")
    assert "Study 'pilot' (mini) created for 2 annotators: each answers 20 study questions." in notes(at, "success")[0].value
    # a second study, made from the form: the form is a new one after it, empty (it stayed filled,
    # inviting a second Create of the same study)
    at.session_state["sa_section"] = "Set up a study"
    at = at.run()
    assert setup_key(at) == "sa_new_study_1"
    fresh = light_forms.fields(at, setup_key(at))
    assert fresh["name"]["value"] == "" and fresh["annotators"]["value"] == []
    at = create(at, name="pilot-2", annotators=("ann1",))
    assert "Study 'pilot-2' (mini) created for 1 annotator" in notes(at, "success")[0].value
    saved = next(s for s in study.list_studies(db) if s.name == "pilot")
    assert (saved.name, saved.suite, saved.n_items, saved.rule_text, saved.show_correctness,
            saved.n_annotators) == ("pilot", "mini", 20, "No tools, no web.", False, 2)
    assert count(db, "assignments") == 40 + 20


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"name": ""}, "Study name is empty"),
        ({"n_items": 200}, "between 1 and 116"),
        ({"rule": "   "}, "rule is empty"),
    ],
)
def test_bad_setup_shows_a_message_and_creates_nothing(db, people, mini_suite, changes, message):
    at = create(open_page(people["lead"]), **changes)
    assert message in notes(at, "error")[0].value and "The study was not created." in notes(at, "error")[0].value
    assert count(db, "studies") == 0 and count(db, "assignments") == 0


def test_duplicate_study_name_is_refused(db, people, mini_suite):
    create(open_page(people["lead"]))
    at = create(open_page(people["lead"], section="Set up a study"), name="PILOT")
    assert "already exists" in notes(at, "error")[0].value
    assert count(db, "studies") == 1


# ---------------------------------------------------------------- accounts


def account_form(at, username, password, role="annotator"):
    widget(at.text_input, "User name").input(username)
    widget(at.text_input, "Password").input(password)
    widget(at.radio, "Role").set_value(role)
    return click(at, "Create account")


def test_accounts_have_their_own_page_in_the_admin_section(db, people):
    """Regression (issue item 9h): accounts were managed under a tab of "Human-baseline studies"."""
    assert (access.page("accounts").title, access.page("accounts").section) == ("Accounts", "Admin")
    at = open_accounts(people["lead"])
    assert [t.value for t in at.title] == ["Accounts"] and widget(at.button, "Create account")
    studies = open_page(people["lead"])
    assert "Accounts" not in [t.label for t in studies.tabs]
    assert not [b for b in studies.button if b.label == "Create account"]


def test_admin_creates_accounts(db, people):
    at = account_form(open_accounts(people["lead"]), "ann3", "long enough")
    assert "Account 'ann3' (annotator) created." in notes(at, "success")[0].value
    assert accounts.authenticate(db, "ann3", "long enough")["role"] == "annotator"
    assert "ann3" in at.dataframe[0].value["username"].tolist()


@pytest.mark.parametrize("username, password, message", [
    ("ann3", "short", "at least 8 characters"),
    ("", "long enough", "User name is empty"),
    ("ANN1", "long enough", "already taken"),
])
def test_bad_account_input_shows_a_message_and_changes_nothing(db, people, username, password, message):
    at = account_form(open_accounts(people["lead"]), username, password)
    assert message in notes(at, "error")[0].value and "No account was created." in notes(at, "error")[0].value
    assert count(db, "users") == 3


def test_admin_sets_a_new_password(db, people):
    at = open_accounts(people["lead"])
    widget(at.selectbox, "Account").select("ann1")
    widget(at.text_input, "New password").input("brand new pw")
    at = click(at, "Set password")
    assert "New password set for 'ann1'." in notes(at, "success")[0].value
    assert accounts.authenticate(db, "ann1", "brand new pw") is not None


# ---------------------------------------------------------------- dashboard and export


@pytest.fixture
def answered_study(db, people, mini_suite):
    """ann1 answers everything right (taking 60 s each), ann2 gets every other one wrong
    and answers the first in 1 s (implausibly fast)."""
    study_id = structext_study.create_study(db, name="pilot", suite="mini", samples=mini_suite, n_items=6,
                                  annotator_ids=[people["ann1"]["id"], people["ann2"]["id"]])
    for name in ("ann1", "ann2"):
        user_id = people[name]["id"]
        study.accept_rule(db, study_id, user_id)
        clock = 1000.0
        while (view := study.open_question(db, study_id, user_id, at=clock)) is not None:
            truth = db.execute("SELECT json_extract(i.sample_json, '$.answer') FROM assignments a"
                               " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [view.assignment_id]).fetchone()[0]
            took = 1.0 if (name == "ann2" and view.seq == 1) else 60.0
            for beat in range(5, int(took), 5):  # the page's heartbeats while the question is on screen
                study.heartbeat(db, user_id, view.assignment_id, None, at=clock + beat)
            clock += took
            wrong = name == "ann2" and view.seq % 2 == 0
            study.submit_answer(db, user_id, view.assignment_id, "zzz not it" if wrong else truth, at=clock)
    return study_id


def metric(at, label):
    return widget(html_figures(at), label).value


def test_dashboard_shows_the_figures(db, people, answered_study):
    at = open_page(people["lead"], opened=("progress", "accuracy", "fast"))
    assert not at.exception
    assert choice(at, "sa_section").shown == "Dashboard"
    progress = at.dataframe[0].value.set_index("annotator")
    assert progress.loc["ann1", "answered"] == 6 and progress.loc["ann2", "remaining"] == 0
    assert metric(at, "Counted answers") == "12"
    assert metric(at, "Mean annotator") == "75.0"  # (100 + 50) / 2
    assert metric(at, "Best annotator") == "100.0"
    assert metric(at, "All answers pooled") == "75.0"
    accuracy = next(d.value for d in at.dataframe if "score" in d.value.columns).set_index("annotator")
    assert accuracy.loc["ann2", "score"] == 50.0 and accuracy.loc["ann2", "n"] == 6
    assert metric(at, "Fleiss' kappa") != "n/a"
    flagged = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert flagged["annotator"].tolist() == ["ann2"] and "under 5 s" in flagged["reason"].iloc[0]


def test_the_progress_table_fits_two_narrow_tables(db, people, answered_study):
    """Regression (issue item 9g): one progress table of 13 columns was cut on the right."""
    at = open_page(people["lead"], opened=("progress",))
    progress, hours = at.dataframe[0].value, at.dataframe[1].value
    assert list(progress.columns) == dashboard.PROGRESS_COLUMNS and len(progress.columns) <= 9
    # the times in the unit that fits them (issue 46), one unit for the table
    unit = hours.columns[1].rpartition(" ")[2]
    assert unit in ("(s)", "(min)", "(h)")
    assert list(hours.columns) == ["annotator", *(f"{part} {unit}" for part in dashboard.TIME_PARTS)]
    assert hours.set_index("annotator").loc["ann1", f"answering {unit}"] > 0


def test_dashboard_groups_by_format(db, people, answered_study):
    at = open_page(people["lead"], opened=("accuracy",))
    at.segmented_control[0].set_value("Format").run()
    accuracy = next(d.value for d in at.dataframe if "score" in d.value.columns)
    assert "language" in accuracy.columns and accuracy["n"].sum() == 12


def test_dashboard_without_answers(db, people, mini_suite):
    structext_study.create_study(db, name="fresh", suite="mini", samples=mini_suite, n_items=3,
                       annotator_ids=[people["ann1"]["id"]])
    at = open_page(people["lead"])
    assert "No answers yet" in notes(at, "info")[0].value


def test_close_study_from_the_dashboard(db, people, answered_study):
    at = click(open_page(people["lead"], opened=("details",)), "Close the study (no more answers)")
    assert study.get_study(db, answered_study).status == "closed"
    click(at, "Reopen the study")
    assert study.get_study(db, answered_study).status == "open"


def test_export_section_offers_the_four_downloads(db, people, answered_study):
    at = open_page(people["lead"], section="Export")
    assert not at.exception
    assert [b.label for b in at.get("download_button")] == [
        "Responses (CSV)", "Responses (JSONL)", "Human results (model-result JSONL)",
        "People as an Inspect AI log (.eval)"]


# ---------------------------------------------------------------- the log-in frame (ui)


def frame():
    """What app.py does with the ui widgets, without the pages."""
    import streamlit as st

    from structext_core import ui
    from structext_core.studio import accounts

    db = ui.get_db()
    accounts.ensure_admin_from_env(db)
    if not accounts.has_admin(db):
        ui.first_run_form()
        st.stop()
    if ui.current_user() is None:
        ui.login_form()
    else:
        ui.keep_cookie()
        if st.button("Log out"):  # as the Log out page does (pages/logout.py)
            ui.log_out()
            st.rerun()
        st.session_state.setdefault("hb_notice", "page state of this user")
        st.write(f"Welcome {ui.current_user()['username']}")


def frame_app() -> AppTest:
    return AppTest.from_function(frame, default_timeout=30).run()


def log_in(at, username, password) -> AppTest:
    widget(at.text_input, "User name").input(username)
    widget(at.text_input, "Password").input(password)
    return click(at, "Log in")


def test_log_in_and_out(db, people):
    at = log_in(frame_app(), "ann1", "password-123")
    assert at.session_state["user"] == {"id": people["ann1"]["id"], "username": "ann1", "role": "annotator"}
    assert any("Welcome ann1" in m.value for m in at.markdown)
    at = click(at, "Log out")
    assert "user" not in at.session_state and "hb_notice" not in at.session_state
    assert widget(at.text_input, "User name")


@pytest.mark.parametrize("username, password", [("ann1", "wrong password"), ("nobody", "password-123")])
def test_failed_log_in_says_so_and_changes_nothing(db, people, username, password):
    at = log_in(frame_app(), username, password)
    assert notes(at, "error")[0].value == "Log-in failed: the user name or the password is wrong."
    assert "user" not in at.session_state


def test_first_run_creates_the_admin(db):
    at = frame_app()
    assert "create the admin account" in notes(at, "subheader")[0].value
    widget(at.text_input, "Admin user name").input("lead")
    widget(at.text_input, "Password").input("lead password")
    widget(at.text_input, "Repeat the password").input("lead password")
    at = click(at, "Create admin account")
    assert at.session_state["user"]["role"] == "admin"
    assert accounts.authenticate(db, "lead", "lead password")["role"] == "admin"


@pytest.mark.parametrize("password, repeat, message", [
    ("lead password", "lead passwort", "The two passwords differ"),
    ("short", "short", "at least 8 characters"),
])
def test_first_run_errors_change_nothing(db, password, repeat, message):
    at = frame_app()
    widget(at.text_input, "Admin user name").input("lead")
    widget(at.text_input, "Password").input(password)
    widget(at.text_input, "Repeat the password").input(repeat)
    at = click(at, "Create admin account")
    assert message in notes(at, "error")[0].value
    assert not accounts.has_admin(db) and "user" not in at.session_state


def test_admin_from_environment_skips_the_first_run_screen(db, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_ADMIN_USER", "boss")
    monkeypatch.setenv("STRUCTEXT_ADMIN_PASSWORD", "boss password")
    at = log_in(frame_app(), "boss", "boss password")
    assert at.session_state["user"]["role"] == "admin"


def test_add_an_annotator_from_the_dashboard(db, people, mini_suite):
    ann3 = accounts.create_user(db, "ann3", "password-123", "annotator")
    study_id = structext_study.create_study(db, name="pilot", suite="mini", samples=mini_suite, n_items=4,
                                  annotator_ids=[people["ann1"]["id"]])
    at = open_page(people["lead"], opened=("details",))
    chooser = widget(at.selectbox, "Add an annotator")
    assert chooser.options == ["ann2", "ann3"]  # members and admins are not offered
    chooser.select(ann3)
    at = click(at.run(), "Add to study")
    assert "ann3 now takes part in pilot." in notes(at, "success")[0].value
    assert study.annotator_names(db, study_id) == ["ann1", "ann3"]


def test_an_annotator_who_has_seen_answers_of_the_study_is_not_added(db, people, mini_suite):
    from structext_core.structext_eval import campaign

    study_id = structext_study.create_study(db, name="pilot", suite="mini", samples=mini_suite, n_items=len(mini_suite),
                                  annotator_ids=[people["ann1"]["id"]])
    # ann2 was given one of its samples to rewrite for Real-Test (the rewriting page shows its answer).
    campaign.create_campaign(db, "Real", [mini_suite[0]], 1, [people["ann2"]["id"]], people["lead"])
    at = open_page(people["lead"], opened=("details",))
    widget(at.selectbox, "Add an annotator").select(people["ann2"])
    at = click(at.run(), "Add to study")
    assert not at.exception
    assert notes(at, "error")[0].value.startswith("ann2 was not added: 'ann2' has already seen answers of this study: they were "
                                        "given 1 of its questions to rewrite for Real-Test")
    assert study.annotator_names(db, study_id) == ["ann1"]


# ---------------------------------------------------------------- practice, gold and flags (quality)


def test_setup_form_with_practice_and_gold_items(db, people, mini_suite):
    at = open_page(people["lead"])
    fields = light_forms.fields(at, setup_key(at))
    assert [fields[name]["value"] for name in ("practice_items", "gold_items", "gold_pass")] == [0, 0, 50]
    at = create(at, n_items=20, practice_items=3, gold_items=4, gold_pass=80)
    assert not notes(at, "error")
    # Issue 19: one count for every text (the annotator is told of 24, answers 27; the baseline counts 20).
    assert ("created for 2 annotators: each answers 24 study questions (20 counted + 4 gold) and 3 practice "
            "questions first.") in notes(at, "success")[0].value
    saved = study.list_studies(db)[0]
    assert (saved.n_items, saved.practice_items, saved.gold_items, saved.gold_pass) == (20, 3, 4, 0.8)
    kinds = dict(db.execute("SELECT kind, COUNT(*) FROM study_items GROUP BY kind").fetchall())
    assert kinds == {"study": 20, "practice": 3, "gold": 4}
    assert count(db, "assignments") == 2 * 27


def test_too_many_gold_items_is_refused_with_a_message(db, people, mini_suite):
    at = create(open_page(people["lead"]), n_items=5, gold_items=6)
    assert "The study was not created." in notes(at, "error")[0].value and "Gold items must be between 0" in notes(at, "error")[0].value
    assert count(db, "studies") == 0


@pytest.fixture
def gold_study(db, people, mini_suite):
    """A study with 2 practice and 3 gold items: ann1 answers everything right, ann2 misses
    every gold item and every practice item; ann2 flags two questions."""
    study_id = structext_study.create_study(db, name="gold", suite="mini", samples=mini_suite, n_items=4,
                                  annotator_ids=[people["ann1"]["id"], people["ann2"]["id"]],
                                  practice_items=2, gold_items=3, gold_pass=0.5)
    for name in ("ann1", "ann2"):
        user_id = people[name]["id"]
        study.accept_rule(db, study_id, user_id, at=0.0)
        clock = 10.0
        while (view := study.open_question(db, study_id, user_id, at=clock)) is not None:
            truth, kind = db.execute("SELECT json_extract(i.sample_json, '$.answer'), i.kind FROM assignments a"
                                     " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?",
                                     [view.assignment_id]).fetchone()
            wrong = name == "ann2" and kind != "study"
            study.submit_answer(db, user_id, view.assignment_id, "zzz not it" if wrong else truth, at=clock + 30)
            clock += 40
    items = [row[0] for row in db.execute("SELECT item_id FROM assignments WHERE user_id = ? ORDER BY seq LIMIT 2",
                                          [people["ann2"]["id"]])]
    study.flag_question(db, study_id, people["ann2"]["id"], items[0], "broken", "the key looks wrong")
    study.flag_question(db, study_id, people["ann2"]["id"], items[1], "unclear", "")
    return study_id


def test_dashboard_counts_no_practice_or_gold_and_flags_the_careless(db, people, gold_study):
    at = open_page(people["lead"], opened=("progress", "gold"))
    assert not at.exception
    progress = at.dataframe[0].value.set_index("annotator")
    assert progress.loc["ann1", "total"] == 7 and progress.loc["ann1", "answered"] == 7  # 4 + 3 gold
    # Issue 19: the chooser said 4 beside this total of 7; both now come from one count, broken down.
    assert "4 counted + 3 gold" in choice(at, "sa_study").shown
    assert any("asks each annotator 7 study questions (4 counted + 3 gold) and 2 practice questions first. Progress "
               "counts the 7 study questions" in c.value for c in notes(at, "caption"))
    assert metric(at, "Counted answers") == "8"  # the study's own 4 items of each; practice and gold left out
    assert metric(at, "Mean annotator") == "100.0"
    gold = next(d.value for d in at.dataframe if "gold_accuracy" in d.value.columns).set_index("annotator")
    assert gold.loc["ann2", "gold_accuracy"] == 0.0 and gold.loc["ann2", "check"] == "check this person's work"
    assert gold.loc["ann1", "gold_accuracy"] == 100.0 and gold.loc["ann1", "check"] == "ok"
    assert any("Below the gold pass mark (50%): ann2" in w.value for w in notes(at, "warning"))


def test_lead_sees_open_flags_and_resolves_one(db, people, gold_study):
    at = open_page(people["lead"], opened=("flags",))
    assert metric(at, "Open flags") == "2"
    table = next(d.value for d in at.dataframe if "note" in d.value.columns)
    assert table["kind"].tolist() == ["broken", "unclear"] and table["annotator"].tolist() == ["ann2", "ann2"]
    assert table["note"].iloc[0] == "the key looks wrong"
    first = table["flag"].iloc[0]
    widget(at.selectbox, "Flag to resolve").set_value(first)
    widget(at.text_input, "What was done").input("answer key checked: it is right")
    at = click(at, "Resolve flag")
    assert not at.exception and f"Flag {first} resolved." in notes(at, "success")[0].value
    assert metric(at, "Open flags") == "1"
    [left] = study.flags(db, gold_study, open_only=True)
    assert left.kind == "unclear"
    resolved = study.flags(db, gold_study)[0]
    assert (resolved.resolved_by, resolved.resolution) == ("lead", "answer key checked: it is right")
    widget(at.toggle, "Show resolved flags too").set_value(True)
    at.run()
    table = next(d.value for d in at.dataframe if "note" in d.value.columns)
    assert len(table) == 2 and table["resolution"].iloc[0] == "answer key checked: it is right"


def test_resolving_a_flag_without_a_note_changes_nothing(db, people, gold_study):
    at = click(open_page(people["lead"], opened=("flags",)), "Resolve flag")
    assert "The flag was not resolved." in notes(at, "error")[0].value and "Write what was done" in notes(at, "error")[0].value
    assert len(study.flags(db, gold_study, open_only=True)) == 2


def test_export_offers_practice_and_gold_answers_apart(db, people, gold_study):
    at = open_page(people["lead"], section="Export")
    assert [b.label for b in at.get("download_button")][-1] == "Practice and gold answers (CSV)"


# ---------------------------------------------------------------- account lifecycle (issue 13)


def choose_account(at, username):
    ids = {u["username"]: u["id"] for u in accounts.list_users(storage.open_db(), include_inactive=True)}
    return widget(at.selectbox, "Account to change").set_value(ids[username]).run()


def test_admin_disables_and_enables_an_account(db, people):
    token = accounts.issue_session(db, people["ann1"]["id"])
    at = choose_account(open_accounts(people["lead"]), "ann1")
    at = click(at, "Disable account…")
    assert accounts.account_status(db, people["ann1"]["id"]) == "active"  # not yet: a confirmation first
    at = click(at, "Yes, disable ann1")
    assert "'ann1' is disabled: it cannot log in, and 1 open session ended." in notes(at, "success")[0].value
    assert accounts.verify_session(db, token).reason == "disabled"
    assert accounts.log_in(db, "ann1", "password-123").message == accounts.DISABLED_MESSAGE
    table = at.dataframe[0].value.set_index("username")
    assert table.loc["ann1", "status"] == "disabled" and table.loc["ann2", "status"] == "active"
    at = click(choose_account(at, "ann1"), "Enable account")
    assert "'ann1' is enabled" in notes(at, "success")[0].value
    assert accounts.log_in(db, "ann1", "password-123").user == people["ann1"]


def disable(at, name):
    return click(click(choose_account(at, name), "Disable account…"), f"Yes, disable {name}")


def test_no_account_is_preselected_and_disabling_needs_a_confirmation_naming_it(db, people):
    """Issue 19: "Disable account" acted in one click on whichever account came first."""
    at = open_accounts(people["lead"])
    assert widget(at.selectbox, "Account to change").value is None
    assert not [b for b in at.button if b.label.startswith(("Disable", "Enable", "Delete"))]
    at = click(choose_account(at, "ann2"), "Disable account…")
    assert "Disable 'ann2'? It can no longer log in" in notes(at, "warning")[0].value
    at = click(at, "Cancel")
    assert accounts.account_status(db, people["ann2"]["id"]) == "active"
    assert [b.label for b in at.button if b.label.startswith("Disable")] == ["Disable account…"]


def test_disabling_oneself_or_the_last_enabled_admin_is_refused_on_the_page(db, people):
    at = disable(open_accounts(people["lead"]), "lead")
    assert "'lead' was not disabled. You cannot disable your own account" in notes(at, "error")[0].value
    boss = accounts.create_user(db, "boss", "password-123", "admin")
    accounts.disable_user(db, people["lead"]["id"], by_user=boss["id"])  # lead's page is still open
    at = disable(open_accounts(people["lead"]), "boss")
    assert "'boss' is the last enabled admin: it cannot be disabled" in notes(at, "error")[0].value
    assert accounts.account_status(db, boss["id"]) == "active"


@pytest.fixture
def ann1_answered(db, people, mini_suite):
    study_id = structext_study.create_study(db, name="pilot", suite="mini", samples=mini_suite, n_items=3,
                                  annotator_ids=[people["ann1"]["id"], people["ann2"]["id"]])
    study.accept_rule(db, study_id, people["ann1"]["id"])
    view = study.open_question(db, study_id, people["ann1"]["id"])
    study.submit_answer(db, people["ann1"]["id"], view.assignment_id, "my answer")
    return study_id


def markdown_text(at):
    return "\n".join(m.value for m in at.markdown)


def test_deleting_an_account_states_the_choice_and_needs_a_confirmation(db, people, ann1_answered):
    at = choose_account(open_accounts(people["lead"]), "ann1")
    new_name = f"deleted-user-{people['ann1']['id']}"
    shown = markdown_text(at)  # keep their data: the default, stated before anything is done
    assert f"renamed '{new_name}'" in shown and "Their 1 study answer stays" in shown
    widget(at.radio, "Delete the account and").set_value("remove")
    shown = markdown_text(at.run())
    assert "**Removed:**" in shown and "- 1 study answer with their timing and any score override" in shown
    assert "**Kept, as it cannot be removed:**" in shown and "0 approved rewrites" in shown
    at = click(at, "Delete account…")
    assert "Delete 'ann1' and remove their data? This cannot be undone." in notes(at, "warning")[0].value
    assert accounts.account_status(db, people["ann1"]["id"]) == "active"  # not yet
    at = click(at, "Cancel")
    assert not notes(at, "warning") and accounts.account_status(db, people["ann1"]["id"]) == "active"
    at = click(click(at, "Delete account…"), "Yes, delete ann1")
    assert (f"Account 'ann1' is deleted: it is now '{new_name}', and their data is removed as listed."
            in notes(at, "success")[0].value)
    assert count(db, "responses") == 0 and accounts.get_user(db, "ann1") is None
    assert at.dataframe[0].value.set_index("username").loc[new_name, "status"] == "deleted"
    options = widget(at.selectbox, "Account to change").options
    assert options and not any(new_name in option for option in options)  # a deleted account is done with


def test_deleting_and_keeping_the_data_keeps_the_answers_under_the_new_name(db, people, ann1_answered):
    at = choose_account(open_accounts(people["lead"]), "ann1")
    at = click(click(at, "Delete account…"), "Yes, delete ann1")
    assert "and their data is kept under that name." in notes(at, "success")[0].value
    rows = study.export_rows(db, ann1_answered)
    assert [(r["annotator"], r["annotator_removed"]) for r in rows] == [
        (f"deleted-user-{people['ann1']['id']}", True)]


# ---------------------------------------------------------------- study lifecycle (issue 13)


@pytest.fixture
def pilot(db, people, mini_suite):
    return structext_study.create_study(db, name="pilot", suite="mini", samples=mini_suite, n_items=4,
                              annotator_ids=[people["ann1"]["id"]])


def test_rename_a_study_and_keep_it_chosen(db, people, mini_suite, pilot):
    structext_study.create_study(db, name="newer", suite="mini", samples=mini_suite, n_items=2,
                       annotator_ids=[people["ann2"]["id"]])
    at = open_page(people["lead"], opened=("settings",))
    choose(at, "sa_study", study.get_study(db, pilot))
    at.text_input(key=f"sa_rename_name_{pilot}").input("newer")
    at = click(at, "Rename")
    assert "The study was not renamed. A study named 'newer' already exists" in notes(at, "error")[0].value
    at.text_input(key=f"sa_rename_name_{pilot}").input("pilot spring")
    at = click(at, "Rename")
    assert "Study 'pilot' is now called 'pilot spring'." in notes(at, "success")[0].value
    assert study.get_study(db, pilot).name == "pilot spring"
    assert choice(at, "sa_study").value == str(pilot)  # still the chosen study


def test_archive_hides_the_study_until_show_archived_is_on(db, people, pilot):
    at = click(open_page(people["lead"], opened=("settings",)), "Archive the study")
    assert "Study 'pilot' is archived." in notes(at, "success")[0].value
    assert study.get_study(db, pilot).archived and study.studies_for_annotator(db, people["ann1"]["id"]) == []
    assert "Every study is archived" in notes(at, "info")[0].value
    assert "sa_study" not in choices(at)
    at = widget(at.toggle, "Show archived studies").set_value(True).run()
    assert choice(at, "sa_study").value == str(pilot)
    assert any("This study is archived" in i.value for i in notes(at, "info"))
    at = click(at, "Bring back from the archive")
    assert not study.get_study(db, pilot).archived
    assert [s.name for s in study.studies_for_annotator(db, people["ann1"]["id"])] == ["pilot"]


def test_copy_a_study_with_chosen_annotators(db, people, pilot):
    at = open_page(people["lead"], opened=("settings",))
    chooser = widget(at.multiselect, "Annotators of the copy")
    assert chooser.value == []  # nobody chosen beforehand
    chooser.select(next(u for u in accounts.list_users(db) if u["username"] == "ann2"))
    at = click(at, "Create the copy")
    assert "No copy was made. Study name is empty" in notes(at, "error")[0].value
    assert len(study.list_studies(db)) == 1
    at.text_input(key=f"sa_clone_name_{pilot}").input("pilot again")
    at = click(at, "Create the copy")
    assert "Study 'pilot again' created as a copy of 'pilot' with 1 annotator." in notes(at, "success")[0].value
    copy = at.session_state["sa_study"]  # the study chosen: the copy
    assert (copy.name, copy.n_items, copy.n_annotators) == ("pilot again", 4, 1)
    assert study.annotator_names(db, copy.id) == ["ann2"]


def test_take_an_annotator_off_needs_a_tick_and_keeps_their_answers(db, people, pilot):
    study.accept_rule(db, pilot, people["ann1"]["id"])
    view = study.open_question(db, pilot, people["ann1"]["id"])
    study.submit_answer(db, people["ann1"]["id"], view.assignment_id, "an answer")
    at = open_page(people["lead"], opened=("details",))
    assert any("A replacement gets the same questions in the same order" in c.value for c in notes(at, "caption"))
    widget(at.selectbox, "Replacement (optional)").select(
        next(u for u in accounts.list_users(db) if u["username"] == "ann2"))
    at = click(at, "Take off the study")
    assert "Nothing changed: tick 'Yes, take them off this study'" in notes(at, "error")[0].value
    assert study.annotator_names(db, pilot) == ["ann1"]
    widget(at.checkbox, "Yes, take them off this study").check()
    at = click(at, "Take off the study")
    assert ("ann2 replaces ann1 in pilot with the same 4 questions in the same order; ann1's 1 answer is "
            "kept as theirs." in notes(at, "success")[0].value)
    members = at.table[0].value
    assert members.loc["ann1", "status"] == "removed, replaced by ann2" and members.loc["ann2", "progress"].endswith("of 4 study questions answered")
    assert [r["annotator_removed"] for r in study.export_rows(db, pilot)] == [True]


def test_a_study_for_a_crowd_is_created_with_no_annotator_yet(db, people, mini_suite):
    # Its people arrive by a study link: a study with nobody in it was refused ("No annotators chosen").
    at = create(open_page(people["lead"]), name="crowd", annotators=())
    assert not notes(at, "error")
    assert ("Study 'crowd' (mini) created with no annotator yet (add people on its dashboard, or make a study link "
            "on its Crowd tab): each answers 20 study questions.") in notes(at, "success")[0].value
    assert count(db, "studies") == 1 and count(db, "assignments") == 0


# ---------------------------------------------------------------- a page that opens fast (issue 46)


def test_the_dashboard_first_view_draws_no_grid_nor_chart_and_says_what_each_box_holds(db, people, answered_study):
    at = open_page(people["lead"])
    assert not at.exception
    assert not at.dataframe and not at.get("vega_lite_chart") and not at.table
    assert {m.label: m.value for m in html_figures(at) if m.label in ("People", "Done", "Not started",
                                                              "Answered of 12")} == {
        "People": "2", "Done": "2", "Not started": "0", "Answered of 12": "12"}
    assert metric(at, "Mean annotator") == "75.0" and metric(at, "Fleiss' kappa")  # the state, at once
    labels = sections(at)
    assert not at.expander  # every section closed: a light header each
    for label in ("Study details and annotators (2): add, take off, close the study",
                  "Each person's progress and time (2)", "Each person's status (2)",
                  "Accuracy of each annotator and of each group of questions: table and chart",
                  "Each pair of annotators: items both answered, same verdict, Cohen's kappa",
                  "Answers to review: implausibly fast (1 with the thresholds inside)"):
        assert label in labels, labels
    at = open_section(at, "Each person's progress and time (2)")  # a click on its header
    assert [e.label for e in at.expander] == ["Each person's progress and time (2)"]  # open, Streamlit's expander
    assert [list(d.value.columns)[:2] for d in at.dataframe] == [["annotator", "answered"],
                                                                 ["annotator", "answering (min)"]]
    assert not at.get("vega_lite_chart")
    at.session_state["sa_open_progress"] = False  # closed again (as a click on the open expander leaves it)
    at.run()
    assert not at.expander and "Each person's progress and time (2)" in sections(at) and not at.dataframe
    at = open_page(people["lead"], opened=("accuracy", "time"))
    assert len(at.get("vega_lite_chart")) >= 2


def test_the_dashboard_reads_its_figures_again_once_the_study_changes(db, people, answered_study):
    """The figures are cached by the study's data version: a rerun with nothing new reads the same, an
    override (or an answer) is seen on the next run."""
    at = open_page(people["lead"], opened=("progress",))
    assert metric(at, "Mean annotator") == "75.0"
    before = study.data_version(db, answered_study)
    assert study.data_version(db, answered_study) == before  # nothing changed: the same key
    wrong = db.execute("SELECT r.id FROM responses r JOIN users u ON u.id = r.user_id WHERE u.username = 'ann2'"
                       " AND r.response = 'zzz not it' LIMIT 1").fetchone()[0]
    study.override_score(db, wrong, 1.0, "right in substance", people["lead"])
    assert study.data_version(db, answered_study) != before
    at.run()
    assert metric(at, "Mean annotator") == f"{(100 + 100 * 4 / 6) / 2:.1f}"  # ann2: 3 of 6, now 4 of 6
    # the key the figures are cached by is a digest of the fingerprint, changed with it; their frame has no text
    from structext_core.ui import study_dashboard
    key = study_dashboard.version(db, answered_study)
    assert key == study_dashboard.version(db, answered_study) and len(key[1]) == 32
    whole = study_dashboard.responses(db, answered_study, key)
    figures = study_dashboard.answers(db, answered_study, key)
    assert list(figures.columns) == [c for c in whole.columns if c not in ("response", "answer")] and len(figures) == len(whole)
    study.override_score(db, wrong, 0.0, "not it after all", people["lead"])
    assert study_dashboard.version(db, answered_study) != key
