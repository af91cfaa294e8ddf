"""A lead who is not an admin, with AppTest (issue 45, item 7): Studies and Adjudication list only the studies
the lead leads; a lead who sets a study up leads it; an admin gives a study another lead and creates lead
accounts; a researcher opening the study pages is told why they are refused; the preview as an annotator
shows the rule and the questions as an annotator sees them and writes nothing."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import protocol
from structext_core.structext_eval import samples, suites
from structext_core.structext_eval import study as structext_study
from structext_core.studio import access, accounts, storage, study
from structext_core.ui.question_screen import preview as preview_ui
from tests.pages import light_forms
from tests.pages.answer_boxes import answer_box
from tests.pages.answer_boxes import press as press_answer
from tests.pages.html_tables import html_figures
from tests.pages.light_choices import choice, choices, press, sections
from tests.pages.light_parts import notes
from tests.pages.test_screens_say_true_things import rendered_texts
from tests.pages.text_blocks import text_blocks

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "pages" / "study_admin.py"
ADJUDICATION = ROOT / "pages" / "adjudication.py"
ACCOUNTS = ROOT / "pages" / "accounts.py"
#: Every table a preview could write to if it answered, held or timed anything.
WRITTEN = ("study_annotators", "assignments", "responses", "pauses", "study_flags", "score_overrides",
           "study_leads", "audit_log", "studies")


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.delenv("STRUCTEXT_ADMIN_USER", raising=False)
    monkeypatch.delenv("STRUCTEXT_ADMIN_PASSWORD", raising=False)
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    rows = [suites.generate_sample(t, d, w, suite="mini", index=0)
            for t in range(1, 30) for d in (1, 2) for w in (1, 2)]
    samples.write_jsonl(tmp_path / "suites" / "mini.jsonl", rows)
    db = storage.open_db()
    people = {name: accounts.create_user(db, name, "password-123", role) for name, role in (
        ("boss", "admin"), ("pi", "lead"), ("pi2", "lead"), ("reader", "researcher"), ("ann1", "annotator"))}
    mine = structext_study.create_study(db, name="pi-study", suite="mini", samples=rows, n_items=6,
                                        annotator_ids=[people["ann1"]["id"]], created_by=people["pi"]["id"],
                                        practice_items=1, rule_text="Use no tools: zqx-rule.")
    theirs = structext_study.create_study(db, name="pi2-study", suite="mini", samples=rows, n_items=6,
                                          annotator_ids=[people["ann1"]["id"]], created_by=people["pi2"]["id"])
    admins = structext_study.create_study(db, name="boss-study", suite="mini", samples=rows, n_items=6,
                                          annotator_ids=[people["ann1"]["id"]], created_by=people["boss"]["id"])
    return {"db": db, "people": people, "mine": mine, "theirs": theirs, "admins": admins, "rows": rows}


def run(page: Path, user, **state) -> AppTest:
    at = AppTest.from_file(str(page), default_timeout=60)
    at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def click(at, label) -> AppTest:
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}; buttons: {[b.label for b in at.button]}"
    return found[0].click().run()


def study_choices(at, key) -> list[str]:
    return [option.split(" ·")[0] for option in choice(at, key).options]


def counts(db) -> dict[str, int]:
    return {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in WRITTEN}


def test_a_lead_sees_only_the_studies_they_lead(world):
    pi = world["people"]["pi"]
    at = run(STUDIES, pi)
    assert not at.exception and not notes(at, "error")
    assert study_choices(at, "sa_study") == ["pi-study"]
    at = run(ADJUDICATION, pi)
    assert not at.exception and study_choices(at, "adj_study") == ["pi-study"]
    # the admin sees every study, on both pages
    boss = world["people"]["boss"]
    assert sorted(study_choices(run(STUDIES, boss), "sa_study")) == ["boss-study", "pi-study", "pi2-study"]
    assert sorted(study_choices(run(ADJUDICATION, boss), "adj_study")) == ["boss-study", "pi-study", "pi2-study"]


def test_a_lead_who_leads_nothing_is_told_so(world):
    db = world["db"]
    newcomer = accounts.create_user(db, "pi3", "password-123", "lead")
    at = run(STUDIES, newcomer, sa_section="Dashboard")
    assert not at.exception and any("You lead no study yet" in i.value for i in notes(at, "info"))
    at = run(ADJUDICATION, newcomer)
    assert "you lead none yet" in notes(at, "info")[0].value


@pytest.mark.parametrize("page, key", [(STUDIES, "study_admin"), (ADJUDICATION, "adjudication")])
def test_a_researcher_is_told_why_the_study_pages_are_refused(world, page, key):
    reader = world["people"]["reader"]
    at = run(page, reader)
    assert [e.value for e in notes(at, "error")] == [access.refusal(reader, key)]
    assert notes(at, "error")[0].value == "This page is for leads or admins only. You are logged in as reader (researcher)."
    assert not at.title and not at.selectbox and not choices(at)


def _navigation_script():
    from pathlib import Path

    import streamlit as st

    from structext_core import ui
    from structext_core.studio import access

    pages = Path(st.session_state["pages_dir"])
    st.session_state["listed"] = {
        role: {p.url_path: p.visibility for section in ui.navigation_pages(pages, role, False).values()
               for p in section} for role in access.ROLES}


def test_the_navigation_keeps_every_refused_page_at_its_url():
    """A page the role may not open is hidden from the menu, not left out of st.navigation: left out, its URL
    would open the default page (Home) without a word; kept, the page's own guard says why (above)."""
    at = AppTest.from_function(_navigation_script, default_timeout=60)
    at.session_state["pages_dir"] = str(ROOT / "pages")
    at.run()
    assert not at.exception
    listed = at.session_state["listed"]
    for role in access.ROLES:
        for info in access.PAGES:
            assert info.url_path in listed[role], (role, info.key)  # kept: its URL opens it
            if not access.can_open(role, info.key):
                assert listed[role][info.url_path] == "hidden", (role, info.key)  # not in the menu
    assert listed["researcher"]["study_admin"] == "hidden" and listed["lead"]["study_admin"] == "visible"


def test_the_lead_sets_a_study_up_and_then_leads_it(world):
    db, pi2 = world["db"], world["people"]["pi2"]
    at = run(STUDIES, pi2, sa_section="Set up a study")
    (form,) = [key for key in light_forms.light_forms(at) if key.startswith("sa_new_study")]
    suite_help = light_forms.fields(at, form)["suite"]["help"]  # a server's folders are the admin's business
    assert str(suites.data_dir()) not in suite_help and suite_help.endswith("the .jsonl files an admin adds on Home.")
    at = light_forms.submit(at, form, name="pi2-second", suite="mini", n_items=6,
                            annotators=[u["id"] for u in accounts.list_users(db) if u["username"] == "ann1"])
    assert not at.exception and not notes(at, "error"), [e.value for e in notes(at, "error")]
    created = next(s for s in study.list_studies(db) if s.name == "pi2-second")
    assert [lead.username for lead in study.leads_of(db, created.id)] == ["pi2"]
    assert sorted(study_choices(run(STUDIES, pi2), "sa_study")) == ["pi2-second", "pi2-study"]


@pytest.mark.parametrize("benchmark", protocol.NAMES)
def test_no_set_up_form_tells_a_lead_the_servers_folders(world, tmp_path, benchmark):
    """Every benchmark's set-up tab (its form, the chooser of its files, what it says with none): where its
    files lie on the server is the admin's business (the capability ``server_paths``), told to the admin."""
    from tests.labset.conftest import samples as lab_samples
    from tests.labset.conftest import write_set
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    write_set(folder, lab_samples())
    said = {who: " ".join(rendered_texts(run(STUDIES, world["people"][who], sa_section="Set up a study",
                                             sa_benchmark=benchmark)))
            for who in ("pi2", "boss")}
    assert str(tmp_path) not in said["pi2"]
    if benchmark in ("structext", "labset"):  # the forms that name a folder (AIBench's data sets live apart)
        assert str(tmp_path) in said["boss"]


def test_an_admin_gives_a_study_another_lead_and_creates_lead_accounts(world):
    db, boss = world["db"], world["people"]["boss"]
    at = run(STUDIES, boss, sa_study=study.get_study(db, world["admins"]), sl_open_leads=True)
    form = next(s for s in at.selectbox if s.label == "Add a lead")
    assert form.options == ["pi", "pi2"]
    form.select(next(u for u in accounts.list_users(db, role="lead") if u["username"] == "pi"))
    at = click(at, "Add")
    assert not at.exception and any("pi now leads this study" in s.value for s in notes(at, "success"))
    assert study.studies_run_by(db, world["people"]["pi"]) == [world["mine"], world["admins"]]
    # a lead reads who leads but is offered no way to change it
    at = run(STUDIES, world["people"]["pi"], sa_study=study.get_study(db, world["admins"]), sl_open_leads=True)
    assert any("Admins run every study" in c.value for c in notes(at, "caption"))  # the Leads box is open
    assert not [s for s in at.selectbox if s.label == "Add a lead"] and not [b for b in at.button if b.label == "Take off"]
    # the Accounts page offers the role
    accounts_page = run(ACCOUNTS, boss, ac_create_open=True)
    assert "lead" in next(r for r in accounts_page.radio if r.label == "Role").options
    refused = run(ACCOUNTS, world["people"]["pi"])
    assert notes(refused, "error")[0].value == "This page is for admins only. You are logged in as pi (lead)."


def test_the_preview_shows_the_study_as_an_annotator_sees_it_and_writes_nothing(world):
    db, pi = world["db"], world["people"]["pi"]
    before = counts(db)
    at = run(STUDIES, pi)
    at = press(at, "Preview as an annotator")
    assert not at.exception
    assert any("Preview of pi-study" in m.value for m in at.markdown)
    assert any("zqx-rule" in m.value for m in at.markdown)  # the rule, as the annotator reads it first
    at = click(at, "I have read the rule: start")
    shown = study.preview(db, pi, world["mine"])
    first = shown.questions[0]
    assert first.practice  # practice comes first
    box = answer_box(at)  # the annotator's answer element, the question above it
    assert box.question == first.question
    assert box.buttons == ["Submit answer", "Pause", "Give up"]
    assert [b["disabled"] for b in box.data["buttons"]] == [False, True, True]  # nothing is paused or given up
    assert first.reference in text_blocks(at)  # the reference panel, as the annotator's
    answers = [r[0] for r in db.execute("SELECT json_extract(sample_json, '$.answer') FROM study_items"
                                        " WHERE study_id = ?", [world["mine"]])]
    drawn = " ".join([*(str(e.value) for e in [*at.text, *at.markdown, *notes(at, "caption")] if hasattr(e, "value")),
                      json.dumps(box.data)])
    assert not [a for a in answers if len(a) >= 12 and a in drawn and a not in first.reference]
    at = press_answer(at, "Pause", sent={"action": "pause", "text": ""})  # a click it takes none of: ignored
    assert answer_box(at).question == first.question and counts(db) == before
    box = answer_box(at)
    box.input("a typed answer")
    at = press_answer(at, "Submit answer")  # on to the study's first question, nothing recorded
    assert answer_box(at).question == shown.counted[0].question
    chooser = next(s for s in at.selectbox if s.key == "pv_jump")
    chooser.set_value(len(chooser.options) - 1)
    at = at.run()
    assert any("You have answered all" in s.value for s in notes(at, "success"))  # the end screen
    assert counts(db) == before
    at = click(at, "End the preview")
    assert preview_ui.PREVIEW_KEY not in at.session_state and study_choices(at, "sa_study") == ["pi-study"]
    assert counts(db) == before


def test_a_preview_of_a_study_the_lead_does_not_lead_is_refused(world):
    at = run(STUDIES, world["people"]["pi"], **{preview_ui.PREVIEW_KEY: {"study": world["theirs"], "at": 0}})
    assert not at.exception
    assert "Only an admin or a lead of the study may preview the study" in notes(at, "error")[0].value
    assert study_choices(at, "sa_study") == ["pi-study"]


def test_the_setup_form_tells_a_lead_who_creates_annotator_accounts(world):
    world["db"].execute("UPDATE users SET role = 'researcher' WHERE username = 'ann1'")  # no annotator account left
    at = run(STUDIES, world["people"]["pi"], sa_section="Set up a study")
    assert "make a study link on its **Crowd** tab, or ask an admin to create accounts" in notes(at, "info")[0].value
    at = run(STUDIES, world["people"]["boss"], sa_section="Set up a study")
    assert "create them on the **Accounts** page (Admin), or set up the study with nobody" in notes(at, "info")[0].value


def test_the_preview_of_a_crowd_study_shows_consent_questionnaire_and_the_code(world):
    from structext_core.studio.crowd import consent, questionnaire, settings

    db, pi, mine = world["db"], world["people"]["pi"], world["mine"]
    consent.set_consent(db, mine, "You agree to **zqx-consent**.", by=pi["id"])
    questionnaire.set_questionnaire(db, mine, [{"name": "expertise", "label": "How expert are you?", "kind": "choice",
                                               "options": ["novice", "expert"], "required": True}], by=pi["id"])
    settings.save_settings(db, mine, pi["id"], completion_code="DONE42", completion_url="https://example.org/done",
                           no_consent_code="NOPE7")
    before = counts(db) | {"answers": db.execute("SELECT COUNT(*) FROM questionnaire_answers").fetchone()[0],
                           "consented": db.execute("SELECT COUNT(*) FROM study_annotators WHERE consent_at IS NOT NULL"
                                                   " OR declined_at IS NOT NULL").fetchone()[0]}
    at = press(run(STUDIES, pi), "Preview as an annotator")
    assert any("zqx-consent" in m.value for m in at.markdown)  # first, as on the annotator's page
    at = click(at, "I do not agree")
    assert [m.value for m in html_figures(at)] == ["NOPE7"]  # the end a person who declines reaches, with its code
    at = click(at, "Back to the consent text")
    at = click(at, "I agree: continue")
    assert [r.label for r in at.radio] == ["How expert are you?"]
    at = click(at, "Continue")
    assert "Please answer" in notes(at, "error")[0].value  # checked as the core checks it
    at.radio[0].set_value("expert")
    at = click(at, "Continue")
    assert any("Before you start: the rule of pi-study" in s.value for s in notes(at, "subheader"))
    chooser = next(s for s in at.selectbox if s.key == "pv_jump")
    at = chooser.set_value(len(chooser.options) - 1).run()
    assert [m.value for m in html_figures(at)] == ["DONE42"]
    assert [b.proto.url for b in at.get("link_button")] == ["https://example.org/done"]
    assert not [c for c in at.get("bidi_component") if "redirect" in str(c.proto)]  # this tab stays
    after = counts(db) | {"answers": db.execute("SELECT COUNT(*) FROM questionnaire_answers").fetchone()[0],
                          "consented": db.execute("SELECT COUNT(*) FROM study_annotators WHERE consent_at IS NOT NULL"
                                                  " OR declined_at IS NOT NULL").fetchone()[0]}
    assert after == before


def test_only_a_lead_of_the_study_changes_its_crowd_texts(world):
    from structext_core.studio.crowd import consent, questionnaire, settings

    db, mine = world["db"], world["mine"]
    for who in ("pi2", "reader"):
        by = world["people"][who]["id"]
        with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may"):
            consent.set_consent(db, mine, "text", by=by)
        with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may"):
            questionnaire.set_questionnaire(db, mine, [], by=by)
        with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may"):
            settings.save_settings(db, mine, by, completion_code="X")
    assert consent.current_consent(db, mine) is None and settings.crowd_settings(db, mine).completion_code is None


def test_a_lead_brings_annotators_into_the_studies_they_lead_from_a_csv(world):
    db, pi = world["db"], world["people"]["pi"]
    at = run(STUDIES, pi, sl_open_people=True)
    box = next(t for t in at.text_area if t.label == "Or paste the CSV here")
    at = box.input("name,role,studies\nnewbie,annotator,pi-study\nboss2,admin,\nsneak,annotator,pi2-study\n").run()
    problems = notes(at, "error")[0].value
    assert "Nothing can be imported" in problems and "boss2" not in [u["username"] for u in accounts.list_users(db)]
    assert "line 3" in problems and "line 4" in problems and "line 2" not in problems
    box = next(t for t in at.text_area if t.label == "Or paste the CSV here")
    at = box.input("name,role,studies\nnewbie,annotator,pi-study\n").run()
    at = click(at, "Import 1 person")
    assert not at.exception and "?set_password=" in at.dataframe[0].value["link"].iloc[0]
    newbie = next(u for u in accounts.list_users(db) if u["username"] == "newbie")
    assert newbie["role"] == "annotator"
    assert [s.id for s in study.studies_for_annotator(db, newbie["id"])] == [world["mine"]]
    # an admin has no such block here (Accounts has it, with every role)
    assert "Bring people in from a CSV" in sections(run(STUDIES, pi))  # a lead's, closed
    assert "Bring people in from a CSV" not in sections(run(STUDIES, world["people"]["boss"]))
