"""The clock's heartbeat route (structext_core/studio/clock_beat.py): what it books, whom it
believes, what it refuses; and the route itself, mounted as server.py mounts it."""

import json

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from structext_core.studio import accounts, clock_beat, storage, study
from tests.studio.study.support import make_study


def body(**fields) -> bytes:
    return json.dumps({"kind": "study", "tab": "tabA", "visible": True, **fields}).encode()


@pytest.fixture
def showing(db, started):
    """ann1's first question on screen in tab ``tabA``, its session token and a valid pass."""
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, tab="tabA")
    token = accounts.issue_session(db, user_id)
    beat_pass = clock_beat.page_pass(db, token, "study", view.assignment_id, "tabA")
    return view, token, beat_pass


def test_a_heartbeat_with_the_pages_pass_is_booked_and_answered_with_the_clock(db, showing):
    view, _, beat_pass = showing
    db.execute("UPDATE assignments SET last_beat_at = last_beat_at - 5 WHERE id = ?", [view.assignment_id])
    reply = clock_beat.answer(db, body(item=view.assignment_id, **{"pass": beat_pass}))
    assert reply.status == 200 and reply.body["state"] == "active"
    assert reply.body["seconds"] == pytest.approx(5.0, abs=0.5)
    active = db.execute("SELECT active_seconds FROM assignments WHERE id = ?", [view.assignment_id]).fetchone()[0]
    assert active == pytest.approx(5.0, abs=0.5)


def test_the_answer_says_when_the_page_must_change(db, started, showing):
    study_id, user_id = started
    view, _, beat_pass = showing
    study.pause_question(db, user_id, view.assignment_id, tab="tabA")
    reply = clock_beat.answer(db, body(item=view.assignment_id, **{"pass": beat_pass}))
    assert reply.status == 200 and reply.body["state"] == "paused"
    study.resume_question(db, user_id, view.assignment_id, tab="tabA")
    study.open_question(db, study_id, user_id, tab="tabB")  # another tab takes the question
    reply = clock_beat.answer(db, body(item=view.assignment_id, **{"pass": beat_pass}))
    assert reply.body["state"] == "elsewhere"


def test_a_pass_speaks_for_one_item_and_one_tab_only(db, started, showing, annotators):
    view, token, beat_pass = showing
    for changed in ({"item": view.assignment_id + 1}, {"item": view.assignment_id, "tab": "tabB"},
                    {"item": view.assignment_id, "kind": "pairwise"}):
        reply = clock_beat.answer(db, body(**{**changed, "pass": beat_pass}))
        assert reply.status in (400, 401), changed
    assert clock_beat.answer(db, body(item=view.assignment_id, **{"pass": beat_pass[:-2] + "xx"})).status == 401
    # Another annotator's own valid pass for the same item: signed, but the item is not theirs.
    other = accounts.issue_session(db, annotators[1]["id"])
    other_pass = clock_beat.page_pass(db, other, "study", view.assignment_id, "tabA")
    reply = clock_beat.answer(db, body(item=view.assignment_id, **{"pass": other_pass}))
    assert reply.status == 404 and "not one of yours" in reply.body["error"]


def test_a_pass_is_worth_nothing_once_its_session_ends(db, started, showing):
    _, user_id = started
    view, _, beat_pass = showing
    accounts.revoke_user_sessions(db, user_id, "logged out")
    reply = clock_beat.answer(db, body(item=view.assignment_id, **{"pass": beat_pass}))
    assert reply.status == 401 and reply.body == {"error": "not logged in (revoked)"}
    before = db.execute("SELECT last_beat_at FROM assignments WHERE id = ?", [view.assignment_id]).fetchone()
    assert before[0] is not None  # nothing was booked by the refused beat beyond the showing


@pytest.mark.parametrize("raw, status", [
    (b"x" * (clock_beat.MAX_BODY_BYTES + 1), 413),
    (b"\xff\xfe", 400),
    (b"[" * 2_000, 400),  # deeper than the parser goes: refused, not a crash
    (b"[1, 2]", 400),
    (json.dumps({"kind": "other", "item": 1, "tab": "a", "visible": True}).encode(), 400),
    (json.dumps({"kind": "study", "item": True, "tab": "a", "visible": True}).encode(), 400),
    (json.dumps({"kind": "study", "item": "1", "tab": "a", "visible": True}).encode(), 400),
    (json.dumps({"kind": "study", "item": 1, "tab": "a b", "visible": True}).encode(), 400),
    (json.dumps({"kind": "study", "item": 1, "tab": "a", "visible": "yes"}).encode(), 400),
    (json.dumps({"kind": "pairwise", "item": "tok\n", "tab": "a", "visible": True}).encode(), 400),
    (json.dumps({"kind": "study", "item": 1, "tab": "a", "visible": True}).encode(), 401),
    (json.dumps({"kind": "study", "item": 1, "tab": "a", "visible": True, "pass": "p1.x.y"}).encode(), 401),
])
def test_anything_but_a_heartbeat_is_refused_with_a_reason_and_writes_nothing(db, showing, raw, status):
    before = db.execute("SELECT * FROM assignments").fetchall()
    reply = clock_beat.answer(db, raw)
    assert reply.status == status and reply.body["error"]
    assert db.execute("SELECT * FROM assignments").fetchall() == before


def test_the_route_as_server_py_mounts_it(tmp_path, monkeypatch, samples, annotators):
    """Over HTTP, in Starlette's thread pool, on the database the app uses."""
    path = tmp_path / "structext.db"
    monkeypatch.setenv(storage.DB_ENV, str(path))
    db = storage.open_db(path)
    user = accounts.create_user(db, "walker", "password-123", "annotator")
    study_id = make_study(db, samples, [user])
    study.accept_rule(db, study_id, user["id"])
    view = study.open_question(db, study_id, user["id"], tab="tabA")
    beat_pass = clock_beat.page_pass(db, accounts.issue_session(db, user["id"]), "study", view.assignment_id, "tabA")
    with TestClient(Starlette(routes=clock_beat.routes())) as client:
        ok = client.post(clock_beat.BEAT_PATH, content=body(item=view.assignment_id, **{"pass": beat_pass}))
        assert ok.status_code == 200 and ok.json()["state"] == "active"
        assert ok.headers["cache-control"] == "no-store"
        big = client.post(clock_beat.BEAT_PATH, content=b"{" + b" " * 10_000 + b"}")
        assert big.status_code == 413
        assert client.get(clock_beat.BEAT_PATH).status_code == 405
    db.conn.close()
