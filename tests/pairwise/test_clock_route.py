"""The voting page's heartbeats posted to the clock's route (structext_core/studio/clock_beat.py):
booked as the fragment books them, for the tab that holds the pair only."""
from __future__ import annotations

import json

from structext_core.aibench import pairwise as pws
from structext_core.studio import accounts, clock_beat
from tests.pairwise.test_study import SETTINGS, _create


def beat(db, token: str, tab: str, beat_pass: str) -> clock_beat.BeatReply:
    body = {"kind": "pairwise", "item": token, "tab": tab, "visible": True, "pass": beat_pass}
    return clock_beat.answer(db, json.dumps(body).encode())


def test_a_posted_heartbeat_is_booked_for_the_tab_that_holds_the_pair(world):
    db, p = world["db"], world["people"]
    study_id = _create(world, practice=0)
    ann = p["ann1"]["id"]
    token = pws.current_task(db, study_id, ann, settings=SETTINGS, tab="tab1").token
    session = accounts.issue_session(db, ann)
    first = clock_beat.page_pass(db, session, "pairwise", token, "tab1")
    reply = beat(db, token, "tab1", first)
    assert reply.status == 200 and reply.body["state"] == "active"
    # Another tab takes the pair over: the first tab's heartbeats are told so, and book nothing.
    pws.current_task(db, study_id, ann, settings=SETTINGS, tab="tab2")
    before = db.execute("SELECT * FROM pairwise_tasks WHERE token = ?", [token]).fetchall()
    assert beat(db, token, "tab1", first).body["state"] == "elsewhere"
    assert db.execute("SELECT * FROM pairwise_tasks WHERE token = ?", [token]).fetchall() == before
    # The pass of tab one does not speak for tab two, and another person's pass finds no pair.
    assert beat(db, token, "tab2", first).status == 401
    other = clock_beat.page_pass(db, accounts.issue_session(db, p["ann2"]["id"]), "pairwise", token, "tab2")
    assert beat(db, token, "tab2", other).status == 404
    second = clock_beat.page_pass(db, session, "pairwise", token, "tab2")
    assert beat(db, token, "tab2", second).body["state"] == "active"
