"""A lead runs the studies they lead and no other (structext_core.studio.study.leads): every study action
of the core refuses a lead of another study, a researcher and an annotator, and writes nothing then; an
admin runs every study; a lead who sets up a study leads it; an admin gives a study more leads. The
preview: a study as an annotator meets it, for its lead, with nothing written."""

import pytest

from structext_core.studio import access, accounts, study
from structext_core.studio.crowd import links
from structext_core.studio.study import leads
from tests.studio.study.support import count, make_study


@pytest.fixture(autouse=True)
def quick_hashes(monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)


@pytest.fixture
def people(db, annotators, admin):
    return {
        "admin": admin,
        "pi": accounts.create_user(db, "pi", "password-123", "lead"),
        "other": accounts.create_user(db, "other-pi", "password-123", "lead"),
        "reader": accounts.create_user(db, "reader", "password-123", "researcher"),
        "ann1": annotators[0], "ann2": annotators[1], "ann3": annotators[2],
    }


@pytest.fixture
def led(db, samples, people):
    """A study set up by the lead ``pi`` with ann1 and ann2 (ann1 answered two questions, and
    flagged one); one set up by the admin."""
    mine = make_study(db, samples, [people["ann1"], people["ann2"]], created_by=people["pi"]["id"],
                      practice_items=1)
    theirs = make_study(db, samples, [people["ann1"]], name="admins-study", created_by=people["admin"]["id"])
    ann1 = people["ann1"]["id"]
    study.accept_rule(db, mine, ann1, at=0.0)
    for n in range(2):
        view = study.open_question(db, mine, ann1, at=10.0 * n)
        study.submit_answer(db, ann1, view.assignment_id, f"answer {n}", at=10.0 * n + 5)
    view = study.open_question(db, mine, ann1, at=30.0)
    study.flag_question(db, mine, ann1, view.item_id, "broken", "a note")
    links.create_link(db, mine, places=3, expires_at=None, id_param=None, by=people["pi"]["id"])
    return mine, theirs


def test_a_lead_who_sets_up_a_study_leads_it_and_an_admin_runs_every_study(db, people, led):
    mine, theirs = led
    assert [lead.username for lead in leads.leads_of(db, mine)] == ["pi"]
    assert leads.leads_of(db, theirs) == []  # an admin leads no study by a row: they run them all
    assert leads.can_run(db, people["pi"], mine) and not leads.can_run(db, people["pi"], theirs)
    assert not leads.can_run(db, people["other"], mine)
    assert leads.can_run(db, people["admin"], mine) and leads.can_run(db, people["admin"], theirs)
    for who in ("reader", "ann1"):
        assert not leads.can_run(db, people[who], mine)
    assert not leads.can_run(db, None, mine)
    assert leads.studies_run_by(db, people["pi"]) == [mine]
    assert leads.studies_run_by(db, people["other"]) == []
    assert leads.studies_run_by(db, people["admin"]) is None
    assert leads.studies_run_by(db, people["reader"]) == [] and leads.studies_run_by(db, None) == []
    everything = study.list_studies(db)
    assert [s.id for s in leads.only_run(db, people["pi"], everything)] == [mine]
    assert [s.id for s in leads.only_run(db, people["admin"], everything)] == [s.id for s in everything]
    # a user id reads the role from the database (a lead demoted to researcher runs nothing more)
    assert leads.can_run(db, people["pi"]["id"], mine)
    db.execute("UPDATE users SET role = 'researcher' WHERE id = ?", [people["pi"]["id"]])
    assert not leads.can_run(db, people["pi"]["id"], mine)


def test_someone_who_runs_no_studies_cannot_set_one_up(db, samples, people):
    for who in ("reader", "ann3"):
        with pytest.raises(access.AccessError, match="Only a lead or an admin may set up a study"):
            make_study(db, samples, [people["ann1"]], name=f"by-{who}", created_by=people[who]["id"])
    assert count(db, "studies") == 0 and count(db, "study_leads") == 0


def _actions(db, people, study_id):
    """Every action on a study, as ``who`` (a user dict) would do it: name -> function(who)."""
    response_id = db.execute("SELECT id FROM responses WHERE study_id = ? ORDER BY id LIMIT 1",
                             [study_id]).fetchone()[0]
    flag_id = db.execute("SELECT id FROM study_flags WHERE study_id = ?", [study_id]).fetchone()[0]
    link = db.execute("SELECT id FROM enrolment_links WHERE study_id = ?", [study_id]).fetchone()
    return {
        "close": lambda who: study.set_study_status(db, study_id, "closed", by_user=who["id"]),
        "add an annotator": lambda who: study.add_annotator(db, study_id, people["ann3"]["id"], by_user=who["id"]),
        "take an annotator off": lambda who: study.remove_annotator(db, study_id, people["ann2"]["id"],
                                                                     by_user=who["id"]),
        "replace an annotator": lambda who: study.replace_annotator(db, study_id, people["ann2"]["id"],
                                                                     people["ann3"]["id"], by_user=who["id"]),
        "rename": lambda who: study.rename_study(db, study_id, "renamed", by_user=who["id"]),
        "archive": lambda who: study.set_study_archived(db, study_id, True, by_user=who["id"]),
        "copy": lambda who: study.clone_study(db, study_id, name="a-copy", by_user=who["id"]),
        "override a score": lambda who: study.override_score(db, response_id, 1.0, "right", who),
        "clear an override": lambda who: study.clear_override(db, response_id, "undo", who),
        "resolve a flag": lambda who: study.resolve_flag(db, flag_id, who, "checked"),
        "results when closed": lambda who: access.set_results_when_closed(db, study_id, True, who),
        "preview": lambda who: study.preview(db, who, study_id),
        "make a study link": lambda who: links.create_link(db, study_id, places=5, expires_at=None, id_param=None,
                                                            by=who["id"]),
        "close a study link": lambda who: links.close_link(db, link[0], by=who["id"]),
    }


TABLES = ("studies", "study_items", "study_annotators", "assignments", "responses", "pauses", "score_overrides",
          "study_flags", "study_leads", "audit_log", "enrolment_links")


def snapshot(db):
    return {table: count(db, table) for table in TABLES} | {
        "open": db.execute("SELECT COUNT(*) FROM study_flags WHERE resolved_at IS NULL").fetchone()[0],
        "open links": db.execute("SELECT COUNT(*) FROM enrolment_links WHERE closed_at IS NULL").fetchone()[0],
        "status": db.execute("SELECT group_concat(status || name || results_when_closed || "
                             "coalesce(archived_at, '')) FROM studies").fetchone()[0]}


ACTIONS = ["close", "add an annotator", "take an annotator off", "replace an annotator", "rename", "archive", "copy",
           "override a score", "clear an override", "resolve a flag", "results when closed", "preview",
           "make a study link", "close a study link"]


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("who", ["other", "reader", "ann1"])
def test_nobody_but_its_leads_and_admins_acts_on_a_study(db, people, led, action, who):
    mine, _theirs = led
    act = _actions(db, people, mine)[action]
    before = snapshot(db)
    with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may") as refused:
        act(people[who])
    if who == "other":  # the message names the study and why this person may not
        assert "other-pi (lead) does not lead the study 'pilot'" in str(refused.value)
    assert snapshot(db) == before


@pytest.mark.parametrize("who", ["pi", "admin"])
def test_its_lead_and_an_admin_do_every_action(db, people, led, who):
    mine, _theirs = led
    actions = _actions(db, people, mine)
    start = db.execute("SELECT MAX(id) FROM audit_log").fetchone()[0]
    for name in ("override a score", "clear an override", "resolve a flag", "results when closed",
                 "make a study link", "close a study link",
                 "add an annotator", "replace an annotator", "copy", "rename", "archive", "close"):
        if name == "add an annotator":
            continue  # ann3 comes in as the replacement below
        actions[name](people[who])
    assert study.get_study(db, mine).name == "renamed" and study.get_study(db, mine).status == "closed"
    copy = next(s for s in study.list_studies(db) if s.name == "a-copy")
    assert [lead.username for lead in leads.leads_of(db, copy.id)] == ["pi"]  # the source's leads lead the copy
    done = [row for row in db.execute("SELECT DISTINCT action, by_user FROM audit_log WHERE id > ?", [start])]
    assert {by for _action, by in done} == {people[who]["id"]}
    assert {action for action, _by in done} >= {"study.close", "crowd.link_create", "crowd.link_close",
                                                 "score.override", "flag.resolve", "study.replace_annotator"}


def test_an_admin_gives_a_study_more_leads_and_takes_them_off(db, people, led):
    mine, theirs = led
    with pytest.raises(access.AccessError, match="Only an admin may give a study another lead"):
        leads.add_lead(db, theirs, people["pi"]["id"], by=people["pi"])
    for who, why in (("reader", "researcher account, not a lead"), ("ann1", "annotator account, not a lead"),
                     ("pi", "already leads")):
        with pytest.raises(study.StudyError, match=why):
            leads.add_lead(db, mine, people[who]["id"], by=people["admin"])
    with pytest.raises(study.StudyError, match="no study with id 999"):
        leads.add_lead(db, 999, people["other"]["id"], by=people["admin"])
    assert count(db, "study_leads") == 1
    leads.add_lead(db, theirs, people["pi"]["id"], by=people["admin"])
    assert leads.studies_run_by(db, people["pi"]) == [mine, theirs]
    assert leads.leads_of(db, theirs)[0].added_by == "lead"  # the admin's user name
    with pytest.raises(access.AccessError, match="Only an admin may take a lead off"):
        leads.remove_lead(db, theirs, people["pi"]["id"], by=people["other"])
    leads.remove_lead(db, theirs, people["pi"]["id"], by=people["admin"])
    assert leads.studies_run_by(db, people["pi"]) == [mine]
    with pytest.raises(study.StudyError, match="does not lead this study"):
        leads.remove_lead(db, theirs, people["pi"]["id"], by=people["admin"])
    actions = [row[0] for row in db.execute("SELECT action FROM audit_log WHERE action LIKE 'study.%lead'")]
    assert actions == ["study.add_lead", "study.remove_lead"]


def test_the_workbench_itself_may_still_act(db, people, led):
    """The command line and an enrolment by a study link act as nobody (by_user None): not refused."""
    mine, _theirs = led
    study.add_annotator(db, mine, people["ann3"]["id"])
    study.set_study_status(db, mine, "closed")
    assert study.get_study(db, mine).status == "closed"


def test_the_preview_is_what_an_annotator_meets_and_writes_nothing(db, people, led):
    mine, _theirs = led
    db.conn.commit()
    before, changes_before = snapshot(db), db.conn.total_changes
    shown = study.preview(db, people["pi"], mine)
    assert snapshot(db) == before and db.conn.total_changes == changes_before
    assert shown.study.name == "pilot" and shown.study.rule_accepted_at is None and shown.study.answered == 0
    assert len(shown.practice) == 1 and shown.questions[0].practice
    assert len(shown.counted) == study.get_study(db, mine).n_items
    assert [q.seq for q in shown.counted] == list(range(1, len(shown.counted) + 1))
    # each question as open_question gives it to an annotator: the same fields, no key and no hint
    ann2 = people["ann2"]["id"]
    study.accept_rule(db, mine, ann2, at=0.0)
    real = study.open_question(db, mine, ann2, at=1.0)
    real = study.open_question(db, mine, ann2, at=1.0)
    same = next(q for q in shown.questions if q.item_id == real.item_id)
    for field in ("reference", "question", "requirement", "options", "has_image", "has_reference_panel",
                  "reference_label", "practice", "benchmark", "total"):
        assert getattr(same, field) == getattr(real, field), field
    keys = [row[0] for row in db.execute("SELECT json_extract(sample_json, '$.answer') FROM study_items"
                                         " WHERE study_id = ?", [mine])]
    hints = [row[0] for row in db.execute("SELECT json_extract(sample_json, '$.rule_hint') FROM study_items"
                                          " WHERE study_id = ?", [mine])]
    text = repr(shown.questions)
    assert not [k for k in keys if len(k) >= 12 and k in text and not any(k in q.reference for q in shown.questions)]
    assert not [h for h in hints if h and h in text]
    # an admin previews any study; an image is refused for a study without images
    assert study.preview(db, people["admin"], mine).questions == shown.questions
    with pytest.raises(study.StudyError, match="shows no image"):
        study.preview_image(db, people["pi"], mine, shown.questions[0].item_id)
