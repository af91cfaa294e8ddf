"""The hooks a benchmark's member may declare for the studio (:mod:`structext_core.protocol`:
``STUDY_IMAGE``, ``CLOCK_BEATS``, ``SANDBOXED``), served by shared code that names no benchmark:
a member written here, registered through the entry-point group, gets each of them."""
from __future__ import annotations

import json

import pytest

from structext_core import protocol
from structext_core.protocol import Place, ShownQuestion
from structext_core.studio import accounts, clock_beat, sandbox, sandbox_worker, study

# ---------------------------------------------------------------- the member (its module is this file)

NAME = "hooked"
DISPLAY_NAME = "Hooked"
SUMMARY = "A benchmark that declares the studio's hooks."
PLACES = (Place("human_baseline", "answer its questions"),)
ITEM_FIELDS = ("id",)
AXES = ("id",)
STRATA = {"id": str}
STUDY_IMAGE = f"{__name__}:draw"
CLOCK_BEATS = {"hooked-vote": (f"{__name__}:book", False)}
SANDBOXED = {"hooked_check": f"{__name__}:check"}
BOOKED: list[tuple] = []


def item_id(item) -> str:
    return item["id"]


def show_question(item) -> ShownQuestion:
    return ShownQuestion(text=item["id"])


def score_answer(item, reply: str) -> float:
    return 0.0


def draw(db, suite: str, strata: dict, nonce: bytes) -> bytes:
    return json.dumps({"suite": suite, "strata": strata, "nonce": nonce.hex()}).encode()


def book(db, user_id: int, item, tab: str, visible: bool) -> tuple[str, float]:
    BOOKED.append((user_id, item, tab, visible))
    return "active", 2.5


def check(text: str) -> int:
    return len(text)


@pytest.fixture
def hooked(install_member):
    """This module registered as an installed package would register it."""
    return install_member("hooked", NAME, __name__)


# ---------------------------------------------------------------- the tests

def test_an_items_image_is_drawn_by_its_members_hook_for_its_own_annotator_only(db, started, annotators, hooked):
    study_id, user_id = started
    view = study.open_question(db, study_id, user_id, tab="tabA")
    item = db.execute("SELECT item_id FROM assignments WHERE id = ?", [view.assignment_id]).fetchone()[0]
    # a benchmark that declares no STUDY_IMAGE (the grid's) has no image to serve
    with pytest.raises(study.StudyError, match="not one of yours"):
        study.item_image(db, user_id, view.assignment_id)
    with pytest.raises(study.StudyError, match=f"no study item with id {item} that shows an image"):
        study.lead_image(db, item)
    db.execute("UPDATE studies SET benchmark = ? WHERE id = ?", [NAME, study_id])
    strata = json.loads(db.execute("SELECT strata FROM study_items WHERE id = ?", [item]).fetchone()[0])
    suite = db.execute("SELECT suite FROM studies WHERE id = ?", [study_id]).fetchone()[0]
    assert json.loads(study.item_image(db, user_id, view.assignment_id, b"\x01")) == {
        "suite": suite, "strata": strata, "nonce": "01"}
    assert json.loads(study.lead_image(db, item))["nonce"] == ""
    with pytest.raises(study.StudyError, match="not one of yours"):
        study.item_image(db, annotators[1]["id"], view.assignment_id)
    with pytest.raises(study.StudyError, match="no study item with id 999999"):
        study.lead_image(db, 999999)


def test_a_members_clock_kind_is_booked_through_the_route(db, annotators, hooked):
    BOOKED.clear()
    user_id = annotators[0]["id"]
    token = accounts.issue_session(db, user_id)
    beat_pass = clock_beat.page_pass(db, token, "hooked-vote", "tok1", "tabA")
    body = {"kind": "hooked-vote", "item": "tok1", "tab": "tabA", "visible": False, "pass": beat_pass}
    reply = clock_beat.answer(db, json.dumps(body).encode())
    assert (reply.status, reply.body) == (200, {"state": "active", "seconds": 2.5})
    assert BOOKED == [(user_id, "tok1", "tabA", False)]
    assert clock_beat.answer(db, json.dumps({**body, "item": 7}).encode()).status == 400  # its items are tokens


def test_the_route_does_not_know_a_kind_no_member_declares(db):
    reply = clock_beat.answer(db, json.dumps({"kind": "hooked-vote", "item": "t", "tab": "a", "visible": True}).encode())
    assert reply.status == 400 and "kind must be one of study" in reply.body["error"]


def test_a_clock_kind_or_sandboxed_name_taken_already_is_refused(hooked, monkeypatch):
    monkeypatch.setattr(hooked, "CLOCK_BEATS", {"study": (f"{__name__}:book", True)})
    with pytest.raises(protocol.RegistryError, match="'study' is the studio's own"):
        clock_beat.kinds()
    taken = next(kind for kind in protocol.declared("CLOCK_BEATS") if kind != "study")  # another member's
    monkeypatch.setattr(hooked, "CLOCK_BEATS", {taken: (f"{__name__}:book", False)})
    with pytest.raises(protocol.RegistryError, match=f"both declare CLOCK_BEATS '{taken}'"):
        clock_beat.kinds()
    taken = next(iter(protocol.declared("SANDBOXED")))  # another member's check
    monkeypatch.setattr(hooked, "SANDBOXED", {taken: f"{__name__}:check"})
    with pytest.raises(protocol.RegistryError, match=f"both declare SANDBOXED '{taken}'"):
        sandbox_worker.functions()


def test_a_members_sandboxed_function_is_allowed_and_loaded_in_a_worker(hooked):
    assert sandbox.allowed("hooked_check")
    assert sandbox_worker.functions()["hooked_check"] == (__name__, "check")
    assert sandbox_worker.load_functions()["hooked_check"]("four") == 4


def test_without_the_member_its_sandboxed_function_is_not_allowed():
    assert not sandbox.allowed("hooked_check")
