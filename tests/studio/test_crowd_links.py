"""Study links (structext_core.studio.crowd.links), without Streamlit: making and closing links,
enrolling by one, every refusal, resume codes and their lock, and places exact under a race of
real threads, each on its own connection to one file."""

from __future__ import annotations

import hashlib
import re
import threading
import time

import pytest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from structext_core.studio.crowd import links

PROLIFIC = {"PROLIFIC_PID": "5f1e2d3c4b5a69788796a5b4", "STUDY_ID": "study-77", "SESSION_ID": "sess-1"}


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return tmp_path / "structext.db"


@pytest.fixture
def db(db_path):
    return storage.open_db(db_path)


@pytest.fixture
def lead(db):
    return accounts.create_user(db, "lead", "password1", "admin")


@pytest.fixture
def study_id(db):
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    samples = suites.generate_cell(8, 2, 2, 4, suite="test")
    return structext_study.create_study(db, name="crowd", suite="test", samples=samples, n_items=2,
                                        annotator_ids=[ann["id"]])


def link(db, study_id, lead, places=5, expires_at=None, id_param="PROLIFIC_PID"):
    return links.create_link(db, study_id, places=places, expires_at=expires_at, id_param=id_param, by=lead["id"])


def count(db, table):
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def refused(reason, call, *args, **kwargs) -> str:
    """Call; assert it was refused for ``reason``; return the message."""
    with pytest.raises(links.EnrolmentRefused) as caught:
        call(*args, **kwargs)
    assert caught.value.reason == reason, str(caught.value)
    return str(caught.value)


# ---------------------------------------------------------------- the lead's side


def test_a_link_has_an_unguessable_token_its_places_and_is_listed(db, study_id, lead):
    made = link(db, study_id, lead, places=300, expires_at=time.time() + 3600)
    other = link(db, study_id, lead, places=2, id_param=None)
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", made.token) and made.token != other.token
    assert (made.places, made.filled, made.id_param, made.closed_at, made.state()) == (300, 0, "PROLIFIC_PID", None, "open")
    assert [x.id for x in links.links_of(db, study_id)] == [other.id, made.id]
    links.close_link(db, made.id, by=lead["id"])
    closed = links.links_of(db, study_id)[1]
    assert closed.closed_at is not None and closed.state() == "closed"
    assert made.state(now=time.time() + 7200) == "expired"
    actions = [r[0] for r in db.execute("SELECT action FROM audit_log WHERE action LIKE 'crowd.%' ORDER BY id")]
    assert actions == ["crowd.link_create", "crowd.link_create", "crowd.link_close"]


@pytest.mark.parametrize("changes, message", [
    ({"places": 0}, "Places must be a whole number from 1 to 100,000"),
    ({"places": 100_001}, "Places must be a whole number"),
    ({"places": 2.5}, "Places must be a whole number"),
    ({"places": True}, "Places must be a whole number"),
    ({"expires_at": 1.0}, "The expiry is already past"),
    ({"id_param": "PID with spaces"}, "The id parameter must be a name"),
    ({"id_param": "join"}, "The id parameter must be a name"),
    ({"id_param": "1PID"}, "The id parameter must be a name"),
])
def test_a_link_the_lead_gets_wrong_is_refused_with_what_to_do(db, study_id, lead, changes, message):
    values = {"places": 5, "expires_at": None, "id_param": "PROLIFIC_PID", **changes}
    with pytest.raises(links.LinkError, match=message):
        links.create_link(db, study_id, by=lead["id"], **values)
    assert count(db, "enrolment_links") == 0


def test_no_link_to_a_closed_study_nor_to_none(db, study_id, lead):
    study.set_study_status(db, study_id, "closed")
    with pytest.raises(links.LinkError, match="closed or archived"):
        link(db, study_id, lead)
    with pytest.raises(links.LinkError, match="There is no study with id 99"):
        link(db, 99, lead)
    with pytest.raises(links.LinkError, match="no study link with id 7"):
        links.close_link(db, 7, by=lead["id"])


def test_the_link_carries_the_platforms_placeholders():
    assert links.link_url("https://lab.example/app/", "TOK", "PROLIFIC_PID") == (
        "https://lab.example/app/join?join=TOK&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
        "&SESSION_ID={{%SESSION_ID%}}")
    assert links.link_url("http://host:8501", "TOK", None) == "http://host:8501/join?join=TOK"
    assert links.link_url("http://host:8501", "TOK", "workerId") == "http://host:8501/join?join=TOK&workerId="


# ---------------------------------------------------------------- enrolling


def test_opening_the_link_makes_an_annotator_in_the_study_with_no_usable_password(db, study_id, lead):
    made = link(db, study_id, lead)
    joined = links.enrol(db, made.token, {"join": made.token, **PROLIFIC, "utm": "x"})
    user = joined.user
    assert joined.study_id == study_id and user["role"] == "annotator"
    assert re.fullmatch(r"p-[a-z0-9]{8}", user["username"])
    assert re.fullmatch(f"[{links.RESUME_ALPHABET}]{{10}}", joined.resume_code)
    stored = db.execute("SELECT password_hash FROM users WHERE id = ?", [user["id"]]).fetchone()[0]
    assert stored == links.NO_PASSWORD_HASH
    for password in ("", "password1", links.NO_PASSWORD_HASH, joined.resume_code, "!study-link"):
        assert accounts.log_in(db, user["username"], password).user is None
        assert accounts.authenticate(db, user["username"], password) is None
    person = links.participant(db, user["id"])
    assert (person.study_id, person.link_id, person.external_id) == (study_id, made.id, PROLIFIC["PROLIFIC_PID"])
    assert person.params == {"STUDY_ID": "study-77", "SESSION_ID": "sess-1", "utm": "x"}
    resume_hash = db.execute("SELECT resume_hash FROM participants").fetchone()[0]
    assert resume_hash == hashlib.sha256(joined.resume_code.encode()).hexdigest()
    assert joined.resume_code not in str(db.execute("SELECT * FROM participants").fetchall())
    assert user["username"] in study.annotator_names(db, study_id)
    assert study.studies_for_annotator(db, user["id"])[0].id == study_id  # their questions are there
    assert links.links_of(db, study_id)[0].filled == 1
    assert links.participant(db, lead["id"]) is None


def test_other_parameters_are_kept_bounded(db, study_id, lead):
    made = link(db, study_id, lead, id_param=None)
    params = {f"p{i}": "v" for i in range(50)} | {"long": "x" * 300, "bad name!": "v", "ctl": "a\nb"}
    person = links.participant(db, links.enrol(db, made.token, params).user["id"])
    assert person.external_id is None and len(person.params) == links.MAX_PARAMS
    assert set(person.params) == {f"p{i}" for i in range(20)}


# ---------------------------------------------------------------- every refusal


@pytest.mark.parametrize("token", ["", "nope", "x" * 65, "a b", None, 12, "A" * 32])
def test_a_bad_token_is_not_valid(db, study_id, lead, token):
    link(db, study_id, lead)
    assert refused("invalid", links.enrol, db, token, PROLIFIC) == "This study link is not valid."
    assert refused("invalid", links.resume, db, token, "ABCDEFGHJK", PROLIFIC) == "This study link is not valid."
    assert count(db, "participants") == 0


def test_an_expired_a_closed_link_and_a_closed_study_take_nobody(db, study_id, lead):
    expiring = link(db, study_id, lead, expires_at=time.time() + 60)
    assert refused("expired", links.enrol, db, expiring.token, PROLIFIC,
                   now=time.time() + 61) == "This study link has expired."
    closing = link(db, study_id, lead)
    links.close_link(db, closing.id, by=lead["id"])
    assert refused("link_closed", links.enrol, db, closing.token, PROLIFIC) == links.LINK_CLOSED
    open_one = link(db, study_id, lead)
    study.set_study_status(db, study_id, "closed")
    assert refused("study_closed", links.enrol, db, open_one.token, PROLIFIC) == links.STUDY_CLOSED
    study.set_study_status(db, study_id, "open")
    study.set_study_archived(db, study_id, True, by_user=lead["id"])
    assert refused("study_closed", links.enrol, db, open_one.token, PROLIFIC) == links.STUDY_CLOSED
    assert count(db, "participants") == 0 and count(db, "users") == 2


def test_a_full_link_says_so_and_makes_no_account(db, study_id, lead):
    made = link(db, study_id, lead, places=2)
    for n in range(2):
        links.enrol(db, made.token, {**PROLIFIC, "PROLIFIC_PID": f"pid-{n}"})
    users = count(db, "users")
    message = refused("full", links.enrol, db, made.token, {**PROLIFIC, "PROLIFIC_PID": "pid-late"})
    assert message == "This study is full: all 2 places are taken."
    assert count(db, "users") == users and links.links_of(db, study_id)[0].state() == "full"


def test_the_same_id_again_gets_no_account_and_learns_nothing_of_the_first(db, study_id, lead):
    made = link(db, study_id, lead)
    first = links.enrol(db, made.token, PROLIFIC)
    message = refused("taken", links.enrol, db, made.token, {**PROLIFIC, "SESSION_ID": "other"})
    assert message == links.ID_TAKEN
    assert first.user["username"] not in message and str(first.user["id"]) not in message
    # the same id through another link of the same study: the same refusal
    second = link(db, study_id, lead)
    assert refused("taken", links.enrol, db, second.token, PROLIFIC) == links.ID_TAKEN
    assert count(db, "participants") == 1


@pytest.mark.parametrize("params, words", [
    ({"STUDY_ID": "s"}, "arrived without your participant id (PROLIFIC_PID)"),
    ({"PROLIFIC_PID": "   "}, "arrived without your participant id"),
    ({"PROLIFIC_PID": "x" * 129}, "must be 1 to 128 printable characters"),
    ({"PROLIFIC_PID": "abc\u200b\n"}, "must be 1 to 128 printable characters"),
])
def test_a_missing_or_unusable_id_is_refused_clearly(db, study_id, lead, params, words):
    made = link(db, study_id, lead)
    assert words in refused("bad_id", links.enrol, db, made.token, params)
    assert count(db, "participants") == 0


# ---------------------------------------------------------------- resuming


def test_the_resume_code_brings_the_same_account_back_in_another_browser(db, study_id, lead):
    made = link(db, study_id, lead)
    joined = links.enrol(db, made.token, PROLIFIC)
    typed = joined.resume_code.lower()[:5] + " - " + joined.resume_code.lower()[5:]
    assert links.resume(db, made.token, typed, PROLIFIC) == joined.user
    links.close_link(db, made.id, by=lead["id"])  # a closed link still lets its people back in
    assert links.resume(db, made.token, joined.resume_code, PROLIFIC) == joined.user


def test_a_wrong_resume_code_is_refused_and_the_id_locks_after_five(db, study_id, lead):
    made = link(db, study_id, lead)
    joined = links.enrol(db, made.token, PROLIFIC)
    other = links.enrol(db, made.token, {**PROLIFIC, "PROLIFIC_PID": "someone-else"})
    # another person's code, with this id: wrong
    assert refused("wrong_code", links.resume, db, made.token, other.resume_code, PROLIFIC).startswith(links.WRONG_CODE)
    messages = [refused("wrong_code", links.resume, db, made.token, wrong, PROLIFIC)
                for wrong in ("", "ABC", "2222222222", None)]
    assert messages[2].endswith("1 more wrong code locks this id for 1 min.")
    assert messages[3].endswith("After 5 wrong codes this id is locked for 1 min.")
    assert "Too many wrong resume codes" in refused("locked", links.resume, db, made.token, joined.resume_code, PROLIFIC)
    # the lock is the id's alone; it runs out
    assert links.resume(db, made.token, other.resume_code, {"PROLIFIC_PID": "someone-else"}) == other.user
    assert links.resume(db, made.token, joined.resume_code, PROLIFIC, now=time.time() + 61) == joined.user
    # an id that never enrolled learns nothing more than a wrong code
    assert refused("wrong_code", links.resume, db, made.token, joined.resume_code,
                   {"PROLIFIC_PID": "stranger"}) == links.WRONG_CODE


def test_a_link_without_an_id_finds_the_person_by_the_code_alone(db, study_id, lead):
    made = link(db, study_id, lead, id_param=None)
    one, two = (links.enrol(db, made.token, {}) for _ in range(2))
    assert one.user != two.user  # no id: each browser is a person
    assert links.resume(db, made.token, two.resume_code, {}) == two.user
    assert refused("wrong_code", links.resume, db, made.token, "2345678923", {}) == links.WRONG_CODE
    other_study_link = link(db, structext_study.create_study(
        db, name="other", suite="test", samples=suites.generate_cell(8, 2, 2, 4, suite="test"), n_items=2,
        annotator_ids=[accounts.get_user(db, "ann1")["id"]]), lead, id_param=None)
    assert refused("wrong_code", links.resume, db, other_study_link.token, two.resume_code, {}) == links.WRONG_CODE


def test_a_disabled_participant_cannot_resume(db, study_id, lead):
    made = link(db, study_id, lead)
    joined = links.enrol(db, made.token, PROLIFIC)
    accounts.disable_user(db, joined.user["id"], by_user=lead["id"])
    assert "no longer active" in refused("inactive", links.resume, db, made.token, joined.resume_code, PROLIFIC)


# ---------------------------------------------------------------- the race


def test_places_are_exact_when_320_arrive_at_once_for_300(db_path, db, study_id, lead):
    """320 threads, each with its own connection to the file, open the link at the same moment."""
    made = link(db, study_id, lead, places=300)
    arrivals = 320
    start = threading.Barrier(arrivals)
    outcomes: list = [None] * arrivals

    def arrive(n):
        own = storage.open_db(db_path)
        try:
            start.wait()
            outcomes[n] = links.enrol(own, made.token, {**PROLIFIC, "PROLIFIC_PID": f"pid-{n:03d}"})
        except Exception as error:  # noqa: BLE001 - every outcome is looked at below
            outcomes[n] = error
        finally:
            own.conn.close()

    threads = [threading.Thread(target=arrive, args=(n,)) for n in range(arrivals)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    enrolled = [o for o in outcomes if isinstance(o, links.Enrolment)]
    refusals = [o for o in outcomes if isinstance(o, links.EnrolmentRefused)]
    assert len(enrolled) == 300 and len(refusals) == 20, [o for o in outcomes if not isinstance(
        o, links.Enrolment | links.EnrolmentRefused)][:3]
    assert {str(r) for r in refusals} == {"This study is full: all 300 places are taken."}
    assert count(db, "participants") == 300
    assert db.execute("SELECT COUNT(*) FROM users WHERE username LIKE 'p-%'").fetchone()[0] == 300
    assert db.execute("SELECT COUNT(*) FROM study_annotators WHERE study_id = ?", [study_id]).fetchone()[0] == 301
    assert len({e.user["username"] for e in enrolled}) == 300
    assert links.links_of(db, study_id)[0].filled == 300


# ---------------------------------------------------------------- the time-out


def test_a_person_past_the_time_out_gives_their_place_to_the_next_and_one_who_finished_does_not(db, study_id, lead):
    from structext_core.studio.crowd import outcomes, settings

    settings.save_settings(db, study_id, lead["id"], timeout_seconds=600)
    made = link(db, study_id, lead, places=2)
    quiet = links.enrol(db, made.token, {**PROLIFIC, "PROLIFIC_PID": "pid-quiet"}, now=1000.0)
    done = links.enrol(db, made.token, {**PROLIFIC, "PROLIFIC_PID": "pid-done"}, now=1000.0)
    done_id = done.user["id"]
    study.accept_rule(db, study_id, quiet.user["id"], at=1001.0)  # then they left
    study.accept_rule(db, study_id, done_id, at=1001.0)
    while (view := study.open_question(db, study_id, done_id, at=1010.0)) is not None:  # every question answered
        study.submit_answer(db, done_id, view.assignment_id, "an answer", at=1020.0)
    refused("full", links.enrol, db, made.token, {**PROLIFIC, "PROLIFIC_PID": "pid-early"}, now=1599.0)
    # At 600 s the quiet one is timed out and their place taken at once; the one who finished completed.
    late = links.enrol(db, made.token, {**PROLIFIC, "PROLIFIC_PID": "pid-late"}, now=1600.0)
    outcome = "SELECT outcome FROM study_annotators WHERE study_id = ? AND user_id = ?"
    assert db.execute(outcome, [study_id, quiet.user["id"]]).fetchone()[0] == "timed_out"
    assert db.execute(outcome, [study_id, done_id]).fetchone()[0] == "completed"
    assert db.execute(outcome, [study_id, late.user["id"]]).fetchone()[0] is None
    shown = links.links_of(db, study_id)[0]
    assert (shown.filled, shown.timed_out, shown.state(now=1600.0)) == (2, 1, "full")
    # Back with their resume code, the timed-out person gets their end and no question.
    back = links.resume(db, made.token, quiet.resume_code, {**PROLIFIC, "PROLIFIC_PID": "pid-quiet"})
    end = outcomes.end_state(db, study_id, back["id"])
    assert (end.outcome, end.reason, end.participant) == ("timed_out", "timed_out", True)
    with pytest.raises(study.StudyError, match="has ended"):
        study.open_question(db, study_id, back["id"], at=1700.0)
    # The late one's own time-out runs from their own arrival; nobody is timed out twice.
    assert outcomes.deadline(db, study_id, late.user["id"]) == 2200.0
    assert outcomes.time_out_overdue(db, study_id, at=2199.0) == []
    assert outcomes.time_out_overdue(db, study_id, at=2200.0) == [late.user["id"]]
    assert outcomes.time_out_overdue(db, study_id, at=9999.0) == []


def test_without_a_time_out_nobody_times_out_and_a_lab_annotator_never_does(db, study_id, lead):
    from structext_core.studio.crowd import outcomes, settings

    made = link(db, study_id, lead, places=1)
    person = links.enrol(db, made.token, {**PROLIFIC, "PROLIFIC_PID": "pid-1"}, now=1000.0)
    assert outcomes.time_out_overdue(db, study_id, at=10**9) == [] and outcomes.deadline(db, study_id, person.user["id"]) is None
    assert outcomes.end_state(db, study_id, person.user["id"], at=10**9) is None
    settings.save_settings(db, study_id, lead["id"], timeout_seconds=60)
    ann = db.execute("SELECT id FROM users WHERE username = 'ann1'").fetchone()[0]  # added by the lead, no link
    assert outcomes.deadline(db, study_id, ann) is None and outcomes.end_state(db, study_id, ann, at=10**9) is None
    assert outcomes.time_out_overdue(db, study_id, at=10**9) == [person.user["id"]]
