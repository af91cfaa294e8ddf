"""The voting page and the lead's page, run with AppTest: real clicks, and what an annotator never gets."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import pairwise as pws
from structext_core.aibench import store as aibench_store
from structext_core.studio import storage
from tests.pages import light_forms
from tests.pages.html_tables import html_figures
from tests.pages.input_reports import with_input_report
from tests.pages.test_page_access import Downloads, leaks, run_page
from tests.pages.test_screens_say_true_things import raw_missing


def open_page(name: str, user, **state) -> AppTest:
    """The page file ``name`` run as ``user`` (the access test's runner: no exception allowed)."""
    return run_page(Path(name).stem, user, **state)


def button(at, start: str):
    found = [b for b in at.button if b.label.startswith(start)]
    assert found, f"no button {start!r}: {[b.label for b in at.button]}"
    return found[0]


def _study(world, n_pairs=6, practice=1):
    p = world["people"]
    return pws.create_study(world["db"], "pilot", "synthetic", [p["ann1"]["id"], p["ann2"]["id"]], n_pairs=n_pairs,
                            practice=practice, repeat_share=0.2, seed=1)


def _votes(user_id):
    db = storage.open_db()
    return db.execute("SELECT v.choice FROM pairwise_votes v JOIN pairwise_tasks t ON t.id = v.task_id"
                      " WHERE t.user_id = ? ORDER BY v.id", [user_id]).fetchall()


def test_annotator_votes_pauses_and_finishes(world):
    study_id = _study(world, n_pairs=3, practice=1)
    ann = world["people"]["ann1"]
    at = open_page("pairwise.py", ann)
    assert at.get("progress")[0].proto.text == "Practice pair 1 of 1 · not counted"
    assert len(at.get("image")) == 2
    assert {b.proto.shortcut for b in at.button if b.key and b.key.startswith("pw_")} >= {"left", "right", "down", "b"}
    button(at, "Left is").click().run()
    assert [r[0] for r in _votes(ann["id"])] == ["left"]
    # 3 pairs, one shown again: 4 judgements after the practice pair, numbered apart from it
    assert at.get("progress")[0].proto.text == "Judgement 1 of 4"
    button(at, "Pause").click().run()
    assert any("Paused" in i.value for i in at.info) and not at.get("image")
    button(at, "Resume").click().run()
    assert len(at.get("image")) == 2
    total = pws.get_study(world["db"], study_id)
    for choice in ("Right is", "Equally", "Both bad"):
        button(at, choice).click().run()
    while at.get("progress"):
        button(at, "Left is").click().run()
    assert any("all" in s.value and "pairs" in s.value for s in at.success)
    assert len(_votes(ann["id"])) == world["db"].execute(
        "SELECT COUNT(*) FROM pairwise_tasks WHERE user_id = ? AND study_id = ?", [ann["id"], total.id]).fetchone()[0]


def test_a_flag_from_the_page(world):
    _study(world)
    at = open_page("pairwise.py", world["people"]["ann1"])
    assert not [s for s in at.selectbox if s.key == "pw_flag_kind"]  # built only while its box is open
    at.session_state["pw_flag_open"] = True  # as a click on the box does
    at.run()
    at.selectbox(key="pw_flag_kind").set_value("broken")
    at.text_area(key="pw_flag_note").input("the left one is cut")
    [b for b in at.button if b.label == "Send report"][0].click().run()
    assert any("study lead will look" in s.value for s in at.success)
    flags = pws.flags_frame(world["db"], 1)
    assert list(flags["kind"]) == ["broken"] and list(flags["note"]) == ["the left one is cut"]


def _secrets(world) -> dict[str, list[bytes]]:
    systems = aibench_dataset.load_dataset(aibench_store.dataset_path("synthetic")).systems
    papers = world["db"].execute("SELECT DISTINCT paper_id FROM pairwise_pairs").fetchall()
    out = {f"system {s}": [s.encode()] for s in systems}
    out.update({f"paper {p[0]}": [p[0].encode()] for p in papers})
    out["ann2's name"] = [b"ann2"]
    out["an image path"] = [b"images/"]
    return out


def test_annotator_never_gets_system_names_paper_ids_or_other_votes(world, monkeypatch):
    study_id = _study(world)
    p = world["people"]
    clock = 100.0
    while (view := pws.current_task(world["db"], study_id, p["ann2"]["id"], at=clock)) is not None:
        clock += 7
        pws.vote(world["db"], p["ann2"]["id"], view.token, "tie", at=clock)
    secrets = _secrets(world)
    downloads = Downloads(monkeypatch)
    at = open_page("pairwise.py", p["ann1"])
    for _ in range(4):
        assert leaks(at, downloads, secrets) == {}
        urls = [img.url for image in at.get("image") for img in image.proto.imgs]
        assert len(urls) == 2 and all(re.fullmatch(r"[/a-z]*/media/[0-9a-f]{16,}\.png", u) for u in urls), urls
        button(at, "Right is").click().run()
        assert leaks(at, downloads, secrets) == {}  # after a vote: still no name
    # positive control: the lead's page, searched the same way, does show names and ann2
    at = open_page("pairwise_admin.py", p["lead"], pwa_study=study_id)
    found = leaks(at, Downloads(monkeypatch), secrets)
    assert "ann2's name" in found and sum(k.startswith("system ") for k in found) >= 4


def test_lead_creates_a_study_and_reads_the_results(world):
    p = world["people"]
    at = open_page("pairwise_admin.py", p["lead"])
    # no study yet: the form is the page, drawn at once under a line saying so (not in a box to open)
    assert not at.expander and "No pairwise study yet: create the first one here." in [c.value for c in at.caption]
    form = light_forms.fields(at, "pwa_create")
    assert form["dataset"]["value"] == "synthetic" and form["systems"]["follows"] == "dataset"
    systems = dict(form["systems"]["options_by"])["synthetic"]  # the data set's own systems, by name
    assert [name for name, _ in systems] == pws.dataset_systems("synthetic") and len(systems) >= 3
    refused = light_forms.submit(at, "pwa_create", name="", people=[p["ann1"]["id"]], pairs=5)
    assert refused.error and not pws.list_studies(world["db"])  # no name: said, nothing written
    assert light_forms.light_forms(refused)["pwa_create"]["generation"] == 0  # what was typed stays
    at = light_forms.submit(refused, "pwa_create", name="from the page", people=[p["ann1"]["id"], p["ann2"]["id"]],
                            pairs=5, systems=[systems[0][0], "no such system"])
    assert "Systems (all when none chosen): 1 of the chosen are not among the options" in at.error[0].value
    at = light_forms.submit(at, "pwa_create", name="from the page", people=[p["ann1"]["id"], p["ann2"]["id"]],
                            pairs=5, systems=[name for name, _ in systems[:3]])
    assert not at.exception and any("Created" in s.value for s in at.success), [e.value for e in at.error]
    study = pws.list_studies(world["db"])[0]
    assert study.name == "from the page" and study.pairs == 5 and study.dataset == "synthetic"
    # a study exists: the new study's form is drawn once its box is opened (issue 46)
    again = open_page("pairwise_admin.py", p["lead"])
    assert "New pairwise study" in [e.label for e in again.expander] and not light_forms.light_forms(again)
    assert "pwa_create" in light_forms.light_forms(open_page("pairwise_admin.py", p["lead"], pwa_new_open=True))
    assert any("No counted votes" in i.value for i in at.info)
    clock = 100.0
    for who in ("ann1", "ann2"):
        while (view := pws.current_task(world["db"], study.id, p[who]["id"], at=clock)) is not None:
            clock += 7
            pws.vote(world["db"], p[who]["id"], view.token, "left", at=clock)
    at = open_page("pairwise_admin.py", p["lead"], pwa_study=study.id)
    headers = [h.value for h in at.subheader]
    assert any("Human rank" in h for h in headers) and any("Table 2" in h for h in headers)
    assert len(at.dataframe) >= 4  # progress, rank, Table 2, Fig. 6b
    assert any(m.label == "Per-pair agreement" for m in html_figures(at))
    assert raw_missing(at) == []  # no None, nan or NaN a lead reads (issue 46)
    button(at, "Close the study").click().run()
    assert pws.get_study(world["db"], study.id).status == "closed"


@pytest.mark.parametrize("who", ["ann1", "reader"])
def test_the_lead_page_is_refused_to_others(world, who):
    at = open_page("pairwise_admin.py", world["people"][who])
    assert len(at.error) == 1 and not at.dataframe


# ---------------------------------------------------------------- one tab, input reports (as studies)

def _page_tab(at) -> str:
    return at.session_state["pw_tab"]


def _open_task(user_id):
    cursor = storage.open_db().execute(
        "SELECT t.id, t.token, t.takeovers, t.last_input_at, t.pause_reason, t.idle_pauses FROM pairwise_tasks t"
        " WHERE t.user_id = ? AND NOT EXISTS (SELECT 1 FROM pairwise_votes v WHERE v.task_id = t.id)"
        " ORDER BY t.position LIMIT 1", [user_id])
    return dict(zip([d[0] for d in cursor.description], cursor.fetchone()))


def test_a_second_tab_takes_the_pair_over_and_continue_here_takes_it_back(world):
    _study(world, n_pairs=3, practice=0)
    ann = world["people"]["ann1"]
    first_tab = open_page("pairwise.py", ann)
    assert len(first_tab.get("image")) == 2
    second_tab = open_page("pairwise.py", ann)  # the same person opens the page in another tab
    assert len(second_tab.get("image")) == 2 and _page_tab(second_tab) != _page_tab(first_tab)
    assert _open_task(ann["id"])["takeovers"] == 1
    # the first tab still shows its old page: its vote is refused, and it shows the take-over screen
    button(first_tab, "Left is").click().run()
    assert not first_tab.exception and _votes(ann["id"]) == []
    assert any("open in another tab" in i.value for i in first_tab.info)
    assert first_tab.subheader[0].value == "This pair is open in another tab"
    assert not first_tab.get("image") and not [b for b in first_tab.button if b.label.startswith("Left is")]
    # "Continue here": the first tab holds the pair again, the second is told at its next run
    button(first_tab, "Continue here").click().run()
    assert len(first_tab.get("image")) == 2
    second_tab.run()
    assert second_tab.subheader[0].value == "This pair is open in another tab" and not second_tab.get("image")
    assert _open_task(ann["id"])["takeovers"] == 2
    button(first_tab, "Right is").click().run()
    assert [r[0] for r in _votes(ann["id"])] == ["right"]
    assert first_tab.get("progress")[0].proto.text == "Judgement 2 of 4"  # 3 pairs, one shown again


def test_input_reports_keep_the_idle_pause_away_and_no_input_pauses_the_pair(world, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_IDLE_PAUSE_SECONDS", "10")
    _study(world, n_pairs=3, practice=0)
    ann = world["people"]["ann1"]
    at = open_page("pairwise.py", ann)
    task = _open_task(ann["id"])
    [activity] = [json.loads(e.proto.json) for e in at.get("bidi_component")
                  if e.proto.component_name == "structext_answer_activity"]
    assert activity["assignment"] == task["token"]  # the opaque token, never a name
    db = storage.open_db()

    def no_input_for(seconds):
        with storage.write_transaction(db):
            db.execute("UPDATE pairwise_tasks SET last_input_at = ?, last_beat_at = ? WHERE id = ?",
                       [time.time() - seconds, time.time() - 0.5, task["id"]])
    no_input_for(30)
    # input a second ago, reported by the page: the pair stays on screen, the last input is now
    at = with_input_report(at, {"assignment": task["token"], "seq": 1, "visible": True, "idle_ms": 1000})
    assert not at.exception and len(at.get("image")) == 2
    assert _open_task(ann["id"])["last_input_at"] == pytest.approx(time.time() - 1, abs=3)
    # a report about another pair, or one already handled, is not input
    no_input_for(30)
    at = with_input_report(at, {"assignment": "someone-else", "seq": 2, "visible": True, "idle_ms": 0})
    assert not at.get("image") and any("paused by itself after 10 s without any input" in i.value for i in at.info)
    got = _open_task(ann["id"])
    assert got["pause_reason"] == "idle" and got["idle_pauses"] == 1
    button(at, "Resume").click().run()
    assert len(at.get("image")) == 2 and _open_task(ann["id"])["pause_reason"] is None
    button(at, "Equally").click().run()
    vote = db.execute("SELECT choice, idle_pauses, idle_seconds FROM pairwise_votes").fetchone()
    assert vote[0] == "tie" and vote[1] == 1 and vote[2] > 0  # the active time before the idle pause, re-booked


def test_lead_manages_people_status_and_archive_and_reads_the_history(world):
    from structext_core.studio import accounts

    p = world["people"]
    study_id = _study(world, n_pairs=3, practice=0)
    ann3 = accounts.create_user(world["db"], "ann3", "password1", "annotator")
    at = open_page("pairwise_admin.py", p["lead"], pwa_study=study_id)
    # add an annotator, then take one off
    assert at.selectbox(key="pwa_add_person").options == ["ann3"]
    at.selectbox(key="pwa_add_person").set_value(ann3).run()
    button(at, "Add").click().run()
    assert not at.exception and any("ann3 now votes" in s.value for s in at.success)
    assert [m["username"] for m in pws.members(world["db"], study_id)] == ["ann1", "ann2", "ann3"]
    person = next(m for m in pws.members(world["db"], study_id) if m["username"] == "ann1")
    at.selectbox(key="pwa_remove_person").set_value(person).run()
    button(at, "Take off").click().run()
    assert any("ann1 is taken off" in s.value for s in at.success)
    assert open_page("pairwise.py", p["ann1"]).info[0].value.startswith("You take part in no pairwise study")
    # close, reopen, archive
    button(at, "Close the study").click().run()
    assert pws.get_study(world["db"], study_id).status == "closed"
    button(at, "Reopen the study").click().run()
    button(at, "Archive the study").click().run()
    assert not at.exception and pws.get_study(world["db"], study_id).archived
    assert any("This study is archived" in i.value for i in at.info)
    assert at.toggle(key="pwa_show_archived").value is True and at.selectbox(key="pwa_study").value == study_id
    assert open_page("pairwise.py", p["ann2"]).info[0].value.startswith("You take part in no pairwise study")
    fresh = open_page("pairwise_admin.py", p["lead"])
    assert any("Every pairwise study is archived" in i.value for i in fresh.info)
    button(at, "Bring back from the archive").click().run()
    assert not pws.get_study(world["db"], study_id).archived
    assert len(open_page("pairwise.py", p["ann2"]).get("image")) == 2
    history = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert list(history["action"]) == ["pairwise.unarchive", "pairwise.archive", "pairwise.open", "pairwise.close",
                                       "pairwise.remove_annotator", "pairwise.add_annotator", "pairwise.create"]
    # the study was created by a script without a lead (by_user None); every page action names the lead
    assert list(history["by"])[:-1] == ["lead"] * 6


def test_lead_resolves_a_flag_from_the_page_and_it_is_audited(world):
    p = world["people"]
    study_id = _study(world, n_pairs=3, practice=0)
    view = pws.current_task(world["db"], study_id, p["ann1"]["id"])
    flag = pws.flag_pair(world["db"], p["ann1"]["id"], view.token, "unclear")
    at = open_page("pairwise_admin.py", p["lead"], pwa_study=study_id)
    at.text_input(key=f"pwa_resolution_{flag}").input("both images are fine")
    at.button(key=f"pwa_resolve_{flag}").click().run()
    assert not at.exception and any("Flag resolved" in s.value for s in at.success)
    assert pws.flags_frame(world["db"], study_id)["resolution"].tolist() == ["both images are fine"]
    assert pws.history(world["db"], study_id)[0].action == "pairwise.resolve_flag"
